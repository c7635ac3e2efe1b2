/* SPDX-License-Identifier: MIT */
/*
 * --env-file FILE: environment values that never show in a command line (/proc/PID/cmdline
 * is world-readable while sbx runs, and a session's supervisor lives as long as the session).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

/* The most one file may hold, and the most entries it may give. */
#define ENVFILE_MAX_BYTES (1u << 20)
#define ENVFILE_MAX_ENTRIES 256

/*
 * Read path ("-": standard input): a JSON object of string values, or lines KEY=VALUE
 * (blank lines and lines starting with # skipped). *ret: the "KEY=VALUE" strings, *ret_n of
 * them, kept for the invocation's life. 0, or a usage error in cli->err.
 */
int envfile_read(struct cli *cli, const char *path, char *const **ret, size_t *ret_n);
/* Whether "-" was read (then -i and -T, which hand stdin to the command, are refused). */
bool envfile_used_stdin(void);
