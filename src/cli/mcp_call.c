/* SPDX-License-Identifier: MIT */
/*
 * tools/call: arguments checked against the tool's schema (tools.c), an sbx command line built
 * from them, the command run (mcp_spawn.c) and its --json output turned into a CallToolResult:
 * a text for the model, the JSON itself as structuredContent, isError when sbx reported an
 * error. Values reach sbx as "--flag=VALUE" or as operands after "--", so no value is ever
 * read as an option, and no shell is involved.
 */
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "mcp.h"

/* A growing argv of heap strings, NULL-terminated. */
struct argv_b {
        char **v;
        size_t n, cap;
        bool oom;
};

static void argv_b_free(struct argv_b *a)
{
        for (size_t i = 0; i < a->n; i++)
                free(a->v[i]);
        free(a->v);
}

static void argv_add(struct argv_b *a, const char *fmt, ...) _printf_(2, 3);
static void argv_add(struct argv_b *a, const char *fmt, ...)
{
        if (a->oom)
                return;
        if (a->n + 2 > a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 16;
                char **v = reallocarray(a->v, cap, sizeof(char *));
                if (!v) {
                        a->oom = true;
                        return;
                }
                a->v = v;
                a->cap = cap;
        }
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&a->v[a->n], fmt, ap);
        va_end(ap);
        if (r < 0) {
                a->oom = true;
                return;
        }
        a->v[++a->n] = NULL;
}

static const struct tool_param *param_find(const struct tool *t, const char *name)
{
        for (size_t i = 0; i < t->n_params; i++)
                if (strcmp(t->params[i].name, name) == 0)
                        return &t->params[i];
        return NULL;
}

/* A string that becomes an argument: no NUL inside, and the schema's pattern and choices. */
static bool string_ok(const struct tool_param *p, json_object *v, char *why, size_t n)
{
        const char *s = json_object_get_string(v);
        bool argument = p->via == TOOL_VIA_OPTION || p->via == TOOL_VIA_OPERAND;
        if (argument && strlen(s) != (size_t)json_object_get_string_len(v)) {
                snprintf(why, n, "'%s' must not contain a NUL character", p->name);
                return false;
        }
        if (p->choices[0]) {
                size_t i = 0;
                while (p->choices[i] && strcmp(p->choices[i], s) != 0)
                        i++;
                if (!p->choices[i]) {
                        snprintf(why, n, "'%s' must be one of the values of its enum", p->name);
                        return false;
                }
        }
        if (p->pattern) {
                regex_t re;
                if (regcomp(&re, p->pattern, REG_EXTENDED | REG_NOSUB) != 0) {
                        snprintf(why, n, "internal: bad pattern of '%s'", p->name);
                        return false;
                }
                bool match = regexec(&re, s, 0, NULL, 0) == 0;
                regfree(&re);
                if (!match) {
                        snprintf(why, n, "'%s' must match %s", p->name, p->pattern);
                        return false;
                }
        }
        return true;
}

static bool value_ok(const struct tool_param *p, json_object *v, char *why, size_t n)
{
        switch (p->type) {
        case TOOL_BOOLEAN:
                if (json_object_is_type(v, json_type_boolean))
                        return true;
                snprintf(why, n, "'%s' must be a boolean", p->name);
                return false;
        case TOOL_INTEGER:
                if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= p->minimum)
                        return true;
                snprintf(why, n, "'%s' must be an integer of at least %lld", p->name, p->minimum);
                return false;
        case TOOL_STRING:
                if (json_object_is_type(v, json_type_string))
                        return string_ok(p, v, why, n);
                snprintf(why, n, "'%s' must be a string", p->name);
                return false;
        case TOOL_STRING_ARRAY:
                if (!json_object_is_type(v, json_type_array) ||
                    (p->via == TOOL_VIA_OPERAND && json_object_array_length(v) == 0)) {
                        snprintf(why, n, "'%s' must be an array of strings%s", p->name,
                                 p->via == TOOL_VIA_OPERAND ? " (at least one)" : "");
                        return false;
                }
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        if (!json_object_is_type(e, json_type_string)) {
                                snprintf(why, n, "'%s' must be an array of strings", p->name);
                                return false;
                        }
                        if (!string_ok(p, e, why, n))
                                return false;
                }
                return true;
        }
        return false;
}

int mcp_check_args(const struct tool *t, json_object *args, char *why, size_t n)
{
        json_object_object_foreach(args, key, val)
        {
                const struct tool_param *p = param_find(t, key);
                if (!p) {
                        snprintf(why, n, "unknown argument '%s' for tool '%s'", key, t->name);
                        return -EINVAL;
                }
                if (!value_ok(p, val, why, n))
                        return -EINVAL;
        }
        for (size_t i = 0; i < t->n_params; i++)
                if (t->params[i].required &&
                    !json_object_object_get_ex(args, t->params[i].name, NULL)) {
                        snprintf(why, n, "missing required argument '%s' for tool '%s'",
                                 t->params[i].name, t->name);
                        return -EINVAL;
                }
        return 0;
}

/* An option: --flag=VALUE, repeated for arrays, bare for true. */
static void add_option(struct argv_b *a, const struct tool_param *p, json_object *v)
{
        if (p->type == TOOL_BOOLEAN) {
                if (json_object_get_boolean(v))
                        argv_add(a, "%s", p->flag);
        } else if (p->type == TOOL_INTEGER) {
                argv_add(a, "%s=%lld", p->flag, (long long)json_object_get_int64(v));
        } else if (p->type == TOOL_STRING_ARRAY) {
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        argv_add(a, "%s=%s", p->flag,
                                 json_object_get_string(json_object_array_get_idx(v, i)));
        } else {
                argv_add(a, "%s=%s", p->flag, json_object_get_string(v));
        }
}

