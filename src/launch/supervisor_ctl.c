/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's control socket: the requests of the session's owner on ctl (exec, renew,
 * net, layer, busy, pause, destroy) and their replies. The loop that calls these, the TTL and
 * the session's end are in supervisor.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../session/hold.h"
#include "../session/state.h"
#include "shared/buf.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup.h"
#include "launch.h"
#include "supervisor-internal.h"

static void send_reply_fds(int fd, const char *text, const int *fds, size_t n)
{
        char cbuf[CMSG_SPACE(sizeof(int) * 16)] = {0};
        struct iovec iov = {.iov_base = (void *)text, .iov_len = strlen(text)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (n > 0) {
                mh.msg_control = cbuf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        }
        (void)RETRY_EINTR(sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT));
}

static void send_reply(int fd, const char *text)
{
        send_reply_fds(fd, text, NULL, 0);
}

/* "OK <mask>": bit i set = namespace i follows, in order, after the init's pidfd. */
static void send_session_fds(struct supervisor *s, int fd)
{
        int fds[1 + SESSION_NS_COUNT] = {s->init.pidfd};
        size_t n = 1;
        unsigned mask = 0;
        for (int i = 0; i < SESSION_NS_COUNT; i++)
                if (s->init.ns[i] >= 0) {
                        fds[n++] = s->init.ns[i];
                        mask |= 1u << i;
                }
        char text[32];
        snprintf(text, sizeof(text), "OK %u", mask);
        send_reply_fds(fd, text, fds, n);
}

static void pause_audit(struct supervisor *s, bool pause, uint64_t start)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, s->st.id, pause ? "pause" : "resume");
        audit_int(&b, "duration_ms", (int64_t)(now_monotonic_ms() - start));
        (void)audit_commit(s->auditfd, &b);
}

/* The connections whose PAUSE_HOLD keeps the session frozen (commit --pause). */
static int holders(const struct supervisor *s)
{
        int n = 0;
        for (int fd = 0; fd < MAX_CLIENTS; fd++)
                n += s->pause_held[fd];
        return n;
}

/* A connection that held the session frozen is gone: whatever ended its caller, a kill
 * included, the session runs again once no other commit holds it. */
static void release_hold(struct supervisor *s, int fd)
{
        if (fd >= MAX_CLIENTS || !s->pause_held[fd])
                return;
        s->pause_held[fd] = false;
        uint64_t start = now_monotonic_ms();
        if (holders(s) == 0 && cgroup_session_freeze(&s->cg, false) == 0)
                pause_audit(s, false, start);
}

