/* SPDX-License-Identifier: MIT */
/*
 * `sbx check`: kernel features tried for real. Anything that changes the trying process (a new
 * namespace, a seccomp filter) happens in a forked child that reports one line back through a
 * pipe and exits; the parent only reads. Every probe is a handful of syscalls (well under a
 * millisecond each), so `sbx check` stays fast.
 */
#include "kernel_check.h"
#include "kernel_check-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/seccomp.h"
#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"

_printf_(2, 3) static void set(struct kernel_check *out, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
        va_end(ap);
}

void in_child(probe_fn fn, void *arg, struct answer *a)
{
        int p[2];
        a->status = -1;
        a->line[0] = '\0';
        if (pipe2(p, O_CLOEXEC) < 0) {
                snprintf(a->line, sizeof(a->line), "pipe: %s", strerror(errno));
                return;
        }
        _cleanup_close_ int rd = p[0], wr = p[1];
        pid_t pid = fork();
        if (pid < 0) {
                snprintf(a->line, sizeof(a->line), "fork: %s", strerror(errno));
                return;
        }
        if (pid == 0) {
                char line[sizeof(a->line)] = "";
                int r = fn(arg, line, sizeof(line));
                (void)write_all(wr, line, strlen(line));
                _exit(r);
        }
        closep(&wr);
        size_t n = 0;
        ssize_t k;
        while (n + 1 < sizeof(a->line) &&
               (k = RETRY_EINTR(read(rd, a->line + n, sizeof(a->line) - 1 - n))) > 0)
                n += (size_t)k;
        a->line[n] = '\0';
        int st = 0;
        if (RETRY_EINTR(waitpid(pid, &st, 0)) == pid)
                a->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

long read_sysctl(const char *path)
{
        char buf[32] = "";
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
                return -1;
        long v = -1;
        return sscanf(buf, "%ld", &v) == 1 ? v : -1;
}

/* ---- user namespaces ---------------------------------------------------------------------- */

static int try_userns(void *arg, char *line, size_t size)
{
        (void)arg;
        if (unshare(CLONE_NEWUSER) == 0)
                return 0;
        snprintf(line, size, "%s", strerror(errno));
        return errno == EINVAL ? 2 : 1;
}

void kernel_check_userns(struct kernel_check *out)
{
        struct answer a;
        in_child(try_userns, NULL, &a);
        long max = read_sysctl("/proc/sys/user/max_user_namespaces");
        out->available = a.status == 0;
        if (out->available) {
                set(out, "unshare(CLONE_NEWUSER) works; user.max_user_namespaces = %ld", max);
                return;
        }
        long clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
        long aa = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        set(out, "unshare(CLONE_NEWUSER): %s%s%s%s", a.line[0] ? a.line : "the probe failed",
            a.status == 2 ? "; the kernel has no user namespaces (CONFIG_USER_NS)"
            : max == 0    ? "; user.max_user_namespaces is 0"
                          : "",
            clone == 0 ? "; kernel.unprivileged_userns_clone is 0" : "",
            aa == 1 ? "; kernel.apparmor_restrict_unprivileged_userns is 1" : "");
}

/* ---- overlayfs in a user namespace ------------------------------------------------------ */

static int write_file(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write_all(fd, text, strlen(text));
}

int map_self(char *line, size_t size)
{
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
                snprintf(line, size, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror(errno));
                return -1;
        }
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
        int r = write_file("/proc/self/uid_map", map);
        if (r == 0)
                r = write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
        if (r == 0)
                r = write_file("/proc/self/gid_map", map);
        if (r < 0) {
                snprintf(line, size, "writing the id maps: %s", strerror(-r));
                return -1;
        }
        return 0;
}

