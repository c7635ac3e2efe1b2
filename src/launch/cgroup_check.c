/* SPDX-License-Identifier: MIT */
/* `sbx check`: which hierarchy provides each limit here, and whether sbx can use it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "cgroup-internal.h"

_printf_(2, 3) static void set_detail(struct cgroup_check *out, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
        va_end(ap);
}

void cgroup_check_controller(enum cg_ctrl k, struct cgroup_check *out)
{
        struct cg_host h;
        const char *name = cg_ctrl_names[k];
        static const char *const v2_files[CG_NCTRL] = {
            "memory.max, memory.swap.max, memory.oom.group", "pids.max", "cpu.max"};
        static const char *const v1_files[CG_NCTRL] = {"memory.limit_in_bytes", "pids.max",
                                                       "cpu.cfs_quota_us"};
        out->available = false;
        out->version = 0;
        out->path[0] = '\0';
        if (cg_host_probe(&h) < 0) {
                set_detail(out, "cannot read /proc/self/mountinfo");
                return;
        }
        if (h.v2_own[0] && cg_has_word(h.v2_avail, name)) {
                bool on = h.v2_is_root || cg_has_word(h.v2_enabled, name);
                out->version = 2;
                snprintf(out->path, sizeof(out->path), "%s", h.v2_own);
                out->available = access(h.v2_own, W_OK) == 0;
                set_detail(out, "cgroup v2 %s (%s)%s%s", h.v2_own, v2_files[k],
                           out->available ? "" : ": not writable (not delegated to you)",
                           out->available && !on
                               ? "; not yet enabled in its cgroup.subtree_control: sbx enables "
                                 "it when it is the only process there"
                               : "");
        } else if (h.v1_own[k][0]) {
                char sbx[PATH_MAX];
                bool made =
                    cg_path(sbx, sizeof(sbx), h.v1_own[k], "sbx") == 0 && access(sbx, F_OK) == 0;
                out->available = access(made ? sbx : h.v1_own[k], W_OK) == 0;
                out->version = 1;
                snprintf(out->path, sizeof(out->path), "%s", h.v1_own[k]);
                set_detail(out, "cgroup v1 %s (%s%s)%s", h.v1_own[k], v1_files[k],
                           k != CG_MEMORY                 ? ""
                           : cg_v1_has_memsw(h.v1_own[k]) ? ", memory.memsw.limit_in_bytes"
                                                          : "; no swap accounting: swappiness 0, "
                                                            "swap not bounded",
                           out->available ? "" : ": not writable (not delegated to you)");
        } else {
                set_detail(out,
                           "no '%s' controller in cgroup v2%s%s "
                           "nor a cgroup v1 hierarchy",
                           name, h.v2_own[0] ? " " : "", h.v2_own);
        }
}

/*
 * cgroup.kill (Linux 5.14+) is in every cgroup but the root: look at dir, or at a child of it.
 * A root cgroup without children (sbx's own parent is removed with the last session) gets a
 * child for the look, removed right after, so the answer does not depend on live sessions.
 */
static bool has_kill_file(const char *dir, bool is_root)
{
        char p[PATH_MAX];
        if (!is_root)
                return cg_path(p, sizeof(p), dir, "cgroup.kill") == 0 && access(p, F_OK) == 0;
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.')
                        return cg_path(p, sizeof(p), de->d_name, "cgroup.kill") == 0 &&
                               faccessat(dirfd(d), p, F_OK, 0) == 0;
        if (!d)
                return false;
        char probe[64];
        snprintf(probe, sizeof(probe), "sbx-check.%d", (int)getpid());
        if (mkdirat(dirfd(d), probe, 0755) < 0)
                return false;
        bool kill = cg_path(p, sizeof(p), probe, "cgroup.kill") == 0 &&
                    faccessat(dirfd(d), p, F_OK, 0) == 0;
        (void)unlinkat(dirfd(d), probe, AT_REMOVEDIR);
        return kill;
}

void cgroup_check_kill(struct cgroup_check *out)
{
        struct cg_host h;
        out->available = false;
        out->version = 0;
        out->path[0] = '\0';
        if (cg_host_probe(&h) < 0 || !h.v2_own[0]) {
                set_detail(out, "no cgroup v2 hierarchy: a session's processes die with its "
                                "init (pid namespace) instead");
                return;
        }
        bool writable = access(h.v2_own, W_OK) == 0;
        bool kill = has_kill_file(h.v2_own, h.v2_is_root);
        out->version = 2;
        snprintf(out->path, sizeof(out->path), "%s", h.v2_own);
        out->available = writable && kill;
        if (out->available)
                set_detail(out, "cgroup v2 %s (cgroup.kill)", h.v2_own);
        else
                set_detail(out,
                           "cgroup v2 %s %s: a session's processes die with its init (pid "
                           "namespace) instead",
                           h.v2_own,
                           writable ? "has no cgroup.kill (Linux 5.14+)"
                                    : "is not writable (not delegated to you)");
}
