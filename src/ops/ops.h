/* SPDX-License-Identifier: MIT */
/*
 * The six file commands (ls read write edit glob grep), as native operations.
 *
 * Each ops_<cmd>() has the confined_fn signature: the CLI fills a request struct on the host
 * side (arguments, client-side inputs such as write's CONTENT), then runs the op through
 * session_run_confined(), so the op executes in a child that has exactly the confinement of
 * a sandboxed process and whose cwd is the session workdir. Ops therefore work on ordinary
 * paths (relative ones resolve against the cwd), do all filesystem work themselves, append
 * the final human or JSON document to *out, and report failures with sbx_fail() into *e.
 * Ops never print and never exit.
 *
 * Contract with the CLI layer (src/cli/cmd_files.c):
 *  - On success the op returns 0 and *out holds the complete output, newline-terminated
 *    (JSON documents included), to be printed as is with cli_print(). An op that finds
 *    nothing to print (glob without match) leaves *out empty.
 *  - On failure the op returns -errno and *e is set (exit code, code, message).
 *  - "Silent failure": grep without a match in human mode must exit 1 and print nothing
 *    (SPEC). The op then sets e->exit_code = EXIT_FAILED, e->code = "not_found" and leaves
 *    e->message EMPTY (ops_fail_silent()). The CLI returns the exit code without printing
 *    when the message is empty. session_run_confined() must copy an empty message back.
 *
 * Error codes (exit 1 for every failure of the filesystem operation itself):
 *  ENOENT, ENOTDIR, ELOOP, a directory where a file is needed        -> "not_found"
 *  EEXIST                                                           -> "exists"
 *  ENOSPC, EDQUOT, EFBIG, ENAMETOOLONG, EMFILE, ENFILE, our size caps -> "limit"
 *  EACCES, EPERM, EROFS, ETXTBSY (the session does not allow it)     -> "unsupported"
 *  not text, or not a regular file (FIFO, socket, device)           -> "not_text"
 *  other I/O errors                                                 -> "internal"
 * Bad patterns, an empty OLD and bad numbers are usage errors (exit 2, "usage"); the CLI
 * checks them before joining the session with ops_glob_validate()/ops_grep_validate().
 *
 * Decisions of sbx's own (the man page and the bats tests follow these):
 *  - Absolute paths in output (JSON "path", glob and grep lines) are the cwd (getcwd() in
 *    the session: the workdir) joined with the path given, normalised lexically ("." and
 *    ".." folded, duplicate and trailing slashes removed).
 *  - ls: PATH itself is followed when it is a symlink (like ls(1) without -l); its entries
 *    are never followed. Hidden entries are listed ("." and ".." are not). A PATH that is
 *    not a directory prints its own line, with NAME = PATH as given. Fields are separated
 *    by one space, no padding; names are escaped (shared/escape.h). At most OPS_LS_MAX entries,
 *    then "[Results truncated at 1000000 entries]".
 *  - read: characters are UTF-8 code points (a byte that is not valid UTF-8 counts as one);
 *    a continuation row never splits a sequence. The 500 KiB cap counts the numbered rows
 *    (whole rows only); the notice line comes after. Offset past the end: exit 1, code
 *    "limit". An empty file with offset > 0 is that error with "(0 lines)". Files are
 *    scanned at most OPS_READ_SCAN_MAX bytes: a bigger file reads as if it ended there.
 *    JSON "lines" = the file's total line count (a last line without newline counts),
 *    "content" = the numbered rows only (no notice, "" for an empty file), "truncated" =
 *    lines after the offset were left out (the 500 KiB cap, --limit, or the scan bound).
 *    Human rows are escaped (tab kept) when escape_content is set. --binary ignores
 *    --offset/--limit, refuses files above OPS_BINARY_MAX ("limit"), prints base64 in
 *    76-column lines (as base64(1)); JSON content is the base64 without line breaks.
 *    Non-regular files: "not_text".
 *  - write: mode 0644 minus the session umask, parents 0755; prints
 *    "Wrote N bytes to 'PATH'", JSON {"path":"/abs","bytes":N}. A failed write removes the
 *    file and the parent directories it created. CONTENT is capped at OPS_WRITE_MAX ("limit").
 *  - edit: PATH may be a symlink: the file it resolves to is edited and the link kept. The
 *    file must be regular and at most OPS_EDIT_MAX. OLD/NEW are bytes (no text check).
 *    Occurrences are counted left to right without overlap. The CRLF<->LF fallback applies
 *    when OLD has no occurrence and contains a line end: the file's style is CRLF when it
 *    contains "\r\n", else LF; if the converted OLD then occurs (once, or N times with
 *    --replace-all) it is used. The new file keeps the permission bits (setuid, setgid and
 *    sticky dropped) and, where the session allows, the owner; hard links to the old inode
 *    keep the old content (rename semantics). JSON {"path":"/abs","replacements":N}.
 *  - glob: brace alternatives are expanded first (at most OPS_GLOB_MAX_ALTS); "[!..]" and
 *    "[^..]" negate, "[[:alpha:]]" classes work, "\" escapes; "**" does not enter
 *    dot-directories; "." components are ignored; a pattern starting with "/" is absolute
 *    and ignores --path; leading "../" move the base up; a trailing "/" matches directories
 *    only. The walk is bounded (OPS_WALK_MAX_DEPTH, OPS_WALK_MAX_VISITS); when a bound
 *    stops it the human output ends with "[Walk stopped after N entries]" or
 *    "[Walk stopped at depth 256]", the JSON array with {"truncated":true,"reason":
 *    "entries"|"depth"|"results","message":..} elements (ops_cut_json). The 10,000 newest
 *    are kept (ties: path order). Paths are escaped in human output.
 *  - grep: paths are absolute; a PATH that is a file is searched (binary or not a regular
 *    file: skipped) and --glob does not apply to it. Directories are walked depth-first,
 *    entries of each directory in byte order of name; symlinks, FIFOs, devices and
 *    unreadable entries are skipped silently; directories named .git, .hg and .svn are not
 *    entered. Binary = a NUL byte in the first 8 KiB; a NUL later (a binary or sparse tail)
 *    ends the search of that file at its line. Lines end at "\n"; a "\r" before it is not
 *    printed and "$" matches before it. A match never spans lines. Printed text is cut at
 *    OPS_GREP_TEXT_MAX bytes followed by "[...]". count mode lists files with at least one
 *    matching line. The 10,000 cap counts every printed path line (matches and context
 *    lines, not "--"). JSON content objects of context lines carry an extra
 *    "context":true. -A/-B override -C. A line longer than OPS_GREP_LINE_MAX ends the
 *    search of that file. --glob without "/" matches the basename, with "/" the path
 *    relative to PATH. A search cut short (the result cap, a walk bound, a long line) ends
 *    with lines / JSON elements as glob's (reason "line" for a long line) and is never
 *    "no match" (exit 0). Paths are escaped in human output, matched text too when
 *    escape_content is set.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/buf.h"
#include "shared/error.h"

#define OPS_TEXT_PROBE 8192u /* bytes checked for "is this text" */
#define OPS_READ_DEFAULT_LIMIT 2000u
#define OPS_READ_ROW_CHARS 5000u           /* characters per numbered row */
#define OPS_READ_OUTPUT_MAX (500u * 1024u) /* numbered rows per read */
#define OPS_READ_SCAN_MAX (1ull << 30)     /* bytes of one file read scans */
#define OPS_BINARY_MAX (10u << 20)         /* read --binary */
#define OPS_WRITE_MAX (64u << 20)
#define OPS_EDIT_MAX (64u << 20)
#define OPS_RESULTS_MAX 10000u /* glob and grep output lines */
#define OPS_LS_MAX 1000000u
#define OPS_WALK_MAX_DEPTH 256u
#define OPS_WALK_MAX_VISITS 1000000u
#define OPS_GLOB_MAX_ALTS 1024u
#define OPS_CONTEXT_MAX 10000u /* -A/-B/-C */
#define OPS_GREP_LINE_MAX (64u << 20)
#define OPS_GREP_TEXT_MAX 4096u