/* The command line: sbx CMD --json [--config=F] OPTIONS [-- OPERANDS]; inputs in r->in. */
static void build_argv(const struct mcp_server *s, const struct tool *t, json_object *args,
                       struct argv_b *a, struct mcp_run *r)
{
        argv_add(a, "sbx");
        argv_add(a, "%s", t->name);
        argv_add(a, "--json");
        if (s->config_file)
                argv_add(a, "--config=%s", s->config_file);
        bool operands = false;
        for (size_t i = 0; i < t->n_params; i++) {
                const struct tool_param *p = &t->params[i];
                json_object *v;
                if (!json_object_object_get_ex(args, p->name, &v))
                        continue;
                int slot = p->via == TOOL_VIA_STDIN ? 0
                           : p->via == TOOL_VIA_FD3 ? 1
                           : p->via == TOOL_VIA_FD4 ? 2
                                                    : -1;
                if (slot >= 0) {
                        r->in[slot] = json_object_get_string(v);
                        r->in_len[slot] = (size_t)json_object_get_string_len(v);
                }
                if (p->via == TOOL_VIA_OPTION)
                        add_option(a, p, v);
                else if (slot > 0)
                        argv_add(a, "%s=/dev/fd/%d", p->flag, slot + 2);
                else
                        operands = true;
        }
        if (!operands)
                return;
        argv_add(a, "--");
        for (size_t i = 0; i < t->n_params; i++) {
                const struct tool_param *p = &t->params[i];
                json_object *v;
                if (!json_object_object_get_ex(args, p->name, &v))
                        continue;
                if (p->via == TOOL_VIA_STDIN) {
                        argv_add(a, "-");
                } else if (p->via == TOOL_VIA_OPERAND && p->type == TOOL_STRING_ARRAY) {
                        argv_add(a, "--"); /* exec ID -- CMD: CMD may start with "-" */
                        for (size_t k = 0; k < json_object_array_length(v); k++)
                                argv_add(a, "%s",
                                         json_object_get_string(json_object_array_get_idx(v, k)));
                } else if (p->via == TOOL_VIA_OPERAND) {
                        argv_add(a, "%s", json_object_get_string(v));
                }
        }
}

char **mcp_command_line(const struct mcp_server *s, const struct tool *t, json_object *args,
                        struct mcp_run *r)
{
        struct argv_b a = {0};
        build_argv(s, t, args, &a, r);
        if (a.oom) {
                argv_b_free(&a);
                return NULL;
        }
        return a.v;
}

void mcp_argv_free(char **argv)
{
        for (char **p = argv; p && *p; p++)
                free(*p);
        free(argv);
}

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
        vsnprintf(msg, sizeof(msg), fmt, ap);
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
 * The server's own checks, before any command runs; 1 when *ret is the refusal. The limits
 * come first, before the schema: "unlimited" or a ttl of 0 must be a result the model reads
 * ("the operator's limit is 512M"), not a pattern mismatch. Then the schema (-EINVAL: -32602),
 * then the session, which must be one this server created (the argument becomes its id): to
 * the model another session is one that does not exist (session_not_found: create one).
 */
static int server_checks(struct mcp_server *s, const struct tool *t, json_object *args,
                         json_object **ret, char *why, size_t why_len)
{
        char msg[512];
        const char *code = "usage";
        int r = mcp_check_limits(&s->limits, t, args, msg, sizeof(msg));
        if (r == 0 && (r = mcp_check_args(t, args, why, why_len)) < 0)
                return r;
        if (r == 0) {
                code = "session_not_found";
                r = mcp_resolve_session(s, t, args, msg, sizeof(msg));
        }
        if (r == -EPERM) {
                *ret = refused(code, msg);
                return *ret ? 1 : -ENOMEM;
        }
        return r;
}

int mcp_tool_call(struct mcp_server *s, const struct tool *t, json_object *args, json_object **ret,
                  char *why, size_t why_len)
{
        int r = server_checks(s, t, args, ret, why, why_len);
        if (r != 0)
                return r < 0 ? r : 0;
        struct mcp_run run = {0};
        _cleanup_(mcp_argv_freep) char **argv = mcp_command_line(s, t, args, &run);
        if (!argv)
                return -ENOMEM;
        run.argv = argv;
        r = mcp_spawn(s, &run);
        _cleanup_buf_ struct buf out = run.out, err = run.err;
        if (r < 0) {
                *ret = failure("Error: failed to run sbx %s: %s", t->name, strerror(-r));
                return 0;
        }
        json_object *o = run.out_overflow ? NULL : parse_output(&out);
        if (o)
                mcp_track_sessions(s, t, args, o); /* also when cancelled: a create may have
                                                      finished */
        if (run.cancelled) {
                json_object_put(o);
                return -ECANCELED;
        }
        if (run.out_overflow)
                *ret = failure("Error: the output of %s is larger than %u MiB: ask for less "
                               "(a smaller max_output or limit, a narrower pattern or path)",
                               t->name, MCP_MAX_OUTPUT >> 20);
        else if (!o)
                *ret = failure("Error: sbx %s ended (status %d%s) without a result", t->name,
                               WIFEXITED(run.status) ? WEXITSTATUS(run.status)
                                                     : 128 + WTERMSIG(run.status),
                               run.interrupted ? ", stopped: the server is shutting down" : "");
        else
                *ret = result_from_json(t, o, &err);
        json_object_put(o);
        return *ret ? 0 : -ENOMEM;
}
