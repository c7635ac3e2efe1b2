/* SPDX-License-Identifier: MIT */
/*
 * A session's resource limits with cgroups (docs/DESIGN.md, "Cgroups"). Each controller
 * (memory, pids, cpu) comes from cgroup v2 when the unified hierarchy offers it to the calling
 * process, else from its own cgroup v1 hierarchy. Cgroups are created only below the caller's
 * own cgroup (read from /proc/self/cgroup); the only foreign file ever written is that own
 * cgroup's cgroup.subtree_control, and only to enable what its cgroup.controllers offers
 * (which is what delegation hands over). Clients take every path from the session's state
 * file, which only the supervisor writes.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"
#include "../session/state.h"
#include "shared/error.h"

enum cg_ctrl { CG_MEMORY, CG_PIDS, CG_CPU, CG_NCTRL };
extern const char *const cg_ctrl_names[CG_NCTRL];

/*
 * Cgroup paths in the structs below are sized to fit (heap), never NULL: cg_none ("") when
 * unused. They are not fixed PATH_MAX arrays because the supervisor and the init keep a plan
 * and a session for life: arrays cost ~60 KiB of touched stack per idle session.
 */
extern const char cg_none[1];
/* *s = a copy of value ("" gives cg_none), the old one freed. 0 or -ENOMEM (*s unchanged). */
int cg_str_set(const char **s, const char *value);
/* Free *s and make it cg_none. */
void cg_str_clear(const char **s);

/* A process's own cgroups (/proc/self/cgroup), whose <own>/sbx children hold sessions. */
struct cgroup_owns {
        const char *v2;           /* "" when none */
        const char *v1[CG_NCTRL]; /* per controller, "" when none */
        const char *v1_freezer;   /* the v1 freezer hierarchy's, "" when none */
};
#define CGROUP_OWNS_INIT                                                                           \
        {                                                                                          \
                .v2 = cg_none, .v1 = {cg_none, cg_none, cg_none}, .v1_freezer = cg_none            \
        }
void cgroup_owns_free(struct cgroup_owns *owns);

/*
 * Where the cgroups of new sessions go, decided once by the creating process (and inherited by
 * its supervisor, which may have been moved into <own>/sbx-supervisor on the way).
 */
struct cgroup_plan {
        unsigned v2_mask, v1_mask;       /* bit per enum cg_ctrl: enforced through v2 / v1 */
        const char *v2_parent;           /* <own v2>/sbx, "" when no v2 cgroup is made */
        const char *v1_parent[CG_NCTRL]; /* <own v1>/sbx for controllers in v1_mask */
        const char *v1_freezer_parent;   /* <own v1 freezer>/sbx when v2 has no cgroup for
                                            the session (pause then freezes through v1) */
        struct cgroup_owns owns;         /* the creating process's own, before any move */
        unsigned unenforced;  /* bit per enum cg_ctrl: a default limit the host cannot enforce for
                                 this user (not with [limits] strict), so the session goes
                                 without it */
        char delegation[300]; /* why no delegated systemd scope could be had (cgroup_delegate),
                                 "" when none was needed or it worked */
};
#define CGROUP_PLAN_INIT                                                                           \
        {                                                                                          \
                .v2_parent = cg_none, .v1_parent = {cg_none, cg_none, cg_none},                    \
                .v1_freezer_parent = cg_none, .owns = CGROUP_OWNS_INIT                             \
        }
/* Free plan's strings (the cgroups stay: cgroup_plan_release removes them). */
void cgroup_plan_free(struct cgroup_plan *plan);

/*
 * The cgroups of one session. Paths are absolute, "" when unused; the parents are held open
 * so that teardown works by fd, also from inside the session's mount namespace (`run`).
 */
struct cgroup_session {
        const char *v2;           /* <v2_parent>/<id>: limits; leaves "init" and "exec-*" */
        const char *v1[CG_NCTRL]; /* <v1_parent>/<id> per controller in v1_mask */
        int v2_parent_fd;         /* <own>/sbx, O_DIRECTORY */
        int v1_parent_fd[CG_NCTRL];
        int v2_init_fd;         /* <v2>/init (CLONE_INTO_CGROUP) */
        const char *v1_freezer; /* <v1_freezer_parent>/<id>: for pause only; "" unused */
        int v1_freezer_parent_fd;
        int v2_limits_memory; /* what cgroup_server_ok read in <v2>/cgroup.subtree_control (set
                                 once at create), for cgroup_exec_prepare; -1 not read yet */
};
#define CGROUP_SESSION_INIT                                                                        \
        {                                                                                          \
                .v2 = cg_none, .v1 = {cg_none, cg_none, cg_none}, .v1_freezer = cg_none,           \
                .v2_parent_fd = -1, .v1_parent_fd = {-1, -1, -1}, .v2_init_fd = -1,                \
                .v1_freezer_parent_fd = -1, .v2_limits_memory = -1                                 \
        }

