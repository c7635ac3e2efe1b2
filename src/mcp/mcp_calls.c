/* SPDX-License-Identifier: MIT */
/*
 * The tool calls in flight. A tools/call is queued in arrival order and started when it may:
 * at most MCP_MAX_RUNNING commands run at once, and a call waits for the create and destroy
 * calls that came before it, since they change which sessions exist (a client that pipelines
 * "create work" then "exec in work" gets what it meant); a destroy also waits for the earlier
 * calls that name the same session. Everything else runs side by side: a long exec blocks
 * neither an ls nor another exec.
 *
 * A call whose request carried params._meta.progressToken gets a notifications/progress every
 * MCP_PROGRESS_MS while it runs, so that a client which resets its request timeout on progress
 * (the TypeScript SDK's resetTimeoutOnProgress) waits for a long exec however long it takes.
 * notifications/cancelled stops the call it names (its command gets SIGTERM, then SIGKILL) and
 * the call gets no response, as the protocol says.
 */
#include <stdio.h>
#include <string.h>

#include "session/origin.h"
#include "shared/util.h"
#include "mcp.h"

enum { RPC_INVALID_PARAMS = -32602, RPC_INTERNAL_ERROR = -32603 };

static void call_free(struct mcp_call *c)
{
        if (!c)
                return;
        mcp_run_release(&c->run);
        buf_freep(&c->run.out);
        buf_freep(&c->run.err);
        free(c->run.env_json);
        mcp_argv_free(c->argv);
        json_object_put(c->id);
        json_object_put(c->args);
        json_object_put(c->token);
        free(c);
}

int mcp_calls_add(struct mcp_server *s, json_object *id, const struct tool *t, json_object *args,
                  json_object *token)
{
        char why[512] = "";
        json_object *res = NULL;
        int r = mcp_tool_check(s, t, args, &res, why, sizeof(why));
        if (r == 1)
                return mcp_send_result(s, id, res);
        if (r == -EINVAL)
                return mcp_send_error(s, id, RPC_INVALID_PARAMS, why);
        if (r < 0)
                return mcp_send_error(s, id, RPC_INTERNAL_ERROR, strerror(-r));
        if (s->n_calls >= MCP_MAX_CALLS)
                return mcp_send_error(s, id, RPC_INTERNAL_ERROR,
                                      "server busy: too many tool calls in flight; retry when "
                                      "some have been answered");
        struct mcp_call *c = calloc(1, sizeof(*c));
        if (!c)
                return mcp_send_error(s, id, RPC_INTERNAL_ERROR, "out of memory");
        c->id = json_object_get(id);
        c->args = json_object_get(args);
        c->token = json_object_get(token);
        c->tool = t;
        c->run.pidfd = c->run.out_fd = c->run.err_fd = -1;
        s->calls[s->n_calls++] = c;
        return 0;
}

static void remove_at(struct mcp_server *s, size_t i)
{
        call_free(s->calls[i]);
        memmove(&s->calls[i], &s->calls[i + 1], (s->n_calls - i - 1) * sizeof(struct mcp_call *));
        s->n_calls--;
}

void mcp_calls_cancel(struct mcp_server *s, json_object *id)
{
        for (size_t i = 0; i < s->n_calls; i++) {
                struct mcp_call *c = s->calls[i];
                if (!json_object_equal(c->id, id))
                        continue;
                if (!c->started) {
                        remove_at(s, i); /* never started: nothing to stop */
                        return;
                }
                c->cancelled = c->run.cancelled = true;
                mcp_run_stop(&c->run);
                return;
        }
}

void mcp_calls_stop_all(struct mcp_server *s)
{
        for (size_t i = 0; i < s->n_calls;) {
                struct mcp_call *c = s->calls[i];
                if (!c->started) {
                        remove_at(s, i); /* never started: nothing to stop */
                        continue;
                }
                c->run.interrupted = true;
                mcp_run_stop(&c->run);
                i++;
        }
}

void mcp_calls_release(struct mcp_server *s)
{
        while (s->n_calls > 0)
                remove_at(s, s->n_calls - 1);
}

static bool changes_sessions(const struct mcp_call *c)
{
        return strcmp(c->tool->name, "create") == 0 || strcmp(c->tool->name, "destroy") == 0;
}

/* The session argument as the client wrote it (NULL: none). */
static const char *session_of(const struct mcp_call *c)
{
        json_object *v;
        return json_object_object_get_ex(c->args, "session", &v) &&
                       json_object_is_type(v, json_type_string)
                   ? json_object_get_string(v)
                   : NULL;
}

/* Do two session arguments name the same session (an id and a name may)? */
static bool same_session(const char *a, const char *b)
{
        char ia[SESSION_ID_LEN + 1], ib[SESSION_ID_LEN + 1];
        if (strcmp(a, b) == 0)
                return true;
        return session_ref_resolve(a, ia) == 0 && session_ref_resolve(b, ib) == 0 &&
               strcmp(ia, ib) == 0;
}

