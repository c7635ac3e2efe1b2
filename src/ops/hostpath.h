/* SPDX-License-Identifier: MIT */
/*
 * Host paths that may run through a session's writable volumes. What the session writes there
 * is the attacker's: a symbolic link it plants in a volume must not steer a host-side copy
 * (run with the caller's rights, often root) to another host directory. The caller's own
 * links elsewhere on the host are followed as usual.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The roots of the session's writable volumes, as (device, inode) pairs. */
struct hostpath_vols {
        dev_t *dev;
        ino_t *ino;
        size_t n;
};

/* The volumes of a session's state: "DEV:INO:PATH" each (the directory as it was when the
 * session was made: never looked up by its path again, which the session may have changed),
 * NULL-terminated, may be NULL. 0 or -ENOMEM. */
int hostpath_vols_open(char *const *paths, struct hostpath_vols *v);
void hostpath_vols_free(struct hostpath_vols *v);

/*
 * An O_PATH fd of what path (absolute or relative to the cwd) names, its symbolic links
 * followed as the kernel would, except one that lies at or below a root of v: -ELOOP, and
 * *ret_link (when not NULL) gets that link's path as far as it was resolved (malloc'ed).
 * follow_last: false opens a last component that is a link as the link itself. -errno of
 * the failed step otherwise.
 */
int hostpath_open(const char *path, const struct hostpath_vols *v, bool follow_last, int *ret_fd,
                  char **ret_link);
