/* SPDX-License-Identifier: MIT */
/*
 * What the seccomp profiles allow and refuse, by name (libseccomp resolves the numbers).
 *
 * `default` allows what Docker's default profile allows to a container without extra
 * capabilities, minus what docs/SECURITY.md refuses (io_uring, ptrace and process_vm_*, the clock
 * setters); `strict` allows the subset a shell, coreutils, python3, gcc and git need, found by
 * running them under strace. Names that do not exist on the build's architecture are skipped
 * by seccomp.c, so one table serves x86_64 and aarch64.
 *
 * Syscalls with argument rules (clone, ioctl, socket, socketpair, mknod, mknodat) are allowed
 * here by name and restricted by the argument filter in seccomp.c; personality is allowed for the
 * values in seccomp_personality_allowed only.
 */
#include "seccomp_tables.h"

#include <errno.h>

#include "shared/macros.h"

#define D SECCOMP_IN_DEFAULT
#define B SECCOMP_IN_BOTH

const struct seccomp_allow seccomp_allow_table[] = {
    /* processes: creation, exec, exit, wait, identity */
    {"clone", B}, /* namespace flags refused by the argument filter */
    {"execve", B},
    {"execveat", B},
    {"exit", B},
    {"exit_group", B},
    {"fork", B},
    {"vfork", B},
    {"wait4", B},
    {"waitid", B},
    {"getpid", B},
    {"getppid", B},
    {"gettid", B},
    {"getpgid", B},
    {"getpgrp", B},
    {"setpgid", B},
    {"getsid", B},
    {"setsid", B},
    {"set_tid_address", B},
    {"set_robust_list", B},
    {"get_robust_list", B},
    {"rseq", B},
    {"restart_syscall", B},
    {"prctl", B},
    {"arch_prctl", B}, /* x86_64 only: TLS setup */
    {"modify_ldt", D}, /* x86 only: Docker allows it (wine, old JITs) */
    {"seccomp", B},    /* a process may only add filters to itself */
    {"pidfd_open", B},
    {"pidfd_send_signal", B},
    {"process_mrelease", D},
    {"kill", B},
    {"tkill", B},
    {"tgkill", B},

    /* scheduling and priorities */
    {"sched_yield", B},
    {"sched_getaffinity", B},
    {"sched_setaffinity", B},
    {"sched_getparam", B},
    {"sched_getscheduler", B},
    {"sched_getattr", B},
    {"sched_get_priority_max", B},
    {"sched_get_priority_min", B},
    {"sched_rr_get_interval", B},
    {"sched_setparam", D},
    {"sched_setscheduler", D},
    {"sched_setattr", D},
    {"getpriority", B},
    {"setpriority", B},
    {"ioprio_get", B},
    {"ioprio_set", D},
    {"getcpu", B},

    /* credentials (no capabilities inside: the kernel refuses anything but a no-op) */
    {"getuid", B},
    {"geteuid", B},
    {"getgid", B},
    {"getegid", B},
    {"getresuid", B},
    {"getresgid", B},
    {"getgroups", B},
    {"setuid", B},
    {"setgid", B},
    {"setreuid", B},
    {"setregid", B},
    {"setresuid", B},
    {"setresgid", B},
    {"setfsuid", B},
    {"setfsgid", B},
    {"setgroups", B},
    {"capget", B},
    {"capset", B},

    /* signals */
    {"rt_sigaction", B},
    {"rt_sigprocmask", B},
    {"rt_sigreturn", B},
    {"rt_sigpending", B},
    {"rt_sigsuspend", B},
    {"rt_sigtimedwait", B},
    {"rt_sigqueueinfo", B},
    {"rt_tgsigqueueinfo", B},
    {"sigaltstack", B},
    {"pause", B},
    {"alarm", B},
    {"signalfd", B},
    {"signalfd4", B},

    /* memory */
    {"brk", B},
    {"mmap", B},
    {"munmap", B},
    {"mprotect", B},
    {"mremap", B},
    {"madvise", B},
    {"msync", B},
    {"mincore", B},
    {"membarrier", B},
    {"memfd_create", B},
    {"memfd_secret", D},
    {"mlock", D},
    {"mlock2", D},
    {"munlock", D},
    {"mlockall", D},
    {"munlockall", D},
    {"remap_file_pages", D},

    /* file descriptors and file I/O */
    {"open", B},
    {"openat", B},
    {"openat2", B},
    {"creat", B},
    {"close", B},
    {"close_range", B},
    {"read", B},
    {"write", B},
    {"readv", B},
    {"writev", B},
    {"pread64", B},
    {"pwrite64", B},
    {"preadv", B},
    {"pwritev", B},
    {"preadv2", B},
    {"pwritev2", B},
    {"lseek", B},
    {"dup", B},
    {"dup2", B},
    {"dup3", B},
    {"fcntl", B},
    {"ioctl", B}, /* TIOCSTI and TIOCLINUX refused by the argument filter */
    {"flock", B},
    {"fsync", B},
    {"fdatasync", B},
    {"sync", B},
    {"syncfs", B},
    {"sync_file_range", B},
    {"ftruncate", B},
    {"truncate", B},
    {"fallocate", B},
    {"fadvise64", B},
    {"readahead", B},
    {"copy_file_range", B},
    {"sendfile", B},
    {"splice", D},
    {"tee", D},
    {"vmsplice", D},

    /* the file system */
    {"stat", B},
    {"fstat", B},
    {"lstat", B},
    {"newfstatat", B},
    {"statx", B},
    {"statfs", B},
    {"fstatfs", B},
    {"access", B},
    {"faccessat", B},
    {"faccessat2", B},
    {"getcwd", B},
    {"chdir", B},
    {"fchdir", B},
    {"mkdir", B},
    {"mkdirat", B},
    {"rmdir", B},
    {"rename", B},
    {"renameat", B},
    {"renameat2", B},
    {"link", B},
    {"linkat", B},
    {"unlink", B},
    {"unlinkat", B},
    {"symlink", B},
    {"symlinkat", B},
    {"readlink", B},
    {"readlinkat", B},
    {"chmod", B},
    {"fchmod", B},
    {"fchmodat", B},
    {"chown", B},
    {"fchown", B},
    {"lchown", B},
    {"fchownat", B},
    {"umask", B},
    {"utime", B},
    {"utimes", B},
    {"utimensat", B},
    {"futimesat", B},
    {"getdents", B},
    {"getdents64", B},
    {"mknod", B}, /* FIFOs and sockets; device nodes refused by the argument filter */
    {"mknodat", B},
    {"getxattr", B},
    {"lgetxattr", B},
    {"fgetxattr", B},
    {"listxattr", B},
    {"llistxattr", B},
    {"flistxattr", B},
    {"setxattr", B},
    {"lsetxattr", B},
    {"fsetxattr", B},
    {"removexattr", B},
    {"lremovexattr", B},
    {"fremovexattr", B},
    {"inotify_init", B},
    {"inotify_init1", B},
    {"inotify_add_watch", B},
    {"inotify_rm_watch", B},
    {"fanotify_mark", D}, /* useless without fanotify_init, which is refused */

    /* waiting and event file descriptors */
    {"poll", B},
    {"ppoll", B},
    {"select", B},
    {"pselect6", B},
    {"epoll_create", B},
    {"epoll_create1", B},
    {"epoll_ctl", B},
    {"epoll_wait", B},
    {"epoll_pwait", B},
    {"epoll_pwait2", B},
    {"epoll_ctl_old", D},
    {"epoll_wait_old", D},
    {"eventfd", B},
    {"eventfd2", B},
    {"pipe", B},
    {"pipe2", B},
    {"futex", B},
    {"futex_waitv", D},

    /* time (reading it, sleeping, timers; setting the clock is refused) */
    {"clock_gettime", B},
    {"clock_getres", B},
    {"clock_nanosleep", B},
    {"nanosleep", B},
    {"gettimeofday", B},
    {"time", B},
    {"times", B},
    {"getitimer", B},
    {"setitimer", B},
    {"timer_create", B},
    {"timer_settime", B},
    {"timer_gettime", B},
    {"timer_getoverrun", B},
    {"timer_delete", B},
    {"timerfd_create", B},
    {"timerfd_settime", B},
    {"timerfd_gettime", B},

    /* limits and system information */
    {"getrlimit", B},
    {"setrlimit", B},
    {"prlimit64", B},
    {"getrusage", B},
    {"sysinfo", B},
    {"uname", B},
    {"getrandom", B},
    /* personality: seccomp.c allows the values of seccomp_personality_allowed only */

    /* sockets (families restricted by the argument filter) */
    {"socket", B},
    {"socketpair", B},
    {"bind", B},
    {"connect", B},
    {"listen", B},
    {"accept", B},
    {"accept4", B},
    {"getsockname", B},
    {"getpeername", B},
    {"getsockopt", B},
    {"setsockopt", B},
    {"sendto", B},
    {"recvfrom", B},
    {"sendmsg", B},
    {"recvmsg", B},
    {"sendmmsg", B},
    {"recvmmsg", B},
    {"shutdown", B},

    /* System V and POSIX IPC, Linux AIO */
    {"shmget", D},
    {"shmat", D},
    {"shmdt", D},
    {"shmctl", D},
    {"semget", D},
    {"semop", D},
    {"semtimedop", D},
    {"semctl", D},
    {"msgget", D},
    {"msgsnd", D},
    {"msgrcv", D},
    {"msgctl", D},
    {"mq_open", D},
    {"mq_unlink", D},
    {"mq_timedsend", D},
    {"mq_timedreceive", D},
    {"mq_notify", D},
    {"mq_getsetattr", D},
    {"io_setup", D},
    {"io_destroy", D},
    {"io_submit", D},
    {"io_cancel", D},
    {"io_getevents", D},
    {"io_pgetevents", D},

    /* a process may confine itself further */
    {"landlock_create_ruleset", D},
    {"landlock_add_rule", D},
    {"landlock_restrict_self", D},
};
const size_t seccomp_allow_table_len = ARRAY_SIZE(seccomp_allow_table);

