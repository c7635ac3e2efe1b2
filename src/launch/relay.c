/* SPDX-License-Identifier: MIT */
/*
 * The exec client's I/O loop: stream (or capture) the command's output as it arrives, forward
 * stdin with -i, keep a -T terminal in raw mode, and enforce the timeout. One poll loop, no
 * threads, no sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../sandbox/reaper.h"
#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "join.h"

struct relay {
        struct exec_fds *f;
        const struct exec_request *rq;
        struct exec_result *res;
        int src_out, src_err; /* read ends (pty master for both in tty mode) */
        int dst_in;           /* where caller stdin goes: in[1] or the pty master */
        bool stdin_open;
        bool broken[3]; /* caller's fd 1/2 gave EPIPE: keep draining, stop writing */
        int out_errno;  /* caller's stdout failed otherwise (ENOSPC, EIO): output was lost */
        bool got_exit, ended;
        int wait_status;
        struct termios saved;
        bool raw;
        int sigfd;
        uint64_t streamed; /* bytes passed to the caller (streaming mode) */
};

/* Bytes queued in a pipe now (0 when the kernel does not say). */
static size_t queued(int fd)
{
        int n = 0;
        return fd >= 0 && ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

/*
 * `sbx exec ID yes | head -1`: the caller's reader is gone, so the command's must go too, or
 * the command writes into a pipe that B and we drain until it ends by itself or times out.
 * B closes its read end on our word (reaper.h) and we close ours: the command's next write
 * gets SIGPIPE, as in a shell pipeline. A pty has no such signal: there we only drop.
 */
static void reader_gone(struct relay *r, int caller_fd)
{
        if (r->rq->tty)
                return;
        char m = caller_fd == 1 ? CLIENT_OUT_GONE : CLIENT_ERR_GONE;
        (void)RETRY_EINTR(send(r->f->status[0], &m, 1, MSG_NOSIGNAL | MSG_DONTWAIT));
        int *own = caller_fd == 1 ? &r->f->out[0] : &r->f->err[0];
        /* What the command wrote and nobody will read still counts (the audit log's
         * output_bytes); what it writes in the moment before B has closed its copy is lost. */
        r->res->output_bytes += queued(*own);
        closep(own);
        if (caller_fd == 1)
                r->src_out = -1;
        else
                r->src_err = -1;
}

/* write_all to the caller's fd, which its owner may have made non-blocking: a full one is
 * waited for, as a blocking one would be, not taken for a failure. */
static int write_caller(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EAGAIN) {
                        struct pollfd q = {.fd = fd, .events = POLLOUT};
                        (void)poll(&q, 1, -1);
                        continue;
                }
                if (w < 0 && errno != EINTR)
                        return -1;
                if (w > 0) {
                        p += w;
                        n -= (size_t)w;
                }
        }
        return 0;
}

static void sink(struct relay *r, int caller_fd, const char *p, size_t n)
{
        r->res->output_bytes += n; /* what the command wrote, before any cap (audit log) */
        if (!r->rq->capture && r->rq->max_output) {
                /* streamed output honours --max-output too; the rest is read and dropped */
                uint64_t left =
                    r->streamed < r->rq->max_output ? r->rq->max_output - r->streamed : 0;
                if (left < n) {
                        n = (size_t)left;
                        r->res->truncated = true;
                }
                r->streamed += n;
        }
        if (r->rq->capture) {
                size_t room = n;
                if (r->rq->max_output) {
                        size_t left = r->rq->max_output > r->res->output.len
                                          ? r->rq->max_output - r->res->output.len
                                          : 0;
                        if (left < n) {
                                room = left;
                                r->res->truncated = true;
                        }
                }
                if (room && buf_append(&r->res->output, p, room) < 0)
                        r->res->truncated = true;
                return;
        }
        if (r->broken[caller_fd])
                return;
        if (write_caller(caller_fd, p, n) < 0) {
                r->broken[caller_fd] = true; /* the rest is dropped */
                /* A stdout that cannot take the output (a full disk) must not pass for one
                 * that did: the command stops as at a closed pipe and exec fails after.
                 * A failing stderr is only dropped, as a command's own diagnostics would be. */
                if (errno != EPIPE && caller_fd == 1)
                        r->out_errno = errno;
                if (errno == EPIPE || caller_fd == 1)
                        reader_gone(r, caller_fd);
        }
}

