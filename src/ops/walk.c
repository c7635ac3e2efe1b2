/* SPDX-License-Identifier: MIT */
#include "walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/buf.h"
#include "shared/macros.h"

#define WALK_LISTING_MAX (64u << 20) /* bytes of names one directory listing may hold */

struct listing_rec {
        size_t off, len;
        unsigned char type;
};

struct listing {
        struct buf names; /* NUL-separated */
        struct listing_rec *v;
        size_t n, cap;
};

static void listing_free(struct listing *l)
{
        buf_freep(&l->names);
        free(l->v);
}

static int listing_add(struct listing *l, const char *name, unsigned char type)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 32;
                struct listing_rec *v = realloc(l->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        size_t len = strlen(name), off = l->names.len;
        int r = buf_append(&l->names, name, len + 1);
        if (r < 0)
                return r;
        l->v[l->n++] = (struct listing_rec){.off = off, .len = len, .type = type};
        return 0;
}

static int listing_cmp(const void *a, const void *b, void *names)
{
        const struct listing_rec *x = a, *y = b;
        return strcmp((const char *)names + x->off, (const char *)names + y->off);
}

/* Read the entries of dirfd ("." and ".." left out), within the walk's bounds, sorted. */
static int listing_read(struct walk *w, int dirfd, struct listing *l)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negerrno();
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                int r = negerrno();
                close(fd);
                return r;
        }
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return negerrno();
                        break;
                }
                const char *n = de->d_name;
                if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
                        continue;
                if (w->visits >= w->max_visits || l->names.len >= WALK_LISTING_MAX) {
                        w->visits_limited = true;
                        break;
                }
                w->visits++;
                int r = listing_add(l, n, de->d_type);
                if (r < 0)
                        return r;
        }
        if (l->n > 1)
                qsort_r(l->v, l->n, sizeof(*l->v), listing_cmp, l->names.data);
        return 0;
}

struct walk_run {
        struct walk *w;
        struct buf path;
        unsigned char *states;
};

static int walk_dir(struct walk_run *run, int dirfd, unsigned depth);

/* Open a directory entry without following a symlink, and walk it. */
static int walk_descend(struct walk_run *run, int dirfd, const char *name, unsigned depth)
{
        struct walk *w = run->w;
        if (depth >= w->max_depth) {
                w->depth_limited = true;
                return 0;
        }
        _cleanup_close_ int fd = openat(
            dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return 0; /* gone, swapped for a symlink, or not ours to read: skipped */
        return walk_dir(run, fd, depth + 1);
}

static int walk_dir(struct walk_run *run, int dirfd, unsigned depth)
{
        struct walk *w = run->w;
        _cleanup_(listing_free) struct listing l = {0};
        size_t base = run->path.len;
        int r = listing_read(w, dirfd, &l);
        if (r < 0)
                return r == -ENOMEM ? r : 0; /* an unreadable directory is skipped */

        for (size_t i = 0; i < l.n && !w->stopped; i++) {
                const char *name = l.names.data + l.v[i].off;
                unsigned char type = l.v[i].type;
                if (type == DT_UNKNOWN) {
                        struct stat st;
                        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        type = IFTODT(st.st_mode);
                }
                run->path.len = base;
                if ((base > 0 && (r = buf_append(&run->path, "/", 1)) < 0) ||
                    (r = buf_append(&run->path, name, l.v[i].len)) < 0)
                        return r;
                struct walk_entry ent = {
                    .dirfd = dirfd,
                    .name = name,
                    .name_len = l.v[i].len,
                    .path = run->path.data,
                    .path_len = run->path.len,
                    .type = type,
                    .depth = depth,
                    .state = run->states + (size_t)(depth - 1) * w->state_size,
                    .child_state = run->states + (size_t)depth * w->state_size,
                };
                r = w->fn(w->ctx, &ent);
                if (r < 0)
                        return r;
                if (r == WALK_STOP)
                        w->stopped = true;
                else if (r == WALK_DESCEND && type == DT_DIR &&
                         (r = walk_descend(run, dirfd, name, depth)) < 0)
                        return r;
        }
        run->path.len = base;
        if (run->path.data)
                run->path.data[base] = '\0';
        return 0;
}

int walk_tree(struct walk *w, int rootfd)
{
        _cleanup_free_ unsigned char *states =
            calloc((size_t)w->max_depth + 1, w->state_size ? w->state_size : 1);
        struct walk_run run = {.w = w, .states = states};
        if (!states)
                return -ENOMEM;
        if (w->state_size)
                memcpy(states, w->root_state, w->state_size);
        int r = walk_dir(&run, rootfd, 1);
        buf_freep(&run.path);
        return r;
}
