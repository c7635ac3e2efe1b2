/* SPDX-License-Identifier: MIT */
/*
 * Unpacking one layer into the store, safe against hostile archives (docs/DESIGN.md,
 * "Images"). Every file operation is relative to a directory fd below the layer's root,
 * reached one component at a time with O_NOFOLLOW: an entry can never be written through a
 * symlink, '..' is refused, absolute names are taken relative to the layer, hard links must
 * name a regular file of the same layer. Device nodes and sockets are dropped, setuid/setgid
 * bits stripped, no extended attribute of the archive is restored. Sizes and entry counts are
 * bounded (IMAGE_MAX_*), counting the logical size of sparse entries. OCI whiteouts become
 * overlayfs whiteouts: `.wh.NAME` a 0/0 character device (creating one needs no privilege
 * since Linux 5.8), `.wh..wh..opq` the xattr user.overlay.opaque=y that overlayfs reads with
 * `userxattr`, the option every session's overlay is mounted with.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/syscalls.h"
#include "archive_lib.h"
#include "image-internal.h"

#define WHITEOUT_PREFIX ".wh."
#define WHITEOUT_OPAQUE ".wh..wh..opq"

struct reader {
        const struct archive_lib *la;
        int fd;
        char what[160]; /* "unpacking <what>", for the progress callback */
        const struct unpack_budget *b;
        uint64_t done, total;
        struct sha256_ctx sha;
        uint8_t buf[1 << 16];
};

/* libarchive reads the blob through here, so the digest is of exactly the bytes unpacked. */
static la_ssize_t read_hashed(struct archive *a, void *data, const void **ret)
{
        struct reader *r = data;
        for (;;) {
                ssize_t n = read(r->fd, r->buf, sizeof(r->buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r->la->set_error(a, errno, "read failed");
                        return -1;
                }
                sha256_update(&r->sha, (size_t)n, r->buf);
                r->done += (uint64_t)n;
                if (r->b->progress && n > 0)
                        r->b->progress(r->b->progress_arg, r->what, r->done,
                                       r->total > r->done ? r->total : r->done);
                *ret = r->buf;
                return n;
        }
}

struct unpacker {
        const struct archive_lib *la;
        int rootfd;
        const char *what;
        struct unpack_budget *b;
        struct sbx_error *e;
        bool chown; /* as root: keep the archive's owners */
        /* the last parent directory, reused while entries stay in it */
        char parent[PATH_MAX];
        int parentfd;
        bool parent_stale;
};

static int bad_entry(struct unpacker *u, const char *path, const char *why)
{
        return sbx_fail(u->e, EXIT_USAGE, "usage", 0, "invalid image: %s: entry '%.200s' %s",
                        u->what, path, why);
}

/*
 * Normalise an entry name: leading '/' and "./" dropped (names are relative to the layer),
 * empty and "." components dropped; ".." or an over-long component refused. "" is the root.
 */
int unpack_clean_path(const char *in, char *out, size_t n)
{
        size_t o = 0;
        const char *p = in;
        while (*p) {
                while (*p == '/')
                        p++;
                const char *end = strchrnul(p, '/');
                size_t len = (size_t)(end - p);
                if (len == 0)
                        break;
                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return -EPERM;
                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                if (!(len == 1 && p[0] == '.')) {
                        if (o + len + 2 > n)
                                return -ENAMETOOLONG;
                        if (o)
                                out[o++] = '/';
                        memcpy(out + o, p, len);
                        o += len;
                }
                p = end;
        }
        out[o] = '\0';
        return 0;
}

/* Open (creating missing directories when create) the directory `path` below the root,
 * one component at a time, never following a symlink. */
static int open_dir_beneath(int rootfd, const char *path, bool create)
{
        /* In one call where the kernel can (a layer of entries alternating between two deep
         * directories cost a walk of every component for each entry: minutes under the store
         * lock); the walk below creates what is missing, and serves older kernels. */
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
        int fast = *path ? sys_openat2(rootfd, path, &how) : -1;
        if (fast >= 0)
                return fast;
        if (*path && (errno == ELOOP || errno == ENOTDIR || errno == EXDEV))
                return errno == EXDEV ? -ELOOP : -errno;
        _cleanup_close_ int cur = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0)
                return -errno;
        char copy[PATH_MAX];
        snprintf(copy, sizeof(copy), "%s", path);
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int fd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT && create) {
                        if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        fd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (fd < 0)
                        return -errno;
                closep(&cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}

static int get_parent(struct unpacker *u, const char *parent, const char *path, bool create)
{
        if (u->parentfd >= 0 && !u->parent_stale && strcmp(u->parent, parent) == 0)
                return u->parentfd;
        u->parent_stale = false;
        closep(&u->parentfd);
        int fd = open_dir_beneath(u->rootfd, parent, create);
        if (fd == -ELOOP || fd == -ENOTDIR)
                return bad_entry(u, path, "goes through a symlink or a non-directory");
        if (fd < 0)
                return sbx_internal(u->e, -fd, "failed to unpack '%.200s' of %s", path, u->what);
        snprintf(u->parent, sizeof(u->parent), "%s", parent);
        u->parentfd = fd;
        return fd;
}

/* Make room for a new entry `name`: remove what this layer already has there. */
static int clear_name(int dirfd, const char *name)
{
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno == EISDIR || errno == EPERM) {
                struct stat st;
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                        return store_rmtree(dirfd, name);
        }
        return -errno;
}

