/* SPDX-License-Identifier: MIT */
/*
 * `sbx commit` (commit.h, docs/design/commit.md): the supervisor hands over an fd of the
 * session's writable layer (as for diff), the overlay upper of its root is written as a layer
 * tar into an unnamed file of the store's tmp/ (ops/layertar.c), and the store imports that
 * tar on top of the session's image or --rootfs directory (image/import.c), through the
 * unpacker every import uses.
 */
#include "commit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config/config-internal.h"
#include "../ops/layerdiff.h"
#include "../ops/layertar.h"
#include "../session/audit.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup.h"
#include "launch.h"

/* Entries of one committed layer, as for an import. */
#define COMMIT_MAX_ENTRIES 1000000u

void commit_result_free(struct commit_result *r)
{
        free(r->name);
        free(r->tag);
        free(r->base);
        *r = (struct commit_result){0};
}

static int check_ref(const char *ref, struct sbx_error *e)
{
        const char *why = image_name_check(ref);
        return why ? sbx_usage(e, "invalid image '%s': %s", ref, why) : 0;
}

/* What the session's root is made of: an image (hex into id), a --rootfs directory (into
 * *ret_dir, the state's string) or the host base (*ret_dir "host"); exit 4 for read-only
 * sessions. */
static int session_base(const struct session_state *st, const char *who, char *id,
                        const char **ret_dir, struct sbx_error *e)
{
        const char *b = st->base ? st->base : "";
        *ret_dir = NULL;
        id[0] = '\0';
        if (st->read_only)
                return sbx_unsupported(e, 0,
                                       "cannot commit session '%s': it is read-only (it has "
                                       "no writable layer)",
                                       who);
        if (strncmp(b, "image:", 6) == 0 && strlen(b + 6) == DIGEST_HEX_LEN) {
                snprintf(id, DIGEST_HEX_LEN + 1, "%s", b + 6);
                return 0;
        }
        if (strncmp(b, "rootfs:/", 8) == 0 || strcmp(b, "host") == 0) {
                *ret_dir = b[0] == 'h' ? b : b + 7;
                return 0;
        }
        return sbx_unsupported(e, 0, "cannot commit session '%s': its base is unknown", who);
}

/* Refuse while commands run (unless pausing); freeze when asked, for as long as ctl is open
 * (a commit killed half-way leaves the session running). *ret_thaw: the request that ends
 * our freeze, or NULL. */
static int quiesce(int ctl, const char *who, const struct commit_opts *o, const char **ret_thaw,
                   struct sbx_error *e)
{
        char reply[64];
        int busy = 0;
        *ret_thaw = NULL;
        if (o->pause) {
                int r = control_pause(ctl, who, "PAUSE_HOLD", e);
                if (r >= 0)
                        *ret_thaw = r == 0 ? "RELEASE" : "RESUME"; /* 1: an older supervisor */
                else if (e->code && strcmp(e->code, "paused") == 0)
                        *e = (struct sbx_error){0}; /* the user paused it: it stays paused */
                else
                        return r;
                return 0;
        }
        if (control_call(ctl, "BUSY", reply, sizeof(reply), NULL, 0) < 0 ||
            sscanf(reply, "OK %d", &busy) != 1)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it has ended)", who);
        /* not a count: execs through the init's server hold the session by a lock, which
         * tells only that there are some */
        if (busy > 0)
                return sbx_fail(e, EXIT_FAILED, "busy", 0,
                                "session '%s' has commands running: commit with --pause, or "
                                "when they have ended",
                                who);
        return 0;
}

/* The writable layer the supervisor holds. */
static int open_layer(int ctl, const char *who, int *ret, struct sbx_error *e)
{
        char reply[64];
        int fds[1] = {-1};
        if (control_call(ctl, "LAYER", reply, sizeof(reply), fds, 1) < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it has ended)", who);
        _cleanup_close_ int layer = fds[0];
        if (strcmp(reply, "OK") != 0 || layer < 0)
                return sbx_unsupported(e, 0,
                                       "cannot commit session '%s': it keeps no writable "
                                       "layer to commit",
                                       who);
        *ret = TAKE_FD(layer);
        return 0;
}

