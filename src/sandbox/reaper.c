/* SPDX-License-Identifier: MIT */
/* B: how it starts C and watches it (reaper.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "reaper.h"

/* What B keeps once C runs; -1 when unused. */
struct reaper_fds {
        int status;        /* B's end of the status socket */
        int out, err, pty; /* read ends, drained after the client left */
        int sigfd;         /* SIGCHLD */
        int errfd;         /* C's failed step, if any (read end) */
};

static void report(int fd, const struct exec_report *r)
{
        (void)RETRY_EINTR(send(fd, r, sizeof(*r), MSG_NOSIGNAL));
}

/*
 * B after C ended and the client hung up: keep reading (and dropping) what background
 * processes still write, so they never get SIGPIPE, and reap them; leave when none is left.
 */
_noreturn_ static void reaper_drain(const struct reaper_fds *k)
{
        struct pollfd p[4] = {{.fd = k->sigfd, .events = POLLIN},
                              {.fd = k->out, .events = POLLIN},
                              {.fd = k->err, .events = POLLIN},
                              {.fd = k->pty, .events = POLLIN}};
        char sink[16384];
        for (;;) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
                        _exit(0);
                if (poll(p, ARRAY_SIZE(p), -1) < 0 && errno != EINTR)
                        _exit(1);
                if (p[0].revents) {
                        struct signalfd_siginfo si;
                        if (read(k->sigfd, &si, sizeof(si)) < 0 && errno != EAGAIN)
                                _exit(1);
                }
                for (size_t i = 1; i < ARRAY_SIZE(p); i++) {
                        if (!p[i].revents)
                                continue;
                        if (read(p[i].fd, sink, sizeof(sink)) <= 0)
                                p[i].fd = -1; /* EOF, or EIO once the pty has no writer */
                }
        }
}

/* Every descendant of this process, from /proc/<pid>/task/<tid>/children. */
static size_t collect_descendants(pid_t root, pid_t *out, size_t cap)
{
        size_t n = 0, next = 0;
        pid_t cur = root;
        for (;;) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/task", (int)cur);
                _cleanup_closedir_ DIR *d = opendir(path);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        char cpath[320];
                        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)cur,
                                 de->d_name);
                        _cleanup_fclose_ FILE *f = fopen(cpath, "re");
                        int pid;
                        while (f && n < cap && fscanf(f, "%d", &pid) == 1)
                                out[n++] = pid;
                }
                if (next >= n)
                        return n;
                cur = out[next++];
        }
}

/*
 * Kill everything the command started. B is a child subreaper, so every orphan of the
 * command's tree is re-parented to B and stays visible here; each round kills all it sees, and
 * a process forked meanwhile can only come from one killed in this round.
 */
static void reaper_kill_tree(void)
{
        static pid_t pids[65536];
        for (int round = 0; round < 10000; round++) {
                size_t n = collect_descendants(getpid(), pids, ARRAY_SIZE(pids));
                if (n == 0)
                        return;
                for (size_t i = 0; i < n; i++)
                        (void)kill(pids[i], SIGKILL);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
        }
}

/* B's report of C's start: 0 when execve succeeded, else C's error is forwarded. */
static bool reaper_forward_exec_error(int errfd, int status_fd)
{
        /* passed on as it came: the client checks it (sbx_error_unpack) */
        struct exec_report r = {.kind = REPORT_EXEC_ERROR};
        ssize_t n = RETRY_EINTR(read(errfd, &r.err, sizeof(r.err)));
        if (n != (ssize_t)sizeof(r.err))
                return false;
        report(status_fd, &r);
        return true;
}

/* B could not start C: say why instead of vanishing. */
_noreturn_ static void reaper_fail(int status_fd, const struct sbx_error *ce)
{
        struct exec_report rep = {.kind = REPORT_EXEC_ERROR};
        sbx_error_pack(ce, &rep.err);
        rep.err.exit_code = EXIT_SBX_FAILED;
        report(status_fd, &rep);
        struct exec_report done = {.kind = REPORT_EXIT, .status = EXIT_SBX_FAILED << 8};
        report(status_fd, &done);
        _exit(EXIT_SBX_FAILED);
}

/* B's first word on the status socket, before any report: its own pidfd, which the client's
 * timeout waits on. 0 or -errno, for a B that must clean up when it fails. */
static int reaper_hello_sent(int status_fd)
{
        _cleanup_close_ int self = sys_pidfd_open(getpid(), 0);
        return self < 0 ? -errno : sync_send_ok_fd(status_fd, self);
}

/* The same, or no fd at all (retry), which asks the client to start over another way. */
static void reaper_hello(int status_fd, bool retry)
{
        if (retry ? sync_send_ok(status_fd) < 0 : reaper_hello_sent(status_fd) < 0)
                _exit(EXIT_SBX_FAILED);
}

/* What B blocks and C unblocks: one definition for both. The init blocks the same. */
static void blocked_set(sigset_t *set)
{
        sigemptyset(set);
        sigaddset(set, SIGCHLD);
}