/*
 * Decide where each limit that c asks for is enforced and make the parents (<own>/sbx) ready:
 * exit 4 naming the missing controller and how to get it when a limit cannot be enforced,
 * unless it is a built-in default and c is not strict: that one goes into plan->unenforced. In
 * cgroup v2, when <own> still has to enable a controller for its children and this process is
 * not alone in it ("no internal processes"), this process moves itself into
 * <own>/sbx-supervisor (still inside its own cgroup) first. Called before forking the
 * supervisor, so the supervisor starts where this process ends up. one_shot (`run`): only the
 * cgroups that enforce a limit; none for pause (nothing can pause it) and no kill-only v2
 * cgroup (its pid namespace takes every process with the init, as for an unlimited `run`).
 * plan is overwritten: it must hold no strings yet (CGROUP_PLAN_INIT).
 */
int cgroup_prepare(const struct sbx_config *c, bool one_shot, struct cgroup_plan *plan,
                   struct sbx_error *e);

/*
 * Delegation from systemd: when this process is unprivileged, c asks for limits, the host has
 * cgroup v2 (no v1 hierarchy for one of them) and this process's own v2 cgroup is not
 * writable (or even_writable: it is, but could not take the limits), ask the systemd user
 * manager (user bus: $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus, else its private
 * socket) for a transient scope with Delegate=yes and move this process into it, where the
 * limits can then be had. 1 when it moved, 0 when not needed (root never asks), or -errno with
 * why set to the reason. cgroup_prepare calls it; `check` too, to answer as a create would.
 */
int cgroup_delegate(const struct sbx_config *c, bool even_writable, char *why, size_t n);

/* Whether c asks for any limit (--memory, --pids, --cpus other than unlimited). */
bool cgroup_limits_wanted(const struct sbx_config *c);

/* Remove the parents of plan when they are empty (a create that failed before its session's
 * cgroups existed; rmdir never removes a cgroup that is in use). */
void cgroup_plan_release(const struct cgroup_plan *plan);

/*
 * Create <parent>/<id> with c's limits, in two steps: the v2 cgroup (and its "init" leaf) before
 * the init's clone, which is born in it; the v1 cgroups (and the v1 freezer) while the init
 * builds its root, which it enters only after (session_spawn_finish): its root is built on the
 * other CPU meanwhile. On failure what either made stays in cs, for cgroup_session_remove.
 */
int cgroup_session_create_v2(const struct cgroup_plan *plan, const struct sbx_config *c,
                             const char *id, struct cgroup_session *cs, struct sbx_error *e);
int cgroup_session_create_v1(const struct cgroup_plan *plan, const struct sbx_config *c,
                             const char *id, struct cgroup_session *cs, struct sbx_error *e);
/* Put pid (the session init) into the v2 "init" leaf, where clone3 with CLONE_INTO_CGROUP was
 * not available. */
int cgroup_session_attach_v2(const struct cgroup_session *cs, pid_t pid, struct sbx_error *e);
/* Put pid (the session init, before it forks) into the session's v1 freezer cgroup, when it
 * has one: everything of the session descends from the init or enters it (cgroup_exec). */
int cgroup_session_attach_freezer(const struct cgroup_session *cs, pid_t pid, struct sbx_error *e);
/* Open the "tasks" file of each v1 cgroup of the session, for the init's own move
 * (sandbox/init.c): fds[k] for controller k, -1 for none and for a directory shared with an
 * earlier controller. On failure none stays open. */
int cgroup_session_open_v1_tasks(const struct cgroup_session *cs, int fds[CG_NCTRL],
                                 struct sbx_error *e);
/* cgroup.kill (v2): every process of the session, at once. Works by fd. true: done (every
 * process has its SIGKILL); false without v2 or cgroup.kill. */
bool cgroup_session_kill(const struct cgroup_session *cs);
/* Wait (bounded) until the session's cgroups are empty, remove them, and the parents when
 * empty; closes the fds and frees the paths. The session's processes must be dead or dying.
 * Works by fd. */
