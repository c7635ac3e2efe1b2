/* SPDX-License-Identifier: MIT */
/*
 * The proxy process's event loop: one epoll loop of non-blocking connection state machines.
 * Every connection has two bounded buffers, a deadline per state and a slot in a fixed table;
 * names are resolved off the loop (net/resolve.c) and connections are made non-blocking, so
 * no client, however slow or hostile, holds up another one.
 *
 *   HEAD -> (name) RESOLVE -> CONNECT -> RELAY -> closed
 *        -> (literal IP)      CONNECT
 *   any  -> REPLY (an error response: 400, 403, 502, 504), then closed
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../shared/buf.h"
#include "../shared/macros.h"
#include "../shared/util.h"
#include "budget.h"
#include "http.h"
#include "proxy.h"
#include "resolve.h"

#define BUF_SIZE (64 * 1024)   /* a request head and an error reply; relaying without a pipe */
#define PIPE_SIZE (256 * 1024) /* relaying: per direction (64 KiB for 100 MB/s less)      */
#define MAX_ADDRS 8
#define MAX_RESOLVERS 16
/* Deadlines (ms) of each state, counted from the connection's last progress (the head:
 * from the connection's start). */
#define HEAD_TIMEOUT_MS 30000
#define RESOLVE_TIMEOUT_MS 30000
#define CONNECT_TIMEOUT_MS 15000
#define RELAY_IDLE_MS 300000
#define REPLY_TIMEOUT_MS 10000
/* The host's own addresses are read again when older than this. */
#define LOCAL_ADDRS_MS 1000
#define MAX_LOCAL_ADDRS 256
/* accept4 out of fds or memory: the listening socket rests this long (or until a
 * connection closes) instead of waking a level-triggered loop again and again. */
#define ACCEPT_PAUSE_MS 100

static size_t min_size(size_t a, size_t b)
{
        return a < b ? a : b;
}

enum { TAG_LISTEN, TAG_RESOLVER, TAG_TIMER, TAG_STOP };
enum { SIDE_CLIENT, SIDE_UPSTREAM };
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

static uint64_t tag_of(const struct proxy *px, const struct conn *c, int side)
{
        return (uint64_t)c->gen << 32 | (uint64_t)(c - px->conns) << 1 | (uint64_t)side;
}

static void set_mask(struct proxy *px, struct conn *c, int side, uint32_t want)
{
        int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
        uint32_t *have = side == SIDE_CLIENT ? &c->cmask : &c->umask;
        if (fd < 0 || want == *have)
                return;
        /* A fd with nothing to wait for is out of the set: a level-triggered EPOLLHUP would
         * otherwise wake the loop again and again. */
        struct epoll_event ev = {.events = want, .data.u64 = tag_of(px, c, side)};
        int op = want == 0 ? EPOLL_CTL_DEL : *have == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
        (void)epoll_ctl(px->epfd, op, fd, &ev);
        *have = want;
}

static bool has_data(const struct pbuf *b)
{
        return b->pipe[0] >= 0 ? b->queued > 0 : b->data && b->end > b->start;
}

static bool has_room(const struct pbuf *b)
{
        return b->pipe[0] >= 0 ? !b->full : b->data && b->end < BUF_SIZE;
}

static void pbuf_free(struct pbuf *b)
{
        free(b->data);
        closep(&b->pipe[0]);
        closep(&b->pipe[1]);
        *b = (struct pbuf)PBUF_INIT;
}

/*
 * Memory mode to relay mode: what is buffered goes into a new pipe first. The pipe's pages
 * count against a per-user limit (fs.pipe-user-pages-soft) that every proxy of the same uid
 * shares; past it the kernel makes small pipes and refuses to grow them. A pipe that cannot
 * take what is buffered is dropped: the connection then relays through its memory buffer,
 * slower but the same.
 */
