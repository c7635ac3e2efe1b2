/* SPDX-License-Identifier: MIT */
/* Which limits of a session hold (limits.h). */
#include "limits.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-internal.h"

static const char *by_plan(const struct cgroup_plan *plan, enum cg_ctrl k)
{
        if (plan->v2_mask & CG_BIT(k))
                return "cgroup v2";
        if (plan->v1_mask & CG_BIT(k))
                return "cgroup v1";
        return NULL;
}

static void values(struct limits_report *r, uint64_t memory, uint64_t pids, uint64_t cpus,
                   uint64_t disk, uint64_t nofile)
{
        memset(r, 0, sizeof(*r));
        r->value[CG_MEMORY] = memory;
        r->value[CG_PIDS] = pids;
        r->value[CG_CPU] = cpus;
        r->disk_bytes = disk;
        r->nofile = nofile;
}

void limits_from_plan(const struct sbx_config *c, const struct cgroup_plan *plan,
                      struct limits_report *r)
{
        values(r, c->memory_bytes, c->pids, c->cpus_milli, c->disk_bytes, c->nofile);
        r->ptys = c->ptys;
        snprintf(r->delegation, sizeof(r->delegation), "%s", plan->delegation);
        for (int k = 0; k < CG_NCTRL; k++) {
                if (!r->value[k])
                        continue;
                r->by[k] = by_plan(plan, (enum cg_ctrl)k);
                if (!r->by[k])
                        r->unenforced |= CG_BIT(k);
        }
}

void limits_from_state(const struct session_state *st, struct limits_report *r)
{
        const char *v1[CG_NCTRL] = {st->cgroup_v1_memory, st->cgroup_v1_pids, st->cgroup_v1_cpu};
        values(r, st->memory_bytes, st->pids, st->cpus_milli, st->disk_bytes, st->nofile);
        for (int k = 0; k < CG_NCTRL; k++) {
                if (!r->value[k])
                        continue;
                /* a limit the session went without, or one that has no cgroup recorded */
                if (st->limits_unenforced & CG_BIT(k) || (!v1[k] && !st->cgroup))
                        r->unenforced |= CG_BIT(k);
                else
                        r->by[k] = v1[k] ? "cgroup v1" : "cgroup v2";
        }
}

void limits_from_check(const struct sbx_config *c, const struct cgroup_check chk[CG_NCTRL],
                       struct limits_report *r)
{
        static const char *const names[3] = {NULL, "cgroup v1", "cgroup v2"};
        values(r, c->memory_bytes, c->pids, c->cpus_milli, c->disk_bytes, c->nofile);
        for (int k = 0; k < CG_NCTRL; k++) {
                if (!r->value[k])
                        continue;
                if (chk[k].available && chk[k].version >= 1 && chk[k].version <= 2)
                        r->by[k] = names[chk[k].version];
                else
                        r->unenforced |= CG_BIT(k);
        }
}

static void one(struct buf *b, bool first, const char *name, uint64_t value, const char *by)
{
        (void)buf_printf(b, "%s\"%s\":{\"value\":", first ? "" : ",", name);
        if (value)
                (void)buf_printf(b, "%llu", (unsigned long long)value);
        else
                (void)buf_puts(b, "null");
        (void)buf_printf(b, ",\"enforced\":%s,\"enforced_by\":", value && by ? "true" : "false");
        (void)json_cstr(b, value ? by : NULL);
        (void)buf_puts(b, "}");
}

void limits_json(struct buf *b, const struct limits_report *r)
{
        (void)buf_puts(b, ",\"limits\":{");
        one(b, true, "memory_bytes", r->value[CG_MEMORY], r->by[CG_MEMORY]);
        one(b, false, "cpus_milli", r->value[CG_CPU], r->by[CG_CPU]);
        one(b, false, "pids", r->value[CG_PIDS], r->by[CG_PIDS]);
        one(b, false, "disk_bytes", r->disk_bytes, "tmpfs size and nr_inodes");
        one(b, false, "nofile", r->nofile, "RLIMIT_NOFILE");
        if (r->ptys)
                one(b, false, "ptys", r->ptys, "devpts max");
        (void)buf_puts(b, "}");
}

/* A systemd user manager that could delegate a cgroup v2 scope to this user. */
static bool user_manager(void)
{
        char p[128];
        struct stat sb;
        snprintf(p, sizeof(p), "/run/user/%u/systemd/private", (unsigned)getuid());
        return stat(p, &sb) == 0 && S_ISSOCK(sb.st_mode);
}

const char *limits_fix_command(void)
{
        struct cg_host h;
        bool v2_offers = cg_host_probe(&h) == 0 && h.v2_own[0] && h.v2_avail[0];
        if (getuid() != 0 && v2_offers && user_manager())
                return "systemd-run --user --scope -p Delegate=yes sbx ...";
        /* root whose cgroup is not writable: a container without cgroup access */
        if (getuid() == 0)
                return "give sbx a writable cgroup (in a container: a cgroup mounted read-write "
                       "for it, as podman run --privileged does)";
        /* cgroup v1 or hybrid, or no user manager: only root (or a cgroup root hands over) */
        return "sudo sbx ... (sbx as root enforces every limit)";
}

static void value_text(enum cg_ctrl k, uint64_t v, char *out, size_t n)
{
        if (k == CG_CPU)
                snprintf(out, n, "cpus %llu%s%.*llu", (unsigned long long)(v / 1000),
                         v % 1000 ? "." : "", v % 1000 ? 3 : 0, (unsigned long long)(v % 1000));
        else if (k == CG_PIDS)
                snprintf(out, n, "pids %llu", (unsigned long long)v);
        else if (v % (UINT64_C(1) << 20) == 0)
                snprintf(out, n, "memory %lluM", (unsigned long long)(v >> 20));
        else
                snprintf(out, n, "memory %llu bytes", (unsigned long long)v);
}

bool limits_warning(const struct limits_report *r, char *out, size_t n)
{
        char list[160] = "";
        size_t used = 0;
        static const enum cg_ctrl order[CG_NCTRL] = {CG_MEMORY, CG_PIDS, CG_CPU};
        out[0] = '\0';
        for (int i = 0; i < CG_NCTRL; i++) {
                enum cg_ctrl k = order[i];
                if (!(r->unenforced & CG_BIT(k)) || !r->value[k])
                        continue;
                char one_text[48];
                value_text(k, r->value[k], one_text, sizeof(one_text));
                used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
                                         one_text);
        }
        if (!used)
                return false;
        snprintf(out, n,
                 "default limits not enforced: %s (no cgroup of this user can take them here%s%s); "
                 "to enforce them: %s",
                 list, r->delegation[0] ? "; no delegated systemd scope: " : "", r->delegation,
                 limits_fix_command());
        return true;
}
