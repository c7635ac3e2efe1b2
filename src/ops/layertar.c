/* SPDX-License-Identifier: MIT */
#include "layertar.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "layerdiff.h"

#include "shared/buf.h"
#include "shared/macros.h"
#include "shared/util.h"

#define MAX_DEPTH 256
#define BLOCK 512

/* The paths of a host base's snapshot (view 0, newroot/), sorted: sbx's own entries. */
struct snapset {
        struct snapent {
                unsigned long long ino;
                const char *path; /* "/etc/hosts", into the parsed text */
        } * v;
        size_t n;
};

struct tw {
        int out;
        dev_t dev;
        const struct layertar_opts *o;
        struct layertar_stats *st;
        struct sbx_error *e;
        /* a host base's root, read against the snapshot (NULL: every entry is the session's) */
        const struct snapset *snap;
        /* newroot/, a plain directory, not an overlay upper: a 0/0 device is a device and
         * user.overlay.* means nothing */
        bool plain;
};

static uint32_t map_id(const struct tw *w, uint32_t host)
{
        if (host >= w->o->uid_start && host - w->o->uid_start < w->o->uid_count)
                return host - w->o->uid_start;
        return 65534;
}

/* n-1 octal digits and a NUL (the callers' values fit: ids, sizes below 8 GiB, times) */
static void octal(char *field, size_t n, uint64_t v)
{
        field[n - 1] = '\0';
        for (size_t i = n - 1; i-- > 0; v >>= 3)
                field[i] = (char)('0' + (v & 7));
}

/* A PAX record "LEN key=value\n", LEN counting itself. */
static int pax_record(struct buf *b, const char *key, const char *value)
{
        size_t body = strlen(key) + strlen(value) + 3; /* ' ', '=', '\n' */
        size_t len = body + 1;
        while (len != body + (size_t)snprintf(NULL, 0, "%zu", len))
                len = body + (size_t)snprintf(NULL, 0, "%zu", len);
        return buf_printf(b, "%zu %s=%s\n", len, key, value);
}

static int write_padded(struct tw *w, const void *p, size_t n)
{
        static const char zero[BLOCK];
        int r = write_all(w->out, p, n);
        if (r == 0 && n % BLOCK)
                r = write_all(w->out, zero, BLOCK - n % BLOCK);
        return r;
}

/* One ustar header block: the fields, the magic and the checksum (name and link cut at 100). */
static void ustar_block(char h[BLOCK], const char *name, unsigned mode, uint64_t uid, uint64_t gid,
                        uint64_t size, uint64_t mtime, char type, const char *link)
{
        memset(h, 0, BLOCK);
        snprintf(h, 100, "%s", name);
        octal(h + 100, 8, mode);
        octal(h + 108, 8, uid);
        octal(h + 116, 8, gid);
        octal(h + 124, 12, size);
        octal(h + 136, 12, mtime);
        h[156] = type;
        /* ustar's fixed-width fields: linkname needs no NUL at its full 100 bytes (the header is
         * zeroed, so a shorter one has it), the version is "00" without one */
        if (link)
                /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
                memcpy(h + 157, link, strlen(link) > 100 ? 100 : strlen(link));
        memcpy(h + 257, "ustar", 6);
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        memcpy(h + 263, "00", 2);
        memset(h + 148, ' ', 8);
        unsigned sum = 0;
        for (size_t i = 0; i < BLOCK; i++)
                sum += (unsigned char)h[i];
        octal(h + 148, 7, sum);
}

static int header(struct tw *w, const char *name, char type, mode_t mode, const struct stat *st,
                  uint64_t size, const char *link)
{
        char h[BLOCK];
        _cleanup_buf_ struct buf pax = {0};
        bool long_name = strlen(name) > 99, long_link = link && strlen(link) > 99;
        bool big = size >= (UINT64_C(1) << 33);
        char num[32];
        int r = 0;
        if (long_name)
                r = pax_record(&pax, "path", name);
        if (r == 0 && long_link)
                r = pax_record(&pax, "linkpath", link);
        if (r == 0 && big && snprintf(num, sizeof(num), "%llu", (unsigned long long)size) > 0)
                r = pax_record(&pax, "size", num);
        if (r < 0)
                return -ENOMEM;
        if (pax.len) {
                char x[BLOCK], xname[100];
                snprintf(xname, sizeof(xname), "PaxHeaders/%.80s", name);
                ustar_block(x, xname, 0644, 0, 0, pax.len, 0, 'x', NULL);
                if ((r = write_all(w->out, x, BLOCK)) < 0 ||
                    (r = write_padded(w, pax.data, pax.len)) < 0)
                        return r;
        }
        /* name and link cut when long: the PAX records win */
        ustar_block(h, name, mode & 07777, map_id(w, st->st_uid), map_id(w, st->st_gid),
                    big ? 0 : size, st->st_mtim.tv_sec > 0 ? (uint64_t)st->st_mtim.tv_sec : 0, type,
                    link);
        return write_all(w->out, h, BLOCK);
}

