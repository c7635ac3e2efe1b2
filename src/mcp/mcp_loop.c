/* SPDX-License-Identifier: MIT */
/*
 * The server loop of `sbx mcp` (see mcp.h). Messages are read from stdin one line at a time,
 * each at most MCP_MAX_LINE bytes: a longer one is skipped up to its newline and answered
 * with -32600, so no input can make the server grow without bound or hang. One poll watches
 * the client, the signals and every running call's pipes; a line is handled as soon as it
 * is complete, so a cancellation reaches a running call at once. The loop ends at the
 * client's EOF once every call is answered, or at SIGTERM, SIGINT or SIGHUP (taken through a
 * signalfd): running commands are then stopped. The sessions made here outlive the
 * connection (their TTL ends them), unless --destroy-on-close.
 */
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>

#include "shared/util.h"
#include "mcp.h"

#define TOO_LONG "invalid request: message longer than 4 MiB"

/* Handle every complete line in the reader; returns -errno when the client is gone. */
static int handle_lines(struct mcp_server *s)
{
        struct mcp_reader *lr = &s->in;
        size_t start = 0;
        int r = 0;
        while (r >= 0 && !s->stopping && start < lr->pending.len) {
                char *p = lr->pending.data + start;
                size_t avail = lr->pending.len - start;
                char *nl = memchr(p, '\n', avail);
                if (!nl && !lr->eof)
                        break;
                size_t len = nl ? (size_t)(nl - p) : avail;
                start += len + (nl ? 1 : 0);
                while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '))
                        len--;
                if (len > MCP_MAX_LINE)
                        r = mcp_send_error(s, NULL, -32600, TOO_LONG);
                else if (len > 0)
                        r = mcp_handle_line(s, p, len);
                /* a call just queued starts now, not after the answers to the lines behind
                 * it (writing them may wait on a client that does not read) */
                if (r >= 0)
                        r = mcp_calls_step(s);
        }
        if (start > 0) {
                memmove(lr->pending.data, lr->pending.data + start, lr->pending.len - start);
                lr->pending.len -= start;
        }
        if (r >= 0 && lr->pending.len > MCP_MAX_LINE) {
                /* no newline within the limit: refuse the message, drop the rest of it */
                lr->pending.len = 0;
                lr->skipping = true;
                r = mcp_send_error(s, NULL, -32600, TOO_LONG);
        }
        if (lr->pending.data)
                lr->pending.data[lr->pending.len] = '\0';
        return r;
}

static int read_input(struct mcp_server *s)
{
        struct mcp_reader *lr = &s->in;
        char chunk[65536];
        ssize_t n = read(s->in_fd, chunk, sizeof(chunk));
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        if (n == 0) {
                lr->eof = true;
                return 0;
        }
        if (lr->skipping) {
                char *nl = memchr(chunk, '\n', (size_t)n);
                if (!nl)
                        return 0;
                lr->skipping = false;
                return buf_append(&lr->pending, nl + 1, (size_t)(chunk + n - nl - 1));
        }
        return buf_append(&lr->pending, chunk, (size_t)n);
}

/* One poll over the client, the signals and the running calls; handle what it reports. */
static int poll_once(struct mcp_server *s)
{
        struct pollfd p[2 + 3 * MCP_MAX_RUNNING];
        /* the client's input is read while there is room for the calls it may queue; its
         * EOF does not stop the calls: a client may close its end right after its last request
         * and still read the answers (MCP clients that want us gone send SIGTERM next) */
        bool client = !s->in.eof && !s->stopping && s->n_calls < MCP_MAX_CALLS;
        p[0] = (struct pollfd){client ? s->in_fd : -1, POLLIN, 0};
        p[1] = (struct pollfd){s->sigfd, POLLIN, 0};
        size_t n = 2 + mcp_calls_pollfds(s, p + 2);
        if (poll(p, n, mcp_calls_timeout(s)) < 0)
                return errno == EINTR ? 0 : -errno;
        if (p[1].revents & POLLIN) {
                struct signalfd_siginfo si;
                (void)!read(s->sigfd, &si, sizeof(si));
                s->stopping = true;
                mcp_calls_stop_all(s);
        }
        mcp_calls_events(s, p + 2);
        int r = 0;
        if (p[0].revents && !s->stopping && (r = read_input(s)) >= 0)
                r = handle_lines(s);
        return r;
}

static int serve(struct mcp_server *s)
{
        int r = 0;
        while (r >= 0 && (s->n_calls > 0 || (!s->stopping && !s->in.eof))) {
                r = poll_once(s);
                if (r >= 0)
                        r = mcp_calls_step(s);
        }
        if (r < 0) {
                /* the client is gone: what still runs is stopped and reaped, never left
                 * behind, and answers nobody */
                s->stopping = true;
                mcp_calls_stop_all(s);
                while (s->n_calls > 0 && poll_once(s) >= 0)
                        (void)mcp_calls_step(s);
        }
        mcp_calls_release(s);
        buf_freep(&s->in.pending);
        return r;
}

int mcp_serve(struct mcp_server *s)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        _cleanup_close_ int sigfd = -1;
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                return -errno;
        /* a client that closes its end makes writes fail with EPIPE, not kill us */
        (void)signal(SIGPIPE, SIG_IGN);
        s->sigfd = sigfd;
        int r = serve(s);
        if (s->destroy_on_close)
                mcp_destroy_sessions(s);
        mcp_forget_sessions(s);
        return r == -EPIPE || s->stopping ? 0 : r;
}