const struct seccomp_deny seccomp_deny_table[] = {
    /* docs/SECURITY.md: clone3 -> ENOSYS so libc falls back to clone, whose flags are filtered */
    {"clone3", ENOSYS},
    /* io_uring submissions bypass per-syscall filtering */
    {"io_uring_setup", ENOSYS},
    {"io_uring_enter", ENOSYS},
    {"io_uring_register", ENOSYS},

    /* namespaces: no nested user namespaces, no joining others */
    {"unshare", EPERM},
    {"setns", EPERM},

    /* mounting, old and new API (Flatpak CVE-2021-41133), and changing root */
    {"mount", EPERM},
    {"umount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"open_tree", EPERM},
    {"move_mount", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"mount_setattr", EPERM},

    /* other processes' memory and file descriptors */
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"process_madvise", EPERM},
    {"kcmp", EPERM},
    {"pidfd_getfd", EPERM},

    /* kernel attack surface with a history of exploits */
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"bpf", EPERM},
    {"userfaultfd", EPERM},
    {"perf_event_open", EPERM},
    {"lookup_dcookie", EPERM},
    {"fanotify_init", EPERM},
    {"open_by_handle_at", EPERM}, /* "Shocker": reads any inode of the file system */
    {"name_to_handle_at", EPERM},

    /* the machine: kernel, modules, logs, accounting, quota, swap, power, clock */
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"syslog", EPERM},
    {"acct", EPERM},
    {"quotactl", EPERM},
    {"quotactl_fd", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"reboot", EPERM},
    {"settimeofday", EPERM},
    {"stime", EPERM},
    {"clock_settime", EPERM},
    {"clock_adjtime", EPERM},
    {"adjtimex", EPERM},
    {"sethostname", EPERM},
    {"setdomainname", EPERM},
    {"vhangup", EPERM},
    {"iopl", EPERM},
    {"ioperm", EPERM},

    /* NUMA placement (Docker: CAP_SYS_NICE only) */
    {"mbind", EPERM},
    {"set_mempolicy", EPERM},
    {"get_mempolicy", EPERM},
    {"migrate_pages", EPERM},
    {"move_pages", EPERM},

    /* obsolete interfaces */
    {"nfsservctl", EPERM},
    {"uselib", EPERM},
    {"ustat", EPERM},
    {"sysfs", EPERM},
    {"_sysctl", EPERM},
};
const size_t seccomp_deny_table_len = ARRAY_SIZE(seccomp_deny_table);

const unsigned long seccomp_personality_allowed[] = {
    0x0,        /* PER_LINUX */
    0x8,        /* PER_LINUX32 */
    0x20000,    /* UNAME26 */
    0x20008,    /* UNAME26 | PER_LINUX32 */
    0xffffffff, /* query the current persona */
};
const size_t seccomp_personality_allowed_len = ARRAY_SIZE(seccomp_personality_allowed);
