/* SPDX-License-Identifier: MIT */
/* Policy-free helpers: full reads and writes, small file I/O, time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

/* Write all of p (retrying EINTR and short writes). 0 or -errno. */
int write_all(int fd, const void *p, size_t n);
/* Read until EOF into b, at most max bytes (-EFBIG beyond). 0 or -errno. */
int read_all(int fd, struct buf *b, size_t max);
/* Write a whole file relative to dirfd, O_CREAT|O_EXCL|O_NOFOLLOW, with mode. */
int write_file_at(int dirfd, const char *path, const void *p, size_t n, mode_t mode);
/* Atomically replace dirfd/path: write "path.tmp.<pid>" then rename over. */
int write_file_atomic_at(int dirfd, const char *path, const void *p, size_t n, mode_t mode);
/* Read a whole (small) file relative to dirfd, O_NOFOLLOW, at most max bytes. */
int read_file_at(int dirfd, const char *path, struct buf *b, size_t max);

int64_t now_realtime_sec(void);
int64_t now_realtime_ms(void);
uint64_t now_monotonic_ms(void);

/* The start time (clock ticks since boot, field 22 of /proc/PID/stat) or -errno. */
int64_t proc_start_time(pid_t pid);
/* The state letter of /proc/PID/stat ('R', 'S', 'T', ...), or -errno. */
int proc_state(pid_t pid);

/* Set FD_CLOEXEC / O_NONBLOCK. */
int fd_set_nonblock(int fd, bool on);

/* Close every fd >= 3 except those in keep[] (at most 32 of them; close_range over the gaps). */
void close_all_except(const int *keep, size_t n_keep);

/*
 * Give the kernel back the stack pages below the caller's frame (MADV_DONTNEED: they read as
 * zeros when touched again), and malloc's free pages (malloc_trim). For the long-lived idle
 * processes of a session (the supervisor, the init, its spare reaper): each inherits the stack that
 * `create` dirtied while it set the session up, ~130 KiB that an idle process never touches again
 * and that would otherwise stay resident in every one of them. Call it from a shallow frame, before
 * a loop.
 */
__attribute__((noinline)) void stack_release_below(void);

/* Read a non-blocking signalfd empty (the signals it reports are handled by the caller's
 * next look at their cause, e.g. waitpid). */
void signalfd_drain(int sigfd);
