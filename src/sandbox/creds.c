/* SPDX-License-Identifier: MIT */
#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/* Permitted and effective = keep, inheritable empty. 0 or -errno. */
static int set_caps(uint64_t keep)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
            {.effective = (uint32_t)keep, .permitted = (uint32_t)keep},
            {.effective = (uint32_t)(keep >> 32), .permitted = (uint32_t)(keep >> 32)},
        };
        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/*
 * Straight syscalls rather than libcap-ng's capng_apply(), which reads /proc/<tid>/status three
 * times to learn what it is about to overwrite: ~170 us in every process that starts a command.
 */
int creds_drop_caps(uint64_t keep)
{
        /* The bounding set first, all of it (it only limits what an execve could gain): dropping
         * from it needs CAP_SETPCAP, which goes below. */
        for (unsigned long cap = 0; cap < 64; cap++) {
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL)
                                break; /* past the kernel's last capability */
                        return -errno;
                }
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -errno;
        return set_caps(keep);
}

int creds_lock_down_keep(uint64_t keep, struct sbx_error *e)
{
        /* securebits first: setting them needs CAP_SETPCAP, which is dropped below */
        if (capng_lock() < 0)
                return sbx_internal(e, EPERM, "failed to lock the securebits");
        int r = creds_drop_caps(keep);
        if (r < 0)
                return sbx_internal(e, -r, "failed to drop capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to set no_new_privs");
        return 0;
}

int creds_lock_down(struct sbx_error *e)
{
        return creds_lock_down_keep(0, e);
}

int creds_set_helper_uid(uid_t helper)
{
        /* CAP_SETUID is kept, and SECBIT_NO_SETUID_FIXUP keeps the rest with it */
        return helper != 0 && setresuid(helper, helper, helper) == 0 ? 0 : -errno;
}

int creds_leave_helper_uid(struct sbx_error *e)
{
        if (setresuid(0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to become uid 0 of the session");
        /* the bounding and ambient sets are empty already (the init's lock-down) */
        int r = set_caps(0);
        return r < 0 ? sbx_internal(e, -r, "failed to drop capabilities") : 0;
}
