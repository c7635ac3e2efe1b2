/* SPDX-License-Identifier: MIT */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int buf_reserve(struct buf *b, size_t extra)
{
        if (b->len + extra + 1 <= b->cap)
                return 0;
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + extra + 1) {
                if (cap > SIZE_MAX / 2)
                        return -ENOMEM;
                cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->cap = cap;
        return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
        int r = buf_reserve(b, n);
        if (r < 0)
                return r;
        if (n)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int buf_puts(struct buf *b, const char *s)
{
        return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        int r = buf_reserve(b, (size_t)n);
        if (r < 0)
                return r;
        va_start(ap, fmt);
        (void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
        return 0;
}

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
        unsigned char c = s[0];
        size_t len;
        uint32_t cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf) {
                len = 2;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                cp = c & 0x07;
        } else
                return 0;
        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* overlong forms, surrogates, beyond U+10FFFF */
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

size_t utf8_valid_prefix(const char *s, size_t n)
{
        const unsigned char *u = (const unsigned char *)s;
        size_t i = 0;
        while (i < n) {
                size_t l = utf8_seq_len(u + i, n - i);
                if (l == 0)
                        break;
                i += l;
        }
        return i;
}

int json_string(struct buf *b, const char *s, size_t n)
{
        const unsigned char *u = (const unsigned char *)s;
        int r = buf_append(b, "\"", 1);
        size_t i = 0;

        while (r == 0 && i < n) {
                unsigned char c = u[i];
                size_t run = i;
                /* copy the longest run that needs no escaping in one go */
                while (run < n && u[run] >= 0x20 && u[run] < 0x7f && u[run] != '"' &&
                       u[run] != '\\')
                        run++;
                if (run > i) {
                        r = buf_append(b, s + i, run - i);
                        i = run;
                        continue;
                }
                if (c == '"' || c == '\\') {
                        char esc[2] = {'\\', (char)c};
                        r = buf_append(b, esc, 2);
                        i++;
                } else if (c < 0x20 || c == 0x7f) {
                        switch (c) {
                        case '\n':
                                r = buf_puts(b, "\\n");
                                break;
                        case '\t':
                                r = buf_puts(b, "\\t");
                                break;
                        case '\r':
                                r = buf_puts(b, "\\r");
                                break;
                        default:
                                r = buf_printf(b, "\\u%04x", c);
                                break;
                        }
                        i++;
                } else {
                        size_t l = utf8_seq_len(u + i, n - i);
                        if (l == 0) {
                                r = buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
                                i++;
                        } else if (l == 2 && c == 0xc2 && u[i + 1] <= 0x9f) {
                                /* a C1 control: the same string, but no terminal that shows
                                 * the JSON can take it for one */
                                r = buf_printf(b, "\\u%04x", u[i + 1]);
                                i += l;
                        } else {
                                r = buf_append(b, s + i, l);
                                i += l;
                        }
                }
        }
        return r < 0 ? r : buf_append(b, "\"", 1);
}

/*
 * The civil date of a day count since 1970-01-01 (H. Hinnant's days-to-civil, proleptic
 * Gregorian). Not gmtime_r: its first call in a process loads the time zone (/etc/localtime,
 * seven syscalls), which every exec paid for its audit record's timestamp.
 */
void utc_from_unix(int64_t unix_sec, struct utc_time *out)
{
        int64_t days = unix_sec / 86400, rem = unix_sec % 86400;
        if (rem < 0) {
                rem += 86400;
                days--;
        }
        int64_t z = days + 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097;                                      /* [0, 146096] */
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
        int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
        int64_t mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
        out->day = (int)(doy - (153 * mp + 2) / 5 + 1);
        out->month = (int)(mp < 10 ? mp + 3 : mp - 9);
        out->year = yoe + era * 400 + (out->month <= 2);
        out->hour = (int)(rem / 3600);
        out->minute = (int)(rem / 60 % 60);
        out->second = (int)(rem % 60);
}

void format_rfc3339(int64_t unix_sec, char out[static 21])
{
        struct utc_time u;
        utc_from_unix(unix_sec, &u);
        snprintf(out, 21, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)u.year, u.month, u.day, u.hour,
                 u.minute, u.second);
}
