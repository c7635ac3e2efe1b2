/* SPDX-License-Identifier: MIT */
/*
 * Images (docs/DESIGN.md, "Images"): a content-addressed store of unpacked layers, image
 * records and tags; import from OCI layouts, oci-archive and docker-save tars and plain rootfs
 * tarballs; resolving an image for a session. Nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../config/config.h"
#include "shared/error.h"

/* Bounds of one import (all layers together), documented in sbx.1. */
/* logical bytes of every entry of one import, unless SBX_IMAGE_MAX_SIZE says otherwise */
#define IMAGE_MAX_UNPACKED (UINT64_C(32) << 30)
#define IMAGE_MAX_ENTRIES 2000000u
#define IMAGE_MAX_LAYERS 128u
#define IMAGE_MAX_JSON (4u << 20) /* a manifest, index or config */

#define DIGEST_HEX_LEN 64

/* One image as `image list` shows it. */
struct image_info {
        char *name, *tag;
        char id[DIGEST_HEX_LEN + 1];
        char **layers; /* layer ids (sha256 hex of the blob), lowest first */
        char **env;    /* the image config's Env, "K=V" */
        char *workdir; /* its WorkingDir, NULL when unset */
        /* What the layers sit on: NULL for a self-contained image, "rootfs:/ABS" for a commit
         * of a --rootfs session (the directory is referenced, never copied: such an image
         * works only on this host while that directory exists). */
        char *base;
        uint64_t size; /* logical bytes unpacked */
        int64_t created_at;
        bool in_use; /* a session holds it (list only) */
};
void image_info_free(struct image_info *i);

/* The store: $SBX_IMAGE_STORE, else /var/lib/sbx as root, else $XDG_DATA_HOME/sbx, else
 * ~/.local/share/sbx. Opened (created when missing) as a directory fd. */
int image_store_path(char **ret);
int image_store_open(bool create, int *ret_fd, struct sbx_error *e);

/* Import SOURCE as NAME[:TAG] (TAG "latest" when omitted). Fills *ret on success. */
/* What `image pull` and `image import` report while they work: what (e.g. "pulling layer 2/5
 * sha256:abcd...", "unpacking layer 1 of 3 (sha256:...)"), bytes so far and in all. */
typedef void (*image_progress_fn)(void *arg, const char *what, uint64_t now, uint64_t total);
/* progress: NULL for none. */
int image_import(const char *ref, const char *source, image_progress_fn progress, void *arg,
                 struct image_info *ret, struct sbx_error *e);
struct image_pull_opts {
        bool insecure;               /* plain http to the registry (--insecure-registry) */
        char *const *insecure_hosts; /* [images] insecure_registries: "HOST[:PORT]", NULL-ended */
        image_progress_fn progress;  /* NULL: none */
        void *arg;
};
/* Pull REF ([HOST[:PORT]/]NAME[:TAG][@sha256:HEX]) from its registry into the store, as
 * NAME:TAG (docker.io's images by their short name: "python:3.12"). Fills *ret. */
int image_pull(const char *ref, const struct image_pull_opts *o, struct image_info *ret,
               struct sbx_error *e);

/* The bound of one import's logical size: SBX_IMAGE_MAX_SIZE, else IMAGE_MAX_UNPACKED. 0, or
 * -EINVAL with a usage error in *e. */
int image_max_unpacked(uint64_t *ret, struct sbx_error *e);

/*
 * `sbx commit`: the layer tar read from blobfd (from its start; unpacked through the same
 * hardened path as an import) on top of image base_id (sha256 hex), or else of the directory
 * base_dir (absolute; recorded as base "rootfs:DIR", not copied; "host": recorded as base
 * "host", the host base of a host-base session), or else of nothing, as
 * NAME[:TAG], with the base's Env and WorkingDir. A tag that names another image already is
 * refused (exit 1, code exists) unless replace. The image id is the sha256 of its layers,
 * Env and WorkingDir. Nothing is left in the store on failure. Fills *ret (size: the new
 * layer's logical bytes).
 */
int image_commit(const char *ref, const char *base_id, const char *base_dir, int blobfd,
                 bool replace, struct image_info *ret, struct sbx_error *e);

/* Every tagged image, sorted by name and tag. */
int image_list(struct image_info **ret, size_t *ret_n, struct sbx_error *e);
void image_list_free(struct image_info *v, size_t n);
/* Remove the tag; refused (exit 1) while a session uses the image. Unused layers go. */
int image_remove(const char *ref, struct image_info *ret, struct sbx_error *e);

/*
 * For create/run: look up c->image (pulled with `pull` when the store lacks it, unless pull is
 * NULL or [images] pull = never), hold it (a shared lock kept in c->image_lock_fd for the
 * session's life: `image rm` is refused meanwhile), fill c->image_layers_dir/c->image_layers,
 * and apply the image's Env (below [env]/--env) and WorkingDir (unless --workdir was given).
 * An image with a base directory sets c->image_rootfs (it must still be a directory).
 */
int image_use(struct sbx_config *c, const struct image_pull_opts *pull, struct sbx_error *e);

/* The unpacked layers of image id (sha256 hex) as directory fds, top first (the order of an
 * overlay's lowers), then its base directory when it has one, for `sbx diff`. *ret_fds is
 * the caller's (each fd and the array). *ret_host: the image was committed from a host base
 * (its layers' usr/ lie over the host's /usr). */
int image_open_layers(const char *id, int **ret_fds, size_t *ret_n, bool *ret_host,
                      struct sbx_error *e);

/* Split "NAME[:TAG]" (already syntax-checked) into name and tag ("latest"). */
int image_ref_split(const char *ref, char **ret_name, char **ret_tag);
