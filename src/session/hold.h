/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * An exec through the init's own server holds its session with a shared flock on HOLDS_FILE in
 * the session directory, for as long as it runs: the TTL then waits for it without the exec
 * ever talking to the supervisor (no wake-up of a third process on every exec). The supervisor
 * looks at the file only when the TTL runs out, and keeps an exclusive lock from the moment it
 * finds no holder: an exec that comes later finds the session ending.
 */
#define HOLDS_FILE "holds"

/* The supervisor's: make HOLDS_FILE (before the session is announced). An fd, or -errno. */
int session_holds_create(int sessfd);

/* An exec's: a locked fd, -EWOULDBLOCK when the session is ending, -ENOENT for a session made
 * by an sbx without holds (the caller tells the supervisor instead), else -errno. */
int session_hold_take(int sessfd);

/*
 * The supervisor's, on its fd, once the TTL ran out: true while some exec holds the session.
 * Otherwise it takes the exclusive lock and keeps it (*ended becomes true): no exec can hold
 * the session from then on.
 */
bool session_holds_end(int holdfd, bool *ended);

/* The supervisor's: whether some exec holds the session now (ended: what _end() left). */
bool session_holds_peek(int holdfd, bool ended);

/* The supervisor's: a renewed TTL lets execs hold the session again. */
void session_holds_reopen(int holdfd, bool *ended);
