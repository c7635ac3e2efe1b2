/* SPDX-License-Identifier: MIT */
/* Shared by cpstream.c (packing) and cpunpack.c (unpacking): the record and path helpers. */
#pragma once

#include <stdint.h>

#include "shared/error.h"

/* The deepest directory a copy holds below its top entry. */
#define CP_MAX_DEPTH 256

/* One entry of the stream: this header, then path_len bytes of path, then data_len of data. */
struct cp_rec {
        char type; /* 'd', 'f', 'l' */
        uint32_t mode;
        uint32_t path_len;
        uint64_t data_len;
} __attribute__((packed));

/*
 * path cut into its directory and its last name, trailing slashes dropped: *ret_dir is NULL
 * without a slash, "/" for the one at the start, else in the returned copy, as *ret_name is
 * ("" for "/"). NULL: out of memory.
 */
char *cp_split_path(const char *path, const char **ret_dir, const char **ret_name);

/* A host path that went through a link in one of the session's volumes: refused. */
int cp_volume_link(struct sbx_error *e, const char *what, const char *path, const char *link);