static int try_overlay(void *arg, char *line, size_t size)
{
        (void)arg;
        if (map_self(line, size) < 0)
                return 1;
        /* A private tmpfs for upper and work, mounted in the new namespace only. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("sbx-check", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0) {
                snprintf(line, size, "a tmpfs for the upper layer: %s", strerror(errno));
                return 1;
        }
        if (mkdir("/tmp/u", 0755) < 0 || mkdir("/tmp/w", 0755) < 0 || mkdir("/tmp/m", 0755) < 0) {
                snprintf(line, size, "mkdir: %s", strerror(errno));
                return 1;
        }
        if (mount("overlay", "/tmp/m", "overlay", MS_NOSUID | MS_NODEV,
                  "lowerdir=/usr,upperdir=/tmp/u,workdir=/tmp/w,userxattr") < 0) {
                int err = errno;
                snprintf(line, size, "mount overlay (lowerdir=/usr, userxattr): %s%s",
                         strerror(err),
                         err == EPERM    ? " (overlayfs is mountable in a user namespace "
                                           "from Linux 5.11)"
                         : err == ENODEV ? " (no overlayfs in this kernel)"
                         : err == EINVAL ? " (/usr has submounts, or its file system cannot be "
                                           "a lower layer)"
                                         : "");
                return 1;
        }
        return 0;
}

void kernel_check_overlay_userns(struct kernel_check *out)
{
        struct answer a;
        in_child(try_overlay, NULL, &a);
        out->available = a.status == 0;
        if (out->available)
                set(out, "overlay of /usr with userxattr mounts in a new user namespace");
        else
                set(out, "%s", a.line[0] ? a.line : "the probe failed");
}

/* ---- openat2, pidfd ------------------------------------------------------------------------ */

void kernel_check_openat2(struct kernel_check *out)
{
        out->available = false;
        _cleanup_close_ int usr = open("/usr", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH};
        _cleanup_close_ int in = usr < 0 ? -1 : sys_openat2(usr, ".", &how);
        if (in < 0) {
                set(out, "openat2(RESOLVE_BENEATH): %s%s", strerror(errno),
                    errno == ENOSYS ? " (Linux 5.6+)" : "");
                return;
        }
        _cleanup_close_ int up = sys_openat2(usr, "../etc", &how);
        if (up >= 0 || errno != EXDEV) {
                set(out, "openat2(RESOLVE_BENEATH) let '../etc' through (%s)",
                    up >= 0 ? "opened" : strerror(errno));
                return;
        }
        out->available = true;
        set(out, "openat2 with RESOLVE_BENEATH refuses '..' (EXDEV)");
}

void kernel_check_pidfd(struct kernel_check *out)
{
        out->available = false;
        _cleanup_close_ int fd = sys_pidfd_open(getpid(), 0);
        if (fd < 0) {
                set(out, "pidfd_open: %s%s", strerror(errno),
                    errno == ENOSYS ? " (Linux 5.3+)" : "");
                return;
        }
        if (sys_pidfd_send_signal(fd, 0) < 0) {
                set(out, "pidfd_send_signal: %s", strerror(errno));
                return;
        }
        out->available = true;
        set(out, "pidfd_open and pidfd_send_signal work");
}

/* ---- idmapped mounts ---------------------------------------------------------------------- */

/* A child in a new user namespace with a mapping, alive until the parent closes *hold. */
static pid_t userns_holder(int *hold)
{
        int ready[2], wait[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return -1;
        if (pipe2(wait, O_CLOEXEC) < 0) {
                close(ready[0]);
                close(ready[1]);
                return -1;
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(ready[0]);
                close(wait[1]);
                char line[128], c;
                if (map_self(line, sizeof(line)) == 0)
                        (void)write_all(ready[1], "1", 1);
                close(ready[1]);
                (void)RETRY_EINTR(read(wait[0], &c, 1));
                _exit(0);
        }
        close(ready[1]);
        close(wait[0]);
        char c = 0;
        if (pid < 0 || RETRY_EINTR(read(ready[0], &c, 1)) != 1) {
                close(wait[1]);
                close(ready[0]);
                if (pid > 0)
                        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
                return -1;
        }
        close(ready[0]);
        *hold = wait[1];
        return pid;
}

void kernel_check_idmap(struct kernel_check *out)
{
        out->available = false;
        int hold = -1;
        pid_t pid = userns_holder(&hold);
        if (pid < 0) {
                set(out, "no user namespace to map to (see the userns row)");
                return;
        }
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
        _cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int tree =
            ns < 0 ? -1 : open_tree(AT_FDCWD, "/usr", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        int err = errno;
        const char *step = ns < 0 ? "open the user namespace" : "open_tree(/usr, OPEN_TREE_CLONE)";
        if (tree >= 0) {
                struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)ns};
                if (sys_mount_setattr(tree, "", AT_EMPTY_PATH, &a) == 0)
                        out->available = true;
                err = errno;
                step = "mount_setattr(MOUNT_ATTR_IDMAP)";
        }
        close(hold);
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        if (out->available)
                set(out, "an idmapped clone of /usr works (root-run sessions use them for /usr "
                         "and volumes)");
        else
                set(out, "%s: %s%s", step, strerror(err),
                    err == EPERM    ? " (needs CAP_SYS_ADMIN on the host: only root-run sessions "
                                      "use it; without it a session cannot change files of /usr)"
                    : err == ENOSYS ? " (the new mount API is Linux 5.12+)"
                    : err == EINVAL ? " (/usr's file system does not support idmapped mounts)"
                                    : "");
}

/* ---- the seccomp filter on every syscall ABI -------------------------------------------- */

enum abi { ABI_NATIVE, ABI_X86, ABI_X32 };

struct abi_probe {
        enum abi abi;
        bool filtered;
};

/* getpid through one ABI: the pid, or -errno. */
static long getpid_via(enum abi abi)
{
#if defined(__x86_64__) && !defined(__ILP32__)
        if (abi == ABI_X86) {
                long ret;
                /* int 0x80 with i386 number 20 (getpid); r8-r11 are clobbered by the kernel */
                __asm__ volatile("int $0x80"
                                 : "=a"(ret)
                                 : "a"(20L)
                                 : "memory", "r8", "r9", "r10", "r11");
                return ret;
        }
        if (abi == ABI_X32) {
                long ret = syscall(0x40000000L | SYS_getpid); /* __X32_SYSCALL_BIT */
                return ret < 0 ? -errno : ret;
        }
#endif
        (void)abi;
        return getpid();
}

static int try_abi(void *arg, char *line, size_t size)
{
        const struct abi_probe *p = arg;
        if (p->filtered) {
                struct sbx_error e = {0};
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    seccomp_apply(SBX_SECCOMP_DEFAULT, &e) < 0) {
                        snprintf(line, size, "loading the filter: %s",
                                 e.message[0] ? e.message : strerror(errno));
                        return 3;
                }
        }
        long r = getpid_via(p->abi);
        if (p->abi == ABI_NATIVE && p->filtered && r == getpid()) {
                /* native calls must go through the filter: kcmp is one it refuses */
                long k = syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0);
                snprintf(line, size, "%s", k < 0 ? strerror(errno) : "allowed");
                return k < 0 && errno == EPERM ? 0 : 1;
        }
        if (r == getpid())
                return 0;
        snprintf(line, size, "%s", strerror((int)-r));
        return 2;
}

