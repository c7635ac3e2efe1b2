/* SPDX-License-Identifier: MIT */
/*
 * Refusing the host's own addresses (docs/DESIGN.md, "Network egress", step 4 of the allow
 * check): the proxy runs in the host's network namespace, so an address of the host reaches
 * every host service listening on 0.0.0.0. Such an address is refused unless a rule names
 * exactly it, before connecting (the interfaces' addresses) and after (a local route).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "shared/util.h"
#include "proxy-internal.h"

/* The host's own addresses are read again when older than this. */
#define LOCAL_ADDRS_MS 1000

/* Did the kernel route the connection to this host itself (its local address is its peer's)?
 * Catches an address of the host that the check before connecting did not know of yet. */
bool routed_to_self(const struct conn *c, struct net_addr *ret_peer)
{
        struct sockaddr_storage local, peer;
        socklen_t llen = sizeof(local), plen = sizeof(peer);
        struct net_addr l, p;
        if (getsockname(c->ufd, (struct sockaddr *)&local, &llen) < 0 ||
            getpeername(c->ufd, (struct sockaddr *)&peer, &plen) < 0 ||
            !net_addr_from_sockaddr(&local, &l) || !net_addr_from_sockaddr(&peer, &p))
                return false;
        *ret_peer = p;
        return l.family == p.family && memcmp(l.a, p.a, sizeof(l.a)) == 0;
}

/* The host's own addresses, read again when older than LOCAL_ADDRS_MS. */
static void local_addrs_refresh(struct proxy *px)
{
        uint64_t now = now_monotonic_ms();
        if (px->local_valid && now - px->local_ms < LOCAL_ADDRS_MS)
                return;
        struct ifaddrs *ifa = NULL;
        if (getifaddrs(&ifa) < 0) {
                px->local_valid = false; /* every address counts as the host's until it works */
                return;
        }
        px->n_local = 0;
        for (struct ifaddrs *i = ifa; i && px->n_local < MAX_LOCAL_ADDRS; i = i->ifa_next)
                if (i->ifa_addr && net_addr_from_sockaddr(i->ifa_addr, &px->local[px->n_local]))
                        px->n_local++;
        freeifaddrs(ifa);
        px->local_ms = now;
        px->local_valid = true;
}

static bool is_host_address(const struct proxy *px, const struct net_addr *a)
{
        if (!px->local_valid)
                return true;
        for (size_t i = 0; i < px->n_local; i++)
                if (px->local[i].family == a->family &&
                    memcmp(px->local[i].a, a->a, sizeof(a->a)) == 0)
                        return true;
        return false;
}

void deny_host_address(struct proxy *px, struct conn *c, const struct net_addr *a)
{
        char addr[64], body[1400];
        net_addr_format(a, addr, sizeof(addr));
        snprintf(c->addr_text, sizeof(c->addr_text), "%s", addr);
        snprintf(
            body, sizeof(body),
            "sbx: '%s' is %s, an address of this host, which a session reaches only when "
            "it is allowed literally.\nTo allow it, create the session with --allow-host %s.\n",
            c->host, addr, addr);
        deny(px, c, body);
}

/* Keep the addresses the allow list accepts; deny naming the first refused one if none. */
void check_addresses(struct proxy *px, struct conn *c, const struct net_addr *cand, size_t n,
                     bool named)
{
        c->n_addrs = c->next_addr = 0;
        const struct net_addr *refused = NULL, *host_refused = NULL;
        local_addrs_refresh(px);
        for (size_t i = 0; i < n && c->n_addrs < MAX_ADDRS; i++) {
                if (!allow_address(px->allow, &cand[i], c->req.port, named)) {
                        if (!refused)
                                refused = &cand[i];
                } else if (is_host_address(px, &cand[i]) &&
                           !allow_address_literal(px->allow, &cand[i], c->req.port)) {
                        if (!host_refused)
                                host_refused = &cand[i];
                } else {
                        /* cand holds n addresses, never NULL when n > 0: the analyzer takes
                         * &cand[i] stored in refused above for a possible NULL */
                        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
                        c->addrs[c->n_addrs++] = cand[i];
                }
        }
        if (c->n_addrs > 0) {
                connect_next(px, c, ECONNREFUSED);
                return;
        }
        if (host_refused) {
                deny_host_address(px, c, host_refused);
                return;
        }
        if (!named) {
                deny_name(px, c);
                return;
        }
        const char *what = "an address";
        (void)net_addr_special(refused, &what, NULL);
        char addr[64], body[1400];
        net_addr_format(refused, addr, sizeof(addr));
        snprintf(c->addr_text, sizeof(c->addr_text), "%s", addr);
        snprintf(body, sizeof(body),
                 "sbx: '%s' resolves to %s, %s, which a session reaches only when it is "
                 "allowed literally.\nTo allow it, create the session with --allow-host %s.\n",
                 c->host, addr, what, addr);
        deny(px, c, body);
}
