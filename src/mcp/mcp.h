/* SPDX-License-Identifier: MIT */
/*
 * `sbx mcp`: a Model Context Protocol server on stdio (JSON-RPC 2.0, one message a line).
 *
 *   cmd_mcp.c    the loop: bounded line reader, signals, the sessions to destroy at the end
 *   mcp_rpc.c    one message: JSON-RPC framing and errors, initialize, ping, tools/list
 *   mcp_call.c   tools/call: arguments checked against the tool's schema, the sbx command
 *                line built from them, the result made from the command's --json output
 *   mcp_spawn.c  running that command: sbx's own binary, argv only (no shell), inputs on
 *                memfds, output read bounded, nothing else of the server inherited
 *   mcp_limits.c the operator's limits as a ceiling: a model may tighten them, never loosen
 *   mcp_sessions.c the sessions this server created: the only ones its tools act on (unless
 *                --any-session), destroyed at the end
 *
 * Requests are served one at a time, in order. A tool call runs sbx itself (/proc/self/exe)
 * with --json, so the server has exactly the CLI's behaviour and checks.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/buf.h"
#include "tools.h"

#define MCP_MAX_LINE (4u << 20)    /* a longer request is refused (-32600) */
#define MCP_MAX_OUTPUT (16u << 20) /* a longer command output is an error result */
#define MCP_MAX_STDERR (64u << 10) /* the rest of a command's stderr is dropped */
#define MCP_MAX_DEPTH 64           /* JSON nesting */
#define MCP_PROTOCOL_LATEST "2025-06-18"

struct mcp_run;

/* The client's bytes read and not yet handled. */
struct mcp_reader {
        struct buf pending;
        size_t handled; /* pending[0, handled) is being or has been handled */
        bool skipping;  /* inside a line that was too long: drop up to its newline */
        bool eof;
};

/* A session created through this server: its id, and the name the model gave it (or NULL). */
struct mcp_session {
        char *id;
        char *name;
};

struct mcp_server {
        const char *config_file;  /* --config FILE, passed on to every command */
        bool any_session;         /* --any-session: also act on sessions not created here */
        struct sbx_config limits; /* the operator's config: the ceiling of a model's limits */
        int sigfd;                /* signalfd of SIGTERM, SIGINT, SIGHUP (blocked) */
        int in_fd;                /* the client's messages */
        int out_fd;
        bool stopping;                /* a signal arrived: finish and clean up */
        struct mcp_reader in;         /* also read while a command runs, for cancellations */
        json_object *current_id;      /* the id of the tools/call being served, NULL between */
        struct mcp_session *sessions; /* created here and not destroyed through a tool */
        size_t n_sessions;
};

/* Read what the client sent into s->in (one read). 0 or -errno. */
int mcp_read_input(struct mcp_server *s);
/* Is the line a notifications/cancelled of the request with this id? */
bool mcp_is_cancel_of(const char *line, size_t len, json_object *id);

/* Handle one message (a line without its newline); writes at most one response (none for a
 * request the client cancelled). Returns 0, or -errno when the response could not be written
 * (the client is gone). The line is not used after it was parsed (s->in may move). */
int mcp_handle_line(struct mcp_server *s, const char *line, size_t len);
/* Write a JSON-RPC error response with id (NULL: null). */
int mcp_send_error(struct mcp_server *s, json_object *id, int code, const char *message);

/*
 * tools/call: check args against t's schema (on a violation: -EINVAL with the reason in
 * why), run the command, and put the CallToolResult object in *ret (also when the command
 * failed: isError); -ECANCELED when the client cancelled it. Tracks the sessions that create
 * makes and destroy ends.
 */
int mcp_tool_call(struct mcp_server *s, const struct tool *t, json_object *args, json_object **ret,
                  char *why, size_t why_len);

/* The schema check of tools/call: 0, or -EINVAL with the reason in why. */
int mcp_check_args(const struct tool *t, json_object *args, char *why, size_t n);
/* The sbx command line for checked args (heap, NULL-terminated; NULL when out of memory);
 * the inputs for fds 0, 3 and 4 are set in r (pointing into args). */
char **mcp_command_line(const struct mcp_server *s, const struct tool *t, json_object *args,
                        struct mcp_run *r);
void mcp_argv_free(char **argv);
static inline void mcp_argv_freep(char ***argv)
{
        mcp_argv_free(*argv);
}

/*
 * The limits a model asks for (create's memory, cpus, pids, disk, nofile, ttl, timeout;
 * connect's ttl; exec's timeout) against the operator's (op): "unlimited", a ttl of 0 and a
 * value above the operator's are refused (-EPERM, the reason in why). A value that does not
 * parse is left to the schema check and to sbx itself.
 */
int mcp_check_limits(const struct sbx_config *op, const struct tool *t, json_object *args,
                     char *why, size_t n);

/*
 * The session argument of a tool call: an id or name of a session created here is replaced by
 * its id (names are resolved in this server's table, never by sbx); any other is refused
 * (-EPERM, the reason in why) unless s->any_session. 0 when the tool takes no session.
 */
int mcp_resolve_session(const struct mcp_server *s, const struct tool *t, json_object *args,
                        char *why, size_t n);
/* After a tool call with result o: remember a session create made, forget one destroy ended. */
void mcp_track_sessions(struct mcp_server *s, const struct tool *t, json_object *args,
                        json_object *o);
/* Destroy every session created by this server (the end of the connection). */
void mcp_destroy_sessions(struct mcp_server *s);

/* One sbx command to run. */
struct mcp_run {
        char **argv;       /* argv[0] is "sbx"; run as /proc/self/exe */
        const char *in[3]; /* fd 0, 3, 4 contents (NULL: /dev/null, or no fd) */
        size_t in_len[3];
        struct buf out; /* its stdout, at most MCP_MAX_OUTPUT */
        struct buf err; /* its stderr, at most MCP_MAX_STDERR (warnings for the result) */
        bool out_overflow;
        int status;       /* waitpid status */
        bool cleanup;     /* the final destroy: not interrupted by signals */
        bool interrupted; /* stopped because the server is stopping */
        bool cancelled;   /* stopped because the client cancelled the request */
};

/* Run r->argv; returns 0 when it ran (whatever its exit status) or -errno. */
int mcp_spawn(struct mcp_server *s, struct mcp_run *r);
