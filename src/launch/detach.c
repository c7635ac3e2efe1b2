/* SPDX-License-Identifier: MIT */
/* Starting a detached command (detach.h), and what the other operations share. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../session/audit.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup.h"
#include "detach-internal.h"

#define ARGV_FILE_MAX (1u << 20)

void detach_session_close(struct detach_session *s)
{
        closep(&s->cmdsfd);
        closep(&s->ctl);
        closep(&s->sessfd);
        session_state_free(&s->st);
}

int detach_session_open(const char *session, bool create, struct detach_session *s,
                        struct sbx_error *e)
{
        int r = control_open(session, 10, &s->sessfd, &s->ctl, e);
        if (r < 0)
                return r;
        if ((r = session_state_read(s->sessfd, &s->st)) < 0)
                return sbx_internal(e, -r, "failed to read the state of session '%s'", session);
        s->cmdsfd = cmds_dir_open(s->sessfd, create);
        if (s->cmdsfd < 0 && (create || s->cmdsfd != -ENOENT))
                return sbx_internal(e, -s->cmdsfd, "failed to open the commands of session '%s'",
                                    session);
        return 0;
}

int detach_cmd_open(const struct detach_session *s, const char *session, const char *cmd,
                    int *ret_fd, struct sbx_error *e)
{
        if (!detach_id_valid(cmd))
                return sbx_usage(e, "invalid command id '%s' (expected c1, c2, ...)", cmd);
        int fd = s->cmdsfd >= 0 ? cmd_dir_open(s->cmdsfd, cmd) : -ENOENT;
        if (fd == -ENOENT)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0, "no command '%s' in session '%s'",
                                cmd, session);
        if (fd < 0)
                return sbx_internal(e, -fd, "failed to open command '%s'", cmd);
        *ret_fd = fd;
        return 0;
}

bool detach_id_valid(const char *s)
{
        return cmd_id_valid(s);
}

const char *detach_state_name(enum detach_state s)
{
        return s == DETACH_RUNNING ? "running" : s == DETACH_KILLED ? "killed" : "exited";
}

void detach_info_free(struct detach_info *d)
{
        strv_freep(&d->argv);
}

void detach_info_list_free(struct detach_info *d, size_t n)
{
        for (size_t i = 0; d && i < n; i++)
                detach_info_free(&d[i]);
        free(d);
}

static char **argv_split(const struct buf *b)
{
        size_t n = 0;
        for (size_t i = 0; i < b->len; i++)
                n += b->data[i] == '\0';
        char **v = calloc(n + 1, sizeof(*v));
        for (size_t i = 0, k = 0, at = 0; v && i < b->len; i++)
                if (b->data[i] == '\0') {
                        if (!(v[k++] = strdup(b->data + at))) {
                                strv_freep(&v);
                                return NULL;
                        }
                        at = i + 1;
                }
        return v;
}

int detach_info_fill(int cmdfd, const char *id, struct detach_info *d)
{
        *d = (struct detach_info){0};
        snprintf(d->id, sizeof(d->id), "%s", id);
        struct cmd_state s;
        int r = cmd_state_read(cmdfd, &s);
        if (r < 0)
                return r;
        _cleanup_buf_ struct buf a = {0};
        if ((r = read_file_at(cmdfd, CMD_ARGV_FILE, &a, ARGV_FILE_MAX)) < 0)
                return r;
        if (!(d->argv = argv_split(&a)))
                return -ENOMEM;
        /* a keeper that is gone without its last word was killed (not by the session's end,
         * which removes everything): the command's exec client went with it */
        bool never_started = s.running && !s.keeper.pid && audit_now_ms() - s.started_ms > 10000;
        if (never_started || (s.running && s.keeper.pid && !cmd_proc_alive(&s.keeper))) {
                s.running = false;
                s.exit_code = EXIT_SBX_FAILED;
                s.ended_ms = s.started_ms;
                snprintf(s.error, sizeof(s.error), "%s",
                         never_started ? "its keeper never started (the client was killed)"
                                       : "its keeper process was killed");
        }
        d->state = s.running ? DETACH_RUNNING
                   : faccessat(cmdfd, CMD_KILLED_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0
                       ? DETACH_KILLED
                       : DETACH_EXITED;
        d->exit_code = s.running ? 0 : s.exit_code;
        d->timed_out = s.timed_out;
        d->started_ms = s.started_ms;
        int64_t end = s.running ? audit_now_ms() : s.ended_ms;
        d->duration_ms = end > s.started_ms ? (uint64_t)(end - s.started_ms) : 0;
        snprintf(d->error, sizeof(d->error), "%s", s.error);
        _cleanup_free_ struct cmd_segment *seg = NULL;
        size_t n;
        if ((r = cmd_segments(cmdfd, &seg, &n)) < 0)
                return r;
        if (n) {
                d->dropped_bytes = seg[0].offset;
                d->output_bytes = seg[n - 1].offset + seg[n - 1].size;
        }
        return 0;
}

