/* SPDX-License-Identifier: MIT */
/* A tiny TAP producer for the C unit tests (meson reads TAP with protocol: 'tap'). */
#pragma once

#include <stdio.h>
#include <string.h>

static int unit_n, unit_failed;

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
                if (_a && _b && strcmp(_a, _b) == 0)                                               \
                        printf("ok %d - %s == \"%s\"\n", unit_n, #a, _b);                          \
                else {                                                                             \
                        unit_failed++;                                                             \
                        printf("not ok %d - %s: got \"%s\", want \"%s\" (%s:%d)\n", unit_n, #a,    \
                               _a ? _a : "(null)", _b ? _b : "(null)", __FILE__, __LINE__);        \
                }                                                                                  \
        } while (0)

/* Call at the end of main: prints the plan and returns the exit status. */
static inline int unit_done(void)
{
        printf("1..%d\n", unit_n);
        return unit_failed ? 1 : 0;
}
