/* SPDX-License-Identifier: MIT */
/*
 * `sbx commit`: an overlay upper directory (a session's writable layer) as an OCI layer tar,
 * written on the host side by fd: directories are opened one component at a time (O_NOFOLLOW,
 * on the layer's own file system), files with O_NOFOLLOW and checked to be the inode the walk
 * saw, and nothing the session named is ever followed. Overlay whiteouts (0/0 character
 * devices) become `.wh.NAME`, opaque directories (user.overlay.opaque=y) `.wh..wh..opq`.
 * What an image must not carry is left out and counted: device nodes, fifos, sockets, and
 * names that would read as whiteouts (".wh.*"). Setuid, setgid and sticky-on-files bits are
 * stripped; hard links are written as separate files; symlinks as links (an image's links
 * resolve inside the sessions that use it). Owners are mapped from the session's host range
 * back to its own ids (outside the range: 65534).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/error.h"

struct layertar_opts {
        uint32_t uid_start, uid_count; /* the session's host id range */
        uint64_t max_bytes;            /* logical bytes (sparse files in full), else exit 1 limit */
        uint64_t max_entries;
};

struct layertar_stats {
        uint64_t bytes, entries, skipped;
};

/* Write upper_fd's tree (the root of the layer) as a tar to out_fd. 0 or -errno with *e set:
 * exit 1 "limit" past a bound. */
int layertar_write(int upper_fd, int out_fd, const struct layertar_opts *o,
                   struct layertar_stats *st, struct sbx_error *e);

/*
 * A host-base session's layer (layer_fd: the writable layer's root) as one layer tar: what the
 * session put in its root against snapshot (the text layerdiff_snapshot wrote at create), then
 * the /usr overlay's upper (upper/usr/) as usr/ (its whiteouts and opaque directories kept).
 * The root is newroot/, a plain directory (a session-made 0/0 device there is a device:
 * dropped; user.overlay.* is not read), or, for a session of an image committed from a host
 * base, the root overlay's upper upper/root/ (whiteouts and opaque directories kept).
 * Left out of the root: every entry the snapshot has (sbx's /bin links, the directories it
 * made; a directory of sbx's that is still the same inode -- the layer is a tmpfs, which
 * never reuses one -- is walked for what the session put in it, without its own header), and
 * /etc (generated per session), /usr, /proc, /sys, /dev, /run, /tmp, /var/tmp, /workspace whole. An
 * empty snapshot is refused (exit 4): sbx's files would read as the session's.
 */
int layertar_write_host(int layer_fd, const char *snapshot, size_t len, int out_fd,
                        const struct layertar_opts *o, struct layertar_stats *st,
                        struct sbx_error *e);
