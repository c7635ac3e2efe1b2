/* SPDX-License-Identifier: MIT */
/* Shared by supervisor.c (the session's life) and supervisor_ctl.c (its ctl requests). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "shared/macros.h"
#include "cgroup.h"
#include "launch.h"

#define MAX_CLIENTS 1024

struct supervisor {
        const struct sbx_config *cfg;
        const struct cgroup_plan *plan;
        struct cgroup_session cg;
        int rtfd, sessfd;
        struct session_state st;
        struct session_proc init;
        int epfd, listenfd, timerfd, sigfd;
        int creator;         /* the handshake with `create` until #4, then -1 */
        int auditfd;         /* the session's audit log (O_APPEND) */
        char *audit_path;    /* when [audit] dir is set; borrowed by st */
        int busy;            /* exec connections open (EXEC, and HOLD of old clients) */
        int holdfd;          /* HOLDS_FILE: the execs through the init's server */
        bool expiry_pending; /* the TTL ran out while execs were running */
        unsigned ttl_armed;  /* supervisor_arm_ttl's calls: a RENEW among the waiting requests */
        long look_ms;        /* expiry pending: the next look at HOLDS_FILE, in ms */
        bool exec_conn[MAX_CLIENTS];  /* indexed by fd */
        bool client[MAX_CLIENTS];     /* indexed by fd: an accepted ctl connection */
        bool pause_held[MAX_CLIENTS]; /* indexed by fd: its PAUSE_HOLD ends when it closes */
        struct netpolicy net;         /* the allow list in force (sbx net) */
        bool window_open;             /* the package index is admitted until #4 */
        bool ended_frozen;            /* supervisor_stop froze and killed it, and answered */
};

static inline int epoll_add(int epfd, int fd)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? negerrno() : 0;
}

/* supervisor.c */
/* (Re)start the TTL at ttl_sec from now (0: none) and set st's expiry. 0 or -errno. */
int supervisor_arm_ttl(struct supervisor *s, uint64_t ttl_sec);
/* Kill everything of the session; true: nothing of it runs and it is out of the runtime dir,
 * answer now (supervisor_teardown still follows). */
bool supervisor_stop(struct supervisor *s);
/* Kill and remove everything of the session; the caller exits after. */
void supervisor_teardown(struct supervisor *s);
/* Audit the end (reason, detail may be NULL), tear down and _exit(0). */
_noreturn_ void supervisor_end_session(struct supervisor *s, const char *reason,
                                       const char *detail);
/* Once the TTL ran out: whether an exec still holds the session. */
bool supervisor_execs_running(struct supervisor *s);

/* supervisor_ctl.c */
/* Accept a ctl connection from the session's owner: its fd, 0 when refused, -1 when none waits. */
int supervisor_accept_client(struct supervisor *s);
/* Read and answer one request on fd (DESTROY does not return; an EOF closes fd). */
void supervisor_handle_request(struct supervisor *s, int fd);
/* Before the TTL ends the session: answer the requests that are already waiting. */
void supervisor_take_waiting_requests(struct supervisor *s);
