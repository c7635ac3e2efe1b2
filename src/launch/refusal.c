/* SPDX-License-Identifier: MIT */
/* Why this host refuses a session (refusal.h). */
#include "refusal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "kernel_check-internal.h"
#include "kernel_check.h"

#define SECCOMP_FIX                                                                                \
        "run the container with --security-opt seccomp=unconfined (or a profile that allows "      \
        "unshare, clone with namespace flags, and mount)"
#define APPARMOR_FIX                                                                               \
        "load sbx's AppArmor profile (apparmor_parser -r /etc/apparmor.d/sbx; meson install "      \
        "puts it there), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"

/* The child's exit status is the errno of unshare(CLONE_NEWUSER), 0 when it works. */
static int try_unshare(void *arg, char *line, size_t size)
{
        (void)arg;
        (void)line;
        (void)size;
        return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

/* 1: the id maps cannot be written; 2: no tmpfs can be mounted in the new namespaces; 3: no
 * hostname can be set in a new UTS namespace (what a container's seccomp profile refuses to a
 * process without CAP_SYS_ADMIN in the container, though the new namespace grants it). */
static int try_mount(void *arg, char *line, size_t size)
{
        (void)arg;
        if (map_self(line, size) < 0)
                return 1;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("sbx-check", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") < 0) {
                snprintf(line, size, "mount tmpfs: %s", strerror(errno));
                return 2;
        }
        if (unshare(CLONE_NEWUTS) < 0 || sethostname("sbx-check", 9) < 0) {
                snprintf(line, size, "sethostname in a new UTS namespace: %s", strerror(errno));
                return 3;
        }
        return 0;
}

/* A new proc for a new pid namespace, as the session's init mounts it: the errno, 0 when it
 * mounts. 1 and 2 as try_mount. */
static int try_proc(void *arg, char *line, size_t size)
{
        (void)arg;
        if (map_self(line, size) < 0)
                return 1;
        if (unshare(CLONE_NEWPID) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return 2;
        pid_t pid = fork(); /* the pid namespace's first process may mount its proc */
        if (pid == 0)
                _exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0
                          ? 0
                          : errno);
        int st = 0;
        if (pid < 0 || RETRY_EINTR(waitpid(pid, &st, 0)) != pid || !WIFEXITED(st))
                return 2;
        return WEXITSTATUS(st);
}

/* Whether a seccomp filter is on this process (set by whoever started sbx). */
static bool filtered(void)
{
        _cleanup_buf_ struct buf b = {0};
        if (read_file_at(AT_FDCWD, "/proc/self/status", &b, 16384) < 0 || !b.data)
                return false;
        const char *s = strstr(b.data, "\nSeccomp:");
        return s && strtol(s + 9, NULL, 10) == 2;
}

/* Root in a user namespace that denies setgroups (unshare -r): sbx as root drops the
 * supplementary groups first, which it may not there. */
static bool setgroups_denied(void)
{
        _cleanup_buf_ struct buf b = {0};
        return geteuid() == 0 && read_file_at(AT_FDCWD, "/proc/self/setgroups", &b, 64) == 0 &&
               b.data && strncmp(b.data, "deny", 4) == 0;
}

static bool userns_refused(int err, char *out, size_t n)
{
        long max = read_sysctl("/proc/sys/user/max_user_namespaces");
        long clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
        long aa = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        if (err == EINVAL)
                snprintf(out, n,
                         "this kernel has no user namespaces (CONFIG_USER_NS is off); "
                         "fix: a kernel built with CONFIG_USER_NS=y");
        else if (err == ENOSPC && max == 0)
                snprintf(out, n,
                         "user namespaces are disabled: user.max_user_namespaces is 0; "
                         "fix: sysctl -w user.max_user_namespaces=15000 (as root, where "
                         "the limit is set: the host, or the container's user namespace)");
        else if (err == ENOSPC)
                snprintf(out, n,
                         "the user namespace limit is reached (user.max_user_namespaces = %ld); "
                         "fix: raise it (sysctl -w user.max_user_namespaces=%ld as root) or end "
                         "other sessions",
                         max, max > 0 && max < 15000 ? 15000 : 2 * max);
        else if (err == EPERM && clone == 0 && geteuid() != 0)
                snprintf(out, n,
                         "unprivileged user namespaces are disabled "
                         "(kernel.unprivileged_userns_clone = 0); fix: sysctl -w "
                         "kernel.unprivileged_userns_clone=1 (as root)");
        else if (err == EPERM && filtered())
                snprintf(out, n,
                         "a seccomp filter around sbx (a container's profile) refuses "
                         "unshare(CLONE_NEWUSER); fix: " SECCOMP_FIX);
        else if (err == EPERM && aa == 1)
                snprintf(out, n,
                         "AppArmor refuses user namespaces to sbx "
                         "(kernel.apparmor_restrict_unprivileged_userns = 1); "
                         "fix: " APPARMOR_FIX);
        else if (err == EPERM)
                snprintf(out, n,
                         "user namespaces are refused here (unshare(CLONE_NEWUSER): "
                         "Operation not permitted: a chroot, a security module or a "
                         "container's restrictions); fix: run sbx where user namespaces "
                         "are allowed (see 'sbx check')");
        else
                return false;
        return true;
}

/* Something a session does in its user namespace is refused: by AppArmor's restriction, by
 * a seccomp filter around sbx, or by something else (what is in line). */
static void mount_refused(const char *line, char *out, size_t n)
{
        long aa = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        if (aa == 1)
                snprintf(out, n,
                         "AppArmor takes every capability from sbx's user namespaces "
                         "(kernel.apparmor_restrict_unprivileged_userns = 1: %s); "
                         "fix: " APPARMOR_FIX,
                         line);
        else if (filtered())
                snprintf(out, n,
                         "a seccomp filter around sbx (a container's profile) refuses "
                         "what a session needs in its user namespace (%s); "
                         "fix: " SECCOMP_FIX,
                         line);
        else
                snprintf(out, n,
                         "a session's namespaces are refused what they need here (%s); "
                         "fix: run sbx where user namespaces may mount and set a "
                         "hostname",
                         line);
}

bool host_refusal(bool overlay, char *out, size_t n)
{
        struct answer a;
        out[0] = '\0';
        if (setgroups_denied()) {
                snprintf(out, n,
                         "this user namespace denies setgroups (made with unshare -r, "
                         "or setgroups=deny), which sbx as root needs; fix: run sbx as "
                         "a non-root user here, or in a user namespace that allows "
                         "setgroups");
                return true;
        }
        struct statvfs sv;
        if (statvfs("/proc/self", &sv) == 0 && sv.f_flag & ST_RDONLY) {
                snprintf(out, n,
                         "/proc is read-only here: sbx writes a session's id maps "
                         "through it, and the kernel mounts no read-write proc below a "
                         "read-only one; fix: a read-write /proc (mount -o remount,rw "
                         "/proc; in a container: no read-only /proc, podman run "
                         "--security-opt unmask=ALL)");
                return true;
        }
        in_child(try_unshare, NULL, &a);
        if (a.status > 0 && a.status < 128)
                return userns_refused(a.status, out, n);
        in_child(try_mount, NULL, &a);
        if (a.status == 1 || a.status == 2) {
                mount_refused(a.line, out, n);
                return true;
        }
        /* From here on each cause is independent of the others: name every one found, so
         * that the user does not fix one only to meet the next. */
        size_t used = 0;
        if (a.status == 3)
                mount_refused(a.line, out, n);
        used = strlen(out);
        in_child(try_proc, NULL, &a);
        if (a.status == EPERM || a.status == EACCES)
                snprintf(out + used, n - used,
                         "%sthe kernel will not mount a new /proc here: this "
                         "/proc is masked or read-only (parts of it covered, as container "
                         "runtimes do); fix: run the container with an unmasked /proc (podman "
                         "run --security-opt unmask=ALL, docker run --security-opt "
                         "systempaths=unconfined)",
                         used ? "; also " : "");
        used = strlen(out);
        if (overlay) {
                struct kernel_check k;
                kernel_check_overlay_userns(&k);
                if (!k.available)
                        snprintf(out + used, n - used,
                                 "%sno overlayfs in a user namespace here "
                                 "(%s); fix: --read-only (no overlay: only /workspace, /tmp and "
                                 "mounts are writable), or Linux 5.11 or newer",
                                 used ? "; also " : "", k.detail);
        }
        return out[0] != '\0';
}

void host_refusal_explain(bool overlay, struct sbx_error *e)
{
        char why[900];
        if (e->exit_code == EXIT_USAGE || e->exit_code == EXIT_FAILED ||
            !host_refusal(overlay, why, sizeof(why)))
                return;
        memset(e, 0, sizeof(*e));
        (void)sbx_unsupported(e, 0, "cannot create a session here: %s", why);
}