static int count(struct tw *w, uint64_t bytes)
{
        w->st->entries++;
        w->st->bytes += bytes + BLOCK; /* a header block each: an empty-file flood counts too */
        if (w->st->bytes > w->o->max_bytes || w->st->entries > w->o->max_entries)
                return sbx_fail(w->e, EXIT_FAILED, "limit", 0,
                                "the layer is larger than the session's disk limit (%llu bytes, "
                                "%llu entries)",
                                (unsigned long long)w->o->max_bytes,
                                (unsigned long long)w->o->max_entries);
        return 0;
}

/* A regular file: opened without following, the same inode as walked, written in full
 * (holes as zeros, counted); a file that shrank meanwhile is padded, one that grew cut. */
static int put_file(struct tw *w, int dfd, const char *dname, const char *path,
                    const struct stat *seen)
{
        _cleanup_close_ int fd =
            openat(dfd, dname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != seen->st_ino || !S_ISREG(st.st_mode))
                return 0; /* changed meanwhile: left out (use --pause for a still snapshot) */
        uint64_t size = (uint64_t)st.st_size;
        int r = count(w, size);
        if (r == 0)
                r = header(w, path, '0', st.st_mode & 0777, &st, size, NULL);
        char buf[1 << 16];
        for (uint64_t done = 0; r == 0 && done < size;) {
                size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
                ssize_t n = pread(fd, buf, want, (off_t)done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        memset(buf, 0, want);
                        n = (ssize_t)want;
                }
                r = write_all(w->out, buf, (size_t)n);
                done += (uint64_t)n;
        }
        static const char zero[BLOCK];
        if (r == 0 && size % BLOCK)
                r = write_all(w->out, zero, BLOCK - size % BLOCK);
        return r < 0 && !w->e->exit_code ? sbx_internal(w->e, -r, "failed to write the layer") : r;
}

static int put_empty(struct tw *w, const char *path, const struct stat *st)
{
        int r = count(w, 0);
        if (r == 0 && (r = header(w, path, '0', 0644, st, 0, NULL)) < 0)
                return sbx_internal(w->e, -r, "failed to write the layer");
        return r;
}

static int walk(struct tw *w, int dfd, struct buf *path, int depth);

enum { PICK_PUT, PICK_SKIP, PICK_DESCEND };

/* A host base's mount points and scratch directories: what a session has there is its own
 * (/tmp, /workspace, /run, /var/tmp), the kernel's (/proc, /sys, /dev), the host's /usr, whose
 * changes are the /usr overlay's upper, walked on its own, or /etc: generated afresh for every
 * session (its files are written with O_EXCL and must win), so never committed. */
static const char *const host_skip[] = {"/usr", "/proc", "/sys",     "/dev",      "/run",
                                        "/tmp", "/etc",  "/var/tmp", "/workspace"};

static int snapent_cmp(const void *a, const void *b)
{
        return strcmp(((const struct snapent *)a)->path, ((const struct snapent *)b)->path);
}

/* An entry of a host base's newroot/: an entry the snapshot has is sbx's own (its generated
 * /etc, its /bin links, the empty directories it made), left out; a directory of sbx's that is
 * still the one it made is walked for what the session put in it; the rest is the session's. */
static int host_pick(struct tw *w, const struct buf *dir, const char *name, const struct stat *st)
{
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s%s/%s", dir->len ? "/" : "", dir->len ? dir->data : "", name) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < ARRAY_SIZE(host_skip); i++)
                if (strcmp(p, host_skip[i]) == 0)
                        return PICK_SKIP;
        struct snapent key = {.path = p};
        const struct snapent *s =
            bsearch(&key, w->snap->v, w->snap->n, sizeof(*w->snap->v), snapent_cmp);
        if (!s)
                return PICK_PUT;
        return S_ISDIR(st->st_mode) && s->ino == st->st_ino ? PICK_DESCEND : PICK_SKIP;
}

