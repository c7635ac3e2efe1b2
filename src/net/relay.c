/* SPDX-License-Identifier: MIT */
/*
 * The bytes in flight between a proxy connection's client and its upstream: one bounded
 * buffer per direction (memory, then a pipe that splice(2) moves the bytes through), filled
 * from one socket and drained into the other as their events come, and the half-closes that
 * follow the data. What a connection does next (parse its head, close, wait for more events)
 * is the loop's (net/proxy.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "proxy-internal.h"

#define PIPE_SIZE (256 * 1024) /* relaying: per direction (64 KiB for 100 MB/s less) */

static size_t min_size(size_t a, size_t b)
{
        return a < b ? a : b;
}

void pbuf_free(struct pbuf *b)
{
        free(b->data);
        closep(&b->pipe[0]);
        closep(&b->pipe[1]);
        *b = (struct pbuf)PBUF_INIT;
}

/*
 * Memory mode to relay mode: what is buffered goes into a new pipe first. The pipe's pages
 * count against a per-user limit (fs.pipe-user-pages-soft) that every proxy of the same uid
 * shares; past it the kernel makes small pipes and refuses to grow them. A pipe that cannot
 * take what is buffered is dropped: the connection then relays through its memory buffer,
 * slower but the same.
 */
void pbuf_try_pipe(struct pbuf *b)
{
        int p[2];
        if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
                return;
        (void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
        size_t n = b->end - b->start;
        int cap = fcntl(p[1], F_GETPIPE_SZ);
        /* n <= capacity of an empty pipe: the write takes all of it */
        if (cap < 0 || (size_t)cap < n ||
            (n > 0 && write(p[1], b->data + b->start, n) != (ssize_t)n)) {
                close(p[0]);
                close(p[1]);
                return;
        }
        b->pipe[0] = p[0];
        b->pipe[1] = p[1];
        b->queued = n;
        free(b->data);
        b->data = NULL;
        b->start = b->end = 0;
}

/* Read at most max bytes from fd into b; 1 progress, 0 EOF, -EAGAIN nothing now, other
 * -errno an error. count (may be NULL) grows by the bytes read. */
static int pbuf_fill(int fd, struct pbuf *b, size_t max, uint64_t *count)
{
        ssize_t n;
        if (max == 0)
                return -EAGAIN;
        if (b->pipe[0] >= 0) {
                n = RETRY_EINTR(splice(fd, NULL, b->pipe[1], NULL, min_size(max, PIPE_SIZE),
                                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
                /* EAGAIN with bytes queued may be a full pipe: wait for a drain (a spurious
                 * wake-up costs nothing, a full pipe would spin the loop) */
                if (n < 0 && errno == EAGAIN && b->queued > 0)
                        b->full = true;
        } else {
                n = RETRY_EINTR(recv(fd, b->data + b->end, min_size(max, BUF_SIZE - b->end), 0));
        }
        if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (b->pipe[0] >= 0)
                b->queued += (size_t)n;
        else
                b->end += (size_t)n;
        if (count)
                *count += (uint64_t)n;
        return n > 0 ? 1 : 0;
}

/* Write from b to fd; 1 progress, -EAGAIN nothing now, other -errno an error. */
static int pbuf_drain(int fd, struct pbuf *b, uint64_t *count)
{
        ssize_t n;
        if (b->pipe[0] >= 0)
                n = RETRY_EINTR(splice(b->pipe[0], NULL, fd, NULL, b->queued,
                                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
        else
                n = RETRY_EINTR(send(fd, b->data + b->start, b->end - b->start, MSG_NOSIGNAL));
        if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (count)
                *count += (uint64_t)n;
        if (b->pipe[0] >= 0) {
                b->queued -= (size_t)n;
                b->full = false;
                return 1;
        }
        b->start += (size_t)n;
        if (b->start == b->end)
                b->start = b->end = 0;
        else if (b->start > BUF_SIZE / 2) { /* keep room to read into */
                memmove(b->data, b->data + b->start, b->end - b->start);
                b->end -= b->start;
                b->start = 0;
        }
        return 1;
}

/* Half-closes follow the data: a side's EOF reaches the other side once its buffer is
 * drained. The connection ends when both directions have. */
static bool relay_finish(struct conn *c)
{
        /* a forwarded request is one response with Connection: close: done when it is */
        if (!c->req.connect && c->u_eof && !pbuf_has_data(&c->down))
                return true;
        if (c->c_eof && !pbuf_has_data(&c->up) && !c->u_shut) {
                (void)shutdown(c->ufd, SHUT_WR);
                c->u_shut = true;
        }
        if (c->u_eof && !pbuf_has_data(&c->down) && !c->c_shut) {
                (void)shutdown(c->cfd, SHUT_WR);
                c->c_shut = true;
        }
        return c->u_shut && c->c_shut;
}

/* The client socket's events, in every state that reads or writes it: the request head is
 * read into up (CS_HEAD), an error reply written from down (CS_REPLY), and while relaying,
 * bytes go both ways. */
enum relay_step relay_client_event(struct conn *c, uint32_t ev)
{
        int r;
        if (c->cmask & EPOLLIN && ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                /* the head: no more than HTTP_HEAD_MAX, so that a body sent with it leaves
                 * room for the rewritten head; a forwarded body: its Content-Length */
                size_t max = c->state == CS_HEAD
                                 ? HTTP_HEAD_MAX - min_size(c->up.end, HTTP_HEAD_MAX)
                             : c->body_left >= 0 ? (size_t)c->body_left
                                                 : SIZE_MAX;
                uint64_t got = 0;
                r = pbuf_fill(c->cfd, &c->up, max, &got);
                if (c->state != CS_HEAD && c->body_left >= 0) {
                        c->body_left -= (int64_t)got;
                        c->c_done = c->body_left == 0;
                }
                if (r == 0 && c->state == CS_HEAD)
                        return RELAY_CLOSE; /* gone before asking anything */
                if (r == 0)
                        c->c_eof = true;
                else if (r < 0 && r != -EAGAIN)
                        return RELAY_CLOSE;
                c->last_ms = now_monotonic_ms();
                if (c->state == CS_HEAD)
                        return RELAY_HEAD;
                if (pbuf_has_data(&c->up) && (r = pbuf_drain(c->ufd, &c->up, &c->bytes_out)) < 0 &&
                    r != -EAGAIN)
                        return RELAY_CLOSE;
        }
        if (c->cmask & EPOLLOUT && ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
                r = pbuf_drain(c->cfd, &c->down, NULL);
                if (r < 0 && r != -EAGAIN)
                        return RELAY_CLOSE;
                c->last_ms = now_monotonic_ms();
                if (c->state == CS_REPLY && !pbuf_has_data(&c->down))
                        return RELAY_CLOSE;
        }
        if (!(c->cmask & (EPOLLIN | EPOLLOUT)) && ev & (EPOLLHUP | EPOLLERR))
                return RELAY_CLOSE;
        if (c->state == CS_RELAY && relay_finish(c))
                return RELAY_CLOSE;
        return RELAY_MORE;
}

/* The upstream socket's events while relaying. */
enum relay_step relay_upstream_event(struct conn *c, uint32_t ev)
{
        int r;
        if (c->umask & EPOLLIN && ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                r = pbuf_fill(c->ufd, &c->down, SIZE_MAX, &c->bytes_in);
                if (r == 0)
                        c->u_eof = true;
                else if (r < 0 && r != -EAGAIN)
                        return RELAY_CLOSE;
                c->last_ms = now_monotonic_ms();
                /* pass it on now: usually the client's socket has room, and waiting for
                 * EPOLLOUT would cost a round of the loop and two epoll_ctl calls */
                if (pbuf_has_data(&c->down) && (r = pbuf_drain(c->cfd, &c->down, NULL)) < 0 &&
                    r != -EAGAIN)
                        return RELAY_CLOSE;
        }
        if (c->umask & EPOLLOUT && ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
                r = pbuf_drain(c->ufd, &c->up, &c->bytes_out);
                if (r < 0 && r != -EAGAIN)
                        return RELAY_CLOSE;
                c->last_ms = now_monotonic_ms();
        }
        if (!(c->umask & (EPOLLIN | EPOLLOUT)) && ev & (EPOLLHUP | EPOLLERR))
                return RELAY_CLOSE;
        if (relay_finish(c))
                return RELAY_CLOSE;
        return RELAY_MORE;
}
