/* SPDX-License-Identifier: MIT */
/*
 * A client of the OCI distribution API v2 (registry.c): references as docker and podman read
 * them, anonymous, bearer-token and basic authentication, manifests and blobs, every blob
 * verified against its sha256 while it is written. Nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/buf.h"
#include "shared/error.h"
#include "image.h"

/* A reference split as docker does: "python:3.12" is docker.io/library/python:3.12. */
struct registry_ref {
        char host[256];                  /* as written ("127.0.0.1:5000"), or "docker.io" */
        char repo[256];                  /* "library/python", "test/busybox" */
        char tag[129];                   /* "3.12"; "latest" when neither tag nor digest */
        char digest[DIGEST_HEX_LEN + 1]; /* by digest: its hex, else "" */
        char name[320];                  /* the store's name: "python", "127.0.0.1:5000/test/x" */
};

/* Parse "[docker://][HOST[:PORT]/]REPO[:TAG][@sha256:HEX]". -EINVAL with *ret_why. */
int registry_ref_parse(const char *s, struct registry_ref *r, const char **ret_why);

/* Bytes so far and in all (0: unknown) of the blob being fetched. */
typedef void (*registry_progress_fn)(void *arg, uint64_t now, uint64_t total);

struct registry;

/* A client for ref's registry: https, or plain http when insecure. Credentials for the host
 * come from the first of $REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json,
 * ~/.config/containers/auth.json, ~/.docker/config.json that names it. */
int registry_open(const struct registry_ref *ref, bool insecure, struct registry **ret,
                  struct sbx_error *e);
void registry_freep(struct registry **reg);
void registry_set_progress(struct registry *reg, registry_progress_fn fn, void *arg);

/* GET the manifest or index `reference` (a tag or "sha256:HEX") into *b, its media type into
 * ctype. An unknown name or tag: exit 1, not_found. */
int registry_manifest(struct registry *reg, const char *reference, struct buf *b, char *ctype,
                      size_t ctype_n, struct sbx_error *e);

/* GET blob sha256:hex into fd, which may hold the start of it from an interrupted pull (it is
 * hashed and the rest asked for with a Range). At most `size` bytes; the whole file must hash
 * to hex, or the blob is refused (exit 1) and fd truncated. */
int registry_blob(struct registry *reg, const char *hex, uint64_t size, int fd,
                  struct sbx_error *e);
