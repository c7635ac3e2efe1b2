/* SPDX-License-Identifier: MIT */
/* cp: copy files and directories into or out of a session (launch/cp.c). */
#include <stdio.h>
#include <string.h>

#include "../launch/launch.h"
#include "../session/id.h"
#include "shared/util.h"
#include "args.h"

static const struct option cp_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

/* "ID:PATH" with a valid id or name before the first ':': the id into id, *ret_path after. */
static bool session_side(const char *arg, char *id, size_t n, const char **ret_path)
{
        const char *colon = strchr(arg, ':');
        if (!colon || (size_t)(colon - arg) >= n)
                return false;
        memcpy(id, arg, (size_t)(colon - arg));
        id[colon - arg] = '\0';
        *ret_path = colon + 1;
        return session_id_valid(id) || session_name_valid(id);
}

int cmd_cp(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", cp_options, NULL)) != -1) {
                int k = args_common(cli, "cp", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "cp");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "cp");
        if (argc - optind != 2) {
                sbx_usage(&cli->err, argc - optind < 2 ? "missing SRC or DST"
                                                       : "too many arguments: cp takes SRC DST");
                return cli_finish_error(cli, "cp");
        }
        char id_src[80], id_dst[80];
        const char *p_src = NULL, *p_dst = NULL;
        bool s = session_side(argv[optind], id_src, sizeof(id_src), &p_src);
        bool d = session_side(argv[optind + 1], id_dst, sizeof(id_dst), &p_dst);
        if (s == d) {
                sbx_usage(&cli->err, "exactly one of SRC and DST must be ID:PATH (a session)");
                return cli_finish_error(cli, "cp");
        }
        const char *path = s ? p_src : p_dst, *host = s ? argv[optind + 1] : argv[optind];
        if (!*path || !*host) {
                sbx_usage(&cli->err, "empty path");
                return cli_finish_error(cli, "cp");
        }
        uint64_t bytes = 0;
        if (session_cp(s ? id_src : id_dst, path, host, d, &bytes, &cli->err) < 0 ||
            cli->err.exit_code)
                return cli_finish_error(cli, "cp");
        if (!cli->json)
                return 0;
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"source\":");
        json_cstr(&b, argv[optind]);
        buf_puts(&b, ",\"destination\":");
        json_cstr(&b, argv[optind + 1]);
        buf_printf(&b, ",\"bytes\":%llu}\n", (unsigned long long)bytes);
        return cli_print(cli, &b) ? cli_finish_error(cli, "cp") : 0;
}
