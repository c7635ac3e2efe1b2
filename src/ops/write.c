/* SPDX-License-Identifier: MIT */
/* write: create a new file (never replace one), with its missing parent directories. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/util.h"
#include "common.h"
#include "ops.h"

/* mkdir -p of every parent of path; existing ones (of any type) are left to the open. */
static int make_parents(const char *path)
{
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
                return 0;
        *slash = '\0';
        for (char *s = p + 1;; s++) {
                bool end = *s == '\0';
                if (!end && *s != '/')
                        continue;
                if (s[-1] != '/') {
                        *s = '\0';
                        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                                return negerrno();
                        if (!end)
                                *s = '/';
                }
                if (end)
                        return 0;
        }
}

int ops_write(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_write_req *req = arg;
        _cleanup_buf_ struct buf abs = {0};

        if (!req->path || !req->path[0])
                return sbx_usage(e, "write needs a PATH");
        if (req->len > OPS_WRITE_MAX)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "failed to write '%s': content is larger than %u MiB", req->path,
                                OPS_WRITE_MAX >> 20);
        int r = ops_path_abs(req->path, &abs);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", req->path);
        r = make_parents(req->path);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to create the parent directories of '%s'",
                                      req->path);

        /* O_EXCL: an existing file, directory or symlink (even a dangling one) is EEXIST */
        _cleanup_close_ int fd =
            open(req->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
                return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                "Cannot write to %s because it already exists. Read and then "
                                "make an edit, or write to a new path.",
                                req->path);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to write '%s'", req->path);
        r = write_all(fd, req->content, req->len);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = negerrno();
        if (r < 0) {
                (void)unlink(req->path); /* ours: O_EXCL made it */
                return ops_fail_errno(e, r, "failed to write '%s'", req->path);
        }

        if (req->json) {
                if ((r = buf_puts(out, "{\"path\":")) >= 0 && (r = json_cstr(out, abs.data)) >= 0)
                        r = buf_printf(out, ",\"bytes\":%zu}\n", req->len);
        } else
                r = buf_printf(out, "Wrote %zu bytes to '%s'\n", req->len, req->path);
        return r < 0 ? ops_oom(e) : 0;
}