/* The root overlay's upper (upper/root) of the layer. */
static int open_upper(int layer, const char *who, int *ret, struct sbx_error *e)
{
        _cleanup_close_ int up =
            openat(layer, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *ret = up >= 0 ? openat(up, "root", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        if (*ret < 0)
                return sbx_unsupported(e, errno,
                                       "cannot commit session '%s': its writable layer "
                                       "has no root overlay",
                                       who);
        return 0;
}

/* Whether the layer has a /usr overlay over the host's (upper/usr/): the init makes one for a
 * host-base session and a session of an image committed from one, never for another (the
 * session cannot reach the layer's own root). */
static bool host_layout(int layer)
{
        struct stat st;
        return fstatat(layer, "upper/usr", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* The layer's tar: a host base's by layertar_write_host against the snapshot taken at create
 * (kept in the session directory), any other's from its root overlay's upper. */
static int layer_tar(int sessfd, int layer, const char *who, int out, const struct layertar_opts *o,
                     struct layertar_stats *ls, struct sbx_error *e)
{
        if (!host_layout(layer)) {
                _cleanup_close_ int upper = -1;
                int r = open_upper(layer, who, &upper, e);
                return r < 0 ? r : layertar_write(upper, out, o, ls, e);
        }
        _cleanup_buf_ struct buf snap = {0};
        if (read_file_at(sessfd, BASE_FILE, &snap, 1u << 20) < 0)
                return sbx_unsupported(e, 0,
                                       "cannot commit session '%s': it keeps no record of its "
                                       "generated base (made by an older sbx, or its /, "
                                       "/workspace and /tmp held over %d entries at create)",
                                       who, LAYERDIFF_SNAPSHOT_MAX);
        return layertar_write_host(layer, snap.data ? snap.data : "", snap.len, out, o, ls, e);
}

/* The tar, into an unnamed file of the store's tmp/ (the store's file system, not memory). */
static int write_tar(int sessfd, int layer, const struct session_state *st, const char *who,
                     int *ret_fd, struct layertar_stats *ls, struct sbx_error *e)
{
        _cleanup_free_ char *store = NULL;
        _cleanup_close_ int storefd = -1;
        int r = image_store_open(true, &storefd, e);
        if (r < 0)
                return r;
        (void)mkdirat(storefd, "tmp", 0700);
        _cleanup_close_ int fd = openat(storefd, "tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                return sbx_internal(e, errno, "failed to create the layer in the image store");
        uint64_t max = 0;
        if ((r = image_max_unpacked(&max, e)) < 0)
                return r;
        struct layertar_opts o = {.uid_start = st->uid_start,
                                  .uid_count = st->uid_count,
                                  .max_bytes =
                                      st->disk_bytes && st->disk_bytes < max ? st->disk_bytes : max,
                                  .max_entries = COMMIT_MAX_ENTRIES};
        if ((r = layer_tar(sessfd, layer, who, fd, &o, ls, e)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return sbx_internal(e, errno, "failed to read the layer back");
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static void audit_commit_event(int sessfd, const struct session_state *st, const char *ref,
                               const struct commit_result *r, int64_t start, int rc,
                               const struct sbx_error *e)
{
        _cleanup_close_ int fd = audit_open(sessfd, st);
        if (fd < 0)
                return;
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, st->id, "commit");
        audit_str(&b, "ref", ref);
        audit_str(&b, "image", rc == 0 ? r->id : NULL);
        audit_str(&b, "layer", rc == 0 ? r->layer : NULL);
        audit_int(&b, "layer_bytes", (int64_t)r->layer_bytes);
        audit_int(&b, "entries", (int64_t)r->entries);
        audit_int(&b, "duration_ms", audit_now_ms() - start);
        audit_str(&b, "error", rc < 0 ? e->message : NULL);
        (void)audit_commit(fd, &b);
}

static int commit_locked(int sessfd, int ctl, const struct session_state *st, const char *who,
                         const char *ref, bool replace, struct commit_result *res,
                         struct sbx_error *e)
{
        char base[DIGEST_HEX_LEN + 1];
        const char *dir = NULL;
        _cleanup_close_ int layer = -1, tar = -1;
        struct layertar_stats ls = {0};
        int r = session_base(st, who, base, &dir, e);
        if (r == 0)
                r = open_layer(ctl, who, &layer, e);
        if (r == 0)
                r = write_tar(sessfd, layer, st, who, &tar, &ls, e);
        res->layer_bytes = ls.bytes;
        res->entries = ls.entries;
        struct image_info info = {0};
        if (r == 0)
                r = image_commit(ref, dir ? NULL : base, dir, tar, replace, &info, e);
        if (r < 0)
                return r;
        memcpy(res->id, info.id, sizeof(res->id));
        size_t n = 0;
        while (info.layers && info.layers[n])
                n++;
        if (n)
                snprintf(res->layer, sizeof(res->layer), "%s", info.layers[n - 1]);
        res->name = TAKE_PTR(info.name);
        res->tag = TAKE_PTR(info.tag);
        image_info_free(&info);
        return asprintf(&res->base, "%s%s",
                        !dir            ? "image:"
                        : dir[0] == '/' ? "rootfs:"
                                        : "",
                        dir ? dir : base) < 0
                   ? -ENOMEM
                   : 0;
}

int session_commit(const char *id_or_name, const char *ref, const struct commit_opts *opts,
                   struct commit_result *res, struct sbx_error *e)
{
        *res = (struct commit_result){0};
        int r = check_ref(ref, e);
        if (r < 0)
                return r;
        _cleanup_close_ int sessfd = -1, ctl = -1;
        if ((r = control_open(id_or_name, 15, &sessfd, &ctl, e)) < 0)
                return r;
        _cleanup_state_ struct session_state st = {0};
        if ((r = session_state_read(sessfd, &st)) < 0)
                return sbx_internal(e, -r, "failed to read the state of session '%s'", id_or_name);
        int64_t start = audit_now_ms();
        char base[DIGEST_HEX_LEN + 1];
        const char *dir;
        if ((r = session_base(&st, id_or_name, base, &dir, e)) < 0)
                return r;
        const char *thaw = NULL;
        r = quiesce(ctl, id_or_name, opts, &thaw, e);
        if (r == 0)
                r = commit_locked(sessfd, ctl, &st, id_or_name, ref, opts->replace, res, e);
        if (thaw) {
                struct sbx_error sub = {0};
                if (control_pause(ctl, id_or_name, thaw, &sub) < 0 && r == 0)
                        r = (*e = sub, -EIO);
        }
        audit_commit_event(sessfd, &st, ref, res, start, r, e);
        if (r < 0)
                commit_result_free(res);
        return r == -ENOMEM ? sbx_internal(e, ENOMEM, "out of memory") : r;
}
