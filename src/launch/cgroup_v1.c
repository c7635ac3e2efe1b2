/* SPDX-License-Identifier: MIT */
/*
 * cgroup v1, per controller that cgroup v2 does not offer (docs/DESIGN.md, "Cgroups"):
 *
 *   <own in that hierarchy>/sbx/<id>/   the session init, every B and C
 *
 * memory: memory.limit_in_bytes and memory.memsw.limit_in_bytes at the same value (no swap);
 * without swap accounting memory.swappiness=0. pids: pids.max. cpu: cpu.cfs_quota_us over
 * cpu.cfs_period_us. v1 has no memory.oom.group: an OOM kills the biggest process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/macros.h"
#include "cgroup-internal.h"

static int set_u64(const char *dir, const char *file, uint64_t v, struct sbx_error *e)
{
        int r = cg_write_u64(dir, file, v);
        return r < 0 ? sbx_unsupported(e, -r, "failed to set %s of cgroup '%s' to %llu", file, dir,
                                       (unsigned long long)v)
                     : 0;
}

bool cg_v1_has_memsw(const char *own)
{
        char p[PATH_MAX];
        return cg_path(p, sizeof(p), own, "memory.memsw.limit_in_bytes") == 0 &&
               access(p, F_OK) == 0;
}

int cg_v1_session_create(const char *parent, enum cg_ctrl k, const struct sbx_config *c,
                         const char *id, const char **out, int *ret_parent_fd, struct sbx_error *e)
{
        int r = 0;
        bool made = !(*out)[0];
        if (made) {
                /* The parent was made before the clone (cg_parent_ready); a session ending
                 * elsewhere removes it when it is empty: then make it again. */
                for (int tries = 0; tries < CG_PARENT_TRIES; tries++) {
                        r = cg_mkdir(parent, id, false);
                        if (r != -ENOENT)
                                break;
                        if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
                                r = negerrno();
                                break;
                        }
                }
                if (r < 0)
                        return sbx_unsupported(e, -r, "failed to create cgroup '%s/%s'", parent,
                                               id);
                char p[PATH_MAX] = "";
                if ((r = cg_path(p, sizeof(p), parent, id)) < 0 || (r = cg_str_set(out, p)) < 0) {
                        (void)rmdir(p);
                        return sbx_internal(e, -r, "failed to record cgroup '%s/%s'", parent, id);
                }
        }
        const char *dir = *out;
        /* From here on the caller's cleanup removes it, by fd. */
        if ((*ret_parent_fd = cg_open_parent(dir)) < 0) {
                r = *ret_parent_fd;
                if (made)
                        (void)rmdir(dir);
                cg_str_clear(out);
                return sbx_internal(e, -r, "failed to open cgroup '%s'", parent);
        }
        switch (k) {
        case CG_MEMORY:
                r = set_u64(dir, "memory.limit_in_bytes", c->memory_bytes, e);
                if (r == 0 && cg_v1_has_memsw(dir))
                        r = set_u64(dir, "memory.memsw.limit_in_bytes", c->memory_bytes, e);
                else if (r == 0)
                        r = set_u64(dir, "memory.swappiness", 0, e);
                return r;
        case CG_PIDS:
                return set_u64(dir, "pids.max", c->pids, e);
        case CG_CPU: {
                uint64_t quota = c->cpus_milli * (CG_CPU_PERIOD_US / 1000);
                /* Each write of the two walks every cpu cgroup of the host (the kernel checks
                 * the bandwidth of the whole tree): ~0.2 ms each with 1,000 sessions here. A new
                 * cgroup has the kernel's 100 ms period, which is the one wanted: read, not set. */
                char period[32] = "";
                if (cg_read(dir, "cpu.cfs_period_us", period, sizeof(period)) < 0 ||
                    strtoull(period, NULL, 10) != CG_CPU_PERIOD_US)
                        r = set_u64(dir, "cpu.cfs_period_us", CG_CPU_PERIOD_US, e);
                if (r == 0)
                        r = set_u64(dir, "cpu.cfs_quota_us",
                                    quota < CG_CPU_MIN_QUOTA_US ? CG_CPU_MIN_QUOTA_US : quota, e);
                return r;
        }
        case CG_NCTRL:
                break;
        }
        return 0;
}

int cg_v1_remove(int parent_fd, const char *id)
{
        /* The session's processes are dead or dying (its pid namespace went with the init):
         * a v1 cgroup has no "populated" event to wait for, so retry for a bounded time. */
        int r = 0;
        for (int tries = 0; tries < 300; tries++) {
                r = unlinkat(parent_fd, id, AT_REMOVEDIR) < 0 ? negerrno() : 0;
                if (r != -EBUSY)
                        break;
                struct timespec ts = {.tv_nsec = 10 * 1000 * 1000};
                (void)nanosleep(&ts, NULL);
        }
        cg_remove_parent(parent_fd);
        return r == -ENOENT ? 0 : r;
}

uint64_t cg_v1_oom_kills(int memory_fd)
{
        uint64_t v = 0;
        (void)cg_read_key_at(memory_fd, "memory.oom_control", "oom_kill", &v);
        return v;
}
