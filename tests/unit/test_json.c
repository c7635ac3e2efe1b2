/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <time.h>

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
        CHECK_STR(js("h\xc3\xa9", 3, &b), "\"h\xc3\xa9\"");     /* valid UTF-8 kept */
        CHECK_STR(js("x\xff y", 4, &b), "\"x\xef\xbf\xbd y\""); /* invalid byte -> U+FFFD */
        CHECK_STR(js("\xc3", 1, &b), "\"\xef\xbf\xbd\"");       /* truncated sequence */
        CHECK_STR(js("\xed\xa0\x80", 3, &b),
                  "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
        CHECK_STR(js("a\0b", 3, &b), "\"a\\u0000b\"");
        CHECK_STR(js("d\x7f", 2, &b), "\"d\\u007f\"");     /* DEL */
        CHECK_STR(js("c\xc2\x9b", 3, &b), "\"c\\u009b\""); /* C1 CSI, same string */
        CHECK_STR(js("\xc2\xa0", 2, &b), "\"\xc2\xa0\"");  /* U+00A0 kept */
        CHECK(utf8_valid_prefix("ab\xc3\xa9\xff", 5) == 4);
        char t[21];
        format_rfc3339(0, t);
        CHECK_STR(t, "1970-01-01T00:00:00Z");
        format_rfc3339(-30610224000LL, t);
        CHECK_STR(t, "1000-01-01T00:00:00Z");
        format_rfc3339(253402300799LL, t);
        CHECK_STR(t, "9999-12-31T23:59:59Z");
        /* utc_from_unix agrees with gmtime_r: every day from 1600 to 2400 (leap centuries
         * included), at a time of day that moves, and second by second around an epoch */
        int bad = 0;
        for (int64_t d = -135140; d <= 157054 && bad < 3; d++) {
                int64_t sec = d * 86400 + (d * 7919) % 86400;
                for (int k = 0; k < 2; k++, sec = -sec) {
                        time_t tt = (time_t)sec;
                        struct tm tm;
                        struct utc_time u;
                        gmtime_r(&tt, &tm);
                        utc_from_unix(sec, &u);
                        if (u.year != tm.tm_year + 1900 || u.month != tm.tm_mon + 1 ||
                            u.day != tm.tm_mday || u.hour != tm.tm_hour || u.minute != tm.tm_min ||
                            u.second != tm.tm_sec) {
                                fprintf(stderr, "utc_from_unix(%lld) differs from gmtime_r\n",
                                        (long long)sec);
                                bad++;
                        }
                }
        }
        CHECK(bad == 0);
        for (int64_t sec = -3; sec <= 3; sec++) {
                struct utc_time u;
                utc_from_unix(sec, &u);
                CHECK(u.second == (int)((sec + 60) % 60));
        }
        return unit_done();
}
