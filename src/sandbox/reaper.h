/* SPDX-License-Identifier: MIT */
/*
 * B, the per-exec reaper (docs/DESIGN.md, "exec"): a child subreaper in the session's pid
 * namespace that reports the command's end on the status socket and kills what the command
 * started when the client hangs up first. It is started either by the client that joined the
 * session (launch/join.c) or by the session init (exec_server.c); what it does once C runs is
 * the same and lives here.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"
#include "shared/macros.h"

/* B -> client over the status socket. */
enum { REPORT_EXIT = 1, REPORT_EXEC_ERROR = 2 };
struct exec_report {
        int32_t kind;
        int32_t status;            /* REPORT_EXIT: the wait status of C */
        struct sbx_wire_error err; /* REPORT_EXEC_ERROR: exit code 125/126/127 */
};

/* What B keeps once C runs; -1 when unused. */
struct reaper_fds {
        int status;        /* B's end of the status socket */
        int out, err, pty; /* read ends, drained after the client left */
        int sigfd;         /* SIGCHLD */
        int errfd;         /* C's failed step, if any (read end) */
};

/*
 * Become B: name, child subreaper, SIGCHLD blocked (set returns it, for C to unblock) and
 * delivered through the returned signalfd. -1 on error.
 */
int reaper_become(sigset_t *set);

/*
 * B's first word on the status socket, before any report: its own pidfd (the client's timeout
 * waits on it), or no fd at all, which asks the client to start over another way (the callers
 * say which).
 */
void reaper_hello(int status_fd, bool retry);

/* The same with B's pidfd, for a B that must clean up when it fails. 0 or -errno. */
int reaper_hello_sent(int status_fd);

/* Kill everything C started (and C): B is a child subreaper, so all of it is B's. */
void reaper_kill_tree(void);

/* B could not start C: say why instead of vanishing. */
_noreturn_ void reaper_fail(int status_fd, const struct sbx_error *ce);

/* Report C's start (or its failed step) and end, then leave with the command's tree. */
_noreturn_ void reaper_watch(const struct reaper_fds *k, pid_t c);
