/* SPDX-License-Identifier: MIT */
/*
 * probe: try exactly one operation from inside a sandbox and say what the kernel answered.
 *
 *   cc -static -O2 -o probe tests/probe.c
 *   probe NAME [PID]     ->  "NAME: ok" (exit 0) or "NAME: errno=EPERM (...)" (exit 1)
 *   probe --list         ->  the probe names
 *
 * Every probe is a raw syscall (no libc fallback hides the answer) and is harmless if it
 * succeeds: bad magic numbers, missing paths, no-op values, the probe's own child or its own
 * private pty. Exit 2 is a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <sys/timex.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Constants glibc 2.36 or old uapi headers may lack. */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef FSCONFIG_SET_FLAG
#define FSCONFIG_SET_FLAG 0
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef KCMP_FILE
#define KCMP_FILE 0
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef Q_GETFMT
#define Q_GETFMT 0x800004
#endif
#define X32_SYSCALL_BIT 0x40000000UL
#define I386_NR_GETPID 20
#define I386_NR_UNSHARE 310

static const char *opt_pid; /* the optional PID argument */
static volatile long probe_word = 0x5eb0c5;

/* ---- helpers --------------------------------------------------------------------------- */

/* A child that sleeps until killed: the default target of the cross-process probes. */
static pid_t sleeper(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

static void reap(pid_t pid)
{
        if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
}

static pid_t target_pid(pid_t *owned)
{
        *owned = -1;
        if (opt_pid)
                return (pid_t)strtol(opt_pid, NULL, 10);
        return *owned = sleeper();
}

/* Wait for a child that _exit()s 0 at once; the clone-style probes use it. */
static long child_done(long pid)
{
        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, __WALL);
        return pid < 0 ? -1 : 0;
}

/*
 * Run one terminal ioctl on the slave of a fresh pty that is the caller's controlling
 * terminal, in a child of its own session: the kernel itself would allow TIOCSTI there, so a
 * refusal is the sandbox's, and nothing is ever typed into a real terminal.
 */
static long tty_ioctl(unsigned long request, void *arg)
{
        int pfd[2];
        if (pipe(pfd) < 0)
                return -1;
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                int err = 0;
                int m = posix_openpt(O_RDWR | O_NOCTTY);
                if (setsid() < 0 || m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
                        err = errno;
                int s = err ? -1 : open(ptsname(m), O_RDWR); /* becomes the controlling tty */
                if (!err && s < 0)
                        err = errno;
                if (!err && syscall(SYS_ioctl, s, request, arg) < 0)
                        err = errno;
                if (write(pfd[1], &err, sizeof(err)) < 0)
                        _exit(1);
                _exit(0);
        }
        close(pfd[1]);
        int err = EIO;
        if (read(pfd[0], &err, sizeof(err)) != sizeof(err))
                err = EIO;
        close(pfd[0]);
        waitpid(pid, NULL, 0);
        errno = err;
        return err ? -1 : 0;
}

/* A raw syscall through the 32-bit int $0x80 entry point (the x86 compat ABI). */
static long int80(long nr, long a1)
{
#if defined(__x86_64__)
        long ret;
        /* kernels before 4.17 clobber r8-r11 on this path */
        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(nr), "b"(a1)
                         : "memory", "cc", "r8", "r9", "r10", "r11");
        if (ret < 0 && ret > -4096) {
                errno = (int)-ret;
                return -1;
        }
        return ret;
#else
        (void)nr;
        (void)a1;
        errno = ENOSYS;
        return -1;
#endif
}

static long close_ok(long fd)
{
        if (fd >= 0)
                close((int)fd);
        return fd < 0 ? -1 : 0;
}

/* ---- the probes: each returns >= 0 on success, -1 with errno on failure ----------------- */