/* Make room under DETACH_KEPT_MAX: the oldest finished commands go. */
static int prune(struct detach_session *s, const char *session, struct sbx_error *e)
{
        _cleanup_free_ unsigned *v = NULL;
        size_t n;
        int r = cmd_list_nums(s->cmdsfd, &v, &n);
        if (r < 0)
                return sbx_internal(e, -r, "failed to list the commands of session '%s'", session);
        size_t kept = n;
        for (size_t i = 0; i < n && kept >= DETACH_KEPT_MAX; i++) {
                char id[DETACH_ID_MAX];
                snprintf(id, sizeof(id), "c%u", v[i]);
                _cleanup_close_ int fd = cmd_dir_open(s->cmdsfd, id);
                struct detach_info d;
                if (fd < 0 || detach_info_fill(fd, id, &d) < 0)
                        continue;
                bool done = d.state != DETACH_RUNNING;
                detach_info_free(&d);
                if (done && cmd_dir_remove(s->cmdsfd, id) == 0)
                        kept--;
        }
        if (kept >= DETACH_KEPT_MAX)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "session '%s' keeps %d detached commands that all still run",
                                session, DETACH_KEPT_MAX);
        return 0;
}

static int write_records(int cmdfd, const struct exec_request *rq, uint64_t cap)
{
        _cleanup_buf_ struct buf a = {0};
        for (char **p = rq->argv; *p; p++)
                if (buf_append(&a, *p, strlen(*p) + 1) < 0)
                        return -ENOMEM;
        if (a.len > ARGV_FILE_MAX)
                return -E2BIG;
        int r = write_file_at(cmdfd, CMD_ARGV_FILE, a.data, a.len, 0600);
        if (r < 0)
                return r;
        struct cmd_state s = {.running = true, .started_ms = audit_now_ms(), .cap = cap};
        return cmd_state_write(cmdfd, &s);
}

static void audit_start(const struct detach_session *s, const char *cmd,
                        const struct exec_request *rq)
{
        _cleanup_close_ int fd = audit_open(s->sessfd, &s->st);
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, s->st.id, "detach");
        audit_str(&b, "command", cmd);
        audit_strv(&b, "argv", rq->argv);
        audit_str(&b, "workdir", rq->workdir ? rq->workdir : s->st.workdir);
        (void)audit_commit(fd, &b);
}

/* Double fork: the keeper is nobody's child that could wait for it, in a session of its own
 * (no terminal, no signal of the caller's process group). */
static int spawn_keeper(struct detach_session *s, const char *cmd, int cmdfd,
                        struct exec_request *rq, uint64_t cap, struct sbx_error *e)
{
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return sbx_internal(e, errno, "failed to make a pipe");
        _cleanup_close_ int rd = ready[0];
        _cleanup_close_ int wr = ready[1];
        pid_t k1 = fork();
        if (k1 < 0)
                return sbx_internal(e, errno, "failed to start the keeper of command '%s'", cmd);
        if (k1 == 0) {
                closep(&rd);
                if (setsid() < 0)
                        _exit(1);
                pid_t k2 = fork();
                if (k2 != 0)
                        _exit(k2 < 0);
                int auditfd = audit_open(s->sessfd, &s->st);
                detach_keeper_main(s->st.id, cmd, cmdfd, auditfd, wr, rq, cap);
        }
        closep(&wr);
        int status;
        (void)RETRY_EINTR(waitpid(k1, &status, 0));
        char c;
        if (RETRY_EINTR(read(rd, &c, 1)) != 1)
                return sbx_internal(e, 0, "the keeper of command '%s' failed to start", cmd);
        return 0;
}

int detach_start(const char *session, const struct exec_request *rq, char ret_id[DETACH_ID_MAX],
                 struct sbx_error *e)
{
        if (rq->tty || rq->interactive || rq->capture)
                return sbx_usage(e, "a detached command takes no --tty, --interactive or "
                                    "captured output");
        if (!rq->argv || !rq->argv[0])
                return sbx_usage(e, "missing command to run");
        struct detach_session s = DETACH_SESSION_INIT;
        int r = detach_session_open(session, true, &s, e);
        /* as exec: a command would be born frozen */
        if (r == 0 && cgroup_state_frozen(&s.st) == 1)
                r = sbx_fail(e, EXIT_SBX_FAILED, "paused", 0,
                             "session '%s' is paused: 'sbx resume %s' first", session, session);
        if (r == 0)
                r = prune(&s, session, e);
        unsigned num = 0;
        _cleanup_close_ int cmdfd = -1;
        if (r == 0 && (r = cmd_dir_make(s.cmdsfd, &num, &cmdfd)) < 0)
                r = sbx_internal(e, -r, "failed to make a command record in session '%s'",
                                 session);
        char id[DETACH_ID_MAX];
        snprintf(id, sizeof(id), "c%u", num);
        uint64_t cap = rq->max_output ? rq->max_output : DETACH_OUTPUT_CAP_DEFAULT;
        struct exec_request krq = *rq;
        if (r == 0 && (r = write_records(cmdfd, rq, cap)) < 0)
                r = sbx_internal(e, -r, "failed to write the record of command '%s'", id);
        if (r == 0) {
                audit_start(&s, id, rq); /* before its end can be written */
                r = spawn_keeper(&s, id, cmdfd, &krq, cap, e);
        }
        if (r == 0) {
                memcpy(ret_id, id, sizeof(id));
        } else if (cmdfd >= 0) {
                (void)cmd_dir_remove(s.cmdsfd, id);
        }
        detach_session_close(&s);
        return r;
}