static int put_entry(struct tw *w, int dfd, const char *dname, struct buf *path, int depth)
{
        struct stat st;
        if (fstatat(dfd, dname, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0; /* gone meanwhile */
        size_t base = path->len;
        bool whiteout = S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
        if (strncmp(dname, ".wh.", 4) == 0) {
                w->st->skipped++; /* would read as a whiteout: the session's own, never ours */
                return 0;
        }
        bool descend_only = false;
        if (w->snap) {
                int pick = host_pick(w, path, dname, &st);
                if (pick < 0)
                        return pick;
                if (pick == PICK_SKIP)
                        return 0;
                descend_only = pick == PICK_DESCEND;
                whiteout = whiteout && !w->plain;
        }
        if (buf_printf(path, "%s%s%s", path->len ? "/" : "", whiteout ? ".wh." : "", dname) < 0)
                return -ENOMEM;
        int r = 0;
        if (whiteout)
                r = put_empty(w, path->data, &st);
        else if (S_ISREG(st.st_mode))
                r = put_file(w, dfd, dname, path->data, &st);
        else if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(dfd, dname, target, sizeof(target) - 1);
                if (n > 0) {
                        target[n] = '\0';
                        r = count(w, (uint64_t)n);
                        if (r == 0 && (r = header(w, path->data, '2', 0777, &st, 0, target)) < 0)
                                r = sbx_internal(w->e, -r, "failed to write the layer");
                }
        } else if (S_ISDIR(st.st_mode)) {
                _cleanup_close_ int sub =
                    openat(dfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                struct stat sst;
                if (sub < 0 || fstat(sub, &sst) < 0 || sst.st_dev != w->dev ||
                    sst.st_ino != st.st_ino)
                        goto out; /* replaced meanwhile, or a mount: left out */
                if (depth >= MAX_DEPTH) {
                        r = sbx_fail(w->e, EXIT_FAILED, "limit", 0,
                                     "the layer is deeper than %d directories", MAX_DEPTH);
                        goto out;
                }
                if (descend_only) { /* sbx's own directory: what the session put in it */
                        r = walk(w, TAKE_FD(sub), path, depth + 1);
                        goto out;
                }
                char v[4] = "";
                r = count(w, 0);
                if (r == 0 && buf_puts(path, "/") < 0)
                        r = -ENOMEM;
                if (r == 0 &&
                    (r = header(w, path->data, '5', sst.st_mode & 01777, &sst, 0, NULL)) < 0)
                        r = sbx_internal(w->e, -r, "failed to write the layer");
                path->len--;
                path->data[path->len] = '\0';
                if (r == 0 && !w->plain &&
                    fgetxattr(sub, "user.overlay.opaque", v, sizeof(v) - 1) > 0 && v[0] == 'y') {
                        size_t here = path->len;
                        if (buf_puts(path, "/.wh..wh..opq") < 0)
                                r = -ENOMEM;
                        if (r == 0)
                                r = put_empty(w, path->data, &sst);
                        path->len = here;
                        path->data[here] = '\0';
                }
                if (r == 0)
                        r = walk(w, TAKE_FD(sub), path, depth + 1);
        } else
                w->st->skipped++; /* devices, fifos, sockets (in newroot/ 0/0 devices too) */
out:
        path->len = base;
        if (path->data)
                path->data[base] = '\0';
        return r;
}

/* The directory open as dfd (taken), in name order (the same tree makes the same tar). */
static int walk(struct tw *w, int dfd, struct buf *path, int depth)
{
        struct dirent **names = NULL;
        _cleanup_close_ int fd = dfd;
        _cleanup_free_ char *self = NULL;
        if (asprintf(&self, "/proc/self/fd/%d", fd) < 0)
                return -ENOMEM;
        int n = scandir(self, &names, NULL, alphasort);
        if (n < 0)
                return sbx_internal(w->e, errno, "failed to read the writable layer");
        int r = 0;
        for (int i = 0; i < n; i++) {
                const char *d = names[i]->d_name;
                if (r == 0 && strcmp(d, ".") != 0 && strcmp(d, "..") != 0)
                        r = put_entry(w, fd, d, path, depth);
                free(names[i]);
        }
        free(names);
        return r == -ENOMEM ? sbx_internal(w->e, ENOMEM, "out of memory") : r;
}

/* The tree open as dfd (taken) at path, then the end of the archive. */
static int layertar_end(struct tw *w, int dfd, struct buf *path)
{
        int r = walk(w, dfd, path, path->len ? 1 : 0);
        static const char end[2 * BLOCK];
        if (r == 0 && (r = write_all(w->out, end, sizeof(end))) < 0)
                r = sbx_internal(w->e, -r, "failed to write the layer");
        return r;
}

static void snapset_add(void *ctx, int view, unsigned long long ino, long long ct, char *path)
{
        struct snapset *set = ctx;
        (void)ct;
        if (view == 0 && path[0] == '/')
                set->v[set->n++] = (struct snapent){ino, path};
}

/* The snapshot's "/" view (lines "0 INO CTIME_NS PATH"), parsed in place. */
static int snapset_parse(char *text, size_t len, struct snapset *set)
{
        size_t lines = layerdiff_snapshot_lines(text, len);
        set->v = calloc(lines ? lines : 1, sizeof(*set->v));
        if (!set->v)
                return -ENOMEM;
        layerdiff_snapshot_each(text, len, snapset_add, set);
        qsort(set->v, set->n, sizeof(*set->v), snapent_cmp);
        return 0;
}

/* A directory of the layer by name, on the layer's file system, never through a symlink. */
static int open_layer_dir(int dfd, const char *name, dev_t dev)
{
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != dev)) {
                close(fd);
                return -EXDEV;
        }
        return fd < 0 ? negerrno() : fd;
}

