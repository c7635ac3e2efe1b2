/* SPDX-License-Identifier: MIT */
/* diff: what a session changed against its base, one `K /path` line each (launch/diff.c). */
#include <stdio.h>
#include <string.h>

#include "../launch/launch.h"
#include "shared/util.h"
#include "args.h"

static const struct option diff_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

/* A name from the session, one line whatever it holds: control bytes, DEL, backslash and
 * invalid UTF-8 as \xNN. */
static void put_escaped(struct buf *b, const char *s)
{
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char)s[i];
                size_t ok = c >= 0x80 ? utf8_valid_prefix(s + i, n - i) : 0;
                if (c >= 0x80 && ok > 0) {
                        /* one valid multi-byte sequence at a time */
                        size_t l = 1;
                        while (l < ok && ((unsigned char)s[i + l] & 0xc0) == 0x80)
                                l++;
                        unsigned cp = 0; /* C1 controls (U+0080..U+009F) are escaped too */
                        if (l == 2)
                                cp = ((c & 0x1fu) << 6) | ((unsigned char)s[i + 1] & 0x3fu);
                        if (l == 2 && cp < 0xa0)
                                for (size_t k = 0; k < l; k++)
                                        buf_printf(b, "\\x%02x", (unsigned char)s[i + k]);
                        else
                                buf_append(b, s + i, l);
                        i += l;
                } else if (c < 0x20 || c == 0x7f || c == '\\' || c >= 0x80) {
                        buf_printf(b, "\\x%02x", c);
                        i++;
                } else {
                        buf_append(b, s + i, 1);
                        i++;
                }
        }
}

int cmd_diff(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", diff_options, NULL)) != -1) {
                int k = args_common(cli, "diff", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "diff");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "diff");
        if (optind + 1 != argc) {
                sbx_usage(&cli->err, optind >= argc ? "missing session ID"
                                                    : "too many arguments: diff takes one ID");
                return cli_finish_error(cli, "diff");
        }
        _cleanup_buf_ struct buf changes = {0}, b = {0};
        bool truncated = false;
        if (session_diff(argv[optind], &changes, &truncated, &cli->err) < 0)
                return cli_finish_error(cli, "diff");
        buf_puts(&b, cli->json ? "[" : "");
        size_t k = 0;
        for (size_t i = 0; i < changes.len; k++) {
                const char *rec = changes.data + i; /* "K /path" */
                i += strlen(rec) + 1;
                if (cli->json) {
                        buf_printf(&b, "%s{\"kind\":\"%c\",\"path\":", k ? "," : "", rec[0]);
                        json_cstr(&b, rec + 2);
                        buf_puts(&b, "}");
                } else {
                        buf_printf(&b, "%c ", rec[0]);
                        put_escaped(&b, rec + 2);
                        buf_puts(&b, "\n");
                }
        }
        if (cli->json)
                buf_puts(&b, "]\n");
        else if (truncated)
                buf_puts(&b, "[Results truncated at 100000 entries or 256 directory levels]\n");
        if (truncated && cli->json)
                cli_warn("the list of changes was cut at 100000 entries or 256 directory levels");
        return cli_print(cli, &b) ? cli_finish_error(cli, "diff") : 0;
}
