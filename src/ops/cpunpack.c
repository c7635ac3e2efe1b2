/* SPDX-License-Identifier: MIT */
/*
 * Unpacking a cp stream (cpstream.h). The whole top entry is made under a temporary name of
 * ours in the destination directory (".sbx-cp-<random>", made new), its directories 0700 until
 * the end (nothing else reaches into the half-made tree, and a directory takes its entries
 * whatever its own mode), then renamed to its name without replacing anything. A failure
 * removes the temporary tree, so a failed copy leaves nothing. The signals that would end sbx
 * midway are held back until that is done, so an interrupted copy leaves nothing either: only
 * SIGKILL can leave a ".sbx-cp-*" entry, and never a partial one under the copy's own name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "common.h"
#include "cpstream-internal.h"
#include "cpstream.h"

#define TMP_TRIES 100

/* What ends sbx by default and so would cut a copy short: held back while one is made. */
static const int held_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

struct unpack {
        const char *data;
        size_t len, off;   /* the stream, and where its next record starts */
        const char *dst;   /* as given, for messages */
        bool in_session;   /* no space: the session's disk limit, not the host's disk */
        int pfd;           /* the directory the copy goes in */
        const char *final; /* the top entry's name there at the end */
        char *own_final;   /* final, when it is the stream's own name */
        const char *top;   /* the top entry's name in the stream (top_len bytes) */
        size_t top_len;
        char tmp[32];    /* the top entry's name in pfd meanwhile; "" while none is ours */
        int topfd;       /* a directory top, opened once and checked to be ours; else -1 */
        struct buf dirs; /* the stream offsets of the directories' records */
        uint64_t bytes;  /* the file bytes written */
        mode_t umask;    /* applied to the directories' modes, as mkdir would */
        sigset_t held;
        struct sbx_error *e;
};

/* A relative path of plain components: no "", ".", ".." and not absolute, and no deeper than
 * a packed tree can be (so that its removal, bounded as deep, cannot fail on depth). */
static bool rel_ok(const char *p, size_t n)
{
        if (n == 0 || p[0] == '/' || memchr(p, '\0', n))
                return false;
        unsigned depth = 0;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j < n && p[j] != '/')
                        j++;
                size_t l = j - i;
                if (l == 0 || (l == 1 && p[i] == '.') || (l == 2 && p[i] == '.' && p[i + 1] == '.'))
                        return false;
                i = j + 1;
                if (j == n - 1 || ++depth > CP_MAX_DEPTH + 2)
                        return false; /* trailing slash, or too deep */
        }
        return true;
}

/* The record at u->off into *r and *path (r->path_len bytes, not NUL-terminated, its data
 * after it); u->off moves past it. */
static int next_record(struct unpack *u, struct cp_rec *r, const char **path)
{
        if (u->len - u->off < sizeof(*r))
                return sbx_internal(u->e, 0, "a truncated copy stream");
        memcpy(r, u->data + u->off, sizeof(*r));
        size_t off = u->off + sizeof(*r);
        if (r->path_len > u->len - off || r->data_len > u->len - off - r->path_len ||
            !rel_ok(u->data + off, r->path_len) || !r->type || !strchr("dfl", r->type))
                return sbx_internal(u->e, 0, "a malformed copy stream");
        *path = u->data + off;
        u->off = off + r->path_len + r->data_len;
        return 0;
}

/* Open the directory holding the entry rel (its components are below top_fd), never through
 * a symlink; *ret_name: the last component. */
static int open_parent(int top_fd, char *rel, const char **ret_name)
{
        int fd = fcntl(top_fd, F_DUPFD_CLOEXEC, 3);
        char *comp = rel;
        for (char *s; fd >= 0 && (s = strchr(comp, '/')); comp = s + 1) {
                *s = '\0';
                int sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                *s = '/';
                close(fd);
                fd = sub;
        }
        *ret_name = comp;
        return fd < 0 ? negerrno() : fd;
}

