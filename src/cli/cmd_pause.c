/* SPDX-License-Identifier: MIT */
/* pause, resume: freeze and thaw every process of a session (launch/pause.c). */
#include <stdio.h>

#include "../launch/launch.h"
#include "shared/util.h"
#include "args.h"

static const struct option pause_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

static int run(struct cli *cli, const char *cmd, bool pause, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", pause_options, NULL)) != -1) {
                int k = args_common(cli, cmd, opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, cmd);
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, cmd);
        if (optind + 1 != argc) {
                sbx_usage(&cli->err,
                          optind >= argc ? "missing session ID"
                                         : "too many arguments: %s takes one ID",
                          cmd);
                return cli_finish_error(cli, cmd);
        }
        if (session_pause(argv[optind], pause, &cli->err) < 0)
                return cli_finish_error(cli, cmd);
        if (!cli->json)
                return 0;
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"session\":");
        json_cstr(&b, argv[optind]);
        buf_printf(&b, ",\"paused\":%s}\n", pause ? "true" : "false");
        return cli_print(cli, &b) ? cli_finish_error(cli, cmd) : 0;
}

int cmd_pause(struct cli *cli, int argc, char **argv)
{
        return run(cli, "pause", true, argc, argv);
}

int cmd_resume(struct cli *cli, int argc, char **argv)
{
        return run(cli, "resume", false, argc, argv);
}
