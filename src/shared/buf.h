/* SPDX-License-Identifier: MIT */
/* A growable byte buffer, and JSON output built on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

struct buf {
        char *data; /* always NUL-terminated when non-NULL */
        size_t len;
        size_t cap;
};

static inline void buf_freep(struct buf *b)
{
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
}
#define _cleanup_buf_ _cleanup_(buf_freep)

int buf_append(struct buf *b, const void *p, size_t n); /* 0 or -ENOMEM */
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) _printf_(2, 3);

/*
 * Append s[0..n) as a JSON string literal (with quotes). Invalid UTF-8 bytes become U+FFFD,
 * control characters (C0, DEL, C1) are escaped as \uXXXX (or \n \t \r), so the result is
 * always valid JSON and never carries a raw control byte to a terminal.
 */
int json_string(struct buf *b, const char *s, size_t n);
static inline int json_cstr(struct buf *b, const char *s)
{
        return s ? json_string(b, s, __builtin_strlen(s)) : buf_puts(b, "null");
}

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 when invalid or cut short. */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* Length of the longest prefix of s[0..n) that is valid UTF-8 (for text detection). */
size_t utf8_valid_prefix(const char *s, size_t n);

/* A UTC calendar time; year is the full year (1970, not 70). */
struct utc_time {
        int64_t year;
        int month, day, hour, minute, second;
};
void utc_from_unix(int64_t unix_sec, struct utc_time *out);

/* Format a UTC time as RFC 3339 ("2026-11-21T02:32:39Z") into out (>= 21 bytes; years
 * 0-9999). */
void format_rfc3339(int64_t unix_sec, char out[static 21]);