struct ops_ls_req {
        const char *path; /* NULL: the workdir */
        bool json;
};

struct ops_read_req {
        const char *path;
        uint64_t offset; /* lines to skip */
        uint64_t limit;  /* lines to print, >= 1 */
        bool binary;
        bool json;
        bool escape_content; /* human output to a terminal: escape the rows */
};

struct ops_write_req {
        const char *path;
        const char *content;
        size_t len;
        bool json;
        /* sbx serve's upload: replace an existing file (atomically, by rename) instead of
         * failing, and give it mode (permission bits; 0: a new file's default, a replaced
         * file's old bits). */
        bool replace;
        unsigned mode;
};

struct ops_edit_req {
        const char *path;
        const char *old_str; /* not NUL-terminated: old_len bytes, > 0 */
        size_t old_len;
        const char *new_str;
        size_t new_len;
        bool replace_all;
        bool json;
};

struct ops_glob_req {
        const char *pattern;
        const char *dir; /* NULL: the workdir */
        bool json;
};

enum ops_grep_mode {
        OPS_GREP_FILES, /* files_with_matches */
        OPS_GREP_CONTENT,
        OPS_GREP_COUNT,
};

struct ops_grep_req {
        const char *pattern;
        const char *path; /* NULL: the workdir */
        enum ops_grep_mode mode;
        unsigned before, after; /* context lines, content mode only */
        bool caseless;          /* -i */
        bool fixed;             /* -F */
        const char *glob;       /* --glob, or NULL */
        bool json;
        bool escape_content; /* human output to a terminal: escape the matched lines too */
};

