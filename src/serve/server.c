/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server: libmicrohttpd with one thread per connection (a handler may block on a
 * command, and a client that sends slowly holds only its own thread), request bodies collected
 * with a bound, one route per request, and the handler's answer turned into a response.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared/util.h"
#include "command.h"
#include "files.h"
#include "form.h"
#include "serve-internal.h"

/* Connections at a time, and how long one may stay idle (also a client that sends its
 * headers or body too slowly) before it is dropped. */
#define MAX_CONNECTIONS 512
#define IDLE_TIMEOUT_SEC 60

struct req_state {
        const struct serve_route *route;
        struct serve_request rq;
        struct serve_conn conn;
        char *path_buf;
        struct buf body;
        struct serve_form *form; /* a route with parts: its body, taken apart as it arrives */
        uint64_t body_len;
        bool too_large;
};

static void req_state_free(struct req_state *st)
{
        if (!st)
                return;
        free(st->path_buf);
        buf_freep(&st->body);
        serve_form_free(st->form);
        free(st);
}

static enum MHD_Result queue(struct serve *srv, struct MHD_Connection *c, struct serve_response *rs)
{
        const struct mhd_lib *m = srv->mhd;
        struct MHD_Response *resp;
        if (rs->status == 0)
                serve_reply_internal(rs, -EIO);
        if (rs->stream.read) {
                resp = m->create_response_from_callback(
                    rs->stream.size == UINT64_MAX ? MHD_SIZE_UNKNOWN : rs->stream.size, 16384,
                    rs->stream.read, rs->stream.ctx, rs->stream.free);
                if (!resp && rs->stream.free)
                        rs->stream.free(rs->stream.ctx);
                rs->stream.read = NULL;
        } else if (rs->body.len > 0) {
                resp = m->create_response_from_buffer(rs->body.len, rs->body.data,
                                                      MHD_RESPMEM_MUST_FREE);
                if (resp)
                        rs->body = (struct buf){0};
        } else {
                resp = m->create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                /* libmicrohttpd leaves Content-Length out of a 204, as RFC 9110 allows; the
                 * OpenSandbox TypeScript SDK fails on an empty answer without it */
                if (resp && rs->status == 204 &&
                    m->set_response_options(resp, MHD_RF_INSANITY_HEADER_CONTENT_LENGTH,
                                            MHD_RO_END) == MHD_YES)
                        m->add_response_header(resp, "Content-Length", "0");
        }
        if (!resp) {
                serve_response_clear(rs);
                return MHD_NO;
        }
        const char *ctype = rs->content_type;
        if (!ctype && (rs->body.len > 0 || rs->status >= 300))
                ctype = "application/json";
        if (ctype)
                m->add_response_header(resp, "Content-Type", ctype);
        for (size_t i = 0; i < rs->n_headers; i++)
                m->add_response_header(resp, rs->headers[i].name, rs->headers[i].value);
        enum MHD_Result ok = m->queue_response(c, rs->status, resp);
        m->destroy_response(resp);
        serve_response_clear(rs);
        return ok;
}

static enum MHD_Result reply_now(struct serve *srv, struct MHD_Connection *c, unsigned status,
                                 const char *code, const char *message)
{
        struct serve_response rs = {0};
        serve_reply_error(&rs, status, code, "%s", message);
        return queue(srv, c, &rs);
}

/* The largest body a route takes: an upload's [serve] max_upload, else SERVE_MAX_BODY. */
static uint64_t body_limit(const struct serve *srv, const struct serve_route *route)
{
        return route->parts ? srv->max_upload : SERVE_MAX_BODY;
}

