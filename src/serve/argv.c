/* SPDX-License-Identifier: MIT */
/* Building the argv of a child sbx command: one formatted argument at a time. */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argv.h"

void serve_argv_add(struct serve_argv *a, const char *fmt, ...)
{
        if (a->error)
                return;
        char **v = realloc(a->v, (a->n + 2) * sizeof(*v));
        if (!v) {
                a->error = -ENOMEM;
                return;
        }
        a->v = v;
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(&v[a->n], fmt, ap);
        va_end(ap);
        if (k < 0) {
                v[a->n] = NULL;
                a->error = -ENOMEM;
                return;
        }
        v[++a->n] = NULL;
}

void serve_argv_free(struct serve_argv *a)
{
        for (size_t i = 0; i < a->n; i++)
                free(a->v[i]);
        free(a->v);
        *a = (struct serve_argv){0};
}

int serve_argv_env(struct serve_argv *a, json_object *env, const char *name, char **ret_json,
                   char *why, size_t n)
{
        if (!json_object_is_type(env, json_type_object)) {
                snprintf(why, n, "%s must be an object of strings", name);
                return -EINVAL;
        }
        json_object_object_foreach(env, key, val)
        {
                if (!json_object_is_type(val, json_type_string)) {
                        snprintf(why, n, "%s.%s must be a string", name, key);
                        return -EINVAL;
                }
        }
        if (json_object_object_length(env) == 0)
                return 0;
        serve_argv_add(a, "--env-file=-");
        *ret_json = strdup(json_object_to_json_string(env));
        return *ret_json ? 0 : -ENOMEM;
}
