/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/escape.h"
#include "shared/util.h"
#include "cli.h"

void cli_message(const char *prefix, const char *msg)
{
        _cleanup_buf_ struct buf b = {0};
        if (buf_puts(&b, prefix) < 0 || escape_cstr(&b, msg, 0) < 0 || buf_puts(&b, "\n") < 0) {
                fprintf(stderr, "%s(out of memory)\n", prefix);
                return;
        }
        (void)fputs(b.data, stderr);
}

int cli_finish_error(struct cli *cli, const char *command)
{
        struct sbx_error *e = &cli->err;
        int code = e->exit_code ? e->exit_code : EXIT_SBX_FAILED;
        if (cli->json) {
                _cleanup_buf_ struct buf b = {0};
                buf_puts(&b, "{\"error\":{\"code\":");
                json_cstr(&b, e->code ? e->code : "internal");
                buf_puts(&b, ",\"message\":");
                json_cstr(&b, e->message);
                buf_puts(&b, "}}\n");
                (void)write_all(STDOUT_FILENO, b.data, b.len);
        }
        /* Human messages always go to stderr, also with --json; an empty message means "exit
         * quietly" (grep's no-match). */
        if (e->message[0])
                cli_message("sbx: ", e->message);
        if (code == EXIT_USAGE && command)
                fprintf(stderr, "Try 'sbx %s --help'.\n", command);
        else if (code == EXIT_USAGE)
                fprintf(stderr, "Try 'sbx --help'.\n");
        return code;
}

int cli_print(struct cli *cli, const struct buf *b)
{
        if (b->len && write_all(STDOUT_FILENO, b->data, b->len) < 0) {
                sbx_internal(&cli->err, errno, "failed to write the output");
                return EXIT_SBX_FAILED;
        }
        return 0;
}

void cli_warn(const char *fmt, ...)
{
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        cli_message("sbx: warning: ", msg);
}
