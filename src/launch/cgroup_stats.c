/* SPDX-License-Identifier: MIT */
/*
 * What a session uses, read from the cgroups that enforce its limits (the paths of its state
 * file, each checked by cgroup_session_from_state): memory and pids from the hierarchy that limits
 * them (v2 or v1), CPU time from the session's v2 cpu.stat (present in every v2 cgroup) or a v1
 * cpuacct.usage mounted with the cpu controller, the CPU limit from cpu.max or
 * cpu.cfs_quota_us.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "shared/macros.h"
#include "cgroup-internal.h"

/* A file holding one number, or "max" (*ret UINT64_MAX). */
static int read_u64(const char *dir, const char *file, uint64_t *ret)
{
        char text[64];
        int r = cg_read(dir, file, text, sizeof(text));
        if (r < 0)
                return r;
        if (strcmp(text, "max") == 0) {
                *ret = UINT64_MAX;
                return 0;
        }
        unsigned long long v;
        if (sscanf(text, "%llu", &v) != 1)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* "usage_usec N" of dir's cpu.stat. */
static int read_cpu_usec(const char *dir, uint64_t *ret)
{
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negerrno();
        return cg_read_key_at(fd, "cpu.stat", "usage_usec", ret);
}

static void read_memory(const struct cgroup_session *cs, struct cgroup_usage *u)
{
        if (cs->v2[0] && read_u64(cs->v2, "memory.current", &u->mem_current) == 0) {
                u->has_memory = 2;
                (void)read_u64(cs->v2, "memory.max", &u->mem_limit);
                u->has_mem_peak = read_u64(cs->v2, "memory.peak", &u->mem_peak) == 0;
        } else if (cs->v1[CG_MEMORY][0] &&
                   read_u64(cs->v1[CG_MEMORY], "memory.usage_in_bytes", &u->mem_current) == 0) {
                u->has_memory = 1;
                (void)read_u64(cs->v1[CG_MEMORY], "memory.limit_in_bytes", &u->mem_limit);
                u->has_mem_peak =
                    read_u64(cs->v1[CG_MEMORY], "memory.max_usage_in_bytes", &u->mem_peak) == 0;
        }
}

static void read_pids(const struct cgroup_session *cs, struct cgroup_usage *u)
{
        if (cs->v2[0] && read_u64(cs->v2, "pids.current", &u->pids_current) == 0) {
                u->has_pids = 2;
                (void)read_u64(cs->v2, "pids.max", &u->pids_limit);
        } else if (cs->v1[CG_PIDS][0] &&
                   read_u64(cs->v1[CG_PIDS], "pids.current", &u->pids_current) == 0) {
                u->has_pids = 1;
                (void)read_u64(cs->v1[CG_PIDS], "pids.max", &u->pids_limit);
        }
}

static void read_cpu(const struct cgroup_session *cs, struct cgroup_usage *u)
{
        uint64_t ns;
        if (cs->v2[0] && read_cpu_usec(cs->v2, &u->cpu_usec) == 0)
                u->has_cpu = 2;
        else if (cs->v1[CG_CPU][0] && read_u64(cs->v1[CG_CPU], "cpuacct.usage", &ns) == 0) {
                u->has_cpu = 1;
                u->cpu_usec = ns / 1000;
        }
        /* the limit, as thousandths of a CPU (0: none) */
        char text[64];
        unsigned long long quota, period;
        if (cs->v2[0] && cg_read(cs->v2, "cpu.max", text, sizeof(text)) == 0) {
                u->cpu_limit_source = 2;
                if (sscanf(text, "%llu %llu", &quota, &period) == 2 && period)
                        u->cpus_milli = quota * 1000 / period;
        } else if (cs->v1[CG_CPU][0] &&
                   cg_read(cs->v1[CG_CPU], "cpu.cfs_quota_us", text, sizeof(text)) == 0) {
                long long q;
                uint64_t p;
                u->cpu_limit_source = 1;
                if (sscanf(text, "%lld", &q) == 1 && q > 0 &&
                    read_u64(cs->v1[CG_CPU], "cpu.cfs_period_us", &p) == 0 && p)
                        u->cpus_milli = (uint64_t)q * 1000 / p;
        }
}

void cgroup_usage_read(const struct session_state *st, struct cgroup_usage *u)
{
        _cleanup_(cgroup_session_free) struct cgroup_session cs = CGROUP_SESSION_INIT;
        memset(u, 0, sizeof(*u));
        u->mem_limit = u->pids_limit = UINT64_MAX;
        (void)cgroup_session_from_state(st,
                                        &cs); /* out of memory: what could be read (has_* say it) */
        read_memory(&cs, u);
        read_pids(&cs, u);
        read_cpu(&cs, u);
}
