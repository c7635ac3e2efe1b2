/* SPDX-License-Identifier: MIT */
/* serve: the OpenSandbox HTTP API (src/serve/); this file reads its flags and its key. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../serve/serve.h"
#include "shared/util.h"
#include "args.h"

enum { OPT_LISTEN = 0x200, OPT_KEY_FILE };

static const struct option serve_options[] = {
    {"listen", 1, NULL, OPT_LISTEN}, {"api-key-file", 1, NULL, OPT_KEY_FILE},
    {"json", 0, NULL, OPT_JSON},     {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},     {0},
};

#define DEFAULT_LISTEN "127.0.0.1:8083"
#define MAX_KEY 4096

/* The key from the file (its first line) or SBX_SERVE_API_KEY; NULL in *ret when neither. */
static int read_key(struct cli *cli, const char *file, char **ret)
{
        *ret = NULL;
        if (!file) {
                const char *k = getenv("SBX_SERVE_API_KEY");
                if (!k || !*k)
                        return 0;
                *ret = strdup(k);
                return *ret ? 0 : sbx_fail(&cli->err, EXIT_SBX_FAILED, "internal", ENOMEM, "oom");
        }
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(AT_FDCWD, file, &b, MAX_KEY);
        if (r < 0)
                return sbx_fail(&cli->err, EXIT_USAGE, "usage", -r,
                                "failed to read the API key file '%s'", file);
        size_t n = b.len ? strcspn(b.data, "\r\n") : 0;
        if (n == 0)
                return sbx_usage(&cli->err, "the API key file '%s' is empty", file);
        b.data[n] = '\0';
        *ret = strdup(b.data);
        return *ret ? 0 : sbx_fail(&cli->err, EXIT_SBX_FAILED, "internal", ENOMEM, "oom");
}

int cmd_serve(struct cli *cli, int argc, char **argv)
{
        struct serve_options o = {.listen = DEFAULT_LISTEN};
        const char *key_file = NULL;
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", serve_options, NULL)) != -1) {
                if (opt == OPT_LISTEN) {
                        o.listen = optarg;
                        continue;
                }
                if (opt == OPT_KEY_FILE) {
                        key_file = optarg;
                        continue;
                }
                int k = args_common(cli, "serve", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "serve");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "serve");
        if (optind != argc) {
                sbx_usage(&cli->err, "serve takes no arguments");
                return cli_finish_error(cli, "serve");
        }
        _cleanup_free_ char *key = NULL;
        if (read_key(cli, key_file, &key) < 0)
                return cli_finish_error(cli, "serve");
        o.api_key = key;
        o.config_file = cli->config_file;
        if (serve_run(&o, &cli->err) < 0)
                return cli_finish_error(cli, "serve");
        return 0;
}