/* The first call for a request: route it and check its size before any body is read. */
static enum MHD_Result begin(struct serve *srv, struct MHD_Connection *c, const char *url,
                             const char *method, void **con_cls)
{
        struct req_state *st = calloc(1, sizeof(*st));
        if (!st)
                return MHD_NO;
        st->conn.c = c;
        st->rq = (struct serve_request){.srv = srv, .conn = &st->conn, .method = method};
        *con_cls = st;
        st->path_buf = strdup(url);
        if (!st->path_buf)
                return MHD_NO;
        struct serve_response rs = {0};
        st->route = serve_route_find(srv, &st->rq, st->path_buf, &rs);
        if (!st->route)
                return queue(srv, c, &rs);
        const char *cl = srv->mhd->lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > body_limit(srv, st->route))
                return reply_now(srv, c, 413, "PAYLOAD_TOO_LARGE",
                                 "the request body is larger than this route accepts");
        if (st->route->parts && !(st->form = serve_form_begin(srv, c, st->route->parts, &st->rq)))
                return MHD_NO;
        return MHD_YES;
}

/* A piece of the body: into memory, or through the form's parser for a route with parts. */
static int take_body(struct serve *srv, struct req_state *st, const char *data, size_t size)
{
        if (st->too_large || st->body_len + size > body_limit(srv, st->route)) {
                st->too_large = true;
                return 0;
        }
        st->body_len += size;
        if (!st->route->parts)
                return buf_append(&st->body, data, size);
        serve_form_feed(st->form, data, size);
        return 0; /* after an error, the rest is read and dropped: the handler answers it */
}

static enum MHD_Result dispatch(struct serve *srv, struct MHD_Connection *c, struct req_state *st)
{
        if (st->too_large)
                return reply_now(srv, c, 413, "PAYLOAD_TOO_LARGE",
                                 "the request body is larger than this route accepts");
        struct serve_request *rq = &st->rq;
        if (st->form)
                serve_form_end(st->form);
        rq->body = st->body.data;
        rq->body_len = st->body.len;
        struct serve_response rs = {0};
        int r = st->route->fn(rq, &rs);
        if (r < 0) {
                serve_response_clear(&rs);
                serve_reply_internal(&rs, r);
        }
        return queue(srv, c, &rs);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
        (void)version;
        struct serve *srv = cls;
        struct req_state *st = *con_cls;
        if (!st)
                return begin(srv, c, url, method, con_cls);
        if (*upload_data_size > 0) {
                int r = take_body(srv, st, upload_data, *upload_data_size);
                *upload_data_size = 0;
                return r < 0 ? MHD_NO : MHD_YES;
        }
        return dispatch(srv, c, st);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        (void)cls, (void)c, (void)toe;
        req_state_free(*con_cls);
        *con_cls = NULL;
}

const char *serve_header(const struct serve_request *rq, const char *name)
{
        return rq->srv->mhd->lookup_connection_value(rq->conn->c, MHD_HEADER_KIND, name);
}

const char *serve_query(const struct serve_request *rq, const char *name)
{
        return rq->srv->mhd->lookup_connection_value(rq->conn->c, MHD_GET_ARGUMENT_KIND, name);
}

struct each_ctx {
        const char *name;
        void (*fn)(void *ctx, const char *value);
        void *ctx;
};

static enum MHD_Result each_value(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
        (void)kind;
        struct each_ctx *x = cls;
        if (key && strcmp(key, x->name) == 0)
                x->fn(x->ctx, value ? value : "");
        return MHD_YES;
}

void serve_query_each(const struct serve_request *rq, const char *name,
                      void (*fn)(void *ctx, const char *value), void *ctx)
{
        struct each_ctx x = {name, fn, ctx};
        rq->srv->mhd->get_connection_values(rq->conn->c, MHD_GET_ARGUMENT_KIND, each_value, &x);
}

static char **env_without_key(void)
{
        extern char **environ;
        size_t n = 0;
        while (environ[n])
                n++;
        char **env = calloc(n + 1, sizeof(*env));
        if (!env)
                return NULL;
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
                if (strncmp(environ[i], "SBX_SERVE_API_KEY=", 18) != 0)
                        env[j++] = environ[i];
        return env;
}

