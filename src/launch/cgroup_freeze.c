/* SPDX-License-Identifier: MIT */
/*
 * Pausing a session: the cgroup v2 freezer (cgroup.freeze) of the session's cgroup, which
 * holds every process of the session (the init, each exec's reaper and command, the file
 * commands' helpers) in its leaves. A freeze of the session's cgroup reaches all of them, and
 * a process forked meanwhile is born frozen. "Paused" is claimed only once cgroup.events says
 * "frozen 1": the kernel's word that every task has stopped. Where the session has no v2
 * cgroup (no usable cgroup2 on the host), the v1 freezer hierarchy does the same.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

#define FREEZE_WAIT_MS 5000
#define V1_POLL_MS 5
/* How often a v1 freeze still FREEZING is asked again (see v1_freeze). */
#define V1_RETRY_MS 100

/* Until cgroup.events says "frozen <want>" (the kernel signals changes with POLLPRI). */
static int wait_frozen(int cgfd, bool want, int timeout_ms)
{
        _cleanup_close_ int fd = openat(cgfd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negerrno();
        const char *goal = want ? "frozen 1" : "frozen 0";
        uint64_t end = now_monotonic_ms() + (uint64_t)timeout_ms;
        for (;;) {
                char text[256];
                ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
                if (n < 0)
                        return negerrno();
                text[n] = '\0';
                if (strstr(text, goal))
                        return 0;
                uint64_t now = now_monotonic_ms();
                if (now >= end)
                        return -ETIMEDOUT;
                struct pollfd pf = {.fd = fd, .events = POLLPRI};
                if (poll(&pf, 1, (int)(end - now)) < 0 && errno != EINTR)
                        return negerrno();
        }
}

static int write_freeze(int cgfd, bool freeze)
{
        _cleanup_close_ int fd = openat(cgfd, "cgroup.freeze", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? -EOPNOTSUPP : negerrno();
        return write_all(fd, freeze ? "1" : "0", 1);
}

static int open_session_cgroup(const struct cgroup_session *cs)
{
        if (cs->v2_parent_fd < 0 || !cs->v2[0])
                return -EOPNOTSUPP;
        const char *id = strrchr(cs->v2, '/');
        int fd = openat(cs->v2_parent_fd, id ? id + 1 : cs->v2,
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

/*
 * cgroup v1 (hosts without a usable cgroup2): the session's cgroup in the freezer hierarchy,
 * whose freezer.state goes FREEZING -> FROZEN once every task has stopped. v1 signals no
 * change, so the state is read every few milliseconds until the bound.
 */
static int v1_open(const struct cgroup_session *cs)
{
        if (cs->v1_freezer_parent_fd < 0 || !cs->v1_freezer[0])
                return -EOPNOTSUPP;
        const char *id = strrchr(cs->v1_freezer, '/');
        int fd = openat(cs->v1_freezer_parent_fd, id ? id + 1 : cs->v1_freezer,
                        O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

static int v1_write(int cgfd, const char *state)
{
        _cleanup_close_ int fd = openat(cgfd, "freezer.state", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : write_all(fd, state, strlen(state));
}

static int v1_freeze(int cgfd, bool freeze)
{
        const char *goal = freeze ? "FROZEN" : "THAWED";
        int r = v1_write(cgfd, goal);
        uint64_t start = now_monotonic_ms(), end = start + FREEZE_WAIT_MS;
        uint64_t again = start + V1_RETRY_MS;
        while (r == 0) {
                char text[32];
                if ((r = cg_read_at(cgfd, "freezer.state", text, sizeof(text))) < 0)
                        break;
                if (strcmp(text, goal) == 0)
                        return 0;
                if (now_monotonic_ms() >= end) {
                        r = -ETIMEDOUT;
                        break;
                }
                (void)poll(NULL, 0, V1_POLL_MS);
                /* A v1 freeze can stay incomplete (FREEZING) when some task was busy as it
                 * was asked; the kernel's documentation says to write FROZEN again, which asks
                 * every task once more (seen under load with a fork loop inside: 5 s without
                 * converging) */
                if (freeze && now_monotonic_ms() >= again) {
                        again += V1_RETRY_MS;
                        (void)v1_write(cgfd, goal); /* the wait above still decides */
                }
        }
        if (freeze)
                (void)v1_write(cgfd, "THAWED"); /* never half-frozen: back to running */
        return r;
}

int cgroup_session_freeze(const struct cgroup_session *cs, bool freeze)
{
        _cleanup_close_ int cgfd = open_session_cgroup(cs);
        if (cgfd == -EOPNOTSUPP) {
                _cleanup_close_ int v1 = v1_open(cs);
                return v1 < 0 ? v1 : v1_freeze(v1, freeze);
        }
        if (cgfd < 0)
                return cgfd;
        int r = write_freeze(cgfd, freeze);
        if (r < 0)
                return r;
        r = wait_frozen(cgfd, freeze, FREEZE_WAIT_MS);
        if (r < 0 && freeze)
                (void)write_freeze(cgfd, false); /* never half-frozen: back to running */
        return r;
}

void cgroup_session_thaw(const struct cgroup_session *cs)
{
        _cleanup_close_ int cgfd = open_session_cgroup(cs);
        if (cgfd >= 0)
                (void)write_freeze(cgfd, false);
        _cleanup_close_ int v1 = v1_open(cs);
        if (v1 >= 0)
                (void)v1_write(v1, "THAWED");
}

bool cgroup_session_end(const struct cgroup_session *cs)
{
        /* Frozen before the kill, and never thawed again (a SIGKILL ends a v2 frozen task): a
         * child forked while the kill walks the cgroup, which kernels before the fix of that
         * race (upstream, 2025) may leave without its SIGKILL, is born frozen, and runs nothing
         * until the init's death takes its pid namespace. */
        _cleanup_close_ int cgfd = open_session_cgroup(cs);
        bool frozen = cgfd >= 0 && write_freeze(cgfd, true) == 0;
        return frozen && cgroup_session_kill(cs);
}

int cgroup_state_frozen(const struct session_state *st)
{
        _cleanup_(cgroup_session_free) struct cgroup_session cs = CGROUP_SESSION_INIT;
        if (cgroup_session_from_state(st, &cs) < 0)
                return -ENOMEM;
        return cgroup_session_frozen(&cs);
}

int cgroup_session_frozen(const struct cgroup_session *cs)
{
        char text[32];
        if (!cs->v2[0] && cs->v1_freezer[0]) {
                int r = cg_read(cs->v1_freezer, "freezer.state", text, sizeof(text));
                if (r == -ENOENT)
                        return 0;
                return r < 0 ? r : strcmp(text, "THAWED") != 0;
        }
        if (!cs->v2[0])
                return 0;
        int r = cg_read(cs->v2, "cgroup.freeze", text, sizeof(text));
        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : strcmp(text, "1") == 0;
}
