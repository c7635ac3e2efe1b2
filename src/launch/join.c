/* SPDX-License-Identifier: MIT */
/*
 * Joining a live session to run one command (docs/DESIGN.md, "exec"): the client setns()es
 * into the session and forks B (the per-exec reaper, a child subreaper), B forks C (the
 * command). The client relays output (relay.c) and waits for B's report; hanging up on B
 * while C runs makes B kill everything the command started.
 */
#include <linux/capability.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../sandbox/exec_wire.h"
#include "../sandbox/reaper.h"
#include "../sandbox/sandbox.h"
#include "../sandbox/seccomp.h"
#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "cgroup.h"
#include "join.h"
#include "launch.h"

static void close_pair(int p[2])
{
        closep(&p[0]);
        closep(&p[1]);
}

void exec_fds_close(struct exec_fds *f)
{
        close_pair(f->out);
        close_pair(f->err);
        close_pair(f->in);
        close_pair(f->status);
        closep(&f->pty_master);
        closep(&f->pty_slave);
        closep(&f->null);
        closep(&f->reaper_pidfd);
}

int exec_host_pipes(const struct exec_request *rq, struct exec_fds *f, struct sbx_error *e)
{
        if (rq->tty)
                return 0;
        if (pipe2(f->out, O_CLOEXEC) < 0)
                return sbx_internal(e, errno, "failed to create the output pipe");
        /* With capture both streams share one pipe: the arrival order is kept exactly. */
        if (!rq->capture && pipe2(f->err, O_CLOEXEC) < 0)
                return sbx_internal(e, errno, "failed to create the error pipe");
        if (rq->interactive && pipe2(f->in, O_CLOEXEC) < 0)
                return sbx_internal(e, errno, "failed to create the input pipe");
        return 0;
}

/* Things opened inside the session after setns: its /dev/null and its own pty. */
static int make_inside_fds(const struct exec_request *rq, struct exec_fds *f, struct sbx_error *e)
{
        f->null = open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (f->null < 0)
                return sbx_internal(e, errno, "failed to open the session's /dev/null");
        if (!rq->tty)
                return 0;
        int r = pty_open_in_session(&f->pty_master, &f->pty_slave, e);
        if (r == 0)
                exec_pty_size_from_caller(f->pty_master);
        return r;
}

void exec_pty_size_from_caller(int pty_master)
{
        struct winsize ws;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
                (void)ioctl(pty_master, TIOCSWINSZ, &ws);
}

