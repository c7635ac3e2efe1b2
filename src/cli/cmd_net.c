/* SPDX-License-Identifier: MIT */
/* net: show or change a live session's allow list (launch/netpolicy.c). */
#include <stdio.h>
#include <string.h>

#include "../launch/launch.h"
#include "shared/util.h"
#include "args.h"

static const struct option net_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

/* The action word and its argument count: "allow HOST", "deny HOST", "show". */
static const char *action_of(const char *word, int *nargs)
{
        if (strcmp(word, "allow") == 0 || strcmp(word, "deny") == 0) {
                *nargs = 1;
                return word[0] == 'a' ? "ALLOW" : "DENY";
        }
        *nargs = 0;
        return strcmp(word, "show") == 0 ? "SHOW" : NULL;
}

static int print_list(struct cli *cli, const char *id, const char *mode, char *const *allow)
{
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                buf_puts(&b, "{\"session\":");
                json_cstr(&b, id);
                buf_puts(&b, ",\"mode\":");
                json_cstr(&b, mode);
                buf_puts(&b, ",\"allow\":[");
                for (size_t i = 0; allow && allow[i]; i++) {
                        buf_puts(&b, i ? "," : "");
                        json_cstr(&b, allow[i]);
                }
                buf_puts(&b, "]}\n");
        } else {
                for (size_t i = 0; allow && allow[i]; i++)
                        buf_printf(&b, "%s\n", allow[i]);
        }
        return cli_print(cli, &b);
}

int cmd_net(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", net_options, NULL)) != -1) {
                int k = args_common(cli, "net", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "net");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "net");
        int nargs = 0;
        const char *action = optind + 1 < argc ? action_of(argv[optind + 1], &nargs) : NULL;
        if (optind >= argc)
                sbx_usage(&cli->err, "missing session ID");
        else if (optind + 1 >= argc)
                sbx_usage(&cli->err, "missing action: allow HOST, deny HOST or show");
        else if (!action)
                sbx_usage(&cli->err, "unknown action '%s': allow HOST, deny HOST or show",
                          argv[optind + 1]);
        else if (argc - optind - 2 < nargs)
                sbx_usage(&cli->err, "missing HOST after '%s'", argv[optind + 1]);
        else if (argc - optind - 2 > nargs)
                sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind + 2 + nargs]);
        if (cli->err.exit_code)
                return cli_finish_error(cli, "net");
        _cleanup_free_ char *mode = NULL;
        _cleanup_strv_ char **allow = NULL;
        if (session_net(argv[optind], action, nargs ? argv[optind + 2] : NULL, &mode, &allow,
                        &cli->err) < 0)
                return cli_finish_error(cli, "net");
        /* a change prints nothing without --json; show prints the list */
        if (!cli->json && nargs)
                return 0;
        return print_list(cli, argv[optind], mode, allow) ? cli_finish_error(cli, "net") : 0;
}
