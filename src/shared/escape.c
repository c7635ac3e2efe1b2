/* SPDX-License-Identifier: MIT */
#include "escape.h"

#include <stdio.h>

/*
 * Length of the run at s that is copied as is (0: s[0] starts something to escape), and in
 * *esc_len the bytes the escape then covers.
 */
static size_t plain_run(const unsigned char *s, size_t n, unsigned flags, size_t *esc_len)
{
        size_t i = 0;
        while (i < n) {
                unsigned char c = s[i];
                if (c >= 0x20 && c < 0x7f) {
                        if (c == '\\' && !(flags & ESCAPE_KEEP_BACKSLASH))
                                break;
                        i++;
                        continue;
                }
                if ((c == '\n' && (flags & ESCAPE_KEEP_NEWLINE)) ||
                    (c == '\t' && (flags & ESCAPE_KEEP_TAB))) {
                        i++;
                        continue;
                }
                if (c < 0x80)
                        break; /* C0 or DEL */
                size_t l = utf8_seq_len(s + i, n - i);
                /* C1 controls are U+0080..U+009F: 0xc2 0x80..0x9f */
                if (l == 0 || (l == 2 && c == 0xc2 && s[i + 1] <= 0x9f)) {
                        *esc_len = l ? l : 1;
                        return i;
                }
                i += l;
        }
        *esc_len = 1;
        return i;
}

int escape_append(struct buf *b, const char *s, size_t n, unsigned flags)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;
        int r = 0;
        while (r == 0 && i < n) {
                size_t esc = 1, run = plain_run(u + i, n - i, flags, &esc);
                if (run > 0 && (r = buf_append(b, u + i, run)) < 0)
                        break;
                i += run;
                for (size_t k = 0; r == 0 && k < esc && i < n; k++, i++) {
                        unsigned char c = u[i];
                        if (c == '\\')
                                r = buf_puts(b, "\\\\");
                        else if (c == '\n')
                                r = buf_puts(b, "\\n");
                        else if (c == '\r')
                                r = buf_puts(b, "\\r");
                        else if (c == '\t')
                                r = buf_puts(b, "\\t");
                        else
                                r = buf_printf(b, "\\x%02x", c);
                }
        }
        return r;
}

bool escape_needed(const char *s, size_t n, unsigned flags)
{
        size_t esc;
        return plain_run((const unsigned char *)s, n, flags, &esc) < n;
}
