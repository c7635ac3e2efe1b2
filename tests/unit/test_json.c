/* SPDX-License-Identifier: MIT */
#include "shared/buf.h"
#include "unit.h"

static const char *js(const char *s, size_t n, struct buf *b)
{
        b->len = 0;
        json_string(b, s, n);
        return b->data;
}

int main(void)
{
        _cleanup_buf_ struct buf b = {0};
        CHECK_STR(js("a\"b\\c", 5, &b), "\"a\\\"b\\\\c\"");
        CHECK_STR(js("l1\nl2\t\r", 7, &b), "\"l1\\nl2\\t\\r\"");
        CHECK_STR(js("\x01", 1, &b), "\"\\u0001\"");
        CHECK_STR(js("h\xc3\xa9", 3, &b), "\"h\xc3\xa9\"");          /* valid UTF-8 kept */
        CHECK_STR(js("x\xff y", 4, &b), "\"x\xef\xbf\xbd y\"");      /* invalid byte -> U+FFFD */
        CHECK_STR(js("\xc3", 1, &b), "\"\xef\xbf\xbd\"");            /* truncated sequence */
        CHECK_STR(js("\xed\xa0\x80", 3, &b), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
        CHECK_STR(js("a\0b", 3, &b), "\"a\\u0000b\"");
        CHECK(utf8_valid_prefix("ab\xc3\xa9\xff", 5) == 4);
        char t[21];
        format_rfc3339(0, t);
        CHECK_STR(t, "1970-01-01T00:00:00Z");
        return unit_done();
}
