/* SPDX-License-Identifier: MIT */
/*
 * Which limits of a session hold, and by what: one answer for the warning of `create` and
 * `run`, the audit log's create record, `list --json` and `check`. A limit is reported as
 * enforced only with the hierarchy that enforces it; a default the host could not enforce for
 * this user is reported as not enforced, never with a controller.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/buf.h"
#include "cgroup.h"

struct limits_report {
        uint64_t value[CG_NCTRL]; /* the limit asked for, 0 for unlimited */
        const char *by[CG_NCTRL]; /* "cgroup v2" or "cgroup v1"; NULL when not in force */
        unsigned unenforced;      /* bit per enum cg_ctrl: asked for, not in force */
        uint64_t disk_bytes, nofile;
        uint64_t ptys;        /* the devpts max=; 0 where not known (a session's state) */
        char delegation[300]; /* why no delegated systemd scope could be had; "" when not known */
};

/* At create, from the plan that cgroup_prepare made. */
void limits_from_plan(const struct sbx_config *c, const struct cgroup_plan *plan,
                      struct limits_report *r);
/* Later, from the session's state file. */
void limits_from_state(const struct session_state *st, struct limits_report *r);
/* `check`: what a create with c would get here (controllers probed, nothing made). */
void limits_from_check(const struct sbx_config *c, const struct cgroup_check chk[CG_NCTRL],
                       struct limits_report *r);

/* ,"limits":{"memory_bytes":{"value":N|null,"enforced":bool,"enforced_by":"..."|null},...} */
void limits_json(struct buf *b, const struct limits_report *r);

/* The one command that would let this user's sessions have their cgroup limits here. */
const char *limits_fix_command(void);
/*
 * The warning for limits not in force (without the "sbx: warning: " prefix): each one with
 * its value, and limits_fix_command(). False (out empty) when every limit holds.
 */
bool limits_warning(const struct limits_report *r, char *out, size_t n);
