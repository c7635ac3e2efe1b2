/* SPDX-License-Identifier: MIT */
/* The exec request's wire format (exec_wire.h). */
#include "exec_wire.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "shared/macros.h"

#define WIRE_MAGIC 0x73627831u /* "sbx1" */

struct wire_head {
        uint32_t magic, flags;
        uint64_t nofile, fsize;
        uint32_t argc, envc;
};

static size_t fds_for(uint32_t flags)
{
        if (flags & EXEC_WIRE_TTY)
                return 0;
        return 2 + ((flags & EXEC_WIRE_STDERR) ? 2 : 0) + ((flags & EXEC_WIRE_STDIN) ? 1 : 0);
}

static size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* Append s and its NUL at *at; false when it does not fit. */
static bool put(char *buf, size_t *at, const char *s)
{
        size_t n = strlen(s) + 1;
        if (n > EXEC_WIRE_MAX_BYTES - *at)
                return false;
        memcpy(buf + *at, s, n);
        *at += n;
        return true;
}

int exec_wire_send(int sock, const struct exec_wire *w)
{
        size_t argc = strv_len(w->argv), envc = strv_len(w->envp);
        _cleanup_free_ char *buf = malloc(EXEC_WIRE_MAX_BYTES);
        if (!buf)
                return -ENOMEM;
        struct wire_head h = {.magic = WIRE_MAGIC,
                              .flags = w->flags,
                              .nofile = w->nofile,
                              .fsize = w->fsize,
                              .argc = (uint32_t)argc,
                              .envc = (uint32_t)envc};
        size_t at = sizeof(h);
        bool fits = put(buf, &at, w->workdir);
        for (size_t i = 0; fits && i < argc; i++)
                fits = put(buf, &at, w->argv[i]);
        for (size_t i = 0; fits && i < envc; i++)
                fits = put(buf, &at, w->envp[i]);
        if (!fits)
                return -EMSGSIZE;
        memcpy(buf, &h, sizeof(h));

        int fds[WIRE_NFDS];
        size_t nfds = 0;
        for (size_t i = 0; i < WIRE_NFDS; i++)
                if (w->fds[i] >= 0)
                        fds[nfds++] = w->fds[i];
        if (nfds != fds_for(w->flags))
                return -EINVAL;
        char cbuf[CMSG_SPACE(sizeof(fds))] = {0};
        struct iovec iov = {.iov_base = buf, .iov_len = at};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (nfds) {
                mh.msg_control = cbuf;
                mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
                memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
        }
        return RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

/* The fds of SCM_RIGHTS messages into got[] (at most WIRE_NFDS + 1: one more means too many);
 * false for anything else in the control data, or when it was cut short. */
static bool collect_fds(struct msghdr *mh, int *got, size_t *ret_n)
{
        size_t n = 0;
        bool ok = !(mh->msg_flags & MSG_CTRUNC);
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                        ok = false;
                        continue;
                }
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n <= WIRE_NFDS)
                                got[n++] = fd; /* the others: exec's close_range drops them */
                }
        }
        *ret_n = n;
        return ok;
}

/* The received fds, in wire order, into w->fds; false unless exactly the expected ones came. */
static bool assign_fds(const int *got, size_t n, struct exec_wire *w)
{
        uint32_t f = w->flags;
        bool want[WIRE_NFDS] = {[WIRE_OUT_W] = !(f & EXEC_WIRE_TTY),
                                [WIRE_OUT_R] = !(f & EXEC_WIRE_TTY),
                                [WIRE_ERR_W] = !(f & EXEC_WIRE_TTY) && (f & EXEC_WIRE_STDERR),
                                [WIRE_ERR_R] = !(f & EXEC_WIRE_TTY) && (f & EXEC_WIRE_STDERR),
                                [WIRE_IN_R] = !(f & EXEC_WIRE_TTY) && (f & EXEC_WIRE_STDIN)};
        size_t k = 0;
        for (size_t i = 0; i < WIRE_NFDS; i++)
                w->fds[i] = want[i] && k < n ? got[k++] : -1;
        return k == n && n == fds_for(f);
}

/* argc + envc + 1 NUL-terminated strings, exactly filling buf[0, len). */
static bool split_strings(char *buf, size_t len, struct exec_wire *w, uint32_t argc, uint32_t envc)
{
        size_t want = (size_t)argc + envc + 1, at = 0;
        w->argv = calloc((size_t)argc + 1, sizeof(char *));
        w->envp = calloc((size_t)envc + 1, sizeof(char *));
        if (!w->argv || !w->envp)
                return false;
        for (size_t i = 0; i < want; i++) {
                char *end = at < len ? memchr(buf + at, '\0', len - at) : NULL;
                if (!end)
                        return false;
                if (i == 0)
                        w->workdir = buf + at;
                else if (i <= argc)
                        w->argv[i - 1] = buf + at;
                else
                        w->envp[i - 1 - argc] = buf + at;
                at = (size_t)(end - buf) + 1;
        }
        return at == len;
}

int exec_wire_parse(char *buf, size_t len, const int *fds, size_t nfds, struct exec_wire *w)
{
        *w = (struct exec_wire){.fds = {-1, -1, -1, -1, -1}};
        struct wire_head h;
        if (len < sizeof(h) || len > EXEC_WIRE_MAX_BYTES)
                return -EBADMSG;
        memcpy(&h, buf, sizeof(h));
        w->flags = h.flags;
        w->nofile = h.nofile;
        w->fsize = h.fsize;
        /* every string takes at least its NUL: counts above the bytes cannot be right, and are
         * refused before anything is allocated for them */
        bool ok = assign_fds(fds, nfds, w) && h.magic == WIRE_MAGIC && h.argc != 0 &&
                  h.argc <= len - sizeof(h) && h.envc <= len - sizeof(h) - h.argc &&
                  !(h.flags & ~(uint32_t)(EXEC_WIRE_TTY | EXEC_WIRE_STDIN | EXEC_WIRE_STDERR)) &&
                  split_strings(buf + sizeof(h), len - sizeof(h), w, h.argc, h.envc);
        if (ok)
                return 0;
        free(w->argv);
        free(w->envp);
        *w = (struct exec_wire){.fds = {-1, -1, -1, -1, -1}};
        return -EBADMSG;
}

int exec_wire_recv(int sock, struct exec_wire *w)
{
        *w = (struct exec_wire){.fds = {-1, -1, -1, -1, -1}};
        _cleanup_free_ char *buf = malloc(EXEC_WIRE_MAX_BYTES);
        if (!buf)
                return -ENOMEM;
        char cbuf[CMSG_SPACE(sizeof(int) * (WIRE_NFDS + 1))];
        struct iovec iov = {.iov_base = buf, .iov_len = EXEC_WIRE_MAX_BYTES};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t n = RETRY_EINTR(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC));
        if (n < 0)
                return negerrno();
        if (n == 0)
                return -ECONNRESET;
        int fds[WIRE_NFDS + 1];
        size_t nfds;
        if (!collect_fds(&mh, fds, &nfds) || (mh.msg_flags & MSG_TRUNC))
                return -EBADMSG;
        int r = exec_wire_parse(buf, (size_t)n, fds, nfds, w);
        if (r == 0)
                w->buf = TAKE_PTR(buf);
        return r;
}