int reaper_become(void)
{
        proctitle_hide("sbx-reaper");
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
        sigset_t set;
        blocked_set(&set);
        sigprocmask(SIG_BLOCK, &set, NULL);
        return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The client's word that nobody reads a stream of the command any more: drop our reader.
 * false at the end of the client's stream (a half-close has no POLLHUP): it counts as gone. */
static bool on_client_word(struct reaper_fds *k)
{
        char m = 0;
        ssize_t n = RETRY_EINTR(recv(k->status, &m, 1, MSG_DONTWAIT));
        if (n == 0)
                return false;
        int *fd = m == CLIENT_OUT_GONE ? &k->out : m == CLIENT_ERR_GONE ? &k->err : NULL;
        if (n == 1 && fd)
                closep(fd);
        return true;
}

/* Report C's start (or its failed step) and end, then leave with the command's tree. */
_noreturn_ static void reaper_watch(struct reaper_fds *k, pid_t c)
{
        bool c_alive = true;
        /* C's failed step, if any, comes before its end (C writes it, then exits); polled with
         * the rest, so a C stopped before its execve never keeps B from the client's hang-up. */
        struct pollfd p[3] = {{.fd = k->sigfd, .events = POLLIN},
                              {.fd = k->status, .events = POLLIN},
                              {.fd = k->errfd, .events = POLLIN}};
        for (;;) {
                if (poll(p, 3, -1) < 0 && errno != EINTR)
                        _exit(1);
                if (p[2].fd >= 0 && p[2].revents) {
                        /* data, or every writer gone (C's execve or exit): cannot block. C
                         * writes before it exits, so this comes before C's end below. */
                        (void)reaper_forward_exec_error(p[2].fd, k->status);
                        close(p[2].fd);
                        p[2].fd = -1;
                }
                if (p[0].revents) {
                        signalfd_drain(k->sigfd);
                        int st;
                        pid_t w;
                        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                                if (w == c) {
                                        c_alive = false;
                                        struct exec_report r = {.kind = REPORT_EXIT, .status = st};
                                        report(k->status, &r);
                                }
                }
                bool gone = p[1].revents & (POLLHUP | POLLERR);
                if (!gone && (p[1].revents & POLLIN))
                        gone = !on_client_word(k);
                if (gone) {
                        /* The client is gone. Before C ended, that means "kill it all". */
                        if (c_alive) {
                                reaper_kill_tree();
                                _exit(1);
                        }
                        close(k->status);
                        reaper_drain(k);
                }
        }
}

/* The client is gone before C could be watched: C must not run unsupervised. B's tree is C's;
 * the init's is the whole session, which ends with `run`'s client anyway. */
static void kill_started(const struct reaper_plan *p, pid_t c)
{
        if (p->is_init)
                (void)kill(c, SIGKILL);
        else
                reaper_kill_tree();
}

/* A step of B's own failed once C runs: C goes too, and the client learns why. */
_noreturn_ static void fail_started(const struct reaper_plan *p, pid_t c, const struct sbx_error *e)
{
        kill_started(p, c);
        reaper_fail(p->status, e);
}

void reaper_start(const struct reaper_plan *p)
{
        struct sbx_error e = {0};
        int errp[2];
        if (p->sigfd < 0 || pipe2(errp, O_CLOEXEC) < 0) {
                sbx_internal(&e, errno, "failed to set up the command's reaper");
                (void)sync_send_error(p->status, &e);
                _exit(EXIT_SBX_FAILED);
        }
        pid_t c = p->fork_command(p->ctx);
        if (c == 0) {
                sigset_t set;
                blocked_set(&set);
                sigprocmask(SIG_UNBLOCK, &set, NULL);
                close(errp[0]);
                p->run_command(p->ctx, errp[1]);
        }
        if (c < 0 && errno == EAGAIN && p->retry_on_eagain) {
                /* The session's pids are all taken: the client starts the command from outside
                 * (launch/join.c), where a move into the cgroup is not refused by pids.max. */
                reaper_hello(p->status, true);
                close(errp[0]);
                close(errp[1]);
                return;
        }
        if (c < 0) {
                sbx_fail(&e, EXIT_SBX_FAILED, "internal", errno, "failed to start the command%s",
                         errno == EAGAIN ? " (the session's --pids limit is reached?)" : "");
                reaper_hello(p->status, false);
                reaper_fail(p->status, &e);
        }
        /* C runs meanwhile. A client killed while B was starting has left no reader. */
        if (reaper_hello_sent(p->status) < 0) {
                kill_started(p, c);
                _exit(EXIT_SBX_FAILED);
        }
        if (p->enter && p->enter(p->ctx, &e) < 0)
                fail_started(p, c, &e);
        close(errp[1]);
        /* B keeps only the read ends (for draining), the status socket and errp's read end. */
        struct reaper_fds k = {.status = p->status,
                               .out = p->out,
                               .err = p->err,
                               .pty = p->pty,
                               .sigfd = p->sigfd,
                               .errfd = errp[0]};
        int keep[] = {k.status, k.out, k.err, k.pty, k.sigfd, k.errfd};
        close_all_except(keep, ARRAY_SIZE(keep));
        if (p->lock && p->lock(p->ctx, &e) < 0)
                fail_started(p, c, &e);
        reaper_watch(&k, c);
}
