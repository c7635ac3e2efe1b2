/* SPDX-License-Identifier: MIT */
/* Sessions in the OpenSandbox shapes: Sandbox, ListSandboxesResponse (sandbox_json.c). */
#pragma once

#include <stdint.h>

#include "serve.h"

/* Answer status with the Sandbox object of session id (404 when there is none); full: with
 * the image (the create answer leaves it out). */
int sandbox_reply(struct serve_request *rq, struct serve_response *rs, unsigned status,
                  const char *id, bool full);
/* GET /sandboxes: filters state= (repeatable), metadata=k=v&..., page, pageSize. */
int sandbox_list_reply(struct serve_request *rq, struct serve_response *rs);
/* "2025-11-16T14:30:45Z", with optional fraction and +hh:mm offset: 0 or -EINVAL. */
int parse_rfc3339(const char *s, int64_t *ret);
/* A session reference safe to hand to sbx: an id or a name (never an option). */
bool serve_ref_valid(const char *s);