/* The operations (confined_fn signature: arg is the matching request). */
int ops_ls(void *arg, struct buf *out, struct sbx_error *e);
int ops_read(void *arg, struct buf *out, struct sbx_error *e);
int ops_write(void *arg, struct buf *out, struct sbx_error *e);
int ops_edit(void *arg, struct buf *out, struct sbx_error *e);
int ops_glob(void *arg, struct buf *out, struct sbx_error *e);
int ops_grep(void *arg, struct buf *out, struct sbx_error *e);

/* Host-side checks, so usage errors come before joining the session (exit 2). */
int ops_glob_validate(const struct ops_glob_req *req, struct sbx_error *e);
int ops_grep_validate(const struct ops_grep_req *req, struct sbx_error *e);

/* Parse "files_with_matches" | "content" | "count". 0 or -EINVAL. */
int ops_grep_mode_parse(const char *s, enum ops_grep_mode *ret);

/*
 * The file operations behind sbx serve's execd endpoints (ops/fsinfo.c, fsmanage.c, cat.c).
 * Each request is a batch, so one HTTP request joins the session once; the first failing item
 * ends it, with the errors above (its path in the message). A FileInfo is the JSON object
 * {"path":"/abs","type":"file"|"directory"|"symlink"|"other","size":N,"modified_at":T,
 * "created_at":T,"owner":NAME,"group":NAME,"mode":644}: mode is the permission bits written
 * as octal digits in a decimal number, as the execd API has it; created_at is the birth time
 * where the filesystem keeps one, else the change time; owner and group are names from the
 * session's own /etc/passwd and /etc/group (read as files: no NSS module is loaded), else
 * the numeric id.
 */
enum ops_fs_kind {
        OPS_FS_INFO,    /* out: {"<path as given>":FileInfo,...}; a symlink is not followed */
        OPS_FS_MKDIR,   /* mkdir -p, then mode (0: 0755) and owner/group on the last one */
        OPS_FS_CHMOD,   /* mode (0: keep) and owner/group */
        OPS_FS_RM_FILE, /* unlink; a missing file is not an error, a directory is */
        OPS_FS_RM_DIR,  /* rm -rf, never following a symlink; a missing one is not an error */
        OPS_FS_MOVE,    /* rename path to dest (dest's parents made, an existing dest refused) */
        OPS_FS_REPLACE, /* every occurrence of old by new; out: {"<path>":{"replacedCount":N}} */
};

struct ops_fs_item {
        const char *path;
        const char *dest;              /* move */
        unsigned mode;                 /* mkdir, chmod: permission bits, <= 07777 */
        const char *owner, *group;     /* mkdir, chmod: a name or a numeric id; NULL: keep */
        const char *old_str, *new_str; /* replace (old_len > 0) */
        size_t old_len, new_len;
};

struct ops_fs_req {
        enum ops_fs_kind kind;
        const struct ops_fs_item *items;
        size_t n;
};

/*
 * Search (list false): the files (not directories) below path whose name matches the glob
 * pattern (one component: "*" "?" "[...]" "{a,b}"; NULL or "**": every file), symlinks
 * reported and never followed. List (list true): the entries below path down to depth levels
 * (0: none), path itself refused when it is a symlink or not a directory ("not_found").
 * Entries in byte order of name, each directory's descendants after it. out: a JSON array of
 * FileInfo and "\n"; when a bound (OPS_RESULTS_MAX results, the walk's bounds) cut it, then
 * one line "truncated REASON\n" (REASON: results, entries, depth).
 */
struct ops_find_req {
        const char *path;
        const char *pattern;
        unsigned depth;
        bool list;
};

/*
 * Download: length bytes from offset of the regular file path (UINT64_MAX: to its end), at
 * most OPS_CAT_MAX. out: the line "SIZE DEV INO\n" (the file's size and identity, so that a
 * download in several calls can tell that the file was replaced between them), then the bytes.
 * Anything but a regular file: "not_text" (a directory: "not_found").
 */
#define OPS_CAT_MAX (8u << 20)
struct ops_cat_req {
        const char *path;
        uint64_t offset, length;
};

int ops_fs(void *arg, struct buf *out, struct sbx_error *e);
int ops_find(void *arg, struct buf *out, struct sbx_error *e);
int ops_cat(void *arg, struct buf *out, struct sbx_error *e);