static long p_unshare_user(void)
{
        return syscall(SYS_unshare, CLONE_NEWUSER);
}
static long p_unshare_mount(void)
{
        return syscall(SYS_unshare, CLONE_NEWNS);
}
static long p_unshare_net(void)
{
        return syscall(SYS_unshare, CLONE_NEWNET);
}
static long p_unshare_newpid(void)
{
        return syscall(SYS_unshare, CLONE_NEWPID);
}
static long p_clone_newuser(void)
{
        return child_done(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
}
static long p_clone_newns(void)
{
        return child_done(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0));
}
static long p_clone_plain(void)
{
        return child_done(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
}
static long p_clone3(void)
{
        struct clone_args a = {.exit_signal = SIGCHLD};
        return child_done(syscall(SYS_clone3, &a, sizeof(a)));
}
static long p_fork(void)
{
        return child_done(fork());
}
static long p_setns(void)
{
        int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        long r = syscall(SYS_setns, fd, CLONE_NEWNET);
        close(fd);
        return r;
}
static long p_mount(void)
{
        mkdir("/tmp/x", 0700);
        long r = syscall(SYS_mount, "sbx-probe", "/tmp/x", "tmpfs", 0UL, "size=1m");
        if (r == 0)
                syscall(SYS_umount2, "/tmp/x", MNT_DETACH);
        return r;
}
static long p_umount(void)
{
        return syscall(SYS_umount2, "/tmp/x", 0);
}
static long p_pivot_root(void)
{
        return syscall(SYS_pivot_root, "/tmp/x", "/tmp/x");
}
static long p_chroot(void)
{
        return syscall(SYS_chroot, "/");
}
static long p_open_tree(void)
{
        return close_ok(syscall(SYS_open_tree, AT_FDCWD, "/tmp", OPEN_TREE_CLONE | O_CLOEXEC));
}
static long p_move_mount(void)
{
        return syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp/x", MOVE_MOUNT_F_EMPTY_PATH);
}
static long p_fsopen(void)
{
        return close_ok(syscall(SYS_fsopen, "tmpfs", 0));
}
static long p_fsconfig(void)
{
        return syscall(SYS_fsconfig, -1, FSCONFIG_SET_FLAG, "ro", NULL, 0);
}
static long p_fsmount(void)
{
        return close_ok(syscall(SYS_fsmount, -1, 0, 0));
}
static long p_fspick(void)
{
        return close_ok(syscall(SYS_fspick, AT_FDCWD, "/tmp", 0));
}
static long p_mount_setattr(void)
{
        uint64_t attr[4] = {0};
        return syscall(SYS_mount_setattr, -1, "", AT_EMPTY_PATH, attr, sizeof(attr));
}
static long p_io_uring_setup(void)
{
        struct io_uring_params params = {0};
        return close_ok(syscall(SYS_io_uring_setup, 1, &params));
}
static long p_io_uring_enter(void)
{
        return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0);
}
static long p_io_uring_register(void)
{
        return syscall(SYS_io_uring_register, -1, 0, NULL, 0);
}
static long p_ptrace_attach(void)
{
        pid_t owned, pid = target_pid(&owned);
        long r = syscall(SYS_ptrace, PTRACE_ATTACH, pid, 0, 0);
        if (r == 0) {
                waitpid(pid, NULL, __WALL);
                syscall(SYS_ptrace, PTRACE_DETACH, pid, 0, 0);
        }
        int err = errno;
        reap(owned);
        errno = err;
        return r;
}
static long p_ptrace_traceme(void)
{
        return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
}
static long p_process_vm_readv(void)
{
        pid_t owned, pid = target_pid(&owned);
        long word = 0;
        struct iovec local = {&word, sizeof(word)};
        struct iovec remote = {(void *)&probe_word, sizeof(word)};
        long r = syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0);
        int err = errno;
        reap(owned);
        errno = err;
        return r;
}
static long p_kcmp(void)
{
        return syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0);
}
static long p_pidfd_getfd(void)
{
        int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (pidfd < 0)
                return -1;
        long r = close_ok(syscall(SYS_pidfd_getfd, pidfd, 0, 0));
        int err = errno;
        close(pidfd);
        errno = err;
        return r;
}
static long p_tiocsti(void)
{
        char c = ' ';
        return tty_ioctl(TIOCSTI, &c);
}
static long p_tiocsti_high(void)
{
        char c = ' ';
        return tty_ioctl(TIOCSTI | (1UL << 32), &c);
}
static long p_tioclinux(void)
{
        char subcode = 7; /* TIOCL_GETSHIFTSTATE: reads only */
        return tty_ioctl(TIOCLINUX, &subcode);
}
static long p_keyctl(void)
{
        return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}