static mode_t safe_mode(mode_t m, bool dir)
{
        /* setuid and setgid never come from an image; the sticky bit only on directories */
        return m & (dir ? 01777 : 0777);
}

/* Owners stay in 0..65535, the ids a session maps by default; others become nobody. */
static unsigned bounded_id(la_int64_t id)
{
        return id < 0 || id > 65535 ? 65534u : (unsigned)id;
}

static int set_owner(struct unpacker *u, int dirfd, const char *name, struct archive_entry *en)
{
        const struct archive_lib *la = u->la;
        if (!u->chown)
                return 0;
        if (fchownat(dirfd, name, bounded_id(la->entry_uid(en)), bounded_id(la->entry_gid(en)),
                     AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/* Whether n bytes at p are all zero. */
static int check_free_space(struct unpacker *u, int fd, const char *path)
{
        uint64_t reserve = 0;
        int r = store_space_check(fd, &reserve);
        if (r == 0)
                return 0;
        if (r != -ENOSPC)
                return sbx_internal(u->e, -r, "failed to check the free space for '%.200s' of %s",
                                    path, u->what);
        return sbx_fail(u->e, EXIT_FAILED, "limit", 0,
                        "image too large for the store: '%.200s' of %s would leave less than %llu "
                        "MiB free on its filesystem",
                        path, u->what, (unsigned long long)(reserve >> 20));
}

/* Write size bytes at off, leaving every all-zero 4 KiB block a hole: the file is new, so a
 * hole reads as the zeros it stands for, and an archive of zeros costs no disk. */
static int write_sparse(struct unpacker *u, int fd, const char *p, size_t size, int64_t off,
                        const char *path)
{
        const size_t block = 4096;
        while (size) {
                size_t n = size < block ? size : block;
                if (store_all_zero(p, n)) {
                        p += n;
                        size -= n;
                        off += (int64_t)n;
                        continue;
                }
                /* a run of data blocks in one write */
                while (n < size) {
                        size_t next = size - n < block ? size - n : block;
                        if (store_all_zero(p + n, next))
                                break;
                        n += next;
                }
                if ((u->b->written += n) >= STORE_CHECK_EVERY) {
                        u->b->written = 0;
                        int r = check_free_space(u, fd, path);
                        if (r < 0)
                                return r;
                }
                while (n) {
                        ssize_t w = pwrite(fd, p, n, off);
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w <= 0)
                                return sbx_internal(u->e, errno, "failed to write '%.200s' of %s",
                                                    path, u->what);
                        p += w;
                        n -= (size_t)w;
                        size -= (size_t)w;
                        off += w;
                }
        }
        return 0;
}

static int write_data(struct unpacker *u, struct archive *a, int fd, int64_t entry_size,
                      const char *path)
{
        const struct archive_lib *la = u->la;
        const void *buf;
        size_t size;
        la_int64_t off;
        int r;
        while ((r = la->read_data_block(a, &buf, &size, &off)) == ARCHIVE_OK) {
                /* a sparse map must stay within the size that was counted against the bound */
                if (off < 0 || (uint64_t)off > (uint64_t)entry_size ||
                    size > (uint64_t)entry_size - (uint64_t)off)
                        return bad_entry(u, path, "has data beyond its size");
                int w = write_sparse(u, fd, buf, size, off, path);
                if (w < 0)
                        return w;
        }
        if (r != ARCHIVE_EOF)
                return bad_entry(u, path,
                                 la->error_string(a) ? la->error_string(a) : "is truncated");
        return 0;
}

static int unpack_file(struct unpacker *u, struct archive *a, struct archive_entry *en, int dirfd,
                       const char *name, const char *path)
{
        const struct archive_lib *la = u->la;
        _cleanup_close_ int fd =
            openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return sbx_internal(u->e, errno, "failed to create '%.200s' of %s", path, u->what);
        int r = write_data(u, a, fd, la->entry_size(en), path);
        if (r < 0)
                return r;
        /* trailing holes of a sparse entry */
        if (ftruncate(fd, la->entry_size(en)) < 0)
                return sbx_internal(u->e, errno, "failed to size '%.200s' of %s", path, u->what);
        if (u->chown &&
            fchown(fd, bounded_id(la->entry_uid(en)), bounded_id(la->entry_gid(en))) < 0)
                return sbx_internal(u->e, errno, "failed to chown '%.200s' of %s", path, u->what);
        if (fchmod(fd, safe_mode(la->entry_perm(en), false)) < 0)
                return sbx_internal(u->e, errno, "failed to chmod '%.200s' of %s", path, u->what);
        struct timespec ts[2] = {{.tv_sec = la->entry_mtime(en)}, {.tv_sec = la->entry_mtime(en)}};
        (void)futimens(fd, ts);
        return 0;
}

static int unpack_dir(struct unpacker *u, struct archive_entry *en, int dirfd, const char *name,
                      const char *path)
{
        const struct archive_lib *la = u->la;
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
            clear_name(dirfd, name) < 0)
                return sbx_internal(u->e, errno, "failed to replace '%.200s' of %s", path, u->what);
        if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
                return sbx_internal(u->e, errno, "failed to create '%.200s' of %s", path, u->what);
        /* Without root's DAC override a 0555 directory (Fedora's /usr/bin) could not be
         * filled by the entries that follow it: a user's layers keep u+rwx on directories. */
        mode_t mode = safe_mode(la->entry_perm(en), true) | (u->chown ? 0 : 0700);
        if (fchmodat(dirfd, name, mode, 0) < 0 || set_owner(u, dirfd, name, en) < 0)
                return sbx_internal(u->e, errno, "failed to set up '%.200s' of %s", path, u->what);
        return 0;
}

static int unpack_hardlink(struct unpacker *u, struct archive_entry *en, int dirfd,
                           const char *name, const char *path)
{
        const struct archive_lib *la = u->la;
        char target[PATH_MAX];
        if (unpack_clean_path(la->entry_hardlink(en), target, sizeof(target)) < 0 || !target[0])
                return bad_entry(u, path, "is a hard link outside the layer");
        char *slash = strrchr(target, '/');
        const char *tname = slash ? slash + 1 : target;
        if (slash)
                *slash = '\0';
        _cleanup_close_ int tdir = open_dir_beneath(u->rootfd, slash ? target : "", false);
        struct stat st;
        if (tdir < 0 || fstatat(tdir, tname, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return bad_entry(u, path,
                                 "is a hard link to something that is not a regular "
                                 "file of the same layer");
        if (linkat(tdir, tname, dirfd, name, 0) < 0)
                return sbx_internal(u->e, errno, "failed to link '%.200s' of %s", path, u->what);
        return 0;
}

static int unpack_whiteout(struct unpacker *u, int dirfd, const char *name, const char *path)
{
        if (strcmp(name, WHITEOUT_OPAQUE) == 0) {
                if (fsetxattr(dirfd, "user.overlay.opaque", "y", 1, 0) < 0)
                        return sbx_unsupported(u->e, errno,
                                               "failed to mark '%.200s' of %s opaque (the image "
                                               "store's filesystem needs user xattrs)",
                                               path, u->what);
                return 0;
        }
        const char *hidden = name + strlen(WHITEOUT_PREFIX);
        if (!hidden[0] || strcmp(hidden, ".") == 0 || strcmp(hidden, "..") == 0)
                return bad_entry(u, path, "is a malformed whiteout");
        if (clear_name(dirfd, hidden) < 0)
                return sbx_internal(u->e, errno, "failed to apply whiteout '%.200s' of %s", path,
                                    u->what);
        if (mknodat(dirfd, hidden, S_IFCHR | 0, makedev(0, 0)) < 0)
                return sbx_unsupported(
                    u->e, errno, "failed to create the whiteout for '%.200s' of %s", path, u->what);
        return 0;
}

static int unpack_entry(struct unpacker *u, struct archive *a, struct archive_entry *en)
{
        const struct archive_lib *la = u->la;
        const char *raw = la->entry_pathname(en);
        if (!raw)
                return bad_entry(u, "?", "has no name");
        char path[PATH_MAX];
        int r = unpack_clean_path(raw, path, sizeof(path));
        if (r == -EPERM)
                return bad_entry(u, raw, "contains '..'");
        if (r < 0) /* sbx's bound (PATH_MAX), not a malformed image: a session's commit hits it */
                return sbx_fail(u->e, EXIT_FAILED, "limit", 0,
                                "image too large: %s: entry '%.200s' has a name too long (a "
                                "component over %d or a path over %zu bytes)",
                                u->what, raw, NAME_MAX, sizeof(path) - 1);

        if (++u->b->entries > IMAGE_MAX_ENTRIES)
                return sbx_fail(u->e, EXIT_FAILED, "limit", 0,
                                "image too large: more than %u entries (the bound of one import)",
                                IMAGE_MAX_ENTRIES);
        int64_t size = la->entry_size(en);
        if (size < 0 || (uint64_t)size > u->b->max_bytes - u->b->bytes)
                return sbx_fail(u->e, EXIT_FAILED, "limit", 0,
                                "image too large: entry '%.200s' of %s would unpack beyond %llu "
                                "MiB (the bound of one import: SBX_IMAGE_MAX_SIZE)",
                                path, u->what, (unsigned long long)(u->b->max_bytes >> 20));
        u->b->bytes += (uint64_t)size;

        mode_t type = la->entry_filetype(en);
        if (!path[0]) { /* the layer's root itself */
                if (type != AE_IFDIR)
                        return bad_entry(u, raw, "replaces the root with a non-directory");
                if (fchmod(u->rootfd, safe_mode(la->entry_perm(en), true) | (u->chown ? 0 : 0700)) <
                    0)
                        return sbx_internal(u->e, errno, "failed to set up the root of %s",
                                            u->what);
                return 0;
        }
        char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        char parent[PATH_MAX];
        snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - path) : 0, path);
        int dirfd = get_parent(u, parent, path, true);
        if (dirfd < 0)
                return dirfd;

        /* An entry that is not a regular file may replace a directory that is cached as the
         * parent: look parents up afresh after it (the cached fd never follows a symlink,
         * but it may name a directory that is gone). */
        if (type != AE_IFREG)
                u->parent_stale = true;
        if (strncmp(name, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX)) == 0)
                return unpack_whiteout(u, dirfd, name, path);
        if (type == AE_IFDIR)
                return unpack_dir(u, en, dirfd, name, path);
        if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK) {
                u->b->skipped++;
                return 0;
        }
        if (clear_name(dirfd, name) < 0)
                return sbx_internal(u->e, errno, "failed to replace '%.200s' of %s", path, u->what);
        if (la->entry_hardlink(en))
                return unpack_hardlink(u, en, dirfd, name, path);
        switch (type) {
        case AE_IFREG:
                return unpack_file(u, a, en, dirfd, name, path);
        case AE_IFLNK:
                /* stored as is: it is only ever resolved inside a session's own root */
                if (!la->entry_symlink(en) || symlinkat(la->entry_symlink(en), dirfd, name) < 0)
                        return sbx_internal(u->e, errno, "failed to create '%.200s' of %s", path,
                                            u->what);
                break;
        case AE_IFIFO:
                if (mknodat(dirfd, name, S_IFIFO | safe_mode(la->entry_perm(en), false), 0) < 0)
                        return sbx_internal(u->e, errno, "failed to create '%.200s' of %s", path,
                                            u->what);
                break;
        default:
                return bad_entry(u, path, "has an unknown type");
        }
        if (set_owner(u, dirfd, name, en) < 0)
                return sbx_internal(u->e, errno, "failed to chown '%.200s' of %s", path, u->what);
        return 0;
}

