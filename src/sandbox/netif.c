/* SPDX-License-Identifier: MIT */
/*
 * The session's network namespace: made by a helper child of the init (H) while the init
 * builds the root, because creating a network namespace is the one expensive namespace
 * (~0.5 ms here: every pernet subsystem registers its sysctls and devices). Made in the
 * clone of the init it would delay everything after it; made in H it runs on another CPU.
 */
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "../shared/macros.h"
#include "../shared/sync.h"
#include "../shared/util.h"
#include "sandbox.h"

/* Bring up lo in the current network namespace; *ret_nsfd (when not NULL) gets an fd of it. */
static int loopback_up(int *ret_nsfd, struct sbx_error *e)
{
        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return sbx_internal(e, errno, "failed to open a socket to bring up lo");
        struct ifreq ifr = {0};
        strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
        if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
                return sbx_internal(e, errno, "failed to read the flags of lo");
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
                return sbx_internal(e, errno, "failed to bring up lo");
        if (!ret_nsfd)
                return 0;
        /* the namespace of the socket, without needing a /proc of any pid namespace */
        int fd = ioctl(s, SIOCGSKNS);
        if (fd < 0)
                return sbx_internal(e, errno, "failed to open the session's network namespace");
        *ret_nsfd = fd;
        return 0;
}

int netif_loopback_up(struct sbx_error *e)
{
        return loopback_up(NULL, e);
}

static int make_netns(int *ret_nsfd, struct sbx_error *e)
{
        if (unshare(CLONE_NEWNET) < 0)
                return sbx_unsupported(e, errno,
                                       "failed to create the session's network namespace (see "
                                       "user.max_net_namespaces and 'sbx check')");
        return loopback_up(ret_nsfd, e);
}

/* H: make the namespace, hand it to the init, leave. */
_noreturn_ static void netns_helper(int sock)
{
        close_all_except(&sock, 1);
        struct sbx_error e = {0};
        _cleanup_close_ int nsfd = -1;
        if (make_netns(&nsfd, &e) < 0) {
                (void)sync_send_error(sock, &e);
                _exit(1);
        }
        _exit(sync_send_ok_fd(sock, nsfd) < 0 ? 1 : 0);
}

void netns_start(struct netns_job *job)
{
        *job = (struct netns_job){.sock = -1, .pid = -1};
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return;
        pid_t pid = fork();
        if (pid == 0)
                netns_helper(sp[1]);
        close(sp[1]);
        if (pid < 0) {
                close(sp[0]);
                return;
        }
        *job = (struct netns_job){.sock = sp[0], .pid = pid};
}

int netns_enter(struct netns_job *job, int *ret_nsfd, struct sbx_error *e)
{
        if (job->pid < 0) /* H could not start (no pid left?): the init makes it itself */
                return make_netns(ret_nsfd, e);
        _cleanup_close_ int nsfd = -1;
        int r = sync_wait_fd(job->sock, "the network namespace helper", &nsfd, e);
        closep(&job->sock);
        (void)RETRY_EINTR(waitpid(job->pid, NULL, 0));
        job->pid = -1;
        if (r == 0 && nsfd < 0)
                r = sbx_internal(e, EPROTO, "the network namespace helper sent no namespace");
        if (r == 0 && setns(nsfd, CLONE_NEWNET) < 0)
                r = sbx_internal(e, errno, "failed to enter the session's network namespace");
        if (r == 0)
                *ret_nsfd = TAKE_FD(nsfd);
        return r;
}
