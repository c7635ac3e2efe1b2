/* SPDX-License-Identifier: MIT */
/*
 * The execd command routes: POST /command (foreground as an event stream, or background as a
 * detached command of the session), GET /command/status/{id}, GET /command/{id}/logs and
 * DELETE /command?id=. Background commands are sbx's detached commands (launch/detach.h):
 * their state and output live in the session's runtime directory, so a restarted serve, or
 * `sbx ps` and `sbx logs`, see the same commands.
 */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "launch/detach.h"
#include "shared/util.h"
#include "argv.h"
#include "command.h"
#include "serve-internal.h"

#define MAX_LOG_READ (8u << 20)

static json_object *field(json_object *o, const char *key)
{
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null)
                   ? v
                   : NULL;
}

/* RunCommandRequest -> the exec flags; -EINVAL with why for what sbx cannot do. */
static int exec_args(json_object *req, struct serve_argv *a, const char **ret_cmd, bool *ret_bg,
                     char **ret_env, char *why, size_t n)
{
        json_object *cmd = field(req, "command"), *v;
        if (!cmd || !json_object_is_type(cmd, json_type_string) || !*json_object_get_string(cmd)) {
                snprintf(why, n, "command must be a non-empty string");
                return -EINVAL;
        }
        *ret_cmd = json_object_get_string(cmd);
        if ((v = field(req, "background")) && !json_object_is_type(v, json_type_boolean)) {
                snprintf(why, n, "background must be true or false");
                return -EINVAL;
        }
        *ret_bg = v && json_object_get_boolean(v);
        if (((v = field(req, "uid")) && json_object_get_int64(v) != 0) ||
            ((v = field(req, "gid")) && json_object_get_int64(v) != 0)) {
                snprintf(why, n, "sbx runs commands as the sandbox's root only (uid/gid 0)");
                return -EINVAL;
        }
        if ((v = field(req, "timeout"))) {
                int64_t ms = json_object_get_int64(v);
                /* at most what sbx takes (2^32-1 s), so the rounding below cannot overflow */
                if (!json_object_is_type(v, json_type_int) || ms < 1 ||
                    ms > (int64_t)UINT32_MAX * 1000) {
                        snprintf(why, n,
                                 "timeout must be a number of milliseconds from 1 to "
                                 "4294967295000");
                        return -EINVAL;
                }
                /* sbx counts whole seconds: round up, never cut a command short */
                serve_argv_add(a, "--timeout=%llds", (long long)((ms + 999) / 1000));
        }
        if ((v = field(req, "cwd"))) {
                if (!json_object_is_type(v, json_type_string)) {
                        snprintf(why, n, "cwd must be a string");
                        return -EINVAL;
                }
                if (*json_object_get_string(v))
                        serve_argv_add(a, "--workdir=%s", json_object_get_string(v));
        }
        if ((v = field(req, "envs")))
                return serve_argv_env(a, v, "envs", ret_env, why, n);
        return 0;
}

/* background: `sbx exec -d`, then init (the command's id) and execution_complete at once. */
static int start_background(struct serve_request *rq, struct serve_response *rs, char **argv,
                            int in_fd)
{
        _cleanup_buf_ struct buf out = {0}, err = {0};
        int code = 0;
        int64_t t0 = (int64_t)now_monotonic_ms();
        int r = serve_sbx_run(rq->srv, argv, in_fd, &out, 1 << 20, &err, &code);
        if (r < 0)
                return r;
        if (code)
                return serve_reply_sbx_error(rs, code, &out, &err);
        json_object *o = json_tokener_parse(out.data), *id = NULL;
        if (!o || !json_object_object_get_ex(o, "id", &id)) {
                json_object_put(o);
                return -EBADMSG;
        }
        _cleanup_buf_ struct buf b = {0};
        const char *s = json_object_get_string(id);
        r = sse_event(&b, "init", s, strlen(s));
        if (r >= 0)
                r = buf_printf(&b,
                               "{\"type\":\"execution_complete\",\"execution_time\":%lld,"
                               "\"timestamp\":%lld}\n\n",
                               (long long)((int64_t)now_monotonic_ms() - t0),
                               (long long)now_realtime_ms());
        json_object_put(o);
        if (r < 0)
                return r;
        serve_reply_json(rs, 200, &b);
        rs->content_type = "text/event-stream";
        return 0;
}

