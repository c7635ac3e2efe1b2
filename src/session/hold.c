/* SPDX-License-Identifier: MIT */
/*
 * Holding a session while an exec runs (hold.h): open file description locks on its
 * HOLDS_FILE, a read lock per exec and the supervisor's write lock at the end. OFD locks, not
 * flock: like flock they belong to the open file (released by its last close, never by a
 * close elsewhere in the process), and unlike flock they can be looked at without being taken
 * (F_OFD_GETLK), so `BUSY` never makes an exec starting at that moment fail as "ending".
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "shared/macros.h"
#include "hold.h"

/* The whole file, for F_OFD_* (l_pid must be 0). */
static int ofd_lock(int fd, int cmd, short type, short *ret_type)
{
        struct flock l = {.l_type = type, .l_whence = SEEK_SET};
        if (fcntl(fd, cmd, &l) < 0)
                return negerrno();
        if (ret_type)
                *ret_type = l.l_type;
        return 0;
}

int session_holds_create(int sessfd)
{
        int fd =
            openat(sessfd, HOLDS_FILE, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        return fd < 0 ? negerrno() : fd;
}

int session_hold_take(int sessfd)
{
        _cleanup_close_ int fd = openat(sessfd, HOLDS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        /* never waits: the only write lock is that of a supervisor ending the session */
        int r = ofd_lock(fd, F_OFD_SETLK, F_RDLCK, NULL);
        if (r == -EAGAIN || r == -EACCES)
                return -EWOULDBLOCK;
        return r < 0 ? r : TAKE_FD(fd);
}

bool session_holds_end(int holdfd)
{
        if (holdfd < 0)
                return false;
        int r = ofd_lock(holdfd, F_OFD_SETLK, F_WRLCK, NULL);
        /* Any other error (no locks on this file system): no exec could take a lock either,
         * and each one held the session through ctl instead (exec.c), which `busy` counts. */
        return r == -EAGAIN || r == -EACCES;
}

bool session_holds_peek(int holdfd)
{
        short type = F_UNLCK;
        if (holdfd < 0 || ofd_lock(holdfd, F_OFD_GETLK, F_WRLCK, &type) < 0)
                return false;
        return type != F_UNLCK;
}
