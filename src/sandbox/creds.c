/* SPDX-License-Identifier: MIT */
#include <cap-ng.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox.h"

int creds_become_sandbox_user(struct sbx_error *e)
{
        /* Fails with EPERM where setgroups is denied (the user namespace's own policy). */
        (void)setgroups(0, NULL);
        if (setresgid(0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to become gid 0 of the session");
        if (setresuid(0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to become uid 0 of the session");
        return 0;
}

int creds_lock_down(struct sbx_error *e)
{
        /* securebits first: setting them needs CAP_SETPCAP, which is dropped below */
        if (capng_lock() < 0)
                return sbx_internal(e, EPERM, "failed to lock the securebits");
        capng_clear(CAPNG_SELECT_ALL);
        if (capng_apply(CAPNG_SELECT_ALL) < 0)
                return sbx_internal(e, EPERM, "failed to drop capabilities");
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return sbx_internal(e, errno, "failed to clear ambient capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to set no_new_privs");
        return 0;
}
