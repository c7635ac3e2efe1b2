/* SPDX-License-Identifier: MIT */
/* ps, logs, wait, kill: a session's detached commands (launch/detach.h); exec -d starts them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../launch/detach.h"
#include "shared/escape.h"
#include "shared/util.h"
#include "args.h"

enum { OPT_CURSOR = OPT_CREATE_FIRST, OPT_FOLLOW };

static const struct option detach_options[] = {
    {"cursor", 1, NULL, OPT_CURSOR}, {"follow", 0, NULL, OPT_FOLLOW}, {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG}, {"help", 0, NULL, OPT_HELP},     {0},
};

struct detach_args {
        bool logs; /* --cursor and --follow are its own */
        uint64_t cursor;
        bool follow;
};

/* Options, then between min and max operands. 1: help was printed; <0: usage error set. */
static int parse(struct cli *cli, const char *cmd, int argc, char **argv, int min, int max,
                 struct detach_args *a)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", detach_options, NULL)) != -1) {
                if (cli->err.exit_code) {
                        cli->json = cli->json || opt == OPT_JSON;
                        continue;
                }
                char *end;
                if (a->logs && opt == OPT_CURSOR) {
                        if (optarg[0] < '0' || optarg[0] > '9' ||
                            (a->cursor = strtoull(optarg, &end, 10), *end) ||
                            a->cursor == UINT64_MAX)
                                sbx_usage(&cli->err,
                                          "invalid --cursor '%s': expected a byte offset", optarg);
                        continue;
                }
                if (a->logs && opt == OPT_FOLLOW) {
                        a->follow = true;
                        continue;
                }
                int k = args_common(cli, cmd, opt);
                if (k == -1)
                        return 1;
                if (k == 0 || opt == OPT_CURSOR || opt == OPT_FOLLOW)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
        }
        if (cli->err.exit_code || args_check_config(cli) < 0)
                return -1;
        int n = argc - optind;
        if (n < 1)
                return sbx_usage(&cli->err, "missing session ID");
        if (n < min)
                return sbx_usage(&cli->err, "missing command id");
        if (n > max)
                return sbx_usage(&cli->err, "too many arguments");
        return 0;
}

static void json_info(struct buf *b, const struct detach_info *d)
{
        char t[21];
        format_rfc3339(d->started_ms / 1000, t);
        buf_puts(b, "{\"id\":");
        json_cstr(b, d->id);
        buf_puts(b, ",\"argv\":[");
        for (char **p = d->argv; p && *p; p++) {
                buf_puts(b, p == d->argv ? "" : ",");
                json_cstr(b, *p);
        }
        buf_printf(b, "],\"state\":\"%s\",\"exit_code\":", detach_state_name(d->state));
        if (d->state == DETACH_RUNNING)
                buf_puts(b, "null");
        else
                buf_printf(b, "%d", d->exit_code);
        buf_printf(b,
                   ",\"timed_out\":%s,\"started_at\":\"%s\",\"duration_ms\":%" PRIu64
                   ",\"output_bytes\":%" PRIu64 ",\"dropped_bytes\":%" PRIu64 ",\"error\":",
                   d->timed_out ? "true" : "false", t, d->duration_ms, d->output_bytes,
                   d->dropped_bytes);
        json_cstr(b, d->error[0] ? d->error : NULL);
        buf_puts(b, "}");
}

/* ID STATE EXIT STARTED DURATION COMMAND: one line a command, names escaped. */
static void text_info(struct buf *b, const struct detach_info *d)
{
        char t[21], code[16];
        format_rfc3339(d->started_ms / 1000, t);
        if (d->state == DETACH_RUNNING)
                snprintf(code, sizeof(code), "-");
        else
                snprintf(code, sizeof(code), "%d", d->exit_code);
        buf_printf(b, "%-6s %-8s %-4s %s %7.1fs ", d->id, detach_state_name(d->state), code, t,
                   (double)d->duration_ms / 1000);
        for (char **p = d->argv; p && *p; p++) {
                buf_puts(b, p == d->argv ? "" : " ");
                escape_cstr(b, *p, 0);
        }
        buf_puts(b, "\n");
}