static long p_add_key(void)
{
        return syscall(SYS_add_key, "user", "sbx-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
}
static long p_request_key(void)
{
        return syscall(SYS_request_key, "user", "sbx-probe-none", NULL, KEY_SPEC_PROCESS_KEYRING);
}
static long p_bpf(void)
{
        union {
                struct {
                        uint32_t map_type, key_size, value_size, max_entries;
                } m;
                char pad[128];
        } attr = {.m = {2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1}};
        return close_ok(syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr, sizeof(attr)));
}
static long p_userfaultfd(void)
{
        return close_ok(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}
static long p_perf_event_open(void)
{
        struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE,
                                    .size = sizeof(a),
                                    .config = PERF_COUNT_SW_TASK_CLOCK,
                                    .disabled = 1,
                                    .exclude_kernel = 1};
        return close_ok(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}
/* Invalid flags: EINVAL once past seccomp and the capability check. */
static long p_kexec_load(void)
{
        return syscall(SYS_kexec_load, 0, 0, NULL, 0x80000000UL);
}
static long p_init_module(void)
{
        return syscall(SYS_init_module, NULL, 0, "");
}
static long p_finit_module(void)
{
        return syscall(SYS_finit_module, -1, "", 0);
}
static long p_delete_module(void)
{
        return syscall(SYS_delete_module, "sbx_probe_none", O_NONBLOCK);
}
static long p_syslog(void)
{
        return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0);
}
static long p_acct(void)
{
        return syscall(SYS_acct, "/nonexistent/sbx-probe");
}
static long p_quotactl(void)
{
        char buf[64];
        return syscall(SYS_quotactl, QCMD(Q_GETFMT, USRQUOTA), "/nonexistent", 0, buf);
}
static long p_swapon(void)
{
        return syscall(SYS_swapon, "/nonexistent/sbx-probe", 0);
}
static long p_swapoff(void)
{
        return syscall(SYS_swapoff, "/nonexistent/sbx-probe");
}
static long p_reboot(void)
{
        return syscall(SYS_reboot, 0, 0, LINUX_REBOOT_CMD_CAD_OFF, NULL);
}
static long p_settimeofday(void)
{
        return syscall(SYS_settimeofday, NULL, NULL);
}
static long p_clock_settime(void)
{
        struct timespec ts = {0};
        return syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts); /* never settable: EINVAL */
}
/* ADJ_TICK with tick 0: EPERM without CAP_SYS_TIME, else EINVAL; never changes the clock. */
static long p_clock_adjtime(void)
{
        struct timex tx = {.modes = ADJ_TICK, .tick = 0};
        return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
}
static long p_adjtimex(void)
{
        struct timex tx = {.modes = ADJ_TICK, .tick = 0};
        return syscall(SYS_adjtimex, &tx);
}
static long p_name_to_handle_at(void)
{
        struct {
                unsigned int bytes;
                int type;
                unsigned char h[128];
        } fh = {.bytes = 128};
        int mount_id;
        return syscall(SYS_name_to_handle_at, AT_FDCWD, "/", &fh, &mount_id, 0);
}
static long p_open_by_handle_at(void)
{
        struct {
                unsigned int bytes;
                int type;
                unsigned char h[128];
        } fh = {.bytes = 8, .type = 1};
        int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        long r = close_ok(syscall(SYS_open_by_handle_at, root, &fh, O_RDONLY | O_CLOEXEC));
        int err = errno;
        close(root);
        errno = err;
        return r;
}
static long sock(int family, int type, int proto)
{
        return close_ok(syscall(SYS_socket, family, type | SOCK_CLOEXEC, proto));
}
static long p_socket_packet(void)
{
        return sock(AF_PACKET, SOCK_RAW, 0x0300 /* ETH_P_ALL */);
}
static long p_socket_alg(void)
{
        return sock(AF_ALG, SOCK_SEQPACKET, 0);
}
static long p_socket_vsock(void)
{
        return sock(AF_VSOCK, SOCK_STREAM, 0);
}
static long p_socket_raw(void)
{
        return sock(AF_INET, SOCK_RAW, 1 /* ICMP */);
}
static long p_socket_netlink(void)
{
        return sock(AF_NETLINK, SOCK_RAW, 0 /* ROUTE */);
}
static long p_socket_unix(void)
{
        return sock(AF_UNIX, SOCK_STREAM, 0);
}
static long p_socket_inet(void)
{
        return sock(AF_INET, SOCK_STREAM, 0);
}
static long p_socket_inet6(void)
{
        return sock(AF_INET6, SOCK_DGRAM, 0);
}
static long p_socket_high(void)
{
        /* AF_PACKET with high garbage bits: the kernel reads an int, so this is AF_PACKET */
        return close_ok(syscall(SYS_socket, AF_PACKET | (1UL << 32), SOCK_RAW, 0x0300));
}
static long p_socketpair_unix(void)
{
        int sv[2];
        long r = syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
        if (r == 0) {
                close(sv[0]);
                close(sv[1]);
        }
        return r;
}
static long p_personality(void)
{
        return syscall(SYS_personality, READ_IMPLIES_EXEC);
}
static long p_personality_query(void)
{
        return syscall(SYS_personality, 0xffffffffUL);
}
static long p_sethostname(void)
{
        struct utsname u;
        if (uname(&u) < 0)
                return -1;
        return syscall(SYS_sethostname, u.nodename, strlen(u.nodename)); /* the same name */
}
static long p_setdomainname(void)
{
        struct utsname u;
        if (uname(&u) < 0)
                return -1;
        return syscall(SYS_setdomainname, u.domainname, strlen(u.domainname));
}
static long p_lookup_dcookie(void)
{
        char buf[64];
        return syscall(SYS_lookup_dcookie, 0, buf, sizeof(buf));
}
static long p_vmsplice(void)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        char c = 'x';
        struct iovec iov = {&c, 1};
        long r = syscall(SYS_vmsplice, p[1], &iov, 1, 0);
        int err = errno;
        close(p[0]);
        close(p[1]);
        errno = err;
        return r;
}
static long p_mknod(void)
{
        const char *path = "/tmp/sbx-probe-null";
        long r = syscall(SYS_mknodat, AT_FDCWD, path, S_IFCHR | 0600, makedev(1, 3));
        if (r == 0)
                unlink(path);
        return r;
}
/* A device node in a directory that does not exist: the kernel answers ENOENT before it checks
 * CAP_MKNOD, so EPERM here can only come from the filter. */
