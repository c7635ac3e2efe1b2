/* SPDX-License-Identifier: MIT */
/* `sbx mcp`: the CLI's entry of the MCP server (src/mcp/): its options and the operator's
 * config, then the server until the client is done. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "mcp/mcp.h"
#include "args.h"

enum { OPT_ANY_SESSION = 0x200, OPT_DESTROY_ON_CLOSE, OPT_MAX_OUTPUT };

static const struct option mcp_options[] = {
    {"any-session", no_argument, NULL, OPT_ANY_SESSION},
    {"destroy-on-close", no_argument, NULL, OPT_DESTROY_ON_CLOSE},
    {"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

static int parse_options(struct cli *cli, int argc, char **argv, struct mcp_server *s)
{
        int opt;
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", mcp_options, NULL)) != -1) {
                if (opt == OPT_ANY_SESSION || opt == OPT_DESTROY_ON_CLOSE) {
                        *(opt == OPT_ANY_SESSION ? &s->any_session : &s->destroy_on_close) = true;
                        continue;
                }
                if (opt == OPT_MAX_OUTPUT) {
                        uint64_t v;
                        if (parse_size(optarg, &v) < 0 || v < 1024 || v > MCP_MAX_OUTPUT)
                                return sbx_usage(&cli->err,
                                                 "invalid --max-output '%s': a size from 1K "
                                                 "to 16M",
                                                 optarg);
                        s->max_text = (size_t)v;
                        continue;
                }
                int k = args_common(cli, "mcp", opt);
                if (k == -1)
                        return 1;
                if (k == 0)
                        sbx_usage(&cli->err, "unknown option '%s'", argv[optind - 1]);
                if (k <= 0)
                        return -1;
        }
        if (optind < argc)
                return sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind]);
        return 0;
}

int cmd_mcp(struct cli *cli, int argc, char **argv)
{
        struct mcp_server s = {.sigfd = -1,
                               .in_fd = STDIN_FILENO,
                               .out_fd = STDOUT_FILENO,
                               .max_text = MCP_DEFAULT_MAX_TEXT};
        int r = parse_options(cli, argc, argv, &s);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "mcp");
        s.config_file = cli->config_file;
        /* the operator's config, the ceiling of every limit a model asks for; a bad one is
         * refused before serving (exit 2), as every command would refuse it */
        config_init_defaults(&s.limits);
        r = config_load(&s.limits, cli->config_file, &cli->err);
        if (r == 0 && (r = mcp_serve(&s)) < 0) {
                fprintf(stderr, "sbx: mcp: %s\n", strerror(-r));
                r = EXIT_SBX_FAILED;
        }
        config_free(&s.limits);
        return r < 0 ? cli_finish_error(cli, "mcp") : r;
}
