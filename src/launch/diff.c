/* SPDX-License-Identifier: MIT */
/*
 * `sbx diff`: the supervisor hands over an fd of the session's writable layer (the init sent
 * it at #2b), and ops/layerdiff.c walks it on the host side by fd, never following a name the
 * session controls, comparing with the base snapshot the supervisor took at create and, for
 * the /usr overlay, with the host's /usr. Nothing enters the session: a paused one works too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "../ops/layerdiff.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "launch.h"

int session_diff(const char *id_or_name, struct buf *out, bool *truncated, struct sbx_error *e)
{
        _cleanup_close_ int sessfd = -1, ctl = -1;
        int r = control_open(id_or_name, 10, &sessfd, &ctl, e);
        if (r < 0)
                return r;
        char reply[64];
        int fds[1];
        if ((r = control_call(ctl, "LAYER", reply, sizeof(reply), fds, 1)) < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", -r,
                                "no such session '%s' (it has ended)", id_or_name);
        _cleanup_close_ int layer = fds[0];
        _cleanup_buf_ struct buf base = {0};
        if (strcmp(reply, "OK") != 0 || layer < 0 ||
            read_file_at(sessfd, BASE_FILE, &base, 1u << 20) < 0)
                return sbx_unsupported(e, 0,
                                       "cannot diff session '%s': only sessions on the host base "
                                       "(no --rootfs, no --image) made by this version of sbx "
                                       "keep what diff compares with",
                                       id_or_name);
        _cleanup_close_ int usr = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (usr < 0)
                return sbx_internal(e, errno, "failed to open the host's /usr");
        r = layerdiff_run(layer, base.data ? base.data : "", base.len, usr, out, truncated);
        if (r < 0)
                return sbx_internal(e, -r, "failed to walk the writable layer of '%s'", id_or_name);
        return 0;
}
