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

/* One output of the child, kept up to max bytes; the rest is read and dropped, so that the
 * child never blocks on a full pipe. */
struct sink {
        int fd;
        struct buf *b;
        size_t max;
        bool *overflow;
        bool eof;
};

/* Read what is there; sets eof at the end. 0 or -errno. */
static int drain(struct sink *k)
{
        char chunk[65536];
        while (!k->eof) {
                ssize_t n = read(k->fd, chunk, sizeof(chunk));
                if (n == 0)
                        k->eof = true;
                else if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
                else if (k->b->len + (size_t)n > k->max)
                        *k->overflow = true;
                else if (buf_append(k->b, chunk, (size_t)n) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Stop the command: SIGTERM now, SIGKILL after the grace time. */
static void stop(pid_t pid, uint64_t *deadline)
{
        if (!*deadline) {
                (void)kill(pid, SIGTERM);
                *deadline = now_monotonic_ms() + KILL_GRACE_MS;
        }
}

/* Did the client cancel the request being served, in the lines of s->in not looked at yet?
 * The lines stay in s->in, to be handled after the call; *scanned: where to look next. */
static bool cancelled(struct mcp_server *s, size_t *scanned)
{
        struct buf *b = &s->in.pending;
        bool yes = false;
        while (*scanned < b->len) {
                const char *p = b->data + *scanned;
                const char *nl = memchr(p, '\n', b->len - *scanned);
                if (!nl)
                        break;
                if (s->current_id && mcp_is_cancel_of(p, (size_t)(nl - p), s->current_id))
                        yes = true;
                *scanned += (size_t)(nl - p) + 1;
        }
        return yes;
}

/* The poll timeout until the deadline (-1: none); past it, SIGKILL once. */
static int until_deadline(pid_t pid, uint64_t *deadline)
{
        if (!*deadline || *deadline == UINT64_MAX)
                return -1;
        uint64_t now = now_monotonic_ms();
        if (now < *deadline)
                return (int)(*deadline - now);
        (void)kill(pid, SIGKILL);
        *deadline = UINT64_MAX;
        return -1;
}

static int wait_child(struct mcp_server *s, struct mcp_run *r, pid_t pid, struct sink k[2])
{
        _cleanup_close_ int pidfd = sys_pidfd_open(pid, 0);
        bool exited = false;
        uint64_t deadline = 0;
        size_t scanned = s->in.handled;
        int rc = 0;
        if (!r->cleanup && cancelled(s, &scanned)) { /* sent right behind the request */
                r->cancelled = true;
                stop(pid, &deadline);
        }
        while (rc == 0 && !(k[0].eof && k[1].eof) && !exited) {
                /* The client's input is read for cancellations, not beyond one message's
                 * worth; its EOF does not stop the command: a client may close its end right
                 * after its last request and still read the answer (MCP clients that want us
                 * gone send SIGTERM next). The final clean-up is not interrupted. */
                bool client = !r->cleanup && !s->in.eof && s->in.pending.len <= MCP_MAX_LINE;
                struct pollfd p[5] = {{k[0].eof ? -1 : k[0].fd, POLLIN, 0},
                                      {k[1].eof ? -1 : k[1].fd, POLLIN, 0},
                                      {pidfd, POLLIN, 0},
                                      {r->cleanup ? -1 : s->sigfd, POLLIN, 0},
                                      {client ? s->in_fd : -1, POLLIN, 0}};
                int timeout = until_deadline(pid, &deadline);
                if (poll(p, 5, timeout) < 0 && errno != EINTR)
                        return -errno;
                for (int i = 0; i < 2 && rc == 0; i++)
                        if (p[i].revents)
                                rc = drain(&k[i]);
                if (p[2].revents)
                        exited = true;
                if (p[3].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        (void)!read(s->sigfd, &si, sizeof(si));
                        s->stopping = r->interrupted = true;
                        stop(pid, &deadline);
                }
                if (rc == 0 && p[4].revents && (rc = mcp_read_input(s)) == 0 &&
                    cancelled(s, &scanned)) {
                        r->cancelled = true;
                        stop(pid, &deadline);
                }
        }
        /* exited: what it wrote is in the pipes (a descendant may hold them open) */
        for (int i = 0; i < 2 && rc == 0; i++)
                rc = drain(&k[i]);
        if (rc < 0)
                return rc;
        if (RETRY_EINTR(waitpid(pid, &r->status, 0)) < 0)
                return -errno;
        return 0;
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

int mcp_spawn(struct mcp_server *s, struct mcp_run *r)
{
        _cleanup_close_ int in0 = -1, in3 = -1, in4 = -1, ord = -1, owr = -1, erd = -1, ewr = -1;
        int k;
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
        closep(&owr);
        closep(&ewr);
        bool err_overflow = false;
        struct sink sinks[2] = {{ord, &r->out, MCP_MAX_OUTPUT, &r->out_overflow, false},
                                {erd, &r->err, MCP_MAX_STDERR, &err_overflow, false}};
        k = wait_child(s, r, pid, sinks);
        if (k < 0) {
                /* never leave it behind */
                (void)kill(pid, SIGKILL);
                (void)RETRY_EINTR(waitpid(pid, &r->status, 0));
        }
        return k;
}