/* One ABI: does the kernel run it, and what does the default filter answer? */
static void check_abi(enum abi abi, struct kernel_check *out)
{
        struct abi_probe bare = {abi, false}, filtered = {abi, true};
        struct answer a, b;
        in_child(try_abi, &bare, &a);
        in_child(try_abi, &filtered, &b);
        char kernel[sizeof(a.line) + 64];
        if (a.status == 0)
                snprintf(kernel, sizeof(kernel), "the kernel runs it");
        else if (a.status > 128)
                snprintf(kernel, sizeof(kernel), "the kernel refuses it (signal %d)",
                         a.status - 128);
        else
                snprintf(kernel, sizeof(kernel), "the kernel refuses it (%s)", a.line);
        if (abi == ABI_NATIVE) {
                out->available = a.status == 0 && b.status == 0;
                set(out, "native ABI: %s; filtered by the default profile (kcmp: %s)", kernel,
                    b.line[0] ? b.line : "?");
                return;
        }
        /* Covered: the filter refuses it (ENOSYS), or the kernel kills the attempt. */
        out->available = b.status == 2 || b.status > 128;
        set(out, "compat ABI: %s; under the default profile: %s", kernel,
            b.status == 0    ? "it RUNS (not covered)"
            : b.status == 2  ? "refused (bad-arch action, ENOSYS)"
            : b.status > 128 ? "refused (the process is killed)"
                             : (b.line[0] ? b.line : "the probe failed"));
}

size_t kernel_check_seccomp_arches(const char **names, struct kernel_check *out, size_t n)
{
#if defined(__x86_64__) && !defined(__ILP32__)
        static const char *const abi_names[] = {"x86_64", "x86", "x32"};
        static const enum abi abis[] = {ABI_NATIVE, ABI_X86, ABI_X32};
#elif defined(__aarch64__)
        static const char *const abi_names[] = {"aarch64"};
        static const enum abi abis[] = {ABI_NATIVE};
#else
        static const char *const abi_names[] = {"native"};
        static const enum abi abis[] = {ABI_NATIVE};
#endif
        size_t k = 0;
        for (; k < ARRAY_SIZE(abis) && k < n; k++) {
                names[k] = abi_names[k];
                check_abi(abis[k], &out[k]);
        }
        return k;
}
