/* SPDX-License-Identifier: MIT */
/*
 * The lifecycle routes (under / and /v1): each one is the CLI command that does it (create,
 * list, destroy, connect, pause, resume) run as a child, and its JSON answer recast in the
 * OpenSandbox shapes. What OpenSandbox keeps that sbx has no place for (metadata, image,
 * entrypoint) is in the session's directory (meta.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "shared/util.h"
#include "meta.h"
#include "sandbox_json.h"
#include "serve-internal.h"

#define MAX_OUT (4u << 20)

static int bad_json(struct serve_response *rs)
{
        return serve_reply_error(rs, 400, "INVALID_REQUEST", "the body is not valid JSON");
}

static json_object *body_json(const struct serve_request *rq)
{
        if (!rq->body || rq->body_len == 0)
                return NULL;
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return NULL;
        json_object *o = json_tokener_parse_ex(tok, rq->body, (int)rq->body_len);
        bool complete = json_tokener_get_error(tok) == json_tokener_success &&
                        json_tokener_get_parse_end(tok) == rq->body_len;
        json_tokener_free(tok);
        if (!complete) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static int run(const struct serve_request *rq, char **argv, struct buf *out, int *ret_exit,
               struct buf *err)
{
        return serve_sbx_run(rq->srv, argv, -1, out, MAX_OUT, err, ret_exit);
}

/* Run `sbx VERB --json ID`: 0 with *ret_exit, the answer in out/err. */
static int run_on(const struct serve_request *rq, const char *verb, const char *id, struct buf *out,
                  struct buf *err, int *ret_exit)
{
        char *argv[] = {(char *)verb, (char *)"--json", (char *)id, NULL};
        return run(rq, argv, out, ret_exit, err);
}

static void destroy_quietly(const struct serve_request *rq, const char *id)
{
        _cleanup_buf_ struct buf out = {0}, err = {0};
        int code;
        char *argv[] = {(char *)"destroy", (char *)"--force", (char *)id, NULL};
        (void)run(rq, argv, &out, &code, &err);
}

/* The entrypoint as a detached command of the new session (sbx exec -d). */
static int start_entrypoint(const struct serve_request *rq, const char *id, json_object *ep,
                            struct buf *out, struct buf *err, int *ret_exit)
{
        _cleanup_argv_ struct serve_argv a = {0};
        serve_argv_add(&a, "exec");
        serve_argv_add(&a, "-d");
        serve_argv_add(&a, "--json");
        serve_argv_add(&a, "%s", id);
        serve_argv_add(&a, "--");
        for (size_t i = 0; i < json_object_array_length(ep); i++)
                serve_argv_add(&a, "%s", json_object_get_string(json_object_array_get_idx(ep, i)));
        if (a.error)
                return a.error;
        return run(rq, a.v, out, ret_exit, err);
}

static int keep_meta(const char *id, const struct create_plan *plan)
{
        json_object *m = json_object_new_object();
        if (!m)
                return -ENOMEM;
        if (plan->image_uri)
                json_object_object_add(m, "image", json_object_new_string(plan->image_uri));
        if (plan->entrypoint)
                json_object_object_add(m, "entrypoint", json_object_get(plan->entrypoint));
        if (plan->metadata)
                json_object_object_add(m, "metadata", json_object_get(plan->metadata));
        struct buf b = {0};
        const char *s = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
        int r = s ? buf_puts(&b, s) : -ENOMEM;
        if (r >= 0)
                r = serve_meta_write(id, &b);
        buf_freep(&b);
        json_object_put(m);
        return r;
}

/* Give an error answer another status and code, keeping its message. */
static int retag(struct serve_response *rs, unsigned status, const char *code)
{
        json_object *o = rs->body.data ? json_tokener_parse(rs->body.data) : NULL;
        json_object *m = NULL;
        char msg[1024] = "";
        if (o && json_object_object_get_ex(o, "message", &m))
                snprintf(msg, sizeof(msg), "%s", json_object_get_string(m));
        json_object_put(o);
        return serve_reply_error(rs, status, code, "%s", msg);
}

