/* SPDX-License-Identifier: MIT */
/*
 * Cgroups of a session (docs/DESIGN.md, "Cgroups"): finding the caller's own cgroups, deciding
 * which hierarchy enforces each limit, the session's life cycle, and what an exec needs.
 * cgroup_v2.c and cgroup_v1.c hold what differs between the two.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

const char *const cg_ctrl_names[CG_NCTRL] = {"memory", "pids", "cpu"};

struct cg_what cg_what(const struct sbx_config *c, enum cg_ctrl k)
{
        struct cg_what w;
        const char *dflt = "";
        switch (k) {
        case CG_MEMORY:
                if (c->memory_origin == SBX_ORIGIN_DEFAULT)
                        dflt = " (the default)";
                if (c->memory_bytes % (UINT64_C(1) << 20) == 0)
                        snprintf(w.s, sizeof(w.s), "the memory limit %lluM%s",
                                 (unsigned long long)(c->memory_bytes >> 20), dflt);
                else
                        snprintf(w.s, sizeof(w.s), "the memory limit %llu bytes%s",
                                 (unsigned long long)c->memory_bytes, dflt);
                break;
        case CG_PIDS:
                if (c->pids_origin == SBX_ORIGIN_DEFAULT)
                        dflt = " (the default)";
                snprintf(w.s, sizeof(w.s), "the pids limit %llu%s", (unsigned long long)c->pids,
                         dflt);
                break;
        default:
                if (c->cpus_origin == SBX_ORIGIN_DEFAULT)
                        dflt = " (the default)";
                snprintf(w.s, sizeof(w.s), "the cpus limit %llu.%03llu%s",
                         (unsigned long long)(c->cpus_milli / 1000),
                         (unsigned long long)(c->cpus_milli % 1000), dflt);
                break;
        }
        return w;
}

const char *cg_unlimited(enum cg_ctrl k)
{
        static const char *const u[CG_NCTRL] = {
            "--memory unlimited ([limits] memory = unlimited, SBX_MEMORY=unlimited)",
            "--pids unlimited ([limits] pids = unlimited, SBX_PIDS=unlimited)",
            "--cpus unlimited ([limits] cpus = unlimited, SBX_CPUS=unlimited)",
        };
        return u[k];
}

const char *cg_hint(enum cg_ctrl k)
{
#define DELEGATE(ctrl)                                                                             \
        "run sbx as root or in a cgroup delegated to you (systemd-run --user --scope -p "          \
        "Delegate=yes sbx ...; or, as root, make a cgroup, chown it and its files to you, and "    \
        "on cgroup v2 write +" ctrl " to its parent's cgroup.subtree_control), or ask for no "     \
        "limit: "
        static const char *const hints[CG_NCTRL] = {
            DELEGATE("memory") "--memory unlimited ([limits] memory = unlimited, "
                               "SBX_MEMORY=unlimited)",
            DELEGATE("pids") "--pids unlimited ([limits] pids = unlimited, SBX_PIDS=unlimited)",
            DELEGATE("cpu") "--cpus unlimited ([limits] cpus = unlimited, SBX_CPUS=unlimited)",
        };
#undef DELEGATE
        return hints[k];
}

/* ---- where our cgroups are ---- */

/* Undo the octal escapes of /proc/self/mountinfo ("\040" for a blank) in place. */
static void unescape_octal(char *s)
{
        char *o = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *o++ = *p;
        }
        *o = '\0';
}

