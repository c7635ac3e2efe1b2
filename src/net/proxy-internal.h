/* SPDX-License-Identifier: MIT */
/*
 * What the proxy process's files share, and nothing outside src/net sees (that is
 * net/proxy.h): the connection table and the functions each file offers the others.
 *   net/proxy.c     the loop: accept, per-connection events, the request flow, "net" records
 *   net/relay.c     the bytes in flight between client and upstream (buffers, pipes, splice)
 *   net/hostaddr.c  refusing the host's own addresses unless they are allowed literally
 *   net/upstream.c  connecting to the addresses kept, one after the other
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allow.h"
#include "budget.h"
#include "http.h"
#include "proxy.h"

#define BUF_SIZE (64 * 1024) /* a request head and an error reply; relaying without a pipe */
#define MAX_ADDRS 8
#define MAX_LOCAL_ADDRS 256

enum conn_state { CS_FREE, CS_HEAD, CS_RESOLVE, CS_CONNECT, CS_RELAY, CS_REPLY };

/*
 * One direction's bytes in flight, at most BUF_SIZE of them. Until the connection relays, a
 * buffer in memory (the request head, an error reply); while it relays, a pipe that
 * splice(2) moves the bytes through without copying them into the proxy.
 */
struct pbuf {
        char *data; /* memory mode: BUF_SIZE bytes */
        size_t start, end;
        int pipe[2];   /* relay mode: read and write ends; -1 in memory mode */
        size_t queued; /* relay mode: bytes in the pipe */
        bool full;     /* relay mode: the pipe took nothing more, until it is drained */
};
#define PBUF_INIT                                                                                  \
        {                                                                                          \
                .pipe = { -1, -1 }                                                                 \
        }

/* inline: asked on every event of the loop */
static inline bool pbuf_has_data(const struct pbuf *b)
{
        return b->pipe[0] >= 0 ? b->queued > 0 : b->data && b->end > b->start;
}

static inline bool pbuf_has_room(const struct pbuf *b)
{
        return b->pipe[0] >= 0 ? !b->full : b->data && b->end < BUF_SIZE;
}

struct conn {
        enum conn_state state;
        uint32_t gen; /* never 0: epoll tags of 0 are the loop's own fds */
        int cfd, ufd;
        uint32_t cmask, umask; /* events registered; 0 = not in the epoll set */
        struct pbuf up, down;  /* client -> upstream, upstream -> client */
        bool c_eof, u_eof, c_shut, u_shut;
        bool resolve_queued;
        bool c_done;       /* forward: the one request was read; the client is read no more */
        int64_t body_left; /* forward: body bytes still to read from the client; -1: CONNECT */
        struct http_request req;
        char host[256]; /* normalized */
        struct net_addr addrs[MAX_ADDRS];
        size_t n_addrs, next_addr;
        char addr_text[64]; /* the address connected to (or refused) */
        uint64_t start_ms, last_ms;
        uint64_t bytes_out, bytes_in; /* sandbox -> destination, destination -> sandbox */
        const char *verdict;          /* NULL until the request was judged */
        char reason[160];
};

struct proxy {
        int epfd, listen_fd, resolve_rd, resolve_wr, timer_fd, audit_fd, stop_fd;
        const char *session_id;
        const struct allow_list *allow;
        size_t resolving; /* lookups running */
        struct conn conns[PROXY_MAX_CONNS];
        uint32_t next_gen;
        /* the host's own addresses (getifaddrs), read at local_ms */
        struct net_addr local[MAX_LOCAL_ADDRS];
        size_t n_local;
        uint64_t local_ms;
        bool local_valid;
        struct net_budget budget; /* of the "net" records (net/budget.h) */
        bool accept_paused;
        uint64_t accept_resume_ms;
};

/* net/relay.c */
void pbuf_free(struct pbuf *b);
void pbuf_try_pipe(struct pbuf *b);
/* What is left to do after a socket's events were served: wait for more (the epoll set
 * follows the buffers), parse the request head read so far, or close the connection. */
enum relay_step { RELAY_MORE, RELAY_HEAD, RELAY_CLOSE };
enum relay_step relay_client_event(struct conn *c, uint32_t ev);
enum relay_step relay_upstream_event(struct conn *c, uint32_t ev);

/* net/hostaddr.c */
bool routed_to_self(const struct conn *c, struct net_addr *ret_peer);
void deny_host_address(struct proxy *px, struct conn *c, const struct net_addr *a);
/* Keep the candidates (n >= 1) the allow list and the host-address rule let through and
 * connect to the first, or answer 403 saying which rule refused them. named: cand came from a
 * lookup of c->host (else c->host is an address literal). */
void check_addresses(struct proxy *px, struct conn *c, const struct net_addr *cand, size_t n,
                     bool named);

/* net/upstream.c */
/* Connect to the next address kept (c->addrs[c->next_addr...]), or answer 502 with last_err
 * when none is left. */
void connect_next(struct proxy *px, struct conn *c, int last_err);
/* The connect in progress ended (the upstream socket's event in CS_CONNECT). */
void connect_done(struct proxy *px, struct conn *c);

/* net/proxy.c */
void deny(struct proxy *px, struct conn *c, const char *body);
void deny_name(struct proxy *px, struct conn *c);
/* Answer status with body and close the connection once it is written. */
void fail(struct proxy *px, struct conn *c, int status, const char *reason, const char *body);
/* Wait for what the connection's state needs (epoll masks of both sockets). */
void update_events(struct proxy *px, struct conn *c);
/* The down buffer exists (-ENOMEM). */
int ensure_down(struct conn *c);
