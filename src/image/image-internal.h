/* SPDX-License-Identifier: MIT */
/* Internals of src/image/: digests, layer unpacking, sources, the store's files. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/buf.h"
#include "image.h"

/* ---- digest.c: sha256 (nettle) ---- */
int digest_mem(const void *p, size_t n, char out[static DIGEST_HEX_LEN + 1]);
bool digest_hex_valid(const char *s);
/* This host's architecture as OCI names it ("amd64", "arm64", ...). */
const char *image_host_arch(void);
/* "sha256:<hex>" -> hex; -EINVAL for another algorithm or a malformed digest. */
int digest_parse(const char *s, char out[static DIGEST_HEX_LEN + 1]);

/* ---- unpack.c: one layer tar (any compression libarchive knows) into a directory ---- */

struct unpack_budget {
        uint64_t max_bytes;         /* image_max_unpacked() */
        uint64_t bytes;             /* logical bytes so far, against max_bytes */
        uint64_t written;           /* data bytes written since the last check of the free space */
        uint64_t entries;           /* against IMAGE_MAX_ENTRIES */
        uint64_t skipped;           /* device nodes and sockets dropped */
        image_progress_fn progress; /* NULL: none; the blob's bytes read so far and in all */
        void *progress_arg;
};
/*
 * Unpack the archive read from blobfd into the empty directory destfd (fd-relative, never
 * leaving it), hashing every byte read: the blob must hash to `expect` (hex; NULL: only
 * computed) and its digest is stored in got. Fails (with *e set) on an unsafe or malformed
 * entry, an exceeded bound or a digest mismatch.
 */
int layer_unpack(int blobfd, int destfd, const char *what, const char *expect,
                 char got[static DIGEST_HEX_LEN + 1], struct unpack_budget *b, struct sbx_error *e);

/* An entry name relative to the layer: leading '/' and "./" and empty or "." components
 * dropped ("" is the root); -EPERM for a ".." component, -ENAMETOOLONG. */
int unpack_clean_path(const char *in, char *out, size_t n);

/* ---- source.c: what an import source holds ---- */
struct image_manifest {
        char id[DIGEST_HEX_LEN + 1]; /* image id: sha256 of the manifest (or the tarball) */
        size_t n_layers;
        char (*layers)[DIGEST_HEX_LEN + 1]; /* expected sha256 of each layer blob, lowest first */
        int *layer_fds;                     /* open blobs, verified when unpacked */
        char **env;
        char *workdir;
};
void image_manifest_free(struct image_manifest *m);
/*
 * Open SOURCE (a directory with an OCI layout or a docker-save tree, an oci-archive or
 * docker-save tar, or a plain rootfs tarball). Tar sources of the first two kinds are copied
 * into scratchfd (a private directory in the store) first. tag picks a manifest in an index
 * with several. Manifest, index and config digests are verified here; layer blobs when read.
 */
int image_source_open(const char *source, const char *tag, uint64_t max_bytes, int scratchfd,
                      struct image_manifest *m, struct sbx_error *e);

/* ---- store.c ---- */
/* Paths under the store: layers/<hex>/, images/<id>.json, tags/<name>:<tag> -> <id>, tmp/. */
int store_lock(int storefd, int *ret_lockfd, struct sbx_error *e);
int store_record_read(int storefd, const char *id, struct image_info *ret);
int store_record_write(int storefd, const struct image_info *i);
/* The id a tag points at; -ENOENT when there is none. */
int store_tag_get(int storefd, const char *name, const char *tag, char id[DIGEST_HEX_LEN + 1]);
int store_tag_set(int storefd, const char *name, const char *tag, const char *id);
int store_tag_file(const char *name, const char *tag, char *out, size_t n);
/*
 * What the store's filesystem keeps free whatever an import or a pull writes: 1% of it, at
 * least STORE_RESERVE_MIN. Its writers check every STORE_CHECK_EVERY bytes written, so an
 * archive or a registry stops short of filling the host's disk (a full disk is the host's
 * problem, not only ours). 0, -ENOSPC past the reserve (*ret_reserve: it), or -errno.
 */
#define STORE_RESERVE_MIN (UINT64_C(16) << 20)
#define STORE_CHECK_EVERY (UINT64_C(8) << 20)
int store_space_check(int fd, uint64_t *ret_reserve);
/* Whether p[0..n) is all zeros: a block the store's writers leave as a hole (files are new). */
bool store_all_zero(const void *p, size_t n);
/* Remove a tree below dirfd (no symlink is ever followed). */
int store_rmtree(int dirfd, const char *name);
/* Empty tmp/, drop records no tag names and nobody holds, then layers no record names.
 * Returns the first failure (-errno): what could not be removed stays. */
int store_gc(int storefd);
/* Append s (taken on success) to the NULL-terminated *v. */
int strv_add(char ***v, char *s);
size_t strv_len(char *const *v);
