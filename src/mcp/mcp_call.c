/* SPDX-License-Identifier: MIT */
/*
 * tools/call: the command line (mcp_args.c) run (mcp_spawn.c) and its --json output turned into
 * a CallToolResult: a text for the model, the JSON itself as structuredContent, isError when
 * sbx reported an error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "mcp.h"

/* ---- the result ------------------------------------------------------------------------ */

static json_object *tool_result(const char *text, bool is_error, json_object *structured)
{
        json_object *res = json_object_new_object(), *content = json_object_new_array(),
                    *item = json_object_new_object();
        json_object_object_add(item, "type", json_object_new_string("text"));
        json_object_object_add(item, "text", json_object_new_string(text));
        json_object_array_add(content, item);
        json_object_object_add(res, "content", content);
        if (structured)
                json_object_object_add(res, "structuredContent", structured);
        json_object_object_add(res, "isError", json_object_new_boolean(is_error));
        return res;
}

static const char *str_of(json_object *o, const char *key)
{
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                   ? json_object_get_string(v)
                   : NULL;
}

static bool bool_of(json_object *o, const char *key)
{
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* exec: the output, then one line with how it ended. */
static void exec_text(struct buf *b, json_object *o)
{
        const char *out = str_of(o, "output");
        json_object *code;
        if (out && *out) {
                buf_puts(b, out);
                if (out[strlen(out) - 1] != '\n')
                        buf_puts(b, "\n");
        }
        buf_printf(b, "[exit code %d%s%s%s]",
                   json_object_object_get_ex(o, "exit_code", &code) ? json_object_get_int(code)
                                                                    : -1,
                   bool_of(o, "timed_out") ? ", timed out" : "",
                   bool_of(o, "oom_killed") ? ", killed by the memory limit" : "",
                   bool_of(o, "truncated") ? ", output truncated at max_output" : "");
}

/* exec with detach: the command's id; logs: the data, then where to go on from. */
static bool detach_text(struct buf *b, const char *tool, json_object *o)
{
        json_object *v;
        if (strcmp(tool, "exec") == 0 && str_of(o, "id")) {
                buf_printf(b, "[started detached command %s: see logs, ps, kill]", str_of(o, "id"));
                return true;
        }
        if (strcmp(tool, "logs") != 0 || !json_object_object_get_ex(o, "cursor", &v))
                return false;
        const char *data = str_of(o, "data");
        json_object *dropped;
        if (json_object_object_get_ex(o, "dropped", &dropped) && json_object_get_int64(dropped))
                buf_printf(b, "[%lld bytes of output dropped]\n",
                           (long long)json_object_get_int64(dropped));
        if (data && *data) {
                buf_puts(b, data);
                if (data[strlen(data) - 1] != '\n')
                        buf_puts(b, "\n");
        }
        buf_printf(b, "[cursor %lld%s]", (long long)json_object_get_int64(v),
                   bool_of(o, "ended") ? ", the command has ended" : ", still running");
        return true;
}

/* ls, glob, grep: one line per entry, as the CLI prints them. */
static void list_text(struct buf *b, json_object *arr)
{
        size_t n = json_object_array_length(arr);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i), *v;
                const char *path = str_of(e, "path");
                if (json_object_is_type(e, json_type_string))
                        buf_printf(b, "%s\n", json_object_get_string(e));
                else if (bool_of(e, "truncated")) /* a search cut short says so */
                        buf_printf(b, "[%s]\n",
                                   str_of(e, "message") ? str_of(e, "message")
                                                        : "Results truncated");
                else if (path && json_object_object_get_ex(e, "count", &v))
                        buf_printf(b, "%s:%lld\n", path, (long long)json_object_get_int64(v));
                else if (path && json_object_object_get_ex(e, "line", &v))
                        buf_printf(b, "%s:%lld:%s\n", path, (long long)json_object_get_int64(v),
                                   str_of(e, "text") ? str_of(e, "text") : "");
                else if (path)
                        buf_printf(b, "%s%s\n", path, bool_of(e, "is_dir") ? "/" : "");
        }
        if (b->len == 0)
                buf_puts(b, "(nothing found)\n");
}

