/* SPDX-License-Identifier: MIT */
/*
 * write: create a new file (never replace one), with its missing parent directories. sbx
 * serve's upload replaces instead: the content goes to a new temporary file beside the target,
 * renamed over it at the end, so a failed upload leaves the old file whole and a symlink at
 * the target is replaced, not written through. Either way, a failed write removes the parent
 * directories it made: nothing of it stays.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "shared/util.h"
#include "common.h"
#include "ops.h"

/*
 * mkdir -p of every parent of path; existing ones (of any type) are left to the open.
 * *ret_dir and *ret_kept: what ops_rmdirs removes again when the write fails after this
 * (*ret_dir NULL: path has no parent to make).
 */
static int make_parents(const char *path, char **ret_dir, size_t *ret_kept)
{
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
                return 0;
        *slash = '\0';
        int r = ops_mkdirs(p, ret_kept);
        if (r == 0)
                *ret_dir = TAKE_PTR(p);
        return r;
}

/* A new file in dirfd named ".sbx-upload-<random>" (O_EXCL), its name in name. */
static int tmp_create(int dirfd, char name[static 40])
{
        struct timespec ts;
        for (int i = 0; i < 100; i++) {
                (void)clock_gettime(CLOCK_MONOTONIC, &ts);
                snprintf(name, 40, ".sbx-upload-%lx%x",
                         (unsigned long)ts.tv_nsec ^ (unsigned long)getpid(), (unsigned)i);
                int fd =
                    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0 || errno != EEXIST)
                        return fd < 0 ? negerrno() : fd;
        }
        return -EEXIST;
}

/* The permission bits the replacement gets: the asked ones, else the old file's, else the
 * default of a new file (0644 less the umask, which the open applied). */
static int replace_mode(int dirfd, const char *base, unsigned asked, int fd)
{
        struct stat st;
        if (asked)
                return fchmod(fd, asked) < 0 ? negerrno() : 0;
        if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                return fchmod(fd, st.st_mode & 07777) < 0 ? negerrno() : 0;
        return 0;
}

static int write_replace(const struct ops_write_req *req, struct sbx_error *e)
{
        _cleanup_free_ char *d = strdup(req->path), *b = strdup(req->path);
        if (!d || !b)
                return ops_oom(e);
        const char *base = basename(b);
        if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "/") == 0)
                return ops_fail_errno(e, EISDIR, "failed to write '%s'", req->path);
        _cleanup_close_ int dirfd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return ops_fail_errno(e, errno, "failed to write '%s'", req->path);
        char tmp[40];
        _cleanup_close_ int fd = tmp_create(dirfd, tmp);
        if (fd < 0)
                return ops_fail_errno(e, fd, "failed to write '%s'", req->path);
        int r = write_all(fd, req->content, req->len);
        if (r >= 0)
                r = replace_mode(dirfd, base, req->mode, fd);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = negerrno();
        if (r >= 0 && renameat(dirfd, tmp, dirfd, base) < 0)
                r = negerrno();
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0); /* ours: O_EXCL made it */
                return ops_fail_errno(e, r, "failed to write '%s'", req->path);
        }
        return 0;
}

static int write_new(const struct ops_write_req *req, struct sbx_error *e)
{
        /* O_EXCL: an existing file, directory or symlink (even a dangling one) is EEXIST */
        _cleanup_close_ int fd =
            open(req->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
                return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                "Cannot write to %s because it already exists. Read and then "
                                "make an edit, or write to a new path.",
                                req->path);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to write '%s'", req->path);
        int r = write_all(fd, req->content, req->len);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = negerrno();
        if (r < 0) {
                (void)unlink(req->path); /* ours: O_EXCL made it */
                return ops_fail_errno(e, r, "failed to write '%s'", req->path);
        }
        return 0;
}

int ops_write(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_write_req *req = arg;
        _cleanup_buf_ struct buf abs = {0};

        if (!req->path || !req->path[0])
                return sbx_usage(e, "write needs a PATH");
        if (req->len > OPS_WRITE_MAX)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "failed to write '%s': content is larger than %u MiB", req->path,
                                OPS_WRITE_MAX >> 20);
        int r = ops_path_abs(req->path, &abs);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", req->path);
        _cleanup_free_ char *made = NULL;
        size_t kept = 0;
        r = make_parents(req->path, &made, &kept);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to create the parent directories of '%s'",
                                      req->path);
        r = req->replace ? write_replace(req, e) : write_new(req, e);
        if (r < 0) {
                /* a failed write leaves no trace: the parents it made go too */
                if (made)
                        ops_rmdirs(made, kept);
                return r;
        }

        if (req->json) {
                if ((r = buf_puts(out, "{\"path\":")) >= 0 && (r = json_cstr(out, abs.data)) >= 0)
                        r = buf_printf(out, ",\"bytes\":%zu}\n", req->len);
        } else
                r = buf_printf(out, "Wrote %zu bytes to '%s'\n", req->len, req->path);
        return r < 0 ? ops_oom(e) : 0;
}
