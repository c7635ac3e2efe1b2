/* SPDX-License-Identifier: MIT */
/*
 * Shell-style glob patterns over paths: "*", "?", "[...]" (with "!"/"^" negation, ranges,
 * [:classes:]), "\" escapes, "{a,b}" alternatives (nested), and "**" as a whole component
 * for any number of directories (zero included). Like a shell, "*", "?" and "[...]" do not
 * match a leading "." and never cross "/"; "**" does not match names starting with ".".
 *
 * A compiled pattern is a small NFA: each position is one component of one brace
 * alternative, plus one accepting position per alternative. A walk keeps a bitmap of
 * positions per directory and steps it by each entry name, so one walk serves every
 * alternative and prunes directories no alternative can match below.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/macros.h"

#define GLOB_MAX_PATTERN 4096u
#define GLOB_MAX_POSITIONS 65536u

enum {
        GLOB_MATCH = 1u << 0,   /* the entry itself matches */
        GLOB_DESCEND = 1u << 1, /* something below the entry may match */
};

struct glob_pattern {
        size_t n_pos;
        char **pos_pat;      /* the component pattern of each position (NULL: accept) */
        unsigned char *kind; /* GLOB_POS_* */
        size_t n_alts;
        size_t *alt_start;  /* first position of each alternative */
        size_t state_bytes; /* size of a position bitmap */
        bool dirs_only;     /* the pattern ended with "/" */
};

/*
 * Compile a relative pattern. 0, -EINVAL (empty, or nothing but "/" and "."), -E2BIG (too
 * long, or more than max_alts brace alternatives), -ENOMEM.
 */
int glob_compile(const char *pattern, size_t max_alts, struct glob_pattern **ret);
void glob_free(struct glob_pattern *g);
static inline void glob_freep(struct glob_pattern **g)
{
        if (*g)
                glob_free(*g);
}
#define _cleanup_glob_ _cleanup_(glob_freep)

/* The state of the walk's root directory (state_bytes bytes). */
void glob_state_init(const struct glob_pattern *g, uint8_t *state);
/* Step state by the entry name; next gets the state of the entry. Returns GLOB_* flags. */
unsigned glob_step(const struct glob_pattern *g, const uint8_t *state, const char *name, size_t len,
                   uint8_t *next);
/* Does the relative path (components separated by "/") match? dirs_only is not checked. */
bool glob_match_path(const struct glob_pattern *g, const char *path);

/* One component against one component pattern (no braces, no "/"). */
bool glob_segment_match(const char *pat, size_t plen, const char *name, size_t nlen);
/* Brace expansion: a NULL-terminated list of heap strings. 0, -E2BIG or -ENOMEM. */
int glob_expand_braces(const char *pattern, size_t max_alts, char ***ret);