/* mountpoint + (path below root) into out; false when path is not below the mount's root. */
static bool join_mount(char *out, size_t n, const char *mnt, const char *root, const char *path)
{
        size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
        if (rl && (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0')))
                return false;
        const char *rel = path + rl;
        if (strcmp(rel, "/") == 0)
                rel = "";
        int k = snprintf(out, n, "%s%s", mnt, rel);
        return k > 0 && (size_t)k < n;
}

/* Our path in the v1 hierarchy that has controller ctl ("" when none), or in v2 (ctl NULL),
 * from the text of /proc/self/cgroup. */
static bool own_path(const char *cgroups, const char *ctl, char *out, size_t n)
{
        char line[PATH_MAX + 256];
        for (const char *p = cgroups; *p;) {
                size_t len = strcspn(p, "\n");
                const char *next = p + len + (p[len] == '\n');
                if (len >= sizeof(line)) {
                        p = next;
                        continue;
                }
                memcpy(line, p, len);
                line[len] = '\0';
                p = next;
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c1 = *c2 = '\0';
                bool v2 = strcmp(line, "0") == 0 && c1[1] == '\0';
                if (ctl ? (!v2 && cg_has_word(c1 + 1, ctl)) : v2) {
                        snprintf(out, n, "%s", c2 + 1);
                        return strlen(c2 + 1) < n && c2[1] == '/';
                }
        }
        return false;
}

int cg_host_probe(struct cg_host *h)
{
        char v2path[PATH_MAX] = "", v1path[CG_NCTRL][PATH_MAX] = {{0}};
        memset(h, 0, sizeof(*h));
        /* read once: the kernel builds the text anew for every read */
        _cleanup_buf_ struct buf cgroups = {0};
        (void)read_file_at(AT_FDCWD, "/proc/self/cgroup", &cgroups, 64 * 1024);
        const char *text = cgroups.data ? cgroups.data : ""; /* unreadable: in no cgroup */
        bool has_v2 = own_path(text, NULL, v2path, sizeof(v2path));
        bool has_v1[CG_NCTRL];
        for (int k = 0; k < CG_NCTRL; k++)
                has_v1[k] = own_path(text, cg_ctrl_names[k], v1path[k], PATH_MAX);
        char frpath[PATH_MAX] = "";
        bool has_freezer = own_path(text, "freezer", frpath, sizeof(frpath));

        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return negerrno();
        char line[3 * PATH_MAX];
        while (fgets(line, sizeof(line), f)) {
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
                char *fields[5], *save = NULL, *p = line;
                int nf = 0;
                for (; nf < 5 && (fields[nf] = strtok_r(p, " ", &save)); nf++)
                        p = NULL;
                char *sep = nf == 5 ? strstr(save, " - ") : NULL;
                if (!sep)
                        continue;
                char fstype[32] = "", super[512] = "";
                if (sscanf(sep + 3, "%31s %*s %511s", fstype, super) < 2)
                        continue;
                char *root = fields[3], *mnt = fields[4];
                unescape_octal(root);
                unescape_octal(mnt);
                if (strcmp(fstype, "cgroup2") == 0 && has_v2 && !h->v2_own[0] &&
                    join_mount(h->v2_own, sizeof(h->v2_own), mnt, root, v2path)) {
                        snprintf(h->v2_mount, sizeof(h->v2_mount), "%s", mnt);
                        h->v2_is_root = strcmp(v2path, "/") == 0;
                }
                for (int k = 0; strcmp(fstype, "cgroup") == 0 && k < CG_NCTRL; k++)
                        if (has_v1[k] && !h->v1_own[k][0] && cg_has_word(super, cg_ctrl_names[k]))
                                (void)join_mount(h->v1_own[k], PATH_MAX, mnt, root, v1path[k]);
                if (strcmp(fstype, "cgroup") == 0 && has_freezer && !h->v1_freezer_own[0] &&
                    cg_has_word(super, "freezer"))
                        (void)join_mount(h->v1_freezer_own, PATH_MAX, mnt, root, frpath);
        }
        if (h->v2_own[0]) {
                (void)cg_read(h->v2_own, "cgroup.controllers", h->v2_avail, sizeof(h->v2_avail));
                (void)cg_read(h->v2_own, "cgroup.subtree_control", h->v2_enabled,
                              sizeof(h->v2_enabled));
        }
        return 0;
}

/* ---- plan, create, remove ---- */

static unsigned wanted(const struct sbx_config *c)
{
        return (c->memory_bytes ? CG_BIT(CG_MEMORY) : 0) | (c->pids ? CG_BIT(CG_PIDS) : 0) |
               (c->cpus_milli ? CG_BIT(CG_CPU) : 0);
}

bool cgroup_limits_wanted(const struct sbx_config *c)
{
        return wanted(c) != 0;
}

static int missing(const struct cg_host *h, const struct sbx_config *c, enum cg_ctrl k,
                   struct sbx_error *e)
{
        const char *name = cg_ctrl_names[k];
        if (h->v2_own[0])
                return sbx_unsupported(e, 0,
                                       "cannot enforce %s: cgroup v2 controller '%s' is not "
                                       "available in '%s' (its cgroup.controllers: '%s') and no "
                                       "cgroup v1 '%s' hierarchy is mounted; %s",
                                       cg_what(c, k).s, name, h->v2_own, h->v2_avail, name,
                                       cg_hint(k));
        return sbx_unsupported(e, 0,
                               "cannot enforce %s: no cgroup '%s' controller is mounted (neither "
                               "cgroup v2 nor v1); %s",
                               cg_what(c, k).s, name, cg_hint(k));
}

/*
 * Pause needs a freezer: cgroup v2's cgroup.freeze when the session gets a v2 cgroup, else the
 * v1 freezer hierarchy's <own>/sbx (hosts without a usable cgroup2). Best effort: without it
 * the session works and `pause` says exit 4.
 */
static void prepare_freezer(const struct cg_host *h, struct cgroup_plan *plan)
{
        char p[PATH_MAX];
        if (plan->v2_parent[0] || !h->v1_freezer_own[0] ||
            cg_path(p, sizeof(p), h->v1_freezer_own, "sbx") < 0 || cg_parent_ready(p, false, 0) < 0)
                cg_str_clear(&plan->v1_freezer_parent);
        else if (cg_str_set(&plan->v1_freezer_parent, p) < 0)
                (void)rmdir(p); /* unless another session uses it */
}

/*
 * A built-in default limit that the host cannot enforce for this user may go without (not with
 * [limits] strict): the session then runs without it and says so (cgroup_plan.unenforced). A
 * limit that was asked for (flag, file, SBX_*) never does.
 */
static bool may_go_without(const struct sbx_config *c, enum cg_ctrl k)
{
        const enum sbx_origin o[CG_NCTRL] = {c->memory_origin, c->pids_origin, c->cpus_origin};
        return !c->strict_limits && o[k] == SBX_ORIGIN_DEFAULT;
}

/* Make <own v1>/sbx for each controller of plan->v1_mask; a default that cannot have it goes
 * without. */
static int prepare_v1(const struct cg_host *h, const struct sbx_config *c, struct cgroup_plan *plan,
                      struct sbx_error *e)
{
        for (int k = 0; k < CG_NCTRL; k++) {
                if (!(plan->v1_mask & CG_BIT(k)))
                        continue;
                char p[PATH_MAX] = "";
                int r = cg_path(p, sizeof(p), h->v1_own[k], "sbx");
                if (r == 0)
                        r = cg_parent_ready(p, false, 0);
                if (r < 0 && may_go_without(c, (enum cg_ctrl)k)) {
                        plan->v1_mask &= ~CG_BIT(k);
                        plan->unenforced |= CG_BIT(k);
                        continue;
                }
                if (r == 0 && (r = cg_str_set(&plan->v1_parent[k], p)) < 0) {
                        (void)rmdir(p); /* unless another session uses it */
                        plan->v1_mask &= CG_BIT(k) - 1;
                        cgroup_plan_release(plan);
                        return sbx_internal(e, -r, "out of memory");
                }
                if (r < 0) {
                        plan->v1_mask &= CG_BIT(k) - 1; /* the ones made so far */
                        cgroup_plan_release(plan);
                        return sbx_unsupported(
                            e, 0,
                            "cannot enforce %s: cgroup v1 '%s' cgroup '%s' cannot be created "
                            "(%s)%s%s%s; %s",
                            cg_what(c, (enum cg_ctrl)k).s, cg_ctrl_names[k], p, strerror(-r),
                            h->v2_own[0] ? " and cgroup v2 does not offer the controller to '" : "",
                            h->v2_own, h->v2_own[0] ? "'" : "", cg_hint((enum cg_ctrl)k));
                }
        }
        return 0;
}

/* An error that a delegated scope would have avoided also says why there was none. */
static int with_delegation(int r, const struct cgroup_plan *plan, struct sbx_error *e)
{
        size_t used = strlen(e->message);
        if (r < 0 && plan->delegation[0] && e->exit_code == EXIT_UNSUPPORTED)
                snprintf(e->message + used, sizeof(e->message) - used,
                         " (no delegated systemd scope: %s)", plan->delegation);
        return r;
}

static int prepare(const struct sbx_config *c, bool one_shot, struct cgroup_plan *plan,
                   struct sbx_error *e);

int cgroup_prepare(const struct sbx_config *c, bool one_shot, struct cgroup_plan *plan,
                   struct sbx_error *e)
{
        *plan = (struct cgroup_plan)CGROUP_PLAN_INIT;
        char why[sizeof(plan->delegation)];
        /* before the probe of prepare(): a scope changes what this process's own cgroup is */
        int d = cgroup_delegate(c, false, why, sizeof(why));
        int r = prepare(c, one_shot, plan, e);
        /* A cgroup of the user's own that cannot take the limits either: a terminal's scope
         * under the user manager, shared with the shell (cgroup v2 gives controllers only to a
         * cgroup without processes). A scope of sbx's own then, and the plan made again there
         * (the first one's parent, if it made one, removed). */
        if (d == 0 && (r < 0 ? e->exit_code == EXIT_UNSUPPORTED : plan->unenforced != 0) &&
            (d = cgroup_delegate(c, true, why, sizeof(why))) > 0) {
                if (r == 0)
                        cgroup_plan_release(plan);
                memset(e, 0, sizeof(*e));
                r = prepare(c, one_shot, plan, e);
        }
        if (d < 0)
                snprintf(plan->delegation, sizeof(plan->delegation), "%s", why);
        return with_delegation(r, plan, e);
}

static int prepare(const struct sbx_config *c, bool one_shot, struct cgroup_plan *plan,
                   struct sbx_error *e)
{
        struct cg_host h;
        cgroup_plan_free(plan);
        *plan = (struct cgroup_plan)CGROUP_PLAN_INIT;
        if (cg_host_probe(&h) < 0)
                return wanted(c) ? sbx_unsupported(e, errno, "cannot read /proc/self/mountinfo")
                                 : 0;
        if (cg_owns_from_host(&h, &plan->owns) < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        for (int k = 0; k < CG_NCTRL; k++) {
                if (!(wanted(c) & CG_BIT(k)))
                        continue;
                if (h.v2_own[0] && cg_has_word(h.v2_avail, cg_ctrl_names[k]))
                        plan->v2_mask |= CG_BIT(k);
                else if (h.v1_own[k][0])
                        plan->v1_mask |= CG_BIT(k);
                else if (may_go_without(c, (enum cg_ctrl)k))
                        plan->unenforced |= CG_BIT(k);
                else
                        return missing(&h, c, (enum cg_ctrl)k, e);
        }
        int r = prepare_v1(&h, c, plan, e);
        if (r < 0)
                return r;
        if (!h.v2_own[0] || (one_shot && !plan->v2_mask)) {
                if (!one_shot)
                        prepare_freezer(&h, plan);
                return 0;
        }
        /* v2 also when it enforces nothing here: cgroup.kill and one place for the session's
         * processes (hybrid hosts). Best effort then; not for a one-shot session. */
        bool droppable = true;
        for (int k = 0; k < CG_NCTRL; k++)
                if (plan->v2_mask & CG_BIT(k))
                        droppable &= may_go_without(c, (enum cg_ctrl)k);
        struct sbx_error sub = {0};
        char parent[PATH_MAX] = "";
        r = cg_v2_prepare(&h, c, plan->v2_mask, parent, sizeof(parent),
                          plan->v2_mask && !droppable ? e : &sub);
        if (r < 0 && plan->v2_mask && droppable) {
                /* an undelegated v2 cgroup that only defaults wanted: kill-only if possible */
                plan->unenforced |= plan->v2_mask;
                plan->v2_mask = 0;
                if (one_shot) {
                        (void)rmdir(parent); /* what it made, unless another session uses it */
                        return 0;
                }
                r = cg_v2_prepare(&h, c, 0, parent, sizeof(parent), &sub);
        }
        if (r == 0 && cg_str_set(&plan->v2_parent, parent) < 0) {
                (void)rmdir(parent); /* only when no other session uses it */
                cgroup_plan_release(plan);
                return sbx_internal(e, ENOMEM, "out of memory");
        }
        if (r < 0 && plan->v2_mask) {
                cgroup_plan_release(plan);
                return r;
        }
        if (!one_shot)
                prepare_freezer(&h, plan);
        return 0;
}

void cgroup_plan_release(const struct cgroup_plan *plan)
{
        if (plan->v2_parent[0])
                (void)rmdir(plan->v2_parent);
        for (int k = 0; k < CG_NCTRL; k++)
                if (plan->v1_mask & CG_BIT(k))
                        (void)rmdir(plan->v1_parent[k]);
        if (plan->v1_freezer_parent[0])
                (void)rmdir(plan->v1_freezer_parent);
}

int cgroup_session_create_v2(const struct cgroup_plan *plan, const struct sbx_config *c,
                             const char *id, struct cgroup_session *cs, struct sbx_error *e)
{
        if (!plan->v2_parent[0])
                return 0;
        struct sbx_error sub = {0};
        int r = cg_v2_session_create(plan->v2_parent, plan->v2_mask, c, id, cs,
                                     plan->v2_mask ? e : &sub);
        return r < 0 && plan->v2_mask ? r : 0; /* a kill-only v2 cgroup: best effort */
}

int cgroup_session_create_v1(const struct cgroup_plan *plan, const struct sbx_config *c,
                             const char *id, struct cgroup_session *cs, struct sbx_error *e)
{
        int r = 0;
        for (int k = 0; r == 0 && k < CG_NCTRL; k++) {
                if (!(plan->v1_mask & CG_BIT(k)))
                        continue;
                /* Controllers mounted together share one cgroup (made once, then only
                 * written to). */
                for (int j = 0; r == 0 && j < k; j++)
                        if (plan->v1_mask & CG_BIT(j) &&
                            strcmp(plan->v1_parent[j], plan->v1_parent[k]) == 0 &&
                            cg_str_set(&cs->v1[k], cs->v1[j]) < 0)
                                r = sbx_internal(e, ENOMEM, "out of memory");
                if (r == 0)
                        r = cg_v1_session_create(plan->v1_parent[k], (enum cg_ctrl)k, c, id,
                                                 &cs->v1[k], &cs->v1_parent_fd[k], e);
        }
        if (r == 0 && plan->v1_freezer_parent[0]) {
                /* CG_NCTRL: a cgroup with no limit to set. Best effort, as the plan's. */
                struct sbx_error sub = {0};
                if (cg_v1_session_create(plan->v1_freezer_parent, CG_NCTRL, c, id, &cs->v1_freezer,
                                         &cs->v1_freezer_parent_fd, &sub) < 0)
                        cg_str_clear(&cs->v1_freezer);
        }
        return r;
}

int cgroup_session_attach_v2(const struct cgroup_session *cs, pid_t pid, struct sbx_error *e)
{
        char init[PATH_MAX];
        int r = 0;
        if (cs->v2[0] && cg_path(init, sizeof(init), cs->v2, "init") == 0 &&
            (r = cg_write_u64(init, "cgroup.procs", (uint64_t)pid)) < 0)
                return sbx_unsupported(e, -r, "failed to move the session into cgroup '%s'", init);
        return 0;
}

int cgroup_session_attach_freezer(const struct cgroup_session *cs, pid_t pid, struct sbx_error *e)
{
        int r = 0;
        if (cs->v1_freezer[0] &&
            (r = cg_write_u64(cs->v1_freezer, "cgroup.procs", (uint64_t)pid)) < 0)
                return sbx_unsupported(e, -r, "failed to move the session into cgroup '%s'",
                                       cs->v1_freezer);
        return 0;
}

int cgroup_session_open_v1_tasks(const struct cgroup_session *cs, int fds[CG_NCTRL],
                                 struct sbx_error *e)
{
        for (int k = 0; k < CG_NCTRL; k++)
                fds[k] = -1;
        for (int k = 0; k < CG_NCTRL; k++) {
                bool shared = false;
                for (int j = 0; j < k; j++)
                        shared |= cs->v1[j][0] && strcmp(cs->v1[j], cs->v1[k]) == 0;
                char p[PATH_MAX];
                if (!cs->v1[k][0] || shared)
                        continue;
                int err = 0;
                if (cg_path(p, sizeof(p), cs->v1[k], "tasks") < 0)
                        err = ENAMETOOLONG;
                else if ((fds[k] = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
                        err = errno;
                if (err) {
                        for (int j = 0; j < CG_NCTRL; j++)
                                closep(&fds[j]);
                        /* refused (permissions, gone): the cgroups are the problem; else ours */
                        return err == EACCES || err == EPERM || err == ENOENT
                                   ? sbx_unsupported(e, err, "failed to open cgroup '%s'",
                                                     cs->v1[k])
                                   : sbx_internal(e, err, "failed to open cgroup '%s'", cs->v1[k]);
                }
        }
        return 0;
}

static const char *base(const char *path)
{
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

int cg_open_parent(const char *session_path)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s", session_path);
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
                return -EINVAL;
        *slash = '\0';
        if (strcmp(base(p), "sbx") != 0)
                return -EINVAL;
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? negerrno() : fd;
}

void cg_remove_parent(int parent_fd)
{
        _cleanup_close_ int own = openat(parent_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (own >= 0)
                (void)unlinkat(own, "sbx", AT_REMOVEDIR); /* EBUSY, ENOTEMPTY: in use */
}

bool cgroup_session_kill(const struct cgroup_session *cs)
{
        return cs->v2_parent_fd >= 0 && cs->v2[0] && cg_v2_kill(cs->v2_parent_fd, base(cs->v2));
}

void cgroup_session_remove(struct cgroup_session *cs)
{
        closep(&cs->v2_init_fd);
        if (cs->v2_parent_fd >= 0 && cs->v2[0])
                (void)cg_v2_remove(cs->v2_parent_fd, base(cs->v2));
        closep(&cs->v2_parent_fd);
        for (int k = 0; k < CG_NCTRL; k++) {
                bool dup = false;
                for (int j = 0; j < k; j++)
                        dup |= strcmp(cs->v1[j], cs->v1[k]) == 0;
                if (cs->v1_parent_fd[k] >= 0 && cs->v1[k][0] && !dup)
                        (void)cg_v1_remove(cs->v1_parent_fd[k], base(cs->v1[k]));
        }
        for (int k = 0; k < CG_NCTRL; k++)
                closep(&cs->v1_parent_fd[k]);
        if (cs->v1_freezer_parent_fd >= 0 && cs->v1_freezer[0])
                (void)cg_v1_remove(cs->v1_freezer_parent_fd, base(cs->v1_freezer));
        closep(&cs->v1_freezer_parent_fd);
        cgroup_session_free(cs);
}

void cgroup_session_to_state(const struct cgroup_session *cs, struct session_state *st)
{
        st->cgroup = cs->v2[0] ? (char *)cs->v2 : NULL;
        st->cgroup_v1_memory = cs->v1[CG_MEMORY][0] ? (char *)cs->v1[CG_MEMORY] : NULL;
        st->cgroup_v1_pids = cs->v1[CG_PIDS][0] ? (char *)cs->v1[CG_PIDS] : NULL;
        st->cgroup_v1_cpu = cs->v1[CG_CPU][0] ? (char *)cs->v1[CG_CPU] : NULL;
        st->cgroup_v1_freezer = cs->v1_freezer[0] ? (char *)cs->v1_freezer : NULL;
}

/*
 * A path from a state file may only name a cgroup directory of this session: absolute, no
 * "..", the last component the session id, on a cgroup file system.
 */
static bool recorded_ok(const char *path, const char *id, bool v2)
{
        if (!path || path[0] != '/' || strstr(path, "/..") || strlen(path) >= PATH_MAX)
                return false;
        const char *base = strrchr(path, '/') + 1;
        struct statfs sf;
        if (strcmp(base, id) != 0 || statfs(path, &sf) < 0)
                return false;
        return v2 ? sf.f_type == CGROUP2_SUPER_MAGIC : sf.f_type == CGROUP_SUPER_MAGIC;
}

int cgroup_session_from_state(const struct session_state *st, struct cgroup_session *cs)
{
        const char *v1[CG_NCTRL] = {st->cgroup_v1_memory, st->cgroup_v1_pids, st->cgroup_v1_cpu};
        int r = 0;
        if (recorded_ok(st->cgroup, st->id, true))
                r = cg_str_set(&cs->v2, st->cgroup);
        for (int k = 0; r == 0 && k < CG_NCTRL; k++)
                if (recorded_ok(v1[k], st->id, false))
                        r = cg_str_set(&cs->v1[k], v1[k]);
        if (r == 0 && recorded_ok(st->cgroup_v1_freezer, st->id, false))
                r = cg_str_set(&cs->v1_freezer, st->cgroup_v1_freezer);
        return r;
}

void cgroup_remove_recorded(const struct session_state *st)
{
        _cleanup_(cgroup_session_free) struct cgroup_session cs = CGROUP_SESSION_INIT;
        (void)cgroup_session_from_state(st, &cs); /* best effort: what can be read is removed */
        if (cs.v2[0])
                cs.v2_parent_fd = cg_open_parent(cs.v2);
        for (int k = 0; k < CG_NCTRL; k++)
                if (cs.v1[k][0])
                        cs.v1_parent_fd[k] = cg_open_parent(cs.v1[k]);
        if (cs.v1_freezer[0])
                cs.v1_freezer_parent_fd = cg_open_parent(cs.v1_freezer);
        cgroup_session_kill(&cs);
        cgroup_session_thaw(&cs); /* a v1 frozen task does not die before it is thawed */
        cgroup_session_remove(&cs);
}
