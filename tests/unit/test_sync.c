/* SPDX-License-Identifier: MIT */
/*
 * src/shared/sync.c: the handshake messages between the supervisor and the session init. A
 * passed fd arrives, or its absence is said; an fd the kernel could not install on the
 * receiving side (its RLIMIT_NOFILE reached) is an error, never taken as "no fd was sent".
 */
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/sync.h"
#include "unit.h"

int main(void)
{
        int sp[2];
        CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
        struct sbx_error e = {0};
        int fd = -2;

        /* an fd, then none */
        CHECK(sync_send_ok_fd(sp[0], STDIN_FILENO) == 0);
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) == 0);
        CHECK(fd > STDERR_FILENO);
        if (fd >= 0)
                close(fd);
        CHECK(sync_send_ok_fd(sp[0], -1) == 0);
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) == 0);
        CHECK(fd == -1);

        /* the peer's error, with its message */
        struct sbx_error sent = {0};
        sbx_internal(&sent, 0, "the root could not be built");
        CHECK(sync_send_error(sp[0], &sent) == 0);
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) < 0);
        CHECK(strstr(e.message, "the root could not be built") != NULL);

        /* an fd that cannot be installed here: no free fd under the soft limit */
        memset(&e, 0, sizeof(e));
        struct rlimit old;
        CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
        int lowest = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
        CHECK(lowest > STDERR_FILENO);
        close(lowest);
        CHECK(sync_send_ok_fd(sp[0], STDIN_FILENO) == 0);
        struct rlimit tight = {.rlim_cur = (rlim_t)lowest, .rlim_max = old.rlim_max};
        CHECK(setrlimit(RLIMIT_NOFILE, &tight) == 0);
        /* positive control: no fd can be made now */
        CHECK(fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) < 0);
        fd = -2;
        int r = sync_wait_fd(sp[1], "peer", &fd, &e);
        CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
        CHECK(r < 0);
        CHECK(fd == -1);
        CHECK(strstr(e.message, "failed to receive a file from peer") != NULL);

        close(sp[0]);
        close(sp[1]);

        /* a peer that sends its error and exits with our message unread: the kernel reports
         * the reset first; the error must still be read (it was "Connection reset by peer") */
        CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
        memset(&e, 0, sizeof(e));
        CHECK(sync_send_ok(sp[1]) == 0);
        memset(&sent, 0, sizeof(sent));
        sbx_fail(&sent, EXIT_USAGE, "bad-rootfs", 0, "no rootfs at /nonexistent");
        CHECK(sync_send_error(sp[0], &sent) == 0);
        close(sp[0]);
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) < 0);
        CHECK(e.exit_code == EXIT_USAGE);
        CHECK(strstr(e.message, "no rootfs at /nonexistent") != NULL);
        /* and the channel is ended after it, not reset again */
        memset(&e, 0, sizeof(e));
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) < 0);
        CHECK(strstr(e.message, "peer ended before reporting") != NULL);
        close(sp[1]);

        /* a peer that exits with our message unread and sends nothing: a reset, as the exec
         * client's fallback needs it (nothing was started), not "ended before reporting" */
        CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
        memset(&e, 0, sizeof(e));
        CHECK(sync_send_ok(sp[1]) == 0);
        close(sp[0]);
        CHECK(sync_wait_fd(sp[1], "peer", &fd, &e) == -ECONNRESET);
        close(sp[1]);
        return unit_done();
}
