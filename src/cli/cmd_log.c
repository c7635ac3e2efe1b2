/* SPDX-License-Identifier: MIT */
/*
 * `log`: print a session's audit log. A live session's log is found through its state file;
 * with an [audit] dir set, the log of an ended session is found there by its id.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../session/runtime.h"
#include "shared/escape.h"
#include "shared/util.h"
#include "args.h"

static const struct option log_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

/* The log of a live session (id_or_name resolved in the runtime dir): fd, or -ENOENT. */
static int open_live_log(int rtfd, const char *id_or_name, char id[static SESSION_ID_LEN + 1])
{
        struct sbx_error ignored = {0};
        if (runtime_resolve(rtfd, id_or_name, id, &ignored) < 0)
                return -ENOENT;
        _cleanup_close_ int sessfd = runtime_open_session(rtfd, id);
        _cleanup_state_ struct session_state st = {0};
        if (sessfd < 0 || session_state_read(sessfd, &st) < 0)
                return -ENOENT;
        if (st.audit_path)
                return audit_open_path(st.audit_path, O_RDONLY | O_NOFOLLOW, 0);
        int fd = openat(sessfd, AUDIT_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

/* The kept log of a session in the audit dir (an id only: names end with their session). */
static int open_kept_log(const char *audit_dir, const char *id)
{
        if (!audit_dir || !session_id_valid(id))
                return -ENOENT;
        _cleanup_close_ int dfd = audit_open_path(audit_dir, O_RDONLY | O_DIRECTORY, 0);
        if (dfd < 0)
                return -ENOENT;
        char name[SESSION_ID_LEN + 8];
        snprintf(name, sizeof(name), "%s.jsonl", id);
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

static int open_log(struct cli *cli, const char *id_or_name)
{
        struct sbx_config c;
        config_init_defaults(&c);
        int r = config_load(&c, cli->config_file, &cli->err);
        _cleanup_close_ int rtfd = -1;
        if (r == 0)
                r = runtime_check_ref(id_or_name, &cli->err);
        if (r == 0)
                r = runtime_open(&rtfd, &cli->err);
        if (r < 0) {
                config_free(&c);
                return r;
        }
        char id[SESSION_ID_LEN + 1];
        int fd = open_live_log(rtfd, id_or_name, id);
        if (fd == -ENOENT)
                fd = open_kept_log(c.audit_dir, id_or_name);
        bool kept = c.audit_dir != NULL;
        config_free(&c);
        if (fd == -ENOENT)
                return sbx_fail(&cli->err, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s'%s", id_or_name,
                                kept ? " (nor a kept log of that id in the [audit] dir)"
                                     : " (logs outlive their session only with [audit] dir set)");
        if (fd < 0)
                return sbx_fail(&cli->err, EXIT_UNSUPPORTED, "unsupported", -fd,
                                "cannot read the audit log of '%s'", id_or_name);
        return fd;
}

/*
 * The log is streamed, never read whole: it can be large (a proxy's net records), and every
 * record must stay readable. Text: the lines as they are. JSON: one array of the records;
 * only whole lines that look like records ("{...}") are taken, and a line longer than
 * LINE_MAX_BYTES (no record is: AUDIT_RECORD_MAX) is skipped.
 */
#define LINE_MAX_BYTES (AUDIT_RECORD_MAX * 2)

struct json_stream {
        struct buf line; /* the current, incomplete line */
        bool skipping;   /* inside an over-long line */
        bool first;
};

static int emit_record(struct json_stream *js, struct buf *out)
{
        const char *p = js->line.data;
        size_t n = js->line.len;
        if (js->skipping || n < 2 || p[0] != '{' || p[n - 1] != '}')
                return 0;
        int r = buf_puts(out, js->first ? "" : ",");
        r |= buf_append(out, p, n);
        js->first = false;
        return r ? -ENOMEM : 0;
}

static int json_feed(struct json_stream *js, const char *p, size_t n, struct buf *out)
{
        for (const char *end = p + n; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t take = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (!js->skipping && js->line.len + take > LINE_MAX_BYTES)
                        js->skipping = true;
                if (!js->skipping && buf_append(&js->line, p, take) < 0)
                        return -ENOMEM;
                if (!nl)
                        break;
                int r = emit_record(js, out);
                js->line.len = 0;
                js->skipping = false;
                if (r < 0)
                        return r;
                p = nl + 1;
        }
        return 0;
}

/*
 * Text to a terminal: whole lines through the last pass of shared/escape.h (the records are
 * JSON, escaped when written; a record from an older sbx may still hold a raw C1 byte).
 * *pending keeps a partial last line for the next chunk; at_end flushes it.
 */
static int write_terminal(struct buf *pending, const char *p, size_t n, bool at_end)
{
        if (buf_append(pending, p, n) < 0)
                return -ENOMEM;
        const char *nl = pending->len ? memrchr(pending->data, '\n', pending->len) : NULL;
        size_t upto = at_end ? pending->len : nl ? (size_t)(nl - pending->data) + 1 : 0;
        if (upto == 0)
                return 0;
        _cleanup_buf_ struct buf safe = {0};
        int r = escape_append(&safe, pending->data, upto, ESCAPE_TERMINAL_PASS);
        if (r == 0 && safe.len)
                r = write_all(STDOUT_FILENO, safe.data, safe.len);
        memmove(pending->data, pending->data + upto, pending->len - upto);
        pending->len -= upto;
        pending->data[pending->len] = '\0';
        return r;
}

static int stream_log(struct cli *cli, int fd)
{
        _cleanup_buf_ struct buf pending = {0};
        bool tty = !cli->json && isatty(STDOUT_FILENO);
        _cleanup_buf_ struct buf out = {0};
        struct json_stream js = {.first = true};
        char chunk[65536];
        int r = cli->json ? buf_puts(&out, "[") : 0;
        for (;;) {
                ssize_t n = RETRY_EINTR(read(fd, chunk, sizeof(chunk)));
                if (n < 0) {
                        r = negerrno();
                        break;
                }
                if (n == 0)
                        break;
                if (tty)
                        r = write_terminal(&pending, chunk, (size_t)n, false);
                else if (!cli->json)
                        r = write_all(STDOUT_FILENO, chunk, (size_t)n);
                else if ((r = json_feed(&js, chunk, (size_t)n, &out)) == 0 &&
                         out.len >= sizeof(chunk)) {
                        r = write_all(STDOUT_FILENO, out.data, out.len);
                        out.len = 0;
                }
                if (r < 0)
                        break;
        }
        if (r == 0 && tty)
                r = write_terminal(&pending, "", 0, true);
        if (r == 0 && cli->json && (r = buf_puts(&out, "]\n")) == 0)
                r = write_all(STDOUT_FILENO, out.data, out.len);
        buf_freep(&js.line);
        return r;
}

int cmd_log(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":h", log_options, NULL)) != -1) {
                int k = args_common(cli, "log", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "log");
        }
        if (optind + 1 != argc) {
                sbx_usage(&cli->err, optind >= argc ? "missing session ID" : "too many arguments");
                return cli_finish_error(cli, "log");
        }
        _cleanup_close_ int fd = open_log(cli, argv[optind]);
        if (fd < 0)
                return cli_finish_error(cli, "log");
        int r = stream_log(cli, fd);
        if (r < 0) {
                sbx_fail(&cli->err, EXIT_SBX_FAILED, "internal", -r,
                         "failed to print the audit log of '%s'", argv[optind]);
                return cli_finish_error(cli, "log");
        }
        return 0;
}
