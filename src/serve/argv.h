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

struct json_object;
/*
 * A request's environment object (its field name: "env" or "envs"), every value a string:
 * when it has any, "--env-file=-" is added and *ret_json gets the object as JSON, for the
 * child's stdin (serve_text_fd): the values never go in a command line, which every local
 * user can read in /proc/PID/cmdline. 0, -EINVAL with why, or -ENOMEM.
 */
int serve_argv_env(struct serve_argv *a, struct json_object *env, const char *name, char **ret_json,
                   char *why, size_t n);
void serve_argv_free(struct serve_argv *a);
#define _cleanup_argv_ _cleanup_(serve_argv_free)
