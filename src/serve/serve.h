/* SPDX-License-Identifier: MIT */
/*
 * `sbx serve`: the OpenSandbox lifecycle and execd HTTP API as a front-end beside the CLI and
 * MCP (docs/design/serve.md). HTTP itself (parsing, keep-alive, chunked coding, connection
 * threads, multipart bodies) is libmicrohttpd's; this layer routes a request to a handler, and
 * every handler is a thin adapter: a session operation is done by running this same binary's
 * command for it (serve_sbx_run / serve_sbx_spawn), never coded a second time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/buf.h"
#include "shared/error.h"

/* What `sbx serve` was started with (cli/cmd_serve.c fills it). */
struct serve_options {
        const char *listen;      /* "ADDR:PORT" (default 127.0.0.1:8083) */
        const char *api_key;     /* NULL: serve makes one (key.c; on a loopback address only) */
        const char *config_file; /* --config, handed on to every sbx command serve runs */
};

/* Run the server until SIGINT or SIGTERM: 0, or -errno with *e set (nothing bound then). */
int serve_run(const struct serve_options *o, struct sbx_error *e);

struct serve;      /* the server (server.c) */
struct serve_conn; /* one request's libmicrohttpd connection */

/* One request, handed to a handler with its body complete. */
struct serve_request {
        struct serve *srv;
        struct serve_conn *conn;
        const char *method; /* "GET", "POST", ... */
        /* The path below the route's prefix: "/files/info" for an execd route of
         * /sandboxes/{id}/proxy/44772/files/info, "/sandboxes/x" for /v1/sandboxes/x. */
        const char *path;
        const char *params[4]; /* the path's {} segments, in order (URL-decoded) */
        size_t n_params;
        /* The body in memory (NUL-terminated; NULL when empty); for a route with parts
         * (struct serve_parts) none: the parts' context and how their parse ended instead. */
        const char *body;
        size_t body_len;
        void *parts;
        int parts_result;
        /* execd routes: the session's id (the route's access token has been checked) */
        const char *session_id;
};

/* A request header or query argument (NULL when absent); valid during the handler. */
const char *serve_header(const struct serve_request *rq, const char *name);
const char *serve_query(const struct serve_request *rq, const char *name);
/* Each value of a query argument that may repeat (?state=a&state=b): fn is called per value. */
void serve_query_each(const struct serve_request *rq, const char *name,
                      void (*fn)(void *ctx, const char *value), void *ctx);

/*
 * A route whose body is a multipart/form-data form, taken apart by libmicrohttpd as it arrives
 * (an upload: the body is never held whole, up to [serve] max_upload). make() gives the
 * request's context (NULL: out of memory); part() is called with each piece of each part in
 * order (off: the offset of data within its part; a part comes in one or more pieces) and
 * returns 0 to go on or -errno to stop (the rest of the body is read and dropped); drop() ends
 * the context. The handler finds the context in rq->parts and in rq->parts_result 0, -EBADMSG
 * for a body that is not such a form, or part()'s error.
 */
typedef int (*serve_part_fn)(void *ctx, const char *name, const char *filename,
                             const char *content_type, uint64_t off, const char *data, size_t size);
struct serve_parts {
        void *(*make)(void);
        serve_part_fn part;
        void (*drop)(void *ctx);
};

/*
 * A streamed body (SSE, a download): read() fills buf with up to max bytes of the body from
 * offset pos and returns how many, SERVE_STREAM_END at the end, SERVE_STREAM_ERROR to abort
 * the connection; it may block (each connection has its own thread). free() is called once
 * when the response is done, also when the client went away (the stream's cleanup, e.g.
 * killing a foreground command).
 */
#define SERVE_STREAM_END ((ssize_t)-1)
#define SERVE_STREAM_ERROR ((ssize_t)-2)
struct serve_stream {
        ssize_t (*read)(void *ctx, uint64_t pos, char *buf, size_t max);
        void (*free)(void *ctx);
        void *ctx;
        uint64_t size; /* UINT64_MAX: unknown (chunked) */
};

#define SERVE_MAX_HEADERS 8

