/* SPDX-License-Identifier: MIT */
/*
 * Running a file operation inside a session with exactly a sandboxed process's confinement
 * (docs/DESIGN.md, "File commands"). The child reports back over a pipe: a fixed header with
 * its error, then the output bytes.
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "../sandbox/seccomp.h"
#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/util.h"
#include "cgroup.h"
#include "confined.h"
#include "../session/audit.h"
#include "session_ref.h"

#define CONFINED_MAX_OUTPUT (64u << 20)

struct confined_header {
        int32_t ret;
        struct sbx_wire_error err;
        uint64_t len;
};

/* A step before the operation failed: the header alone, with e. */
_noreturn_ static void header_fail(int wfd, const struct sbx_error *e)
{
        struct confined_header h = {.ret = -1};
        sbx_error_pack(e, &h.err);
        (void)write_all(wfd, &h, sizeof(h));
        _exit(1);
}

_noreturn_ static void child_main(const struct session_state *st, int wfd, confined_fn fn,
                                  void *arg)
{
        struct sbx_error e = {0};
        _cleanup_buf_ struct buf out = {0};
        (void)prctl(PR_SET_DUMPABLE, 0);
        /* The caller's stdio must not be reachable either: a path like /proc/self/fd/0
         * planted in the session would otherwise read the caller's stdin. */
        int null = open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                if (null < 0 || dup2(null, i) < 0)
                        _exit(1);
        int keep[] = {wfd};
        close_all_except(keep, 1);
        /* exactly the command's lock-down (exec_child.c) */
        int r = exec_child_lock_down(st->workdir, st->seccomp, EXIT_FAILED, &e);
        if (r == 0)
                r = fn(arg, &out, &e);
        struct confined_header h = {.ret = r, .len = out.len};
        sbx_error_pack(&e, &h.err);
        if (write_all(wfd, &h, sizeof(h)) < 0 || write_all(wfd, out.data, out.len) < 0)
                _exit(1);
        _exit(0);
}

/* Whether process pid is stopped (state T, or t: stopped by a tracer). */
static bool stopped(pid_t pid)
{
        int s = proc_state(pid);
        return s == 'T' || s == 't';
}

/*
 * Read rfd to its end. The helper runs as the session's uid, so a process in the session can
 * send it SIGSTOP (it cannot be blocked): it is looked at whenever no byte came for half a
 * second, and a stopped one is killed (-ESTRPIPE) instead of being waited for without end.
 */
static int read_from(int rfd, pid_t helper, struct buf *all, size_t max)
{
        for (;;) {
                struct pollfd p = {.fd = rfd, .events = POLLIN};
                int n = poll(&p, 1, 500);
                if (n < 0 && errno != EINTR)
                        return negerrno();
                if (n == 0 && helper > 0 && stopped(helper)) {
                        (void)kill(helper, SIGKILL);
                        return -ESTRPIPE;
                }
                if (n <= 0)
                        continue;
                char tmp[65536];
                ssize_t k = read(rfd, tmp, sizeof(tmp));
                if (k < 0 && errno != EINTR)
                        return negerrno();
                if (k == 0)
                        return 0;
                if (k > 0 && all->len + (size_t)k > max)
                        return -EFBIG;
                if (k > 0 && buf_append(all, tmp, (size_t)k) < 0)
                        return -ENOMEM;
        }
}

static int read_result(int rfd, pid_t helper, struct buf *out, struct sbx_error *e)
{
        struct confined_header h;
        _cleanup_buf_ struct buf all = {0};
        int r = read_from(rfd, helper, &all, CONFINED_MAX_OUTPUT + sizeof(h));
        if (r == -ESTRPIPE)
                return sbx_fail(e, EXIT_FAILED, "internal", 0,
                                "the file operation was stopped by a process of the session "
                                "(SIGSTOP) and was ended");
        if (r < 0 || all.len < sizeof(h))
                return sbx_internal(e, r < 0 ? -r : 0, "the file operation ended without a result");
        memcpy(&h, all.data, sizeof(h));
        if (h.len != all.len - sizeof(h))
                return sbx_internal(e, 0, "the file operation returned a truncated result");
        if (buf_append(out, all.data + sizeof(h), (size_t)h.len) < 0)
                return -ENOMEM;
        if (h.err.exit_code) {
                struct sbx_error op;
                sbx_error_unpack(&h.err, &op);
                sbx_fail(e, op.exit_code, op.code, 0, "%s", op.message);
        }
        return h.ret;
}