static void pbuf_try_pipe(struct pbuf *b)
{
        int p[2];
        if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
                return;
        (void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
        size_t n = b->end - b->start;
        int cap = fcntl(p[1], F_GETPIPE_SZ);
        /* n <= capacity of an empty pipe: the write takes all of it */
        if (cap < 0 || (size_t)cap < n ||
            (n > 0 && write(p[1], b->data + b->start, n) != (ssize_t)n)) {
                close(p[0]);
                close(p[1]);
                return;
        }
        b->pipe[0] = p[0];
        b->pipe[1] = p[1];
        b->queued = n;
        free(b->data);
        b->data = NULL;
        b->start = b->end = 0;
}

static void update_events(struct proxy *px, struct conn *c)
{
        uint32_t cw = 0, uw = 0;
        switch (c->state) {
        case CS_HEAD:
                cw = EPOLLIN;
                break;
        case CS_CONNECT:
                uw = EPOLLOUT;
                break;
        case CS_RELAY:
                if (!c->c_eof && !c->c_done && has_room(&c->up))
                        cw |= EPOLLIN;
                if (has_data(&c->down))
                        cw |= EPOLLOUT;
                if (!c->u_eof && has_room(&c->down))
                        uw |= EPOLLIN;
                if (has_data(&c->up))
                        uw |= EPOLLOUT;
                break;
        case CS_REPLY:
                cw = EPOLLOUT;
                break;
        default:
                break;
        }
        set_mask(px, c, SIDE_CLIENT, cw);
        set_mask(px, c, SIDE_UPSTREAM, uw);
}

/* One "net_dropped" record of the records left out since the last one, when one is due
 * (force: the proxy is exiting). */
static void audit_dropped(struct proxy *px, bool force)
{
        uint64_t now = now_monotonic_ms();
        if (px->audit_fd < 0 || !net_budget_report_due(&px->budget, now, force))
                return;
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, px->session_id, "net_dropped");
        audit_int(&b, "count", (int64_t)px->budget.dropped);
        audit_str(&b, "reason", net_budget_reason(&px->budget));
        (void)audit_commit(px->audit_fd, &b);
        net_budget_reported(&px->budget, now);
}

/* May one more "net" record be written now? Counts it either way. */
static bool audit_budget(struct proxy *px)
{
        if (net_budget_take(&px->budget, now_monotonic_ms()))
                return true;
        audit_dropped(px, false);
        return false;
}

/* One "net" record per connection that reached a verdict (docs/DESIGN.md, "Network egress"). */
static void audit_conn(struct proxy *px, const struct conn *c)
{
        if (px->audit_fd < 0 || !c->verdict || !audit_budget(px))
                return;
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, px->session_id, "net");
        audit_str(&b, "host", c->host);
        audit_int(&b, "port", c->req.port);
        audit_str(&b, "address", c->addr_text[0] ? c->addr_text : NULL);
        audit_str(&b, "method", c->req.method);
        audit_str(&b, "verdict", c->verdict);
        audit_str(&b, "reason", c->reason[0] ? c->reason : NULL);
        audit_int(&b, "bytes_out", (int64_t)c->bytes_out);
        audit_int(&b, "bytes_in", (int64_t)c->bytes_in);
        audit_int(&b, "duration_ms", (int64_t)(now_monotonic_ms() - c->start_ms));
        (void)audit_commit(px->audit_fd, &b);
}

static void accept_resume(struct proxy *px)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_LISTEN};
        if (px->accept_paused && epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->listen_fd, &ev) == 0)
                px->accept_paused = false;
}

static void conn_close(struct proxy *px, struct conn *c)
{
        audit_conn(px, c);
        accept_resume(px); /* a fd was freed */
        set_mask(px, c, SIDE_CLIENT, 0);
        set_mask(px, c, SIDE_UPSTREAM, 0);
        closep(&c->cfd);
        closep(&c->ufd);
        pbuf_free(&c->up);
        pbuf_free(&c->down);
        /* A lookup still running comes back with a generation that no longer matches. */
        *c = (struct conn){
            .state = CS_FREE, .cfd = -1, .ufd = -1, .up = PBUF_INIT, .down = PBUF_INIT};
}

static int ensure_down(struct conn *c)
{
        if (!c->down.data && !(c->down.data = malloc(BUF_SIZE)))
                return -ENOMEM;
        return 0;
}

