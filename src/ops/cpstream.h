/* SPDX-License-Identifier: MIT */
/*
 * `sbx cp`: a file or directory tree as a stream of records (type, mode, relative path, data),
 * packed on the side that reads and unpacked on the side that writes. Inside the session both
 * run in the confined helper (the session's rights); on the host, with the caller's. Packing
 * never follows a symlink (a link is copied as a link); unpacking (cpunpack.c) takes only
 * relative paths of plain components below one top entry, creates every entry new (O_EXCL,
 * never through a symlink) and so cannot write outside the target, whatever the stream says.
 */
#pragma once

#include <stdint.h>

#include "shared/buf.h"
#include "shared/error.h"
#include "hostpath.h"

/* The most a copy moves at once (it goes through memory); the session's disk bounds it too. */
#define CP_MAX_BYTES (64u << 20)
#define CP_MAX_ENTRIES 100000

/* Pack path (relative paths from the cwd) into out: the top entry is named by path's last
 * component. Bytes beyond max: exit 1, code limit. vols (NULL inside a session): on the host,
 * the session's writable volumes, whose links path's directories must not go through. */
int cp_pack(const char *path, const struct hostpath_vols *vols, uint64_t max, struct buf *out,
            struct sbx_error *e);
/*
 * Unpack at dst: into dst/<name> when dst is an existing directory, else as dst itself (its
 * parent must exist). Nothing that exists is replaced (exit 1, code exists). vols as for
 * cp_pack: a link in a volume on the way to dst, dst itself included, is refused; NULL also
 * says that no space is the session's disk limit. All or nothing: the tree is made under a
 * temporary name beside its own and renamed at the end; a failure removes it. SIGHUP, SIGINT,
 * SIGQUIT and SIGTERM are held back meanwhile: one that comes gives the copy up, and ends the
 * process (its default) once the temporary tree is gone. *ret_bytes: the file bytes written.
 */
int cp_unpack(const char *data, size_t len, const char *dst, const struct hostpath_vols *vols,
              uint64_t *ret_bytes, struct sbx_error *e);

/* For session_run_confined: pack (req->path) or unpack (req->data at req->path) inside. */
struct cp_req {
        const char *path;
        const char *data; /* unpack: the stream; NULL: pack */
        size_t len;
        uint64_t max;
};
int cp_confined(void *arg, struct buf *out, struct sbx_error *e);
