/* SPDX-License-Identifier: MIT */
/*
 * The sessions of `sbx mcp`. The server acts on the sessions made through MCP and on no other:
 * the user's own sessions may have been made with --mount ~/secrets or --net host, which a
 * model must not reach by guessing an id or a name. A session create makes here is marked
 * with origin "mcp" (session/origin.h) and lives by its TTL like any session, so a client that
 * reconnects (a resumed conversation) finds it again. A tool's session argument is resolved
 * to an id here, first in this connection's table (the id create returned, or the name the
 * model gave it), then among the marked sessions; the id is what sbx gets, so a name never
 * meets a session of the same name made outside MCP. `sbx mcp --any-session` lets the
 * operator open all of the user's sessions to the model. With --destroy-on-close the
 * connection's table is what is destroyed when it ends.
 */
#include <stdio.h>
#include <string.h>

#include "session/origin.h"
#include "mcp.h"

static const char *str_of(json_object *o, const char *key)
{
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                   ? json_object_get_string(v)
                   : NULL;
}

/* The id of the session ref names in the table (an id, or a name: the newest with it). */
static const char *lookup(const struct mcp_server *s, const char *ref)
{
        for (size_t i = 0; i < s->n_sessions; i++)
                if (strcmp(s->sessions[i].id, ref) == 0)
                        return s->sessions[i].id;
        for (size_t i = s->n_sessions; i-- > 0;)
                if (s->sessions[i].name && strcmp(s->sessions[i].name, ref) == 0)
                        return s->sessions[i].id;
        return NULL;
}

static bool takes_session(const struct tool *t)
{
        for (size_t i = 0; i < t->n_params; i++)
                if (strcmp(t->params[i].name, "session") == 0)
                        return true;
        return false;
}

int mcp_resolve_session(const struct mcp_server *s, const struct tool *t, json_object *args,
                        char *why, size_t n)
{
        const char *ref = takes_session(t) ? str_of(args, "session") : NULL;
        if (!ref)
                return 0;
        const char *id = lookup(s, ref);
        char marked[SESSION_ID_LEN + 1];
        if (!id && s->any_session)
                return 0;
        if (!id && session_origin_resolve(ref, "mcp", marked) == 0)
                id = marked;
        if (!id) {
                snprintf(why, n,
                         "session %.100s was not created by this MCP server (or was destroyed): "
                         "its tools act only on the sessions made with its create tool",
                         ref);
                return -EPERM;
        }
        json_object *v = json_object_new_string(id);
        if (!v || json_object_object_add(args, "session", v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static void forget(struct mcp_server *s, size_t i)
{
        free(s->sessions[i].id);
        free(s->sessions[i].name);
        s->sessions[i] = s->sessions[--s->n_sessions];
}

void mcp_track_sessions(struct mcp_server *s, const struct tool *t, json_object *args,
                        json_object *o)
{
        if (strcmp(t->name, "create") == 0 && str_of(o, "id")) {
                /* a session that cannot be marked is still this connection's */
                (void)session_origin_set(str_of(o, "id"), "mcp");
                struct mcp_session *v =
                    reallocarray(s->sessions, s->n_sessions + 1, sizeof(struct mcp_session));
                if (!v)
                        return;
                s->sessions = v;
                struct mcp_session e = {strdup(str_of(o, "id")),
                                        str_of(o, "name") ? strdup(str_of(o, "name")) : NULL};
                if (e.id)
                        v[s->n_sessions++] = e;
                else
                        free(e.name);
        } else if (strcmp(t->name, "destroy") == 0 && str_of(args, "session") &&
                   !json_object_object_get_ex(o, "error", NULL)) {
                /* the argument is an id by now (mcp_resolve_session) */
                for (size_t i = 0; i < s->n_sessions; i++)
                        if (strcmp(s->sessions[i].id, str_of(args, "session")) == 0) {
                                forget(s, i);
                                break;
                        }
        }
}

void mcp_destroy_sessions(struct mcp_server *s)
{
        if (s->n_sessions > 0) {
                /* sbx destroy --json --force [--config=F] -- ID... */
                _cleanup_free_ char *config = NULL;
                _cleanup_free_ char **argv = calloc(s->n_sessions + 7, sizeof(char *));
                size_t k = 0;
                if (s->config_file && asprintf(&config, "--config=%s", s->config_file) < 0)
                        config = NULL;
                if (argv && (!s->config_file || config)) {
                        argv[k++] = (char *)"sbx";
                        argv[k++] = (char *)"destroy";
                        argv[k++] = (char *)"--json";
                        argv[k++] = (char *)"--force";
                        if (config)
                                argv[k++] = config;
                        argv[k++] = (char *)"--";
                        for (size_t i = 0; i < s->n_sessions; i++)
                                argv[k++] = s->sessions[i].id;
                        struct mcp_run run = {.argv = argv, .cleanup = true};
                        (void)mcp_spawn(s, &run);
                        buf_freep(&run.out);
                        buf_freep(&run.err);
                }
        }
        mcp_forget_sessions(s);
}

void mcp_forget_sessions(struct mcp_server *s)
{
        while (s->n_sessions > 0)
                forget(s, s->n_sessions - 1);
        free(s->sessions);
        s->sessions = NULL;
}
