/* SPDX-License-Identifier: MIT */
/*
 * The syntax of session ids and names, checked before either touches a path. Here, below
 * config, because a name can come from a config file ("name" key) as well as from a flag.
 */
#pragma once

#include <stdbool.h>

#define SESSION_ID_LEN 19 /* "sb_" + 16 */

/* "sb_" followed by exactly 16 characters of [0-9a-z] (base32 or hex). */
bool session_id_valid(const char *s);
/* [a-z0-9][a-z0-9_.-]{0,62}, and not something that looks like an id. */
bool session_name_valid(const char *s);
