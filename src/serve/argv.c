/* SPDX-License-Identifier: MIT */
/* Building the argv of a child sbx command: one formatted argument at a time. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
