/* SPDX-License-Identifier: MIT */
#pragma once

#include "../session/state.h"
#include "shared/error.h"
#include "cgroup.h"
#include "launch.h"

/* A live session held for the duration of one command (marks it busy for the TTL). */
struct session_ref {
        int sessfd; /* its runtime directory */
        int hold;   /* a shared lock on its HOLDS_FILE (the server path), or -1 */
        int ctl;    /* connection to the supervisor (the join path), kept open while we work */
        int pidfd;  /* the session init */
        int ns[SESSION_NS_COUNT];
        int auditfd; /* the session's audit log, -1 when it cannot be opened */
        int server;  /* connection to the init's exec server, -1 when there is none */
        struct session_state st;
        struct cgroup_session cg; /* its cgroups, looked up once from st */
};
#define SESSION_REF_INIT                                                                           \
        {                                                                                          \
                .sessfd = -1, .hold = -1, .ctl = -1, .pidfd = -1,                                  \
                .ns = {-1, -1, -1, -1, -1, -1, -1}, .auditfd = -1, .server = -1,                   \
                .cg = CGROUP_SESSION_INIT                                                          \
        }

/*
 * Find the session and hold it. via_server: hold its HOLDS_FILE and connect to the init's exec
 * server when it answers (no word to the supervisor); otherwise (or when it does not answer)
 * get the init's pidfd and namespaces from the supervisor, as session_ref_join() does.
 */
int session_ref_open(const char *id_or_name, struct session_ref *s, bool via_server,
                     struct sbx_error *e);
/* The init's pidfd and namespaces, for joining the session from here. */
int session_ref_join(struct session_ref *s, const char *id_or_name, struct sbx_error *e);
void session_ref_close(struct session_ref *s);