static int create(struct serve_request *rq, struct serve_response *rs)
{
        json_object *req = body_json(rq);
        if (!req)
                return bad_json(rs);
        struct create_plan plan;
        char why[512];
        int r = create_plan_build(&rq->srv->policy, req, &plan, why, sizeof(why));
        if (r == -EINVAL) {
                json_object_put(req);
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_PARAMETER", "%s", why);
        }
        if (r < 0) {
                json_object_put(req);
                return r;
        }
        _cleanup_buf_ struct buf out = {0}, err = {0};
        int code = 0;
        _cleanup_close_ int in_fd = plan.env ? serve_text_fd(plan.env) : -1;
        r = plan.env && in_fd < 0
                ? in_fd
                : serve_sbx_run(rq->srv, plan.argv.v, in_fd, &out, MAX_OUT, &err, &code);
        json_object *made = r >= 0 && code == 0 ? json_tokener_parse(out.data) : NULL;
        json_object *idv = NULL;
        const char *id = made && json_object_object_get_ex(made, "id", &idv)
                             ? json_object_get_string(idv)
                             : NULL;
        if (r >= 0 && code == EXIT_FAILED && plan.image_uri) {
                /* a missing image (or one its registry would not give) is the request's
                 * fault: 400, not the 404 of a missing sandbox */
                r = serve_reply_sbx_error(rs, code, &out, &err);
                if (r >= 0 && (rs->status == 404 || rs->status == 400))
                        r = retag(rs, 400, "SBX::IMAGE_UNAVAILABLE");
        } else if (r >= 0 && code != 0) {
                r = serve_reply_sbx_error(rs, code, &out, &err);
        } else if (r >= 0 && !id) {
                r = -EBADMSG;
        } else if (r >= 0) {
                char token[SERVE_TOKEN_LEN + 1], sid[SESSION_ID_LEN + 1];
                r = keep_meta(id, &plan);
                if (r >= 0)
                        r = serve_token_get(id, sid, token);
                if (r >= 0 && plan.run_entrypoint) {
                        buf_freep(&out), buf_freep(&err);
                        r = start_entrypoint(rq, id, plan.entrypoint, &out, &err, &code);
                        if (r >= 0 && code != 0) {
                                serve_reply_sbx_error(rs, code, &out, &err);
                                destroy_quietly(rq, id);
                                r = 1;
                        }
                }
                if (r < 0)
                        destroy_quietly(rq, id);
                if (r == 0)
                        r = sandbox_reply(rq, rs, 202, id, false);
                if (r == 1)
                        r = 0;
        }
        json_object_put(made);
        create_plan_free(&plan);
        json_object_put(req);
        return r;
}

/* Every {} of /sandboxes/{}/...: an id or a name, never something sbx would take for a flag. */
static bool ref_ok(struct serve_request *rq, struct serve_response *rs)
{
        if (serve_ref_valid(rq->params[0]))
                return true;
        serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "no sandbox '%s'", rq->params[0]);
        return false;
}

static int get(struct serve_request *rq, struct serve_response *rs)
{
        return sandbox_reply(rq, rs, 200, rq->params[0], true);
}

static int list(struct serve_request *rq, struct serve_response *rs)
{
        return sandbox_list_reply(rq, rs);
}

static int delete (struct serve_request *rq, struct serve_response *rs)
{
        _cleanup_buf_ struct buf out = {0}, err = {0};
        int code = 0;
        if (!ref_ok(rq, rs))
                return 0;
        int r = run_on(rq, "destroy", rq->params[0], &out, &err, &code);
        if (r < 0)
                return r;
        return code ? serve_reply_sbx_error(rs, code, &out, &err) : serve_reply_empty(rs, 204);
}

static int pause_resume(struct serve_request *rq, struct serve_response *rs, bool pause)
{
        _cleanup_buf_ struct buf out = {0}, err = {0};
        int code = 0;
        if (!ref_ok(rq, rs))
                return 0;
        int r = run_on(rq, pause ? "pause" : "resume", rq->params[0], &out, &err, &code);
        if (r < 0)
                return r;
        if (code)
                return serve_reply_sbx_error(rs, code, &out, &err);
        return serve_reply_empty(rs, 202);
}

static int do_pause(struct serve_request *rq, struct serve_response *rs)
{
        return pause_resume(rq, rs, true);
}

static int do_resume(struct serve_request *rq, struct serve_response *rs)
{
        return pause_resume(rq, rs, false);
}

