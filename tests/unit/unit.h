/* SPDX-License-Identifier: MIT */
/* A tiny TAP producer for the C unit tests (meson reads TAP with protocol: 'tap'). */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int unit_n, unit_failed;

/* Print s on one TAP line: control characters escaped, long values cut. */
static inline void unit_put(const char *s)
{
        if (!s) {
                fputs("(null)", stdout);
                return;
        }
        for (int i = 0; s[i] && i < 200; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\n')
                        fputs("\\n", stdout);
                else if (c < 0x20 || c == 0x7f)
                        printf("\\x%02x", c);
                else
                        putchar(c);
        }
}

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                unit_n++;                                                                          \
                if (cond)                                                                          \
                        printf("ok %d - %s\n", unit_n, #cond);                                     \
                else {                                                                             \
                        unit_failed++;                                                             \
                        printf("not ok %d - %s (%s:%d)\n", unit_n, #cond, __FILE__, __LINE__);     \
                }                                                                                  \
        } while (0)

#define CHECK_STR(a, b)                                                                            \
        do {                                                                                       \
                const char *_a = (a), *_b = (b);                                                   \
                unit_n++;                                                                          \
                if (_a && _b && strcmp(_a, _b) == 0) {                                             \
                        printf("ok %d - %s == \"", unit_n, #a);                                    \
                        unit_put(_b);                                                              \
                        puts("\"");                                                                \
                } else {                                                                           \
                        unit_failed++;                                                             \
                        printf("not ok %d - %s: got \"", unit_n, #a);                              \
                        unit_put(_a);                                                              \
                        fputs("\", want \"", stdout);                                              \
                        unit_put(_b);                                                              \
                        printf("\" (%s:%d)\n", __FILE__, __LINE__);                                \
                }                                                                                  \
        } while (0)

/* A test's scratch directory goes once every check passed (a failure keeps it to look at). */
static inline void unit_scratch_remove(const char *dir)
{
        if (chdir("/") == 0 && unit_failed == 0) {
                char cmd[256];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        printf("# cleanup failed\n");
        }
}

/* Call at the end of main: prints the plan and returns the exit status. */
static inline int unit_done(void)
{
        printf("1..%d\n", unit_n);
        return unit_failed ? 1 : 0;
}
