/* SPDX-License-Identifier: MIT */
/*
 * The session init: pid 1 of the session. It builds the root, reports ready, then does what
 * pid 1 must do, reap, and serves exec requests (exec_server.c). It is a fork of sbx that never
 * execs, so it is made non-dumpable before anything inside can see it (CVE-2019-5736: /proc/1/exe
 * is the sbx binary).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "rootfs.h"
#include "sandbox.h"
#include "seccomp.h"

/*
 * What the init keeps of its capabilities, for itself and the reapers it forks: kill (a reaper
 * kills the command's tree) and setuid (its commands become uid 0: creds_leave_helper_uid).
 */
#define INIT_KEEP_CAPS ((1ULL << CAP_KILL) | (1ULL << CAP_SETUID))

/*
 * The init moves itself into the session's v1 cpu cgroup by writing "0" into its "tasks" file,
 * opened by the supervisor (the kernel checks a move against the opener's credentials). A
 * cgroup.procs write, or a "tasks" write of another pid, takes the kernel's global
 * cgroup_threadgroup_rwsem and waits for an RCU grace period (8-20 ms here); the calling thread
 * moving itself does not (~0.1 ms). The init has one thread, so that is the whole process.
 *
 * It does so once its root is built, before anything of the session's own runs (#2): the
 * supervisor makes the v1 cgroups meanwhile, on the other CPU (launch/spawn.c), and sends one
 * message per controller (memory, pids, cpu) with its "tasks" file or none. Until then the
 * init runs only sbx's code, whose CPU time is the supervisor's.
 *
 * Not into the memory and pids cgroups: those are the command's (exec_server.c). The init
 * and the reapers it forks serve every exec, so they must never be charged to a memory cgroup
 * the command filled (tmpfs pages belong to no process: the OOM killer would find only them),
 * nor find the pids all taken. Each command moves itself into both, first thing after its
 * fork, through the fds kept here (the last two of fds, -1 where there is none). The init's
 * own pages stay with the supervisor's cgroup, like the supervisor's.
 */
static int enter_v1_cgroups(int sync_fd, int fds[INIT_CGROUP_FDS], struct sbx_error *e)
{
        for (int k = 0; k < INIT_CGROUP_FDS; k++) {
                int r = sync_wait_fd(sync_fd, "the supervisor", &fds[k], e);
                if (r < 0)
                        return r;
        }
        int r = 0;
        if (fds[2] >= 0 && write_all(fds[2], "0", 1) < 0)
                r = sbx_unsupported(e, errno, "failed to move the session into its cpu cgroup");
        closep(&fds[2]);
        return r;
}

static int init_setup(const struct sbx_config *c, struct init_fds *fds, struct helper *h,
                      int *ret_netfd, int *ret_layer_fd, struct sbx_error *e)
{
        struct rootfs_sources src = {
            .base_fd = -1, .usr_tree_fd = -1, .layers_fd = -1, .host_usr_tree_fd = -1};

        /* #1: the supervisor has written our uid/gid maps (and opened our namespaces) */
        int r = sync_wait_fd(fds->sync, "the supervisor", &src.usr_tree_fd, e);
        /* then one message per volume (the supervisor's idmapped clones) */
        if (r == 0)
                r = rootfs_receive_host_usr(c, fds->sync, &src, e);
        if (r == 0)
                r = rootfs_receive_volumes(c, fds->sync, &src, e);
        /* Only now: a non-dumpable process's /proc files belong to root, and an unprivileged
         * supervisor must write our uid_map first. Nothing else exists in our pid namespace
         * before this point, so nothing inside could have looked at us. */
        (void)prctl(PR_SET_DUMPABLE, 0);
        /* The network namespace (the clone made all the others) and /etc are made meanwhile
         * by H (helper.c): after #1, so that the maps exist for /etc. H runs nothing but its
         * few steps, and is gone before anything else exists in the session. */
        if (r == 0)
                helper_start(c, h);
        /* Sources are opened before the uid switch, with the caller's own access rights. */
        if (r == 0)
                r = rootfs_prepare(c, &src, e);
        if (r == 0)
                r = creds_become_sandbox_user(e);
        if (r == 0 && sethostname(c->hostname, strlen(c->hostname)) < 0)
                r = sbx_internal(e, errno, "failed to set the hostname '%s'", c->hostname);
        _cleanup_(user_limits_close) struct user_limits limits;
        user_limits_init(&limits);
        if (r == 0)
                r = rootfs_build(c, &src, &limits, h, ret_layer_fd, e);
        rootfs_sources_close(&src);
        /* H's work (helper.c), before the capabilities go: done by now, as a rule */
        if (r == 0)
                r = helper_finish(c, h, ret_netfd, e);
        if (r == 0)
                r = enter_v1_cgroups(fds->sync, fds->cgroup_tasks, e);
        /* last: no namespace of any kind may be made in the session from here on */
        if (r == 0)
                r = user_limits_write(&limits, e);
        return r;
}

