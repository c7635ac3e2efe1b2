/* SPDX-License-Identifier: MIT */
/* edit: exact string replacement, written atomically (temp file + rename, same directory). */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "shared/util.h"
#include "common.h"
#include "ops.h"

#define EDIT_SHOW_MAX 768u /* bytes of OLD quoted in a message, so the advice fits */
#define EDIT_TMP_TRIES 32

struct span {
        const char *p;
        size_t n;
};

/* Non-overlapping occurrences of needle in hay, left to right. */
static size_t count_occurrences(struct span hay, struct span needle)
{
        size_t count = 0;
        const char *p = hay.p, *end = hay.p + hay.n;
        while ((size_t)(end - p) >= needle.n) {
                const char *m = memmem(p, (size_t)(end - p), needle.p, needle.n);
                if (!m)
                        break;
                count++;
                p = m + needle.n;
        }
        return count;
}

/* Convert the line ends of s to CRLF (to_crlf) or LF. */
static int convert_eol(struct span s, bool to_crlf, struct buf *out)
{
        int r = 0;
        for (size_t i = 0; r == 0 && i < s.n; i++) {
                if (to_crlf && s.p[i] == '\n' && (i == 0 || s.p[i - 1] != '\r'))
                        r = buf_append(out, "\r\n", 2);
                else if (!to_crlf && s.p[i] == '\r' && i + 1 < s.n && s.p[i + 1] == '\n')
                        continue;
                else
                        r = buf_append(out, &s.p[i], 1);
        }
        return r;
}

/* OLD as quoted in a message: at most EDIT_SHOW_MAX bytes, never a cut UTF-8 sequence. */
static int show_len(struct span old, const char **ellipsis)
{
        *ellipsis = "";
        if (old.n <= EDIT_SHOW_MAX)
                return (int)old.n;
        *ellipsis = "...";
        return (int)utf8_valid_prefix(old.p, EDIT_SHOW_MAX);
}

static int build_result(struct span data, struct span old, struct span new, bool all,
                        struct buf *out)
{
        const char *p = data.p, *end = data.p + data.n;
        int r = 0;
        while (r == 0) {
                const char *m =
                    (size_t)(end - p) >= old.n ? memmem(p, (size_t)(end - p), old.p, old.n) : NULL;
                if (!m)
                        break;
                if ((r = buf_append(out, p, (size_t)(m - p))) < 0 ||
                    (r = buf_append(out, new.p, new.n)) < 0)
                        break;
                p = m + old.n;
                if (!all)
                        break;
        }
        return r < 0 ? r : buf_append(out, p, (size_t)(end - p));
}

/* A temp file in a directory that is removed unless disarmed (name cleared). */
struct tmpfile {
        int dirfd;
        char name[64];
};

static void tmpfile_cleanup(struct tmpfile *t)
{
        if (t->name[0])
                (void)unlinkat(t->dirfd, t->name, 0);
}

/* Create a new, unpredictable name with O_EXCL: a pre-planted file or link is never used. */
static int tmpfile_create(struct tmpfile *t)
{
        for (int i = 0; i < EDIT_TMP_TRIES; i++) {
                uint64_t rnd;
                if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                        return negerrno();
                snprintf(t->name, sizeof(t->name), ".sbx-edit-%016llx", (unsigned long long)rnd);
                int fd =
                    openat(t->dirfd, t->name,
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (fd >= 0)
                        return fd;
                t->name[0] = '\0';
                if (errno != EEXIST)
                        return negerrno();
        }
        return -EEXIST;
}

/* Write data to a new temp file with st's owner and permission bits, then rename it over. */
static int replace_atomically(int dirfd, const char *base, const struct stat *st,
                              const struct buf *data)
{
        _cleanup_(tmpfile_cleanup) struct tmpfile t = {.dirfd = dirfd};
        _cleanup_close_ int fd = tmpfile_create(&t);
        if (fd < 0)
                return fd;
        /* best effort: the confined child has no capabilities to give files away */
        if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
            fchown(fd, st->st_uid, st->st_gid) < 0)
                errno = 0;
        if (fchmod(fd, st->st_mode & 0777) < 0)
                return negerrno();
        int r = write_all(fd, data->data ? data->data : "", data->len);
        if (r < 0)
                return r;
        if (RETRY_EINTR(fsync(fd)) < 0 || close(TAKE_FD(fd)) < 0)
                return negerrno();
        if (renameat(dirfd, t.name, dirfd, base) < 0)
                return negerrno();
        t.name[0] = '\0';
        return 0;
}