static long p_mknod_chr_nodir(void)
{
        return syscall(SYS_mknodat, AT_FDCWD, "/nonexistent-dir/x", S_IFCHR | 0600, makedev(1, 3));
}
static long p_mknod_blk_nodir(void)
{
        return syscall(SYS_mknodat, AT_FDCWD, "/nonexistent-dir/x", S_IFBLK | 0600, makedev(7, 0));
}
/* High mode bits set: the kernel reads a 16-bit mode, so this is still a device node. */
static long p_mknod_chr_high(void)
{
        return syscall(SYS_mknodat, AT_FDCWD, "/nonexistent-dir/x", 0xffff0000UL | S_IFCHR | 0600,
                       makedev(1, 3));
}
#ifdef SYS_mknod
static long p_mknod_legacy_blk(void)
{
        return syscall(SYS_mknod, "/nonexistent-dir/x", S_IFBLK | 0600, makedev(7, 0));
}
#else
static long p_mknod_legacy_blk(void)
{
        return p_mknod_blk_nodir();
}
#endif
/* The whiteout (a 0:0 character device) needs no CAP_MKNOD: the kernel makes it. */
static long p_mknod_whiteout(void)
{
        const char *path = "/tmp/sbx-probe-whiteout";
        long r = syscall(SYS_mknodat, AT_FDCWD, path, S_IFCHR | 0600, makedev(0, 0));
        if (r == 0)
                unlink(path);
        return r;
}
static long p_mknod_fifo(void)
{
        const char *path = "/tmp/sbx-probe-fifo";
        long r = syscall(SYS_mknodat, AT_FDCWD, path, S_IFIFO | 0600, 0);
        if (r == 0)
                unlink(path);
        return r;
}
static long p_mknod_sock(void)
{
        const char *path = "/tmp/sbx-probe-sock";
        long r = syscall(SYS_mknodat, AT_FDCWD, path, S_IFSOCK | 0600, 0);
        if (r == 0)
                unlink(path);
        return r;
}
static long p_int80_getpid(void)
{
        return int80(I386_NR_GETPID, 0);
}
static long p_int80_unshare(void)
{
        return int80(I386_NR_UNSHARE, CLONE_NEWUSER);
}
static long p_x32_getpid(void)
{
        return syscall(SYS_getpid | X32_SYSCALL_BIT);
}
static long p_x32_unshare(void)
{
        return syscall(SYS_unshare | X32_SYSCALL_BIT, CLONE_NEWUSER);
}
static long p_getpid(void)
{
        return syscall(SYS_getpid);
}

