/* SPDX-License-Identifier: MIT */
/* commit: a session's writable layer as a new image on its base (launch/commit.c). */
#include <stdio.h>

#include "../launch/commit.h"
#include "shared/util.h"
#include "args.h"

#define OPT_PAUSE 'p'
#define OPT_REPLACE 'r'

static const struct option commit_options[] = {
    {"pause", 0, NULL, OPT_PAUSE},   {"replace", 0, NULL, OPT_REPLACE}, {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG}, {"help", 0, NULL, OPT_HELP},       {0},
};

int cmd_commit(struct cli *cli, int argc, char **argv)
{
        struct commit_opts o = {0};
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", commit_options, NULL)) != -1) {
                if (opt == OPT_PAUSE || opt == OPT_REPLACE) {
                        *(opt == OPT_PAUSE ? &o.pause : &o.replace) = true;
                        continue;
                }
                int k = args_common(cli, "commit", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "commit");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "commit");
        if (optind + 2 != argc) {
                sbx_usage(&cli->err,
                          optind + 2 > argc ? "missing %s: commit takes ID NAME[:TAG]"
                                            : "too many arguments: commit takes ID "
                                              "NAME[:TAG]%s",
                          optind + 1 > argc ? "session ID" : "image NAME[:TAG]");
                return cli_finish_error(cli, "commit");
        }
        struct commit_result r;
        if (session_commit(argv[optind], argv[optind + 1], &o, &r, &cli->err) < 0)
                return cli_finish_error(cli, "commit");
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                buf_puts(&b, "{\"image\":");
                json_cstr(&b, r.name);
                buf_puts(&b, ",\"tag\":");
                json_cstr(&b, r.tag);
                buf_printf(&b, ",\"id\":\"sha256:%s\",\"layer\":\"sha256:%s\",\"base\":", r.id,
                           r.layer);
                json_cstr(&b, r.base);
                buf_printf(&b, ",\"layer_bytes\":%llu,\"entries\":%llu}\n",
                           (unsigned long long)r.layer_bytes, (unsigned long long)r.entries);
        } else
                buf_printf(&b, "sha256:%s\n", r.id);
        commit_result_free(&r);
        return cli_print(cli, &b) ? cli_finish_error(cli, "commit") : 0;
}
