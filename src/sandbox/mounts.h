/* SPDX-License-Identifier: MIT */
/*
 * Mount helpers for building a session's root, all fd-relative with the new mount API
 * (fsopen/fsmount/open_tree/mount_setattr/move_mount): a target is opened component by
 * component with O_NOFOLLOW below a root fd and the mount is attached to that fd, so no
 * symlink planted in a base image can redirect a mount (CVE-2019-16884, CVE-2021-30465).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "shared/error.h"

/* Mount attribute sets used throughout. */
#define MNT_SECURE (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/*
 * Open (creating when missing: directories 0755, files 0644 empty) the absolute path `path`
 * below rootfd without following any symlink; an existing symlink or non-directory on the
 * way is refused. Returns an O_PATH fd or a negative errno with *e set.
 */
int mnt_open_target(int rootfd, const char *path, bool is_dir, struct sbx_error *e);

/*
 * Clone the mount tree at srcfd (recursive), apply attr (MOUNT_ATTR_* set recursively) and
 * attach it at tfd. `what` names the mount in error messages.
 */
int mnt_bind(int srcfd, int tfd, unsigned attr, const char *what, struct sbx_error *e);

/*
 * Create a new filesystem of `fstype` with string options (NULL-terminated key, value pairs;
 * a NULL value sets a flag) and attach it at tfd with mount attributes attr.
 */
int mnt_new_fs(const char *fstype, const char *const *opts, unsigned attr, int tfd,
               const char *what, struct sbx_error *e);

/* Apply attributes to the mount whose root is at fd (recursively when recursive). */
int mnt_setattr(int fd, unsigned attr, bool recursive, const char *what, struct sbx_error *e);

/* Open an existing path below rootfd for mnt_setattr / mnt_bind sources (O_PATH, no symlinks). */
int mnt_open_existing(int rootfd, const char *path, bool follow, struct sbx_error *e);