/* Answer status with body and close once it is written (or its deadline passes). */
static void reply(struct proxy *px, struct conn *c, int status, const char *reason,
                  const char *body)
{
        _cleanup_buf_ struct buf b = {0};
        closep(&c->ufd);
        c->umask = 0; /* closing removed it from the set */
        if (ensure_down(c) < 0 || http_error_response(&b, status, reason, body) < 0 ||
            b.len > BUF_SIZE) {
                conn_close(px, c);
                return;
        }
        memcpy(c->down.data, b.data, b.len);
        c->down.start = 0;
        c->down.end = b.len;
        c->state = CS_REPLY;
        c->last_ms = now_monotonic_ms();
        update_events(px, c);
}

/* The audit record's reason: the first line of the response body. */
static void set_reason(struct conn *c, const char *body)
{
        size_t n = strcspn(body, "\n");
        if (n >= sizeof(c->reason))
                n = sizeof(c->reason) - 1;
        memmove(c->reason, body, n);
        c->reason[n] = '\0';
}

static void deny(struct proxy *px, struct conn *c, const char *body)
{
        c->verdict = "denied";
        set_reason(c, body);
        reply(px, c, 403, "Forbidden", body);
}

static void fail(struct proxy *px, struct conn *c, int status, const char *reason, const char *body)
{
        if (c->verdict == NULL && c->host[0])
                c->verdict = "failed";
        if (c->host[0])
                set_reason(c, body);
        reply(px, c, status, reason, body);
}

static void deny_host_address(struct proxy *px, struct conn *c, const struct net_addr *a);

/* Did the kernel route the connection to this host itself (its local address is its peer's)?
 * Catches an address of the host that the check before connecting did not know of yet. */
static bool routed_to_self(const struct conn *c, struct net_addr *ret_peer)
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
static void connect_next(struct proxy *px, struct conn *c, int last_err)
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

