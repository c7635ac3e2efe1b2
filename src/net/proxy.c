/* SPDX-License-Identifier: MIT */
/*
 * The proxy process's event loop: one epoll loop of non-blocking connection state machines.
 * Every connection has two bounded buffers, a deadline per state and a slot in a fixed table;
 * names are resolved off the loop (net/resolve.c) and connections are made non-blocking, so
 * no client, however slow or hostile, holds up another one. The bytes in flight are
 * net/relay.c's; refusing the host's own addresses is net/hostaddr.c's.
 *
 *   HEAD -> (name) RESOLVE -> CONNECT -> RELAY -> closed
 *        -> (literal IP)      CONNECT
 *   any  -> REPLY (an error response: 400, 403, 502, 504), then closed
 */
#include <errno.h>
#include <fcntl.h>
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
#include "shared/buf.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "budget.h"
#include "http.h"
#include "proxy-internal.h"
#include "resolve.h"

#define MAX_RESOLVERS 16
/* Deadlines (ms) of each state, counted from the connection's last progress (the head:
 * from the connection's start). */
#define HEAD_TIMEOUT_MS 30000
#define RESOLVE_TIMEOUT_MS 30000
#define CONNECT_TIMEOUT_MS 15000
#define RELAY_IDLE_MS 300000
#define REPLY_TIMEOUT_MS 10000
/* accept4 out of fds or memory: the listening socket rests this long (or until a
 * connection closes) instead of waking a level-triggered loop again and again. */
#define ACCEPT_PAUSE_MS 100

enum { TAG_LISTEN, TAG_RESOLVER, TAG_TIMER, TAG_STOP };
enum { SIDE_CLIENT, SIDE_UPSTREAM };

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

void update_events(struct proxy *px, struct conn *c)
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
                if (!c->c_eof && !c->c_done && pbuf_has_room(&c->up))
                        cw |= EPOLLIN;
                if (pbuf_has_data(&c->down))
                        cw |= EPOLLOUT;
                if (!c->u_eof && pbuf_has_room(&c->down))
                        uw |= EPOLLIN;
                if (pbuf_has_data(&c->up))
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

int ensure_down(struct conn *c)
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

void deny(struct proxy *px, struct conn *c, const char *body)
{
        c->verdict = "denied";
        set_reason(c, body);
        reply(px, c, 403, "Forbidden", body);
}

void fail(struct proxy *px, struct conn *c, int status, const char *reason, const char *body)
{
        if (c->verdict == NULL && c->host[0])
                c->verdict = "failed";
        if (c->host[0])
                set_reason(c, body);
        reply(px, c, status, reason, body);
}

void deny_name(struct proxy *px, struct conn *c)
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
        if (prepare_upstream_bytes(c) < 0) {
                fail(px, c, 431, "Request Header Fields Too Large",
                     "sbx: the request head is too large\n");
                return;
        }
        judge(px, c);
}

/* What the loop does after a socket's events were served. */
static void conn_after_io(struct proxy *px, struct conn *c, enum relay_step next)
{
        switch (next) {
        case RELAY_HEAD:
                on_head(px, c);
                break;
        case RELAY_CLOSE:
                conn_close(px, c);
                break;
        case RELAY_MORE:
                update_events(px, c);
                break;
        }
}

static void client_event(struct proxy *px, struct conn *c, uint32_t ev)
{
        conn_after_io(px, c, relay_client_event(c, ev));
}

static void upstream_event(struct proxy *px, struct conn *c, uint32_t ev)
{
        if (c->ufd < 0 || (c->state != CS_CONNECT && c->state != CS_RELAY))
                return; /* an event of a socket closed earlier in this round */
        if (c->state == CS_CONNECT) {
                connect_done(px, c);
                return;
        }
        conn_after_io(px, c, relay_upstream_event(c, ev));
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
                                if (n == 0) {
                                        /* a lookup that succeeds with no IPv4/IPv6 address */
                                        char body[800];
                                        snprintf(body, sizeof(body),
                                                 "sbx: '%s' has no IPv4 or IPv6 address\n",
                                                 c->host);
                                        fail(px, c, 502, "Bad Gateway", body);
                                } else
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
        (void)signal(SIGPIPE, SIG_IGN);
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
                                /* a new allow list (net/policy.c), or the pipe closed: the
                                 * session is ending (a bad message ends it too: the list the
                                 * supervisor holds is no longer the one enforced) */
                                if (proxy_policy_read(px.stop_fd, &pp->allow) == 1)
                                        continue;
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