int cmd_ps(struct cli *cli, int argc, char **argv)
{
        struct detach_args a = {0};
        int r = parse(cli, "ps", argc, argv, 1, 1, &a);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "ps");
        struct detach_info *d;
        size_t n;
        if (detach_list(argv[optind], &d, &n, &cli->err) < 0)
                return cli_finish_error(cli, "ps");
        _cleanup_buf_ struct buf b = {0};
        if (cli->json)
                buf_puts(&b, "[");
        else if (n)
                buf_puts(&b, "ID     STATE    EXIT STARTED              DURATION COMMAND\n");
        for (size_t i = 0; i < n; i++) {
                if (cli->json) {
                        buf_puts(&b, i ? "," : "");
                        json_info(&b, &d[i]);
                } else {
                        text_info(&b, &d[i]);
                }
        }
        if (cli->json)
                buf_puts(&b, "]\n");
        detach_info_list_free(d, n);
        return cli_print(cli, &b) ? cli_finish_error(cli, "ps") : 0;
}

/* One chunk of output: raw on stdout (a marker line first for what was dropped), or one JSON
 * object a chunk. */
static int print_chunk(struct cli *cli, const struct buf *data, uint64_t next, uint64_t dropped,
                       bool ended)
{
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                buf_puts(&b, "{\"data\":");
                json_string(&b, data->data ? data->data : "", data->len);
                buf_printf(&b, ",\"cursor\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"ended\":%s}\n",
                           next, dropped, ended ? "true" : "false");
        } else {
                if (dropped)
                        buf_printf(&b, "[sbx: %" PRIu64 " bytes of output dropped]\n", dropped);
                if (data->len)
                        buf_append(&b, data->data, data->len);
        }
        return b.len ? cli_print(cli, &b) : 0;
}

int cmd_logs(struct cli *cli, int argc, char **argv)
{
        struct detach_args a = {.logs = true};
        int r = parse(cli, "logs", argc, argv, 2, 2, &a);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "logs");
        const char *id = argv[optind], *cmd = argv[optind + 1];
        uint64_t cursor = a.cursor;
        for (;;) {
                _cleanup_buf_ struct buf data = {0};
                uint64_t next, dropped;
                bool ended;
                /* --follow: chunks of at most 1 MiB as they come, until the command ends */
                if (detach_read(id, cmd, cursor, a.follow ? 1u << 20 : 0, a.follow ? -1 : 0, &data,
                                &next, &dropped, &ended, &cli->err) < 0)
                        return cli_finish_error(cli, "logs");
                if (print_chunk(cli, &data, next, dropped, ended) < 0)
                        return cli_finish_error(cli, "logs");
                cursor = next;
                if (!a.follow || ended)
                        return 0;
        }
}

int cmd_wait(struct cli *cli, int argc, char **argv)
{
        struct detach_args a = {0};
        int r = parse(cli, "wait", argc, argv, 2, 2, &a);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "wait");
        struct detach_info d;
        if (detach_wait(argv[optind], argv[optind + 1], -1, &d, &cli->err) < 0)
                return cli_finish_error(cli, "wait");
        int code = d.exit_code;
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                json_info(&b, &d);
                buf_puts(&b, "\n");
        } else if (d.error[0]) {
                cli_message("sbx: ", d.error);
        }
        detach_info_free(&d);
        return cli_print(cli, &b) ? cli_finish_error(cli, "wait") : code;
}

int cmd_kill(struct cli *cli, int argc, char **argv)
{
        struct detach_args a = {0};
        int r = parse(cli, "kill", argc, argv, 2, 3, &a);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "kill");
        int sig = 15;
        if (optind + 2 < argc && detach_signal_parse(argv[optind + 2], &sig) < 0) {
                sbx_usage(&cli->err, "invalid signal '%s'", argv[optind + 2]);
                return cli_finish_error(cli, "kill");
        }
        if (detach_kill(argv[optind], argv[optind + 1], sig, &cli->err) < 0)
                return cli_finish_error(cli, "kill");
        if (!cli->json)
                return 0;
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"command\":");
        json_cstr(&b, argv[optind + 1]);
        buf_printf(&b, ",\"signal\":%d}\n", sig);
        return cli_print(cli, &b) ? cli_finish_error(cli, "kill") : 0;
}