int layer_unpack(int blobfd, int destfd, const char *what, const char *expect,
                 char got[static DIGEST_HEX_LEN + 1], struct unpack_budget *b, struct sbx_error *e)
{
        const struct archive_lib *la;
        _cleanup_(archive_lib_freep) struct archive *a = archive_lib_reader(&la, e);
        if (!a)
                return -EIO; /* *e says why */
        _cleanup_free_ struct reader *rd = malloc(sizeof(*rd));
        if (!rd)
                return sbx_internal(e, ENOMEM, "out of memory");
        rd->la = la;
        rd->fd = blobfd;
        snprintf(rd->what, sizeof(rd->what), "unpacking %s", what);
        rd->b = b;
        rd->done = 0;
        struct stat bst;
        rd->total = fstat(blobfd, &bst) == 0 && S_ISREG(bst.st_mode) ? (uint64_t)bst.st_size : 0;
        sha256_init(&rd->sha);
        if (la->read_open(a, rd, NULL, read_hashed, NULL) != ARCHIVE_OK)
                return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                "invalid image: %s is not a tar archive (%s)", what,
                                la->error_string(a) ? la->error_string(a) : "?");
        struct unpacker u = {.la = la,
                             .rootfd = destfd,
                             .what = what,
                             .b = b,
                             .e = e,
                             .chown = geteuid() == 0,
                             .parentfd = -1};
        struct archive_entry *en;
        int r = 0, ar;
        while (r == 0 && (ar = la->read_next_header(a, &en)) != ARCHIVE_EOF) {
                if (ar != ARCHIVE_OK && ar != ARCHIVE_WARN) {
                        r = sbx_fail(e, EXIT_USAGE, "usage", 0, "invalid image: %s: %s", what,
                                     la->error_string(a) ? la->error_string(a)
                                                         : "unreadable archive");
                        break;
                }
                r = unpack_entry(&u, a, en);
        }
        closep(&u.parentfd);
        if (r < 0)
                return r;
        /* Whatever follows the end-of-archive blocks is part of the blob too. */
        const void *ignored;
        while (read_hashed(a, rd, &ignored) > 0)
                ;
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_digest(&rd->sha, sizeof(d), d);
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < sizeof(d); i++) {
                got[2 * i] = hex[d[i] >> 4];
                got[2 * i + 1] = hex[d[i] & 15];
        }
        got[DIGEST_HEX_LEN] = '\0';
        if (expect && strcmp(expect, got) != 0)
                return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                "invalid image: %s does not match its digest (sha256:%s)", what,
                                got);
        return 0;
}
