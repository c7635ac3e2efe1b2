/* SPDX-License-Identifier: MIT */
/* `create`: runtime entries, then a supervisor that outlives this process (sync point #3). */
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/sync.h"
#include "cgroup.h"
#include "launch.h"

/*
 * The lock file of a new session, locked before it appears under its name: the stale sweep of
 * other sessions (cgroup_reap_stale) takes a lock file it can lock for a dead session's, so a
 * "lock" that existed unlocked for a moment would get a session being born removed. Made as
 * "lock.new" (the directory is new and ours alone), locked, then renamed into place.
 */
static int make_locked_lock(int sessfd)
{
        _cleanup_close_ int fd =
            openat(sessfd, "lock.new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negerrno();
        if (flock(fd, LOCK_EX | LOCK_NB) < 0 || renameat(sessfd, "lock.new", sessfd, "lock") < 0)
                return negerrno();
        return TAKE_FD(fd);
}

/* A new, unique $RT/<id> with its lock file created and locked. */
static int make_session_dir(int rtfd, char id[static SESSION_ID_LEN + 1], int *ret_sessfd,
                            int *ret_lockfd, struct sbx_error *e)
{
        /* until the directory has its lock: a sweep then leaves a directory without one alone */
        _cleanup_close_ int creating = runtime_creating_begin(rtfd);
        if (creating < 0)
                return sbx_internal(e, -creating, "failed to lock the runtime directory");
        for (int tries = 0; tries < 8; tries++) {
                int r = session_id_generate(id);
                if (r < 0)
                        return sbx_internal(e, -r, "failed to generate a session id");
                if (mkdirat(rtfd, id, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return sbx_unsupported(e, errno, "failed to create the session directory");
                }
                _cleanup_close_ int sessfd = runtime_open_session(rtfd, id);
                if (sessfd < 0)
                        return sbx_internal(e, -sessfd, "failed to open the session directory");
                _cleanup_close_ int lockfd = make_locked_lock(sessfd);
                if (lockfd < 0) {
                        r = sbx_internal(e, -lockfd, "failed to lock the new session");
                        runtime_remove_session(rtfd, id);
                        return r;
                }
                *ret_sessfd = TAKE_FD(sessfd);
                *ret_lockfd = TAKE_FD(lockfd);
                return 0;
        }
        return sbx_internal(e, EEXIST, "failed to find a free session id");
}

int session_create(const struct sbx_config *c, struct session_state *st, int *ret_ack,
                   struct sbx_error *e)
{
        *ret_ack = -1;
        _cleanup_close_ int rtfd = -1;
        int r = runtime_open(&rtfd, e);
        if (r < 0)
                return r;
        /* Stale sessions are reaped by the new supervisor once its session is ready (#3),
         * off this path. */
        /* Before the supervisor exists: it starts in the cgroup this process ends up in. */
        _cleanup_(cgroup_plan_free) struct cgroup_plan plan = CGROUP_PLAN_INIT;
        if ((r = cgroup_prepare(c, false, &plan, e)) < 0)
                return r;

        char id[SESSION_ID_LEN + 1];
        _cleanup_close_ int sessfd = -1, lockfd = -1, report = -1, child_report = -1;
        if ((r = make_session_dir(rtfd, id, &sessfd, &lockfd, e)) < 0) {
                cgroup_plan_release(&plan);
                return r;
        }
        if (c->name && (r = runtime_name_claim(rtfd, c->name, id)) < 0) {
                cgroup_plan_release(&plan);
                runtime_remove_session(rtfd, id);
                return r == -EEXIST ? sbx_fail(e, EXIT_FAILED, "exists", 0,
                                               "a session named '%s' already exists", c->name)
                                    : sbx_internal(e, -r, "failed to claim the name '%s'", c->name);
        }

        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
                r = sbx_internal(e, errno, "failed to create the report socket");
                goto fail;
        }
        report = sp[0];
        child_report = sp[1];
        pid_t pid = fork();
        if (pid < 0) {
                r = sbx_internal(e, errno, "failed to start the supervisor");
                goto fail;
        }
        if (pid == 0) {
                closep(&report);
                supervisor_main(c, &plan, rtfd, sessfd, lockfd, id, child_report);
        }
        closep(&child_report);
        closep(&lockfd); /* the supervisor holds the lock from here on */

        /* #3: ready, or the supervisor's own error */
        r = sync_wait(report, "the session supervisor", e);
        if (r < 0) {
                (void)RETRY_EINTR(waitpid(pid, NULL, 0));
                goto fail;
        }
        /* From here on the supervisor ends the session if report closes without #4. */
        r = session_state_read(sessfd, st);
        if (r < 0)
                return sbx_internal(e, -r, "failed to read the new session's state");
        *ret_ack = TAKE_FD(report);
        return 0;
fail:
        cgroup_plan_release(&plan);
        if (c->name)
                runtime_name_release(rtfd, c->name, id);
        runtime_remove_session(rtfd, id);
        return r;
}

void session_create_ack(int ack)
{
        (void)sync_send_ok(ack);
        close(ack);
}
