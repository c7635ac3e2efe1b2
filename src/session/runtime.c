/* SPDX-License-Identifier: MIT */
#include "runtime.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "audit.h"
#include "cmds.h"
#include "state.h"

int runtime_dir_path(char *out, size_t n)
{
        const char *env = getenv("SBX_RUNTIME_DIR");
        int k;

        if (env && *env)
                k = snprintf(out, n, "%s", env);
        else if (geteuid() == 0)
                k = snprintf(out, n, "/run/sbx");
        else if ((env = getenv("XDG_RUNTIME_DIR")) && *env == '/')
                k = snprintf(out, n, "%s/sbx", env);
        else
                k = snprintf(out, n, "/tmp/sbx-%u", (unsigned)geteuid());
        if (k < 0 || (size_t)k >= n)
                return -ENAMETOOLONG;
        return 0;
}

int runtime_open(int *ret_fd, struct sbx_error *e)
{
        char path[PATH_MAX];
        int r = runtime_dir_path(path, sizeof(path));
        if (r < 0)
                return sbx_usage(e, "runtime directory path is too long");
        if (path[0] != '/')
                return sbx_usage(e, "SBX_RUNTIME_DIR '%s' must be an absolute path", path);

        /* made on first use only: every exec passes here */
        const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        _cleanup_close_ int fd = open(path, flags);
        if (fd < 0 && errno == ENOENT) {
                if (mkdir(path, 0700) < 0 && errno != EEXIST)
                        return sbx_unsupported(e, 0,
                                               "failed to create runtime directory '%s': %s; set "
                                               "SBX_RUNTIME_DIR to a directory you can write",
                                               path, strerror(errno));
                fd = open(path, flags);
        }
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
                return sbx_unsupported(e, errno,
                                       "failed to open runtime directory '%s' (it must be a "
                                       "directory, not a symlink)",
                                       path);
        if (fd < 0)
                return sbx_unsupported(e, 0,
                                       "failed to open runtime directory '%s': %s; set "
                                       "SBX_RUNTIME_DIR to a directory you can write",
                                       path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return sbx_unsupported(e, errno, "failed to stat runtime directory '%s'", path);
        if (st.st_uid != geteuid())
                return sbx_unsupported(e, 0,
                                       "runtime directory '%s' is owned by uid %u, not by you "
                                       "(uid %u): refusing to use it",
                                       path, (unsigned)st.st_uid, (unsigned)geteuid());
        if (st.st_mode & 0077)
                return sbx_unsupported(e, 0,
                                       "runtime directory '%s' has mode %03o: it must be 0700 "
                                       "(chmod 700 '%s')",
                                       path, (unsigned)(st.st_mode & 0777), path);
        if (mkdirat(fd, "names", 0700) < 0 && errno != EEXIST)
                return sbx_unsupported(e, errno, "failed to create '%s/names'", path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int runtime_open_session(int rtfd, const char *id)
{
        if (!session_id_valid(id))
                return -EINVAL;
        int fd = openat(rtfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negerrno() : fd;
}

static int no_such_session(struct sbx_error *e, const char *what)
{
        return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                        "no such session '%s' (see 'sbx list')", what);
}

int runtime_check_ref(const char *id_or_name, struct sbx_error *e)
{
        if (session_id_valid(id_or_name) || session_name_valid(id_or_name))
                return 0;
        /* Neither an id nor a name: rejected before it touches the filesystem. */
        return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                        "no such session: '%s' is not a session id (sb_ and 16 characters) or "
                        "name ([a-z0-9][a-z0-9_.-]{0,62}): see 'sbx list'",
                        id_or_name);
}

int runtime_resolve(int rtfd, const char *id_or_name, char out[static SESSION_ID_LEN + 1],
                    struct sbx_error *e)
{
        int fd = runtime_resolve_open(rtfd, id_or_name, out, e);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int runtime_resolve_open(int rtfd, const char *id_or_name, char out[static SESSION_ID_LEN + 1],
                         struct sbx_error *e)
{
        char target[64];

        /* The branches are runtime_check_ref's own tests (which the callers ran before
         * runtime_open): it runs again only for a ref that is neither, to refuse it with its
         * message before any file is touched. */
        if (session_id_valid(id_or_name)) {
                memcpy(out, id_or_name, SESSION_ID_LEN + 1);
        } else if (session_name_valid(id_or_name)) {
                char link[80];
                snprintf(link, sizeof(link), "names/%s", id_or_name);
                ssize_t n = readlinkat(rtfd, link, target, sizeof(target) - 1);
                if (n < 0)
                        return no_such_session(e, id_or_name);
                target[n] = '\0';
                if (!session_id_valid(target))
                        return no_such_session(e, id_or_name);
                memcpy(out, target, SESSION_ID_LEN + 1);
        } else {
                (void)runtime_check_ref(id_or_name, e);
                return -EINVAL;
        }

        int fd = runtime_open_session(rtfd, out);
        return fd < 0 ? no_such_session(e, id_or_name) : fd;
}

int runtime_try_lock(int sessfd)
{
        _cleanup_close_ int fd = openat(sessfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return negerrno();
        return TAKE_FD(fd);
}

/* Its own open file description: the lock must not be shared with anything forked later. */
static int open_rt_again(int rtfd)
{
        int fd = openat(rtfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negerrno() : fd;
}

int runtime_creating_begin(int rtfd)
{
        _cleanup_close_ int fd = open_rt_again(rtfd);
        if (fd < 0)
                return fd;
        /* a sweep holds it exclusively only for a look */
        if (RETRY_EINTR(flock(fd, LOCK_SH)) < 0)
                return negerrno();
        return TAKE_FD(fd);
}

/* Whether no create is between making its session directory and locking it. */
static bool no_create_in_progress(int rtfd)
{
        _cleanup_close_ int fd = open_rt_again(rtfd);
        return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
}

int runtime_name_claim(int rtfd, const char *name, const char *id)
{
        char link[80];
        snprintf(link, sizeof(link), "names/%s", name);
        if (symlinkat(id, rtfd, link) == 0)
                return 0;
        if (errno != EEXIST)
                return negerrno();
        /* A name left by a dead session may be taken over. */
        char target[64];
        ssize_t n = readlinkat(rtfd, link, target, sizeof(target) - 1);
        if (n < 0)
                return -EEXIST;
        target[n] = '\0';
        _cleanup_close_ int sfd = runtime_open_session(rtfd, target);
        if (sfd >= 0) {
                _cleanup_close_ int lk = runtime_try_lock(sfd);
                if (lk < 0)
                        return -EEXIST; /* alive */
        }
        (void)unlinkat(rtfd, link, 0);
        return symlinkat(id, rtfd, link) == 0 ? 0 : negerrno();
}

void runtime_name_release(int rtfd, const char *name, const char *id)
{
        char link[80], target[64];
        if (!name || !session_name_valid(name))
                return;
        snprintf(link, sizeof(link), "names/%s", name);
        ssize_t n = readlinkat(rtfd, link, target, sizeof(target) - 1);
        if (n < 0)
                return;
        target[n] = '\0';
        if (strcmp(target, id) == 0)
                (void)unlinkat(rtfd, link, 0);
}

void runtime_remove_session(int rtfd, const char *id)
{
        _cleanup_close_ int fd = runtime_open_session(rtfd, id);
        if (fd < 0)
                return;
        /* its detached commands' keepers first: they write in this directory */
        cmds_remove_all(fd);
        _cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(fd));
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        (void)unlinkat(rtfd, id, AT_REMOVEDIR);
}

static void reap_stale_names(int rtfd)
{
        _cleanup_close_ int nfd =
            openat(rtfd, "names", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0)
                return;
        _cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(nfd));
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                char target[64];
                if (de->d_name[0] == '.')
                        continue;
                ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = '\0';
                struct stat st;
                if (!session_id_valid(target) ||
                    fstatat(rtfd, target, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        }
}

/* A log kept in an audit dir outlives the session: say how it ended. */
static void note_crash(int sfd, const struct session_state *dead)
{
        if (!dead->audit_path)
                return;
        _cleanup_close_ int fd = audit_open(sfd, dead);
        audit_end(fd, dead->id, "crashed", "the session's supervisor died");
}

/* The lock of entry sfd when its supervisor is gone (or an error: gone too), -EWOULDBLOCK
 * while it lives. */
static int take_stale_lock(int rtfd, int sfd)
{
        int lk = runtime_try_lock(sfd);
        if (lk != -ENOENT)
                return lk;
        /* No lock file: a create that died before making it, or one that is making it right
         * now (runtime_creating_begin). An entry older than a minute goes in any case. */
        struct stat st;
        if (fstat(sfd, &st) == 0 && st.st_mtime <= now_realtime_sec() - 60)
                return lk;
        if (!no_create_in_progress(rtfd))
                return -EWOULDBLOCK;
        /* None is: the one that was making it died, or it finished since the first look. */
        return runtime_try_lock(sfd);
}

/* Check one entry; remove it when its supervisor is gone. */
static void reap_if_stale(int rtfd, const char *id, runtime_dead_fn on_dead)
{
        _cleanup_close_ int sfd = runtime_open_session(rtfd, id);
        if (sfd < 0)
                return;
        _cleanup_close_ int lk = take_stale_lock(rtfd, sfd);
        if (lk == -EWOULDBLOCK)
                return; /* alive */
        /* The dead session's cgroups, as its supervisor recorded them. */
        _cleanup_state_ struct session_state dead = {0};
        if (session_state_read(sfd, &dead) == 0) {
                if (on_dead)
                        on_dead(&dead);
                note_crash(sfd, &dead);
        }
        runtime_remove_session(rtfd, id);
}

bool runtime_stale_present(int rtfd, size_t max_checks)
{
        size_t n;
        _cleanup_free_ char(*ids)[SESSION_ID_LEN + 1] = session_ids_sample(rtfd, max_checks, &n);
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int sfd = runtime_open_session(rtfd, ids[i]);
                if (sfd < 0)
                        continue;
                _cleanup_close_ int lk = take_stale_lock(rtfd, sfd);
                if (lk != -EWOULDBLOCK)
                        return true;
        }
        return false;
}

void runtime_reap_stale_sessions(int rtfd, size_t max_checks, runtime_dead_fn on_dead)
{
        size_t n;
        _cleanup_free_ char(*ids)[SESSION_ID_LEN + 1] = session_ids_sample(rtfd, max_checks, &n);
        for (size_t i = 0; i < n; i++)
                reap_if_stale(rtfd, ids[i], on_dead);
        reap_stale_names(rtfd);
}
