/* SPDX-License-Identifier: MIT */
/* The session's network namespace and its lo (made by the init's helper H: helper.c). */
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "shared/macros.h"
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

int netns_make(int *ret_nsfd, struct sbx_error *e)
{
        if (unshare(CLONE_NEWNET) < 0)
                return sbx_unsupported(e, errno,
                                       "failed to create the session's network namespace (see "
                                       "user.max_net_namespaces and 'sbx check')");
        return loopback_up(ret_nsfd, e);
}
