/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "mounts.h"

#include "shared/macros.h"

/* Open or create one path component below dirfd, never following a symlink. */
static int open_component(int dirfd, const char *name, bool is_dir, bool create)
{
        int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0);
        int fd = openat(dirfd, name, flags);
        if (fd >= 0 || errno != ENOENT || !create)
                return fd >= 0 ? fd : negerrno();
        if (is_dir) {
                if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
                        return negerrno();
        } else {
                int w =
                    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (w < 0 && errno != EEXIST)
                        return negerrno();
                if (w >= 0)
                        close(w);
        }
        fd = openat(dirfd, name, flags);
        return fd >= 0 ? fd : negerrno();
}

static int walk(int rootfd, const char *path, bool is_dir, bool create, struct sbx_error *e)
{
        if (path[0] != '/')
                return sbx_internal(e, EINVAL, "mount target '%s' is not absolute", path);
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        _cleanup_close_ int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negerrno();

        char *save = NULL;
        char *comp = strtok_r(copy, "/", &save);
        while (comp) {
                char *next = strtok_r(NULL, "/", &save);
                if (strcmp(comp, "..") == 0 || strcmp(comp, ".") == 0)
                        return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                        "mount target '%s' must not contain '.' or '..'", path);
                int fd = open_component(cur, comp, next ? true : is_dir, create);
                if (fd < 0) {
                        struct stat st;
                        if ((fd == -ELOOP || fd == -ENOTDIR) &&
                            fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISLNK(st.st_mode))
                                return sbx_fail(e, EXIT_SBX_FAILED, "internal", 0,
                                                "refusing mount target '%s': '%s' is a symlink",
                                                path, comp);
                        return sbx_internal(e, -fd, "failed to open mount target '%s'", path);
                }
                closep(&cur);
                cur = fd;
                comp = next;
        }
        return TAKE_FD(cur);
}

int mnt_open_target(int rootfd, const char *path, bool is_dir, struct sbx_error *e)
{
        return walk(rootfd, path, is_dir, true, e);
}

int mnt_open_existing(int rootfd, const char *path, bool follow, struct sbx_error *e)
{
        if (!follow)
                return walk(rootfd, path, false, false, e);
        int fd = openat(rootfd, path[0] == '/' ? path + 1 : path, O_PATH | O_CLOEXEC);
        return fd >= 0 ? fd : sbx_internal(e, errno, "failed to open '%s'", path);
}

int mnt_setattr(int fd, unsigned attr, bool recursive, const char *what, struct sbx_error *e)
{
        struct mount_attr ma = {.attr_set = attr};
        if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &ma, sizeof(ma)) <
            0)
                return errno == ENOSYS
                           ? sbx_unsupported(e, errno,
                                             "this kernel lacks mount_setattr (Linux 5.12+), "
                                             "needed to make '%s' read-only recursively",
                                             what)
                           : sbx_internal(e, errno, "failed to set attributes of '%s'", what);
        return 0;
}

int mnt_bind(int srcfd, int tfd, unsigned attr, const char *what, struct sbx_error *e)
{
        _cleanup_close_ int tree = open_tree(
            srcfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (tree < 0)
                return errno == ENOSYS ? sbx_unsupported(e, errno,
                                                         "this kernel lacks open_tree (Linux "
                                                         "5.2+), needed to bind '%s'",
                                                         what)
                                       : sbx_internal(e, errno, "failed to bind '%s'", what);
        if (attr) {
                int r = mnt_setattr(tree, attr, true, what, e);
                if (r < 0)
                        return r;
        }
        if (move_mount(tree, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return sbx_internal(e, errno, "failed to attach bind mount of '%s'", what);
        return 0;
}

int mnt_new_fs(const char *fstype, const char *const *opts, unsigned attr, int tfd,
               const char *what, struct sbx_error *e)
{
        _cleanup_close_ int fsfd = fsopen(fstype, FSOPEN_CLOEXEC);
        if (fsfd < 0)
                return errno == ENODEV ? sbx_unsupported(e, 0,
                                                         "filesystem '%s' is not available in this "
                                                         "kernel: load its module (modprobe %s)",
                                                         fstype, fstype)
                                       : sbx_internal(e, errno, "failed to open a new %s for '%s'",
                                                      fstype, what);
        for (const char *const *o = opts; o && o[0]; o += 2) {
                int r = o[1] ? fsconfig(fsfd, FSCONFIG_SET_STRING, o[0], o[1], 0)
                             : fsconfig(fsfd, FSCONFIG_SET_FLAG, o[0], NULL, 0);
                if (r < 0)
                        return sbx_fail(e, errno == EINVAL ? EXIT_UNSUPPORTED : EXIT_SBX_FAILED,
                                        errno == EINVAL ? "unsupported" : "internal", errno,
                                        "%s for '%s' does not accept option '%s'", fstype, what,
                                        o[0]);
        }
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", errno,
                                "failed to create %s for '%s'", fstype, what);
        _cleanup_close_ int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attr);
        if (mfd < 0)
                return sbx_internal(e, errno, "failed to mount %s for '%s'", fstype, what);
        if (move_mount(mfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return sbx_internal(e, errno, "failed to attach %s at '%s'", fstype, what);
        return 0;
}
