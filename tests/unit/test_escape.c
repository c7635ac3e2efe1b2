/* SPDX-License-Identifier: MIT */
/* shared/escape.c: the terminal-safe, reversible form of names and content. */
#include <stdio.h>
#include <string.h>

#include "shared/escape.h"
#include "unit.h"

static const char *esc(const char *s, size_t n, unsigned flags, struct buf *b)
{
        b->len = 0;
        if (b->data)
                b->data[0] = '\0';
        if (escape_append(b, s, n, flags) < 0)
                return "(oom)";
        return b->data ? b->data : "";
}

/* The inverse of the documented form, to show that it is reversible. */
static size_t unescape(const char *s, char *out)
{
        size_t n = 0;
        for (; *s; s++) {
                if (*s != '\\') {
                        out[n++] = *s;
                        continue;
                }
                s++;
                if (*s == 'n')
                        out[n++] = '\n';
                else if (*s == 'r')
                        out[n++] = '\r';
                else if (*s == 't')
                        out[n++] = '\t';
                else if (*s == '\\')
                        out[n++] = '\\';
                else if (*s == 'x') {
                        unsigned v;
                        sscanf(s + 1, "%2x", &v);
                        out[n++] = (char)v;
                        s += 2;
                }
        }
        return n;
}

int main(void)
{
        _cleanup_buf_ struct buf b = {0};
        CHECK_STR(esc("plain name.txt", 14, 0, &b), "plain name.txt");
        CHECK_STR(esc("a\x1b]0;title\x07", 11, 0, &b), "a\\x1b]0;title\\x07");
        CHECK_STR(esc("l1\nl2\r\t", 7, 0, &b), "l1\\nl2\\r\\t");
        CHECK_STR(esc("back\\slash", 10, 0, &b), "back\\\\slash");
        CHECK_STR(esc("del\x7f", 4, 0, &b), "del\\x7f");
        CHECK_STR(esc("nul\0x", 5, 0, &b), "nul\\x00x");
        CHECK_STR(esc("c1\xc2\x9b"
                      "2J",
                      6, 0, &b),
                  "c1\\xc2\\x9b2J");                     /* U+009B CSI */
        CHECK_STR(esc("raw\x9b", 4, 0, &b), "raw\\x9b"); /* invalid UTF-8 */
        CHECK_STR(esc("h\xc3\xa9 \xe2\x82\xac", 7, 0, &b), "h\xc3\xa9 \xe2\x82\xac"); /* kept */
        CHECK_STR(esc("\xc2\xa0nbsp", 6, 0, &b), "\xc2\xa0nbsp");    /* U+00A0 is not C1 */
        CHECK_STR(esc("cut\xe2\x82", 5, 0, &b), "cut\\xe2\\x82");    /* truncated sequence */
        CHECK_STR(esc("\xed\xa0\x80", 3, 0, &b), "\\xed\\xa0\\x80"); /* a surrogate */
        /* content flags */
        CHECK_STR(esc("a\tb\nc\x1b", 6, ESCAPE_KEEP_TAB, &b), "a\tb\\nc\\x1b");
        CHECK_STR(esc("a\tb\nc\\", 6, ESCAPE_TERMINAL_PASS, &b), "a\tb\nc\\");
        CHECK_STR(esc("x\x1b[2J\r", 6, ESCAPE_TERMINAL_PASS, &b), "x\\x1b[2J\\r");
        CHECK(!escape_needed("ok\\", 3, ESCAPE_TERMINAL_PASS));
        CHECK(escape_needed("ok\\", 3, 0));
        CHECK(escape_needed("a\xc2\x85", 3, ESCAPE_TERMINAL_PASS));
        CHECK(!escape_needed("a\xc2\xa9", 3, ESCAPE_TERMINAL_PASS));
        /* reversible: every byte value, in every position, comes back */
        char all[512], back[2048];
        for (int i = 0; i < 256; i++)
                all[i] = all[511 - i] = (char)i;
        esc(all, sizeof(all), 0, &b);
        CHECK(strpbrk(b.data, "\n\r\x1b\x7f") == NULL);
        size_t n = unescape(b.data, back);
        CHECK(n == sizeof(all) && memcmp(all, back, n) == 0);
        /* an escaped text has no byte below 0x20, no DEL, no C1 and is valid UTF-8 */
        int bad = 0;
        for (size_t i = 0; i < b.len; i++) {
                unsigned char c = (unsigned char)b.data[i];
                if (c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)b.data[i + 1] < 0xa0))
                        bad++;
        }
        CHECK(bad == 0);
        CHECK(utf8_valid_prefix(b.data, b.len) == b.len);
        return unit_done();
}
