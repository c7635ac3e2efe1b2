/* SPDX-License-Identifier: MIT */
/*
 * The last process before the payload. Its setup is an ordered checklist:
 * capabilities are dropped before seccomp, and seccomp is the last step before execve.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "exec_wire.h"
#include "sandbox.h"
#include "seccomp.h"

extern char **environ;

void exec_spec_from_wire(const struct exec_wire *w, int null, int pty_slave, struct exec_spec *spec)
{
        *spec = (struct exec_spec){.argv = w->argv,
                                   .envp = w->envp,
                                   .workdir = w->workdir,
                                   .tty = w->flags & EXEC_WIRE_TTY,
                                   .errfd = -1,
                                   .seccomp = SBX_SECCOMP_UNCONFINED,
                                   .nofile = w->nofile,
                                   .fsize = w->fsize};
        if (spec->tty) {
                spec->stdio[0] = spec->stdio[1] = spec->stdio[2] = pty_slave;
                return;
        }
        spec->stdio[0] = w->fds[WIRE_IN_R] >= 0 ? w->fds[WIRE_IN_R] : null;
        spec->stdio[1] = w->fds[WIRE_OUT_W];
        spec->stdio[2] = w->fds[WIRE_ERR_W] >= 0 ? w->fds[WIRE_ERR_W] : w->fds[WIRE_OUT_W];
}

static int step_stdio(const struct exec_spec *s, struct sbx_error *e)
{
        /* Move the sources above 2 first so dup2 never clobbers one with another. */
        int moved[3];
        for (int i = 0; i < 3; i++) {
                moved[i] = fcntl(s->stdio[i], F_DUPFD_CLOEXEC, 3);
                if (moved[i] < 0)
                        return sbx_internal(e, errno, "failed to set up fd %d", i);
        }
        for (int i = 0; i < 3; i++)
                if (dup2(moved[i], i) < 0)
                        return sbx_internal(e, errno, "failed to set up fd %d", i);
        return 0;
}

static int step_session(const struct exec_spec *s, struct sbx_error *e)
{
        /* A new session: the payload can never reach the caller's terminal (TIOCSTI). */
        if (setsid() < 0)
                return sbx_internal(e, errno, "failed to start a new session");
        if (s->tty && ioctl(0, TIOCSCTTY, 0) < 0)
                return sbx_internal(e, errno, "failed to take the pty as controlling terminal");
        return 0;
}

static int step_workdir(const char *workdir, int exit_code, struct sbx_error *e)
{
        if (chdir(workdir) < 0)
                return sbx_fail(e, exit_code, "not_found", errno, "failed to enter workdir '%s'",
                                workdir);
        /* CVE-2024-21626: the cwd must be inside the session's root */
        char cwd[4096];
        if (!getcwd(cwd, sizeof(cwd)) || cwd[0] != '/')
                return sbx_internal(e, EXDEV, "workdir '%s' is outside the session root", workdir);
        return 0;
}

static int step_rlimits(const struct exec_spec *s, struct sbx_error *e)
{
        struct rlimit core = {0, 0};
        if (setrlimit(RLIMIT_CORE, &core) < 0)
                return sbx_internal(e, errno, "failed to set RLIMIT_CORE");
        struct rlimit cur;
        if (getrlimit(RLIMIT_NOFILE, &cur) < 0)
                return sbx_internal(e, errno, "failed to read RLIMIT_NOFILE");
        /* Never above what this process may hold: a lower limit is still the asked-for bound. */
        rlim_t nofile = s->nofile < cur.rlim_max ? s->nofile : cur.rlim_max;
        struct rlimit nf = {nofile, nofile};
        if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
                return sbx_internal(e, errno, "failed to set RLIMIT_NOFILE");
        if (s->fsize) {
                struct rlimit fs = {s->fsize, s->fsize};
                if (getrlimit(RLIMIT_FSIZE, &cur) == 0 && cur.rlim_max < s->fsize)
                        fs.rlim_cur = fs.rlim_max = cur.rlim_max;
                if (setrlimit(RLIMIT_FSIZE, &fs) < 0)
                        return sbx_internal(e, errno, "failed to set RLIMIT_FSIZE");
        }
        return 0;
}

/*
 * The payload is the OOM killer's first choice, before sbx's own processes of the session (the
 * init, the per-exec reapers). The kernel picks the victim by resident size, and tmpfs pages
 * (/tmp, /workspace, /dev/shm) belong to no process: a small command that fills /tmp up to
 * --memory would otherwise have the session's init killed, and the session with it (seen with
 * the larger ASan-built sbx; possible with any build). Raising one's own oom_score_adj needs
 * no privilege, but this process is non-dumpable, so its /proc files belong to host root: this
 * runs before the uid change and works when sbx runs as root. Otherwise (an unprivileged sbx)
 * the kernel's default choice stays. The payload may lower the value again to where it was,
 * which only puts its own session at risk.
 */
/*
 * The same for a child of the session init, still with the init's helper uid: non-dumpable,
 * its /proc files belong to host root, and dumpable they belong to the helper uid, which no
 * command has (creds_set_helper_uid). So it is dumpable just long enough to open the file: a
 * process of the session can neither open that file nor ptrace us meanwhile. Without a helper
 * uid (an unprivileged session) it stays as it is, as from outside.
 */
