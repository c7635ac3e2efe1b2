/* SPDX-License-Identifier: MIT */
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "../shared/macros.h"
#include "sandbox.h"

int netif_loopback_up(struct sbx_error *e)
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
        return 0;
}