void cgroup_session_remove(struct cgroup_session *cs);
/* Free cs's strings (for _cleanup_: the cgroups and fds are left as they are). */
void cgroup_session_free(struct cgroup_session *cs);
/* Close cs's fds and free its strings, leaving the cgroups to another process that has the same
 * fds (a forked cleaner: session_end). */
void cgroup_session_close(struct cgroup_session *cs);

/*
 * Pause (freeze) or resume the session's processes through the v2 freezer of its cgroup, or
 * the v1 freezer cgroup it has when v2 gave it none, and wait (bounded) until the kernel says
 * every task is frozen (or thawed). -EOPNOTSUPP when the session has neither; -ETIMEDOUT when they
 * did not all stop (the session is thawed again then: never left half-frozen). Works by fd.
 */
int cgroup_session_freeze(const struct cgroup_session *cs, bool freeze);
/* Thaw without waiting (teardown, after cgroup.kill: a frozen task dies on SIGKILL anyway). */
void cgroup_session_thaw(const struct cgroup_session *cs);
/*
 * The end of a session's processes: its v2 cgroup frozen (not waited for), then cgroup.kill.
 * true when both writes were done: no process of the session runs code any more (each has its
 * SIGKILL, or is frozen until the init's death kills it). false without a v2 cgroup (a v1
 * freezer has no kill: the caller's teardown thaws it and kills by the init). Works by fd.
 */
bool cgroup_session_end(const struct cgroup_session *cs);
/* Client side, from a session's state: 1 when its cgroup is frozen (paused; v1: FROZEN or
 * FREEZING), 0 when not or when it has no freezer, -errno when that cannot be read. */
int cgroup_state_frozen(const struct session_state *st);
/* The same for cgroups already looked up (cgroup_session_from_state). */
int cgroup_session_frozen(const struct cgroup_session *cs);
/*
 * A live session's cgroup paths from its state, each checked (absolute, no "..", named after
 * the session, on a cgroup file system); one that fails is left "", which the callers refuse
 * where it limits. 0 or -ENOMEM; free with cgroup_session_free. An exec looks once and asks
 * all its questions of the result.
 */
int cgroup_session_from_state(const struct session_state *st, struct cgroup_session *cs);

/*
 * What a session uses, from the cgroups that enforce its limits (client side, paths from its
 * state). The has_* fields say where a value came from: 2 cgroup v2, 1 cgroup v1, 0 nowhere.
 * Limits are UINT64_MAX when there is none; cpus_milli 0 when no CPU limit.
 */
struct cgroup_usage {
        int has_memory, has_pids, has_cpu, cpu_limit_source;
        bool has_mem_peak;
        uint64_t mem_current, mem_peak, mem_limit;
        uint64_t pids_current, pids_limit;
        uint64_t cpu_usec;   /* CPU time of every process of the session, ever */
        uint64_t cpus_milli; /* the CPU bandwidth limit in thousandths of a CPU */
};
void cgroup_usage_read(const struct session_state *st, struct cgroup_usage *u);

/* Point the state's cgroup keys at cs's paths (borrowed). */
void cgroup_session_to_state(const struct cgroup_session *cs, struct session_state *st);
/* Stale cleanup: kill and remove the cgroups recorded in a dead session's state, after
 * checking that each is a cgroup directory named after the session. */
void cgroup_remove_recorded(const struct session_state *st);
/*
 * Remove the session cgroups below the caller's <own>/sbx parents whose session is gone with
 * nothing left to record it (its supervisor and runtime dir were removed by force, or `run`
 * was SIGKILLed): those older than a minute with no process in them (v2: an empty "init"
 * leaf; v1: rmdir succeeds only when empty). A live session always has its init inside.
 * max_checks: look at no more than that many per parent, from a random one (0: all).
 * cgroup_sweep_owns: the same below the given own cgroups (a plan's: where its creating process
 * was before it may have moved itself into <own>/sbx-supervisor); with defer_waits, a dead v2
 * session's cgroup, whose removal may wait for its leaves to empty, is left (its init leaf
 * gone) and counted in the result, for a sweep without it to remove.
 */
void cgroup_sweep(size_t max_checks);
size_t cgroup_sweep_owns(const struct cgroup_owns *owns, size_t max_checks, bool defer_waits);
/* Remove every stale session with the cgroups it recorded (runtime_reap_stale_sessions), then
 * sweep the unrecorded ones (cgroup_sweep), both with max_checks. */
void cgroup_reap_stale(int rtfd, size_t max_checks);

