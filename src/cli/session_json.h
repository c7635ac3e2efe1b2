/* SPDX-License-Identifier: MIT */
#pragma once

#include "../session/state.h"
#include "cli.h"

/* {"id","name","ttl_seconds","expires_at"[,"created_at","uid_range"]} of create/connect/list. */
void session_json(struct buf *b, const struct session_state *st, bool with_created);
