/* SPDX-License-Identifier: MIT */
/* Shared by detach.c (start), detach_keeper.c (the keeper) and detach_ops.c (the rest). */
#pragma once

#include "../session/cmds.h"
#include "../session/state.h"
#include "detach.h"

/* A live session opened for a detached-command operation. */
struct detach_session {
        int sessfd, ctl, cmdsfd; /* cmdsfd -1 when the session has no commands yet */
        struct session_state st;
};
#define DETACH_SESSION_INIT                                                                        \
        {                                                                                          \
                .sessfd = -1, .ctl = -1, .cmdsfd = -1                                              \
        }
void detach_session_close(struct detach_session *s);
/* Open the session (exit 3 when there is none) and its cmds/ (made when create). */
int detach_session_open(const char *session, bool create, struct detach_session *s,
                        struct sbx_error *e);
/* cmds/<cmd>/ of the session: exit 2 for a malformed id, 1 "not_found" when there is none. */
int detach_cmd_open(const struct detach_session *s, const char *session, const char *cmd,
                    int *ret_fd, struct sbx_error *e);
/* Fill *d from the records in cmdfd. */
int detach_info_fill(int cmdfd, const char *id, struct detach_info *d);

/*
 * The keeper, in the grandchild of detach_start (its own session, no terminal): run rq in the
 * session st_id through exec_in_session in a child (the runner) whose stdout and stderr are one
 * pipe, keep that output in cmdfd's segments (cap bytes at most), record the runner's reaper
 * for `kill`, write one byte on ready_fd once the runner is recorded, and at the end the
 * command's state and the audit record. Never returns.
 */
_noreturn_ void detach_keeper_main(const char *st_id, const char *cmd, int cmdfd, int auditfd,
                                   int ready_fd, struct exec_request *rq, uint64_t cap);