static void close_client(struct supervisor *s, int fd)
{
        release_hold(s, fd);
        if (fd < MAX_CLIENTS)
                s->client[fd] = false;
        (void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
        if (fd < MAX_CLIENTS && s->exec_conn[fd]) {
                s->exec_conn[fd] = false;
                s->busy--;
        }
        close(fd);
        if (s->expiry_pending && !supervisor_execs_running(s))
                supervisor_end_session(s, "expired", "the TTL ran out while commands were running");
}

/* The held freeze (if any) is no connection's any more: the user's PAUSE or RESUME takes it
 * over, so the holders' end does not undo what the user asked for. */
static bool take_over_hold(struct supervisor *s)
{
        bool held = holders(s) > 0;
        memset(s->pause_held, 0, sizeof(s->pause_held));
        return held;
}

/*
 * PAUSE / RESUME: freeze or thaw every process of the session. Replies "OK", or "ERR <word>"
 * (paused: already; running: not paused; unsupported: no v2 freezer; timeout: the tasks did
 * not all stop, and the session runs on; else an errno number) for the client to word.
 * PAUSE_HOLD (commit --pause) is PAUSE for as long as its connection stays open, shared by
 * every commit that asks meanwhile: the last one's close (or RELEASE) thaws, so a commit
 * killed half-way leaves no frozen session and one commit never thaws another's snapshot.
 */
static void handle_pause(struct supervisor *s, int fd, const char *req)
{
        bool pause = req[0] == 'P', hold = strcmp(req, "PAUSE_HOLD") == 0;
        uint64_t start = now_monotonic_ms();
        if (strcmp(req, "RELEASE") == 0) {
                bool mine = fd < MAX_CLIENTS && s->pause_held[fd];
                if (mine)
                        s->pause_held[fd] = false;
                if (!mine || holders(s) > 0) {
                        send_reply(fd, "OK"); /* taken over, or another commit holds it */
                        return;
                }
        } else if (hold && fd < MAX_CLIENTS && holders(s) > 0) {
                s->pause_held[fd] = true; /* frozen for another commit: held by both now */
                send_reply(fd, "OK");
                return;
        } else if (!hold && take_over_hold(s) && pause) {
                pause_audit(s, true, start); /* frozen already: from now on as the user's */
                send_reply(fd, "OK");
                return;
        }
        int frozen = cgroup_state_frozen(&s->st);
        if (frozen == (pause ? 1 : 0)) {
                send_reply(fd, pause ? "ERR paused" : "ERR running");
                return;
        }
        int r = cgroup_session_freeze(&s->cg, pause);
        char reply[64];
        if (r == -EOPNOTSUPP)
                snprintf(reply, sizeof(reply), "ERR unsupported");
        else if (r == -ETIMEDOUT)
                snprintf(reply, sizeof(reply), "ERR timeout");
        else if (r < 0)
                snprintf(reply, sizeof(reply), "ERR %d", -r);
        else
                snprintf(reply, sizeof(reply), "OK");
        if (r == 0)
                pause_audit(s, pause, start);
        if (r == 0 && hold && fd < MAX_CLIENTS)
                s->pause_held[fd] = true;
        send_reply(fd, reply);
}

/* "RENEW <sec>" or "RENEW_AT <epoch>" (connect --ttl @SECONDS): the ttl to arm, and for the
 * latter the expiry to report, that second itself rather than one the client's start may have
 * moved (0: now + ttl; a time already past renews for one second). */
static bool parse_renew(const char *req, uint64_t *ttl, int64_t *until)
{
        unsigned long long sec;
        long long at;
        *until = 0;
        if (sscanf(req, "RENEW %llu", &sec) == 1) {
                *ttl = sec;
                return true;
        }
        if (sscanf(req, "RENEW_AT %lld", &at) != 1)
                return false;
        int64_t left = at - now_realtime_sec();
        *ttl = left > 0 ? (uint64_t)left : 1;
        *until = left > 0 ? at : 0;
        return true;
}

void supervisor_handle_request(struct supervisor *s, int fd)
{
        char req[1024];
        ssize_t n = RETRY_EINTR(recv(fd, req, sizeof(req) - 1, MSG_DONTWAIT));
        if (n <= 0) {
                if (n == 0 || errno != EAGAIN)
                        close_client(s, fd);
                return;
        }
        req[n] = '\0';
        uint64_t ttl;
        int64_t until;
        char reply[128];

        if (strcmp(req, "EXEC") == 0 || strcmp(req, "HOLD") == 0) {
                /* HOLD: an exec through the init's own server by an sbx from before
                 * HOLDS_FILE, which needs no fds of ours */
                if (fd < MAX_CLIENTS && !s->exec_conn[fd]) {
                        s->exec_conn[fd] = true;
                        s->busy++;
                }
                if (req[0] == 'E')
                        send_session_fds(s, fd);
        } else if (strcmp(req, "PING") == 0) {
                send_reply(fd, "OK");
        } else if (parse_renew(req, &ttl, &until)) {
                (void)supervisor_arm_ttl(s, ttl);
                if (until)
                        s->st.expires_at = until;
                /* renewed after it ran out, while commands still run: it goes on */
                s->expiry_pending = false;
                (void)session_state_write(s->sessfd, &s->st);
                snprintf(reply, sizeof(reply), "OK %lld %llu", (long long)s->st.expires_at,
                         (unsigned long long)s->st.ttl_sec);
                send_reply(fd, reply);
        } else if (strncmp(req, "NET ", 4) == 0) {
                _cleanup_buf_ struct buf b = {0};
                s->net.proxy_fd = s->init.proxy.stop_fd;
                s->net.auditfd = s->auditfd;
                s->net.id = s->st.id;
                s->net.mode = net_mode_name(s->st.net);
                netpolicy_handle(&s->net, req, &b);
                send_reply(fd, b.data ? b.data : "ERR failed");
        } else if (strcmp(req, "LAYER") == 0) {
                if (s->init.layer_fd >= 0)
                        send_reply_fds(fd, "OK", &s->init.layer_fd, 1);
                else
                        send_reply(fd, "ERR none");
        } else if (strcmp(req, "BUSY") == 0) {
                /* `sbx commit`: how many execs and file commands are running now (the
                 * server's execs count as one: their locks tell only that there are some) */
                snprintf(reply, sizeof(reply), "OK %d", s->busy + session_holds_peek(s->holdfd));
                send_reply(fd, reply);
        } else if (strcmp(req, "PAUSE") == 0 || strcmp(req, "RESUME") == 0 ||
                   strcmp(req, "PAUSE_HOLD") == 0 || strcmp(req, "RELEASE") == 0) {
                handle_pause(s, fd, req);
        } else if (strcmp(req, "DESTROY") == 0) {
                audit_end(s->auditfd, s->st.id, "destroyed", NULL);
                /* The answer once nothing of the session runs and its name is free; the
                 * kernel's teardown of what it leaves (its pid namespace, mounts and cgroups)
                 * goes on after it, ~1-2 ms here, under the uid range's lock. */
                bool answered = supervisor_stop(s);
                if (answered)
                        send_reply(fd, "OK");
                supervisor_teardown(s);
                if (!answered)
                        send_reply(fd, "OK");
                _exit(0);
        } else {
                send_reply(fd, "ERR unknown request");
        }
}

int supervisor_accept_client(struct supervisor *s)
{
        int fd = accept4(s->listenfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return -1;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        /* Only the session's owner may talk to it (the runtime dir is 0700 too). */
        if (fd >= MAX_CLIENTS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
            cred.uid != geteuid() || epoll_add(s->epfd, fd) < 0) {
                close(fd);
                return 0;
        }
        s->client[fd] = true;
        return fd;
}

/*
 * Before the TTL ends the session: take the requests already waiting, on connections not yet
 * accepted and on accepted ones whose event comes later in this round, so an exec that sent
 * its HOLD (without waiting for an answer) before the timer fired counts as running. Only
 * pending data is taken here (a peek first): a connection's end is left to its own event.
 */
void supervisor_take_waiting_requests(struct supervisor *s)
{
        int fd;
        while ((fd = supervisor_accept_client(s)) >= 0)
                if (fd > 0)
                        supervisor_handle_request(s, fd);
        for (fd = 0; fd < MAX_CLIENTS; fd++) {
                char c;
                if (s->client[fd] && !s->exec_conn[fd] &&
                    recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
                        supervisor_handle_request(s, fd);
        }
}
