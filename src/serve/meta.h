/* SPDX-License-Identifier: MIT */
/* serve's own per-session state, kept in the session's runtime directory (meta.c). */
#pragma once

#include <stdbool.h>

#include "session/id.h"
#include "shared/buf.h"

/* hex characters of a session's execd access token */
#define SERVE_TOKEN_LEN 64

/* The token of the session that ref (id or name) names, made on first use, and its id:
 * 0, -ENOENT (no such session) or -errno. */
int serve_token_get(const char *ref, char id[static SESSION_ID_LEN + 1],
                    char out[static SERVE_TOKEN_LEN + 1]);
/* 0 when token opens session id, -ENOENT without such a session, -EACCES otherwise. */
int serve_token_check(const char *id, const char *token);
/* serve.json: the OpenSandbox fields of a session (lifecycle.c writes and reads them). */
int serve_meta_write(const char *id, const struct buf *json);
int serve_meta_read(const char *id, struct buf *out);
