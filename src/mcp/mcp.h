/* SPDX-License-Identifier: MIT */
/*
 * `sbx mcp`: a Model Context Protocol server on stdio (JSON-RPC 2.0, one message a line).
 *
 *   mcp_loop.c   the loop: bounded line reader, signals, the running calls' pipes, one poll
 *   mcp_calls.c  the calls in flight: queued, started, progress, cancelled, answered
 *   mcp_rpc.c    one message: JSON-RPC framing and errors, initialize, ping, tools/list
 *   mcp_call.c   tools/call: arguments checked against the tool's schema, the sbx command
 *                line built from them, the result made from the command's --json output
 *   mcp_output.c what a model gets: text capped (head and tail kept), images as images
 *   mcp_spawn.c  running that command: sbx's own binary, argv only (no shell), inputs on
 *                memfds, output read bounded, nothing else of the server inherited
 *   mcp_limits.c the operator's limits as a ceiling: a model may tighten them, never loosen
 *   mcp_sessions.c the sessions made through MCP: the only ones its tools act on (unless
 *                --any-session); they live by their TTL (or end with the connection, with
 *                --destroy-on-close)
 *
 * Tool calls run concurrently (up to MCP_MAX_RUNNING), in one thread: every pipe is in one
 * poll, and only that thread writes to stdout, one whole message at a time. A call waits only
 * for earlier create and destroy calls (they change which sessions exist). A tool call runs
 * sbx itself (/proc/self/exe) with --json, so the server has exactly the CLI's behaviour and
 * checks.
 */
#pragma once

#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/buf.h"
#include "tools.h"

#define MCP_MAX_LINE (4u << 20)    /* a longer request is refused (-32600) */
#define MCP_MAX_OUTPUT (16u << 20) /* a longer command output is an error result */
#define MCP_MAX_STDERR (64u << 10) /* the rest of a command's stderr is dropped */
#define MCP_MAX_DEPTH 64           /* JSON nesting */
#define MCP_PROTOCOL_LATEST "2025-06-18"
#define MCP_MAX_RUNNING 16               /* commands at once; later calls wait their turn */
#define MCP_MAX_CALLS 128                /* calls in flight; more are refused (-32603) */
#define MCP_PROGRESS_MS 1000             /* notifications/progress of a call with a progressToken */
#define MCP_DEFAULT_MAX_TEXT (64u << 10) /* what a model reads of one result (--max-output) */

struct mcp_run;
struct mcp_call;

/* The client's bytes read and not yet handled. */
struct mcp_reader {
        struct buf pending;
        bool skipping; /* inside a line that was too long: drop up to its newline */
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
        bool destroy_on_close;    /* --destroy-on-close: end this connection's sessions */
        size_t max_text;          /* --max-output: the cap of a result's text */
        struct sbx_config limits; /* the operator's config: the ceiling of a model's limits */
        int sigfd;                /* signalfd of SIGTERM, SIGINT, SIGHUP (blocked) */
        int in_fd;                /* the client's messages */
        int out_fd;
        bool stopping; /* a signal arrived: finish and clean up */
        struct mcp_reader in;
        struct mcp_call *calls[MCP_MAX_CALLS]; /* in flight, in the order they came */
        size_t n_calls;
        struct mcp_session *sessions; /* created on this connection, not destroyed by a tool */
        size_t n_sessions;
};

/* Serve until the client's EOF (and its calls are answered) or a signal. 0 or -errno. */
int mcp_serve(struct mcp_server *s);

/* Handle one message (a line without its newline): answer it, or queue its tool call.
 * Returns 0, or -errno when a response could not be written (the client is gone). */
int mcp_handle_line(struct mcp_server *s, const char *line, size_t len);
/* Write a JSON-RPC error response with id (NULL: null), a result, a notification. */
int mcp_send_error(struct mcp_server *s, json_object *id, int code, const char *message);
int mcp_send_result(struct mcp_server *s, json_object *id, json_object *result);
int mcp_send_notification(struct mcp_server *s, const char *method, json_object *params);

/* The calls in flight (mcp_calls.c). */
/* Queue a tools/call (t with args, both referenced; token: the progressToken or NULL). */
int mcp_calls_add(struct mcp_server *s, json_object *id, const struct tool *t, json_object *args,
                  json_object *token);
