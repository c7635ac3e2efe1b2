/* SPDX-License-Identifier: MIT */
#pragma once

#include "../session/state.h"
#include "../shared/error.h"
#include "launch.h"

/* A live session held for the duration of one command (marks it busy for the TTL). */
struct session_ref {
        int ctl;   /* connection to the supervisor, kept open while we work */
        int pidfd; /* the session init */
        int ns[SESSION_NS_COUNT];
        int auditfd; /* the session's audit log, -1 when it cannot be opened */
        struct session_state st;
};
#define SESSION_REF_INIT                                                                           \
        {                                                                                          \
                .ctl = -1, .pidfd = -1, .ns = {-1, -1, -1, -1, -1, -1, -1}, .auditfd = -1          \
        }

int session_ref_open(const char *id_or_name, struct session_ref *s, struct sbx_error *e);
void session_ref_close(struct session_ref *s);
