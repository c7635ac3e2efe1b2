/* SPDX-License-Identifier: MIT */
/*
 * /proc of the session's pid namespace, with Docker's masked and read-only paths, and the
 * per-user kernel object limits of the session's user namespace, opened before /proc/sys is
 * made read-only (docs/SECURITY.md, "/proc, /dev, /sys") and written by the init last (rootfs.h).
 */
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "mounts.h"
#include "rootfs.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static const char *const masked_files[] = {
    "kcore", "keys", "timer_list", "sched_debug", "latency_stats", "interrupts", "timer_stats"};
static const char *const masked_dirs[] = {"acpi", "asound", "scsi"};
static const char *const read_only[] = {"bus", "fs", "irq", "sys", "sysrq-trigger"};

/*
 * Limits of the session's user namespace. Sandboxed processes can create no namespace of any
 * kind (max 0); pid namespaces stay available for sbx's own per-exec reaper only, because
 * creating one needs CAP_SYS_ADMIN, which no sandboxed process has.
 */
static const char *const user_limits[][2] = {
    {"max_user_namespaces", "0"},     {"max_mnt_namespaces", "0"},
    {"max_net_namespaces", "0"},      {"max_ipc_namespaces", "0"},
    {"max_uts_namespaces", "0"},      {"max_cgroup_namespaces", "0"},
    {"max_time_namespaces", "0"},     {"max_pid_namespaces", "1024"},
    {"max_inotify_instances", "128"}, {"max_inotify_watches", "8192"},
    {"max_fanotify_groups", "0"},     {"max_fanotify_marks", "0"},
};

static_assert(ARRAY_SIZE(user_limits) == USER_LIMITS_COUNT, "USER_LIMITS_COUNT");

static int open_user_limits(int procfd, struct user_limits *l, struct sbx_error *e)
{
        for (size_t i = 0; i < ARRAY_SIZE(user_limits); i++) {
                char path[64];
                snprintf(path, sizeof(path), "sys/user/%s", user_limits[i][0]);
                l->fds[i] = openat(procfd, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (l->fds[i] < 0 && errno != ENOENT) /* ENOENT: an older kernel without it */
                        return sbx_unsupported(e, errno,
                                               "failed to open user.%s of the session's user "
                                               "namespace",
                                               user_limits[i][0]);
        }
        return 0;
}

void user_limits_init(struct user_limits *l)
{
        for (size_t i = 0; i < ARRAY_SIZE(user_limits); i++)
                l->fds[i] = -1;
}

int user_limits_write(const struct user_limits *l, struct sbx_error *e)
{
        for (size_t i = 0; i < ARRAY_SIZE(user_limits); i++)
                if (l->fds[i] >= 0 &&
                    write_all(l->fds[i], user_limits[i][1], strlen(user_limits[i][1])) < 0)
                        return sbx_unsupported(e, errno,
                                               "failed to set user.%s in the session's user "
                                               "namespace",
                                               user_limits[i][0]);
        return 0;
}

void user_limits_close(struct user_limits *l)
{
        for (size_t i = 0; i < ARRAY_SIZE(user_limits); i++)
                closep(&l->fds[i]);
}

static int mask_path(int procfd, int nullfd, const char *name, bool dir, struct sbx_error *e)
{
        _cleanup_close_ int t =
            openat(procfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
        if (t < 0)
                return 0; /* not present on this kernel */
        char what[64];
        snprintf(what, sizeof(what), "/proc/%s", name);
        if (!dir)
                return mnt_bind(nullfd, t, MOUNT_ATTR_RDONLY | MNT_SECURE, what, e);
        const char *opts[] = {"size", "0", "nr_inodes", "1", "mode", "0555", NULL, NULL};
        return mnt_new_fs("tmpfs", opts, MOUNT_ATTR_RDONLY | MNT_SECURE | MOUNT_ATTR_NOEXEC, t,
                          what, e);
}

static int make_read_only(int procfd, const char *name, struct sbx_error *e)
{
        _cleanup_close_ int t = openat(procfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
                return 0;
        char what[64];
        snprintf(what, sizeof(what), "/proc/%s", name);
        return mnt_bind(t, t, MOUNT_ATTR_RDONLY | MNT_SECURE | MOUNT_ATTR_NOEXEC, what, e);
}

int rootfs_setup_proc(int rootfd, int hostfd, struct user_limits *limits, struct sbx_error *e)
{
        _cleanup_close_ int t = mnt_open_target(rootfd, "/proc", true, e);
        if (t < 0)
                return t;
        int r = mnt_new_fs("proc", NULL, MNT_SECURE | MOUNT_ATTR_NOEXEC, t, "/proc", e);
        if (r < 0)
                return r;
        _cleanup_close_ int procfd =
            openat(rootfd, "proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct statfs sfs;
        if (procfd < 0 || fstatfs(procfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
                return sbx_internal(e, procfd < 0 ? errno : EXDEV, "the new /proc is not a procfs");

        _cleanup_close_ int nullfd = openat(hostfd, "dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (nullfd < 0)
                return sbx_internal(e, errno, "failed to open the host's /dev/null");
        for (size_t i = 0; i < ARRAY_SIZE(masked_files); i++)
                if ((r = mask_path(procfd, nullfd, masked_files[i], false, e)) < 0)
                        return r;
        for (size_t i = 0; i < ARRAY_SIZE(masked_dirs); i++)
                if ((r = mask_path(procfd, nullfd, masked_dirs[i], true, e)) < 0)
                        return r;
        r = open_user_limits(procfd, limits, e);
        for (size_t i = 0; r == 0 && i < ARRAY_SIZE(read_only); i++)
                r = make_read_only(procfd, read_only[i], e);
        return r;
}