static const struct probe {
        const char *name;
        long (*fn)(void);
} probes[] = {
    {"unshare-user", p_unshare_user},
    {"unshare-mount", p_unshare_mount},
    {"unshare-net", p_unshare_net},
    {"unshare-newpid", p_unshare_newpid},
    {"clone-newuser", p_clone_newuser},
    {"clone-newns", p_clone_newns},
    {"clone", p_clone_plain},
    {"clone3", p_clone3},
    {"fork", p_fork},
    {"setns", p_setns},
    {"mount", p_mount},
    {"umount", p_umount},
    {"pivot_root", p_pivot_root},
    {"chroot", p_chroot},
    {"open_tree", p_open_tree},
    {"move_mount", p_move_mount},
    {"fsopen", p_fsopen},
    {"fsconfig", p_fsconfig},
    {"fsmount", p_fsmount},
    {"fspick", p_fspick},
    {"mount_setattr", p_mount_setattr},
    {"io_uring_setup", p_io_uring_setup},
    {"io_uring_enter", p_io_uring_enter},
    {"io_uring_register", p_io_uring_register},
    {"ptrace-attach", p_ptrace_attach},
    {"ptrace-traceme", p_ptrace_traceme},
    {"process_vm_readv", p_process_vm_readv},
    {"kcmp", p_kcmp},
    {"pidfd_getfd", p_pidfd_getfd},
    {"tiocsti", p_tiocsti},
    {"tiocsti-high", p_tiocsti_high},
    {"tioclinux", p_tioclinux},
    {"keyctl", p_keyctl},
    {"add_key", p_add_key},
    {"request_key", p_request_key},
    {"bpf", p_bpf},
    {"userfaultfd", p_userfaultfd},
    {"perf_event_open", p_perf_event_open},
    {"kexec_load", p_kexec_load},
    {"init_module", p_init_module},
    {"finit_module", p_finit_module},
    {"delete_module", p_delete_module},
    {"syslog", p_syslog},
    {"acct", p_acct},
    {"quotactl", p_quotactl},
    {"swapon", p_swapon},
    {"swapoff", p_swapoff},
    {"reboot", p_reboot},
    {"settimeofday", p_settimeofday},
    {"clock_settime", p_clock_settime},
    {"clock_adjtime", p_clock_adjtime},
    {"adjtimex", p_adjtimex},
    {"open_by_handle_at", p_open_by_handle_at},
    {"name_to_handle_at", p_name_to_handle_at},
    {"socket-packet", p_socket_packet},
    {"socket-alg", p_socket_alg},
    {"socket-vsock", p_socket_vsock},
    {"socket-raw", p_socket_raw},
    {"socket-high", p_socket_high},
    {"socket-netlink", p_socket_netlink},
    {"socket-unix", p_socket_unix},
    {"socket-inet", p_socket_inet},
    {"socket-inet6", p_socket_inet6},
    {"socketpair-unix", p_socketpair_unix},
    {"personality", p_personality},
    {"personality-query", p_personality_query},
    {"sethostname", p_sethostname},
    {"setdomainname", p_setdomainname},
    {"lookup_dcookie", p_lookup_dcookie},
    {"vmsplice", p_vmsplice},
    {"mknod", p_mknod},
    {"mknod-chr-nodir", p_mknod_chr_nodir},
    {"mknod-blk-nodir", p_mknod_blk_nodir},
    {"mknod-chr-high", p_mknod_chr_high},
    {"mknod-legacy-blk", p_mknod_legacy_blk},
    {"mknod-whiteout", p_mknod_whiteout},
    {"mknod-fifo", p_mknod_fifo},
    {"mknod-sock", p_mknod_sock},
    {"int80-getpid", p_int80_getpid},
    {"int80-unshare", p_int80_unshare},
    {"x32-getpid", p_x32_getpid},
    {"x32-unshare", p_x32_unshare},
    {"getpid", p_getpid},
    {"exec-setuid", NULL}, /* not a syscall probe: the test suite runs a setuid binary */
};

