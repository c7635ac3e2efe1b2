/* SPDX-License-Identifier: MIT */
/*
 * tools/call, its arguments: checked against the tool's schema (tools.c), then turned into an
 * sbx command line. Values reach sbx as "--flag=VALUE" or as operands after "--", so no value
 * is ever read as an option, and no shell is involved.
 */
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* The number a string of digits (with up to 3 decimals when fraction) says, or -1. */
static double numeric_string(json_object *v, bool fraction)
{
        const char *s = json_object_get_string(v);
        size_t digits = strspn(s, "0123456789");
        if (digits == 0 || digits > 15)
                return -1;
        if (s[digits] == '.' && fraction) {
                size_t dec = strspn(s + digits + 1, "0123456789");
                if (dec == 0 || dec > 3 || s[digits + 1 + dec])
                        return -1;
        } else if (s[digits]) {
                return -1;
        }
        return strtod(s, NULL);
}

/* An integer at least min: a JSON integer, or a string of digits. */
static bool integer_ok(json_object *v, long long min)
{
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v) >= min;
        return json_object_is_type(v, json_type_string) && numeric_string(v, false) >= (double)min;
}

/* A number at least min with at most 3 decimals (cpus): a JSON number or a string of one. */
static bool number_ok(json_object *v, long long min)
{
        if (json_object_is_type(v, json_type_int))
                return json_object_get_int64(v) >= min;
        if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);
                double milli = d * 1000, whole = (double)(long long)(milli + 0.5);
                return d >= (double)min && d <= 1e6 && milli - whole < 1e-6 && whole - milli < 1e-6;
        }
        return json_object_is_type(v, json_type_string) && numeric_string(v, true) >= (double)min;
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
                if (integer_ok(v, p->minimum))
                        return true;
                snprintf(why, n, "'%s' must be an integer of at least %lld", p->name, p->minimum);
                return false;
        case TOOL_NUMBER:
                if (number_ok(v, p->minimum))
                        return true;
                snprintf(why, n, "'%s' must be a number of at least %lld (at most 3 decimals)",
                         p->name, p->minimum);
                return false;
        case TOOL_QUANTITY:
                if (json_object_is_type(v, json_type_string))
                        return string_ok(p, v, why, n);
                if (integer_ok(v, 0))
                        return true;
                snprintf(why, n, "'%s' must be an integer or a string", p->name);
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

/* The environment option of create and exec (its values go on fd 3: add_env). */
static bool is_env(const struct tool_param *p)
{
        return p->flag && strcmp(p->flag, "--env") == 0 && p->type == TOOL_STRING_ARRAY;
}

static bool env_ok(const struct tool_param *p, json_object *v, char *why, size_t n)
{
        for (size_t i = 0; is_env(p) && i < json_object_array_length(v); i++)
                if (!strchr(json_object_get_string(json_object_array_get_idx(v, i)), '=')) {
                        snprintf(why, n, "'%s' items must be KEY=VALUE", p->name);
                        return false;
                }
        return true;
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
                if (!value_ok(p, val, why, n) || !env_ok(p, val, why, n))
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
        } else if (p->type == TOOL_INTEGER || p->type == TOOL_NUMBER || p->type == TOOL_QUANTITY) {
                char num[64];
                if (json_object_is_type(v, json_type_string))
                        argv_add(a, "%s=%s", p->flag, json_object_get_string(v));
                else if (mcp_arg_text(v, num, sizeof(num)))
                        argv_add(a, "%s=%s", p->flag, num);
        } else if (p->type == TOOL_STRING_ARRAY) {
                for (size_t i = 0; i < json_object_array_length(v); i++)
                        argv_add(a, "%s=%s", p->flag,
                                 json_object_get_string(json_object_array_get_idx(v, i)));
        } else {
                argv_add(a, "%s=%s", p->flag, json_object_get_string(v));
        }
}

/* The env argument ("K=V" items) as a JSON object on fd 3, named by --env-file: values never
 * go in a command line, which every local user can read in /proc/PID/cmdline. */
static void add_env(struct argv_b *a, json_object *v, struct mcp_run *r)
{
        json_object *o = json_object_new_object();
        for (size_t i = 0; o && i < json_object_array_length(v); i++) {
                const char *kv = json_object_get_string(json_object_array_get_idx(v, i));
                const char *eq = strchr(kv, '='); /* there is one: mcp_check_args */
                _cleanup_free_ char *k = eq ? strndup(kv, (size_t)(eq - kv)) : NULL;
                json_object *val = k ? json_object_new_string(eq + 1) : NULL;
                if (!val || json_object_object_add(o, k, val) < 0) {
                        json_object_put(val);
                        json_object_put(o);
                        o = NULL;
                }
        }
        const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
        free(r->env_json);
        r->env_json = text ? strdup(text) : NULL;
        json_object_put(o);
        if (!r->env_json) {
                a->oom = true;
                return;
        }
        r->in[1] = r->env_json;
        r->in_len[1] = strlen(r->env_json);
        argv_add(a, "--env-file=/dev/fd/3");
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
                if (p->via == TOOL_VIA_OPTION && is_env(p))
                        add_env(a, v, r);
                else if (p->via == TOOL_VIA_OPTION)
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