/* Read once from *fd; on EOF/EIO close it (set -1). Returns bytes read, 0 on EOF/EAGAIN. */
static ssize_t pump(struct relay *r, int *fd, int caller_fd)
{
        char b[65536];
        ssize_t n = read(*fd, b, sizeof(b));
        if (n > 0) {
                sink(r, caller_fd, b, (size_t)n);
                return n;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
                *fd = -1; /* not closed here: exec_fds_close owns it */
        return 0;
}

static void forward_stdin(struct relay *r)
{
        char b[16384];
        ssize_t n = read(STDIN_FILENO, b, sizeof(b));
        if (n > 0) {
                if (write_all(r->dst_in, b, (size_t)n) < 0)
                        r->stdin_open = false;
                return;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        r->stdin_open = false;
        if (r->rq->tty) {
                char eot = 4; /* ^D: end of input for the program on the pty */
                (void)write_all(r->dst_in, &eot, 1);
        } else {
                closep(&r->f->in[1]);
        }
}

static void on_report(struct relay *r, struct sbx_error *e)
{
        struct exec_report rep;
        ssize_t n = RETRY_EINTR(recv(r->f->status[0], &rep, sizeof(rep), 0));
        if (n != (ssize_t)sizeof(rep)) {
                /* B is gone without a word: the session was destroyed under us */
                sbx_fail(e, EXIT_SBX_FAILED, "internal", 0,
                         "the session ended while the command was running");
                r->ended = true;
                return;
        }
        if (rep.kind == REPORT_EXEC_ERROR) {
                sbx_error_unpack(&rep.err, &r->res->exec_error);
        } else if (rep.kind == REPORT_EXIT) {
                r->got_exit = true;
                r->wait_status = rep.status;
        }
}

/* Read from *fd until it has given budget bytes, its end, or nothing more right now. */
static void pump_at_most(struct relay *r, int *fd, int caller_fd, size_t budget)
{
        while (*fd >= 0 && budget > 0) {
                ssize_t n = pump(r, fd, caller_fd);
                if (n <= 0)
                        return;
                budget = (size_t)n < budget ? budget - (size_t)n : 0;
        }
}

/*
 * The tty layer hands what C wrote to the master asynchronously, so its last output may come a
 * little after its end: read until EIO (no writer left) or a quiet moment. A background process
 * that keeps the terminal busy is cut off after TTY_DRAIN_MAX bytes or TTY_DRAIN_MS: C could
 * not have left more than the tty's buffers hold unread (its writes block when they are full).
 */
#define TTY_QUIET_MS 50
#define TTY_DRAIN_MS 500
#define TTY_DRAIN_MAX (UINT64_C(1) << 20)

/*
 * After C ended: take what it left buffered, and not a byte more. `exec` returns when its
 * command's main process exits, whatever it left in the background: a background writer must
 * not keep the client reading (nor the caller's pipe open). What such a writer writes later
 * goes to B, which holds the read ends and discards it, so it never gets SIGPIPE.
 */
static void drain(struct relay *r)
{
        if (r->src_out >= 0)
                (void)fd_set_nonblock(r->src_out, true);
        if (r->src_err >= 0)
                (void)fd_set_nonblock(r->src_err, true);
        if (r->rq->tty) {
                uint64_t deadline = now_monotonic_ms() + TTY_DRAIN_MS;
                uint64_t taken = 0;
                while (r->src_out >= 0 && taken < TTY_DRAIN_MAX) {
                        uint64_t now = now_monotonic_ms();
                        int wait = now >= deadline                 ? 0
                                   : deadline - now < TTY_QUIET_MS ? (int)(deadline - now)
                                                                   : TTY_QUIET_MS;
                        struct pollfd p = {.fd = r->src_out, .events = POLLIN};
                        ssize_t n;
                        if (wait == 0 || poll(&p, 1, wait) <= 0 ||
                            (n = pump(r, &r->src_out, 1)) == 0)
                                break;
                        taken += (uint64_t)n;
                }
                return;
        }
        /* Measured first, so what a background process adds meanwhile is not waited for. */
        size_t out = queued(r->src_out), err = queued(r->src_err);
        pump_at_most(r, &r->src_out, 1, out);
        pump_at_most(r, &r->src_err, 2, err);
}

static void set_raw(struct relay *r)
{
        if (!r->rq->tty || !r->rq->interactive || !isatty(STDIN_FILENO) ||
            tcgetattr(STDIN_FILENO, &r->saved) < 0)
                return;
        struct termios raw = r->saved;
        cfmakeraw(&raw);
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
                r->raw = true;
}

static void restore_tty(struct relay *r)
{
        if (r->raw)
                (void)tcsetattr(STDIN_FILENO, TCSANOW, &r->saved);
        r->raw = false;
}

/*
 * Timeout: hang up on B, which kills everything the command started, and wait until B is gone.
 * In a session run by an unprivileged user B has the sandbox's host uid, so the command can
 * stop it (SIGSTOP): every second B gets a SIGCONT, and after KILL_TREE_GRACE_SEC a SIGKILL,
 * so `exec` returns 124 whatever the command did to B (what it started then lives on inside
 * the session, to its TTL, as when it kills B: docs/DESIGN.md, "exec").
 */
#define KILL_TREE_GRACE_SEC 10
static void kill_all(struct relay *r)
{
        closep(&r->f->status[0]);
        int pidfd = r->f->reaper_pidfd;
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        for (int waited = 0; pidfd >= 0 && RETRY_EINTR(poll(&p, 1, 1000)) == 0; waited++)
                (void)sys_pidfd_send_signal(pidfd,
                                            waited < KILL_TREE_GRACE_SEC ? SIGCONT : SIGKILL);
        r->res->timed_out = true;
}

static void on_signal(struct relay *r)
{
        struct signalfd_siginfo si;
        while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGWINCH) {
                        struct winsize ws;
                        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                                (void)ioctl(r->f->pty_master, TIOCSWINSZ, &ws);
                        continue;
                }
                /* SIGINT/SIGTERM/SIGHUP of the client: the command dies with it */
                restore_tty(r);
                closep(&r->f->status[0]);
                (void)signal((int)si.ssi_signo, SIG_DFL);
                sigset_t s;
                sigemptyset(&s);
                sigaddset(&s, (int)si.ssi_signo);
                sigprocmask(SIG_UNBLOCK, &s, NULL);
                (void)raise((int)si.ssi_signo);
        }
}