/* notifications/cancelled: stop the call with this id, which gets no response. */
void mcp_calls_cancel(struct mcp_server *s, json_object *id);
/* Start what may start; answer what ended; send what progress is due. 0 or -errno. */
int mcp_calls_step(struct mcp_server *s);
/* Their pollfds (3 per running call) into p (room for 3 * MCP_MAX_RUNNING); how many. */
size_t mcp_calls_pollfds(struct mcp_server *s, struct pollfd *p);
/* Read what the polled fds have; ms until the next timer (-1: none). */
void mcp_calls_events(struct mcp_server *s, const struct pollfd *p);
int mcp_calls_timeout(struct mcp_server *s);
/* Stop every call (the server is stopping): no responses; queued ones are dropped. */
void mcp_calls_stop_all(struct mcp_server *s);
/* Free every call, its command killed and reaped when it still runs. */
void mcp_calls_release(struct mcp_server *s);

/*
 * tools/call. mcp_tool_check, as it arrives: the limits (a refusal: 1 with the result in
 * *ret) and the schema (a violation: -EINVAL with the reason in why). Then in two halves
 * around the command. mcp_tool_begin: the session check (a refusal: 1 with the result in
 * *ret), then the command started in c->run (0). mcp_tool_end, once it ended: the
 * CallToolResult in *ret (also when the command failed: isError), 1 when a second command
 * was started instead (read of an image), -ECANCELED when the client cancelled it. Tracks the
 * sessions that create makes and destroy ends.
 */
int mcp_tool_check(struct mcp_server *s, const struct tool *t, json_object *args, json_object **ret,
                   char *why, size_t why_len);
int mcp_tool_begin(struct mcp_server *s, struct mcp_call *c, json_object **ret);
int mcp_tool_end(struct mcp_server *s, struct mcp_call *c, json_object **ret);

/* A result for a model (mcp_output.c): its text items capped at max bytes, the head and the
 * tail kept around a line saying how much was cut; exec's output in structuredContent too,
 * other structuredContent dropped when larger than max. */
void mcp_output_cap(json_object *result, size_t max);
/* The output of `sbx read --binary --json`: an image result when the content is a PNG, JPEG,
 * GIF or WebP (by its magic bytes), else NULL. */
json_object *mcp_output_image(json_object *o);
/* The text of a scalar argument as it goes on the command line ("100", "0.5", "10m"); false
 * when it is not a string or a number. */
bool mcp_arg_text(json_object *v, char *out, size_t n);

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
/* After a tool call with result o: mark a session create made as MCP's and remember it; forget
 * one destroy ended. */
void mcp_track_sessions(struct mcp_server *s, const struct tool *t, json_object *args,
                        json_object *o);
/* Destroy every session created on this connection (--destroy-on-close); forget them. */
void mcp_destroy_sessions(struct mcp_server *s);
void mcp_forget_sessions(struct mcp_server *s);

/* One sbx command to run. */
struct mcp_run {
        char **argv;       /* argv[0] is "sbx"; run as /proc/self/exe */
        const char *in[3]; /* fd 0, 3, 4 contents (NULL: /dev/null, or no fd) */
        char *env_json;    /* an env argument as a JSON object, fd 3's content (owned) */
        size_t in_len[3];
        struct buf out; /* its stdout, at most MCP_MAX_OUTPUT */
        struct buf err; /* its stderr, at most MCP_MAX_STDERR (warnings for the result) */
        bool out_overflow, err_overflow;
        int status;       /* waitpid status */
        bool cleanup;     /* the final destroy: not interrupted by signals */
        bool interrupted; /* stopped because the server is stopping */
        bool cancelled;   /* stopped because the client cancelled the request */
        /* while it runs */
        pid_t pid; /* 0: not started, or reaped */
        int pidfd, out_fd, err_fd;
        uint64_t deadline; /* when SIGKILL follows SIGTERM (0: not stopping) */
        bool exited;
};

/* One tools/call in flight. */
struct mcp_call {
        json_object *id, *args, *token; /* token: the progressToken, or NULL */
        const struct tool *tool;
        char **argv;
        struct mcp_run run;
        bool started, cancelled, binary_retry;
        uint64_t started_ms, next_progress_ms;
        int64_t progress;
};

/* Start r->argv (0 or -errno); its pollfds (3, fd -1 where none); handle them: 1 when it
 * ended and was reaped, 0 while it runs, -errno (it is killed and reaped then). */
int mcp_run_start(struct mcp_run *r);
void mcp_run_pollfds(const struct mcp_run *r, struct pollfd p[3]);
int mcp_run_events(struct mcp_run *r, const struct pollfd p[3]);
/* SIGTERM now, SIGKILL after a grace time; ms until then (-1: no timer; past it: SIGKILL). */
void mcp_run_stop(struct mcp_run *r);
int mcp_run_timeout(struct mcp_run *r);
/* Kill and reap it, close its fds, free its buffers. */
void mcp_run_release(struct mcp_run *r);
/* Run r->argv to its end (the clean-up at exit); 0 when it ran, or -errno. */
int mcp_spawn(struct mcp_server *s, struct mcp_run *r);
