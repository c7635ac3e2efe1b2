/* SPDX-License-Identifier: MIT */
/*
 * Why this host refuses a session, found by trying each known cause in a throwaway child:
 * user namespaces disabled or used up (max_user_namespaces, unprivileged_userns_clone),
 * AppArmor's restriction of unprivileged user namespaces, an outer seccomp filter (a
 * container's profile) refusing unshare/clone or mount, a masked or read-only /proc that the
 * kernel will not mount a new proc over, no overlayfs in a user namespace, a user namespace
 * that denies setgroups. Called only once a session failed: it costs a few forks.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "shared/error.h"

/* "CAUSE; fix: FIX" into out; false (out empty) when none of the known causes is found.
 * overlay: the session needs an overlay of its base (not --read-only). */
bool host_refusal(bool overlay, char *out, size_t n);

/* When a session could not be made and host_refusal finds why: replace e with one line
 * naming the cause and the fix (exit 4, "unsupported"). e is kept otherwise. */
void host_refusal_explain(bool overlay, struct sbx_error *e);
