/* SPDX-License-Identifier: MIT */
#include "sync.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "macros.h"

struct sync_msg {
        int32_t ok;
        struct sbx_wire_error err;
};

int sync_send_ok(int fd)
{
        struct sync_msg m = {.ok = 1};
        return RETRY_EINTR(send(fd, &m, sizeof(m), MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

int sync_send_ok_fd(int fd, int pass_fd)
{
        if (pass_fd < 0)
                return sync_send_ok(fd);
        struct sync_msg m = {.ok = 1};
        char cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        return RETRY_EINTR(sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

int sync_send_error(int fd, const struct sbx_error *e)
{
        struct sync_msg m = {.ok = 0};
        sbx_error_pack(e, &m.err);
        if (!m.err.exit_code)
                m.err.exit_code = EXIT_SBX_FAILED;
        return RETRY_EINTR(send(fd, &m, sizeof(m), MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

int sync_wait(int fd, const char *what, struct sbx_error *e)
{
        return sync_wait_fd(fd, what, NULL, e);
}

int sync_wait_fd(int fd, const char *what, int *ret_fd, struct sbx_error *e)
{
        struct sync_msg m;
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        if (ret_fd)
                *ret_fd = -1;
        ssize_t n = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
        /* A peer that exits with our messages unread (an init that failed before it took the
         * cgroup fds) resets the channel, and the kernel reports that reset before the message
         * the peer sent last, its error. The reset is reported once: read on for the message.
         * With none queued it stays a reset (handoff.c: the request went unread, nothing was
         * started), not the end of the channel. */
        if (n < 0 && errno == ECONNRESET) {
                n = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
                if (n == 0) {
                        n = -1;
                        errno = ECONNRESET;
                }
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n > 0 && c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        int got;
                        memcpy(&got, CMSG_DATA(c), sizeof(int));
                        if (ret_fd)
                                *ret_fd = got;
                        else
                                close(got);
                }
        if (n < 0)
                return sbx_internal(e, errno, "failed to hear from %s", what);
        /* An fd the kernel could not install here (RLIMIT_NOFILE, an LSM) is dropped with the
         * message's data delivered: never taken as "no fd was sent" (a v1 cgroup's tasks file
         * missing would start commands outside it). */
        if (mh.msg_flags & MSG_CTRUNC)
                return sbx_internal(e, EMFILE, "failed to receive a file from %s", what);
        if (n != (ssize_t)sizeof(m))
                return sbx_internal(e, 0, "%s ended before reporting", what);
        if (m.ok)
                return 0;
        struct sbx_error peer;
        sbx_error_unpack(&m.err, &peer);
        return sbx_fail(e, peer.exit_code, peer.code, 0, "%s", peer.message);
}
