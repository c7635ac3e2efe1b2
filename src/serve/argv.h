/* SPDX-License-Identifier: MIT */
/* An argv built up for a child sbx command (argv.c). */
#pragma once

#include <stddef.h>

#include "shared/macros.h"

struct serve_argv {
        char **v; /* NULL-terminated once anything was added */
        size_t n;
        int error; /* the first -errno of an add: checked once, at the end */
};

void serve_argv_add(struct serve_argv *a, const char *fmt, ...) _printf_(2, 3);
void serve_argv_free(struct serve_argv *a);
#define _cleanup_argv_ _cleanup_(serve_argv_free)
