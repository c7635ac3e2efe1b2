/* SPDX-License-Identifier: MIT */
/*
 * The cgroup paths that plans, owns and sessions hold (cgroup.h): copies sized to fit, never
 * NULL, cg_none when unused, so that "is there one" stays path[0] everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/util.h"
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

/* Each struct holds one v2 path, one per v1 controller and one v1 freezer path. */
static void clear_paths(const char **v2, const char *v1[CG_NCTRL], const char **v1_freezer)
{
        cg_str_clear(v2);
        for (int k = 0; k < CG_NCTRL; k++)
                cg_str_clear(&v1[k]);
        cg_str_clear(v1_freezer);
}

void cgroup_owns_free(struct cgroup_owns *owns)
{
        clear_paths(&owns->v2, owns->v1, &owns->v1_freezer);
}

void cgroup_plan_free(struct cgroup_plan *plan)
{
        clear_paths(&plan->v2_parent, plan->v1_parent, &plan->v1_freezer_parent);
        cgroup_owns_free(&plan->owns);
}

void cgroup_session_free(struct cgroup_session *cs)
{
        clear_paths(&cs->v2, cs->v1, &cs->v1_freezer);
}

void cgroup_session_close(struct cgroup_session *cs)
{
        closep(&cs->v2_init_fd);
        closep(&cs->v2_parent_fd);
        for (int k = 0; k < CG_NCTRL; k++)
                closep(&cs->v1_parent_fd[k]);
        closep(&cs->v1_freezer_parent_fd);
        cgroup_session_free(cs);
}

int cg_owns_from_host(const struct cg_host *h, struct cgroup_owns *owns)
{
        int r = cg_str_set(&owns->v2, h->v2_own);
        for (int k = 0; r == 0 && k < CG_NCTRL; k++)
                r = cg_str_set(&owns->v1[k], h->v1_own[k]);
        if (r == 0)
                r = cg_str_set(&owns->v1_freezer, h->v1_freezer_own);
        if (r < 0)
                cgroup_owns_free(owns);
        return r;
}