/* Keep only CAP_KILL: B must be able to kill the command's tree, nothing else. */
static int reaper_drop_caps(void)
{
        int r = creds_drop_caps(1ULL << CAP_KILL);
        if (r < 0)
                return r;
        return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* B or C could not enter the session's cgroups: the command must not run unlimited. */
static void cgroup_failed(struct sbx_error *ce, int err)
{
        sbx_fail(ce, EXIT_SBX_FAILED, "internal", err,
                 "failed to move the command into the session's cgroup");
}

/* B or C joins the session's cgroup namespace, where every process of the session lives. */
static int join_cgroup_ns(const int *ns, struct sbx_error *e)
{
        int r = session_ns_join_cgroup(ns);
        return r < 0 ? sbx_fail(e, EXIT_SBX_FAILED, "internal", -r,
                                "failed to join the session's cgroup namespace")
                     : 0;
}

/* What B of a joined exec needs to start C and settle itself (struct reaper_plan's ctx). */
struct join_reaper {
        struct exec_spec *spec;
        struct cgroup_exec *cx;
        const int *ns;
        bool in_init_cgroup; /* B was born in the session's cgroup */
        bool c_in_leaf;      /* C was born in the exec's v2 leaf */
};

static pid_t join_fork_command(void *ctx)
{
        struct join_reaper *j = ctx;
        return fork_into_cgroup(j->cx->leaf_fd, &j->c_in_leaf);
}

/* C: into the exec's cgroups before anything of the command runs (born in the v2 leaf
 * already, when fork_into_cgroup could). */
_noreturn_ static void join_run_command(void *ctx, int errw)
{
        struct join_reaper *j = ctx;
        struct sbx_error ce = {0};
        int cr;
        if (j->c_in_leaf)
                closep(&j->cx->leaf_procs);
        if (join_cgroup_ns(j->ns, &ce) < 0)
                exec_child_fail(errw, &ce);
        if ((cr = cgroup_exec_enter_command(j->cx)) < 0) {
                cgroup_failed(&ce, -cr);
                exec_child_fail(errw, &ce);
        }
        j->spec->errfd = errw;
        exec_child_run(j->spec);
}

/* B follows C (it forked C from outside, so C starts even when the session's pids are all
 * taken). B is sbx's own; where it cannot enter, it still dies with the session. */
static int join_enter(void *ctx, struct sbx_error *e)
{
        struct join_reaper *j = ctx;
        if (j->in_init_cgroup)
                closep(&j->cx->init_procs);
        (void)cgroup_exec_enter_reaper(j->cx);
        return join_cgroup_ns(j->ns, e);
}

/* B enters the session too: only CAP_KILL, and the session's filter like every other process. */
static int join_lock(void *ctx, struct sbx_error *e)
{
        struct join_reaper *j = ctx;
        int r = reaper_drop_caps();
        if (r < 0)
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", -r, "failed to drop capabilities");
        (void)prctl(PR_SET_DUMPABLE, 0); /* credential changes may reset it */
        return seccomp_apply(j->spec->seccomp, e);
}

/* B: the per-exec reaper, a child subreaper in the session's pid namespace. */
_noreturn_ static void reaper_main(struct exec_fds *f, struct exec_spec *spec,
                                   struct cgroup_exec *cx, const int *ns, bool in_init_cgroup)
{
        (void)prctl(PR_SET_DUMPABLE, 0);
        closep(&f->status[0]);
        closep(&f->in[1]);
        /* The caller's stdio never stays in a process the session can see. */
        for (int i = 0; i < 3; i++)
                (void)dup2(f->null, i);
        struct join_reaper j = {.spec = spec, .cx = cx, .ns = ns, .in_init_cgroup = in_init_cgroup};
        struct reaper_plan p = {.status = f->status[1],
                                .sigfd = reaper_become(),
                                .out = f->out[0],
                                .err = f->err[0],
                                .pty = f->pty_master,
                                /* Born in the session's cgroup, B took the last of its pids:
                                 * the client starts over with B outside, whose C is then
                                 * forked outside and moved in, so an exec can always start. */
                                .retry_on_eagain = in_init_cgroup,
                                .fork_command = join_fork_command,
                                .run_command = join_run_command,
                                .enter = join_enter,
                                .lock = join_lock,
                                .ctx = &j};
        reaper_start(&p);
        _exit(EXIT_SBX_FAILED);
}

/* Present only in sanitizer builds (weak: NULL otherwise). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/*
 * B0: a short-lived process in the session's pid namespace, a vfork child of the client. It
 * forks B and exits, so B is re-parented to the session init, which reaps it the moment it
 * ends (an orphan of ours would go to the host's pid 1 instead, and while its zombie waits
 * there the session cannot end).
 */
_noreturn_ static void reaper_spawn(struct exec_fds *f, struct exec_spec *spec,
                                    struct cgroup_exec *cx, const int *ns, int init_cgroup_fd)
{
        /* Never rely on inheritance alone: a sanitizer runtime toggles dumpability. */
        (void)prctl(PR_SET_DUMPABLE, 0);
        bool in_init;
        pid_t b = fork_into_cgroup(init_cgroup_fd, &in_init);
        if (b == 0)
                reaper_main(f, spec, cx, ns, in_init);
        _exit(b > 0 ? 0 : EXIT_SBX_FAILED);
}

/*
 * Start B (through B0) and wait for its first word. 0: B runs, with f->reaper_pidfd;
 * EXEC_NOT_STARTED: B asks to be started again outside the session's cgroup (init_cgroup_fd -1);
 * <0: error.
 */
static int start_reaper(struct exec_fds *f, struct exec_spec *spec, struct cgroup_exec *cx,
                        const int *ns, int init_cgroup_fd, struct sbx_error *e)
{
        close_pair(f->status);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->status) < 0)
                return sbx_internal(e, errno, "failed to create the status socket");
        /* setns(CLONE_NEWPID) applies to children: B is born in the session's pid ns. B0
         * lives only to fork B, and we wait for exactly that: vfork spares copying our
         * address space for it (B0 leaves by _exit, and forks with a raw clone). Only as
         * root: an unprivileged B0 has the sandbox's host uid, and a SIGSTOP from inside
         * would hold a vfork parent where no timeout can reach it. */
        /* B is born with our memory: our command line and environment (`-e` values, host
         * paths) are blanked in it from birth, so no process of the session ever reads them in
         * B's /proc files. Ours are put back once B0 is gone (B0 shares our memory as a vfork
         * child; B's is a copy). */
        char comm[16] = "sbx";
        (void)prctl(PR_GET_NAME, comm);
        void *title = proctitle_save();
        proctitle_hide("sbx-reaper");
        /* vfork by design (above); its child only calls reaper_spawn, which never returns */
        /* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.vfork,clang-analyzer-unix.Vfork) */
        pid_t b0 = geteuid() == 0 ? vfork() : fork();
        if (b0 == 0)
                reaper_spawn(f, spec, cx, ns, init_cgroup_fd);
        int err = errno;
        if (b0 > 0)
                (void)RETRY_EINTR(waitpid(b0, NULL, 0)); /* it has left already */
        proctitle_restore(title);
        (void)prctl(PR_SET_NAME, comm);
        if (b0 < 0)
                return sbx_internal(e, err, "failed to start the command");
        /* Only B holds B's end now: if it dies without a word, the read below sees the end
         * of the socket instead of waiting forever. */
        closep(&f->status[1]);
        int r = sync_wait_fd(f->status[0], "the command's reaper", &f->reaper_pidfd, e);
        return r == 0 && f->reaper_pidfd < 0 ? EXEC_NOT_STARTED : r;
}