/* Is c a destroy of a session an earlier call (of the first n) still works in? */
static bool destroy_waits(struct mcp_server *s, size_t n, const struct mcp_call *c)
{
        const char *sess = session_of(c);
        if (strcmp(c->tool->name, "destroy") != 0 || !sess)
                return false;
        for (size_t i = 0; i < n; i++)
                if (session_of(s->calls[i]) && same_session(session_of(s->calls[i]), sess))
                        return true;
        return false;
}

static bool running(const struct mcp_call *c)
{
        return c->started && c->run.pid > 0;
}

/* Start call c (it may start); 1 when it is over at once (answered), 0 started, -errno. */
static int start(struct mcp_server *s, struct mcp_call *c)
{
        json_object *res = NULL;
        c->started = true;
        c->started_ms = now_monotonic_ms();
        c->next_progress_ms = c->started_ms + MCP_PROGRESS_MS;
        int r = mcp_tool_begin(s, c, &res);
        if (r == 0)
                return 0;
        if (r == 1)
                r = mcp_send_result(s, c->id, res);
        else
                r = mcp_send_error(s, c->id, RPC_INTERNAL_ERROR, strerror(-r));
        return r < 0 ? r : 1;
}

/* Call c's command ended: answer it (or start its second command). 1 when it is over. */
static int finish(struct mcp_server *s, struct mcp_call *c)
{
        json_object *res = NULL;
        int r = mcp_tool_end(s, c, &res);
        if (r == 1)
                return 0;
        if (r == -ECANCELED || s->stopping) {
                json_object_put(res);
                return 1; /* the client no longer waits for it, or we are going */
        }
        if (r < 0)
                r = mcp_send_error(s, c->id, RPC_INTERNAL_ERROR, strerror(-r));
        else
                r = mcp_send_result(s, c->id, res);
        return r < 0 ? r : 1;
}

static int progress(struct mcp_server *s, struct mcp_call *c, uint64_t now)
{
        if (!c->token || !running(c) || c->cancelled || now < c->next_progress_ms)
                return 0;
        c->next_progress_ms = now + MCP_PROGRESS_MS;
        uint64_t secs = (now - c->started_ms) / 1000;
        char msg[96];
        snprintf(msg, sizeof(msg), "%s running for %llus", c->tool->name, (unsigned long long)secs);
        json_object *p = json_object_new_object();
        json_object_object_add(p, "progressToken", json_object_get(c->token));
        json_object_object_add(p, "progress", json_object_new_int64(++c->progress));
        json_object_object_add(p, "message", json_object_new_string(msg));
        int r = mcp_send_notification(s, "notifications/progress", p);
        json_object_put(p);
        return r;
}

int mcp_calls_step(struct mcp_server *s)
{
        size_t n_running = 0;
        bool barrier = false; /* an earlier create or destroy has not ended */
        uint64_t now = now_monotonic_ms();
        int r = 0;
        for (size_t i = 0; r >= 0 && i < s->n_calls;) {
                struct mcp_call *c = s->calls[i];
                int over = 0;
                if (!c->started && !barrier && !s->stopping && n_running < MCP_MAX_RUNNING &&
                    !destroy_waits(s, i, c))
                        over = r = start(s, c);
                else if (c->started && !running(c))
                        over = r = finish(s, c);
                if (r >= 0 && !over && running(c))
                        r = progress(s, c, now);
                if (over > 0) {
                        remove_at(s, i);
                        continue;
                }
                if (running(c))
                        n_running++;
                if (changes_sessions(c))
                        barrier = true;
                i++;
        }
        return r < 0 ? r : 0;
}

size_t mcp_calls_pollfds(struct mcp_server *s, struct pollfd *p)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_calls; i++)
                if (running(s->calls[i])) {
                        mcp_run_pollfds(&s->calls[i]->run, p + n);
                        n += 3;
                }
        return n;
}

void mcp_calls_events(struct mcp_server *s, const struct pollfd *p)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_calls; i++) {
                struct mcp_call *c = s->calls[i];
                if (!running(c))
                        continue;
                /* a failure kills and reaps the command: the call then ends "without a
                 * result", like one whose command died */
                (void)mcp_run_events(&c->run, p + n);
                n += 3;
        }
}

/* The sooner of two poll timeouts (-1: none). */
static int min_timeout(int a, int b)
{
        return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

int mcp_calls_timeout(struct mcp_server *s)
{
        int t = -1;
        uint64_t now = now_monotonic_ms();
        for (size_t i = 0; i < s->n_calls; i++) {
                struct mcp_call *c = s->calls[i];
                if (!running(c))
                        continue;
                int k = mcp_run_timeout(&c->run);
                if (c->token && !c->cancelled)
                        k = min_timeout(
                            k, c->next_progress_ms > now ? (int)(c->next_progress_ms - now) : 0);
                t = min_timeout(t, k);
        }
        return t;
}