/* Open the file PATH resolves to: its directory fd, basename and content. */
static int edit_load(const char *path, int *ret_dirfd, char **ret_base, struct stat *st,
                     struct buf *data, struct sbx_error *e)
{
        _cleanup_free_ char *real = realpath(path, NULL);
        if (!real)
                return ops_fail_errno(e, errno, "failed to edit '%s'", path);
        char *slash = strrchr(real, '/');
        _cleanup_free_ char *base = strdup(slash + 1);
        if (!base)
                return ops_oom(e);
        *slash = '\0';
        _cleanup_close_ int dirfd = open(real[0] ? real : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return ops_fail_errno(e, errno, "failed to edit '%s'", path);
        _cleanup_close_ int fd = openat(dirfd, base[0] ? base : ".",
                                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to edit '%s'", path);
        if (fstat(fd, st) < 0)
                return ops_fail_errno(e, errno, "failed to edit '%s'", path);
        if (S_ISDIR(st->st_mode))
                return ops_fail_errno(e, EISDIR, "failed to edit '%s'", path);
        if (!S_ISREG(st->st_mode))
                return sbx_fail(e, EXIT_FAILED, "not_text", 0,
                                "failed to edit '%s': not a regular file", path);
        int r = (uint64_t)st->st_size > OPS_EDIT_MAX ? -EFBIG : read_all(fd, data, OPS_EDIT_MAX);
        if (r == -EFBIG)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "failed to edit '%s': larger than %u MiB", path,
                                OPS_EDIT_MAX >> 20);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to read '%s'", path);
        *ret_dirfd = TAKE_FD(dirfd);
        *ret_base = TAKE_PTR(base);
        return 0;
}

/*
 * Find OLD in data, or its CRLF/LF-converted form (then NEW is converted too). Points old
 * and new at the forms to use and returns the count (0: not found).
 */
static size_t edit_find(struct span data, struct span *old, struct span *new, struct buf *cold,
                        struct buf *cnew, int *err)
{
        size_t count = count_occurrences(data, *old);
        *err = 0;
        if (count > 0 || !(memchr(old->p, '\n', old->n) || memchr(old->p, '\r', old->n)))
                return count;
        bool crlf = memmem(data.p, data.n, "\r\n", 2) != NULL;
        if ((*err = convert_eol(*old, crlf, cold)) < 0 ||
            (*err = convert_eol(*new, crlf, cnew)) < 0)
                return 0;
        struct span c = {cold->data ? cold->data : "", cold->len};
        if (c.n == 0 || (c.n == old->n && memcmp(c.p, old->p, c.n) == 0))
                return 0;
        count = count_occurrences(data, c);
        if (count > 0) {
                *old = c;
                *new = (struct span){cnew->data ? cnew->data : "", cnew->len};
        }
        return count;
}

static int edit_output(const struct ops_edit_req *req, size_t count, struct buf *out)
{
        _cleanup_buf_ struct buf abs = {0};
        int r;
        if (!req->json)
                return buf_printf(out,
                                  "Successfully replaced %zu instance(s) of the string in '%s'\n",
                                  count, req->path);
        if ((r = ops_path_abs(req->path, &abs)) < 0 || (r = buf_puts(out, "{\"path\":")) < 0 ||
            (r = json_cstr(out, abs.data)) < 0)
                return r;
        return buf_printf(out, ",\"replacements\":%zu}\n", count);
}

int ops_edit(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_edit_req *req = arg;
        _cleanup_close_ int dirfd = -1;
        _cleanup_free_ char *base = NULL;
        _cleanup_buf_ struct buf data = {0}, cold = {0}, cnew = {0}, result = {0};
        struct stat st;
        struct span old = {req->old_str, req->old_len}, new = {req->new_str, req->new_len};
        const char *ell;
        int r;

        if (req->old_len == 0)
                return sbx_usage(e, "OLD must not be empty");
        if ((r = edit_load(req->path, &dirfd, &base, &st, &data, e)) < 0)
                return r;
        struct span d = {data.data ? data.data : "", data.len};
        size_t count = edit_find(d, &old, &new, &cold, &cnew, &r);
        if (r < 0)
                return ops_oom(e);
        int show = show_len((struct span){req->old_str, req->old_len}, &ell);
        if (count == 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "String not found in file: '%.*s%s'", show, req->old_str, ell);
        if (count > 1 && !req->replace_all)
                return sbx_fail(e, EXIT_FAILED, "ambiguous", 0,
                                "String '%.*s%s' appears %zu times in file. Use --replace-all to "
                                "replace every instance, or provide a more specific string "
                                "with surrounding context.",
                                show, req->old_str, ell, count);
        /* the result is capped like the input */
        if (new.n > old.n && (new.n - old.n) > (OPS_EDIT_MAX - d.n) / count)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "failed to edit '%s': the result would be larger than %u MiB",
                                req->path, OPS_EDIT_MAX >> 20);
        if (build_result(d, old, new, req->replace_all, &result) < 0)
                return ops_oom(e);
        if ((r = replace_atomically(dirfd, base, &st, &result)) < 0)
                return ops_fail_errno(e, r, "failed to write '%s'", req->path);
        return edit_output(req, count, out) < 0 ? ops_oom(e) : 0;
}
