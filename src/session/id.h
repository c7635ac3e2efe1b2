/* SPDX-License-Identifier: MIT */
/* Session ids and names: generated from getrandom, validated before they touch a path. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "shared/ident.h"

/* "sb_" + 16 lowercase hex characters from getrandom(2). out must hold SESSION_ID_LEN + 1. */
int session_id_generate(char out[static SESSION_ID_LEN + 1]);

/*
 * The session ids among the entries of the directory dirfd (not consumed), in a fresh array
 * of *ret_n, rotated to start at a random one: a caller that looks at only the first k of
 * them sees a different k each time. NULL with *ret_n = 0 when there are none.
 */
char (*session_ids_in_dir(int dirfd, size_t *ret_n))[SESSION_ID_LEN + 1];

/*
 * At most max of those ids (0: every one, as session_ids_in_dir), from a random one on. On a
 * cgroup file system (kernfs, whose positions are name hashes, so a random position is a
 * random start) the directory is read from a random position only as far as that takes: a
 * cgroup directory of 1,000 sessions cost ~0.3 ms read whole. Elsewhere it is read whole.
 * NULL with *ret_n = 0 when there are none.
 */
char (*session_ids_sample(int dirfd, size_t max, size_t *ret_n))[SESSION_ID_LEN + 1];
