/* SPDX-License-Identifier: MIT */
/* Private to kernel_check.c and refusal.c: probes that run in a throwaway child. */
#pragma once

#include <stddef.h>

/* A child's answer: its exit status (0 = the feature works) and one line of detail. */
struct answer {
        int status; /* the child's exit code, 128+N when killed by signal N, -1 no child */
        char line[256];
};

typedef int (*probe_fn)(void *arg, char *line, size_t size);

/* Run fn(arg) in a forked child and collect its answer. */
void in_child(probe_fn fn, void *arg, struct answer *a);
/* The first number in a /proc/sys file, or -1. */
long read_sysctl(const char *path);
/* In the calling (child) process: a new user and mount namespace with our own ids mapped to 0
 * (what an unprivileged process may do). -1 with the reason in line on failure. */
int map_self(char *line, size_t size);