/* The warnings among a command's stderr lines ("sbx: warning: ..."), for the model to see. */
static void append_warnings(struct buf *text, const struct buf *err)
{
        static const char prefix[] = "sbx: warning: ";
        for (const char *l = err->data; l && *l;) {
                const char *nl = strchrnul(l, '\n');
                if (strncmp(l, prefix, sizeof(prefix) - 1) == 0) {
                        buf_puts(text, text->len ? "\nWarning: " : "Warning: ");
                        buf_append(text, l + sizeof(prefix) - 1,
                                   (size_t)(nl - l) - (sizeof(prefix) - 1));
                }
                l = *nl ? nl + 1 : nl;
        }
}

static json_object *result_from_json(const struct tool *t, json_object *o,
                                     const struct buf *stderr_text)
{
        _cleanup_buf_ struct buf text = {0};
        json_object *err = NULL, *structured = o;
        bool is_error =
            json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "error", &err);
        if (!is_error && json_object_is_type(o, json_type_object) && detach_text(&text, t->name, o))
                ;
        else if (strcmp(t->name, "exec") == 0 && json_object_is_type(o, json_type_object))
                exec_text(&text, o);
        else if (strcmp(t->name, "read") == 0 && !is_error && str_of(o, "content"))
                buf_puts(&text, str_of(o, "content"));
        else if (json_object_is_type(o, json_type_array))
                list_text(&text, o);
        else if (!is_error)
                buf_puts(&text, json_object_to_json_string_ext(
                                    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        if (is_error)
                buf_printf(&text, "%sError: %s (%s)", text.len ? "\n" : "",
                           str_of(err, "message") ? str_of(err, "message") : "failed",
                           str_of(err, "code") ? str_of(err, "code") : "internal");
        append_warnings(&text, stderr_text);
        if (json_object_is_type(o, json_type_array)) {
                /* structuredContent is an object: the list goes under the tool's key */
                structured = json_object_new_object();
                json_object_object_add(structured, t->result_key ? t->result_key : "result",
                                       json_object_get(o));
        } else {
                json_object_get(o);
        }
        return tool_result(text.data ? text.data : "", is_error, structured);
}

static json_object *parse_output(const struct buf *out)
{
        if (!out->data)
                return NULL;
        struct json_tokener *tok = json_tokener_new_ex(MCP_MAX_DEPTH);
        if (!tok)
                return NULL;
        json_object *o = json_tokener_parse_ex(tok, out->data, (int)out->len);
        if (json_tokener_get_error(tok) != json_tokener_success) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        return o;
}

static json_object *failure(const char *fmt, ...) _printf_(1, 2);
static json_object *failure(const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return tool_result(msg, true, NULL);
}

/* A call the server refuses itself: an error result like sbx's own. */
static json_object *refused(const char *code, const char *message)
{
        json_object *structured = json_object_new_object(), *err = json_object_new_object();
        json_object_object_add(err, "code", json_object_new_string(code));
        json_object_object_add(err, "message", json_object_new_string(message));
        json_object_object_add(structured, "error", err);
        char text[640];
        snprintf(text, sizeof(text), "Error: %s (%s)", message, code);
        return tool_result(text, true, structured);
}

/*
 * The checks of a call as it arrives; 1 when *ret is the refusal. The limits come first,
 * before the schema: "unlimited" or a ttl of 0 must be a result the model reads ("the
 * operator's limit is 512M"), not a type mismatch. Then the schema (-EINVAL: -32602).
 */
int mcp_tool_check(struct mcp_server *s, const struct tool *t, json_object *args, json_object **ret,
                   char *why, size_t why_len)
{
        char msg[512];
        int r = mcp_check_limits(&s->limits, t, args, msg, sizeof(msg));
        if (r == -EPERM) {
                *ret = refused("usage", msg);
                return *ret ? 1 : -ENOMEM;
        }
        return r < 0 ? r : mcp_check_args(t, args, why, why_len);
}

/*
 * The session, when the call starts (after the creates and destroys before it): it must be
 * one made through MCP (the argument becomes its id); to the model another session is one
 * that does not exist (session_not_found: create one). 1 when *ret is the refusal.
 */
static int session_check(struct mcp_server *s, const struct tool *t, json_object *args,
                         json_object **ret)
{
        char msg[512];
        int r = mcp_resolve_session(s, t, args, msg, sizeof(msg));
        if (r == -EPERM) {
                *ret = refused("session_not_found", msg);
                return *ret ? 1 : -ENOMEM;
        }
        return r;
}

int mcp_tool_begin(struct mcp_server *s, struct mcp_call *c, json_object **ret)
{
        int r = session_check(s, c->tool, c->args, ret);
        if (r != 0)
                return r;
        c->argv = mcp_command_line(s, c->tool, c->args, &c->run);
        if (!c->argv)
                return -ENOMEM;
        c->run.argv = c->argv;
        r = mcp_run_start(&c->run);
        if (r < 0) {
                *ret = failure("Error: failed to run sbx %s: %s", c->tool->name, strerror(-r));
                return *ret ? 1 : -ENOMEM;
        }
        return 0;
}

/* read failed with not_text: run it again with --binary, for an image. 1 when started. */
static int retry_binary(struct mcp_call *c, json_object *o)
{
        json_object *err, *code, *bin;
        if (strcmp(c->tool->name, "read") != 0 || c->binary_retry ||
            !json_object_object_get_ex(o, "error", &err) ||
            !json_object_object_get_ex(err, "code", &code) ||
            strcmp(json_object_get_string(code), "not_text") != 0 ||
            (json_object_object_get_ex(c->args, "binary", &bin) && json_object_get_boolean(bin)))
                return 0;
        struct mcp_run again = {.argv = c->argv};
        size_t n = 0;
        while (c->argv[n])
                n++;
        char **v = reallocarray(c->argv, n + 2, sizeof(char *));
        if (!v)
                return 0;
        /* sbx read --json ... -- SESSION PATH: --binary goes before "--" (argv[2] is --json) */
        memmove(&v[4], &v[3], (n - 2) * sizeof(char *));
        v[3] = strdup("--binary");
        c->argv = again.argv = v;
        if (!v[3]) {
                memmove(&v[3], &v[4], (n - 2) * sizeof(char *));
                return 0;
        }
        c->binary_retry = true;
        buf_freep(&c->run.out);
        buf_freep(&c->run.err);
        c->run = again;
        return mcp_run_start(&c->run) == 0 ? 1 : 0;
}

int mcp_tool_end(struct mcp_server *s, struct mcp_call *c, json_object **ret)
{
        const struct tool *t = c->tool;
        struct mcp_run *run = &c->run;
        json_object *o = run->out_overflow ? NULL : parse_output(&run->out);
        if (o)
                mcp_track_sessions(s, t, c->args, o); /* also when cancelled: a create may have
                                                         finished */
        if (run->cancelled || c->cancelled) {
                json_object_put(o);
                return -ECANCELED;
        }
        json_object *bin;
        bool binary = c->binary_retry || (strcmp(t->name, "read") == 0 &&
                                          json_object_object_get_ex(c->args, "binary", &bin) &&
                                          json_object_get_boolean(bin));
        json_object *image = binary && o ? mcp_output_image(o) : NULL;
        if (image) {
                *ret = image;
                json_object_put(o);
                return 0;
        }
        if (c->binary_retry && !(o && json_object_object_get_ex(o, "error", NULL))) {
                /* not an image: the answer is the first one's, not_text */
                json_object_put(o);
                *ret = failure("Error: failed to read '%s': not a text file, nor a PNG, JPEG, GIF "
                               "or WebP image (not_text)",
                               json_object_get_string(json_object_object_get(c->args, "path")));
                return *ret ? 0 : -ENOMEM;
        }
        if (o && retry_binary(c, o)) {
                json_object_put(o);
                return 1;
        }
        if (run->out_overflow)
                *ret = failure("Error: the output of %s is larger than %u MiB: ask for less "
                               "(a smaller max_output or limit, a narrower pattern or path)",
                               t->name, MCP_MAX_OUTPUT >> 20);
        else if (!o)
                *ret = failure("Error: sbx %s ended (status %d%s) without a result", t->name,
                               WIFEXITED(run->status) ? WEXITSTATUS(run->status)
                                                      : 128 + WTERMSIG(run->status),
                               run->interrupted ? ", stopped: the server is shutting down" : "");
        else
                *ret = result_from_json(t, o, &run->err);
        json_object_put(o);
        if (*ret)
                mcp_output_cap(*ret, s->max_text);
        return *ret ? 0 : -ENOMEM;
}