static int run_command(struct serve_request *rq, struct serve_response *rs)
{
        json_object *req = rq->body ? json_tokener_parse(rq->body) : NULL;
        if (!req || !json_object_is_type(req, json_type_object)) {
                json_object_put(req);
                return serve_reply_error(rs, 400, "INVALID_REQUEST",
                                         "the body is not a JSON "
                                         "object");
        }
        _cleanup_argv_ struct serve_argv a = {0};
        const char *cmd = NULL;
        bool bg = false;
        char why[256];
        _cleanup_free_ char *env = NULL;
        serve_argv_add(&a, "exec");
        int r = exec_args(req, &a, &cmd, &bg, &env, why, sizeof(why));
        if (r == -EINVAL) {
                json_object_put(req);
                return serve_reply_error(rs, 400, "INVALID_REQUEST", "%s", why);
        }
        if (r < 0) {
                json_object_put(req);
                return r;
        }
        if (bg) {
                serve_argv_add(&a, "--detach");
                serve_argv_add(&a, "--json");
        }
        serve_argv_add(&a, "%s", rq->session_id);
        serve_argv_add(&a, "--");
        serve_argv_add(&a, "sh");
        serve_argv_add(&a, "-c");
        serve_argv_add(&a, "%s", cmd);
        json_object_put(req);
        if (a.error)
                return a.error;
        _cleanup_close_ int in_fd = env ? serve_text_fd(env) : -1;
        if (env && in_fd < 0)
                return in_fd;
        if (bg)
                return start_background(rq, rs, a.v, in_fd);
        return command_fg_start(rq, rs, a.v, a.v[a.n - 1], in_fd);
}

static int add_time(struct buf *b, const char *key, int64_t ms)
{
        char t[21];
        format_rfc3339(ms / 1000, t);
        return buf_printf(b, ",\"%s\":\"%s\"", key, t);
}

/* CommandStatusResponse. exit_code < 0: none yet. */
static int status_json(struct buf *b, const char *id, const char *content, bool running,
                       int exit_code, const char *error, int64_t started_ms, int64_t finished_ms)
{
        int r = buf_puts(b, "{\"id\":");
        if (r >= 0)
                r = json_cstr(b, id);
        if (r >= 0)
                r = buf_puts(b, ",\"content\":");
        if (r >= 0)
                r = json_cstr(b, content);
        if (r >= 0)
                r = buf_printf(b, ",\"running\":%s", running ? "true" : "false");
        if (r >= 0 && !running)
                r = buf_printf(b, ",\"exit_code\":%d", exit_code);
        if (r >= 0 && error && *error) {
                r = buf_puts(b, ",\"error\":");
                if (r >= 0)
                        r = json_cstr(b, error);
        }
        if (r >= 0)
                r = add_time(b, "started_at", started_ms);
        if (r >= 0 && !running && finished_ms > 0)
                r = add_time(b, "finished_at", finished_ms);
        return r >= 0 ? buf_puts(b, "}") : r;
}

/* The command text of a detached command started as `sh -c TEXT`, else its argv joined. */
static int content_of(char **argv, struct buf *out)
{
        if (argv && argv[0] && argv[1] && argv[2] && !argv[3] && strcmp(argv[0], "sh") == 0 &&
            strcmp(argv[1], "-c") == 0)
                return buf_puts(out, argv[2]);
        int r = 0;
        for (char **p = argv; p && *p && r >= 0; p++)
                r = buf_printf(out, "%s%s", p == argv ? "" : " ", *p);
        return r >= 0 ? buf_puts(out, "") : r;
}

static int detach_failed(struct serve_response *rs, const struct sbx_error *e)
{
        if (e->exit_code == EXIT_NO_SESSION)
                return serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "%s", e->message);
        if (e->exit_code == EXIT_USAGE || (e->code && strcmp(e->code, "not_found") == 0))
                return serve_reply_error(rs, 404, "NOT_FOUND", "%s", e->message);
        if (e->exit_code == EXIT_FAILED)
                return serve_reply_error(rs, 409, "SBX::CONFLICT", "%s", e->message);
        return serve_reply_error(rs, 500, "RUNTIME_ERROR", "%s", e->message);
}

