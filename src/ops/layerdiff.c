/* SPDX-License-Identifier: MIT */
#include "layerdiff.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "shared/macros.h"

#define MAX_DEPTH LAYERDIFF_MAX_DEPTH

/* The views whose base is the snapshot: the session path of each and its layer dir (a
 * path of sbx's own making in the layer). A host base's "/" is newroot/; an overlay root's
 * (--rootfs, --image) is the upper, upper/root/, whose changes are read against its lowers. */
static const struct view {
        const char *prefix, *dir;
} host_views[] = {{"", "newroot"}, {"/workspace", "workspace"}, {"/tmp", "tmp"}},
  ovl_views[] = {{"", "upper/root"}, {"/workspace", "workspace"}, {"/tmp", "tmp"}};
#define NVIEWS 3

struct change {
        char kind;
        char *path;
};

struct walk {
        dev_t dev;
        const struct view *views; /* host_views or ovl_views */
        /* the lowers that the overlay upper being walked is read against, top first: the
         * host's /usr for a host base's upper/usr, the --rootfs directory or the image's
         * layers for an overlay root */
        const int *lower;
        size_t n_lower;
        const char *lower_prefix; /* the session path the lowers are at ("/usr" or "") */
        /* an overlay root that also has a /usr overlay: that one's lowers, top first */
        const int *usr_lower;
        size_t n_usr_lower;
        struct change *v;
        size_t n, cap;
        bool truncated;
        /* the snapshot, parsed: one per entry, sorted by (view, path) */
        struct snap {
                int view;
                uint64_t ino;
                int64_t ctime_ns;
                const char *path; /* into the snapshot text */
                bool seen;
        } * s;
        size_t ns;
};

static int add_change(struct walk *w, char kind, const char *path)
{
        if (w->n >= LAYERDIFF_MAX) {
                w->truncated = true;
                return 0;
        }
        if (w->n == w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 64;
                struct change *v = realloc(w->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                w->v = v;
                w->cap = cap;
        }
        char *p = strdup(path[0] ? path : "/");
        if (!p)
                return -ENOMEM;
        w->v[w->n++] = (struct change){kind, p};
        return 0;
}

/* A subdirectory of dfd on the layer's own file system, never through a symlink ("a/b": one
 * component at a time). */
static int open_dir(int dfd, const char *name, dev_t dev)
{
        const char *slash = strchr(name, '/');
        int fd;
        if (slash) {
                char first[64];
                snprintf(first, sizeof(first), "%.*s", (int)(slash - name), name);
                int mid = open_dir(dfd, first, dev);
                if (mid < 0)
                        return mid;
                fd = open_dir(mid, slash + 1, dev);
                close(mid);
                return fd;
        }
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_dev != dev) {
                close(fd);
                return -EXDEV;
        }
        return fd;
}

typedef int (*visit_fn)(struct walk *w, int view, const char *path, const struct stat *st, int dfd,
                        const char *name);

/* Depth-first over the directory open as dfd (taken), path its session path. */
static int walk_dir(struct walk *w, int view, int dfd, struct buf *path, int depth, visit_fn fn)
{
        _cleanup_closedir_ DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return negerrno();
        }
        if (depth > MAX_DEPTH) {
                w->truncated = true; /* deeper than any real tree: said, not walked */
                return 0;
        }
        size_t base = path->len;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone meanwhile */
                path->len = base;
                if (buf_printf(path, "/%s", de->d_name) < 0)
                        return -ENOMEM;
                int r = fn(w, view, path->data, &st, dirfd(d), de->d_name);
                if (r < 0)
                        return r;
                if (r == 1 && S_ISDIR(st.st_mode)) {
                        int sub = open_dir(dirfd(d), de->d_name, w->dev);
                        if (sub >= 0 && (r = walk_dir(w, view, sub, path, depth + 1, fn)) < 0)
                                return r;
                }
        }
        path->len = base;
        if (path->data)
                path->data[base] = '\0';
        return 0;
}

