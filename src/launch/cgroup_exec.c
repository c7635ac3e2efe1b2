/* SPDX-License-Identifier: MIT */
/*
 * One exec's share of the session's cgroups (docs/DESIGN.md, "Cgroups"): the client opens the
 * files from the session's state before it joins the session, B and C move themselves in, and
 * the client reads whether the memory limit killed the command.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

/*
 * The file that moves the writer: v2's cgroup.procs, v1's "tasks". B and C have one thread each,
 * and a thread moving itself through "tasks" does not take the kernel's global
 * cgroup_threadgroup_rwsem, whose write side waits for an RCU grace period (8-20 ms here after
 * a pause; ~0.1 ms without). v2 needs no move on the fast path: clone3 into the cgroup.
 */
static int open_procs(const char *dir, const char *file, int *ret, struct sbx_error *e)
{
        char p[PATH_MAX];
        if (cg_path(p, sizeof(p), dir, file) < 0)
                return sbx_internal(e, ENAMETOOLONG, "cgroup path too long");
        *ret = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (*ret < 0)
                return sbx_internal(e, errno, "failed to open the session's cgroup '%s'", dir);
        return 0;
}

static int open_dir(const char *dir, int *ret, struct sbx_error *e)
{
        *ret = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return *ret < 0 ? sbx_internal(e, errno, "failed to open the session's cgroup '%s'", dir)
                        : 0;
}

/*
 * Whether the session's v2 cgroup limits memory (the controller is on for its children). Only
 * then does an exec get a leaf of its own: the leaf is for memory.oom.group (an OOM kill takes
 * the exec's tree, never the init) and for the OOM count of `exec --json`. Without it the
 * command goes into the init leaf with B, still under the session's pids and cpu limits, and an
 * exec costs no mkdir/rmdir (issue 6: ~0.2 ms of each exec on a hybrid host, whose cgroup2 has
 * no controllers at all). A file that cannot be read counts as "limits memory": the leaf.
 */
static bool session_limits_memory(int session_fd)
{
        char list[256];
        return cg_read_at(session_fd, "cgroup.subtree_control", list, sizeof(list)) < 0 ||
               cg_has_word(list, "memory");
}

/* The same for an exec: what cgroup_server_ok read already (the file is written only when the
 * session is made), else a look through session_fd. */
static bool exec_limits_memory(const struct cgroup_session *cs, int session_fd)
{
        if (cs->v2_limits_memory >= 0)
                return cs->v2_limits_memory > 0;
        return session_limits_memory(session_fd);
}

/*
 * recorded: a cgroup path of st; found: what cgroup_session_from_state made of it, "" when it
 * is gone or not a cgroup. Such a cgroup is never taken as none: the command would run without
 * the session's limit.
 */
static int check_found(const struct session_state *st, const char *recorded, const char *found,
                       struct sbx_error *e)
{
        if (recorded && !found[0])
                return sbx_internal(e, 0, "the cgroups of session '%s' are missing", st->id);
        return 0;
}

int cgroup_exec_prepare(const struct session_state *st, const struct cgroup_session *cs,
                        struct cgroup_exec *x, struct sbx_error *e)
{
        const char *v1[CG_NCTRL] = {st->cgroup_v1_memory, st->cgroup_v1_pids, st->cgroup_v1_cpu};
        int r = check_found(st, st->cgroup, cs->v2, e);
        for (int k = 0; r == 0 && k < CG_NCTRL; k++)
                r = check_found(st, v1[k], cs->v1[k], e);
        if (r < 0)
                return r;
        char init[PATH_MAX], leaf[PATH_MAX], why[300];
        /* a session in a delegated systemd scope: its cgroups can only be entered from there */
        if (cs->v2[0] && (r = cg_delegate_enter_session(cs->v2, why, sizeof(why))) < 0)
                return sbx_unsupported(e, 0, "cannot enter the cgroups of session '%s': %s", st->id,
                                       why);
        if (cs->v2[0]) {
                r = cg_path(init, sizeof(init), cs->v2, "init");
                if (r == 0)
                        r = open_procs(init, "cgroup.procs", &x->init_procs, e);
                if (r == 0)
                        r = open_dir(init, &x->init_fd, e);
                if (r == 0)
                        r = open_dir(cs->v2, &x->session_fd, e);
                if (r == 0 && exec_limits_memory(cs, x->session_fd)) {
                        r = cg_v2_exec_leaf(cs->v2, x->leaf_name, sizeof(x->leaf_name), e);
                        if (r == 0 && (r = cg_path(leaf, sizeof(leaf), cs->v2, x->leaf_name)) == 0)
                                r = open_dir(leaf, &x->leaf_fd, e);
                        if (r == 0)
                                r = open_procs(leaf, "cgroup.procs", &x->leaf_procs, e);
                } else if (r == 0) {
                        /* no leaf of its own: C goes where B goes, and nothing is removed */
                        x->leaf_fd = fcntl(x->init_fd, F_DUPFD_CLOEXEC, 3);
                        x->leaf_procs = fcntl(x->init_procs, F_DUPFD_CLOEXEC, 3);
                        if (x->leaf_fd < 0 || x->leaf_procs < 0)
                                r = sbx_internal(e, errno, "failed to open the session's cgroup");
                }
        }
        for (int k = 0; r == 0 && k < CG_NCTRL; k++) {
                bool dup = false;
                for (int j = 0; j < k; j++)
                        dup |= cs->v1[j][0] && strcmp(cs->v1[j], cs->v1[k]) == 0;
                if (cs->v1[k][0] && !dup)
                        r = open_procs(cs->v1[k], "tasks", &x->v1_tasks[k], e);
        }
        if (r == 0 && cs->v1_freezer[0])
                r = open_procs(cs->v1_freezer, "tasks", &x->v1_freezer_tasks, e);
        if (r == 0 && cs->v1[CG_MEMORY][0] &&
            (r = open_dir(cs->v1[CG_MEMORY], &x->v1_memory_fd, e)) == 0)
                x->oom_before = cg_v1_oom_kills(x->v1_memory_fd);
        if (r < 0)
                (void)cgroup_exec_finish(x);
        return r;
}

