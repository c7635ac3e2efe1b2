/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory and the per-session entries in it (layout in docs/DESIGN.md).
 * Every function takes an fd of the verified runtime dir and names relative to it, so a path
 * is never re-resolved through something a sandbox or another user could have swapped.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "shared/error.h"
#include "id.h"

/*
 * Resolve ($SBX_RUNTIME_DIR, /run/sbx for root, $XDG_RUNTIME_DIR/sbx, /tmp/sbx-$UID), create
 * it 0700 when missing, verify it (a directory, not a symlink, owned by us, no group/other
 * access) and return an O_DIRECTORY fd in *ret_fd. Exit 4 with a clear message otherwise.
 */
int runtime_open(int *ret_fd, struct sbx_error *e);
/* The runtime directory's path as runtime_open() finds it (not checked, not made). */
int runtime_dir_path(char *out, size_t n);

/*
 * The syntax check of runtime_resolve alone (exit 3 when id_or_name is neither an id nor a
 * name): callers run it before runtime_open, so a bad argument creates nothing.
 */
int runtime_check_ref(const char *id_or_name, struct sbx_error *e);

/*
 * Turn a user-given ID or name into a session id (out), checking syntax before anything
 * touches the filesystem and following names/<name>. Exit 3 "no such session" when it is
 * neither a valid id nor a known name, or the session directory does not exist.
 */
int runtime_resolve(int rtfd, const char *id_or_name, char out[static SESSION_ID_LEN + 1],
                    struct sbx_error *e);
/* The same, returning the session directory it found open (O_DIRECTORY|O_NOFOLLOW), or < 0. */
int runtime_resolve_open(int rtfd, const char *id_or_name, char out[static SESSION_ID_LEN + 1],
                         struct sbx_error *e);

/* Open $RT/<id> (O_DIRECTORY|O_NOFOLLOW). -ENOENT when it is gone. */
int runtime_open_session(int rtfd, const char *id);

/*
 * Try to take the session's lock without waiting. Returns the locked fd (>= 0) when nobody
 * holds it, i.e. the supervisor is gone; -EWOULDBLOCK while the session is alive.
 */
int runtime_try_lock(int sessfd);

/*
 * A create holds this (a shared flock on the runtime dir, the returned fd) from before it makes
 * its session directory until the directory holds its locked lock: while nobody holds it, a
 * session directory without a lock is one whose create died, and goes at once. -errno on
 * failure.
 */
int runtime_creating_begin(int rtfd);

/* Create names/<name> -> id; -EEXIST when the name is taken. */
int runtime_name_claim(int rtfd, const char *name, const char *id);
/* Remove names/<name> only when it still points at id. */
void runtime_name_release(int rtfd, const char *name, const char *id);

/* Remove $RT/<id> and everything in it (the session must be dead). */
void runtime_remove_session(int rtfd, const char *id);

/*
 * Remove every session whose supervisor is gone (lock free) and every dangling name link.
 * Never touches a live session. on_dead (may be NULL) is given a dead session's recorded state
 * before its directory goes: the launch layer removes the cgroups recorded there
 * (cgroup_reap_stale, which also sweeps the unrecorded ones). max_checks bounds the sessions
 * looked at, from a random one on (session_ids_sample: the runtime directory is read whole,
 * a cgroup directory only that far): a new session's supervisor passes RUNTIME_CREATE_CHECKS
 * so that the 1,000th session costs close to what the 20th does (each check is ~4 syscalls per
 * directory, and reading a cgroup directory of 1,000 sessions whole cost ~0.3 ms); with fewer
 * entries than that it is the full sweep. 0: every one (list, destroy, connect).
 * runtime_stale_present: whether any of the sessions looked at is stale, removing nothing (a look
 * takes no time; a removal may wait seconds for a dead session's cgroups to empty).
 */
#define RUNTIME_CREATE_CHECKS 16
struct session_state;
typedef void (*runtime_dead_fn)(const struct session_state *st);
void runtime_reap_stale_sessions(int rtfd, size_t max_checks, runtime_dead_fn on_dead);
bool runtime_stale_present(int rtfd, size_t max_checks);
