/* SPDX-License-Identifier: MIT */
/*
 * Run one sbx command for a tool call: fork, then execve(/proc/self/exe) with an argv built
 * from the arguments (never a shell). The child gets exactly: fd 0 (an input or /dev/null),
 * fd 1 (a pipe back to us), fd 2 (our stderr, for its warnings) and, for edit, fds 3 and 4;
 * every other fd is closed, the signal mask and SIGPIPE are restored. Inputs are memfds, so
 * writing them can never block on a child that does not read.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "../shared/syscalls.h"
#include "../shared/util.h"
#include "../shared/error.h"
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
_noreturn_ static void child(char **argv, int out, const int in[3])
{
        /* targets 0, 1, 3, 4; move the sources out of the way first (they may sit on a
         * target number), then dup2, which clears FD_CLOEXEC on the copy */
        const int target[4] = {0, 1, 3, 4};
        int src[4] = {in[0], out, in[1], in[2]};
        for (size_t i = 0; i < 4; i++)
                if (src[i] >= 0 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 10)) < 0)
                        _exit(EXIT_SBX_FAILED);
        for (size_t i = 0; i < 4; i++) {
                if (src[i] >= 0 && dup2(src[i], target[i]) < 0)
                        _exit(EXIT_SBX_FAILED);
                if (src[i] < 0 && target[i] > 2)
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

/* Read what is there; at EOF return 0, else 1 (more may come) or -errno. */
static int drain(int fd, struct mcp_run *r)
{
        char chunk[65536];
        for (;;) {
                ssize_t n = read(fd, chunk, sizeof(chunk));
                if (n == 0)
                        return 0;
                if (n < 0)
                        return errno == EAGAIN ? 1 : errno == EINTR ? 1 : -errno;
                if (r->out.len + (size_t)n > MCP_MAX_OUTPUT)
                        r->out_overflow = true; /* keep reading: the child must not block */
                else if (buf_append(&r->out, chunk, (size_t)n) < 0)
                        return -ENOMEM;
        }
}

/* A signal: stop the command, the server is going away. */
static void stop(struct mcp_server *s, struct mcp_run *r, pid_t pid, uint64_t *deadline)
{
        s->stopping = true;
        r->interrupted = true;
        if (!*deadline) {
                (void)kill(pid, SIGTERM);
                *deadline = now_monotonic_ms() + KILL_GRACE_MS;
        }
}

static int wait_child(struct mcp_server *s, struct mcp_run *r, pid_t pid, int out)
{
        _cleanup_close_ int pidfd = sys_pidfd_open(pid, 0);
        bool eof = false, exited = false;
        uint64_t deadline = 0;
        while (!eof && !exited) {
                struct pollfd p[3] = {{out, POLLIN, 0}, {pidfd, POLLIN, 0}, {s->sigfd, POLLIN, 0}};
                int timeout = -1;
                if (deadline) {
                        uint64_t now = now_monotonic_ms();
                        if (now >= deadline) {
                                (void)kill(pid, SIGKILL);
                                deadline = UINT64_MAX;
                        } else if (deadline != UINT64_MAX)
                                timeout = (int)(deadline - now);
                }
                /* The client's EOF is not watched here: a client may close its end right
                 * after its last request and still read the answer; MCP clients that want
                 * us gone send SIGTERM next. The final clean-up is not interrupted. */
                nfds_t n = r->cleanup ? 2 : 3;
                if (poll(p, n, timeout) < 0 && errno != EINTR)
                        return -errno;
                if (p[0].revents) {
                        int k = drain(out, r);
                        if (k < 0)
                                return k;
                        eof = k == 0;
                }
                if (p[1].revents)
                        exited = true;
                if (n > 2 && (p[2].revents & POLLIN)) {
                        struct signalfd_siginfo si;
                        (void)!read(s->sigfd, &si, sizeof(si));
                        stop(s, r, pid, &deadline);
                }
        }
        /* exited: what it wrote is in the pipe (a descendant may hold the pipe open) */
        if (!eof) {
                int k = drain(out, r);
                if (k < 0)
                        return k;
        }
        if (RETRY_EINTR(waitpid(pid, &r->status, 0)) < 0)
                return -errno;
        return 0;
}

int mcp_spawn(struct mcp_server *s, struct mcp_run *r)
{
        _cleanup_close_ int in0 = -1, in3 = -1, in4 = -1, rd = -1, wr = -1;
        if ((in0 = input_fd(r->in[0], r->in_len[0], true)) < 0)
                return in0;
        if (r->in[1] && (in3 = input_fd(r->in[1], r->in_len[1], false)) < 0)
                return in3;
        if (r->in[2] && (in4 = input_fd(r->in[2], r->in_len[2], false)) < 0)
                return in4;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        rd = p[0];
        wr = p[1];
        int k = fd_set_nonblock(rd, true);
        if (k < 0)
                return k;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                child(r->argv, wr, (const int[3]){in0, in3, in4});
        closep(&wr);
        k = wait_child(s, r, pid, rd);
        if (k < 0) {
                /* never leave it behind */
                (void)kill(pid, SIGKILL);
                (void)RETRY_EINTR(waitpid(pid, &r->status, 0));
        }
        return k;
}
