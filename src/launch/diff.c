/* SPDX-License-Identifier: MIT */
/*
 * `sbx diff`: the supervisor hands over an fd of the session's writable layer (the init sent
 * it at #2b), and ops/layerdiff.c walks it on the host side by fd, never following a name the
 * session controls, comparing with the base snapshot the supervisor took at create and, for
 * an overlay's upper, with its lowers: the host's /usr below a host base's /usr overlay, the
 * --rootfs directory or the image's layers (from the store) below an overlay root. Nothing
 * enters the session: a paused one works too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../image/image.h"
#include "../ops/layerdiff.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "launch.h"

struct lowers {
        int *fds;
        size_t n;
        int *usr; /* an image committed from a host base: its /usr overlay's lowers */
        size_t n_usr;
};

static void lowers_free(struct lowers *l)
{
        for (size_t i = 0; i < l->n; i++)
                closep(&l->fds[i]);
        for (size_t i = 0; i < l->n_usr; i++)
                closep(&l->usr[i]);
        free(l->fds);
        free(l->usr);
}

/* Each layer's usr/ (those that have one), then the host's /usr. */
static int usr_lowers(struct lowers *l, struct sbx_error *e)
{
        l->usr = calloc(l->n + 1, sizeof(int));
        if (!l->usr)
                return sbx_internal(e, ENOMEM, "out of memory");
        for (size_t i = 0; i < l->n; i++) {
                int fd = openat(l->fds[i], "usr", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0)
                        l->usr[l->n_usr++] = fd;
        }
        l->usr[l->n_usr] = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (l->usr[l->n_usr] < 0)
                return sbx_internal(e, errno, "failed to open the host's /usr");
        l->n_usr++;
        return 0;
}

static int one_lower(struct lowers *l, const char *path, struct sbx_error *e)
{
        l->fds = calloc(1, sizeof(int));
        if (!l->fds)
                return sbx_internal(e, ENOMEM, "out of memory");
        l->fds[0] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (l->fds[0] < 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                "failed to open the session's base '%s'", path);
        l->n = 1;
        return 0;
}

/* What the session's base is, from its state: the lowers to compare an upper with. */
static int open_lowers(const struct session_state *st, const char *who, struct lowers *l,
                       struct sbx_error *e)
{
        const char *b = st->base ? st->base : "host"; /* older states: only the host had one */
        if (strcmp(b, "host") == 0)
                return one_lower(l, "/usr", e);
        if (strncmp(b, "rootfs:", 7) == 0 && b[7] == '/')
                return one_lower(l, b + 7, e);
        if (strncmp(b, "image:", 6) == 0) {
                bool host = false;
                int r = image_open_layers(b + 6, &l->fds, &l->n, &host, e);
                return r == 0 && host ? usr_lowers(l, e) : r;
        }
        return sbx_unsupported(e, 0, "cannot diff session '%s': its base is unknown", who);
}

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
                                       "cannot diff session '%s': only sessions with a writable "
                                       "layer (not --read-only) made by this version of sbx "
                                       "keep what diff compares with",
                                       id_or_name);
        _cleanup_state_ struct session_state st = {0};
        if ((r = session_state_read(sessfd, &st)) < 0)
                return sbx_internal(e, -r, "failed to read the state of session '%s'", id_or_name);
        struct lowers l = {0};
        r = open_lowers(&st, id_or_name, &l, e);
        if (r == 0 && (r = layerdiff_run(layer, base.data ? base.data : "", base.len, l.fds, l.n,
                                         l.usr, l.n_usr, out, truncated)) < 0)
                r = sbx_internal(e, -r, "failed to walk the writable layer of '%s'", id_or_name);
        lowers_free(&l);
        return r;
}
