/* SPDX-License-Identifier: MIT */
#include "common.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/escape.h"
#include "ops.h"
#include "walk.h"

static const char *errno_code(int errnum)
{
        switch (errnum) {
        case ENOENT:
        case ENOTDIR:
        case ELOOP:
        case EISDIR:
                return "not_found";
        case EEXIST:
                return "exists";
        case ENOSPC:
        case EDQUOT:
        case EFBIG:
        case ENAMETOOLONG:
        case EMFILE:
        case ENFILE:
        case ENOMEM:
        case EOVERFLOW:
                return "limit";
        case EACCES:
        case EPERM:
        case EROFS:
        case ETXTBSY:
                return "unsupported";
        default:
                return "internal";
        }
}

/* names in parentheses: common.h makes them macros for the analyzer */
int(ops_fail_errno)(struct sbx_error *e, int errnum, const char *fmt, ...)
{
        if (errnum < 0)
                errnum = -errnum;
        if (errnum == 0)
                errnum = EIO;
        if (e->exit_code != 0)
                return -errnum;

        char msg[sizeof(e->message)];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return sbx_fail(e, EXIT_FAILED, errno_code(errnum), errnum, "%s", msg);
}

int(ops_fail_silent)(struct sbx_error *e)
{
        if (e->exit_code == 0) {
                e->exit_code = EXIT_FAILED;
                e->code = "not_found";
                e->message[0] = '\0';
        }
        return -ENOENT;
}

int(ops_oom)(struct sbx_error *e)
{
        return sbx_internal(e, ENOMEM, "failed to build the output");
}

int ops_mkdirs(const char *dir, size_t *ret_kept)
{
        _cleanup_free_ char *p = strdup(dir);
        if (!p)
                return -ENOMEM;
        size_t kept = strlen(p), before = 0; /* before: where the last component seen ends */
        bool made_one = false;
        for (char *s = p + 1;; s++) {
                bool end = *s == '\0';
                if (!end && *s != '/')
                        continue;
                if (s[-1] != '/') {
                        *s = '\0';
                        int made = mkdir(p, 0755) == 0 ? 0 : errno == EEXIST ? 1 : -errno;
                        if (made < 0) {
                                p[before] = '\0'; /* what this call made goes again */
                                ops_rmdirs(p, kept);
                                return made;
                        }
                        if (made == 0 && !made_one) {
                                made_one = true;
                                kept = before;
                        }
                        before = (size_t)(s - p);
                        if (!end)
                                *s = '/';
                }
                if (end)
                        break;
        }
        if (ret_kept)
                *ret_kept = kept;
        return 0;
}

void ops_rmdirs(const char *dir, size_t kept)
{
        _cleanup_free_ char *p = strdup(dir);
        size_t n = p ? strlen(p) : 0;
        for (;;) {
                while (n > kept && p[n - 1] == '/')
                        n--;
                if (n <= kept)
                        return;
                p[n] = '\0';
                /* not empty (or not a directory): someone else's now, kept with those above */
                if (rmdir(p) < 0)
                        return;
                while (n > kept && p[n - 1] != '/')
                        n--;
        }
}

DIR *ops_dir_read(int dir)
{
        int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d && fd >= 0)
                close(fd);
        if (d) /* a dup shares dir's offset: from the start, wherever an earlier read left it */
                rewinddir(d);
        return d;
}

int ops_empty_dir(int dir, unsigned max_depth)
{
        _cleanup_closedir_ DIR *d = ops_dir_read(dir);
        if (!d)
                return -ENOMEM;
        int r = 0;
        for (struct dirent *de; r == 0 && (de = readdir(d));)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        r = ops_remove_at(dirfd(d), de->d_name, max_depth);
        return r;
}

int ops_remove_at(int parent, const char *name, unsigned max_depth)
{
        if (unlinkat(parent, name, 0) == 0)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return errno == ENOENT ? 0 : negerrno();
        if (max_depth == 0)
                return -ELOOP;
        _cleanup_close_ int fd =
            openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        int r = ops_empty_dir(fd, max_depth - 1);
        if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = negerrno();
        return r;
}

int ops_open_regular(const char *path, struct stat *st, struct sbx_error *e)
{
        /* O_NONBLOCK: a FIFO planted at the path must not hang the open */
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to read '%s'", path);
        int r = 0;
        if (fstat(fd, st) < 0)
                r = ops_fail_errno(e, errno, "failed to read '%s'", path);
        else if (S_ISDIR(st->st_mode))
                r = ops_fail_errno(e, EISDIR, "failed to read '%s'", path);
        else if (!S_ISREG(st->st_mode))
                r = sbx_fail(e, EXIT_FAILED, "not_text", 0,
                             "failed to read '%s': not a regular file", path);
        if (r < 0)
                close(fd);
        return r < 0 ? r : fd;
}

