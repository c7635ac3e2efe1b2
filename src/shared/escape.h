/* SPDX-License-Identifier: MIT */
/*
 * Text that came from a session (file names, file contents, a user's arguments echoed in a
 * message) made safe for a terminal: no byte of it can start an escape sequence, move the
 * cursor or end the line it is printed on.
 *
 * The form (man sbx, OUTPUT SAFETY) is reversible and unambiguous:
 *   \\          a backslash
 *   \n \r \t    line feed, carriage return, tab
 *   \xHH        any other byte of a C0 control (0x00-0x1f), DEL (0x7f), a C1 control
 *               (U+0080-U+009F: both bytes of its UTF-8 form), or a byte that is not part
 *               of valid UTF-8
 * Everything else (printable ASCII, valid UTF-8 above U+009F) is copied as is.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

enum {
        ESCAPE_KEEP_NEWLINE = 1 << 0, /* "\n" stays a line end (multi-line content) */
        ESCAPE_KEEP_TAB = 1 << 1,     /* "\t" stays (content lines: harmless to a terminal) */
        /*
         * A backslash stays as is: for a last pass over text whose user parts were already
         * escaped (escaping them again would double their backslashes).
         */
        ESCAPE_KEEP_BACKSLASH = 1 << 2,
        /* the last pass over a whole human output bound for a terminal */
        ESCAPE_TERMINAL_PASS = ESCAPE_KEEP_NEWLINE | ESCAPE_KEEP_TAB | ESCAPE_KEEP_BACKSLASH,
};

/* Append s[0..n) to b in the escaped form. 0 or -ENOMEM. */
int escape_append(struct buf *b, const char *s, size_t n, unsigned flags);
static inline int escape_cstr(struct buf *b, const char *s, unsigned flags)
{
        return escape_append(b, s, __builtin_strlen(s), flags);
}
/* Would escape_append() change s[0..n)? */
bool escape_needed(const char *s, size_t n, unsigned flags);