static int join_namespaces(const int ns[SESSION_NS_COUNT], struct sbx_error *e)
{
        /*
         * LeakSanitizer's exit-time check runs a tracer thread that ptrace-attaches to us; once
         * we are in the session's pid namespace that thread is born there and cannot see us,
         * and the check spins forever. Run it now, before joining (sanitizer builds only).
         */
        if (__lsan_do_leak_check)
                __lsan_do_leak_check();
        /* Before anything inside can see a process of ours: no /proc/<pid>/exe, no ptrace. */
        (void)prctl(PR_SET_DUMPABLE, 0);
        if (geteuid() == 0 && setgroups(0, NULL) < 0)
                return sbx_internal(e, errno, "failed to drop supplementary groups");
        /* Not the cgroup namespace: B and C join it themselves, once born in their cgroups. */
        return session_ns_join_except_cgroup(ns, e);
}

/*
 * RLIMIT_FSIZE for a session whose writable layer holds disk bytes: one MiB above it. No file
 * on the layer or /dev/shm can hold more than disk bytes, so a write that fills them gets
 * ENOSPC as it should; at exactly disk bytes the kernel checks RLIMIT_FSIZE first and a
 * command that fills a tmpfs of that size would be killed by SIGXFSZ instead. The limit still
 * bounds sparse files and files on writable volumes.
 */
uint64_t exec_fsize_for_disk(uint64_t disk)
{
        const uint64_t slack = UINT64_C(1) << 20;
        return disk > UINT64_MAX - slack ? 0 : disk + slack;
}

char **exec_env(const struct exec_request *rq, const struct session_state *st)
{
        char term[128] = "TERM=xterm";
        const char *t = getenv("TERM");
        if (t && *t && strlen(t) < 100 && !strchr(t, '/'))
                snprintf(term, sizeof(term), "TERM=%s", t);
        _cleanup_strv_ char **with_adds = env_merge(st->env, rq->env_add);
        if (!with_adds || !rq->tty)
                return TAKE_PTR(with_adds);
        char *tty_env[] = {term, NULL};
        return env_merge(with_adds, tty_env);
}

int exec_join(const int ns[SESSION_NS_COUNT], const struct session_state *st,
              const struct cgroup_session *cs, const struct exec_request *rq,
              struct exec_result *res, struct sbx_error *e)
{
        struct exec_fds f = EXEC_FDS_INIT;
        struct cgroup_exec cx = CGROUP_EXEC_INIT;
        struct exec_spec spec;
        uint64_t start = now_monotonic_ms();
        _cleanup_strv_ char **env = exec_env(rq, st);
        int r = env ? exec_host_pipes(rq, &f, e) : sbx_internal(e, ENOMEM, "out of memory");
        /* Opened with our host credentials, before setns: what the kernel checks on write. */
        if (r == 0)
                r = cgroup_exec_prepare(st, cs, &cx, e);
        if (r == 0)
                r = join_namespaces(ns, e);
        if (r == 0)
                r = make_inside_fds(rq, &f, e);
        if (r < 0) {
                (void)cgroup_exec_finish(&cx);
                exec_fds_close(&f);
                return r;
        }
        /* the spec the init's server would build from the same request */
        struct exec_wire w;
        exec_wire_from_request(rq, st, env, &f, &w);
        exec_spec_from_wire(&w, f.null, f.pty_slave, &spec);
        spec.seccomp = st->seccomp; /* C loads it: B and C come from outside */

        /* B is born in the v2 init leaf (cx.init_fd; -1 without v2: B moves itself) */
        r = start_reaper(&f, &spec, &cx, ns, cx.init_fd, e);
        if (r == EXEC_NOT_STARTED) /* B took the session's last pid */
                r = start_reaper(&f, &spec, &cx, ns, -1, e);
        if (r == EXEC_NOT_STARTED)
                r = sbx_internal(e, EAGAIN, "the command's reaper did not start");
        cgroup_exec_close_fds(&cx);
        if (r < 0) {
                (void)cgroup_exec_finish(&cx);
                exec_fds_close(&f);
                return r;
        }

        /* The client keeps the read ends, the write end of stdin and its status socket. */
        closep(&f.out[1]);
        closep(&f.err[1]);
        closep(&f.in[0]);
        closep(&f.pty_slave);
        closep(&f.null);
        return exec_relay_finish(&f, &cx, st, rq, start, res, e);
}

int exec_relay_finish(struct exec_fds *f, struct cgroup_exec *cx, const struct session_state *st,
                      const struct exec_request *rq, uint64_t start, struct exec_result *res,
                      struct sbx_error *e)
{
        uint64_t timeout_ms = rq->timeout_ms ? rq->timeout_ms : st->timeout_sec * 1000;
        int r = relay_run(f, rq, timeout_ms, res, e);
        res->duration_ms = now_monotonic_ms() - start;
        /* "Killed by the memory limit": an OOM kill in this exec's cgroup and exit 137. */
        res->oom_killed =
            cgroup_exec_finish(cx) && !res->timed_out && res->exit_code == 128 + SIGKILL;
        exec_fds_close(f);
        return r;
}
