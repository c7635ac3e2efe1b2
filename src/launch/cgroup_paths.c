/* SPDX-License-Identifier: MIT */
/*
 * The cgroup paths that plans, owns and sessions hold (cgroup.h): copies sized to fit, never
 * NULL, cg_none when unused, so that "is there one" stays path[0] everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-internal.h"

const char cg_none[1] = "";

int cg_str_set(const char **s, const char *value)
{
        char *copy = NULL;
        if (value[0] && !(copy = strdup(value)))
                return -ENOMEM;
        cg_str_clear(s);
        if (copy)
                *s = copy;
        return 0;
}

void cg_str_clear(const char **s)
{
        if (*s != cg_none)
                free((char *)*s);
        *s = cg_none;
}

void cgroup_owns_free(struct cgroup_owns *owns)
{
        cg_str_clear(&owns->v2);
        for (int k = 0; k < CG_NCTRL; k++)
                cg_str_clear(&owns->v1[k]);
        cg_str_clear(&owns->v1_freezer);
}

void cgroup_plan_free(struct cgroup_plan *plan)
{
        cg_str_clear(&plan->v2_parent);
        for (int k = 0; k < CG_NCTRL; k++)
                cg_str_clear(&plan->v1_parent[k]);
        cg_str_clear(&plan->v1_freezer_parent);
        cgroup_owns_free(&plan->owns);
}

void cgroup_session_free(struct cgroup_session *cs)
{
        cg_str_clear(&cs->v2);
        for (int k = 0; k < CG_NCTRL; k++)
                cg_str_clear(&cs->v1[k]);
        cg_str_clear(&cs->v1_freezer);
}
