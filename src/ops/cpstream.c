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

#define MAX_DEPTH 256

struct rec {
        char type; /* 'd', 'f', 'l' */
        uint32_t mode;
        uint32_t path_len;
        uint64_t data_len;
} __attribute__((packed));

struct pack {
        struct buf *out;
        uint64_t max, bytes, entries;
        struct sbx_error *e;
        const char *top; /* the path as given, for messages */
};

static int emit(struct pack *p, char type, mode_t mode, const char *path, const void *data,
                size_t n)
{
        struct rec r = {type, (uint32_t)(mode & 07777), (uint32_t)strlen(path), n};
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
        if (depth > MAX_DEPTH)
                return sbx_fail(p->e, EXIT_FAILED, "limit", 0, "'%s' is more than %d levels deep",
                                rel->data, MAX_DEPTH);
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

/* A host path that went through a link in one of the session's volumes: refused. */
static int volume_link(struct sbx_error *e, const char *what, const char *path, const char *link)
{
        return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                        "cannot copy %s '%s': '%s' is a symbolic link in one of the session's "
                        "volumes (not followed); name the real path",
                        what, path, link ? link : path);
}

/*
 * path cut into its directory and its last name, trailing slashes dropped: *ret_dir is NULL
 * without a slash, "/" for the one at the start, else in the returned copy, as *ret_name is
 * ("" for "/"). NULL: out of memory.
 */
static char *split_path(const char *path, const char **ret_dir, const char **ret_name)
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
        _cleanup_free_ char *copy = split_path(path, &dir, &name);
        if (!copy)
                return ops_oom(e);
        _cleanup_close_ int dfd = -1;
        if (dir) {
                _cleanup_free_ char *link = NULL;
                int r = hostpath_open(dir, vols, true, &dfd, &link);
                if (r == -ELOOP && link)
                        return volume_link(e, "from", path, link);
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

/* ---- unpack ---- */

/* A relative path of plain components: no "", ".", ".." and not absolute. */
static bool rel_ok(const char *p, size_t n)
{
        if (n == 0 || p[0] == '/' || memchr(p, '\0', n))
                return false;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j < n && p[j] != '/')
                        j++;
                size_t l = j - i;
                if (l == 0 || (l == 1 && p[i] == '.') || (l == 2 && p[i] == '.' && p[i + 1] == '.'))
                        return false;
                i = j + 1;
                if (j == n - 1)
                        return false; /* trailing slash */
        }
        return true;
}

/* Open the directory holding the entry rel (its components after the first are below
 * top_fd), never through a symlink; *ret_name: the last component. */
static int open_parent(int top_fd, char *rel, const char **ret_name)
{
        char *slash = strchr(rel, '/');
        if (!slash) {
                *ret_name = rel;
                return fcntl(top_fd, F_DUPFD_CLOEXEC, 3);
        }
        int fd = fcntl(top_fd, F_DUPFD_CLOEXEC, 3);
        char *comp = slash + 1;
        /* the first component is the top entry itself, open as top_fd's child */
        *slash = '\0';
        int sub = openat(fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *slash = '/';
        close(fd);
        fd = sub;
        for (char *s; fd >= 0 && (s = strchr(comp, '/')); comp = s + 1) {
                *s = '\0';
                sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                *s = '/';
                close(fd);
                fd = sub;
        }
        *ret_name = comp;
        return fd < 0 ? negerrno() : fd;
}

static int create_entry(int pfd, const char *name, const struct rec *r, const char *data)
{
        if (r->type == 'd')
                return mkdirat(pfd, name, r->mode & 0777) < 0 ? negerrno() : 0;
        if (r->type == 'l') {
                _cleanup_free_ char *t = strndup(data, r->data_len);
                if (!t)
                        return -ENOMEM;
                return symlinkat(t, pfd, name) < 0 ? negerrno() : 0;
        }
        _cleanup_close_ int fd =
            openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, r->mode & 0777);
        if (fd < 0)
                return negerrno();
        int k = write_all(fd, data, r->data_len);
        if (k < 0)
                (void)unlinkat(pfd, name, 0); /* no half-written file stays */
        return k;
}

/*
 * Where dst puts the copy: *ret_dir, the directory to create in; *ret_top, the top entry's new
 * name there, or NULL to keep its own (dst is an existing directory, reached through no link
 * in a volume of the session's).
 */
