/* SPDX-License-Identifier: MIT */
/*
 * Seccomp profiles, generated at build time from host-trusted data only (compiled-in tables,
 * seccomp_gen.c) and loaded into the calling process as the very last step before execve (or
 * before a confined file operation runs). Capabilities must already be dropped and
 * no_new_privs set.
 */
#pragma once

#include "../config/config.h"
#include "shared/error.h"

/* Load the filter for profile p. SBX_SECCOMP_UNCONFINED loads nothing and returns 0. */
int seccomp_apply(enum sbx_seccomp_profile p, struct sbx_error *e);

/* For `sbx check`: 0 when the kernel can load p and sbx has p's programs for this arch;
 * on failure *e says what is missing. Loads nothing. */
int seccomp_check(enum sbx_seccomp_profile p, struct sbx_error *e);