int layertar_write_host(int layer_fd, const char *snapshot, size_t len, int out_fd,
                        const struct layertar_opts *o, struct layertar_stats *st,
                        struct sbx_error *e)
{
        _cleanup_free_ char *text = malloc(len + 1);
        _cleanup_free_ struct snapent *v = NULL;
        struct snapset set = {0};
        if (!text)
                return sbx_internal(e, ENOMEM, "out of memory");
        memcpy(text, snapshot, len);
        text[len] = '\0';
        int r = snapset_parse(text, len, &set);
        v = set.v; /* NOLINT(clang-analyzer-deadcode.DeadStores): read by v's cleanup */
        if (r < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        if (set.n == 0) /* without it sbx's generated files would read as the session's */
                return sbx_unsupported(e, 0, "the session keeps no record of its generated base");
        struct stat lst;
        if (fstat(layer_fd, &lst) < 0)
                return sbx_internal(e, errno, "failed to open the writable layer");
        struct tw w = {.out = out_fd, .dev = lst.st_dev, .o = o, .st = st, .e = e, .snap = &set};
        _cleanup_buf_ struct buf path = {0};
        /* a session of an image committed from a host base has an overlay root: its upper */
        _cleanup_close_ int up = open_layer_dir(layer_fd, "upper", w.dev);
        int root = up >= 0 ? open_layer_dir(up, "root", w.dev) : up;
        w.plain = root == -ENOENT;
        if (w.plain)
                root = open_layer_dir(layer_fd, "newroot", w.dev);
        if (root < 0)
                return sbx_internal(e, -root, "failed to open the writable layer's root");
        if ((r = walk(&w, root, &path, 0)) < 0)
                return r;
        /* then the /usr overlay's upper, as usr/ (its whiteouts delete host files) */
        int usr = up >= 0 ? open_layer_dir(up, "usr", w.dev) : up;
        struct stat ust;
        if (usr < 0 || fstat(usr, &ust) < 0) {
                if (usr >= 0)
                        close(usr);
                return sbx_internal(e, usr < 0 ? -usr : errno,
                                    "failed to open the writable layer's /usr");
        }
        w.snap = NULL;
        w.plain = false;
        path.len = 0;
        if (buf_puts(&path, "usr") < 0)
                r = -ENOMEM;
        if (r == 0 && (r = count(&w, 0)) == 0 &&
            (r = header(&w, "usr/", '5', ust.st_mode & 01777, &ust, 0, NULL)) < 0)
                r = sbx_internal(e, -r, "failed to write the layer");
        if (r == 0)
                return layertar_end(&w, usr, &path);
        close(usr);
        return r == -ENOMEM ? sbx_internal(e, ENOMEM, "out of memory") : r;
}

int layertar_write(int upper_fd, int out_fd, const struct layertar_opts *o,
                   struct layertar_stats *st, struct sbx_error *e)
{
        struct tw w = {.out = out_fd, .o = o, .st = st, .e = e};
        struct stat sst;
        int dfd = fcntl(upper_fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0 || fstat(dfd, &sst) < 0) {
                if (dfd >= 0)
                        close(dfd);
                return sbx_internal(e, errno, "failed to open the writable layer");
        }
        w.dev = sst.st_dev;
        _cleanup_buf_ struct buf path = {0};
        return layertar_end(&w, dfd, &path);
}
