/* SPDX-License-Identifier: MIT */
/*
 * The syscall tables behind the seccomp profiles (seccomp_tables.c). Private to seccomp.c:
 * compiled-in, host-trusted data only, never read from a file.
 */
#pragma once

#include <stddef.h>

/* Which profiles allow a syscall. */
enum {
        SECCOMP_IN_DEFAULT = 1 << 0,
        SECCOMP_IN_STRICT = 1 << 1,
        SECCOMP_IN_BOTH = SECCOMP_IN_DEFAULT | SECCOMP_IN_STRICT,
};

struct seccomp_allow {
        const char *name;
        unsigned int profiles; /* SECCOMP_IN_* */
};

/* A syscall that every profile refuses with a chosen errno (instead of the filter default). */
struct seccomp_deny {
        const char *name;
        int errnum;
};

extern const struct seccomp_allow seccomp_allow_table[];
extern const size_t seccomp_allow_table_len;
extern const struct seccomp_deny seccomp_deny_table[];
extern const size_t seccomp_deny_table_len;

/* The personality(2) values a program may set (Docker's set); anything else is refused. */
extern const unsigned long seccomp_personality_allowed[];
extern const size_t seccomp_personality_allowed_len;
