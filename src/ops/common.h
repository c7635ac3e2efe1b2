/* SPDX-License-Identifier: MIT */
/* Helpers shared by the file operations: errors, absolute paths, text probing, entries. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "shared/buf.h"
#include "shared/error.h"

/*
 * Fail with exit 1 and the code ops.h maps errnum to; ": strerror(errnum)" is appended.
 * Returns -errnum.
 */
int ops_fail_errno(struct sbx_error *e, int errnum, const char *fmt, ...) _printf_(3, 4);
/* Exit 1 with an empty message: the CLI prints nothing (grep without a match). */
int ops_fail_silent(struct sbx_error *e);
/* Out of memory while building output. */
int ops_oom(struct sbx_error *e);
/* The analyzer sees one file at a time: told that these three always return a failure, it
 * no longer follows "failed, yet returned success" paths that cannot happen. */
#ifdef __clang_analyzer__
#define ops_fail_errno(...) ANALYZER_NEGATIVE((ops_fail_errno)(__VA_ARGS__))
#define ops_fail_silent(e) ANALYZER_NEGATIVE((ops_fail_silent)(e))
#define ops_oom(e) ANALYZER_NEGATIVE((ops_oom)(e))
#endif
/*
 * mkdir -p dir: every missing component 0755; existing ones (of any type) are left for the
 * caller's next step to judge. 0 or -errno (what the call made is removed again then).
 * *ret_kept (may be NULL): the length of dir's prefix that was there before, for ops_rmdirs.
 */
int ops_mkdirs(const char *dir, size_t *ret_kept);
/* Undo ops_mkdirs: rmdir dir and its parents, deepest first, down to its first kept bytes;
 * stops at the first that cannot go (one that is no longer empty is someone else's). */
void ops_rmdirs(const char *dir, size_t kept);
/* rm -rf of the entry name in parent, never following a symlink (each directory is opened
 * O_NOFOLLOW from its parent's fd), max_depth levels below it at most (-ELOOP). 0 when gone
 * (or absent), else -errno. */
int ops_remove_at(int parent, const char *name, unsigned max_depth);
/* The directory dir (an fd, kept open) to read from its start, or NULL (out of memory). */
DIR *ops_dir_read(int dir);
/* ops_remove_at of every entry of the directory dir (an fd, kept open; read from its start):
 * what is below it goes, dir itself stays. */
int ops_empty_dir(int dir, unsigned max_depth);
/* path opened for reading (a FIFO does not block the open) and fstat'ed into *st: the fd, or
 * a failure for a directory (EISDIR) or anything but a regular file (code not_text). */
struct stat;
int ops_open_regular(const char *path, struct stat *st, struct sbx_error *e);

/*
 * Normalise an absolute path lexically into out (replacing its content): duplicate slashes,
 * "." and ".." folded, no trailing slash ("/" stays "/"). 0 or -ENOMEM.
 */
int ops_path_normalize(const char *abs, struct buf *out);
/* path made absolute against getcwd() and normalised. 0 or -errno. */
int ops_path_abs(const char *path, struct buf *out);
/* Append "/" (unless dir is "/") and rel to dir. 0 or -ENOMEM. */
int ops_path_join(struct buf *dir, const char *rel, size_t rel_len);

/*
 * Is p[0..n) text: no NUL and valid UTF-8 in the first OPS_TEXT_PROBE bytes? A multibyte
 * sequence cut at the probe boundary is text when the bytes after it (still in p) complete
 * it, or when n ends there (a file longer than the probe is read in bigger chunks).
 */
bool ops_is_text(const char *p, size_t n);

/*
 * A search or walk that was cut short says so. Human output: the line "[text]" (text
 * escaped). JSON: the element {"truncated":true,"reason":REASON,"message":text} appended
 * to the result array (*n_items: the elements before it, counted on).
 */
int ops_cut_line(struct buf *out, const char *text);
int ops_cut_json(struct buf *out, size_t *n_items, const char *reason, const char *text);
/* Both for the bounds of a walk (walk.h): "entries" and "depth". */
struct walk;
int ops_walk_cuts(struct buf *out, bool json, size_t *n_items, const struct walk *w);

/* Entry formatting shared by ls and glob. */
char ops_type_char(mode_t mode);
/* "YYYY-MM-DDTHH:MM:SSZ" of sec, clamped to years 1000..9999. */
void ops_format_time(int64_t sec, char out[static 21]);
/* "T SIZE MTIME NAME\n", NAME escaped (shared/escape.h): one name is one line. */
int ops_entry_line(struct buf *out, const struct stat *st, const char *name);
/* {"path":..,"is_dir":..,"size":..,"modified_at":..} (no separator). */
int ops_entry_json(struct buf *out, const struct stat *st, const char *abs_path);
