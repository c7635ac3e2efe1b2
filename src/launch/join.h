/* SPDX-License-Identifier: MIT */
/* Internals shared by join.c (processes) and relay.c (the client's I/O loop). */
#pragma once

#include <stdint.h>

#include "../sandbox/reaper.h"
#include "launch.h"

/* Every fd of one exec; -1 when unused. [0] = read end, [1] = write end. */
struct exec_fds {
        int out[2], err[2], in[2];
        int status[2]; /* [0] client, [1] reaper B */
        int pty_master, pty_slave;
        int null;         /* the session's /dev/null */
        int reaper_pidfd; /* B (a child of the session init, not ours) */
};
#define EXEC_FDS_INIT                                                                              \
        {                                                                                          \
                .out = {-1, -1}, .err = {-1, -1}, .in = {-1, -1}, .status = {-1, -1},              \
                .pty_master = -1, .pty_slave = -1, .null = -1, .reaper_pidfd = -1                  \
        }

void exec_fds_close(struct exec_fds *f);

/* The command's pipes (host side; none with a pty). */
int exec_host_pipes(const struct exec_request *rq, struct exec_fds *f, struct sbx_error *e);
/* The command's environment: the session's, the request's additions, TERM with a pty. */
char **exec_env(const struct exec_request *rq, const struct session_state *st);
/* RLIMIT_FSIZE for a session whose writable layer holds disk bytes (0: none). */
uint64_t exec_fsize_for_disk(uint64_t disk);
struct exec_wire;
/*
 * The one request builder of both exec paths: what the init's server is sent, and what the
 * join path builds C's spec from (exec_spec_from_wire). w points into rq, env and f.
 */
void exec_wire_from_request(const struct exec_request *rq, const struct session_state *st,
                            char **env, const struct exec_fds *f, struct exec_wire *w);
/* Set the pty's size from the caller's terminal, when it has one. */
void exec_pty_size_from_caller(int pty_master);

struct cgroup_exec;
/*
 * Once B runs: relay until C ends or the timeout hits, fill res (duration since start, OOM
 * kill), close f and finish cx.
 */
int exec_relay_finish(struct exec_fds *f, struct cgroup_exec *cx, const struct session_state *st,
                      const struct exec_request *rq, uint64_t start, struct exec_result *res,
                      struct sbx_error *e);

/* Relay stdin/stdout/stderr (or the pty) until C ends or the timeout hits. */
int relay_run(struct exec_fds *f, const struct exec_request *rq, uint64_t timeout_ms,
              struct exec_result *res, struct sbx_error *e);