/* The handler's answer. Zeroed before the handler runs (status 0 = 500). */
struct serve_response {
        unsigned status;
        const char *content_type;   /* static; NULL: application/json when body, none else */
        struct buf body;            /* an empty body is sent with Content-Length: 0 */
        struct serve_stream stream; /* stream.read set: the body is this stream instead */
        struct {
                char *name, *value; /* owned */
        } headers[SERVE_MAX_HEADERS];
        size_t n_headers;
};

/* Add a header: 0, -ENOMEM, or -E2BIG past SERVE_MAX_HEADERS. */
int serve_add_header(struct serve_response *rs, const char *name, const char *fmt, ...)
    _printf_(3, 4);
/* A JSON answer: status and body taken from b (b is emptied). */
int serve_reply_json(struct serve_response *rs, unsigned status, struct buf *b);
/* An empty answer (Content-Length: 0). */
int serve_reply_empty(struct serve_response *rs, unsigned status);
/* The error body every non-2xx answer has: {"code":code,"message":message}. */
int serve_reply_error(struct serve_response *rs, unsigned status, const char *code, const char *fmt,
                      ...) _printf_(4, 5);

/* A handler: 0 with *rs filled, or -errno (answered 500 INTERNAL_ERROR). */
typedef int (*serve_handler_fn)(struct serve_request *rq, struct serve_response *rs);

/* pattern: a path where "{}" stands for one segment ("/command/status/{}"). */
struct serve_route {
        const char *method;
        const char *pattern;
        serve_handler_fn fn;
        const struct serve_parts *parts; /* NULL: the body is held in memory, up to 1 MiB */
};

/* The route tables, each ended by an entry with a NULL method. */
extern const struct serve_route serve_lifecycle_routes[]; /* under / and /v1 (lifecycle.c) */
extern const struct serve_route serve_execd_routes[];     /* behind the proxy (execd.c) */
extern const struct serve_route serve_file_routes[];      /* behind the proxy (files*.c) */

/* A memfd holding text, at its start: the standard input of a child sbx, for what must not be
 * in its command line (the environment of --env-file -, world-readable in /proc/PID/cmdline
 * otherwise). The fd, or -errno. */
int serve_text_fd(const char *text);
/*
 * Run `sbx ARGV...` (this binary, with serve's --config, and the API key removed from its
 * environment) to completion: stdin from in_fd (-1: /dev/null), stdout into out (at most
 * max_out bytes; more fails with -EFBIG), stderr into err (may be NULL). *ret_exit: its exit
 * code (128+N for signal N). 0 or -errno when it could not be run.
 */
int serve_sbx_run(const struct serve *srv, char *const *argv, int in_fd, struct buf *out,
                  size_t max_out, struct buf *err, int *ret_exit);

/* A started `sbx ARGV...` with its output on pipes (serve_sbx_spawn). */
struct serve_child {
        pid_t pid;
        int pidfd;
        int out_fd; /* its stdout (and stderr too when merged) */
        int err_fd; /* its stderr, -1 when merged */
};
#define SERVE_CHILD_INIT                                                                           \
        {                                                                                          \
                .pid = -1, .pidfd = -1, .out_fd = -1, .err_fd = -1                                 \
        }
int serve_sbx_spawn(const struct serve *srv, char *const *argv, int in_fd, bool merge_stderr,
                    struct serve_child *ret);
/* Wait for it (SIGKILL first when kill is set): its exit code as serve_sbx_run; closes all. */
int serve_child_finish(struct serve_child *c, bool kill);

/*
 * Answer a failed sbx command from its --json output ({"error":{"code","message"}}): 404
 * SANDBOX_NOT_FOUND for exit 3, 400 for usage errors, 409 for a state conflict, 501 for what
 * the host cannot do, 500 otherwise.
 */
/* The code and message of an sbx --json error document in out (left as they are when absent). */
void serve_sbx_error_fields(const struct buf *out, char *code, size_t code_n, char *msg,
                            size_t msg_n);
int serve_reply_sbx_error(struct serve_response *rs, int exit_code, const struct buf *out,
                          const struct buf *err);
