/* SPDX-License-Identifier: MIT */
/* Raw syscalls glibc 2.36 does not wrap (or wraps too late), in one place. */
#pragma once

#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
struct mount_attr {
        uint64_t attr_set;
        uint64_t attr_clr;
        uint64_t propagation;
        uint64_t userns_fd;
};
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static inline int sys_pidfd_open(pid_t pid, unsigned int flags)
{
        return (int)syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig)
{
        return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* pidfd_send_signal's flag (Linux 6.9; not in older headers): the process group whose id is
 * the pidfd's own pid, named by the pidfd, so not a number that may be freed and reused. */
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif

static inline int sys_pidfd_signal_group(int pidfd, int sig)
{
        return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
        return (int)syscall(SYS_pivot_root, new_root, put_old);
}

static inline int sys_close_range(unsigned int first, unsigned int last, unsigned int flags)
{
        return (int)syscall(SYS_close_range, first, last, flags);
}

static inline int sys_openat2(int dirfd, const char *path, struct open_how *how)
{
        return (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
}

static inline int sys_mount_setattr(int dirfd, const char *path, unsigned int flags,
                                    struct mount_attr *attr)
{
        return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, sizeof(*attr));
}

/* clone3(2)'s argument (linux/sched.h, kept here: that header clashes with glibc's). */
struct sbx_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
        uint64_t set_tid, set_tid_size, cgroup;
};
#define SBX_CLONE_INTO_CGROUP 0x200000000ULL

/*
 * fork() with namespace flags into the cgroup whose directory is open as cgroup_fd (Linux
 * 5.7+): the child is never outside it, not even for one instruction. -1 with ENOSYS or E2BIG
 * on older kernels. The child returns 0 like fork().
 */
static inline pid_t sys_clone3_into_cgroup(unsigned long flags, int cgroup_fd)
{
        struct sbx_clone_args a = {.flags = flags | SBX_CLONE_INTO_CGROUP,
                                   .exit_signal = SIGCHLD,
                                   .cgroup = (uint64_t)cgroup_fd};
        return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

/*
 * fork() with namespace flags. The child returns 0 like fork(). glibc >= 2.34 keeps raise()
 * and friends correct after a raw clone (it asks the kernel for the tid).
 */
static inline pid_t sys_clone_flags(unsigned long flags)
{
        return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}
