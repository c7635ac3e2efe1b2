/* SPDX-License-Identifier: MIT */
/*
 * The sweep of session cgroups that nothing records any more (cgroup.h, cgroup_sweep): below
 * the caller's own <own>/sbx parents, those over a minute old whose session is dead: no
 * process of it in any of the owner's hierarchies (session_may_live).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../session/id.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

#define SWEEP_MIN_AGE_SEC 60

/* A v2 session cgroup whose init leaf is gone or holds no process: its session is dead. */
static bool v2_init_empty(int sfd)
{
        _cleanup_close_ int init =
            openat(sfd, "init", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (init < 0)
                return errno == ENOENT;
        uint64_t populated = 1;
        return cg_read_key_at(init, "cgroup.events", "populated", &populated) == 0 &&
               populated == 0;
}

/* <own>/sbx/<id> in p: 0, or -1 when own is empty or the path does not fit. */
static int session_dir_path(char p[static PATH_MAX], const char *own, const char *id)
{
        char parent[PATH_MAX];
        if (!own[0] || cg_path(parent, PATH_MAX, own, "sbx") < 0 ||
            cg_path(p, PATH_MAX, parent, id) < 0)
                return -1;
        return 0;
}

/* Whether <own>/sbx/<id> exists (or cannot be looked at: then it counts as there). */
static bool session_dir_there(const char *own, const char *id)
{
        char p[PATH_MAX];
        struct stat st;
        if (session_dir_path(p, own, id) < 0)
                return false;
        return stat(p, &st) == 0 || errno != ENOENT;
}

/* Whether v1's <own>/sbx/<id> holds a task (or cannot be read: then it counts as held). */
static bool v1_has_tasks(const char *own, const char *id)
{
        char dir[PATH_MAX], buf[2];
        if (session_dir_path(dir, own, id) < 0)
                return false;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno != ENOENT;
        return cg_read_at(fd, "tasks", buf, sizeof(buf)) != 0 || buf[0] != '\0';
}

/*
 * Whether session id may still be alive, judged from all of the owner's hierarchies. An empty
 * v1 cgroup says nothing: the init is never in the v1 memory and pids cgroups (sandbox/init.c),
 * so those of an idle session are empty for its whole life. The session's v2 cgroup, while it
 * is there, is the v2 sweep's to judge (its init leaf holds the init for the session's life);
 * else any v1 cgroup of the id that holds a task (the cpu or freezer cgroup holds the init).
 */
static bool session_may_live(const struct cgroup_owns *owns, const char *id)
{
        if (session_dir_there(owns->v2, id))
                return true;
        for (int k = 0; k < CG_NCTRL; k++)
                if (v1_has_tasks(owns->v1[k], id))
                        return true;
        return v1_has_tasks(owns->v1_freezer, id);
}

/* Returns how many v2 cgroups it found dead but left (defer_waits) for a sweep that may wait. */
static size_t sweep_parent(const struct cgroup_owns *owns, const char *own, bool v2,
                           size_t max_checks, bool defer_waits)
{
        char parent[PATH_MAX];
        size_t deferred = 0;
        if (cg_path(parent, sizeof(parent), own, "sbx") < 0)
                return 0;
        _cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0)
                return 0;
        size_t n;
        _cleanup_free_ char(*ids)[SESSION_ID_LEN + 1] = session_ids_sample(pfd, max_checks, &n);
        int64_t now = now_realtime_sec();
        for (size_t i = 0; i < n; i++) {
                struct stat st;
                if (fstatat(pfd, ids[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
                    st.st_mtime > now - SWEEP_MIN_AGE_SEC)
                        continue;
                if (v2) {
                        /* the init leaf holds the init for the session's whole life */
                        const int dir = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
                        _cleanup_close_ int sfd = openat(pfd, ids[i], dir);
                        if (sfd < 0)
                                continue;
                        if (defer_waits) {
                                /* A dead one's removal may wait (up to 5 s) for its other
                                 * leaves to empty: here it is only counted (removing its init
                                 * leaf would make it young again for the sweep to follow). */
                                deferred += v2_init_empty(sfd);
                                continue;
                        }
                        if (unlinkat(sfd, "init", AT_REMOVEDIR) < 0 && errno != ENOENT)
                                continue;
                        (void)cg_v2_remove(pfd, ids[i]);
                } else if (!session_may_live(owns, ids[i]))
                        (void)unlinkat(pfd, ids[i], AT_REMOVEDIR);
        }
        cg_remove_parent(pfd);
        return deferred;
}

size_t cgroup_sweep_owns(const struct cgroup_owns *owns, size_t max_checks, bool defer_waits)
{
        size_t deferred = 0;
        if (owns->v2[0])
                deferred += sweep_parent(owns, owns->v2, true, max_checks, defer_waits);
        for (int k = 0; k < CG_NCTRL; k++) {
                bool dup = false;
                for (int j = 0; j < k; j++)
                        dup |= strcmp(owns->v1[j], owns->v1[k]) == 0;
                if (owns->v1[k][0] && !dup)
                        deferred += sweep_parent(owns, owns->v1[k], false, max_checks, defer_waits);
        }
        if (owns->v1_freezer[0])
                deferred += sweep_parent(owns, owns->v1_freezer, false, max_checks, defer_waits);
        return deferred;
}

void cgroup_sweep(size_t max_checks)
{
        struct cg_host h;
        _cleanup_(cgroup_owns_free) struct cgroup_owns owns = CGROUP_OWNS_INIT;
        if (cg_host_probe(&h) < 0 || cg_owns_from_host(&h, &owns) < 0)
                return;
        (void)cgroup_sweep_owns(&owns, max_checks, false);
}

void cgroup_reap_stale(int rtfd, size_t max_checks)
{
        runtime_reap_stale_sessions(rtfd, max_checks, cgroup_remove_recorded);
        cgroup_sweep(max_checks);
}
