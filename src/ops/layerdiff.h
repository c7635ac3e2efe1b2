/* SPDX-License-Identifier: MIT */
/*
 * `sbx diff`: what a session changed in its writable layer (a tmpfs), walked from an fd of the
 * layer's root on the host side. Only directory fds are opened (O_NOFOLLOW, on the layer's own
 * file system), everything else is looked at with fstatat(AT_SYMLINK_NOFOLLOW): a symlink or a
 * name the session planted is never followed. Layout of a host-base layer: newroot/ is the
 * session's "/", workspace/ and tmp/ are bound at /workspace and /tmp, upper/usr/ is the
 * overlay upper of /usr over the host's /usr.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "shared/buf.h"

/* How many entries the base snapshot may hold (the generated base has about a hundred). */
#define LAYERDIFF_SNAPSHOT_MAX 4096
/* The most changes listed; then the list says it was cut. */
#define LAYERDIFF_MAX 100000

/* Whether fd's layer is that of a host-base session (newroot/ and upper/usr/). */
bool layerdiff_host_base(int layer_fd);
/* Whether its "/" is an overlay whose upper is upper/root/ (--rootfs, --image sessions). */
bool layerdiff_overlay_root(int layer_fd);
/* The entries of the layer's own views (/: a host base's newroot/ or an overlay root's upper,
 * /workspace, /tmp) right after create, as text lines "VIEW INO CTIME_NS PATH". 0, -E2BIG
 * beyond LAYERDIFF_SNAPSHOT_MAX, or -errno. */
int layerdiff_snapshot(int layer_fd, struct buf *out);
/* The snapshot's text read back: its line count, and each line "VIEW INO CTIME_NS PATH" handed
 * to fn with path NUL-terminated in place (the text is changed). */
typedef void (*layerdiff_snap_fn)(void *ctx, int view, unsigned long long ino, long long ctime_ns,
                                  char *path);
size_t layerdiff_snapshot_lines(const char *text, size_t len);
void layerdiff_snapshot_each(char *text, size_t len, layerdiff_snap_fn fn, void *ctx);
/* How deep the walk goes; below that the list is cut (and says so). */
#define LAYERDIFF_MAX_DEPTH 256
/*
 * The changes since the snapshot; the entries of an overlay upper that the snapshot does not
 * explain are read against lower (n_lower directory fds, top first): for a host base, its /usr
 * overlay against the host's /usr; for an overlay root, "/" against the --rootfs directory or
 * the image's layers; usr_lower (NULL for all but an image committed from a host base: its
 * layers' usr/ and the host's /usr) the lowers of the /usr overlay an overlay root also has,
 * as "K /path" strings, each NUL-terminated (K: A added, C changed, D deleted) sorted by path.
 * *truncated when more than LAYERDIFF_MAX, or a tree deeper than LAYERDIFF_MAX_DEPTH. 0 or -errno.
 */
int layerdiff_run(int layer_fd, const char *snapshot, size_t len, const int *lower, size_t n_lower,
                  const int *usr_lower, size_t n_usr_lower, struct buf *out, bool *truncated);
