/* SPDX-License-Identifier: MIT */
/*
 * The upstream connection of one request: a non-blocking connect to each address the allow
 * check kept, in order, and the switch to relaying once one answers (proxy-internal.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "proxy-internal.h"

static void connected(struct proxy *px, struct conn *c)
{
        static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        int one = 1;
        struct net_addr peer;
        if (routed_to_self(c, &peer) && !allow_address_literal(px->allow, &peer, c->req.port)) {
                deny_host_address(px, c, &peer);
                return;
        }
        (void)setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (ensure_down(c) < 0) {
                fail(px, c, 503, "Service Unavailable", "sbx: the proxy is out of memory\n");
                return;
        }
        if (c->req.connect) {
                memcpy(c->down.data, established, sizeof(established) - 1);
                c->down.end = sizeof(established) - 1;
        }
        pbuf_try_pipe(&c->up);
        pbuf_try_pipe(&c->down);
        c->state = CS_RELAY;
        c->verdict = "allowed";
        c->last_ms = now_monotonic_ms();
        update_events(px, c);
}

static socklen_t sockaddr_of(const struct net_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
        memset(ss, 0, sizeof(*ss));
        if (a->family == AF_INET) {
                struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
                s4->sin_family = AF_INET;
                s4->sin_port = htons(port);
                memcpy(&s4->sin_addr, a->a, 4);
                return sizeof(*s4);
        }
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        memcpy(&s6->sin6_addr, a->a, 16);
        return sizeof(*s6);
}

/* Connect to the next checked address: exactly the addresses that passed the allow list,
 * never a name resolved again (DNS rebinding). */
void connect_next(struct proxy *px, struct conn *c, int last_err)
{
        while (c->next_addr < c->n_addrs) {
                const struct net_addr *a = &c->addrs[c->next_addr++];
                net_addr_format(a, c->addr_text, sizeof(c->addr_text));
                struct sockaddr_storage ss;
                socklen_t len = sockaddr_of(a, c->req.port, &ss);
                closep(&c->ufd);
                c->umask = 0;
                c->ufd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (c->ufd < 0) {
                        last_err = errno;
                        continue;
                }
                if (connect(c->ufd, (struct sockaddr *)&ss, len) == 0) {
                        connected(px, c);
                        return;
                }
                if (errno == EINPROGRESS) {
                        c->state = CS_CONNECT;
                        c->last_ms = now_monotonic_ms();
                        update_events(px, c);
                        return;
                }
                last_err = errno;
        }
        char body[1024];
        snprintf(body, sizeof(body), "sbx: failed to connect to '%s' port %u (%s): %s\n", c->host,
                 c->req.port, c->addr_text, strerror(last_err));
        fail(px, c, 502, "Bad Gateway", body);
}

/* A connect in progress ended: relay, or try the next address. */
void connect_done(struct proxy *px, struct conn *c)
{
        int err = 0;
        socklen_t len = sizeof(err);
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        if (err)
                connect_next(px, c, err);
        else if (getpeername(c->ufd, (struct sockaddr *)&peer, &plen) == 0)
                connected(px, c);
        /* else: an event of an earlier attempt's socket; this one is still going */
}