int ops_path_normalize(const char *abs, struct buf *out)
{
        /* Component stack: offsets in out->data where each kept component starts. */
        size_t len = strlen(abs);
        _cleanup_free_ size_t *starts = malloc((len / 2 + 2) * sizeof(size_t));
        size_t depth = 0;

        if (!starts)
                return -ENOMEM;
        out->len = 0;
        int r = buf_append(out, "/", 1);
        if (r < 0)
                return r;
        for (const char *p = abs; *p;) {
                while (*p == '/')
                        p++;
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        /* nothing */
                } else if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (depth > 0)
                                out->len = starts[--depth];
                } else {
                        starts[depth++] = out->len;
                        if (out->len > 1 && (r = buf_append(out, "/", 1)) < 0)
                                return r;
                        if ((r = buf_append(out, p, n)) < 0)
                                return r;
                }
                p = end;
        }
        if (out->len == 0)
                out->len = 1; /* ".." popped back to the root */
        out->data[out->len] = '\0';
        return 0;
}

int ops_path_abs(const char *path, struct buf *out)
{
        _cleanup_buf_ struct buf joined = {0};
        int r;

        if (path[0] != '/') {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd)
                        return negerrno();
                if ((r = buf_puts(&joined, cwd)) < 0 || (r = buf_append(&joined, "/", 1)) < 0)
                        return r;
        }
        if ((r = buf_puts(&joined, path)) < 0)
                return r;
        return ops_path_normalize(joined.data, out);
}

int ops_path_join(struct buf *dir, const char *rel, size_t rel_len)
{
        int r = 0;
        if (!(dir->len == 1 && dir->data[0] == '/'))
                r = buf_append(dir, "/", 1);
        return r < 0 ? r : buf_append(dir, rel, rel_len);
}

bool ops_is_text(const char *p, size_t n)
{
        size_t probe = n < OPS_TEXT_PROBE ? n : OPS_TEXT_PROBE;
        size_t check = n < OPS_TEXT_PROBE + 3 ? n : OPS_TEXT_PROBE + 3;

        if (memchr(p, '\0', probe))
                return false;
        return utf8_valid_prefix(p, check) >= probe;
}

char ops_type_char(mode_t mode)
{
        if (S_ISDIR(mode))
                return 'd';
        if (S_ISREG(mode))
                return '-';
        if (S_ISLNK(mode))
                return 'l';
        return '?';
}

void ops_format_time(int64_t sec, char out[static 21])
{
        const int64_t min = -30610224000LL; /* 1000-01-01T00:00:00Z */
        const int64_t max = 253402300799LL; /* 9999-12-31T23:59:59Z */
        format_rfc3339(sec < min ? min : sec > max ? max : sec, out);
}

int ops_cut_line(struct buf *out, const char *text)
{
        int r = buf_append(out, "[", 1);
        if (r == 0)
                r = escape_cstr(out, text, 0);
        return r < 0 ? r : buf_puts(out, "]\n");
}

int ops_cut_json(struct buf *out, size_t *n_items, const char *reason, const char *text)
{
        int r = buf_puts(out, (*n_items)++ ? "," : "");
        if (r == 0)
                r = buf_printf(out, "{\"truncated\":true,\"reason\":\"%s\",\"message\":", reason);
        if (r == 0)
                r = json_cstr(out, text);
        return r < 0 ? r : buf_puts(out, "}");
}

static int ops_cut(struct buf *out, bool json, size_t *n_items, const char *reason,
                   const char *text)
{
        return json ? ops_cut_json(out, n_items, reason, text) : ops_cut_line(out, text);
}

int ops_walk_cuts(struct buf *out, bool json, size_t *n_items, const struct walk *w)
{
        char text[128];
        int r = 0;
        if (w->visits_limited) {
                snprintf(text, sizeof(text), "Walk stopped after %zu entries", w->visits);
                r = ops_cut(out, json, n_items, "entries", text);
        }
        if (r == 0 && w->depth_limited) {
                snprintf(text, sizeof(text), "Walk stopped at depth %u", w->max_depth);
                r = ops_cut(out, json, n_items, "depth", text);
        }
        return r;
}

int ops_entry_line(struct buf *out, const struct stat *st, const char *name)
{
        char t[21];
        ops_format_time((int64_t)st->st_mtim.tv_sec, t);
        int r =
            buf_printf(out, "%c %lld %s ", ops_type_char(st->st_mode), (long long)st->st_size, t);
        if (r == 0)
                r = escape_cstr(out, name, 0);
        return r < 0 ? r : buf_append(out, "\n", 1);
}

int ops_entry_json(struct buf *out, const struct stat *st, const char *abs_path)
{
        char t[21];
        int r;

        ops_format_time((int64_t)st->st_mtim.tv_sec, t);
        if ((r = buf_puts(out, "{\"path\":")) < 0 || (r = json_cstr(out, abs_path)) < 0)
                return r;
        return buf_printf(out, ",\"is_dir\":%s,\"size\":%lld,\"modified_at\":\"%s\"}",
                          S_ISDIR(st->st_mode) ? "true" : "false", (long long)st->st_size, t);
}
