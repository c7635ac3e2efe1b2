/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * An exec through the init's own server holds its session with a read lock on HOLDS_FILE in
 * the session directory, for as long as it runs: the TTL then waits for it without the exec
 * ever talking to the supervisor (no wake-up of a third process on every exec). The supervisor
 * looks at the file only when the TTL runs out, and keeps a write lock from the moment it
 * finds no holder: an exec that comes later finds the session ending.
 */
#define HOLDS_FILE "holds"

/* The supervisor's: make HOLDS_FILE (before the session is announced). An fd, or -errno. */
int session_holds_create(int sessfd);

/* An exec's: a locked fd, -EWOULDBLOCK when the session is ending, else -errno (-ENOENT: a
 * session made by an sbx without holds; the caller then tells the supervisor instead). */
int session_hold_take(int sessfd);

/*
 * The supervisor's, on its fd, once the TTL ran out and just before it would end the session:
 * true while some exec holds the session. Otherwise it takes the write lock, which stays until
 * the supervisor exits (the session ends at once): no exec can hold the session from then on.
 */
bool session_holds_end(int holdfd);

/* The supervisor's: whether some exec holds the session now, looked at without taking any
 * lock. */
bool session_holds_peek(int holdfd);
