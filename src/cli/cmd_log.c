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
#include "../shared/util.h"
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
        int fd = st.audit_path ? open(st.audit_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                               : openat(sessfd, AUDIT_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

/* The kept log of a session in the audit dir (an id only: names end with their session). */
static int open_kept_log(const char *audit_dir, const char *id)
{
        if (!audit_dir || !session_id_valid(id))
                return -ENOENT;
        _cleanup_close_ int dfd = open(audit_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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

/* JSON: one array of the records. Only whole lines are records ("{...}\n"). */
static int to_json_array(const struct buf *in, struct buf *out)
{
        int r = buf_puts(out, "[");
        bool first = true;
        for (const char *p = in->data, *end = in->data + in->len; p && p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        break;
                if (nl > p && *p == '{' && nl[-1] == '}') {
                        r |= buf_puts(out, first ? "" : ",");
                        r |= buf_append(out, p, (size_t)(nl - p));
                        first = false;
                }
                p = nl + 1;
        }
        r |= buf_puts(out, "]\n");
        return r ? -ENOMEM : 0;
}

int cmd_log(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+h", log_options, NULL)) != -1) {
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
        _cleanup_buf_ struct buf text = {0}, out = {0};
        int r = read_all(fd, &text, (size_t)1 << 30);
        if (r < 0) {
                sbx_fail(&cli->err, EXIT_SBX_FAILED, "internal", -r,
                         "failed to read the audit log of '%s'", argv[optind]);
                return cli_finish_error(cli, "log");
        }
        if (!cli->json)
                return cli_print(cli, &text) ? cli_finish_error(cli, "log") : 0;
        if (to_json_array(&text, &out) < 0) {
                sbx_internal(&cli->err, ENOMEM, "out of memory");
                return cli_finish_error(cli, "log");
        }
        return cli_print(cli, &out) ? cli_finish_error(cli, "log") : 0;
}
