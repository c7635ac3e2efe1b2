/* SPDX-License-Identifier: MIT */
/*
 * Loading the seccomp profiles. The programs are generated at build time from the tables of
 * seccomp_tables.c by seccomp_gen.c (which says what they allow and refuse, and why); here
 * they are only attached with seccomp(2), ~0.1 ms for both. They are read-only data of the
 * sbx binary: nothing inside a sandbox can reach them, and no process builds a filter at run
 * time (libseccomp is a build dependency only).
 */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shared/macros.h"
#include "seccomp_bpf.h"

static int load_failed(enum sbx_seccomp_profile p, int err, struct sbx_error *e)
{
        /* EINVAL/ENOSYS: this kernel cannot take the filter; anything else is ours. */
        bool unsupported = err == EINVAL || err == ENOSYS;
        return sbx_fail(e, unsupported ? EXIT_UNSUPPORTED : EXIT_SBX_FAILED,
                        unsupported ? "unsupported" : "internal", err,
                        "failed to load seccomp profile '%s'", seccomp_profile_name(p));
}

/* The generated programs of profile p, or an error saying why there are none. */
static int profile_programs(enum sbx_seccomp_profile p, const struct seccomp_bpf_profile **ret,
                            struct sbx_error *e)
{
        if ((unsigned int)p >= ARRAY_SIZE(seccomp_bpf_profiles))
                return sbx_internal(e, EINVAL, "unknown seccomp profile %d", (int)p);
        const struct seccomp_bpf_profile *bp = &seccomp_bpf_profiles[p];
        if (bp->prog[0].len == 0 || bp->prog[1].len == 0)
                return sbx_unsupported(e, 0,
                                       "seccomp profile '%s' is only defined for native x86_64 "
                                       "and aarch64 processes",
                                       seccomp_profile_name(p));
        *ret = bp;
        return 0;
}

int seccomp_apply(enum sbx_seccomp_profile p, struct sbx_error *e)
{
        if (p == SBX_SECCOMP_UNCONFINED)
                return 0;
        const struct seccomp_bpf_profile *bp;
        int r = profile_programs(p, &bp, e);
        if (r < 0)
                return r;

        /* The caller has set it; without it, an unprivileged seccomp() gets EACCES. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return sbx_internal(e, errno, "failed to set no_new_privs");
        /* The argument filter goes first: the syscall filter may refuse seccomp(2) itself. No
         * TSYNC: every caller is single-threaded. */
        for (size_t i = 0; i < ARRAY_SIZE(bp->prog); i++) {
                struct sock_fprog prog = {
                    .len = (unsigned short)bp->prog[i].len,
                    .filter = (struct sock_filter *)bp->prog[i].insns,
                };
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                        return load_failed(p, errno, e);
        }
        return 0;
}

/* Whether the kernel can return an errno from a filter: seccomp(SECCOMP_GET_ACTION_AVAIL),
 * else the sysctl list. 0 or -errno. */
static int kernel_has_errno_action(void)
{
        uint32_t action = SECCOMP_RET_ERRNO;
        if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
                return 0;
        int err = errno;

        _cleanup_close_ int fd =
            open("/proc/sys/kernel/seccomp/actions_avail", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -err;
        char buf[256];
        ssize_t n = RETRY_EINTR(read(fd, buf, sizeof(buf) - 1));
        if (n < 0)
                return -err;
        buf[n] = '\0';
        char *save = NULL;
        for (char *tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
                if (strcmp(tok, "errno") == 0)
                        return 0;
        return -err;
}

int seccomp_check(enum sbx_seccomp_profile p, struct sbx_error *e)
{
        if (p == SBX_SECCOMP_UNCONFINED)
                return 0;

        /* EINVAL: the kernel was built without CONFIG_SECCOMP. 2 means sbx itself already runs
         * under a filter (a container): ours stack on top, which is fine. */
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
                return sbx_unsupported(e, errno,
                                       "seccomp: the kernel has no seccomp support (it needs "
                                       "CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER)");
        int r = kernel_has_errno_action();
        if (r < 0)
                return sbx_unsupported(e, -r,
                                       "seccomp: the kernel has no seccomp filters with an "
                                       "errno action (CONFIG_SECCOMP_FILTER)");
        /* Every ABI but the native one is refused by the programs themselves (bad-arch
         * action), so nothing else needs covering. */
        const struct seccomp_bpf_profile *bp;
        return profile_programs(p, &bp, e);
}
