/* SPDX-License-Identifier: MIT */
/*
 * The front-end a session was made through, when it is not the CLI: a file "origin" in the
 * session's directory ($RT/<id>/origin, 0600, one word such as "mcp"). It goes with the
 * session: a later session of the same name, or with an id used before, never has it. The MCP
 * server acts only on sessions whose origin is "mcp" (a user's own sessions may have host
 * directories mounted), and finds them again after a reconnect by this mark alone.
 */
#pragma once

#include "id.h"

/* Mark session id as made through origin (a short word). 0 or -errno (-ENOENT: gone). */
int session_origin_set(const char *id, const char *origin);

/*
 * Resolve ref (an id or a name) to the id of a live session marked with origin, into out.
 * -ENOENT when there is no such session, -EPERM when it has another origin (or none), -EINVAL
 * when ref is neither an id nor a name; other -errno on failure.
 */
int session_origin_resolve(const char *ref, const char *origin,
                           char out[static SESSION_ID_LEN + 1]);

/* Resolve ref (an id or a name) to the id of a live session, whatever its origin. 0, or
 * -ENOENT / -EINVAL as session_origin_resolve. */
int session_ref_resolve(const char *ref, char out[static SESSION_ID_LEN + 1]);
