/* SPDX-License-Identifier: MIT */
/*
 * The kernel resolves a whole path in one call and follows every link on the way, wherever it
 * lies. Here a path through a session's volume is walked a component at a time instead: each
 * opened with O_NOFOLLOW, so a link is seen as a link (the session cannot swap a directory for
 * one between a look and a use), and a link is followed by hand only when the directory
 * holding it is not in a volume. Without volumes the kernel does it all in one open.
 */
#include "hostpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/buf.h"
#include "shared/macros.h"

#define HOSTPATH_MAX_LINKS 40 /* as the kernel's MAXSYMLINKS */

int hostpath_vols_open(char *const *paths, struct hostpath_vols *v)
{
        *v = (struct hostpath_vols){0};
        size_t n = 0;
        while (paths && paths[n])
                n++;
        if (n == 0)
                return 0;
        v->dev = calloc(n, sizeof(*v->dev));
        v->ino = calloc(n, sizeof(*v->ino));
        if (!v->dev || !v->ino) {
                hostpath_vols_free(v);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                unsigned long long dev, ino;
                if (sscanf(paths[i], "%llu:%llu:", &dev, &ino) != 2)
                        continue; /* not of this format: nothing the state recorded */
                v->dev[v->n] = (dev_t)dev;
                v->ino[v->n++] = (ino_t)ino;
        }
        return 0;
}

void hostpath_vols_free(struct hostpath_vols *v)
{
        free(v->dev);
        free(v->ino);
        *v = (struct hostpath_vols){0};
}

/* Is the directory dirfd a root of v, or below one? Walks up by ".." to "/". 1, 0 or -errno. */
static int in_volume(int dirfd, const struct hostpath_vols *v)
{
        struct stat root;
        if (stat("/", &root) < 0)
                return -errno;
        _cleanup_close_ int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        for (int depth = 0; fd >= 0 && depth < PATH_MAX / 2; depth++) {
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return -errno;
                for (size_t i = 0; i < v->n; i++)
                        if (st.st_dev == v->dev[i] && st.st_ino == v->ino[i])
                                return 1;
                if (st.st_dev == root.st_dev && st.st_ino == root.st_ino)
                        return 0;
                int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                closep(&fd);
                fd = up;
        }
        return fd < 0 ? -errno : -ELOOP;
}

/* The walk: cur, the directory reached; rest+pos, what is left to resolve; seen, the path
 * walked so far as text (for the message naming a refused link). */
struct walk {
        int cur;
        char *rest;
        size_t pos;
        int links;
        struct buf seen;
};

/* Go on with the link's target target in place of the component just read. 0 or -errno. */
static int splice_link(struct walk *w, const char *target)
{
        char *next = NULL;
        if (asprintf(&next, "%s/%s", target, w->rest + w->pos) < 0)
                return -ENOMEM;
        free(w->rest);
        w->rest = next;
        w->pos = 0;
        if (target[0] == '/') {
                int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                closep(&w->cur);
                w->cur = fd;
                w->seen.len = 0;
        }
        return 0;
}

/* The link fd (named comp, in w->cur): followed by hand, or refused in a volume. */
static int follow(struct walk *w, int fd, const char *comp, const struct hostpath_vols *v,
                  char **ret_link)
{
        int r = in_volume(w->cur, v);
        if (r != 0) {
                if (r > 0 && ret_link && buf_printf(&w->seen, "/%s", comp) == 0)
                        *ret_link = strdup(w->seen.data);
                return r > 0 ? -ELOOP : r;
        }
        if (++w->links > HOSTPATH_MAX_LINKS)
                return -ELOOP;
        char target[PATH_MAX];
        ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        return splice_link(w, target);
}

/* One step: the next component of w->rest. 1: nothing was left, 0: on, or -errno. */
static int step(struct walk *w, const struct hostpath_vols *v, bool follow_last, char **ret_link)
{
        const char *p = w->rest;
        while (p[w->pos] == '/')
                w->pos++;
        if (!p[w->pos])
                return 1;
        size_t len = strcspn(p + w->pos, "/");
        if (len > NAME_MAX)
                return -ENAMETOOLONG;
        char comp[NAME_MAX + 1];
        memcpy(comp, p + w->pos, len);
        comp[len] = '\0';
        w->pos += len;
        bool last = p[w->pos + strspn(p + w->pos, "/")] == '\0';
        if (strcmp(comp, ".") == 0)
                return 0;
        _cleanup_close_ int fd = openat(w->cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode) && (!last || follow_last))
                return follow(w, fd, comp, v, ret_link);
        if (buf_printf(&w->seen, "/%s", comp) < 0)
                return -ENOMEM;
        closep(&w->cur);
        w->cur = TAKE_FD(fd);
        return 0;
}

int hostpath_open(const char *path, const struct hostpath_vols *v, bool follow_last, int *ret_fd,
                  char **ret_link)
{
        if (!v || v->n == 0) {
                int fd = open(path, O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW));
                if (fd < 0)
                        return -errno;
                *ret_fd = fd;
                return 0;
        }
        struct walk w = {.cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC),
                         .rest = strdup(path)};
        int r = w.cur < 0 ? -errno : !w.rest ? -ENOMEM : 0;
        /* a relative path's text starts at the cwd: "." */
        if (r == 0 && path[0] != '/' && buf_puts(&w.seen, ".") < 0)
                r = -ENOMEM;
        while (r == 0)
                r = step(&w, v, follow_last, ret_link);
        if (r == 1) {
                *ret_fd = TAKE_FD(w.cur);
                r = 0;
        }
        closep(&w.cur);
        free(w.rest);
        buf_freep(&w.seen);
        return r;
}
