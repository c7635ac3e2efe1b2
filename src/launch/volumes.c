/* SPDX-License-Identifier: MIT */
/*
 * Volumes of a root-run session, as the caller expects them: the sandbox's root writes a
 * volume, and what it writes belongs on the host to the owner of the volume's directory, a
 * regular user (never root: below). Its uid 0 is an unprivileged host uid (the session's
 * base), which the directory's owner bits do not admit, and whose files would belong to nobody the
 * caller knows. An idmapped clone of the volume, keyed to a user namespace that maps exactly the
 * directory's owner to the session's base (uid and gid, one id each), shows that owner as uid 0
 * inside and stores what uid 0 writes as that owner: no other host id is reachable through it. Made
 * by the supervisor (it needs CAP_SYS_ADMIN on the host) once the session's maps are written, and
 * handed to the init after #1. An unprivileged session's uid 0 is the caller already: its volumes
 * are plain binds.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "launch.h"

/* The first host id of a "0 <host> <count>" map line in /proc/<pid>/<file>. */
static int read_map_base(pid_t pid, const char *file, uint32_t *ret)
{
        char path[64], text[256];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : RETRY_EINTR(read(fd, text, sizeof(text) - 1));
        if (n <= 0)
                return -errno;
        text[n] = '\0';
        unsigned inside, outside, count;
        if (sscanf(text, "%u %u %u", &inside, &outside, &count) != 3 || inside != 0)
                return -EPROTO;
        *ret = outside;
        return 0;
}

/* A user namespace whose maps are "uid base_uid 1" and "gid base_gid 1": its fd, or -errno. */
static int make_idmap_userns(uid_t uid, gid_t gid, uint32_t base_uid, uint32_t base_gid)
{
        int hold[2];
        if (pipe2(hold, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = sys_clone_flags(CLONE_NEWUSER);
        if (pid == 0) {
                char c;
                close(hold[1]);
                (void)!read(hold[0], &c, 1); /* until the parent has what it needs */
                _exit(0);
        }
        int err = errno;
        close(hold[0]);
        if (pid < 0) {
                close(hold[1]);
                return -err;
        }
        char path[64], map[64];
        _cleanup_close_ int uidf = -1, gidf = -1;
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
        uidf = open(path, O_WRONLY | O_CLOEXEC);
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
        gidf = open(path, O_WRONLY | O_CLOEXEC);
        int r = uidf < 0 || gidf < 0 ? -errno : 0;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, base_uid);
        if (r == 0 && write_all(uidf, map, strlen(map)) < 0)
                r = -errno;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, base_gid);
        if (r == 0 && write_all(gidf, map, strlen(map)) < 0)
                r = -errno;
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
        int ns = r == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (r == 0 && ns < 0)
                r = -errno;
        close(hold[1]);
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        return r < 0 ? r : ns;
}

/* The idmapped, detached clone of the volume at src with its attributes set, or -errno. */
static int idmapped_volume(const struct sbx_mount *m, int src, uint32_t base_uid, uint32_t base_gid)
{
        struct stat st;
        if (fstat(src, &st) < 0)
                return -errno;
        _cleanup_close_ int ns = make_idmap_userns(st.st_uid, st.st_gid, base_uid, base_gid);
        if (ns < 0)
                return ns;
        _cleanup_close_ int tree =
            open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                           (m->read_only ? MOUNT_ATTR_RDONLY : 0),
                               .userns_fd = (uint64_t)ns};
        if (tree < 0 || sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0)
                return -errno;
        return TAKE_FD(tree);
}

int volumes_send(const struct sbx_config *c, pid_t init, int sync_fd, struct sbx_error *e)
{
        uint32_t base_uid = 0, base_gid = 0;
        bool root = geteuid() == 0;
        int r = 0;
        if (root && c->n_mounts > 0 &&
            ((r = read_map_base(init, "uid_map", &base_uid)) < 0 ||
             (r = read_map_base(init, "gid_map", &base_gid)) < 0))
                return sbx_internal(e, -r, "failed to read the session's id maps");
        for (size_t i = 0; i < c->n_mounts; i++) {
                const struct sbx_mount *m = &c->mounts[i];
                /* A path that cannot be opened is the init's to report, as for any bind. */
                _cleanup_close_ int src = root ? open(m->host, O_PATH | O_CLOEXEC) : -1;
                struct stat st;
                /* Never host root: the sandbox's root may set the setuid and setgid bits of
                 * the files it owns, and a setuid-root file on the host is root for every
                 * user who can reach it. A directory of root's (uid or gid 0) is a plain
                 * bind, as before: what the session writes there (where the directory's
                 * bits let it) belongs to its own host uid. */
                bool mapped = src >= 0 && fstat(src, &st) == 0 && st.st_uid != 0 && st.st_gid != 0;
                _cleanup_close_ int tree =
                    mapped ? idmapped_volume(m, src, base_uid, base_gid) : -1;
                if (tree < 0 && mapped && !m->read_only)
                        return sbx_unsupported(
                            e, -tree,
                            "failed to mount the volume '%s' writable for the sandbox's root "
                            "(an idmapped mount%s)%s",
                            m->host,
                            tree == -EINVAL ? ": its file system does not support them" : "",
                            tree == -EINVAL || tree == -ENOSYS || tree == -EPERM
                                ? "; mount it read-only (':ro') or from a file system that "
                                  "supports idmapped mounts"
                                : "");
                /* a read-only volume that cannot be idmapped is a plain bind, as before */
                if (sync_send_ok_fd(sync_fd, tree) < 0)
                        return sbx_internal(e, errno, "the session init died during setup");
        }
        return 0;
}
