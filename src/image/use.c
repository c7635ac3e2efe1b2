/* SPDX-License-Identifier: MIT */
/*
 * A session's use of an image: the record is held with flock(LOCK_SH) for the session's whole
 * life (create: by the supervisor, which keeps the fd; run: by the CLI), which is what makes
 * `image rm` refuse, and keeps the record and so its layers out of the store's sweep.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "image-internal.h"

/* The image's Env first: [env] and --env come after it and so override it. */
static int merge_env(struct sbx_config *c, char **image_env)
{
        char **v = NULL;
        for (size_t i = 0; image_env && image_env[i]; i++) {
                char *s = strdup(image_env[i]);
                if (!s || strv_add(&v, s) < 0) {
                        free(s);
                        strv_freep(&v);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; c->env && c->env[i]; i++) {
                if (strv_add(&v, c->env[i]) < 0) {
                        strv_freep(&v);
                        return -ENOMEM;
                }
                c->env[i] = NULL; /* moved */
        }
        free(c->env);
        c->env = v;
        return 0;
}

/* Open and share-lock the record of `id`; -ENOENT when an rm removed it meanwhile. */
static int hold_record(int storefd, const char *id)
{
        char path[128];
        snprintf(path, sizeof(path), "images/%s.json", id);
        _cleanup_close_ int fd = openat(storefd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (RETRY_EINTR(flock(fd, LOCK_SH)) < 0 || fstat(fd, &st) < 0)
                return -errno;
        return st.st_nlink == 0 ? -ENOENT : TAKE_FD(fd);
}

/* A commit of a --rootfs session: the directory it was made on must still be one (it is
 * used read-only, the lowest layer of the root, as --rootfs uses it). */
static int base_dir_check(struct sbx_config *c, const char *name, const char *tag, const char *dir,
                          struct sbx_error *e)
{
        struct stat st;
        int err = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        if (err)
                return sbx_fail(e, EXIT_FAILED, "not_found", err,
                                "image '%s:%s' is based on the directory '%s', which is no "
                                "longer a directory",
                                name, tag, dir);
        free(c->image_rootfs);
        c->image_rootfs = strdup(dir);
        return c->image_rootfs ? 0 : -ENOMEM;
}

/* The image is not in the store: pull it (unless [images] pull = never) and use what the
 * pull stored, whose name may be shorter ("docker.io/library/python:3" is "python:3"). */
static int pull_missing(struct sbx_config *c, const struct image_pull_opts *pull, const char *name,
                        const char *tag, struct sbx_error *e)
{
        if (!pull || c->image_pull_never)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "no image '%s:%s' (see 'sbx image list'; get it with 'sbx image "
                                "pull' or 'sbx image import')",
                                name, tag);
        struct image_pull_opts o = *pull;
        o.insecure_hosts = c->insecure_registries;
        struct image_info got = {0};
        int r = image_pull(c->image, &o, &got, e);
        if (r < 0)
                return r;
        free(c->image);
        if (asprintf(&c->image, "%s:%s", got.name, got.tag) < 0)
                c->image = NULL;
        image_info_free(&got);
        return c->image ? image_use(c, NULL, e) : sbx_internal(e, ENOMEM, "out of memory");
}

int image_use(struct sbx_config *c, const struct image_pull_opts *pull, struct sbx_error *e)
{
        if (!c->image)
                return 0;
        _cleanup_free_ char *name = NULL, *tag = NULL, *store = NULL;
        if (image_ref_split(c->image, &name, &tag) < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        /* the causes as image_store_open() tells them: a relative SBX_IMAGE_STORE is a bad
         * setting (exit 2), not a lack of memory */
        int r = image_store_path(&store);
        if (r == -EINVAL)
                return sbx_usage(e, "SBX_IMAGE_STORE must be an absolute path");
        if (r < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", -r,
                                "cannot find the image store (set SBX_IMAGE_STORE)");
        _cleanup_close_ int storefd = -1;
        struct sbx_error sub = {0};
        char id[DIGEST_HEX_LEN + 1];
        if (image_store_open(false, &storefd, &sub) < 0 ||
            store_tag_get(storefd, name, tag, id) < 0)
                return sub.exit_code && strcmp(sub.code, "not_found") != 0
                           ? (*e = sub, -EINVAL)
                           : pull_missing(c, pull, name, tag, e);
        _cleanup_close_ int lockfd = hold_record(storefd, id);
        if (lockfd < 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", -lockfd,
                                "image '%s:%s' was just removed", name, tag);
        struct image_info info;
        if (store_record_read(storefd, id, &info) < 0)
                return sbx_internal(e, EINVAL, "the record of image '%s:%s' is damaged", name, tag);
        for (size_t i = 0; r == 0 && info.layers[i]; i++) {
                char path[96];
                struct stat st;
                snprintf(path, sizeof(path), "layers/%s", info.layers[i]);
                if (fstatat(storefd, path, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                        r = sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                     "image '%s:%s' lacks its layer %.12s: import it again", name,
                                     tag, info.layers[i]);
        }
        if (r == 0 && info.base && strcmp(info.base, "host") == 0)
                c->image_host_base = true;
        else if (r == 0 && info.base)
                r = base_dir_check(c, name, tag, info.base + 7, e);
        if (r == 0 && asprintf(&c->image_layers_dir, "%s/layers", store) < 0) {
                c->image_layers_dir = NULL;
                r = -ENOMEM;
        }
        if (r == 0)
                r = merge_env(c, info.env);
        if (r == 0 && info.workdir && c->workdir_origin == SBX_ORIGIN_DEFAULT) {
                free(c->workdir);
                c->workdir = TAKE_PTR(info.workdir);
        }
        if (r == 0 && !(c->image_id = strdup(id)))
                r = -ENOMEM;
        if (r == 0) {
                c->image_layers = TAKE_PTR(info.layers);
                c->image_lock_fd = TAKE_FD(lockfd);
        }
        image_info_free(&info);
        return r == -ENOMEM ? sbx_internal(e, ENOMEM, "out of memory") : r;
}

int image_open_layers(const char *id, int **ret_fds, size_t *ret_n, bool *ret_host,
                      struct sbx_error *e)
{
        *ret_fds = NULL;
        *ret_n = 0;
        *ret_host = false;
        _cleanup_close_ int storefd = -1;
        struct image_info info = {0};
        int r = image_store_open(false, &storefd, e);
        if (r < 0)
                return r;
        if (!digest_hex_valid(id) || store_record_read(storefd, id, &info) < 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "the session's image (%.12s) is no longer in the store", id);
        /* a host base is no directory below the layers: their usr/ lie over the host's /usr */
        if (info.base && strcmp(info.base, "host") == 0) {
                *ret_host = true;
                free(info.base);
                info.base = NULL;
        }
        size_t n = strv_len(info.layers), all = n + (info.base ? 1 : 0);
        int *fds = calloc(all, sizeof(int));
        for (size_t i = 0; fds && i < n; i++) {
                char path[96];
                snprintf(path, sizeof(path), "layers/%s", info.layers[n - 1 - i]);
                fds[i] = openat(storefd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fds[i] < 0 && r == 0)
                        r = sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                     "the session's image lacks its layer %.12s",
                                     info.layers[n - 1 - i]);
        }
        if (fds && info.base) {
                fds[n] = open(info.base + 7, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fds[n] < 0 && r == 0)
                        r = sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                     "failed to open the image's base directory '%s'",
                                     info.base + 7);
        }
        image_info_free(&info);
        if (!fds)
                return sbx_internal(e, ENOMEM, "out of memory");
        n = all;
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                free(fds);
                return r;
        }
        *ret_fds = fds;
        *ret_n = n;
        return 0;
}
