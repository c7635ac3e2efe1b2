/* SPDX-License-Identifier: MIT */
/*
 * A session's audit log: JSON Lines, one record per event (create, warning, exec, write,
 * edit, net, end). Every record is one write(2) of one whole line on an O_APPEND fd, so
 * concurrent writers (execs, file commands, the supervisor) never tear or interleave lines.
 * The log lives in $RT/<id>/audit.jsonl, or in <[audit] dir>/<id>.jsonl when that is set (kept
 * after the session ends). Only host-side sbx processes write it; a sandbox cannot reach it.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "shared/buf.h"
#include "state.h"

/* The longest record: the line stays one write that the kernel appends as a whole. */
#define AUDIT_RECORD_MAX (60 * 1024)
/* Name of the log inside the session's runtime dir when no audit dir is configured. */
#define AUDIT_FILE "audit.jsonl"

/*
 * Create the log of session id: <audit_dir>/<id>.jsonl (audit_dir made 0700 when missing) or
 * sessfd/audit.jsonl, 0600, O_EXCL. Returns an O_APPEND fd, or -errno. *ret_path gets the
 * absolute path when audit_dir is set (for the state file), else NULL.
 */
int audit_create(int sessfd, const char *audit_dir, const char *id, char **ret_path);
/* open(2) of an absolute path with no symlink in any component (openat2 RESOLVE_NO_SYMLINKS);
 * O_CLOEXEC is added. fd or -errno. */
int audit_open_path(const char *path, int flags, mode_t mode);
/* Open the log of a live session for appending (state's audit path, else sessfd's). */
int audit_open(int sessfd, const struct session_state *st);

/* Start a record: {"ts":"<RFC 3339, ms>","session":"<id>","event":"<event>" */
void audit_begin(struct buf *b, const char *session_id, const char *event);
/* Append ,"key":value for common value types. */
void audit_str(struct buf *b, const char *key, const char *value); /* NULL -> null */
void audit_int(struct buf *b, const char *key, int64_t value);
void audit_bool(struct buf *b, const char *key, bool value);
/* ,"key":"<RFC 3339 with milliseconds>" */
void audit_time(struct buf *b, const char *key, int64_t unix_ms);
/* Wall-clock time in milliseconds since the epoch. */
int64_t audit_now_ms(void);
/* ,"key":[...] of a NULL-terminated vector (strings); stops before the record outgrows
 * AUDIT_RECORD_MAX / 2 and then adds ,"<key>_truncated":true. */
void audit_strv(struct buf *b, const char *key, char *const *v);
/* Close the object, append "\n" and write it in one write(2). fd < 0 is a no-op. A record
 * that would exceed AUDIT_RECORD_MAX is replaced by a short one saying so. 0 or -errno. */
int audit_commit(int fd, struct buf *b);

/* Convenience: one "end" record (reason destroyed|expired|crashed, detail may be NULL). */
void audit_end(int fd, const char *session_id, const char *reason, const char *detail);
