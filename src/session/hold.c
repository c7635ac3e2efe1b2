/* SPDX-License-Identifier: MIT */
/* Holding a session while an exec runs: a shared flock on its HOLDS_FILE (hold.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "shared/macros.h"
#include "hold.h"

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
        /* never waits: the only exclusive holder is a supervisor ending the session */
        if (flock(fd, LOCK_SH | LOCK_NB) < 0)
                return negerrno();
        return TAKE_FD(fd);
}

/* Try the exclusive lock: false while an exec holds a shared one. */
static bool lock_exclusive(int holdfd)
{
        return flock(holdfd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK;
}

bool session_holds_end(int holdfd, bool *ended)
{
        if (holdfd < 0 || *ended)
                return false;
        if (!lock_exclusive(holdfd))
                return true;
        *ended = true;
        return false;
}

bool session_holds_peek(int holdfd, bool ended)
{
        if (holdfd < 0 || ended)
                return false;
        if (!lock_exclusive(holdfd))
                return true;
        (void)flock(holdfd, LOCK_UN);
        return false;
}

void session_holds_reopen(int holdfd, bool *ended)
{
        if (holdfd >= 0 && *ended)
                (void)flock(holdfd, LOCK_UN);
        *ended = false;
}