static int step_oom_first_helper(void)
{
        if (getuid() == 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
                return 0;
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (prctl(PR_SET_DUMPABLE, 0) < 0)
                _exit(EXIT_SBX_FAILED); /* never run on dumpable */
        if (fd >= 0) {
                (void)write_all(fd, "1000", 4);
                close(fd);
        }
        return 0;
}

static int step_oom_first(const struct exec_spec *s, struct sbx_error *e)
{
        if (s->confined)
                return step_oom_first_helper();
        _cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd >= 0)
                (void)write_all(fd, "1000", 4);
        return 0;
        (void)s, (void)e;
}

static int step_close_fds(const struct exec_spec *s, struct sbx_error *e)
{
        /* Everything above 2 is closed at execve, whatever the caller leaked (CVE-2024-21626);
         * errfd stays usable until then to report a failed execve. */
        if (sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
                return 0;
        for (int fd = 3; fd < 65536; fd++)
                if (fd != s->errfd)
                        (void)close(fd);
        return 0;
        (void)e;
}

/*
 * Until execve this process runs sbx code as the sandbox's own uid, and the uid change reset
 * dumpability to fs.suid_dumpable: make it non-dumpable again, or a process of the session
 * could open /proc/<us>/exe (the sbx binary) or /proc/<us>/mem in this window
 * (CVE-2019-5736). execve makes the payload dumpable as usual.
 */
static int step_non_dumpable(struct sbx_error *e)
{
        return prctl(PR_SET_DUMPABLE, 0) < 0
                   ? sbx_internal(e, errno, "failed to make the process non-dumpable")
                   : 0;
}

int exec_child_lock_down(const char *workdir, enum sbx_seccomp_profile seccomp,
                         int workdir_exit_code, struct sbx_error *e)
{
        int r = creds_become_sandbox_user(e);
        if (r == 0)
                r = step_workdir(workdir, workdir_exit_code, e);
        if (r == 0)
                r = creds_lock_down(e);
        if (r == 0)
                r = step_non_dumpable(e);
        if (r == 0) /* last */
                r = seccomp_apply(seccomp, e);
        return r;
}

/* A child of the session init has its filter and no_new_privs already, and only leaves the
 * init's helper uid and its two capabilities. */
static int exec_child_leave_helper(const char *workdir, struct sbx_error *e)
{
        int r = creds_leave_helper_uid(e);
        if (r == 0)
                r = step_workdir(workdir, EXIT_SBX_FAILED, e);
        if (r == 0)
                r = step_non_dumpable(e);
        return r;
}

/*
 * First of all, into the command's v1 cgroups (a child of the init's server: the init is in
 * neither, init.c): before anything else is allocated here or forked. The thread moves itself
 * ("0" into "tasks"), which skips the RCU grace period a move by pid waits for, and a move is
 * not refused by pids.max, so a command starts even when the session's pids are all taken;
 * what it forks is limited. A failed move is fatal: never a command outside its limits.
 */
static int step_cgroups(const struct exec_spec *s, struct sbx_error *e)
{
        for (int i = 0; s->enter_cgroups && i < EXEC_CGROUP_FDS; i++)
                if (s->enter_cgroups[i] >= 0 && write_all(s->enter_cgroups[i], "0", 1) < 0)
                        return sbx_internal(e, errno,
                                            "failed to move the command into the session's cgroup");
        return 0;
}

_noreturn_ void exec_child_run(const struct exec_spec *s)
{
        struct sbx_error e = {0};
        int r = step_cgroups(s, &e);
        if (r == 0)
                r = step_stdio(s, &e);
        if (r == 0)
                r = step_session(s, &e);
        if (r == 0)
                r = step_oom_first(s, &e);
        if (r == 0)
                r = step_rlimits(s, &e);
        if (r == 0)
                r = step_close_fds(s, &e);
        if (r == 0)
                r = s->confined ? exec_child_leave_helper(s->workdir, &e)
                                : exec_child_lock_down(s->workdir, s->seccomp, EXIT_SBX_FAILED, &e);
        if (r == 0) {
                environ = s->envp;
                execvp(s->argv[0], s->argv);
                int err = errno;
                /* "pip install x" as one word: sbx runs no shell, say so */
                if (err == ENOENT && strpbrk(s->argv[0], " \t") && !strchr(s->argv[0], '/'))
                        (void)sbx_fail(&e, EXIT_NOT_FOUND, "not_found", 0,
                                       "failed to execute '%s': no such command; sbx runs no "
                                       "shell: pass the words as separate arguments, or use "
                                       "sh -c '...'",
                                       s->argv[0]);
                else
                        (void)sbx_fail(&e, err == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE,
                                       "not_found", err, "failed to execute '%s'", s->argv[0]);
        }
        exec_child_fail(s->errfd, &e);
}

_noreturn_ void exec_child_fail(int errfd, const struct sbx_error *e)
{
        struct sbx_wire_error w;
        sbx_error_pack(e, &w);
        (void)write_all(errfd, &w, sizeof(w));
        _exit(e->exit_code ? e->exit_code : EXIT_SBX_FAILED);
}
