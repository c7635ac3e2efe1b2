/* SPDX-License-Identifier: MIT */
/*
 * B, the per-exec reaper (docs/DESIGN.md, "exec"): a child subreaper in the session's pid
 * namespace that reports the command's end on the status socket and kills what the command
 * started when the client hangs up first. It is started either by the client that joined the
 * session (launch/join.c) or by the session init (exec_server.c); how it starts C and what it
 * does once C runs is one set-up, reaper_start, and lives here.
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

/*
 * Client -> B over the same socket, one byte a record: nobody reads the caller's end of the
 * command's stdout (stderr) any more (`sbx exec ... | head`). B closes its copy of that read
 * end, as the client does, so that the command's next write to it fails as in a shell pipeline
 * (SIGPIPE, EPIPE) instead of being read and dropped until the command ends.
 */
enum { CLIENT_OUT_GONE = 'o', CLIENT_ERR_GONE = 'e' };

/*
 * Become B: name, child subreaper, SIGCHLD blocked (reaper_start's C unblocks the same set)
 * and delivered through the returned signalfd. -1 on error.
 */
int reaper_become(void);

/*
 * How a B starts C: what differs between the server's B (forked by the init, which has the
 * session's credentials, cgroups and filter already) and the joining client's (born outside,
 * it enters the session's cgroups and locks itself down once C runs). The rest is one set-up,
 * reaper_start.
 */
struct reaper_plan {
        int status;           /* B's end of the status socket */
        int sigfd;            /* SIGCHLD, from reaper_become or the init's own; -1: failed */
        int out, err, pty;    /* read ends B drains after the client left; -1 when unused */
        bool retry_on_eagain; /* no pid left for C: ask the client to start over from outside */
        bool is_init;         /* B is the session's init (`run`): a lost client kills only C */
        /* fork C as fork() does (0 in C), placing it where it belongs */
        pid_t (*fork_command)(void *ctx);
        /* in C: become the command; errw is the failed-step pipe */
        _noreturn_ void (*run_command)(void *ctx, int errw);
        /* B's own steps once C runs, before and after its other fds are closed; NULL: none */
        int (*enter)(void *ctx, struct sbx_error *e);
        int (*lock)(void *ctx, struct sbx_error *e);
        void *ctx;
};

/*
 * Start C, say hello with B's pidfd, and watch C to its end; never returns, except when the
 * plan allows a retry and no pid was left for C: then the client was asked to start over, and
 * B's caller decides whether to leave.
 */
void reaper_start(const struct reaper_plan *p);
