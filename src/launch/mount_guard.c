/* SPDX-License-Identifier: MIT */
#include "mount_guard.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../image/image.h"
#include "../session/runtime.h"
#include "shared/macros.h"

/*
 * path made canonical although it may not exist yet (the runtime dir is made on first use):
 * the realpath of its longest existing prefix with the rest appended. 0 or -errno.
 */
static int canonical(const char *path, char out[static PATH_MAX])
{
        char head[PATH_MAX];
        if (snprintf(head, sizeof(head), "%s", path) >= (int)sizeof(head))
                return -ENAMETOOLONG;
        size_t cut = strlen(head);
        for (;;) {
                char real[PATH_MAX];
                if (realpath(head, real)) {
                        const char *rest = path + cut;
                        bool root = strcmp(real, "/") == 0;
                        int n =
                            snprintf(out, PATH_MAX, "%s%s", root && *rest == '/' ? "" : real, rest);
                        return n < PATH_MAX ? 0 : -ENAMETOOLONG;
                }
                char *slash = strrchr(head, '/');
                if (!slash || slash == head) {
                        snprintf(out, PATH_MAX, "%s", path);
                        return 0;
                }
                *slash = '\0';
                cut = (size_t)(slash - head);
        }
}

/* Is a the same path as b, or a directory above it (component-wise)? */
static bool holds(const char *a, const char *b)
{
        size_t n = strlen(a);
        if (strcmp(a, "/") == 0)
                return true;
        return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/*
 * The same directory under another name (a bind mount or a symlinked alias that realpath
 * cannot see through): host or one of its parents is the very inode of target.
 */
static bool inode_inside(const char *host, const char *target)
{
        struct stat t;
        if (stat(target, &t) < 0)
                return false;
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s", host);
        for (;;) {
                struct stat s;
                if (stat(p, &s) == 0 && s.st_dev == t.st_dev && s.st_ino == t.st_ino)
                        return true;
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return false;
                *slash = '\0';
        }
}

static int check_one(const struct sbx_mount *m, const char *what, const char *state,
                     struct sbx_error *e)
{
        char host[PATH_MAX], target[PATH_MAX];
        if (canonical(m->host, host) < 0 || canonical(state, target) < 0)
                return 0; /* too long to be either: nothing to compare */
        if (holds(host, target) || holds(target, host) || inode_inside(host, target))
                return sbx_usage(e,
                                 "invalid --mount '%s:%s': it would expose sbx's %s '%s' to the "
                                 "session (%s); mount a directory outside it",
                                 m->host, m->sandbox, what, target,
                                 strcmp(what, "runtime directory") == 0
                                     ? "the control sockets of every session"
                                     : "the bases of every session");
        return 0;
}

int mount_guard_check(const struct sbx_config *c, struct sbx_error *e)
{
        char rt[PATH_MAX];
        _cleanup_free_ char *store = NULL;
        bool have_rt = runtime_dir_path(rt, sizeof(rt)) == 0 && rt[0] == '/';
        bool have_store = image_store_path(&store) == 0;
        for (size_t i = 0; i < c->n_mounts; i++) {
                const struct sbx_mount *m = &c->mounts[i];
                if (have_rt && check_one(m, "runtime directory", rt, e) < 0)
                        return -EINVAL;
                if (have_store && check_one(m, "image store", store, e) < 0)
                        return -EINVAL;
        }
        return 0;
}
