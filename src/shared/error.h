/* SPDX-License-Identifier: MIT */
/*
 * One error value per command invocation. The layer that knows what failed fills it once
 * (exit code, machine code, message with context); only the CLI layer prints it, as
 * "sbx: <message>" on stderr or as {"error":{...}} with --json.
 */
#pragma once

#include <stdint.h>

#include "macros.h"

/* Exit codes of sbx(1), EXIT STATUS. */
enum {
        EXIT_OK = 0,
        EXIT_FAILED = 1,      /* the operation failed as asked (exists, not found, no match) */
        EXIT_USAGE = 2,       /* bad flag, argument, config value or file */
        EXIT_NO_SESSION = 3,  /* never existed, expired, destroyed */
        EXIT_UNSUPPORTED = 4, /* the host cannot provide what was asked */
        EXIT_TIMEOUT = 124,
        EXIT_SBX_FAILED = 125,
        EXIT_NOT_EXECUTABLE = 126,
        EXIT_NOT_FOUND = 127,
};

struct sbx_error {
        int exit_code;    /* one of the EXIT_* above; 0 while no error was set */
        const char *code; /* "usage", "session_not_found", "exists", "not_found", ... */
        char message[1024];
};

/*
 * Record an error (the first one wins: the innermost layer knows the cause best) and return
 * -errnum (or -EINVAL when errnum is 0) so callers can `return sbx_fail(...)`. When errnum is
 * nonzero, ": strerror(errnum)" is appended to the message.
 */
int sbx_fail(struct sbx_error *e, int exit_code, const char *code, int errnum, const char *fmt, ...)
    _printf_(5, 6);

/* The analyzer sees one file at a time, so not that sbx_fail never returns 0 or more: told
 * here, it no longer follows "failed, yet returned success" paths that cannot happen. */
#ifdef __clang_analyzer__
#define sbx_fail(...) ANALYZER_NEGATIVE((sbx_fail)(__VA_ARGS__))
#endif

/*
 * An error as it crosses a process boundary (handshake, exec reports, a command's failed step,
 * a file operation's result): fixed size, no pointer. The one wire form of struct sbx_error;
 * the code travels as text and comes back as the static literal (sbx_error_code_canonical).
 */
struct sbx_wire_error {
        int32_t exit_code; /* 0: no error */
        char code[32];
        char message[sizeof(((struct sbx_error *)0)->message)];
};

/* e as it travels. */
void sbx_error_pack(const struct sbx_error *e, struct sbx_wire_error *w);
/* w (untrusted bytes: terminated here) back into e, overwriting it. */
void sbx_error_unpack(struct sbx_wire_error *w, struct sbx_error *e);

/*
 * The JSON error code (sbx(1)) equal to c, as the static literal, or "internal" for anything else:
 * codes that crossed a process boundary as text are mapped back before they are stored.
 */
const char *sbx_error_code_canonical(const char *c);

/* Shorthands for the common classes. */
#define sbx_usage(e, ...) sbx_fail((e), EXIT_USAGE, "usage", 0, __VA_ARGS__)
#define sbx_internal(e, errnum, ...)                                                               \
        sbx_fail((e), EXIT_SBX_FAILED, "internal", (errnum), __VA_ARGS__)
#define sbx_unsupported(e, errnum, ...)                                                            \
        sbx_fail((e), EXIT_UNSUPPORTED, "unsupported", (errnum), __VA_ARGS__)
