/* SPDX-License-Identifier: MIT */
#include "rootfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/sync.h"
#include "mounts.h"
#include "sandbox.h"

/*
 * The writable layer's tmpfs is mounted here, over the host's /tmp in the init's private mount
 * namespace, until the final pivot; the host root stays "/" until then. (No pivot into the
 * layer first: every pivot_root walks every thread of the host, ~0.9 ms with 400 idle
 * sessions, and the final one detaches the host root and the layer with it all the same.)
 */
#define LAYER "/tmp"

void rootfs_sources_close(struct rootfs_sources *s)
{
        closep(&s->base_fd);
        closep(&s->usr_tree_fd);
        closep(&s->layers_fd);
        closep(&s->host_usr_tree_fd);
        for (size_t i = 0; i < s->n_volumes; i++) {
                closep(&s->volume_fds[i]);
                if (s->volume_trees)
                        closep(&s->volume_trees[i]);
        }
        free(s->volume_fds);
        s->volume_fds = NULL;
        free(s->volume_trees);
        s->volume_trees = NULL;
        s->n_volumes = 0;
}

int rootfs_prepare(const struct sbx_config *c, struct rootfs_sources *src, struct sbx_error *e)
{
        /* what the supervisor sent is kept: /usr's and the volumes' clones */
        *src = (struct rootfs_sources){.base_fd = -1,
                                       .usr_tree_fd = src->usr_tree_fd,
                                       .layers_fd = -1,
                                       .host_usr_tree_fd = src->host_usr_tree_fd,
                                       .volume_fds = src->volume_fds,
                                       .volume_trees = src->volume_trees,
                                       .n_volumes = src->n_volumes};

        /* Nothing we mount from here on may propagate back to the host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return sbx_internal(e, errno, "failed to make the mount namespace private");

        if (c->image_layers_dir) {
                src->layers_fd = open(c->image_layers_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (src->layers_fd < 0)
                        return sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                        "failed to open the layers of image '%s'", c->image);
                /* a commit of a --rootfs session: its directory, below the layers */
                if (c->image_rootfs &&
                    (src->base_fd = open(c->image_rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                        return sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                        "failed to open the base directory '%s' of image '%s'",
                                        c->image_rootfs, c->image);
        } else if (c->rootfs && strcmp(c->rootfs, "host") != 0) {
                src->base_fd = open(c->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (src->base_fd < 0)
                        return sbx_fail(e, EXIT_USAGE, "usage", errno,
                                        "invalid --rootfs '%s': cannot open it as a directory",
                                        c->rootfs);
        }
        for (size_t i = 0; i < c->n_mounts; i++) {
                if (src->volume_trees[i] >= 0)
                        continue; /* the supervisor's clone is mounted instead */
                src->volume_fds[i] = open(c->mounts[i].host, O_PATH | O_CLOEXEC);
                if (src->volume_fds[i] < 0)
                        return sbx_fail(e, EXIT_USAGE, "usage", errno,
                                        "failed to open volume source '%s'", c->mounts[i].host);
        }
        return 0;
}

/* The host's merged-/usr links (or, on a split-/usr host, read-only binds of the dirs). */
static int setup_usr_links(int rootfd, int hostfd, struct sbx_error *e)
{
        static const char *const dirs[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                char target[256];
                ssize_t n = readlinkat(hostfd, dirs[i], target, sizeof(target) - 1);
                if (n >= 0) {
                        target[n] = '\0';
                        if (symlinkat(target, rootfd, dirs[i]) < 0)
                                return sbx_internal(e, errno, "failed to link /%s", dirs[i]);
                        continue;
                }
                if (errno == ENOENT)
                        continue;
                _cleanup_close_ int src =
                    openat(hostfd, dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (src < 0)
                        continue;
                char path[16];
                snprintf(path, sizeof(path), "/%s", dirs[i]);
                _cleanup_close_ int t = mnt_open_target(rootfd, path, true, e);
                if (t < 0)
                        return t;
                int r = mnt_bind(src, t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, path, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* /usr: an overlay over the host's /usr (writes land in the layer), or read-only. */

/* Attach a detached mount tree (the supervisor's idmapped clone) at a new directory dir of
 * the pre-pivot root, to stack an overlay on. */
static int attach_lower(int tree_fd, const char *dir, mode_t mode, const char *what,
                        struct sbx_error *e)
{
        if (mkdir(dir, mode) < 0)
                return sbx_internal(e, errno, "failed to create the lower dir of %s", what);
        _cleanup_close_ int lt = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (lt < 0 ||
            move_mount(tree_fd, "", lt, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return sbx_internal(e, errno, "failed to attach %s", what);
        return 0;
}

/* The /usr mount point, and the host's /usr to stack on it: the supervisor's idmapped clone
 * (tree_fd), attached inside the layer, when there is one; else the host's own. */
static int usr_target(int rootfd, int tree_fd, const char **ret_host, struct sbx_error *e)
{
        _cleanup_close_ int t = mnt_open_target(rootfd, "/usr", true, e);
        if (t < 0)
                return t;
        *ret_host = "/usr";
        if (tree_fd >= 0) {
                int r = attach_lower(tree_fd, LAYER "/lower-usr", 0755, "the idmapped /usr", e);
                if (r < 0)
                        return r;
                *ret_host = LAYER "/lower-usr";
        }
        return TAKE_FD(t);
}

/* The upper and work dirs of a writable /usr overlay, in the layer. */
static int make_usr_upper(struct sbx_error *e)
{
        if (mkdir(LAYER "/upper/usr", 0755) < 0 || mkdir(LAYER "/work/usr", 0755) < 0)
                return sbx_internal(e, errno, "failed to create the /usr overlay dirs");
        return 0;
}

static int setup_usr(const struct sbx_config *c, const struct rootfs_sources *src, int rootfd,
                     struct sbx_error *e)
{
        const char *lower;
        _cleanup_close_ int t = usr_target(rootfd, src->usr_tree_fd, &lower, e);
        if (t < 0)
                return t;
        if (c->read_only) {
                _cleanup_close_ int usr = open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (usr < 0)
                        return sbx_internal(e, errno, "failed to open the host's /usr");
                return mnt_bind(usr, t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, "/usr", e);
        }
        int r = make_usr_upper(e);
        if (r < 0)
                return r;
        const char *opts[] = {"lowerdir",         lower,     "upperdir",
                              LAYER "/upper/usr", "workdir", LAYER "/work/usr",
                              "userxattr",        NULL,      NULL};
        struct sbx_error sub = {0};
        if (mnt_new_fs("overlay", opts, MOUNT_ATTR_NODEV, t, "/usr", &sub) < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0,
                                "overlayfs in a user namespace is not available here (%s); use "
                                "--read-only to run on a read-only base",
                                sub.message);
        return 0;
}

/*
 * An image committed from a host base: /usr is an overlay of each layer's usr/ (top first)
 * over the host's /usr (the idmapped clones as root, as for a host base and an image), its
 * upper in the layer as a host base's; with --read-only it has no upper (overlayfs then
 * mounts it read-only).
 */
static int setup_usr_image(const struct sbx_config *c, const struct rootfs_sources *src, int rootfd,
                           struct sbx_error *e)
{
        const char *host;
        _cleanup_close_ int t = usr_target(rootfd, src->host_usr_tree_fd, &host, e);
        if (t < 0)
                return t;
        char base[64];
        if (src->usr_tree_fd >= 0) /* attached by mount_image_base */
                snprintf(base, sizeof(base), LAYER "/lower-img");
        else
                snprintf(base, sizeof(base), "/proc/self/fd/%d", src->layers_fd);
        size_t n = 0;
        while (c->image_layers[n])
                n++;
        _cleanup_free_ const char **opts = calloc(2 * n + 12, sizeof(char *));
        _cleanup_free_ char *paths = malloc(n * 160 + 1);
        if (!opts || !paths)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = n; i-- > 0;) {
                char *p = paths + (n - 1 - i) * 160;
                struct stat st;
                snprintf(p, 160, "%s/%s/usr", base, c->image_layers[i]);
                if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue; /* a layer that changed nothing in /usr */
                opts[k++] = "lowerdir+";
                opts[k++] = p;
        }
        opts[k++] = "lowerdir+";
        opts[k++] = host;
        if (!c->read_only) {
                int r = make_usr_upper(e);
                if (r < 0)
                        return r;
                const char *tail[] = {"upperdir", LAYER "/upper/usr", "workdir", LAYER "/work/usr"};
                for (size_t i = 0; i < ARRAY_SIZE(tail); i++)
                        opts[k++] = tail[i];
        }
        opts[k++] = "userxattr";
        opts[k++] = NULL;
        opts[k] = NULL;
        struct sbx_error sub = {0};
        if (mnt_new_fs("overlay", opts, MOUNT_ATTR_NODEV, t, "/usr", &sub) < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0,
                                "overlayfs of the image's /usr over the host's is not available "
                                "here (%s)",
                                sub.message);
        return 0;
}

/* --rootfs DIR: the new root is an overlay of DIR (or a read-only bind of it). */
static int mount_custom_base(const struct sbx_config *c, const struct rootfs_sources *src,
                             int newrootfd, struct sbx_error *e)
{
        if (c->read_only)
                return mnt_bind(src->base_fd, newrootfd, MOUNT_ATTR_RDONLY | MNT_SECURE, c->rootfs,
                                e);
        char lower[64];
        snprintf(lower, sizeof(lower), "/proc/self/fd/%d", src->base_fd);
        if (mkdir(LAYER "/upper/root", 0755) < 0 || mkdir(LAYER "/work/root", 0755) < 0)
                return sbx_internal(e, errno, "failed to create the root overlay dirs");
        const char *opts[] = {"lowerdir",          lower,     "upperdir",
                              LAYER "/upper/root", "workdir", LAYER "/work/root",
                              "userxattr",         NULL,      NULL};
        struct sbx_error sub = {0};
        if (mnt_new_fs("overlay", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, newrootfd, c->rootfs,
                       &sub) < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0,
                                "overlayfs over '%s' in a user namespace is not available here "
                                "(%s); use --read-only",
                                c->rootfs, sub.message);
        return 0;
}

/*
 * --image: the new root is an overlay of the image's layers (read-only lower layers, shared by
 * every session of the image, never copied) with the upper in the writable layer. As root the
 * layers come through the idmapped clone of the store the supervisor made (root-owned image
 * files stay root's inside); otherwise straight from the store (the caller's own files).
 * Layers are added one by one with "lowerdir+" (Linux 6.8), top first. An image committed
 * from a --rootfs session has that directory as its lowest layer (as --rootfs mounts it).
 */
static int mount_image_base(const struct sbx_config *c, const struct rootfs_sources *src,
                            int newrootfd, struct sbx_error *e)
{
        char base[64];
        if (src->usr_tree_fd >= 0) {
                int r = attach_lower(src->usr_tree_fd, LAYER "/lower-img", 0700,
                                     "the image's layers", e);
                if (r < 0)
                        return r;
                snprintf(base, sizeof(base), LAYER "/lower-img");
        } else
                snprintf(base, sizeof(base), "/proc/self/fd/%d", src->layers_fd);
        size_t n = 0;
        while (c->image_layers[n])
                n++;
        if (mkdir(LAYER "/upper/root", 0755) < 0 || mkdir(LAYER "/work/root", 0755) < 0)
                return sbx_internal(e, errno, "failed to create the root overlay dirs");
        _cleanup_free_ const char **opts = calloc(2 * n + 12, sizeof(char *));
        /* + 1: never malloc(0), which may return NULL, read here as out of memory */
        _cleanup_free_ char *paths = malloc(n * 160 + 1);
        if (!opts || !paths)
                return -ENOMEM;
        size_t k = 0;
        for (size_t i = n; i-- > 0;) {
                char *p = paths + (n - 1 - i) * 160;
                snprintf(p, 160, "%s/%s", base, c->image_layers[i]);
                opts[k++] = "lowerdir+";
                opts[k++] = p;
        }
        char dir[64];
        if (src->base_fd >= 0) {
                snprintf(dir, sizeof(dir), "/proc/self/fd/%d", src->base_fd);
                opts[k++] = "lowerdir+";
                opts[k++] = dir;
        }
        const char *tail[] = {"upperdir",         LAYER "/upper/root", "workdir",
                              LAYER "/work/root", "userxattr",         NULL};
        for (size_t i = 0; i < ARRAY_SIZE(tail); i++)
                opts[k++] = tail[i];
        opts[k++] = NULL;
        struct sbx_error sub = {0};
        if (mnt_new_fs("overlay", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, newrootfd, c->image,
                       &sub) < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0,
                                "overlayfs of the image's layers is not available here (%s; "
                                "needs Linux 6.8+ for lowerdir+)",
                                sub.message);
        return 0;
}

static int bind_layer_dir(int rootfd, const char *layer_dir, const char *target,
                          struct sbx_error *e)
{
        _cleanup_close_ int src = open(layer_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (src < 0)
                return sbx_internal(e, errno, "failed to open '%s'", layer_dir);
        _cleanup_close_ int t = mnt_open_target(rootfd, target, true, e);
        if (t < 0)
                return t;
        return mnt_bind(src, t, MNT_SECURE, target, e);
}

int rootfs_receive_host_usr(const struct sbx_config *c, int sync_fd, struct rootfs_sources *src,
                            struct sbx_error *e)
{
        return c->image_host_base
                   ? sync_wait_fd(sync_fd, "the supervisor", &src->host_usr_tree_fd, e)
                   : 0;
}

int rootfs_receive_volumes(const struct sbx_config *c, int sync_fd, struct rootfs_sources *src,
                           struct sbx_error *e)
{
        size_t n = c->n_mounts ? c->n_mounts : 1;
        src->volume_fds = calloc(n, sizeof(int));
        src->volume_trees = calloc(n, sizeof(int));
        if (!src->volume_fds || !src->volume_trees)
                return sbx_internal(e, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                src->volume_fds[i] = src->volume_trees[i] = -1;
        src->n_volumes = c->n_mounts;
        for (size_t i = 0; i < c->n_mounts; i++) {
                int r = sync_wait_fd(sync_fd, "the supervisor", &src->volume_trees[i], e);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A volume: the supervisor's idmapped clone (attributes set), or a bind of the host path. */
static int setup_volumes(const struct sbx_config *c, const struct rootfs_sources *src, int rootfd,
                         struct sbx_error *e)
{
        for (size_t i = 0; i < c->n_mounts; i++) {
                const struct sbx_mount *m = &c->mounts[i];
                int tree = src->volume_trees[i];
                int fd = tree >= 0 ? tree : src->volume_fds[i];
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return sbx_internal(e, errno, "failed to stat '%s'", m->host);
                _cleanup_close_ int t = mnt_open_target(rootfd, m->sandbox, S_ISDIR(st.st_mode), e);
                if (t < 0)
                        return t;
                if (tree >= 0) {
                        if (move_mount(tree, "", t, "",
                                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                                return sbx_internal(e, errno, "failed to attach the volume '%s'",
                                                    m->sandbox);
                        continue;
                }
                int r =
                    mnt_bind(src->volume_fds[i], t,
                             MNT_SECURE | (m->read_only ? MOUNT_ATTR_RDONLY : 0), m->sandbox, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int make_layer(const struct sbx_config *c, int *ret_layer_fd, struct sbx_error *e)
{
        char size[32], inodes[32];
        uint64_t n_inodes = c->disk_bytes / 4096;
        snprintf(size, sizeof(size), "%llu", (unsigned long long)c->disk_bytes);
        snprintf(inodes, sizeof(inodes), "%llu",
                 (unsigned long long)(n_inodes < 1024      ? 1024
                                      : n_inodes > 4194304 ? 4194304
                                                           : n_inodes));
        const char *opts[] = {"size", size, "nr_inodes", inodes, "mode", "0755", NULL, NULL};
        _cleanup_close_ int t = open(LAYER, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (t < 0)
                return sbx_internal(e, errno, "failed to open a scratch mount point");
        int r = mnt_new_fs("tmpfs", opts, MNT_SECURE, t, "the writable layer", e);
        if (r < 0)
                return r;
        /* the new mount, by the same path (the host's /tmp may be a symlink: followed alike) */
        _cleanup_close_ int layer = open(LAYER, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (layer < 0)
                return sbx_internal(e, errno, "failed to enter the writable layer");
        static const char *const dirs[] = {"newroot", "upper", "work", "workspace", "tmp"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
                if (mkdirat(layer, dirs[i], 0755) < 0)
                        return sbx_internal(e, errno, "failed to create '%s' in the layer",
                                            dirs[i]);
        if (fchmodat(layer, "tmp", 01777, 0) < 0)
                return sbx_internal(e, errno, "failed to chmod /tmp");
        /* for the supervisor, which hands it to `sbx diff`: the layer outlives its detach */
        *ret_layer_fd = TAKE_FD(layer);
        return 0;
}

static int final_pivot(int rootfd, struct sbx_error *e)
{
        if (fchdir(rootfd) < 0 || sys_pivot_root(".", ".") < 0)
                return sbx_internal(e, errno, "failed to pivot_root into the session root");
        /* The host root, with the layer's own root (upper/ and work/) at its /tmp, is stacked
         * on "." now: detach it and all below (one umount: each costs an RCU grace period). */
        if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
                return sbx_internal(e, errno, "failed to detach the old root");
        return 0;
}

static int open_newroot(const struct sbx_config *c, const struct rootfs_sources *src,
                        struct sbx_error *e)
{
        _cleanup_close_ int t =
            open(LAYER "/newroot", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
                return sbx_internal(e, errno, "failed to open the new root");
        int r = src->layers_fd >= 0 ? mount_image_base(c, src, t, e)
                : src->base_fd >= 0 ? mount_custom_base(c, src, t, e)
                                    : mnt_bind(t, t, MNT_SECURE, "/", e);
        if (r < 0)
                return r;
        /* Re-open: the fd must refer to the mount just stacked on /newroot. */
        int fd = open(LAYER "/newroot", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? sbx_internal(e, errno, "failed to open the new root") : fd;
}

int rootfs_build(const struct sbx_config *c, const struct rootfs_sources *src,
                 struct user_limits *limits, struct helper *h, int *ret_layer_fd,
                 struct sbx_error *e)
{
        int r = make_layer(c, ret_layer_fd, e);
        if (r < 0)
                return r;
        _cleanup_close_ int rootfd = open_newroot(c, src, e);
        if (rootfd < 0)
                return rootfd;
        _cleanup_close_ int hostfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (hostfd < 0)
                return sbx_internal(e, errno, "failed to open the host root");

        /* the host base (alone, or under the layers of an image committed from one) */
        if ((src->base_fd < 0 && src->layers_fd < 0) || c->image_host_base) {
                if ((r = c->image_host_base ? setup_usr_image(c, src, rootfd, e)
                                            : setup_usr(c, src, rootfd, e)) < 0 ||
                    (r = setup_usr_links(rootfd, hostfd, e)) < 0 ||
                    (r = rootfs_setup_etc(c, rootfd, hostfd, h, e)) < 0)
                        return r;
                static const char *const empty[] = {"/var/tmp", "/run", "/home"};
                for (size_t i = 0; i < ARRAY_SIZE(empty); i++) {
                        _cleanup_close_ int d = mnt_open_target(rootfd, empty[i], true, e);
                        if (d < 0)
                                return d;
                }
                if (fchmodat(rootfd, "var/tmp", 01777, 0) < 0)
                        return sbx_internal(e, errno, "failed to chmod /var/tmp");
        }
        if ((r = bind_layer_dir(rootfd, LAYER "/workspace", "/workspace", e)) < 0 ||
            (r = bind_layer_dir(rootfd, LAYER "/tmp", "/tmp", e)) < 0 ||
            (r = setup_volumes(c, src, rootfd, e)) < 0 ||
            (r = rootfs_setup_dev(c, rootfd, hostfd, e)) < 0 ||
            (r = rootfs_setup_proc(rootfd, hostfd, limits, e)) < 0)
                return r;
        if (c->workdir) {
                _cleanup_close_ int w = mnt_open_target(rootfd, c->workdir, true, e);
                if (w < 0)
                        return w;
        }
        if (c->read_only) {
                /* H's /etc files must be closed: a read-only remount refuses a mount with
                 * writers */
                if ((r = helper_wait(h, e)) < 0)
                        return r;
                _cleanup_close_ int rfd = open(LAYER "/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (rfd < 0 || (r = mnt_setattr(rfd, MOUNT_ATTR_RDONLY, false, "/", e)) < 0)
                        return rfd < 0 ? sbx_internal(e, errno, "failed to open the root") : r;
        }
        return final_pivot(rootfd, e);
}