/* Whether the session's v2 cgroup limits memory (or cannot be looked at), kept in cs. */
static bool v2_limits_memory(struct cgroup_session *cs)
{
        if (!cs->v2[0])
                return false;
        _cleanup_close_ int fd = open(cs->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        cs->v2_limits_memory = fd < 0 || session_limits_memory(fd);
        return cs->v2_limits_memory;
}

bool cgroup_server_ok(struct cgroup_session *cs)
{
        /* v1: the init is outside the memory cgroup and each command moves itself in (the
         * init's server serves); v2: a memory limit wants a leaf per exec (the client's) */
        return !v2_limits_memory(cs);
}

int cgroup_server_prepare(const struct session_state *st, const struct cgroup_session *cs,
                          struct cgroup_exec *x, struct sbx_error *e)
{
        /* as for an exec, but only v1 memory is opened here: the init's server puts the
         * command into the session's cgroups itself */
        int r = check_found(st, st->cgroup_v1_memory, cs->v1[CG_MEMORY], e);
        if (r < 0 || !cs->v1[CG_MEMORY][0])
                return r;
        /* oom_killed: the session's OOM kills before and after (cgroup_exec_finish) */
        r = open_dir(cs->v1[CG_MEMORY], &x->v1_memory_fd, e);
        if (r == 0)
                x->oom_before = cg_v1_oom_kills(x->v1_memory_fd);
        return r;
}

/* Move the calling process into the cgroup of each fd ("0" = the writer). */
static int enter(const int *fds, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0 && write_all(fds[i], "0", 1) < 0)
                        return negerrno();
        return 0;
}

int cgroup_exec_enter_command(struct cgroup_exec *x)
{
        int r = enter(&x->leaf_procs, 1);
        if (r == 0)
                r = enter(&x->v1_freezer_tasks, 1);
        return r < 0 ? r : enter(x->v1_tasks, CG_NCTRL);
}

int cgroup_exec_enter_reaper(struct cgroup_exec *x)
{
        int r = enter(&x->init_procs, 1);
        if (r == 0)
                r = enter(&x->v1_freezer_tasks, 1);
        if (r == 0)
                r = enter(x->v1_tasks, CG_NCTRL);
        cgroup_exec_close_fds(x);
        return r;
}

void cgroup_exec_close_fds(struct cgroup_exec *x)
{
        closep(&x->init_fd);
        closep(&x->init_procs);
        closep(&x->leaf_procs);
        for (int k = 0; k < CG_NCTRL; k++)
                closep(&x->v1_tasks[k]);
        closep(&x->v1_freezer_tasks);
}

bool cgroup_exec_finish(struct cgroup_exec *x)
{
        bool oom = false;
        cgroup_exec_close_fds(x);
        if (x->leaf_fd >= 0)
                oom = cg_v2_oom_killed(x->leaf_fd);
        /* EBUSY: background processes remain; the supervisor removes it at the end. */
        if (x->session_fd >= 0 && x->leaf_name[0])
                (void)unlinkat(x->session_fd, x->leaf_name, AT_REMOVEDIR);
        if (x->v1_memory_fd >= 0)
                oom |= cg_v1_oom_kills(x->v1_memory_fd) > x->oom_before;
        closep(&x->leaf_fd);
        closep(&x->session_fd);
        closep(&x->v1_memory_fd);
        x->leaf_name[0] = '\0';
        return oom;
}
