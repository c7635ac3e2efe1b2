/* SPDX-License-Identifier: MIT */
/*
 * Run one sbx command for a tool call: fork, then execve(/proc/self/exe) with an argv built
 * from the arguments (never a shell). The child gets exactly: fd 0 (an input or /dev/null),
 * fds 1 and 2 (pipes back to us: a client that does not drain our stderr must not block it)
 * and, for edit, fds 3 and 4; every other fd is closed, the signal mask and SIGPIPE are
 * restored. Inputs are memfds, so writing them can never block on a child that does not read.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "shared/syscalls.h"
#include "shared/util.h"
#include "shared/error.h"
#include "mcp.h"

extern char **environ;

/* MCP clients send SIGKILL 2s after SIGTERM: stop the command fast, then clean up. */
#define KILL_GRACE_MS 700

static int input_fd(const char *data, size_t len, bool dev_null)
{
        if (!data) {
                if (!dev_null)
                        return -1;
                int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        _cleanup_close_ int fd = memfd_create("sbx-mcp-input", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, data, len);
        if (r < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* In the child: only async-signal-safe calls from here to execve. */
_noreturn_ static void child(char **argv, int out, int err, const int in[3])
{
        /* targets 0, 1, 2, 3, 4; move the sources out of the way first (they may sit on a
         * target number), then dup2, which clears FD_CLOEXEC on the copy */
        const int target[5] = {0, 1, 2, 3, 4};
        int src[5] = {in[0], out, err, in[1], in[2]};
        for (size_t i = 0; i < 5; i++)
                if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 10)) < 0)
                        _exit(EXIT_SBX_FAILED);
        for (size_t i = 0; i < 5; i++) {
                if (src[i] >= 0 && dup2(src[i], target[i]) < 0)
                        _exit(EXIT_SBX_FAILED);
                if (src[i] < 0)
                        (void)close(target[i]);
        }
        (void)sys_close_range(5, ~0U, 0);
        sigset_t none;
        sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        (void)signal(SIGPIPE, SIG_DFL);
        execve("/proc/self/exe", argv, environ);
        _exit(EXIT_NOT_EXECUTABLE);
}

/* Read what one output of the child has, up to max bytes kept; the rest is read and dropped,
 * so that the child never blocks on a full pipe. Closes *fd at its end. 0 or -errno. */
static int drain(int *fd, struct buf *b, size_t max, bool *overflow)
{
        char chunk[65536];
        while (*fd >= 0) {
                ssize_t n = read(*fd, chunk, sizeof(chunk));
                if (n == 0)
                        closep(fd);
                else if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
                else if (b->len + (size_t)n > max)
                        *overflow = true;
                else if (buf_append(b, chunk, (size_t)n) < 0)
                        return -ENOMEM;
        }
        return 0;
}

void mcp_run_stop(struct mcp_run *r)
{
        if (r->pid > 0 && !r->deadline) {
                (void)kill(r->pid, SIGTERM);
                r->deadline = now_monotonic_ms() + KILL_GRACE_MS;
        }
}

int mcp_run_timeout(struct mcp_run *r)
{
        if (r->pid <= 0 || !r->deadline || r->deadline == UINT64_MAX)
                return -1;
        uint64_t now = now_monotonic_ms();
        if (now < r->deadline)
                return (int)(r->deadline - now);
        (void)kill(r->pid, SIGKILL);
        r->deadline = UINT64_MAX;
        return -1;
}

void mcp_run_pollfds(const struct mcp_run *r, struct pollfd p[3])
{
        p[0] = (struct pollfd){r->out_fd, POLLIN, 0};
        p[1] = (struct pollfd){r->err_fd, POLLIN, 0};
        p[2] = (struct pollfd){r->exited ? -1 : r->pidfd, POLLIN, 0};
}

/* It ended: what it wrote is in the pipes (a descendant may hold them open: not waited for). */
static int reap(struct mcp_run *r)
{
        int k = drain(&r->out_fd, &r->out, MCP_MAX_OUTPUT, &r->out_overflow);
        if (k == 0)
                k = drain(&r->err_fd, &r->err, MCP_MAX_STDERR, &r->err_overflow);
        if (k < 0)
                return k;
        if (RETRY_EINTR(waitpid(r->pid, &r->status, 0)) < 0)
                return -errno;
        r->pid = 0;
        closep(&r->out_fd);
        closep(&r->err_fd);
        closep(&r->pidfd);
        return 1;
}

int mcp_run_events(struct mcp_run *r, const struct pollfd p[3])
{
        int k = 0;
        if (p[0].fd >= 0 && p[0].revents)
                k = drain(&r->out_fd, &r->out, MCP_MAX_OUTPUT, &r->out_overflow);
        if (k == 0 && p[1].fd >= 0 && p[1].revents)
                k = drain(&r->err_fd, &r->err, MCP_MAX_STDERR, &r->err_overflow);
        if (k == 0 && p[2].fd >= 0 && p[2].revents)
                r->exited = true;
        if (k == 0 && r->exited)
                k = reap(r);
        if (k < 0)
                mcp_run_release(r);
        return k;
}

void mcp_run_release(struct mcp_run *r)
{
        if (r->pid > 0) {
                /* never leave it behind */
                (void)kill(r->pid, SIGKILL);
                (void)RETRY_EINTR(waitpid(r->pid, &r->status, 0));
                r->pid = 0;
        }
        closep(&r->out_fd);
        closep(&r->err_fd);
        closep(&r->pidfd);
}

/* A pipe whose read end is non-blocking; both ends CLOEXEC. */
static int output_pipe(int *rd, int *wr)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        *rd = p[0];
        *wr = p[1];
        return fd_set_nonblock(*rd, true);
}

int mcp_run_start(struct mcp_run *r)
{
        _cleanup_close_ int in0 = -1, in3 = -1, in4 = -1, ord = -1, owr = -1, erd = -1, ewr = -1;
        int k;
        r->out_fd = r->err_fd = r->pidfd = -1;
        if ((in0 = input_fd(r->in[0], r->in_len[0], true)) < 0)
                return in0;
        if (r->in[1] && (in3 = input_fd(r->in[1], r->in_len[1], false)) < 0)
                return in3;
        if (r->in[2] && (in4 = input_fd(r->in[2], r->in_len[2], false)) < 0)
                return in4;
        if ((k = output_pipe(&ord, &owr)) < 0 || (k = output_pipe(&erd, &ewr)) < 0)
                return k;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                child(r->argv, owr, ewr, (const int[3]){in0, in3, in4});
        r->pid = pid;
        r->pidfd = sys_pidfd_open(pid, 0);
        if (r->pidfd < 0) {
                k = -errno;
                mcp_run_release(r);
                return k;
        }
        r->out_fd = TAKE_FD(ord);
        r->err_fd = TAKE_FD(erd);
        return 0;
}

int mcp_spawn(struct mcp_server *s, struct mcp_run *r)
{
        int k = mcp_run_start(r);
        while (k == 0) {
                struct pollfd p[4];
                mcp_run_pollfds(r, p);
                p[3] = (struct pollfd){r->cleanup ? -1 : s->sigfd, POLLIN, 0};
                if (poll(p, 4, mcp_run_timeout(r)) < 0 && errno != EINTR) {
                        k = -errno;
                        break;
                }
                if (p[3].revents & POLLIN) {
                        s->stopping = r->interrupted = true;
                        mcp_run_stop(r);
                }
                k = mcp_run_events(r, p);
        }
        mcp_run_release(r);
        return k < 0 ? k : 0;
}
