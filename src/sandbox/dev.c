/* SPDX-License-Identifier: MIT */
/* A minimal /dev: a few host device nodes, a private devpts, /dev/shm; then read-only. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "shared/macros.h"
#include "mounts.h"
#include "rootfs.h"

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

static int bind_node(int devfd, int hostfd, const char *name, struct sbx_error *e)
{
        char host[32], target[32];
        snprintf(host, sizeof(host), "dev/%s", name);
        snprintf(target, sizeof(target), "/%s", name);
        _cleanup_close_ int src = openat(hostfd, host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (src < 0 || fstat(src, &st) < 0 || !S_ISCHR(st.st_mode))
                return sbx_unsupported(e, src < 0 ? errno : ENODEV,
                                       "the host has no usable /dev/%s", name);
        _cleanup_close_ int t = mnt_open_target(devfd, target, false, e);
        if (t < 0)
                return t;
        return mnt_bind(src, t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, target, e);
}

int rootfs_setup_dev(const struct sbx_config *c, int rootfd, int hostfd, struct sbx_error *e)
{
        _cleanup_close_ int t = mnt_open_target(rootfd, "/dev", true, e);
        if (t < 0)
                return t;
        const char *opts[] = {"size", "256k", "nr_inodes", "64", "mode", "0755", NULL, NULL};
        int r = mnt_new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, t, "/dev", e);
        if (r < 0)
                return r;
        _cleanup_close_ int devfd =
            openat(rootfd, "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (devfd < 0)
                return sbx_internal(e, errno, "failed to open /dev");
        for (size_t i = 0; i < ARRAY_SIZE(dev_nodes); i++)
                if ((r = bind_node(devfd, hostfd, dev_nodes[i], e)) < 0)
                        return r;

        _cleanup_close_ int pts = mnt_open_target(devfd, "/pts", true, e);
        if (pts < 0)
                return pts;
        /* max=: the session's own ptys are bounded, so it cannot take every pty of the host
         * (kernel.pty.max counts the ptys of every devpts instance) and leave none for the
         * other sessions' `exec -T`. */
        char ptys[24];
        snprintf(ptys, sizeof(ptys), "%llu", (unsigned long long)c->ptys);
        const char *pts_opts[] = {"newinstance", NULL,  "ptmxmode", "0666", "mode",
                                  "0620",        "max", ptys,       NULL,   NULL};
        if ((r = mnt_new_fs("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, pts,
                            "/dev/pts", e)) < 0)
                return r;

        char shm_size[32];
        snprintf(
            shm_size, sizeof(shm_size), "%llu",
            (unsigned long long)(c->disk_bytes < (64ULL << 20) ? c->disk_bytes : (64ULL << 20)));
        _cleanup_close_ int shm = mnt_open_target(devfd, "/shm", true, e);
        if (shm < 0)
                return shm;
        const char *shm_opts[] = {"size", shm_size, "nr_inodes", "4096",
                                  "mode", "01777",  NULL,        NULL};
        if ((r = mnt_new_fs("tmpfs", shm_opts, MNT_SECURE | MOUNT_ATTR_NOEXEC, shm, "/dev/shm",
                            e)) < 0)
                return r;

        static const char *const links[][2] = {
            {"ptmx", "pts/ptmx"},          {"fd", "/proc/self/fd"},
            {"stdin", "/proc/self/fd/0"},  {"stdout", "/proc/self/fd/1"},
            {"stderr", "/proc/self/fd/2"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(links); i++)
                if (symlinkat(links[i][1], devfd, links[i][0]) < 0)
                        return sbx_internal(e, errno, "failed to create /dev/%s", links[i][0]);

        /* Nothing inside may replace a node: /dev itself is read-only from now on. */
        _cleanup_close_ int root =
            openat(rootfd, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                return sbx_internal(e, errno, "failed to open /dev");
        return mnt_setattr(root, MOUNT_ATTR_RDONLY, false, "/dev", e);
}