static int renew(struct serve_request *rq, struct serve_response *rs)
{
        if (!ref_ok(rq, rs))
                return 0;
        json_object *req = body_json(rq);
        if (!req)
                return bad_json(rs);
        json_object *v = NULL;
        int64_t when = 0;
        bool ok = json_object_object_get_ex(req, "expiresAt", &v) &&
                  json_object_is_type(v, json_type_string) &&
                  parse_rfc3339(json_object_get_string(v), &when) == 0;
        json_object_put(req);
        if (!ok)
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_PARAMETER",
                                         "expiresAt must be an RFC 3339 time");
        if (when - now_realtime_sec() < 1)
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_EXPIRATION",
                                         "expiresAt must be in the future");
        _cleanup_buf_ struct buf out = {0}, err = {0};
        /* the time itself, not a duration from now: `connect` starts later than now */
        char ttl_arg[32];
        snprintf(ttl_arg, sizeof(ttl_arg), "--ttl=@%lld", (long long)when);
        char *argv[] = {(char *)"connect", (char *)"--json", ttl_arg, (char *)rq->params[0], NULL};
        int code = 0;
        int r = run(rq, argv, &out, &code, &err);
        if (r < 0)
                return r;
        if (code)
                return serve_reply_sbx_error(rs, code, &out, &err);
        json_object *o = json_tokener_parse(out.data);
        json_object *exp = NULL;
        _cleanup_buf_ struct buf b = {0};
        r = o && json_object_object_get_ex(o, "expires_at", &exp) ? 0 : -EBADMSG;
        if (r >= 0)
                r = buf_puts(&b, "{\"expiresAt\":");
        if (r >= 0)
                r = json_cstr(&b, json_object_get_string(exp));
        if (r >= 0)
                r = buf_puts(&b, "}");
        json_object_put(o);
        return r < 0 ? r : serve_reply_json(rs, 200, &b);
}

/* The address clients reached serve at: the Host they sent (only where it is a plain
 * host[:port]), else the listening address. */
static const char *public_host(const struct serve_request *rq)
{
        const char *h = serve_header(rq, "Host");
        if (h && *h && strlen(h) < 256 &&
            strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") ==
                strlen(h))
                return h;
        return rq->srv->host;
}

static int endpoint(struct serve_request *rq, struct serve_response *rs)
{
        if (!ref_ok(rq, rs))
                return 0;
        char *end;
        unsigned long port = strtoul(rq->params[1], &end, 10);
        if (*end || port < 1 || port > 65535)
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_PORT",
                                         "the port must be 1 to 65535");
        if (serve_query(rq, "expires"))
                return serve_reply_error(rs, 400, "SANDBOX::API_NOT_SUPPORTED",
                                         "signed endpoints are not supported: use "
                                         "use_server_proxy=true");
        char token[SERVE_TOKEN_LEN + 1];
        char id[SESSION_ID_LEN + 1];
        int r = serve_token_get(rq->params[0], id, token);
        if (r == -ENOENT)
                return serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "no sandbox '%s'",
                                         rq->params[0]);
        if (r < 0)
                return r;
        /* serve is the endpoint whatever use_server_proxy says: it alone reaches the session */
        _cleanup_buf_ struct buf b = {0};
        r = buf_puts(&b, "{\"endpoint\":");
        char url[512];
        snprintf(url, sizeof(url), "%s/sandboxes/%s/proxy/%lu", public_host(rq), id, port);
        if (r >= 0)
                r = json_cstr(&b, url);
        if (r >= 0)
                r = buf_printf(&b, ",\"headers\":{\"" SERVE_TOKEN_HEADER "\":\"%s\"}}", token);
        return r < 0 ? r : serve_reply_json(rs, 200, &b);
}

static int health(struct serve_request *rq, struct serve_response *rs)
{
        (void)rq;
        _cleanup_buf_ struct buf b = {0};
        int r = buf_puts(&b, "{\"status\":\"healthy\"}");
        return r < 0 ? r : serve_reply_json(rs, 200, &b);
}

const struct serve_route serve_lifecycle_routes[] = {
    {"GET", "/health", health},
    {"POST", "/sandboxes", create},
    {"GET", "/sandboxes", list},
    {"GET", "/sandboxes/{}", get},
    {"DELETE", "/sandboxes/{}", delete},
    {"POST", "/sandboxes/{}/pause", do_pause},
    {"POST", "/sandboxes/{}/resume", do_resume},
    {"POST", "/sandboxes/{}/renew-expiration", renew},
    {"GET", "/sandboxes/{}/endpoints/{}", endpoint},
    {0},
};
