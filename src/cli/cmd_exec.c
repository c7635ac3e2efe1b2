/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "../launch/detach.h"
#include "../launch/launch.h"
#include "args.h"

static const struct option exec_options[] = {
    {"timeout", 1, NULL, 't'},       {"workdir", 1, NULL, 'w'},
    {"env", 1, NULL, 'e'},           {"env-file", 1, NULL, OPT_EXEC_ENV_FILE},
    {"interactive", 0, NULL, 'i'},   {"tty", 0, NULL, 'T'},
    {"max-output", 1, NULL, 'M'},    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG}, {"help", 0, NULL, OPT_HELP},
    {"detach", 0, NULL, 'd'},        {0},
};

/* -d: the command's id at once (launch/detach.h); its output goes to `sbx logs`. */
static int exec_detached(struct cli *cli, const char *id, struct exec_request *rq)
{
        if (rq->tty || rq->interactive) {
                sbx_usage(&cli->err, "--detach cannot be combined with --tty or --interactive");
                return cli_finish_error(cli, "exec");
        }
        char cmd[DETACH_ID_MAX];
        if (detach_start(id, rq, cmd, &cli->err) < 0)
                return cli_finish_error(cli, "exec");
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                buf_puts(&b, "{\"id\":");
                json_cstr(&b, cmd);
                buf_puts(&b, "}\n");
        } else {
                buf_printf(&b, "%s\n", cmd);
        }
        return cli_print(cli, &b) ? cli_finish_error(cli, "exec") : 0;
}

int cmd_exec(struct cli *cli, int argc, char **argv)
{
        struct exec_request rq = {0};
        struct flag_list env_adds = {0};
        bool detach = false;
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:t:w:e:iThd", exec_options, NULL)) != -1) {
                /* after a bad option the rest of the options is still read, for a --json that
                 * shapes the error */
                if (cli->err.exit_code) {
                        cli->json = cli->json || opt == OPT_JSON;
                        continue;
                }
                if (opt == 'd') {
                        detach = true;
                        continue;
                }
                int k = args_common(cli, "exec", opt);
                if (k == -1)
                        return 0;
                if (k == 0 && args_exec_option(cli, opt, optarg, &rq, &env_adds) == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
        }
        if (cli->err.exit_code)
                return cli_finish_error(cli, "exec");
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "exec");
        if (optind >= argc) {
                sbx_usage(&cli->err, "missing session ID");
                return cli_finish_error(cli, "exec");
        }
        const char *id = argv[optind++];
        if (optind < argc && strcmp(argv[optind], "--") == 0)
                optind++;
        if (optind >= argc) {
                sbx_usage(&cli->err, "missing command to run");
                return cli_finish_error(cli, "exec");
        }
        rq.argv = argv + optind;
        char *env_store[260];
        rq.env_add = args_env_vector(&env_adds, env_store, 260);
        if (detach)
                return exec_detached(cli, id, &rq);
        if (exec_finish_request(cli, &rq) < 0)
                return cli_finish_error(cli, "exec");

        struct exec_result res = {0};
        int r = exec_in_session(id, &rq, &res, &cli->err);
        int code = args_finish_exec(cli, "exec", &res, r);
        buf_freep(&res.output);
        return code;
}