static int setup(struct relay *r)
{
        struct exec_fds *f = r->f;
        (void)signal(SIGPIPE, SIG_IGN);
        if (r->rq->tty) {
                r->src_out = f->pty_master;
                r->src_err = -1;
                r->dst_in = f->pty_master;
        } else {
                r->src_out = f->out[0];
                r->src_err = f->err[0];
                r->dst_in = f->in[1];
        }
        r->stdin_open = r->rq->interactive;
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        if (r->rq->tty)
                sigaddset(&set, SIGWINCH);
        sigprocmask(SIG_BLOCK, &set, NULL);
        r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (r->sigfd < 0)
                return negerrno();
        set_raw(r);
        return 0;
}

static int remaining_ms(uint64_t deadline)
{
        uint64_t now = now_monotonic_ms();
        if (now >= deadline)
                return 0;
        uint64_t left = deadline - now;
        return left > INT32_MAX ? INT32_MAX : (int)left;
}

int relay_run(struct exec_fds *f, const struct exec_request *rq, uint64_t timeout_ms,
              struct exec_result *res, struct sbx_error *e)
{
        struct relay r = {.f = f, .rq = rq, .res = res, .sigfd = -1};
        if (setup(&r) < 0)
                return sbx_internal(e, errno, "failed to set up the output relay");
        _cleanup_close_ int sigfd = r.sigfd;
        if (rq->on_reaper)
                rq->on_reaper(f->reaper_pidfd, rq->on_reaper_arg);
        uint64_t deadline = now_monotonic_ms() + timeout_ms;

        while (!r.got_exit && !r.ended) {
                struct pollfd p[5] = {
                    {.fd = f->status[0], .events = POLLIN},
                    {.fd = r.src_out, .events = POLLIN},
                    {.fd = r.src_err, .events = POLLIN},
                    {.fd = r.stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
                    {.fd = r.sigfd, .events = POLLIN},
                };
                int n = poll(p, ARRAY_SIZE(p), remaining_ms(deadline));
                if (n < 0 && errno != EINTR)
                        break;
                if (n == 0) {
                        kill_all(&r);
                        break;
                }
                if (p[1].revents)
                        (void)pump(&r, &r.src_out, 1);
                if (p[2].revents)
                        (void)pump(&r, &r.src_err, 2);
                if (p[3].revents)
                        forward_stdin(&r);
                if (p[4].revents)
                        on_signal(&r);
                if (p[0].revents)
                        on_report(&r, e);
        }
        drain(&r);
        restore_tty(&r);

        if (res->timed_out) {
                res->exit_code = EXIT_TIMEOUT;
                return 0;
        }
        if (r.ended && !r.got_exit)
                return -EPIPE;
        if (r.out_errno)
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", r.out_errno,
                                "failed to write the command's output");
        if (res->exec_error.exit_code)
                res->exit_code = res->exec_error.exit_code;
        else if (WIFEXITED(r.wait_status))
                res->exit_code = WEXITSTATUS(r.wait_status);
        else if (WIFSIGNALED(r.wait_status))
                res->exit_code = 128 + WTERMSIG(r.wait_status);
        else
                res->exit_code = EXIT_SBX_FAILED;
        return 0;
}