/* A new entry, never through or over anything that exists; a directory is 0700 for now. */
static int create_entry(int pfd, const char *name, const struct cp_rec *r, const char *data)
{
        if (r->type == 'd')
                return mkdirat(pfd, name, 0700) < 0 ? negerrno() : 0;
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

/* The stream's path (n bytes) below the top entry, as made below u->topfd ("" for the top). */
static int sub_path(struct unpack *u, const char *path, size_t n, struct buf *rel)
{
        /* every entry is below the top one: a stream cannot make a second top entry */
        if (n < u->top_len || memcmp(path, u->top, u->top_len) != 0 ||
            (n > u->top_len && (path[u->top_len] != '/' || u->topfd < 0)))
                return sbx_internal(u->e, 0, "a malformed copy stream");
        rel->len = 0;
        size_t skip = n > u->top_len ? u->top_len + 1 : n;
        if (buf_append(rel, path + skip, n - skip) < 0 || buf_puts(rel, "") < 0)
                return ops_oom(u->e);
        return 0;
}

static int exists(struct unpack *u)
{
        return sbx_fail(u->e, EXIT_FAILED, "exists", 0, "cannot copy to '%s': '%s' exists", u->dst,
                        u->final);
}

/* Making the stream's entry path (n bytes) failed with k: said with the name it would have. */
static int entry_failed(struct unpack *u, int k, const char *path, size_t n)
{
        _cleanup_buf_ struct buf name = {0};
        if (buf_puts(&name, u->final) < 0 ||
            buf_append(&name, path + u->top_len, n - u->top_len) < 0)
                return ops_oom(u->e);
        if (k == -EEXIST) /* a stream that names an entry twice */
                return sbx_fail(u->e, EXIT_FAILED, "exists", 0, "cannot copy to '%s': '%s' exists",
                                u->dst, name.data);
        if ((k == -ENOSPC || k == -EDQUOT) && u->in_session)
                return sbx_fail(u->e, EXIT_FAILED, "limit", 0,
                                "cannot copy to '%s': no space left (the disk limit)", u->dst);
        return ops_fail_errno(u->e, -k, "cannot copy to '%s' ('%s')", u->dst, name.data);
}

/* Hold back the signals that end sbx by default, unless ignored or held already (the
 * caller's); *old: the mask to restore. */
static void hold_signals(sigset_t *held, sigset_t *old)
{
        sigemptyset(held);
        (void)sigprocmask(SIG_SETMASK, NULL, old);
        for (size_t i = 0; i < ARRAY_SIZE(held_signals); i++) {
                struct sigaction sa;
                if (sigaction(held_signals[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN &&
                    !sigismember(old, held_signals[i]))
                        sigaddset(held, held_signals[i]);
        }
        (void)sigprocmask(SIG_BLOCK, held, NULL);
}

/* Did one of the held signals come: the copy is to be given up. */
static int check_interrupted(struct unpack *u)
{
        sigset_t pending;
        if (sigpending(&pending) < 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(held_signals); i++)
                if (sigismember(&u->held, held_signals[i]) &&
                    sigismember(&pending, held_signals[i]))
                        return ops_fail_errno(u->e, EINTR, "cannot copy to '%s'", u->dst);
        return 0;
}

/*
 * A directory top, opened once: every later step goes through this fd, never the name again,
 * as a session that can write the destination (one of its volumes) could swap a directory of
 * the host's in for the name (RENAME_EXCHANGE) to have it filled, chmod'ed or removed. Ours is
 * made 01700: a directory owned by us with that mode, and empty, is one the session, which
 * cannot chmod what is not its own, cannot have put there.
 */
static int open_top(struct unpack *u)
{
        _cleanup_close_ int fd =
            openat(u->pfd, u->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return negerrno();
        if (st.st_uid != geteuid() || (st.st_mode & 07777) != 01700 || st.st_nlink != 2)
                return -EBUSY;
        _cleanup_closedir_ DIR *d = ops_dir_read(fd);
        if (!d)
                return -ENOMEM;
        for (struct dirent *de; (de = readdir(d));)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        return -EBUSY;
        u->topfd = TAKE_FD(fd);
        return 0;
}

/* The top entry, new under a temporary name of ours in the destination directory. */
static int create_top(struct unpack *u, const struct cp_rec *r, const char *data)
{
        for (int i = 0; i < TMP_TRIES; i++) {
                uint64_t rnd;
                if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                        return negerrno();
                snprintf(u->tmp, sizeof(u->tmp), ".sbx-cp-%016llx", (unsigned long long)rnd);
                int k = r->type != 'd'                       ? create_entry(u->pfd, u->tmp, r, data)
                        : mkdirat(u->pfd, u->tmp, 01700) < 0 ? negerrno()
                                                             : 0;
                if (k == 0 && r->type == 'd' && (k = open_top(u)) < 0) {
                        u->tmp[0] = '\0'; /* whatever is there now is not known to be ours */
                        return k;
                }
                if (k == 0)
                        return 0;
                u->tmp[0] = '\0';
                if (k != -EEXIST)
                        return k;
        }
        return -EEXIST;
}

/* What a made entry adds: its bytes, or its directory's record to give it its mode. */
static int note_entry(struct unpack *u, const struct cp_rec *r, size_t at)
{
        if (r->type == 'f')
                u->bytes += r->data_len;
        if (r->type == 'd' && buf_append(&u->dirs, &at, sizeof(at)) < 0)
                return ops_oom(u->e);
        return 0;
}

/* Every entry after the top one, below its temporary name. */
static int unpack_rest(struct unpack *u)
{
        _cleanup_buf_ struct buf rel = {0};
        while (u->off < u->len) {
                size_t at = u->off;
                struct cp_rec r;
                const char *path, *name;
                int k = check_interrupted(u);
                if (k < 0 || (k = next_record(u, &r, &path)) < 0 ||
                    (k = sub_path(u, path, r.path_len, &rel)) < 0)
                        return k;
                if (!rel.data[0]) /* the top again */
                        return sbx_internal(u->e, 0, "a malformed copy stream");
                _cleanup_close_ int dfd = open_parent(u->topfd, rel.data, &name);
                k = dfd < 0 ? dfd : create_entry(dfd, name, &r, path + r.path_len);
                if (k < 0)
                        return entry_failed(u, k, path, r.path_len);
                if ((k = note_entry(u, &r, at)) < 0)
                        return k;
        }
        return 0;
}

/* Each directory its own mode (less the umask, as mkdir gives), deepest first: a parent is
 * still 0700, so a child is reached whatever mode it gets. */
static int set_dir_modes(struct unpack *u)
{
        _cleanup_buf_ struct buf rel = {0};
        for (size_t i = u->dirs.len / sizeof(size_t); i-- > 0;) {
                size_t at;
                struct cp_rec r;
                memcpy(&at, u->dirs.data + i * sizeof(at), sizeof(at));
                memcpy(&r, u->data + at, sizeof(r));
                const char *path = u->data + at + sizeof(r), *name;
                int k = sub_path(u, path, r.path_len, &rel);
                if (k < 0)
                        return k;
                mode_t mode = r.mode & 0777 & ~u->umask;
                if (!rel.data[0]) { /* the top, last */
                        if (fchmod(u->topfd, mode) < 0)
                                return entry_failed(u, negerrno(), path, r.path_len);
                        continue;
                }
                _cleanup_close_ int dfd = open_parent(u->topfd, rel.data, &name);
                _cleanup_close_ int fd =
                    dfd < 0 ? -1
                            : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || fchmod(fd, mode) < 0)
                        return entry_failed(u, dfd < 0 ? dfd : negerrno(), path, r.path_len);
        }
        return 0;
}

/*
 * The temporary top renamed to its name, never over anything: renameat2 RENAME_NOREPLACE, or
 * where the file system has no such rename (EINVAL: NFS, some FUSE ones) the name is taken
 * first by an entry of ours, a hard link for a file or a symlink (that is the whole move), an
 * empty directory that the rename then replaces for a directory.
 */
static int publish(struct unpack *u, bool dir)
{
        if (renameat2(u->pfd, u->tmp, u->pfd, u->final, RENAME_NOREPLACE) == 0)
                return 0;
        if (errno != EINVAL)
                return negerrno();
        if (!dir) {
                if (linkat(u->pfd, u->tmp, u->pfd, u->final, 0) < 0)
                        return negerrno();
                (void)unlinkat(u->pfd, u->tmp, 0);
                return 0;
        }
        if (mkdirat(u->pfd, u->final, 0700) < 0)
                return negerrno();
        if (renameat(u->pfd, u->tmp, u->pfd, u->final) == 0)
                return 0;
        int err = errno;
        (void)unlinkat(u->pfd, u->final, AT_REMOVEDIR);
        return -err;
}

static int unpack(struct unpack *u)
{
        struct cp_rec r;
        const char *path;
        int k = next_record(u, &r, &path);
        if (k < 0)
                return k;
        if (memchr(path, '/', r.path_len)) /* the first record is the top entry */
                return sbx_internal(u->e, 0, "a malformed copy stream");
        u->top = path;
        u->top_len = r.path_len;
        if (!u->final && !(u->final = u->own_final = strndup(path, r.path_len)))
                return ops_oom(u->e);
        /* an existing destination is told before anything is written (the rename without
         * replacing is what guards it) */
        struct stat st;
        if (fstatat(u->pfd, u->final, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return exists(u);
        if (errno != ENOENT) /* a name that cannot be made: said before anything is */
                return entry_failed(u, negerrno(), path, r.path_len);
        k = create_top(u, &r, path + r.path_len);
        if (k < 0)
                return entry_failed(u, k, path, r.path_len);
        if ((k = note_entry(u, &r, 0)) < 0 || (k = unpack_rest(u)) < 0 ||
            (k = check_interrupted(u)) < 0)
                return k;
        k = publish(u, r.type == 'd');
        if (k == -EEXIST)
                return exists(u);
        if (k < 0)
                return entry_failed(u, k, path, r.path_len);
        u->tmp[0] = '\0'; /* it is the copy now */
        /* The modes last, once nothing can fail the copy any more: a failure before must
         * find every directory 0700 to remove the tree (a 0555 one could not be emptied
         * without CAP_DAC_OVERRIDE). Through topfd: the copy's own, whatever its name is. */
        return u->topfd >= 0 ? set_dir_modes(u) : 0;
}

/* A failed copy's temporary entry goes. A directory is emptied through topfd (ours, checked)
 * and then removed by name, which only an empty directory can be: what a session swapped in
 * for the name is never entered. */
static void remove_tmp(struct unpack *u)
{
        if (u->topfd < 0) {
                (void)unlinkat(u->pfd, u->tmp, 0);
                return;
        }
        (void)ops_empty_dir(u->topfd, CP_MAX_DEPTH + 1);
        (void)unlinkat(u->pfd, u->tmp, AT_REMOVEDIR);
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
        _cleanup_free_ char *copy = cp_split_path(dst, &parent, &name);
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
                return cp_volume_link(e, "to", dst, link);
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
        struct unpack u = {
            .data = data, .len = len, .dst = dst, .in_session = !vols, .topfd = -1, .e = e};
        _cleanup_close_ int pfd = -1;
        *ret_bytes = 0;
        int r = open_destination(dst, vols, &pfd, &u.final, e);
        if (r < 0 || len == 0)
                return r; /* an empty stream: nothing was packed (a device, a fifo) */
        u.pfd = pfd;
        u.umask = umask(0);
        (void)umask(u.umask);
        sigset_t old;
        hold_signals(&u.held, &old);
        r = unpack(&u);
        if (r < 0 && u.tmp[0])
                remove_tmp(&u);
        closep(&u.topfd);
        /* a signal held back ends sbx here, with nothing of the copy left */
        (void)sigprocmask(SIG_SETMASK, &old, NULL);
        buf_freep(&u.dirs);
        free(u.own_final);
        if (r == 0)
                *ret_bytes = u.bytes;
        return r;
}
