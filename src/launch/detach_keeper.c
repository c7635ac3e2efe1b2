/* SPDX-License-Identifier: MIT */
/*
 * The keeper of one detached command (detach-internal.h): host-side, outside the sandbox, so
 * the command cannot reach what it writes. Its child, the runner, is an ordinary exec client;
 * the keeper only stores what the runner streams and what it reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../session/audit.h"
#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/util.h"
#include "detach-internal.h"

/* runner -> keeper, over a pipe (each message is one atomic write) */
enum { MSG_RESULT = 2 };
struct runner_msg {
        int32_t kind;
        int32_t r; /* exec_in_session's return */
        int32_t exit_code;
        int32_t timed_out;
        char error[200];
};

/* The output segments: the current one and the one before; older ones are removed. */
struct segw {
        int dirfd, fd;
        uint64_t cur, prev; /* offsets of the current and previous segments */
        bool has_prev;
        uint64_t len, total, segsize;
};

static void seg_rotate(struct segw *w)
{
        char name[40];
        if (w->fd >= 0) {
                closep(&w->fd);
                if (w->has_prev) {
                        snprintf(name, sizeof(name), "out.%" PRIu64, w->prev);
                        (void)unlinkat(w->dirfd, name, 0);
                }
                w->prev = w->cur;
                w->has_prev = true;
        }
        w->cur = w->total;
        w->len = 0;
        snprintf(name, sizeof(name), "out.%" PRIu64, w->cur);
        w->fd = openat(w->dirfd, name,
                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static void seg_write(struct segw *w, const char *p, size_t n)
{
        while (n > 0) {
                if (w->fd < 0 || w->len >= w->segsize)
                        seg_rotate(w);
                size_t k = w->segsize - w->len < n ? (size_t)(w->segsize - w->len) : n;
                /* a write that fails (the runtime dir is full) drops these bytes: the next
                 * segment starts at the true offset, and readers see the gap as dropped */
                if (w->fd < 0 || write_all(w->fd, p, k) < 0)
                        closep(&w->fd);
                w->len += k;
                w->total += k;
                p += k;
                n -= k;
        }
}

/* In the runner, which may have joined the session's namespaces (its /proc is then the
 * session's): B's pidfd goes to the keeper, which reads B's host pid from it. */
static void runner_on_reaper(int pidfd, void *arg)
{
        if (pidfd >= 0)
                (void)sync_send_ok_fd(*(int *)arg, pidfd);
}

/* In the keeper: the host pid and start time of the process behind pidfd (0 pid: unknown). */
static struct cmd_proc pidfd_proc(int pidfd)
{
        struct cmd_proc p = {0};
        char path[64], line[256];
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Pid: %d", &p.pid) == 1)
                        break;
        if (p.pid > 0)
                p.start = proc_start_time(p.pid);
        return p;
}

_noreturn_ static void runner_main(const char *st_id, struct exec_request *rq, int outfd, int msgfd,
                                   int reaperfd, pid_t keeper)
{
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM); /* the keeper gone: the command goes too */
        /* what the keeper ignores, the command must not inherit (as a plain exec) */
        (void)signal(SIGHUP, SIG_DFL);
        (void)signal(SIGPIPE, SIG_DFL);
        if (getppid() != keeper)
                _exit(1);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
                _exit(1);
        rq->on_reaper = runner_on_reaper;
        rq->on_reaper_arg = &reaperfd;
        rq->max_output = 0; /* the keeper caps what it keeps; the command is never cut off */
        struct exec_result res = {0};
        struct sbx_error e = {0};
        int r = exec_in_session(st_id, rq, &res, &e);
        struct runner_msg m = {
            .kind = MSG_RESULT, .r = r, .exit_code = res.exit_code, .timed_out = res.timed_out};
        if (r < 0) {
                m.exit_code = EXIT_SBX_FAILED; /* as exec: sbx failed around the command */
                snprintf(m.error, sizeof(m.error), "%.199s", e.message);
        } else if (res.exec_error.exit_code) {
                snprintf(m.error, sizeof(m.error), "%.199s", res.exec_error.message);
        }
        (void)write_all(msgfd, &m, sizeof(m));
        _exit(0);
}

static void audit_end_record(int auditfd, const char *st_id, const char *cmd,
                             const struct cmd_state *s, uint64_t output)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, st_id, "detach_end");
        audit_str(&b, "command", cmd);
        audit_int(&b, "exit_code", s->exit_code);
        audit_bool(&b, "timed_out", s->timed_out);
        audit_int(&b, "duration_ms", s->ended_ms - s->started_ms);
        audit_int(&b, "output_bytes", (int64_t)output);
        if (s->error[0])
                audit_str(&b, "error", s->error);
        (void)audit_commit(auditfd, &b);
}

