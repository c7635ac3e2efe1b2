/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 (docs/DESIGN.md, "Cgroups"):
 *
 *   <own>/sbx/                 the parent; memory, pids, cpu enabled for its children
 *   <own>/sbx/<id>/            the session: memory.max, memory.swap.max=0, pids.max, cpu.max
 *   <own>/sbx/<id>/init/       the session init and every exec's reaper (B)
 *   <own>/sbx/<id>/exec-<r>/   one exec's command (C) and all it starts; memory.oom.group=1
 *   <own>/sbx-supervisor/      only when <own> had to be emptied to enable controllers
 *
 * No process ever lives in a cgroup that enables controllers for children ("no internal
 * processes"), and an OOM kill takes one exec's whole tree, never the session's init.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../session/id.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

/* Enable the controllers of mask that enabled_now lacks in dir's cgroup.subtree_control. */
static int enable(const char *dir, unsigned mask, const char *enabled_now, unsigned *ret_missing)
{
        unsigned need = 0;
        for (int k = 0; k < CG_NCTRL; k++)
                if (mask & CG_BIT(k) && !cg_has_word(enabled_now, cg_ctrl_names[k]))
                        need |= CG_BIT(k);
        if (ret_missing)
                *ret_missing = need;
        if (!need)
                return 0;
        char s[64];
        cg_mask_format(need, "+", s, sizeof(s));
        return cg_write(dir, "cgroup.subtree_control", s);
}

static enum cg_ctrl first(unsigned mask)
{
        for (int k = 0; k < CG_NCTRL; k++)
                if (mask & CG_BIT(k))
                        return (enum cg_ctrl)k;
        return CG_MEMORY;
}

/*
 * <own> has processes and no controllers for its children yet: the kernel refuses to enable
 * them (EBUSY). If this process is alone there, moving it one level down (it stays inside its
 * own cgroup) empties <own>. If others are there too, move back and say what to do.
 */
static int enable_from_leaf(const struct cg_host *h, const struct sbx_config *c, unsigned mask,
                            struct sbx_error *e)
{
        char leaf[PATH_MAX], names[64];
        unsigned need = 0;
        int r = cg_path(leaf, sizeof(leaf), h->v2_own, SUPERVISOR_LEAF);
        bool made = r == 0 && mkdir(leaf, 0755) == 0;
        if (r == 0 && !made && errno != EEXIST)
                r = negerrno();
        if (r == 0)
                r = cg_write(leaf, "cgroup.procs", "0");
        if (r < 0) {
                if (made)
                        (void)rmdir(leaf);
                return sbx_unsupported(e, 0,
                                       "cannot enforce %s: sbx cannot move itself into "
                                       "cgroup '%s' (%s) to enable controllers in '%s'; %s",
                                       cg_what(c, first(mask)).s, leaf, strerror(-r), h->v2_own,
                                       cg_hint(first(mask)));
        }
        r = enable(h->v2_own, mask, h->v2_enabled, &need);
        if (r == 0)
                return 0;
        (void)cg_write(h->v2_own, "cgroup.procs", "0");
        if (made)
                (void)rmdir(leaf);
        cg_mask_format(need, "", names, sizeof(names));
        if (r == -EBUSY)
                return sbx_unsupported(e, 0,
                                       "cannot enforce %s: the cgroup v2 controllers '%s' cannot "
                                       "be enabled in '%s/cgroup.subtree_control' while other "
                                       "processes are in '%s' (cgroup v2 gives controllers only "
                                       "to cgroups without processes of their own); start sbx "
                                       "alone in a cgroup of its own (systemd-run --user --scope "
                                       "-p Delegate=yes sbx ...), or ask for no limit: %s",
                                       cg_what(c, first(need)).s, names, h->v2_own, h->v2_own,
                                       cg_unlimited(first(need)));
        return sbx_unsupported(e, 0,
                               "cannot enforce %s: the cgroup v2 controllers '%s' cannot "
                               "be enabled in '%s/cgroup.subtree_control' (%s); %s",
                               cg_what(c, first(need)).s, names, h->v2_own, strerror(-r),
                               cg_hint(first(need)));
}

int cg_v2_make_parent(const char *parent, unsigned mask)
{
        char enabled[256] = "";
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                return negerrno();
        if (mask)
                (void)cg_read(parent, "cgroup.subtree_control", enabled, sizeof(enabled));
        return enable(parent, mask, enabled, NULL);
}

int cg_v2_prepare(const struct cg_host *h, const struct sbx_config *c, unsigned mask, char *parent,
                  size_t n, struct sbx_error *e)
{
        char names[64];
        unsigned need = 0;
        int r = cg_path(parent, n, h->v2_own, "sbx");
        if (r == 0)
                r = enable(h->v2_own, mask, h->v2_enabled, &need);
        if (r == -EBUSY && !h->v2_is_root)
                r = enable_from_leaf(h, c, mask, e);
        else if (r < 0) {
                cg_mask_format(need, "", names, sizeof(names));
                return sbx_unsupported(e, 0,
                                       "cannot enforce %s: the cgroup v2 controllers '%s' are not "
                                       "enabled in '%s/cgroup.subtree_control' and sbx cannot "
                                       "enable them (%s); %s",
                                       cg_what(c, first(need)).s, names, h->v2_own, strerror(-r),
                                       cg_hint(first(need)));
        }
        if (r < 0)
                return r;
        if ((r = cg_parent_ready(parent, true, mask)) < 0)
                return sbx_unsupported(e, 0,
                                       "cannot enforce %s: cgroup '%s' cannot be created "
                                       "(%s); %s",
                                       cg_what(c, first(mask)).s, parent, strerror(-r),
                                       cg_hint(first(mask)));
        return 0;
}

static int set_limit(const char *dir, const char *file, const char *value, struct sbx_error *e)
{
        int r = cg_write(dir, file, value);
        return r < 0 ? sbx_unsupported(e, -r, "failed to set %s of cgroup '%s' to '%s'", file, dir,
                                       value)
                     : 0;
}

int cg_v2_session_create(const char *parent, unsigned mask, const struct sbx_config *c,
                         const char *id, struct cgroup_session *cs, struct sbx_error *e)
{
        int r = 0;
        /* A session ending elsewhere removes the parent when it is empty: make it again. */
        for (int tries = 0; tries < CG_PARENT_TRIES; tries++) {
                r = cg_v2_make_parent(parent, mask);
                if (r == 0)
                        r = cg_mkdir(parent, id, false);
                if (r != -ENOENT)
                        break;
        }
        if (r < 0)
                return sbx_unsupported(e, -r, "failed to create cgroup '%s/%s'", parent, id);
        char p[PATH_MAX] = "";
        if ((r = cg_path(p, sizeof(p), parent, id)) < 0 || (r = cg_str_set(&cs->v2, p)) < 0) {
                (void)rmdir(p);
                return sbx_internal(e, -r, "failed to record cgroup '%s/%s'", parent, id);
        }
        /* From here on the caller's cleanup removes it, by fd. */
        if ((cs->v2_parent_fd = cg_open_parent(cs->v2)) < 0) {
                r = cs->v2_parent_fd;
                (void)rmdir(cs->v2);
                cg_str_clear(&cs->v2);
                return sbx_internal(e, -r, "failed to open cgroup '%s'", parent);
        }

        char v[64], init[PATH_MAX];
        if (mask & CG_BIT(CG_MEMORY)) {
                snprintf(v, sizeof(v), "%llu", (unsigned long long)c->memory_bytes);
                r = set_limit(cs->v2, "memory.max", v, e);
                /* Without swap accounting (no memory.swap.max) the kernel cannot limit swap. */
                int s = r == 0 ? cg_write(cs->v2, "memory.swap.max", "0") : 0;
                if (s < 0 && s != -ENOENT)
                        r = sbx_unsupported(e, -s,
                                            "failed to set memory.swap.max of cgroup "
                                            "'%s' to '0'",
                                            cs->v2);
        }
        if (r == 0 && mask & CG_BIT(CG_PIDS)) {
                snprintf(v, sizeof(v), "%llu", (unsigned long long)c->pids);
                r = set_limit(cs->v2, "pids.max", v, e);
        }
        if (r == 0 && mask & CG_BIT(CG_CPU)) {
                uint64_t quota = c->cpus_milli * (CG_CPU_PERIOD_US / 1000);
                snprintf(
                    v, sizeof(v), "%llu %u",
                    (unsigned long long)(quota < CG_CPU_MIN_QUOTA_US ? CG_CPU_MIN_QUOTA_US : quota),
                    CG_CPU_PERIOD_US);
                r = set_limit(cs->v2, "cpu.max", v, e);
        }
        if (r == 0 && (r = enable(cs->v2, mask, "", NULL)) < 0)
                r = sbx_unsupported(e, -r, "failed to enable controllers in cgroup '%s'", cs->v2);
        if (r == 0 && (r = cg_path(init, sizeof(init), cs->v2, "init")) == 0 &&
            (r = cg_mkdir(cs->v2, "init", false)) < 0)
                r = sbx_unsupported(e, -r, "failed to create cgroup '%s'", init);
        if (r == 0 && (cs->v2_init_fd = open(init, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                r = sbx_internal(e, errno, "failed to open cgroup '%s'", init);
        return r;
}

bool cg_v2_kill(int parent_fd, const char *id)
{
        /* Linux 5.14+; before that the init's death takes the pid namespace with it. */
        char p[64];
        snprintf(p, sizeof(p), "%s/cgroup.kill", id);
        _cleanup_close_ int fd = openat(parent_fd, p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd >= 0 && write_all(fd, "1", 1) == 0;
}

/* Until cgroup.events says "populated 0" (the kernel signals changes with POLLPRI). */
static void wait_empty(int parent_fd, const char *id, int timeout_ms)
{
        char p[64], text[256];
        snprintf(p, sizeof(p), "%s/cgroup.events", id);
        _cleanup_close_ int fd = openat(parent_fd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        uint64_t end = now_monotonic_ms() + (uint64_t)timeout_ms;
        while (fd >= 0) {
                ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
                if (n < 0)
                        return;
                text[n] = '\0';
                if (strstr(text, "populated 0"))
                        return;
                uint64_t now = now_monotonic_ms();
                struct pollfd pf = {.fd = fd, .events = POLLPRI};
                if (now >= end || poll(&pf, 1, (int)(end - now)) < 0)
                        return;
        }
}

int cg_v2_remove(int parent_fd, const char *id)
{
        wait_empty(parent_fd, id, 5000);
        _cleanup_close_ int dfd =
            openat(parent_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0)
                return errno == ENOENT ? 0 : negerrno();
        _cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(dfd));
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
                    strcmp(de->d_name, "..") != 0)
                        (void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        int r = unlinkat(parent_fd, id, AT_REMOVEDIR) < 0 ? negerrno() : 0;
        cg_remove_parent(parent_fd);
        return r;
}

int cg_v2_exec_leaf(const char *session, char *name, size_t n, struct sbx_error *e)
{
        char rnd[SESSION_ID_LEN + 1], leaf[PATH_MAX];
        int r = session_id_generate(rnd);
        if (r < 0)
                return sbx_internal(e, -r, "failed to name the exec's cgroup");
        snprintf(name, n, "exec-%s", rnd + 3);
        if ((r = cg_path(leaf, sizeof(leaf), session, name)) == 0 && mkdir(leaf, 0755) < 0)
                r = negerrno();
        if (r < 0) {
                name[0] = '\0';
                return sbx_internal(e, -r, "failed to create a cgroup in '%s'", session);
        }
        /* An OOM kill takes the whole command tree, not one process of it. */
        r = cg_write(leaf, "memory.oom.group", "1");
        if (r < 0 && r != -ENOENT) {
                (void)rmdir(leaf);
                name[0] = '\0';
                return sbx_internal(e, -r, "failed to set memory.oom.group of cgroup '%s'", leaf);
        }
        return 0;
}

bool cg_v2_oom_killed(int leaf_fd)
{
        uint64_t kills = 0, group = 0;
        (void)cg_read_key_at(leaf_fd, "memory.events", "oom_kill", &kills);
        (void)cg_read_key_at(leaf_fd, "memory.events", "oom_group_kill", &group);
        return kills > 0 || group > 0;
}