static int command_status(struct serve_request *rq, struct serve_response *rs)
{
        const char *id = rq->params[0];
        _cleanup_buf_ struct buf b = {0};
        int r;
        if (strncmp(id, FG_ID_PREFIX, strlen(FG_ID_PREFIX)) == 0) {
                struct fg_status st;
                if (command_fg_status(rq->session_id, id, &st) < 0)
                        return serve_reply_error(rs, 404, "NOT_FOUND", "no command '%s'", id);
                r = status_json(&b, id, st.content, st.running, st.exit_code, NULL, st.started_ms,
                                st.finished_ms);
                return r < 0 ? r : serve_reply_json(rs, 200, &b);
        }
        struct sbx_error e = {0};
        struct detach_info d = {0};
        if (detach_status(rq->session_id, id, &d, &e) < 0)
                return detach_failed(rs, &e);
        _cleanup_buf_ struct buf content = {0};
        r = content_of(d.argv, &content);
        bool running = d.state == DETACH_RUNNING;
        if (r >= 0)
                r = status_json(&b, id, content.data ? content.data : "", running, d.exit_code,
                                d.error, d.started_ms,
                                running ? 0 : d.started_ms + (int64_t)d.duration_ms);
        detach_info_free(&d);
        return r < 0 ? r : serve_reply_json(rs, 200, &b);
}

static int command_logs(struct serve_request *rq, struct serve_response *rs)
{
        const char *id = rq->params[0];
        if (strncmp(id, FG_ID_PREFIX, strlen(FG_ID_PREFIX)) == 0)
                return serve_reply_error(rs, 400, "INVALID_REQUEST",
                                         "a foreground command's output is in its stream");
        const char *c = serve_query(rq, "cursor");
        uint64_t cursor = 0;
        if (c) {
                char *end;
                cursor = strtoull(c, &end, 10);
                if (!*c || *end || *c == '-')
                        return serve_reply_error(rs, 400, "INVALID_REQUEST",
                                                 "cursor must be a byte offset");
        }
        struct sbx_error e = {0};
        _cleanup_buf_ struct buf out = {0};
        uint64_t next = 0, dropped = 0;
        bool ended = false;
        if (detach_read(rq->session_id, id, cursor, MAX_LOG_READ, 0, &out, &next, &dropped, &ended,
                        &e) < 0) {
                if (e.exit_code == EXIT_USAGE && detach_id_valid(id))
                        return serve_reply_error(rs, 400, "INVALID_REQUEST", "%s", e.message);
                return detach_failed(rs, &e);
        }
        serve_reply_json(rs, 200, &out);
        rs->content_type = "text/plain; charset=utf-8";
        return serve_add_header(rs, "EXECD-COMMANDS-TAIL-CURSOR", "%llu", (unsigned long long)next);
}

static int command_interrupt(struct serve_request *rq, struct serve_response *rs)
{
        const char *id = serve_query(rq, "id");
        if (!id || !*id)
                return serve_reply_error(rs, 400, "MISSING_QUERY", "the id query is required");
        if (strncmp(id, FG_ID_PREFIX, strlen(FG_ID_PREFIX)) == 0) {
                int r = command_fg_kill(rq->session_id, id);
                if (r == -ENOENT)
                        return serve_reply_error(rs, 404, "NOT_FOUND", "no command '%s'", id);
                if (r == -ESRCH)
                        return serve_reply_error(rs, 409, "SBX::CONFLICT",
                                                 "command '%s' is not running", id);
                return r < 0 ? r : serve_reply_empty(rs, 200);
        }
        struct sbx_error e = {0};
        if (detach_kill(rq->session_id, id, SIGKILL, &e) < 0)
                return detach_failed(rs, &e);
        return serve_reply_empty(rs, 200);
}

static int ping(struct serve_request *rq, struct serve_response *rs)
{
        (void)rq;
        return serve_reply_empty(rs, 200);
}

const struct serve_route serve_execd_routes[] = {
    {"GET", "/ping", ping},
    {"POST", "/command", run_command},
    {"DELETE", "/command", command_interrupt},
    {"GET", "/command/status/{}", command_status},
    {"GET", "/command/{}/logs", command_logs},
    {0},
};