static int wait_for_stop(void)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        int sig;
        int r = sigwait(&set, &sig);
        return r > 0 ? -r : 0;
}

/*
 * Each connection holds a socket and, while an upload arrives, up to 64 memfds: the soft fd
 * limit goes up to the hard one (at most 65536, room for every connection's uploads), and
 * uploads get what a full house of connections and the commands' pipes leave. The sessions'
 * commands get their own limit (--nofile) whatever serve's is.
 */
static void fd_budget(void)
{
        struct rlimit rl = {1024, 1024};
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rlim_t want = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
                struct rlimit up = {want, rl.rlim_max};
                if (rl.rlim_cur < want && setrlimit(RLIMIT_NOFILE, &up) == 0)
                        rl = up;
        }
        /* a connection running a command: its socket, the command's pipes and pidfd (6 while
         * it is spawned), a memfd for a request's input */
        rlim_t reserve = 8 * MAX_CONNECTIONS;
        rlim_t budget = rl.rlim_cur > 2 * reserve ? rl.rlim_cur - reserve : rl.rlim_cur / 4;
        files_upload_fds_budget(budget > UINT_MAX ? UINT_MAX : (unsigned)budget);
}

int serve_run(const struct serve_options *o, struct sbx_error *e)
{
        struct serve srv = {.opt = *o, .listen_fd = -1};
        config_init_defaults(&srv.config);
        int r = config_load(&srv.config, o->config_file, e);
        if (r < 0) {
                config_free(&srv.config);
                return r;
        }
        srv.policy = (struct serve_policy){.host_images = srv.config.serve_host_images,
                                           .volume_roots = srv.config.serve_volume_roots,
                                           .allow_all_egress = srv.config.serve_network_host};
        srv.max_upload = srv.config.serve_max_upload;
        fd_budget();
        /* 8 x, saturated: max_upload may be as large as a size goes */
        files_upload_bytes_budget(srv.max_upload > UINT64_MAX / 8 ? UINT64_MAX
                                                                  : 8ULL * srv.max_upload);
        srv.mhd = mhd_lib_load(e);
        if (srv.mhd)
                r = serve_listen(&srv, e);
        if (!srv.mhd || r < 0) {
                config_free(&srv.config);
                return srv.mhd ? r : -ENOSYS;
        }
        /* never without a key: one is made after the address check (key.c says why) */
        if (!srv.opt.api_key) {
                if ((r = serve_key_make(srv.made_key, e)) < 0) {
                        (void)close(srv.listen_fd);
                        config_free(&srv.config);
                        return r;
                }
                srv.opt.api_key = srv.made_key;
        }
        srv.child_env = env_without_key();
        if (!srv.child_env) {
                (void)close(srv.listen_fd);
                config_free(&srv.config);
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", ENOMEM, "failed to start");
        }
        /* the threads inherit this mask: the signals that stop serve reach sigwait alone */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        (void)signal(SIGPIPE, SIG_IGN);
        srv.daemon = srv.mhd->start_daemon(
            MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL,
            NULL, on_request, &srv, MHD_OPTION_LISTEN_SOCKET, srv.listen_fd,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)IDLE_TIMEOUT_SEC, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv,
            MHD_OPTION_END);
        if (!srv.daemon) {
                (void)close(srv.listen_fd);
                free(srv.child_env);
                config_free(&srv.config);
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", 0,
                                "failed to start the HTTP server on '%s'", srv.host);
        }
        printf("listening on http://%s\n", srv.host);
        (void)fflush(stdout);
        r = wait_for_stop();
        /* foreground commands end with serve, as with any client of theirs; background ones
         * are the session's and stay */
        command_fg_kill_all();
        /* MHD closes the listening socket it was given */
        srv.mhd->stop_daemon(srv.daemon);
        free(srv.child_env);
        config_free(&srv.config);
        return r;
}
