/* SPDX-License-Identifier: MIT */
/*
 * Run a function inside a live session with exactly the confinement of a sandboxed process:
 * a child joins all of the session's namespaces, takes the sandbox uid/gid, drops every
 * capability, sets no_new_privs, loads the session's seccomp filter, chdirs to the session
 * workdir, and only then calls fn. Paths therefore resolve in the session's own root, with its
 * mounts (read-only ones included), and can never reach a host file the session cannot.
 * Whatever fn appends to *out and sets in *e is copied back to the caller.
 */
#pragma once

#include <stdint.h>

#include "shared/buf.h"
#include "shared/error.h"

typedef int (*confined_fn)(void *arg, struct buf *out, struct sbx_error *e);

/* What a mutating operation records in the session's audit log (event "write" or "edit"). */
struct confined_audit {
        const char *event;
        const char *path; /* as given (relative paths are relative to the session's workdir) */
        int64_t bytes;    /* write: the content's length; edit: the new string's; -1 none */
        int replace_all;  /* edit: 0/1; -1 none */
};

/*
 * id_or_name: a session id or name as given by the user (validated here, exit 3 when there is
 * no such session). Returns fn's return value (0 or -errno) or a negative error with *e set.
 * *out and *e may be filled even on failure.
 */
int session_run_confined(const char *id_or_name, confined_fn fn, void *arg,
                         const struct confined_audit *audit, struct buf *out, struct sbx_error *e);
