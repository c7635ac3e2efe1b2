/* SPDX-License-Identifier: MIT */
/*
 * The API key serve makes when it was given none. A loopback address is reachable by every
 * user of the host, and by the requests a web page makes (DNS rebinding gets around the
 * same-origin rule), so serve never answers the lifecycle API without a key: it writes a new
 * one to RT/serve.key, 0600 in the caller's own 0700 runtime directory, where only the caller
 * (and root) can read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../session/runtime.h"
#include "serve-internal.h"
#include "shared/util.h"

#define KEY_FILE "serve.key"

int serve_key_make(char out[static SERVE_KEY_LEN + 1], struct sbx_error *e)
{
        uint8_t raw[SERVE_KEY_LEN / 2];
        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
                return sbx_internal(e, errno, "failed to read the kernel's random source");
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(out + 2 * i, 3, "%02x", raw[i]);
        _cleanup_close_ int rtfd = -1;
        int r = runtime_open(&rtfd, e);
        if (r < 0)
                return r;
        char dir[PATH_MAX];
        if (runtime_dir_path(dir, sizeof(dir)) < 0)
                return sbx_usage(e, "runtime directory path is too long");
        /* a new file each time: an old one may be open in a client still */
        (void)unlinkat(rtfd, KEY_FILE, 0);
        _cleanup_close_ int fd =
            openat(rtfd, KEY_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write_all(fd, out, SERVE_KEY_LEN) < 0 || write_all(fd, "\n", 1) < 0)
                return sbx_unsupported(e, errno, "failed to write the API key to '%s/%s'", dir,
                                       KEY_FILE);
        fprintf(stderr,
                "sbx: serve: no API key given: clients send the one in %s/%s as "
                "OPEN-SANDBOX-API-KEY\n",
                dir, KEY_FILE);
        return 0;
}