static void deny_name(struct proxy *px, struct conn *c)
{
        char body[1400];
        snprintf(body, sizeof(body),
                 "sbx: '%s' port %u is not in this session's allow list.\n"
                 "To allow it, create the session with --allow-host %s (any port) or "
                 "--allow-host %s%s%s:%u (this port only).\n",
                 c->host, c->req.port, c->host, strchr(c->host, ':') ? "[" : "", c->host,
                 strchr(c->host, ':') ? "]" : "", c->req.port);
        deny(px, c, body);
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

static void deny_host_address(struct proxy *px, struct conn *c, const struct net_addr *a)
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
static void check_addresses(struct proxy *px, struct conn *c, const struct net_addr *cand, size_t n,
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

static void resolve_begin(struct proxy *px, struct conn *c)
{
        c->state = CS_RESOLVE;
        c->last_ms = now_monotonic_ms();
        c->resolve_queued = true;
        update_events(px, c);
        if (px->resolving >= MAX_RESOLVERS)
                return; /* started when a running lookup finishes */
        struct resolve_job *job = calloc(1, sizeof(*job));
        if (!job) {
                fail(px, c, 502, "Bad Gateway", "sbx: out of memory\n");
                return;
        }
        job->cookie = tag_of(px, c, 0);
        snprintf(job->host, sizeof(job->host), "%s", c->host);
        if (resolve_start(job, px->resolve_wr) < 0) {
                resolve_job_free(job);
                return; /* stays queued: retried when a lookup finishes, or times out */
        }
        c->resolve_queued = false;
        px->resolving++;
}

static void judge(struct proxy *px, struct conn *c)
{
        struct net_addr lit;
        if (net_addr_parse(c->host, &lit)) {
                check_addresses(px, c, &lit, 1, false);
                return;
        }
        if (!allow_name(px->allow, c->host, c->req.port)) {
                deny_name(px, c);
                return;
        }
        resolve_begin(px, c);
}

/* Make the up buffer hold exactly what goes upstream: the rewritten head of a forwarded
 * request (or nothing of a CONNECT's), then whatever the client sent after the head. */
static int prepare_upstream_bytes(struct conn *c)
{
        c->body_left = -1;
        if (c->req.connect) {
                c->up.start = c->req.head_len;
                return 0;
        }
        char host_header[300];
        bool v6 = strchr(c->host, ':') != NULL;
        if (c->req.port == 80)
                snprintf(host_header, sizeof(host_header), "%s%s%s", v6 ? "[" : "", c->host,
                         v6 ? "]" : "");
        else
                snprintf(host_header, sizeof(host_header), "%s%s%s:%u", v6 ? "[" : "", c->host,
                         v6 ? "]" : "", c->req.port);
        _cleanup_buf_ struct buf head = {0};
        if (http_forward_head(c->up.data, &c->req, host_header, &head) < 0)
                return -ENOMEM;
        /* exactly one request: its Content-Length body and nothing after it (a second,
         * pipelined request would reach the upstream unchecked) */
        size_t rest = c->up.end - c->req.head_len;
        uint64_t body = c->req.content_length > 0 ? (uint64_t)c->req.content_length : 0;
        if (rest > body)
                rest = (size_t)body;
        c->body_left = (int64_t)(body - rest);
        c->c_done = c->body_left == 0;
        if (head.len + rest > BUF_SIZE)
                return -E2BIG;
        memmove(c->up.data + head.len, c->up.data + c->req.head_len, rest);
        memcpy(c->up.data, head.data, head.len);
        c->up.start = 0;
        c->up.end = head.len + rest;
        return 0;
}

static void on_head(struct proxy *px, struct conn *c)
{
        const char *why = "";
        int r = http_parse_head(c->up.data, c->up.end, &c->req, &why);
        if (r == -EAGAIN)
                return;
        if (r == -E2BIG) {
                fail(px, c, 431, "Request Header Fields Too Large",
                     "sbx: the request head is too large\n");
                return;
        }
        char body[300];
        if (r < 0) {
                snprintf(body, sizeof(body), "sbx: bad proxy request: %s\n", why);
                fail(px, c, 400, "Bad Request", body);
                return;
        }
        if (!c->req.connect && c->req.transfer_encoding) {
                fail(px, c, 411, "Length Required",
                     "sbx: bad proxy request: the proxy forwards request bodies with a "
                     "Content-Length only (not Transfer-Encoding)\n");
                return;
        }
        memcpy(c->host, c->req.host, sizeof(c->host));
        if (!allow_host_normalize(c->host)) {
                c->host[0] = '\0';
                fail(px, c, 400, "Bad Request", "sbx: bad proxy request: invalid host name\n");
                return;
        }
        if ((r = prepare_upstream_bytes(c)) < 0) {
                fail(px, c, 431, "Request Header Fields Too Large",
                     "sbx: the request head is too large\n");
                return;
        }
        judge(px, c);
}

/* Read at most max bytes from fd into b; 1 progress, 0 EOF, -EAGAIN nothing now, other
 * -errno an error. count (may be NULL) grows by the bytes read. */
static int fill(int fd, struct pbuf *b, size_t max, uint64_t *count)
{
        ssize_t n;
        if (max == 0)
                return -EAGAIN;
        if (b->pipe[0] >= 0) {
                n = RETRY_EINTR(splice(fd, NULL, b->pipe[1], NULL, min_size(max, PIPE_SIZE),
                                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
                /* EAGAIN with bytes queued may be a full pipe: wait for a drain (a spurious
                 * wake-up costs nothing, a full pipe would spin the loop) */
                if (n < 0 && errno == EAGAIN && b->queued > 0)
                        b->full = true;
        } else {
                n = RETRY_EINTR(recv(fd, b->data + b->end, min_size(max, BUF_SIZE - b->end), 0));
        }
        if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (b->pipe[0] >= 0)
                b->queued += (size_t)n;
        else
                b->end += (size_t)n;
        if (count)
                *count += (uint64_t)n;
        return n > 0 ? 1 : 0;
}

/* Write from b to fd; 1 progress, -EAGAIN nothing now, other -errno an error. */
static int drain(int fd, struct pbuf *b, uint64_t *count)
{
        ssize_t n;
        if (b->pipe[0] >= 0)
                n = RETRY_EINTR(splice(b->pipe[0], NULL, fd, NULL, b->queued,
                                       SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
        else
                n = RETRY_EINTR(send(fd, b->data + b->start, b->end - b->start, MSG_NOSIGNAL));
        if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (count)
                *count += (uint64_t)n;
        if (b->pipe[0] >= 0) {
                b->queued -= (size_t)n;
                b->full = false;
                return 1;
        }
        b->start += (size_t)n;
        if (b->start == b->end)
                b->start = b->end = 0;
        else if (b->start > BUF_SIZE / 2) { /* keep room to read into */
                memmove(b->data, b->data + b->start, b->end - b->start);
                b->end -= b->start;
                b->start = 0;
        }
        return 1;
}

/* Half-closes follow the data: a side's EOF reaches the other side once its buffer is
 * drained. The connection ends when both directions have. */
static bool relay_finish(struct conn *c)
{
        /* a forwarded request is one response with Connection: close: done when it is */
        if (!c->req.connect && c->u_eof && !has_data(&c->down))
                return true;
        if (c->c_eof && !has_data(&c->up) && !c->u_shut) {
                (void)shutdown(c->ufd, SHUT_WR);
                c->u_shut = true;
        }
        if (c->u_eof && !has_data(&c->down) && !c->c_shut) {
                (void)shutdown(c->cfd, SHUT_WR);
                c->c_shut = true;
        }
        return c->u_shut && c->c_shut;
}

static void client_event(struct proxy *px, struct conn *c, uint32_t ev)
{
        int r;
        if (c->cmask & EPOLLIN && ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                /* the head: no more than HTTP_HEAD_MAX, so that a body sent with it leaves
                 * room for the rewritten head; a forwarded body: its Content-Length */
                size_t max = c->state == CS_HEAD
                                 ? HTTP_HEAD_MAX - min_size(c->up.end, HTTP_HEAD_MAX)
                             : c->body_left >= 0 ? (size_t)c->body_left
                                                 : SIZE_MAX;
                uint64_t got = 0;
                r = fill(c->cfd, &c->up, max, &got);
                if (c->state != CS_HEAD && c->body_left >= 0) {
                        c->body_left -= (int64_t)got;
                        c->c_done = c->body_left == 0;
                }
                if (r == 0 && c->state == CS_HEAD) {
                        conn_close(px, c); /* gone before asking anything */
                        return;
                }
                if (r == 0)
                        c->c_eof = true;
                else if (r < 0 && r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
                c->last_ms = now_monotonic_ms();
                if (c->state == CS_HEAD) {
                        on_head(px, c);
                        return;
                }
                if (has_data(&c->up) && (r = drain(c->ufd, &c->up, &c->bytes_out)) < 0 &&
                    r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
        }
        if (c->cmask & EPOLLOUT && ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
                r = drain(c->cfd, &c->down, NULL);
                if (r < 0 && r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
                c->last_ms = now_monotonic_ms();
                if (c->state == CS_REPLY && !has_data(&c->down)) {
                        conn_close(px, c);
                        return;
                }
        }
        if (!(c->cmask & (EPOLLIN | EPOLLOUT)) && ev & (EPOLLHUP | EPOLLERR)) {
                conn_close(px, c);
                return;
        }
        if (c->state == CS_RELAY && relay_finish(c)) {
                conn_close(px, c);
                return;
        }
        update_events(px, c);
}

static void upstream_event(struct proxy *px, struct conn *c, uint32_t ev)
{
        int r;
        if (c->ufd < 0 || (c->state != CS_CONNECT && c->state != CS_RELAY))
                return; /* an event of a socket closed earlier in this round */
        if (c->state == CS_CONNECT) {
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
                return;
        }
        if (c->umask & EPOLLIN && ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                r = fill(c->ufd, &c->down, SIZE_MAX, &c->bytes_in);
                if (r == 0)
                        c->u_eof = true;
                else if (r < 0 && r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
                c->last_ms = now_monotonic_ms();
                /* pass it on now: usually the client's socket has room, and waiting for
                 * EPOLLOUT would cost a round of the loop and two epoll_ctl calls */
                if (has_data(&c->down) && (r = drain(c->cfd, &c->down, NULL)) < 0 && r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
        }
        if (c->umask & EPOLLOUT && ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) {
                r = drain(c->ufd, &c->up, &c->bytes_out);
                if (r < 0 && r != -EAGAIN) {
                        conn_close(px, c);
                        return;
                }
                c->last_ms = now_monotonic_ms();
        }
        if (!(c->umask & (EPOLLIN | EPOLLOUT)) && ev & (EPOLLHUP | EPOLLERR)) {
                conn_close(px, c);
                return;
        }
        if (relay_finish(c)) {
                conn_close(px, c);
                return;
        }
        update_events(px, c);
}

static struct conn *free_slot(struct proxy *px)
{
        for (size_t i = 0; i < PROXY_MAX_CONNS; i++)
                if (px->conns[i].state == CS_FREE)
                        return &px->conns[i];
        return NULL;
}

/* Out of fds or memory: the pending connection stays in the backlog and the level-triggered
 * listening socket would wake the loop at once, forever. It rests until a connection closes
 * or ACCEPT_PAUSE_MS pass. */
static void accept_pause(struct proxy *px)
{
        struct epoll_event ev = {.events = 0, .data.u64 = TAG_LISTEN};
        if (epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->listen_fd, &ev) == 0) {
                px->accept_paused = true;
                px->accept_resume_ms = now_monotonic_ms() + ACCEPT_PAUSE_MS;
        }
}

static void accept_clients(struct proxy *px)
{
        static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 50\r\n"
                                   "Connection: close\r\n\r\n"
                                   "sbx: too many proxy connections in this session\n";
        for (int i = 0; i < 64; i++) {
                int fd = accept4(px->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM ||
                            errno == ENOBUFS)
                                accept_pause(px);
                        return;
                }
                struct conn *c = free_slot(px);
                if (!c || !(c->up.data = malloc(BUF_SIZE))) {
                        (void)send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                        close(fd);
                        continue;
                }
                int one = 1;
                (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                if (++px->next_gen == 0)
                        px->next_gen = 1;
                c->gen = px->next_gen;
                c->cfd = fd;
                c->ufd = -1;
                c->state = CS_HEAD;
                c->start_ms = c->last_ms = now_monotonic_ms();
                update_events(px, c);
        }
}

static struct conn *conn_of_tag(struct proxy *px, uint64_t tag)
{
        uint32_t gen = (uint32_t)(tag >> 32);
        size_t slot = (size_t)((tag & 0xffffffffu) >> 1);
        if (gen == 0 || slot >= PROXY_MAX_CONNS)
                return NULL;
        struct conn *c = &px->conns[slot];
        return c->state != CS_FREE && c->gen == gen ? c : NULL;
}

static void start_queued_lookups(struct proxy *px)
{
        for (size_t i = 0; i < PROXY_MAX_CONNS && px->resolving < MAX_RESOLVERS; i++)
                if (px->conns[i].state == CS_RESOLVE && px->conns[i].resolve_queued)
                        resolve_begin(px, &px->conns[i]);
}

static void lookups_done(struct proxy *px)
{
        struct resolve_job *job;
        while ((job = resolve_finished(px->resolve_rd))) {
                px->resolving--;
                struct conn *c = conn_of_tag(px, job->cookie);
                if (c && c->state == CS_RESOLVE) {
                        if (job->err) {
                                char body[800];
                                snprintf(body, sizeof(body), "sbx: failed to resolve '%s': %s\n",
                                         c->host, gai_strerror(job->err));
                                fail(px, c, 502, "Bad Gateway", body);
                        } else {
                                struct net_addr cand[32];
                                size_t n = 0;
                                for (struct addrinfo *ai = job->res; ai && n < 32; ai = ai->ai_next)
                                        if (net_addr_from_sockaddr(ai->ai_addr, &cand[n]))
                                                n++;
                                check_addresses(px, c, cand, n, true);
                        }
                }
                resolve_job_free(job);
        }
        start_queued_lookups(px);
}

static void sweep(struct proxy *px)
{
        uint64_t now = now_monotonic_ms();
        for (size_t i = 0; i < PROXY_MAX_CONNS; i++) {
                struct conn *c = &px->conns[i];
                uint64_t idle = now - c->last_ms;
                switch (c->state) {
                case CS_HEAD: /* the whole head in time, however slowly it trickles in */
                        if (now - c->start_ms > HEAD_TIMEOUT_MS)
                                conn_close(px, c);
                        break;
                case CS_RESOLVE:
                        if (idle > RESOLVE_TIMEOUT_MS)
                                fail(px, c, 504, "Gateway Timeout",
                                     "sbx: resolving the host timed out\n");
                        break;
                case CS_CONNECT:
                        if (idle > CONNECT_TIMEOUT_MS)
                                fail(px, c, 504, "Gateway Timeout",
                                     "sbx: connecting to the host timed out\n");
                        break;
                case CS_RELAY:
                        if (idle > RELAY_IDLE_MS)
                                conn_close(px, c);
                        break;
                case CS_REPLY:
                        if (idle > REPLY_TIMEOUT_MS)
                                conn_close(px, c);
                        break;
                default:
                        break;
                }
        }
}

static int loop_add(int epfd, int fd, uint64_t tag)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
        return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int proxy_setup(struct proxy *px)
{
        int p[2];
        struct itimerspec tick = {.it_interval = {.tv_sec = 1}, .it_value = {.tv_sec = 1}};
        px->epfd = epoll_create1(EPOLL_CLOEXEC);
        px->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (px->epfd < 0 || px->timer_fd < 0 || pipe2(p, O_CLOEXEC) < 0 ||
            timerfd_settime(px->timer_fd, 0, &tick, NULL) < 0)
                return -errno;
        px->resolve_rd = p[0];
        px->resolve_wr = p[1];
        if (fcntl(px->resolve_rd, F_SETFL, O_NONBLOCK) < 0 ||
            loop_add(px->epfd, px->listen_fd, TAG_LISTEN) < 0 ||
            loop_add(px->epfd, px->resolve_rd, TAG_RESOLVER) < 0 ||
            loop_add(px->epfd, px->timer_fd, TAG_TIMER) < 0 ||
            loop_add(px->epfd, px->stop_fd, TAG_STOP) < 0)
                return -errno;
        for (size_t i = 0; i < PROXY_MAX_CONNS; i++)
                px->conns[i] = (struct conn){
                    .state = CS_FREE, .cfd = -1, .ufd = -1, .up = PBUF_INIT, .down = PBUF_INIT};
        /* six fds per connection (two sockets, two pipes) and a few of our own */
        struct rlimit rl;
        const rlim_t want = 6 * PROXY_MAX_CONNS + 64;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
                rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        return 0;
}

_noreturn_ void proxy_serve(struct proxy_params *pp)
{
        static struct proxy px; /* large: not on the stack */
        px.listen_fd = pp->listen_fd;
        px.audit_fd = pp->audit_fd;
        px.stop_fd = pp->stop_fd;
        px.session_id = pp->session_id;
        px.allow = &pp->allow;
        signal(SIGPIPE, SIG_IGN);
        if (proxy_setup(&px) < 0)
                _exit(1);
        for (;;) {
                struct epoll_event ev[64];
                int n = epoll_wait(px.epfd, ev, ARRAY_SIZE(ev),
                                   px.accept_paused ? ACCEPT_PAUSE_MS : -1);
                if (n < 0 && errno != EINTR)
                        _exit(1);
                if (px.accept_paused && now_monotonic_ms() >= px.accept_resume_ms)
                        accept_resume(&px);
                for (int i = 0; i < n; i++) {
                        uint64_t tag = ev[i].data.u64;
                        if (tag == TAG_STOP) {
                                /* the stop pipe closed: the session is ending */
                                audit_dropped(&px, true);
                                _exit(0);
                        } else if (tag == TAG_LISTEN) {
                                accept_clients(&px);
                        } else if (tag == TAG_RESOLVER) {
                                lookups_done(&px);
                        } else if (tag == TAG_TIMER) {
                                uint64_t ticks;
                                if (read(px.timer_fd, &ticks, sizeof(ticks)) > 0)
                                        sweep(&px);
                                /* dropping stopped: count the last of it within a second */
                                audit_dropped(&px, false);
                        } else {
                                struct conn *c = conn_of_tag(&px, tag);
                                if (c && (tag & 1) == SIDE_CLIENT)
                                        client_event(&px, c, ev[i].events);
                                else if (c)
                                        upstream_event(&px, c, ev[i].events);
                        }
                }
        }
}
