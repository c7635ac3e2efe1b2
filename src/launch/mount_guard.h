/* SPDX-License-Identifier: MIT */
/*
 * sbx's own state must never be mounted into a session: the runtime directory holds the
 * control sockets and state of every session of the user, the image store the bases of
 * every session. A --mount (flag, ini or SBX_VOLUME_MOUNTS) whose host path is one of them,
 * lies inside one, or holds one is refused before anything is made.
 */
#pragma once

#include "../config/config.h"
#include "shared/error.h"

/* 0, or exit 2 ("usage") naming the mount and what it would expose. */
int mount_guard_check(const struct sbx_config *c, struct sbx_error *e);
