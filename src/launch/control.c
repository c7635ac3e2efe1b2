/* SPDX-License-Identifier: MIT */
/* The client half of the supervisor's control socket. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "../session/id.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "launch.h"

int control_session_dir(const char *id_or_name, struct sbx_error *e)
{
        _cleanup_close_ int rtfd = -1;
        int r = runtime_check_ref(id_or_name, e);
        if (r == 0)
                r = runtime_open(&rtfd, e);
        if (r < 0)
                return r;
        char id[SESSION_ID_LEN + 1];
        return runtime_resolve_open(rtfd, id_or_name, id, e);
}

int control_connect_live(int sessfd, const char *id_or_name, struct sbx_error *e)
{
        int ctl = control_connect(sessfd, e);
        if (ctl >= 0)
                return ctl;
        e->exit_code = 0; /* a supervisor that is gone: the session has ended */
        return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0, "no such session '%s'",
                        id_or_name);
}

int control_open(const char *id_or_name, int timeout_sec, int *ret_sessfd, int *ret_ctl,
                 struct sbx_error *e)
{
        _cleanup_close_ int sessfd = control_session_dir(id_or_name, e);
        if (sessfd < 0)
                return sessfd;
        _cleanup_close_ int ctl = control_connect_live(sessfd, id_or_name, e);
        if (ctl < 0)
                return ctl;
        struct timeval tv = {.tv_sec = timeout_sec};
        if (timeout_sec) /* not on exec's path, which waits as long as its command runs */
                (void)setsockopt(ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        *ret_sessfd = TAKE_FD(sessfd);
        *ret_ctl = TAKE_FD(ctl);
        return 0;
}

int control_connect(int sessfd, struct sbx_error *e)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        /* via the session dir fd: the runtime path may be longer than sun_path */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/ctl", sessfd);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return sbx_internal(e, errno, "failed to create a control socket");
        if (RETRY_EINTR(connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", errno,
                                "the session's supervisor does not answer");
        return TAKE_FD(fd);
}

int control_call(int fd, const char *req, char *reply, size_t n, int *ret_fds, size_t max_fds)
{
        for (size_t i = 0; i < max_fds; i++)
                ret_fds[i] = -1;
        if (RETRY_EINTR(send(fd, req, strlen(req), MSG_NOSIGNAL)) < 0)
                return negerrno();

        char cbuf[CMSG_SPACE(sizeof(int) * 16)];
        struct iovec iov = {.iov_base = reply, .iov_len = n - 1};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t got = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
        if (got < 0)
                return negerrno();
        if (got == 0)
                return -ECONNRESET;
        reply[got] = '\0';
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int pfd;
                                memcpy(&pfd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (i < max_fds)
                                        ret_fds[i] = pfd;
                                else
                                        close(pfd);
                        }
                }
        return 0;
}
