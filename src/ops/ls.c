/* SPDX-License-Identifier: MIT */
/* ls: the entries of a directory, sorted by name, symlinks shown and not followed. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "ops.h"

struct ls_entry {
        char *name;
        struct stat st;
};

struct ls_list {
        struct ls_entry *v;
        size_t n, cap;
        bool truncated;
};

static void ls_list_free(struct ls_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].name);
        free(l->v);
}

static int ls_entry_cmp(const void *a, const void *b)
{
        return strcmp(((const struct ls_entry *)a)->name, ((const struct ls_entry *)b)->name);
}

static int ls_list_add(struct ls_list *l, const char *name, const struct stat *st)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 64;
                struct ls_entry *v = realloc(l->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        l->v[l->n++] = (struct ls_entry){.name = copy, .st = *st};
        return 0;
}

/* Read every entry of dirfd with its lstat; entries that vanish meanwhile are skipped. */
static int ls_read_dir(int dirfd, const char *path, struct ls_list *l, struct sbx_error *e)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to list '%s'", path);
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                int r = errno;
                close(fd);
                return ops_fail_errno(e, r, "failed to list '%s'", path);
        }
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return ops_fail_errno(e, errno, "failed to list '%s'", path);
                        return 0;
                }
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (l->n >= OPS_LS_MAX) {
                        l->truncated = true;
                        return 0;
                }
                struct stat st;
                if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (ls_list_add(l, de->d_name, &st) < 0)
                        return ops_oom(e);
        }
}

static int ls_format(const struct ls_list *l, const char *abs_dir, bool json, struct buf *out)
{
        _cleanup_buf_ struct buf p = {0};
        int r = json ? buf_append(out, "[", 1) : 0;

        for (size_t i = 0; r == 0 && i < l->n; i++) {
                const struct ls_entry *en = &l->v[i];
                if (!json) {
                        r = ops_entry_line(out, &en->st, en->name);
                        continue;
                }
                p.len = 0;
                if ((r = buf_puts(&p, abs_dir)) < 0 ||
                    (r = ops_path_join(&p, en->name, strlen(en->name))) < 0)
                        break;
                if (i > 0 && (r = buf_append(out, ",", 1)) < 0)
                        break;
                r = ops_entry_json(out, &en->st, p.data);
        }
        if (r == 0 && json)
                r = buf_puts(out, "]\n");
        else if (r == 0 && l->truncated)
                r = buf_printf(out, "[Results truncated at %u entries]\n", OPS_LS_MAX);
        return r;
}

/* PATH is not a directory: its own line, as ls(1) does for a file operand. */
static int ls_single(const char *path, const char *abs, bool json, struct buf *out,
                     struct sbx_error *e)
{
        struct stat st;
        if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return ops_fail_errno(e, errno, "failed to list '%s'", path);
        int r;
        if (json) {
                if ((r = buf_append(out, "[", 1)) >= 0 && (r = ops_entry_json(out, &st, abs)) >= 0)
                        r = buf_puts(out, "]\n");
        } else
                r = ops_entry_line(out, &st, path);
        return r < 0 ? ops_oom(e) : 0;
}

int ops_ls(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_ls_req *req = arg;
        const char *path = req->path && req->path[0] ? req->path : ".";
        _cleanup_buf_ struct buf abs = {0};
        _cleanup_(ls_list_free) struct ls_list l = {0};

        int r = ops_path_abs(path, &abs);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", path);

        _cleanup_close_ int fd =
            open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                /* a file, or a dangling or looping symlink: its own line (or ENOENT) */
                if (errno == ENOTDIR || errno == ENOENT || errno == ELOOP)
                        return ls_single(path, abs.data, req->json, out, e);
                return ops_fail_errno(e, errno, "failed to list '%s'", path);
        }
        if ((r = ls_read_dir(fd, path, &l, e)) < 0)
                return r;
        if (l.n > 1)
                qsort(l.v, l.n, sizeof(*l.v), ls_entry_cmp);
        if (ls_format(&l, abs.data, req->json, out) < 0)
                return ops_oom(e);
        return 0;
}
