/* SPDX-License-Identifier: MIT */
/*
 * For `sbx check`: kernel features a session relies on, each tried for real (in a throwaway
 * child where the attempt changes the process), never guessed from the kernel version.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct kernel_check {
        bool available;
        char detail[512];
};

/* unshare(CLONE_NEWUSER) in a child; on failure the sysctls that explain it. */
void kernel_check_userns(struct kernel_check *out);

/* An overlay with lowerdir=/usr and userxattr, mounted in a new user+mount namespace (what a
 * default create does for /usr). */
void kernel_check_overlay_userns(struct kernel_check *out);

/* openat2(2) with RESOLVE_BENEATH: ".." must be refused with EXDEV, a child must open. */
void kernel_check_openat2(struct kernel_check *out);

/* pidfd_open(getpid()) and pidfd_send_signal(fd, 0). */
void kernel_check_pidfd(struct kernel_check *out);

/* An idmapped clone of /usr (open_tree + mount_setattr MOUNT_ATTR_IDMAP) keyed to a new user
 * namespace: what a root-run create does. */
void kernel_check_idmap(struct kernel_check *out);

/*
 * The syscall ABIs this kernel can run for a process of this architecture, and what the
 * `default` seccomp filter does with each: the native one filtered, every compat one refused.
 * Fills up to n rows (name in *names[i]) and returns how many; each row is available when the
 * filter covers that ABI (tried in a child that loads the filter).
 */
size_t kernel_check_seccomp_arches(const char **names, struct kernel_check *out, size_t n);
