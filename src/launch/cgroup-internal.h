/* SPDX-License-Identifier: MIT */
/* Private to cgroup.c, cgroup_v1.c and cgroup_v2.c. */
#pragma once

#include <stddef.h>

#include "cgroup.h"

#define CG_BIT(k) (1u << (k))
/* The CFS period sbx uses (v1 cpu.cfs_period_us, v2 cpu.max), and the kernel's smallest quota. */
#define CG_CPU_PERIOD_US 100000u
#define CG_CPU_MIN_QUOTA_US 1000u
/* The leaf of <own> that sbx's own host-side processes move into when <own> must enable
 * controllers for its children (cgroup_v2.c), and that clients join in a systemd scope. */
#define SUPERVISOR_LEAF "sbx-supervisor"

/* What the calling process's cgroups are, from /proc/self/cgroup and /proc/self/mountinfo. */
struct cg_host {
        char v2_mount[PATH_MAX];         /* where the cgroup2 hierarchy is mounted, "" when none */
        char v2_own[PATH_MAX];           /* our cgroup in it, "" when none (or not reachable) */
        bool v2_is_root;                 /* that is the hierarchy's root cgroup */
        char v2_avail[256];              /* <v2_own>/cgroup.controllers */
        char v2_enabled[256];            /* <v2_own>/cgroup.subtree_control */
        char v1_own[CG_NCTRL][PATH_MAX]; /* our cgroup in each controller's v1 hierarchy */
        char v1_freezer_own[PATH_MAX];   /* ours in the v1 freezer hierarchy, "" when none */
};
int cg_host_probe(struct cg_host *h);
/* h's own cgroups (v2 and each v1 hierarchy). */
/* 0 or -ENOMEM (owns then has none). */
int cg_owns_from_host(const struct cg_host *h, struct cgroup_owns *owns);

/* Files of a cgroup directory. All return 0 or -errno. */
int cg_write(const char *dir, const char *file, const char *value);
int cg_write_u64(const char *dir, const char *file, uint64_t v);
int cg_read(const char *dir, const char *file, char *buf, size_t n);
int cg_read_at(int dfd, const char *file, char *buf, size_t n);
/* The value of "key N" in a flat-keyed file (memory.events, memory.oom_control) of dfd. */
int cg_read_key_at(int dfd, const char *file, const char *key, uint64_t *ret);
/* mkdir 0755; EEXIST is an error unless exist_ok. */
int cg_mkdir(const char *dir, const char *name, bool exist_ok);
/*
 * The parent of session cgroups (<own>/sbx) is shared by every session of its owner, and the
 * session that empties it removes it: another create can find it gone (ENOENT) between making
 * it and using it. That race is taken again, up to this many times (each loss needs a whole
 * session to end in a window of a few system calls), never reported as a missing feature.
 */
#define CG_PARENT_TRIES 16
/* Make parent (v2: with mask enabled for its children) and check that we may create cgroups
 * in it, again while a concurrent removal makes it vanish. 0 or -errno. */
int cg_parent_ready(const char *parent, bool v2, unsigned mask);
/* dir + "/" + name into out; -ENAMETOOLONG when it does not fit. */
int cg_path(char *out, size_t n, const char *dir, const char *name);
/* word (a controller name) in a list separated by blanks or commas. */
bool cg_has_word(const char *list, const char *word);
/* "+memory +pids" for the controllers in mask. */
void cg_mask_format(unsigned mask, const char *prefix, char *out, size_t n);
/* What a user can do about a limit that cannot be enforced. */
const char *cg_hint(enum cg_ctrl k);
/* "--memory unlimited ([limits] memory = unlimited, SBX_MEMORY=unlimited)" */
const char *cg_unlimited(enum cg_ctrl k);
/* "the memory limit 512M (the default)", for messages: cg_what(c, k).s */
struct cg_what {
        char s[96];
};
struct cg_what cg_what(const struct sbx_config *c, enum cg_ctrl k);

/* cgroup_v2.c */
/* Enable mask in <own>/cgroup.subtree_control (moving this process into <own>/sbx-supervisor
 * first when the kernel says EBUSY), then make <own>/sbx with mask enabled for its children. */
int cg_v2_prepare(const struct cg_host *h, const struct sbx_config *c, unsigned mask, char *parent,
                  size_t n, struct sbx_error *e);
/* Make parent (again: a concurrent teardown removes it when it empties) with mask enabled. */
int cg_v2_make_parent(const char *parent, unsigned mask);
int cg_v2_session_create(const char *parent, unsigned mask, const struct sbx_config *c,
                         const char *id, struct cgroup_session *cs, struct sbx_error *e);
bool cg_v2_kill(int parent_fd, const char *id);
/* Remove <parent>/<id>'s leaves and itself (waiting until it is empty), then the parent when
 * it is empty. */
int cg_v2_remove(int parent_fd, const char *id);
/* Open the parent of a session cgroup path; it must be named "sbx" (what sbx makes). */
int cg_open_parent(const char *session_path);
/* rmdir the "sbx" directory open as parent_fd when it is empty. */
void cg_remove_parent(int parent_fd);
/* Make <session>/exec-<random> (memory.oom.group=1); its name into name. */
int cg_v2_exec_leaf(const char *session, char *name, size_t n, struct sbx_error *e);
bool cg_v2_oom_killed(int leaf_fd);

/* cgroup_v1.c */
/* Make <parent>/<id> into *out with controller k's limit (CG_NCTRL: none), unless *out is set
 * already (controllers mounted together: only the limit is written). */
int cg_v1_session_create(const char *parent, enum cg_ctrl k, const struct sbx_config *c,
                         const char *id, const char **out, int *ret_parent_fd, struct sbx_error *e);
int cg_v1_remove(int parent_fd, const char *id);
uint64_t cg_v1_oom_kills(int memory_fd);
/* `check`: memory.memsw.limit_in_bytes present (swap accounting on). */
bool cg_v1_has_memsw(const char *own);

/*
 * Delegation from systemd (cgroup_delegate.c). On failure why says what went wrong (no
 * libsystemd, no user bus, the manager's refusal, the job's result). 0 or -errno.
 * cg_delegate_scope: a new transient scope "sbx-<random>.scope" (its name in unit) with
 * Delegate=yes, holding this process; returns when systemd's job for it is done.
 * cg_delegate_join: move this process into subcgroup ("/..." or "") of the user's unit.
 * cg_delegate_enter_session: before an exec's processes enter a session's cgroups, which lie
 * in such a scope: move this process into the scope's SUPERVISOR_LEAF unless it is in the
 * scope already (cgroup v2 lets a process move others only between cgroups below one it may
 * write, here the scope, which is the user's). 0 also when nothing had to be done.
 */
int cg_delegate_scope(char *unit, size_t unit_n, char *why, size_t n);
int cg_delegate_join(const char *unit, const char *subcgroup, char *why, size_t n);
int cg_delegate_enter_session(const char *session_cgroup, char *why, size_t n);
