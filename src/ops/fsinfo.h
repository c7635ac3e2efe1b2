/* SPDX-License-Identifier: MIT */
/* FileInfo objects (ops.h, "The file operations behind sbx serve") and owner names. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "shared/buf.h"

/* uid/gid -> name, read from the session's /etc/passwd and /etc/group once per operation. */
struct fs_names {
        bool loaded;
        size_t n;
        struct fs_name {
                bool group;
                unsigned id;
                char *name;
        } * v;
};
void fs_names_free(struct fs_names *t);
/* The name of id (a group's when group), or NULL when the files do not name it. */
const char *fs_names_get(struct fs_names *t, bool group, unsigned id);
/* A name or a decimal id to the id: 0 or -ENOENT. */
int fs_names_id(struct fs_names *t, bool group, const char *name, unsigned *ret);

/* The FileInfo of the entry name in dirfd (lstat: a symlink is described, not followed),
 * abs its normalised absolute path. 0 or -errno (nothing appended). */
int fs_info_json(struct buf *out, struct fs_names *names, int dirfd, const char *name,
                 const char *abs);
/* "0755"-style permission bits as the execd API writes them: 755. */
unsigned fs_mode_digits(unsigned mode);