#define E(x)                                                                                       \
        {                                                                                          \
                x, #x                                                                              \
        }
static const struct {
        int num;
        const char *name;
} errnames[] = {
    E(EPERM),    E(ENOENT),       E(ESRCH),        E(EINTR),           E(EIO),
    E(ENXIO),    E(E2BIG),        E(ENOEXEC),      E(EBADF),           E(ECHILD),
    E(EAGAIN),   E(ENOMEM),       E(EACCES),       E(EFAULT),          E(EBUSY),
    E(EEXIST),   E(EXDEV),        E(ENODEV),       E(ENOTDIR),         E(EISDIR),
    E(EINVAL),   E(ENFILE),       E(EMFILE),       E(ENOTTY),          E(ENOSPC),
    E(ESPIPE),   E(EROFS),        E(ERANGE),       E(ENOSYS),          E(EOPNOTSUPP),
    E(ENOKEY),   E(EKEYREJECTED), E(EAFNOSUPPORT), E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT),
    E(EUSERS),   E(ELOOP),        E(ENAMETOOLONG), E(EOVERFLOW),       E(EADDRNOTAVAIL),
    E(ENOTSOCK), E(ENOPKG),       E(EKEYREVOKED),  E(ENOMEDIUM),       E(ENOTCONN),
};

static const char *errname(int e)
{
        for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
                if (errnames[i].num == e)
                        return errnames[i].name;
        return NULL;
}

int main(int argc, char **argv)
{
        if (argc == 2 && strcmp(argv[1], "--list") == 0) {
                for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
                        puts(probes[i].name);
                return 0;
        }
        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: probe NAME [PID] | probe --list\n");
                return 2;
        }
        opt_pid = argc == 3 ? argv[2] : NULL;

        for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
                if (strcmp(argv[1], probes[i].name) != 0)
                        continue;
                if (!probes[i].fn) {
                        printf("%s: skipped\n", probes[i].name);
                        return 0;
                }
                errno = 0;
                long r = probes[i].fn();
                if (r >= 0) {
                        printf("%s: ok\n", probes[i].name);
                        return 0;
                }
                int e = errno;
                const char *n = errname(e);
                if (n)
                        printf("%s: errno=%s (%s)\n", probes[i].name, n, strerror(e));
                else
                        printf("%s: errno=%d (%s)\n", probes[i].name, e, strerror(e));
                return 1;
        }
        fprintf(stderr, "probe: unknown probe '%s' (try --list)\n", argv[1]);
        return 2;
}
