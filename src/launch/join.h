/* SPDX-License-Identifier: MIT */
/* Internals shared by join.c (processes) and relay.c (the client's I/O loop). */
#pragma once

#include <stdint.h>

#include "launch.h"

/* Every fd of one exec; -1 when unused. [0] = read end, [1] = write end. */
struct exec_fds {
        int out[2], err[2], in[2];
        int status[2]; /* [0] client, [1] reaper B */
        int pty_master, pty_slave;
        int null; /* the session's /dev/null */
        int reaper_pidfd; /* B (a child of the session init, not ours) */
};
#define EXEC_FDS_INIT                                                                              \
        {                                                                                          \
                .out = {-1, -1}, .err = {-1, -1}, .in = {-1, -1}, .status = {-1, -1},              \
                .pty_master = -1, .pty_slave = -1, .null = -1, .reaper_pidfd = -1                  \
        }

void exec_fds_close(struct exec_fds *f);

/* B -> client over the status socket. */
enum { REPORT_EXIT = 1, REPORT_EXEC_ERROR = 2 };
struct exec_report {
        int32_t kind;
        int32_t status;    /* REPORT_EXIT: the wait status of C */
        int32_t exit_code; /* REPORT_EXEC_ERROR: 125/126/127 */
        char code[32];
        char message[1024];
};

/* Relay stdin/stdout/stderr (or the pty) until C ends or the timeout hits. */
int relay_run(struct exec_fds *f, const struct exec_request *rq, uint64_t timeout_ms,
              struct exec_result *res, struct sbx_error *e);
