/* SPDX-License-Identifier: MIT */
/* grep internals: the PCRE2 matcher and the search of one file, shared by grep.c. */
#pragma once

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "shared/buf.h"
#include "ops.h"

struct grep_matcher {
        pcre2_code *code;
        pcre2_match_data *md;
        pcre2_match_context *mctx;
        pcre2_jit_stack *jit_stack;
        bool jit;
};

/* Compile; on a bad pattern returns -EINVAL with PCRE2's message and offset in err. */
int grep_matcher_init(struct grep_matcher *m, const char *pattern, bool caseless, bool fixed,
                      char *err, size_t errlen);
void grep_matcher_free(struct grep_matcher *m);
/* First match in s[start..len): 1 (with *ms, *me), 0 none, < 0 a PCRE2 error (limits). */
int grep_matcher_find(struct grep_matcher *m, const char *s, size_t len, size_t start, size_t *ms,
                      size_t *me);

/* Output state across all files of one grep. */
struct grep_search {
        const struct ops_grep_req *req;
        struct grep_matcher *m;
        struct buf *out;
        size_t results; /* result lines printed */
        bool truncated; /* OPS_RESULTS_MAX reached: the walk stops */
        /* files whose search ended at a line longer than OPS_GREP_LINE_MAX; the first one */
        size_t long_lines;
        struct buf long_line_path;
        bool any_group; /* a line was printed (for "--" between groups) */
        int error;      /* -ENOMEM while formatting */
        /* the reused read buffer */
        char *buf;
        size_t cap;
};

void grep_search_free(struct grep_search *s);
/* Search the open regular file fd, printing matches under path. 0 or -ENOMEM. */
int grep_search_fd(struct grep_search *s, int fd, const struct stat *st, const char *path);
