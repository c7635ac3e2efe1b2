/* SPDX-License-Identifier: MIT */
/*
 * A bounded, deterministic tree walk for glob and grep: depth-first, the entries of each
 * directory in byte order of name, symlinks reported and never followed (directories are
 * opened with O_NOFOLLOW relative to their parent's fd, so a symlink swapped in meanwhile
 * is refused, not followed). Bounded in depth, in entries visited and in the memory one
 * directory listing may take, so loops, deep trees and huge directories cannot hang it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum {
        WALK_SKIP = 0,    /* do not descend into this entry */
        WALK_DESCEND = 1, /* descend (directories only) */
        WALK_STOP = 2,    /* end the whole walk */
};

struct walk_entry {
        int dirfd; /* the directory holding the entry */
        const char *name;
        size_t name_len;
        const char *path; /* relative to the root: "a/b/name" */
        size_t path_len;
        unsigned char type; /* DT_DIR, DT_REG, DT_LNK, ...; never DT_UNKNOWN */
        unsigned depth;     /* 1 for the root's entries */
        const void *state;  /* the state of the directory holding the entry */
        void *child_state;  /* fill it when returning WALK_DESCEND */
};

/* Returns WALK_* or a negative errno that aborts the walk. */
typedef int (*walk_fn)(void *ctx, const struct walk_entry *ent);

struct walk {
        /* set by the caller */
        walk_fn fn;
        void *ctx;
        unsigned max_depth; /* directories deeper than this are not entered */
        size_t max_visits;  /* entries read in all */
        size_t state_size;  /* bytes of per-directory state (0: none) */
        const void *root_state;
        /* results */
        size_t visits;
        bool depth_limited;  /* a directory was not entered because of max_depth */
        bool visits_limited; /* the walk stopped at max_visits */
        bool stopped;        /* fn returned WALK_STOP */
};

/* Walk the directory rootfd (not closed). 0 or the negative errno fn returned. */
int walk_tree(struct walk *w, int rootfd);
