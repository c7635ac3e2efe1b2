/* SPDX-License-Identifier: MIT */
/* Scope-bound resources and small helpers used everywhere (systemd style). */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
        free(*(void **)p);
}

/* Close and forget: an explicit closep() before scope end must not close a reused number. */
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}

static inline void fclosep(FILE **f)
{
        if (*f)
                (void)fclose(*f);
}

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* A NULL-terminated array of heap strings. */
static inline void strv_freep(char ***v)
{
        if (!*v)
                return;
        for (char **p = *v; *p; p++)
                free(*p);
        free(*v);
        *v = NULL;
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_strv_ _cleanup_(strv_freep)
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

/* Move ownership out of a cleanup-attributed variable. */
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _t = (p);                                                            \
                (p) = NULL;                                                                        \
                _t;                                                                                \
        })
#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _t = (fd);                                                                     \
                (fd) = -1;                                                                         \
                _t;                                                                                \
        })

/* Retry a syscall expression while it fails with EINTR. */
#define RETRY_EINTR(expr)                                                                          \
        ({                                                                                         \
                __typeof__(expr) _r;                                                               \
                do                                                                                 \
                        _r = (expr);                                                               \
                while (_r < 0 && errno == EINTR);                                                  \
                _r;                                                                                \
        })

/* Tell clang's static analyzer (clang-tidy) a fact it cannot work out alone, such as what a
 * function in another file returns; nothing in a real build. */
#ifdef __clang_analyzer__
#define ANALYZER_ASSUME(cond)                                                                      \
        do {                                                                                       \
                if (!(cond))                                                                       \
                        __builtin_unreachable();                                                   \
        } while (0)
#else
#define ANALYZER_ASSUME(cond)                                                                      \
        do {                                                                                       \
        } while (0)
#endif
/* call's int result, for the analyzer known to be negative (a failure) */
#define ANALYZER_NEGATIVE(call)                                                                    \
        ({                                                                                         \
                int analyzer_r_ = (call);                                                          \
                ANALYZER_ASSUME(analyzer_r_ < 0);                                                  \
                analyzer_r_;                                                                       \
        })

static inline int negerrno(void)
{
        int r = errno > 0 ? -errno : -EIO;
        ANALYZER_ASSUME(r < 0); /* it does not see that -errno < 0 when errno > 0 */
        return r;
}
