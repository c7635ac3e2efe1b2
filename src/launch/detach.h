/* SPDX-License-Identifier: MIT */
/*
 * Detached commands (`sbx exec -d`, ps, logs, wait, kill): the one layer that the CLI, the MCP
 * server and the HTTP front-end call.
 *
 * A detached command is run by a keeper: a host-side process of its own (double fork + setsid),
 * outside the sandbox, that runs the command through the same path as `sbx exec` and writes
 * its combined output and its state into the session's runtime directory ($RT/<id>/cmds/<cmd>/),
 * where the command cannot reach them. The keeper outlives the client that started it; it and
 * everything it wrote go with the session (destroy, TTL, a crashed supervisor).
 *
 * Every function takes the session's id or name, checks that it is alive (exit 3 otherwise)
 * and a command id (exit 2 when malformed, exit 1 code "not_found" when the session has no
 * such command). All return 0 or -errno with *e filled (shared/error.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/buf.h"
#include "shared/error.h"
#include "launch.h"

/* A command id: "c" and a decimal number, unique in its session, never reused in it. */
#define DETACH_ID_MAX 16
/* Default cap on the output kept per command (exec -d --max-output): the oldest bytes go. */
#define DETACH_OUTPUT_CAP_DEFAULT (UINT64_C(8) << 20)
/* How many commands a session keeps: a new one removes the oldest finished one beyond this;
 * when they all still run, the start is refused (exit 1, code "limit"). */
#define DETACH_KEPT_MAX 32

enum detach_state { DETACH_RUNNING, DETACH_EXITED, DETACH_KILLED };

/* One command as `ps` shows it. */
struct detach_info {
        char id[DETACH_ID_MAX];
        char **argv;             /* owned, NULL-terminated */
        enum detach_state state; /* KILLED: it ended after `kill` signalled it */
        int exit_code;           /* when not running: exec's codes (124, 128+N, 125...) */
        bool timed_out;
        int64_t started_ms;     /* wall clock, ms since the epoch */
        uint64_t duration_ms;   /* so far while it runs */
        uint64_t output_bytes;  /* everything it wrote: the cursor at the end of its output */
        uint64_t dropped_bytes; /* the oldest bytes no longer kept (below this, no cursor) */
        char error[256];        /* why sbx could not run it (exit 125), else "" */
};
void detach_info_free(struct detach_info *d);
void detach_info_list_free(struct detach_info *d, size_t n);

/* Whether s is a well-formed command id (before it touches a path). */
bool detach_id_valid(const char *s);

/*
 * Start rq in the session: make its record, start its keeper, and return its id in ret_id as
 * soon as the keeper runs (not waiting for the command). rq->max_output is the output cap (0:
 * DETACH_OUTPUT_CAP_DEFAULT); rq->capture, interactive and tty must be off (exit 2 otherwise).
 * The command's own failure to start (126, 127) shows later in its state, not here.
 */
int detach_start(const char *session, const struct exec_request *rq, char ret_id[DETACH_ID_MAX],
                 struct sbx_error *e);

/* The session's commands, oldest first; *ret (caller frees with detach_info_list_free). */
int detach_list(const char *session, struct detach_info **ret, size_t *ret_n, struct sbx_error *e);

/* One command's state. */
int detach_status(const char *session, const char *cmd, struct detach_info *ret,
                  struct sbx_error *e);

/*
 * Read the command's output from byte cursor (an absolute offset in everything it wrote),
 * at most max bytes (0: all there is), appended to out. wait_ms: when there is nothing at
 * cursor yet and the command still runs, wait up to that long for more (-1: without bound).
 * *ret_next is the cursor after what was read; *ret_dropped the bytes between cursor and the
 * oldest kept byte that are lost (the caller shows a marker); *ret_ended when the command has
 * ended and everything up to *ret_next is all there is. A cursor past the end of its output is
 * an error (exit 2, code "usage").
 */
int detach_read(const char *session, const char *cmd, uint64_t cursor, size_t max, int wait_ms,
                struct buf *out, uint64_t *ret_next, uint64_t *ret_dropped, bool *ret_ended,
                struct sbx_error *e);

/*
 * Wait until the command ends (wait_ms -1: without bound) and fill *ret. 0 when it ended, 1
 * when it still runs after wait_ms. The session ending meanwhile: exit 3.
 */
int detach_wait(const char *session, const char *cmd, int wait_ms, struct detach_info *ret,
                struct sbx_error *e);

/*
 * Send sig to the command's process group (what it started in a group of its own is not
 * reached; destroy ends everything). A command that has ended: exit 1, code "not_running".
 */
int detach_kill(const char *session, const char *cmd, int sig, struct sbx_error *e);

/* A signal by name ("TERM", "SIGTERM", case-insensitive) or number (1-64): 0 or -EINVAL. */
int detach_signal_parse(const char *s, int *ret_sig);

/* "running", "exited", "killed". */
const char *detach_state_name(enum detach_state s);