static int open_destination(const char *dst, const struct hostpath_vols *vols, int *ret_dir,
                            const char **ret_top, struct sbx_error *e)
{
        const char *parent, *name;
        _cleanup_free_ char *copy = split_path(dst, &parent, &name);
        if (!copy)
                return ops_oom(e);
        _cleanup_free_ char *link = NULL;
        _cleanup_close_ int pfd = -1;
        int r = hostpath_open(parent ? parent : ".", vols, true, &pfd, &link);
        struct stat st;
        bool dir = !*name || !strcmp(name, ".") || !strcmp(name, "..");
        if (r == 0 && !dir && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                dir = S_ISDIR(st.st_mode);
                if (S_ISLNK(st.st_mode)) { /* the caller's own link to a directory is followed */
                        _cleanup_close_ int t = -1;
                        r = hostpath_open(dst, vols, true, &t, &link);
                        dir = r == 0 && fstat(t, &st) == 0 && S_ISDIR(st.st_mode);
                        if (r == -ENOENT)
                                r = 0; /* dangling: "exists" below */
                        if (dir) {
                                closep(&pfd);
                                pfd = TAKE_FD(t);
                                name = ".";
                        }
                }
        }
        if (r == -ELOOP && link)
                return volume_link(e, "to", dst, link);
        if (r < 0)
                return ops_fail_errno(e, -r, "cannot copy to '%s'", dst);
        /* re-opened for reading and creating in (O_PATH cannot be written through) */
        *ret_dir =
            openat(pfd, dir && *name ? name : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*ret_dir < 0)
                return ops_fail_errno(e, errno, "cannot copy to '%s'", dst);
        *ret_top = dir ? NULL : strrchr(dst, '/') ? strrchr(dst, '/') + 1 : dst;
        if (*ret_top && (!**ret_top || strchr(*ret_top, '/'))) {
                closep(ret_dir);
                return sbx_usage(e, "invalid destination '%s'", dst);
        }
        return 0;
}

int cp_unpack(const char *data, size_t len, const char *dst, const struct hostpath_vols *vols,
              uint64_t *ret_bytes, struct sbx_error *e)
{
        const char *top = NULL; /* the top entry's name at its parent */
        _cleanup_close_ int pfd = -1;
        int opened = open_destination(dst, vols, &pfd, &top, e);
        if (opened < 0)
                return opened;
        *ret_bytes = 0;
        for (size_t off = 0; off < len;) {
                struct rec r;
                if (len - off < sizeof(r))
                        return sbx_internal(e, 0, "a truncated copy stream");
                memcpy(&r, data + off, sizeof(r));
                off += sizeof(r);
                if (r.path_len > len - off || r.data_len > len - off - r.path_len ||
                    !rel_ok(data + off, r.path_len) || !strchr("dfl", r.type))
                        return sbx_internal(e, 0, "a malformed copy stream");
                _cleanup_buf_ struct buf rel = {0};
                const char *p = data + off, *first_end = memchr(p, '/', r.path_len);
                /* the top entry takes the destination's name when one was given */
                if (top && buf_puts(&rel, top) < 0)
                        return ops_oom(e);
                if (top && first_end &&
                    buf_append(&rel, first_end, r.path_len - (size_t)(first_end - p)) < 0)
                        return ops_oom(e);
                if (!top && buf_append(&rel, p, r.path_len) < 0)
                        return ops_oom(e);
                if (!rel.data || !rel_ok(rel.data, rel.len))
                        return sbx_usage(e, "invalid destination '%s'", dst);
                off += r.path_len;
                const char *name;
                _cleanup_close_ int dfd = open_parent(pfd, rel.data, &name);
                int k = dfd < 0 ? dfd : create_entry(dfd, name, &r, data + off);
                if (k == -EEXIST)
                        return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                        "cannot copy to '%s': '%s' exists", dst, rel.data);
                if (k == -ENOSPC || k == -EDQUOT)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "cannot copy to '%s': no space left (the disk limit)", dst);
                if (k < 0)
                        return ops_fail_errno(e, -k, "cannot copy to '%s' ('%s')", dst, rel.data);
                if (r.type == 'f')
                        *ret_bytes += r.data_len;
                off += r.data_len;
        }
        return 0;
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
