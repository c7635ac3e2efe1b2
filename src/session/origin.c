/* SPDX-License-Identifier: MIT */
/* The origin mark of a session (see origin.h). */
#include "origin.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shared/util.h"
#include "runtime.h"

#define ORIGIN_MAX 32

static int open_session(const char *id)
{
        struct sbx_error e = {0};
        _cleanup_close_ int rtfd = -1;
        if (runtime_open(&rtfd, &e) < 0)
                return -EIO;
        return runtime_open_session(rtfd, id);
}

int session_origin_set(const char *id, const char *origin)
{
        if (!session_id_valid(id))
                return -EINVAL;
        _cleanup_close_ int sessfd = open_session(id);
        if (sessfd < 0)
                return sessfd;
        _cleanup_close_ int fd =
            openat(sessfd, "origin", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, origin, strlen(origin));
        return r < 0 ? r : write_all(fd, "\n", 1);
}

/* ref to an id in out; the runtime dir's fd, or -errno. */
static int resolve(const char *ref, char out[static SESSION_ID_LEN + 1])
{
        struct sbx_error e = {0};
        if (runtime_check_ref(ref, &e) < 0)
                return -EINVAL;
        _cleanup_close_ int rtfd = -1;
        if (runtime_open(&rtfd, &e) < 0)
                return -EIO;
        if (runtime_resolve(rtfd, ref, out, &e) < 0)
                return -ENOENT;
        return TAKE_FD(rtfd);
}

int session_ref_resolve(const char *ref, char out[static SESSION_ID_LEN + 1])
{
        _cleanup_close_ int rtfd = resolve(ref, out);
        return rtfd < 0 ? rtfd : 0;
}

int session_origin_resolve(const char *ref, const char *origin, char out[static SESSION_ID_LEN + 1])
{
        _cleanup_close_ int rtfd = resolve(ref, out);
        if (rtfd < 0)
                return rtfd;
        _cleanup_close_ int sessfd = runtime_open_session(rtfd, out);
        if (sessfd < 0)
                return -ENOENT;
        _cleanup_close_ int fd = openat(sessfd, "origin", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -EPERM : -errno;
        char text[ORIGIN_MAX + 2];
        ssize_t n = read(fd, text, sizeof(text) - 1);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        text[strcspn(text, "\n")] = '\0';
        return strcmp(text, origin) == 0 ? 0 : -EPERM;
}