/* Relay the runner's output and messages until its pipes end. */
static void keep(int cmdfd, int outfd, int msgfd, int reaperfd, struct cmd_state *s, struct segw *w,
                 struct runner_msg *result, bool *got_result)
{
        char buf[65536];
        while (outfd >= 0 || msgfd >= 0) {
                struct pollfd p[3] = {{.fd = outfd, .events = POLLIN},
                                      {.fd = msgfd, .events = POLLIN},
                                      {.fd = reaperfd, .events = POLLIN}};
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents) {
                        ssize_t n = read(outfd, buf, sizeof(buf));
                        if (n > 0)
                                seg_write(w, buf, (size_t)n);
                        else if (n == 0 || errno != EINTR)
                                closep(&outfd);
                }
                if (p[1].revents) {
                        struct runner_msg m;
                        ssize_t n = read(msgfd, &m, sizeof(m));
                        if (n == (ssize_t)sizeof(m) && m.kind == MSG_RESULT) {
                                *result = m;
                                *got_result = true;
                        } else if (n == 0 || (n < 0 && errno != EINTR)) {
                                closep(&msgfd);
                        }
                }
                if (p[2].revents) {
                        struct sbx_error ignored = {0};
                        _cleanup_close_ int pidfd = -1;
                        if (sync_wait_fd(reaperfd, "the runner", &pidfd, &ignored) == 0 &&
                            pidfd >= 0) {
                                s->reaper = pidfd_proc(pidfd);
                                (void)cmd_state_write(cmdfd, s);
                        }
                        closep(&reaperfd); /* one word only */
                }
        }
        closep(&outfd);
        closep(&msgfd);
        closep(&reaperfd);
}

_noreturn_ void detach_keeper_main(const char *st_id, const char *cmd, int cmdfd, int auditfd,
                                   int ready_fd, struct exec_request *rq, uint64_t cap)
{
        proctitle_hide("sbx-keeper");
        int keep_fds[] = {cmdfd, auditfd, ready_fd};
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                _exit(1);
        close(null);
        close_all_except(keep_fds, ARRAY_SIZE(keep_fds));
        (void)signal(SIGPIPE, SIG_IGN);
        (void)signal(SIGHUP, SIG_IGN);

        struct cmd_state s;
        if (cmd_state_read(cmdfd, &s) < 0)
                _exit(1);
        /* recorded before the runner exists: whoever removes the session kills us first */
        s.keeper = cmd_proc_self();
        if (cmd_state_write(cmdfd, &s) < 0)
                _exit(1);
        int outp[2], msgp[2], reap[2];
        if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(msgp, O_CLOEXEC) < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, reap) < 0)
                _exit(1);
        pid_t keeper = getpid();
        pid_t runner = fork();
        if (runner < 0)
                _exit(1);
        if (runner == 0) {
                close(outp[0]);
                close(msgp[0]);
                close(reap[0]);
                close(cmdfd);
                close(ready_fd);
                if (auditfd >= 0)
                        close(auditfd);
                runner_main(st_id, rq, outp[1], msgp[1], reap[1], keeper);
        }
        close(outp[1]);
        close(msgp[1]);
        close(reap[1]);
        s.runner = (struct cmd_proc){.pid = runner, .start = proc_start_time(runner)};
        if (cmd_state_write(cmdfd, &s) < 0) {
                /* the session was removed meanwhile */
                kill(runner, SIGKILL);
                (void)waitpid(runner, NULL, 0);
                _exit(1);
        }
        (void)write_all(ready_fd, "1", 1);
        close(ready_fd);

        struct segw w = {.dirfd = cmdfd, .fd = -1, .segsize = cap / 2 > 4096 ? cap / 2 : 4096};
        struct runner_msg result = {0};
        bool got_result = false;
        keep(cmdfd, outp[0], msgp[0], reap[0], &s, &w, &result, &got_result);
        closep(&w.fd);
        int status;
        (void)RETRY_EINTR(waitpid(runner, &status, 0));

        s.running = false;
        s.ended_ms = audit_now_ms();
        s.runner = (struct cmd_proc){0};
        if (got_result) {
                s.exit_code = result.exit_code;
                s.timed_out = result.timed_out;
                result.error[sizeof(result.error) - 1] = '\0';
                snprintf(s.error, sizeof(s.error), "%s", result.error);
        } else {
                s.exit_code = EXIT_SBX_FAILED;
                snprintf(s.error, sizeof(s.error),
                         "the command's exec client ended without a result");
        }
        (void)cmd_state_write(cmdfd, &s);
        audit_end_record(auditfd, st_id, cmd, &s, w.total);
        _exit(0);
}