static int64_t ctime_ns(const struct stat *st)
{
        return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* ---- the snapshot ---- */

static int snap_visit(struct walk *w, int view, const char *path, const struct stat *st, int dfd,
                      const char *name)
{
        (void)dfd;
        (void)name;
        struct buf *out = (struct buf *)w->v; /* the snapshot text (see layerdiff_snapshot) */
        if (++w->n > LAYERDIFF_SNAPSHOT_MAX)
                return -E2BIG;
        return buf_printf(out, "%d %llu %lld %s\n", view, (unsigned long long)st->st_ino,
                          (long long)ctime_ns(st), path) < 0
                   ? -ENOMEM
                   : 1;
}

static int layer_dev(int layer_fd, dev_t *ret)
{
        struct stat st;
        if (fstat(layer_fd, &st) < 0)
                return negerrno();
        *ret = st.st_dev;
        return 0;
}

bool layerdiff_host_base(int layer_fd)
{
        struct stat st;
        return fstatat(layer_fd, "newroot", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               fstatat(layer_fd, "upper/usr", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               fstatat(layer_fd, "upper/root", &st, AT_SYMLINK_NOFOLLOW) < 0;
}

bool layerdiff_overlay_root(int layer_fd)
{
        struct stat st;
        return fstatat(layer_fd, "upper/root", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode);
}

int layerdiff_snapshot(int layer_fd, struct buf *out)
{
        struct walk w = {.v = (struct change *)out};
        w.views = layerdiff_overlay_root(layer_fd) ? ovl_views : host_views;
        int r = layer_dev(layer_fd, &w.dev);
        for (size_t i = 0; r == 0 && i < NVIEWS; i++) {
                int fd = open_dir(layer_fd, w.views[i].dir, w.dev);
                struct stat st;
                if (fd < 0)
                        return fd;
                if (fstat(fd, &st) < 0 ||
                    buf_printf(out, "%zu %llu %lld %s\n", i, (unsigned long long)st.st_ino,
                               (long long)ctime_ns(&st), w.views[i].prefix) < 0) {
                        close(fd);
                        return -ENOMEM;
                }
                _cleanup_buf_ struct buf path = {0};
                if (buf_puts(&path, w.views[i].prefix) < 0) {
                        close(fd);
                        return -ENOMEM;
                }
                r = walk_dir(&w, (int)i, fd, &path, 0, snap_visit);
        }
        return r;
}

/* ---- the comparison ---- */

static int snap_cmp(const void *a, const void *b)
{
        const struct snap *x = a, *y = b;
        return x->view != y->view ? x->view - y->view : strcmp(x->path, y->path);
}

size_t layerdiff_snapshot_lines(const char *text, size_t len)
{
        size_t lines = 0;
        for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
        return lines;
}

void layerdiff_snapshot_each(char *text, size_t len, layerdiff_snap_fn fn, void *ctx)
{
        for (char *p = text, *end = text + len; p < end;) {
                char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        break;
                *nl = '\0';
                int view, off = 0;
                unsigned long long ino;
                long long ct;
                if (sscanf(p, "%d %llu %lld %n", &view, &ino, &ct, &off) == 3 && off > 0)
                        fn(ctx, view, ino, ct, p + off);
                p = nl + 1;
        }
}

static void snap_add(void *ctx, int view, unsigned long long ino, long long ct, char *path)
{
        struct walk *w = ctx;
        if (view >= 0 && (size_t)view < NVIEWS)
                w->s[w->ns++] = (struct snap){view, ino, ct, path, false};
}

/* Parse the snapshot text in place (lines end with NUL afterwards). */
static int snap_parse(struct walk *w, char *text, size_t len)
{
        size_t lines = layerdiff_snapshot_lines(text, len);
        w->s = calloc(lines ? lines : 1, sizeof(*w->s));
        if (!w->s)
                return -ENOMEM;
        layerdiff_snapshot_each(text, len, snap_add, w);
        qsort(w->s, w->ns, sizeof(*w->s), snap_cmp);
        return 0;
}

static struct snap *snap_find(struct walk *w, int view, const char *path)
{
        struct snap key = {.view = view, .path = path};
        return bsearch(&key, w->s, w->ns, sizeof(*w->s), snap_cmp);
}

/* ---- an overlay upper against its lowers ---- */

static bool is_whiteout(const struct stat *st)
{
        return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static bool is_opaque(int dirfd)
{
        char v[4] = "";
        return fgetxattr(dirfd, "user.overlay.opaque", v, sizeof(v) - 1) > 0 && v[0] == 'y';
}

/*
 * Whether the merged lowers show rel (relative, "" for their root), as overlayfs looks up: a
 * layer at a time from the top, one component at a time without following links; a whiteout
 * hides it, as does a non-directory or an opaque directory above it in a higher layer.
 */
static bool lower_has(const struct walk *w, const char *rel)
{
        if (!rel[0])
                return true;
        for (size_t i = 0; i < w->n_lower; i++) {
                int dfd = fcntl(w->lower[i], F_DUPFD_CLOEXEC, 3);
                bool opaque = false;
                const char *p = rel;
                while (dfd >= 0) {
                        size_t len = strcspn(p, "/");
                        char name[NAME_MAX + 1];
                        struct stat st;
                        snprintf(name, sizeof(name), "%.*s", (int)len, p);
                        bool last = p[len] == '\0';
                        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                break; /* not in this layer: below, unless opaque above */
                        if (is_whiteout(&st) || (!last && !S_ISDIR(st.st_mode))) {
                                close(dfd);
                                return false;
                        }
                        if (last) {
                                close(dfd);
                                return true;
                        }
                        int sub =
                            openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        close(dfd);
                        dfd = sub;
                        opaque |= dfd >= 0 && is_opaque(dfd);
                        p += len + 1;
                }
                if (dfd >= 0)
                        close(dfd);
                if (opaque)
                        return false;
        }
        return false;
}

/* rel relative to the lowers from a session path ("/usr/x" -> "x" for /usr's). */
static const char *lower_rel(const struct walk *w, const char *path)
{
        const char *rel = path + strlen(w->lower_prefix);
        return rel[0] == '/' ? rel + 1 : rel;
}

/* An opaque directory of the upper at path (open as dfd): what the lowers had below it is
 * deleted, except what the upper has again. */
static int opaque_deletions(struct walk *w, int dfd, const char *path)
{
        const char *rel = lower_rel(w, path);
        _cleanup_buf_ struct buf p = {0};
        for (size_t i = 0; i < w->n_lower; i++) {
                _cleanup_close_ int lfd =
                    rel[0]
                        ? openat(w->lower[i], rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                        : openat(w->lower[i], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (lfd < 0)
                        continue;
                _cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(lfd));
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        struct stat st;
                        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                            fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                                continue;
                        p.len = 0;
                        if (buf_printf(&p, "%s/%s", path, de->d_name) < 0)
                                return -ENOMEM;
                        if (lower_has(w, lower_rel(w, p.data)) && add_change(w, 'D', p.data) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* One entry of an upper that the snapshot does not explain: a whiteout is a deletion; an entry
 * the lowers show is a change, else an addition. */
static int upper_visit(struct walk *w, int view, const char *path, const struct stat *st, int dfd,
                       const char *name)
{
        (void)view;
        if (is_whiteout(st))
                return add_change(w, 'D', path) < 0 ? -ENOMEM : 0;
        bool had = lower_has(w, lower_rel(w, path));
        if (add_change(w, had ? 'C' : 'A', path) < 0)
                return -ENOMEM;
        if (!S_ISDIR(st->st_mode) || !had || dfd < 0)
                return 1;
        _cleanup_close_ int fd = open_dir(dfd, name, w->dev);
        if (fd >= 0 && is_opaque(fd))
                return opaque_deletions(w, fd, path) < 0 ? -ENOMEM : 1;
        return 1;
}

/* The snapshot's views: what it has unchanged is not listed; the rest of an overlay root
 * (view 0 of ovl_views) is read against the lowers, the rest of a plain directory is new. */
static int base_visit(struct walk *w, int view, const char *path, const struct stat *st, int dfd,
                      const char *name)
{
        struct snap *s = snap_find(w, view, path);
        if (s)
                s->seen = true;
        bool same = s && s->ino == st->st_ino && s->ctime_ns == ctime_ns(st);
        if (same)
                return 1;
        if (view == 0 && w->views == ovl_views && path[0])
                return upper_visit(w, view, path, st, dfd, name);
        return add_change(w, s ? 'C' : 'A', path) < 0 ? -ENOMEM : 1;
}

static int change_cmp(const void *a, const void *b)
{
        const struct change *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : x->kind - y->kind;
}

static void walk_free(struct walk *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->v[i].path);
        free(w->v);
        free(w->s);
}

static int run_views(struct walk *w, int layer_fd)
{
        int r = 0;
        for (size_t i = 0; r == 0 && i < NVIEWS; i++) {
                int fd = open_dir(layer_fd, w->views[i].dir, w->dev);
                if (fd < 0)
                        return fd;
                struct stat st;
                if (fstat(fd, &st) == 0 &&
                    (r = base_visit(w, (int)i, w->views[i].prefix, &st, -1, NULL)) < 0) {
                        close(fd);
                        return r;
                }
                _cleanup_buf_ struct buf path = {0};
                if (buf_puts(&path, w->views[i].prefix) < 0) {
                        close(fd);
                        return -ENOMEM;
                }
                r = walk_dir(w, (int)i, fd, &path, 0, base_visit);
        }
        /* what the snapshot had and the layer has no more */
        for (size_t i = 0; r == 0 && i < w->ns; i++)
                if (!w->s[i].seen)
                        r = add_change(w, 'D',
                                       w->views[w->s[i].view].prefix[0] || w->s[i].path[0]
                                           ? w->s[i].path
                                           : "/");
        if (r < 0 || (w->views == ovl_views && !w->usr_lower))
                return r;
        /* a host base's /usr: the overlay upper upper/usr over the host's /usr (and, for an
         * image committed from a host base, under its layers' usr/) */
        if (w->usr_lower) {
                w->lower = w->usr_lower;
                w->n_lower = w->n_usr_lower;
                w->lower_prefix = "/usr";
        }
        int ufd = open_dir(layer_fd, "upper/usr", w->dev);
        if (ufd < 0)
                return ufd;
        _cleanup_buf_ struct buf path = {0};
        if (buf_puts(&path, "/usr") < 0) {
                close(ufd);
                return -ENOMEM;
        }
        return walk_dir(w, 0, ufd, &path, 0, upper_visit);
}

int layerdiff_run(int layer_fd, const char *snapshot, size_t len, const int *lower, size_t n_lower,
                  const int *usr_lower, size_t n_usr_lower, struct buf *out, bool *truncated)
{
        struct walk w = {
            .lower = lower, .n_lower = n_lower, .usr_lower = usr_lower, .n_usr_lower = n_usr_lower};
        w.views = layerdiff_overlay_root(layer_fd) ? ovl_views : host_views;
        w.lower_prefix = w.views == ovl_views ? "" : "/usr";
        _cleanup_free_ char *text = malloc(len + 1);
        if (!text)
                return -ENOMEM;
        memcpy(text, snapshot, len);
        text[len] = '\0';
        int r = layer_dev(layer_fd, &w.dev);
        if (r == 0)
                r = snap_parse(&w, text, len);
        if (r == 0)
                r = run_views(&w, layer_fd);
        if (r == 0) {
                qsort(w.v, w.n, sizeof(*w.v), change_cmp);
                /* "/" itself is not listed (as docker diff): it is the base */
                for (size_t i = 0; r == 0 && i < w.n; i++)
                        if (strcmp(w.v[i].path, "/") != 0 &&
                            (i == 0 || strcmp(w.v[i].path, w.v[i - 1].path) != 0))
                                r = buf_printf(out, "%c %s", w.v[i].kind, w.v[i].path) < 0 ||
                                            buf_append(out, "", 1) < 0
                                        ? -ENOMEM
                                        : 0;
                *truncated = w.truncated;
        }
        walk_free(&w);
        return r;
}
