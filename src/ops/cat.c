/* SPDX-License-Identifier: MIT */
/* sbx serve's download (ops.h, ops_cat): a byte range of a regular file, as it is. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/util.h"
#include "common.h"
#include "ops.h"

int ops_cat(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_cat_req *req = arg;
        if (!req->path || !req->path[0])
                return sbx_usage(e, "an empty path");
        struct stat st;
        _cleanup_close_ int fd = ops_open_regular(req->path, &st, e);
        if (fd < 0)
                return fd;
        uint64_t len = req->length < OPS_CAT_MAX ? req->length : OPS_CAT_MAX;
        if (buf_printf(out, "%lld %llu %llu\n", (long long)st.st_size,
                       (unsigned long long)st.st_dev, (unsigned long long)st.st_ino) < 0)
                return ops_oom(e);
        char chunk[65536];
        for (uint64_t got = 0; got < len;) {
                size_t want = len - got < sizeof(chunk) ? (size_t)(len - got) : sizeof(chunk);
                ssize_t n = RETRY_EINTR(pread(fd, chunk, want, (off_t)(req->offset + got)));
                if (n < 0)
                        return ops_fail_errno(e, errno, "failed to read '%s'", req->path);
                if (n == 0)
                        break;
                if (buf_append(out, chunk, (size_t)n) < 0)
                        return ops_oom(e);
                got += (uint64_t)n;
        }
        return 0;
}