static void write_audit(const struct session_ref *s, const struct confined_audit *a, int r,
                        const struct sbx_error *e)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, s->st.id, a->event);
        audit_str(&b, "path", a->path);
        audit_str(&b, "workdir", s->st.workdir);
        if (a->bytes >= 0)
                audit_int(&b, "bytes", a->bytes);
        if (a->replace_all >= 0)
                audit_bool(&b, "replace_all", a->replace_all);
        bool ok = r >= 0 && e->exit_code == 0;
        audit_int(&b, "exit_code", ok ? 0 : e->exit_code ? e->exit_code : EXIT_SBX_FAILED);
        if (!ok) {
                audit_str(&b, "error", e->code ? e->code : "internal");
                audit_str(&b, "message", e->message);
        }
        (void)audit_commit(s->auditfd, &b);
}

int session_run_confined(const char *id_or_name, confined_fn fn, void *arg,
                         const struct confined_audit *audit, struct buf *out, struct sbx_error *e)
{
        struct session_ref s = SESSION_REF_INIT;
        int r = session_ref_open(id_or_name, &s, false, e);
        if (r < 0) {
                session_ref_close(&s);
                return r;
        }
        /* Run the join in a child so this process keeps its own namespaces. */
        (void)prctl(PR_SET_DUMPABLE, 0);
        /* the helper below is our grandchild: have it re-parented to us, and reap it */
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
        if (geteuid() == 0)
                (void)setgroups(0, NULL);
        /* The helper is limited like a command: it enters the session's cgroups (opened here,
         * before any setns, as for exec). */
        struct cgroup_exec cx = CGROUP_EXEC_INIT;
        if ((r = cgroup_exec_prepare(&s.st, &s.cg, &cx, e)) < 0) {
                session_ref_close(&s);
                return r;
        }
        int p[2] = {-1, -1}, pp[2] = {-1, -1}; /* the result; the helper's pid, from its parent */
        if (pipe2(p, O_CLOEXEC) < 0 || pipe2(pp, O_CLOEXEC) < 0) {
                int err = errno;
                for (int i = 0; i < 2; i++) {
                        closep(&p[i]);
                        closep(&pp[i]);
                }
                (void)cgroup_exec_finish(&cx);
                session_ref_close(&s);
                return sbx_internal(e, err, "failed to create a pipe");
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                close(pp[0]);
                closep(&s.auditfd); /* the sandbox side never holds the log */
                /* the caller's command line and environment stay out of the session's view */
                proctitle_hide("sbx-files");
                struct sbx_error je = {0};
                if (session_ns_join_except_cgroup(s.ns, &je) < 0) {
                        sbx_internal(&je, 0, "failed to enter the session");
                        header_fail(p[1], &je);
                }
                /* setns(CLONE_NEWPID) applies to children: fork once more to be inside,
                 * born in the exec's v2 leaf when possible (no migration: fork_into_cgroup) */
                bool in_leaf;
                pid_t inner = fork_into_cgroup(cx.leaf_fd, &in_leaf);
                if (inner == 0 && in_leaf)
                        closep(&cx.leaf_procs);
                if (inner == 0 &&
                    (session_ns_join_cgroup(s.ns) < 0 || cgroup_exec_enter_command(&cx) < 0)) {
                        sbx_internal(&je, 0,
                                     "failed to move the file operation into the session's cgroup");
                        header_fail(p[1], &je);
                }
                if (inner == 0) {
                        close(pp[1]);
                        child_main(&s.st, p[1], fn, arg);
                }
                (void)write_all(pp[1], &inner, sizeof(inner));
                _exit(inner < 0 ? 1 : 0);
        }
        close(p[1]);
        close(pp[1]);
        cgroup_exec_close_fds(&cx);
        if (pid < 0) {
                close(p[0]);
                close(pp[0]);
                (void)cgroup_exec_finish(&cx);
                session_ref_close(&s);
                return sbx_internal(e, errno, "failed to fork");
        }
        pid_t helper = 0; /* its host pid, ours to reap once its parent is gone (subreaper) */
        if (RETRY_EINTR(read(pp[0], &helper, sizeof(helper))) != (ssize_t)sizeof(helper))
                helper = 0;
        close(pp[0]);
        r = read_result(p[0], helper, out, e);
        close(p[0]);
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        while (RETRY_EINTR(waitpid(-1, NULL, 0)) > 0)
                ;
        (void)cgroup_exec_finish(&cx);
        if (audit)
                write_audit(&s, audit, r, e);
        session_ref_close(&s);
        return r;
}