/*
 * One exec's share of the session's cgroups (client side). B and C enter by migration, which
 * the kernel allows past pids.max: an exec can always start, even in a session whose processes
 * hold every pid it may have (`sbx exec ID kill -9 -1` then recovers it); what the command
 * forks is limited. The client works inside the session's mount namespace once it has joined
 * it: everything it needs afterwards is an fd.
 */
struct cgroup_exec {
        int init_fd;            /* v2 <id>/init, where B is born (clone3); -1 without v2 */
        int init_procs;         /* v2 <id>/init/cgroup.procs (B); -1 without v2 */
        int leaf_procs;         /* v2 cgroup.procs of C's cgroup (below); -1 without v2 */
        int v1_tasks[CG_NCTRL]; /* the session's v1 "tasks" files (B and C); -1 unused */
        int v1_freezer_tasks;   /* its v1 freezer cgroup's "tasks"; -1 unused */
        int session_fd;         /* the session's v2 cgroup directory */
        int leaf_fd;            /* C's v2 cgroup: its own leaf, or <id>/init without one */
        char leaf_name[32];     /* "exec-<random>" when C has its own leaf, else "" */
        int v1_memory_fd;       /* the session's v1 memory cgroup directory */
        uint64_t oom_before;    /* its memory.oom_control oom_kill before the exec */
};
#define CGROUP_EXEC_INIT                                                                           \
        {                                                                                          \
                .init_fd = -1, .init_procs = -1, .leaf_procs = -1, .v1_tasks = {-1, -1, -1},       \
                .v1_freezer_tasks = -1, .session_fd = -1, .leaf_fd = -1, .v1_memory_fd = -1        \
        }

/*
 * Before joining the session's namespaces (the files are opened with the caller's host
 * credentials and cgroup namespace, which is what the kernel checks on the later write): make
 * the exec's leaf (v2, memory.oom.group=1) and open the cgroup.procs files. cs: the session's
 * cgroups as looked up once by the caller (cgroup_session_from_state), checked against st.
 */
int cgroup_exec_prepare(const struct session_state *st, const struct cgroup_session *cs,
                        struct cgroup_exec *x, struct sbx_error *e);
/*
 * Whether an exec may go through the session init's server (sandbox/exec_server.c): every
 * session but one whose v2 cgroup limits memory. On v1 the init and its reapers are in
 * neither the memory nor the pids cgroup (sandbox/init.c): each command moves itself into
 * both, so no fork of sbx's own is ever charged to a memory cgroup the command filled, or
 * refused by pids.max. Under v2 a memory limit gives each exec a leaf of its own
 * (memory.oom.group), which a process under the session's filter cannot clone into: the
 * client's path (launch/join.c). Checked before connecting: a connection alone makes the init
 * fork a B. What it read stays in cs, so that cgroup_exec_prepare on that path, which follows
 * with the same cs, does not read it again.
 */
bool cgroup_server_ok(struct cgroup_session *cs);
/*
 * A command about to be handed to the init (exec, or `run`'s one command) where
 * cgroup_server_ok said yes: with a v1 memory limit, x gets the session's OOM count before the
 * command, for `oom_killed` (cgroup_exec_finish).
 */
int cgroup_server_prepare(const struct session_state *st, const struct cgroup_session *cs,
                          struct cgroup_exec *x, struct sbx_error *e);
/* In C, first thing: move itself into the exec's cgroups. */
int cgroup_exec_enter_command(struct cgroup_exec *x);
/* In B, right after forking C: move itself into the session's cgroups; closes the fds. */
int cgroup_exec_enter_reaper(struct cgroup_exec *x);
/* The client after fork: drop the fds only B and C use. */
void cgroup_exec_close_fds(struct cgroup_exec *x);
/* After the command ended: whether the memory limit killed one of its processes; then remove
 * the leaf when it is empty (else the supervisor does at the end of the session). */
bool cgroup_exec_finish(struct cgroup_exec *x);

/* `sbx check`: can a limit on controller k be enforced here, and by which hierarchy. */
struct cgroup_check {
        bool available;
        int version;     /* the hierarchy that provides it: 2, 1, or 0 for none */
        char path[4096]; /* the cgroup sbx creates sessions below, "" for none */
        char detail[900];
};
void cgroup_check_controller(enum cg_ctrl k, struct cgroup_check *out);
/* cgroup.kill (v2, also on hybrid hosts) for teardown. */
void cgroup_check_kill(struct cgroup_check *out);