/*
 * Whatever the spawning process blocked, ignored or handled (the supervisor blocks SIGTERM and
 * ignores SIGPIPE) must not reach the commands forked from us: back to the defaults.
 */
static void signals_reset(void)
{
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
}

_noreturn_ void session_init_main(const struct sbx_config *c, struct init_fds *fds)
{
        int sync_fd = fds->sync, exec_fd = fds->exec;
        struct sbx_error e = {0};

        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Nothing else is in our pid namespace yet: the caller's command line and environment
         * go before anything inside could read them from /proc/1/{cmdline,environ}. */
        proctitle_hide("sbx-init");
        struct helper h = HELPER_INIT;
        signals_reset();

        int netfd = -1, layerfd = -1;
        int r = init_setup(c, fds, &h, &netfd, &layerfd, &e);
        if (r == 0)
                r = creds_lock_down_keep(INIT_KEEP_CAPS, &e);
        /* Out of the command's reach (creds_set_helper_uid); an unprivileged session has no
         * second uid, and stays uid 0 (its commands can then signal their reaper, as they
         * always could there). */
        if (r == 0 && c->uid_range_count > 1)
                (void)creds_set_helper_uid((uid_t)(c->uid_range_count - 1));
        /* credential changes reset dumpable: set it again */
        (void)prctl(PR_SET_DUMPABLE, 0);
        /* The kernel clears the parent-death signal on every credential change: arm it again
         * now that they are final. Were the supervisor already gone, #2 below fails. */
        if (r == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                r = sbx_internal(&e, errno, "failed to tie the session to its supervisor");
        if (r == 0)
                r = seccomp_apply(c->seccomp, &e);
        if (r < 0) {
                (void)sync_send_error(sync_fd, &e);
                _exit(1);
        }
        /* #2: ready, with the network namespace */
        if (sync_send_ok_fd(sync_fd, netfd) < 0)
                _exit(1);
        closep(&netfd);
        /* #2b: the writable layer's root, for `sbx diff` (the init keeps none of it) */
        if (sync_send_ok_fd(sync_fd, layerfd) < 0)
                _exit(1);
        closep(&layerfd);
        /* Everything else goes: the exec channel alone stays, as fd 3, and the command's v1
         * memory and pids cgroups as 4 and 5 (moved up first: they may be 3-5 already). */
        int keep[3] = {exec_fd, fds->cgroup_tasks[0], fds->cgroup_tasks[1]};
        int up[3];
        for (int i = 0; i < 3; i++) {
                up[i] = keep[i] >= 0 ? fcntl(keep[i], F_DUPFD_CLOEXEC, 6) : -1;
                if (keep[i] >= 0 && up[i] < 0)
                        _exit(1); /* never a command outside its cgroups */
        }
        for (int i = 0; i < 3; i++)
                if (up[i] >= 0 && dup3(up[i], 3 + i, O_CLOEXEC) < 0)
                        _exit(1);
        (void)sys_close_range(6, ~0U, 0);
        for (int i = 0; i < 3; i++)
                if (up[i] < 0)
                        (void)close(3 + i);
        /* A spare reaper only where it serves: under the helper uid (with the command's uid
         * the command could stop it, and every exec after would wait), and not where a memory
         * limit sends every exec the client's way (cgroup v2: exec_server.c). */
        const int cmd_cgroups[EXEC_CGROUP_FDS] = {up[1] >= 0 ? 4 : -1, up[2] >= 0 ? 5 : -1};
        bool spares = getuid() != 0 && (c->memory_bytes == 0 || up[1] >= 0);
        exec_server_run(up[0] >= 0 ? 3 : -1, spares, cmd_cgroups);
}
