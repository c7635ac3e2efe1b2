/* SPDX-License-Identifier: MIT */
#include "cpstream.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "common.h"
#include "cpstream-internal.h"

struct pack {
        struct buf *out;
        uint64_t max, bytes, entries;
        struct sbx_error *e;
        const char *top; /* the path as given, for messages */
};

static int emit(struct pack *p, char type, mode_t mode, const char *path, const void *data,
                size_t n)
{
        struct cp_rec r = {type, (uint32_t)(mode & 07777), (uint32_t)strlen(path), n};
        p->bytes += n + sizeof(r) + r.path_len;
        if (++p->entries > CP_MAX_ENTRIES || p->bytes > p->max)
                return sbx_fail(p->e, EXIT_FAILED, "limit", 0,
                                "the copy is larger than %llu bytes or %d entries",
                                (unsigned long long)p->max, CP_MAX_ENTRIES);
        if (buf_append(p->out, &r, sizeof(r)) < 0 || buf_append(p->out, path, r.path_len) < 0 ||
            (n && buf_append(p->out, data, n) < 0))
                return ops_oom(p->e);
        return 0;
}

static int pack_at(struct pack *p, int dfd, const char *name, struct buf *rel, int depth);

static int pack_file(struct pack *p, int dfd, const char *name, const struct stat *st,
                     const char *rel)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat now;
        if (fd < 0 || fstat(fd, &now) < 0)
                return ops_fail_errno(p->e, errno, "failed to open '%s'", rel);
        /* what was looked at is what is read: a swap meanwhile is refused */
        if (!S_ISREG(now.st_mode) || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
                return sbx_fail(p->e, EXIT_FAILED, "not_found", 0, "'%s' changed while copied",
                                rel);
        if ((uint64_t)now.st_size > p->max)
                return sbx_fail(p->e, EXIT_FAILED, "limit", 0, "'%s' is larger than %llu bytes",
                                rel, (unsigned long long)p->max);
        _cleanup_buf_ struct buf data = {0};
        int r = read_all(fd, &data, (size_t)p->max + 1);
        if (r < 0)
                return ops_fail_errno(p->e, -r, "failed to read '%s'", rel);
        return emit(p, 'f', now.st_mode, rel, data.data, data.len);
}

static int pack_dir(struct pack *p, int dfd, const char *name, const struct stat *st,
                    struct buf *rel, int depth)
{
        if (depth > CP_MAX_DEPTH)
                return sbx_fail(p->e, EXIT_FAILED, "limit", 0, "'%s' is more than %d levels deep",
                                rel->data, CP_MAX_DEPTH);
        int r = emit(p, 'd', st->st_mode, rel->data, NULL, 0);
        int fd = r < 0 ? -1 : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (r < 0)
                return r;
        if (fd < 0)
                return ops_fail_errno(p->e, errno, "failed to open '%s'", rel->data);
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return ops_oom(p->e);
        }
        size_t base = rel->len;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                rel->len = base;
                if (buf_printf(rel, "/%s", de->d_name) < 0)
                        return ops_oom(p->e);
                if ((r = pack_at(p, dirfd(d), de->d_name, rel, depth + 1)) < 0)
                        return r;
        }
        rel->len = base;
        rel->data[base] = '\0';
        return 0;
}

static int pack_at(struct pack *p, int dfd, const char *name, struct buf *rel, int depth)
{
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return ops_fail_errno(p->e, errno, "cannot copy '%s'", depth ? rel->data : p->top);
        if (S_ISDIR(st.st_mode))
                return pack_dir(p, dfd, name, &st, rel, depth);
        if (S_ISREG(st.st_mode))
                return pack_file(p, dfd, name, &st, rel->data);
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(dfd, name, target, sizeof(target));
                if (n < 0 || (size_t)n >= sizeof(target))
                        return ops_fail_errno(p->e, n < 0 ? errno : ENAMETOOLONG,
                                              "failed to read link '%s'", rel->data);
                return emit(p, 'l', 0777, rel->data, target, (size_t)n);
        }
        return 0; /* devices, fifos, sockets: not copied */
}

int cp_volume_link(struct sbx_error *e, const char *what, const char *path, const char *link)
{
        return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                        "cannot copy %s '%s': '%s' is a symbolic link in one of the session's "
                        "volumes (not followed); name the real path",
                        what, path, link ? link : path);
}

char *cp_split_path(const char *path, const char **ret_dir, const char **ret_name)
{
        char *copy = strdup(path);
        if (!copy)
                return NULL;
        size_t n = strlen(copy);
        while (n > 1 && copy[n - 1] == '/')
                copy[--n] = '\0';
        char *slash = strrchr(copy, '/');
        *ret_name = slash ? slash + 1 : copy;
        *ret_dir = !slash ? NULL : slash == copy ? "/" : copy;
        if (slash)
                *slash = '\0';
        return copy;
}

int cp_pack(const char *path, const struct hostpath_vols *vols, uint64_t max, struct buf *out,
            struct sbx_error *e)
{
        const char *dir, *name;
        _cleanup_free_ char *copy = cp_split_path(path, &dir, &name);
        if (!copy)
                return ops_oom(e);
        _cleanup_close_ int dfd = -1;
        if (dir) {
                _cleanup_free_ char *link = NULL;
                int r = hostpath_open(dir, vols, true, &dfd, &link);
                if (r == -ELOOP && link)
                        return cp_volume_link(e, "from", path, link);
                if (r < 0)
                        return ops_fail_errno(e, -r, "cannot copy '%s'", path);
        }
        if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
                return sbx_usage(e, "cannot copy '%s': name a file or directory", path);
        struct pack p = {.out = out, .max = max, .e = e, .top = path};
        _cleanup_buf_ struct buf rel = {0};
        if (buf_puts(&rel, name) < 0)
                return ops_oom(e);
        return pack_at(&p, dir ? dfd : AT_FDCWD, name, &rel, 0);
}

int cp_confined(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct cp_req *req = arg;
        if (!req->data)
                return cp_pack(req->path, NULL, req->max, out, e);
        uint64_t bytes;
        int r = cp_unpack(req->data, req->len, req->path, NULL, &bytes, e);
        return r < 0 ? r : buf_printf(out, "%llu", (unsigned long long)bytes) < 0 ? -ENOMEM : 0;
}
