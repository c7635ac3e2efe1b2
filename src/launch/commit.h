/* SPDX-License-Identifier: MIT */
/*
 * `sbx commit`: a session's writable layer as a new image layer on top of the session's base
 * (docs/design/commit.md). The layer is made from the writable layer on the host side, by fd,
 * never following a name the session controls, as an OCI layer tar (deletions as `.wh.`
 * whiteouts) and then imported through the store's hardened unpacker: device nodes, sockets
 * and fifos are dropped, setuid/setgid bits stripped, hard links copied as files, symlinks
 * kept as links (they resolve inside the sessions that use the image), and the logical size
 * (sparse files counted in full) bounded by the session's disk limit.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../image/image.h"
#include "shared/error.h"

struct commit_opts {
        /* Freeze the session for the snapshot and thaw it after (--pause). Without it a
         * session that is running a command (an exec, a file command) is refused. */
        bool pause;
        /* Move NAME:TAG when it names another image already (--replace); without it that is
         * refused (exit 1, code exists). The same image again is never an error. */
        bool replace;
};

struct commit_result {
        char id[DIGEST_HEX_LEN + 1];    /* the new image's id (sha256 hex), its digest */
        char layer[DIGEST_HEX_LEN + 1]; /* the new layer's id (sha256 hex of its tar) */
        char *name, *tag;               /* the reference it was tagged as (tag "latest") */
        char *base;                     /* "image:<id>" or "rootfs:<dir>" */
        uint64_t layer_bytes;           /* logical bytes of the new layer */
        uint64_t entries;               /* its entries (whiteouts included) */
};
void commit_result_free(struct commit_result *r);

/*
 * Commit session id_or_name's writable layer as image ref (NAME[:TAG]) -> r->id. Usable at
 * once by `create --image NAME:TAG` and listed by `image ls`. Errors (exit code, JSON code):
 * 2 usage: a malformed NAME[:TAG]; 3 session_not_found; 1 exists: NAME:TAG names another
 * image (and no opts->replace); 1 busy: the session is running a
 * command (and no opts->pause); 1 paused: with opts->pause on a session already paused by
 * the user is fine (it stays paused), 1 limit: the layer exceeds the session's disk limit;
 * 4 unsupported: a session whose base cannot be recorded (the host base, read-only); else 125
 * internal. Nothing is left in the store on failure.
 */
int session_commit(const char *id_or_name, const char *ref, const struct commit_opts *opts,
                   struct commit_result *r, struct sbx_error *e);
