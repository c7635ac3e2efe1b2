/* SPDX-License-Identifier: MIT */
/*
 * Building a session's root inside its new mount namespace (docs/DESIGN.md, "The session's
 * filesystem"). Runs in the session init before pivot_root.
 */
#pragma once

#include "../config/config.h"
#include "shared/error.h"

/* Host-side sources, opened while the init still has the caller's own file access rights. */
struct rootfs_sources {
        int base_fd;     /* O_PATH of --rootfs DIR, or -1 for the host base */
        int usr_tree_fd; /* a detached, idmapped clone of the host's /usr (with --image: of the
                            image store's layers/), or -1 */
        int layers_fd;   /* O_PATH of the image store's layers/ (--image), or -1 */
        /* an image committed from a host base: the idmapped clone of the host's /usr, or -1 */
        int host_usr_tree_fd;
        int *volume_fds; /* one O_PATH fd per config mount; -1 = skipped */
        /* per config mount: the supervisor's idmapped clone (launch/volumes.c), or -1 */
        int *volume_trees;
        size_t n_volumes;
};

void rootfs_sources_close(struct rootfs_sources *s);

/* After #1, for an image committed from a host base: the supervisor's idmapped clone of the
 * host's /usr (or none). */
int rootfs_receive_host_usr(const struct sbx_config *c, int sync_fd, struct rootfs_sources *src,
                            struct sbx_error *e);

/* After #1: the supervisor's one message per volume (its idmapped clone, or none). */
int rootfs_receive_volumes(const struct sbx_config *c, int sync_fd, struct rootfs_sources *src,
                           struct sbx_error *e);

/* Make every mount private and open the sources (before the uid switch). */
int rootfs_prepare(const struct sbx_config *c, struct rootfs_sources *src, struct sbx_error *e);

/*
 * The limits of the session's user namespace (proc.c), opened with the session's /proc before
 * /proc/sys turns read-only, and written by the init last: they forbid namespaces, and the
 * init still makes some (the anonymous mount namespaces of open_tree and fsmount, and H's
 * network namespace: helper.c).
 */
#define USER_LIMITS_COUNT 12
struct user_limits {
        int fds[USER_LIMITS_COUNT]; /* -1: not opened, or absent on this kernel */
};
void user_limits_init(struct user_limits *l);
int user_limits_write(const struct user_limits *l, struct sbx_error *e);
void user_limits_close(struct user_limits *l);

/*
 * Build the root from the sources and pivot into it, opening the user namespace's limits on
 * the way. The caller's cwd is "/" afterwards.
 */
struct helper;
int rootfs_build(const struct sbx_config *c, const struct rootfs_sources *src,
                 struct user_limits *limits, struct helper *h, int *ret_layer_fd,
                 struct sbx_error *e);

/* Parts of the build, one file each. rootfd: the new root; hostfd: the old root. */
int rootfs_setup_etc(const struct sbx_config *c, int rootfd, int hostfd, struct helper *h,
                     struct sbx_error *e);
/* The files of the generated /etc, into etcfd (with its ssl/ made), from the host root. */
int rootfs_fill_etc(const struct sbx_config *c, int etcfd, int hostfd, struct sbx_error *e);
int rootfs_setup_dev(const struct sbx_config *c, int rootfd, int hostfd, struct sbx_error *e);
int rootfs_setup_proc(int rootfd, int hostfd, struct user_limits *limits, struct sbx_error *e);
