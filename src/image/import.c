/* SPDX-License-Identifier: MIT */
/*
 * `image import`, `image list`, `image rm` on the store (store.c). An import works in a
 * private directory under $STORE/tmp and commits in this order: new layers renamed into
 * layers/, the record written (temp file + rename), the tag renamed into place. A failure
 * before the tag moves the new layers back out and removes them: no half-imported image is
 * ever visible, and the next import or rm sweeps tmp/ if sbx itself was killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config/config-internal.h"
#include "../config/config.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "image-internal.h"

int image_ref_split(const char *ref, char **ret_name, char **ret_tag)
{
        const char *colon = image_ref_tag_colon(ref);
        char *name = colon ? strndup(ref, (size_t)(colon - ref)) : strdup(ref);
        char *tag = strdup(colon ? colon + 1 : "latest");
        if (!name || !tag) {
                free(name);
                free(tag);
                return -ENOMEM;
        }
        *ret_name = name;
        *ret_tag = tag;
        return 0;
}

struct import {
        int storefd, layersfd, workfd;
        char work[64]; /* tmp/<this import> */
        struct image_manifest m;
        char **moved; /* layers this import added to layers/ */
        char *base;   /* a commit's base directory, "rootfs:/ABS"; NULL otherwise */
};

static int make_workdir(struct import *im, struct sbx_error *e)
{
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) < 0)
                rnd = (uint64_t)now_monotonic_ms();
        snprintf(im->work, sizeof(im->work), "tmp/import-%d-%016llx", (int)getpid(),
                 (unsigned long long)rnd);
        if (mkdirat(im->storefd, im->work, 0700) < 0)
                return sbx_internal(e, errno, "failed to create a scratch directory in the store");
        im->workfd = openat(im->storefd, im->work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (im->workfd < 0 || mkdirat(im->workfd, "src", 0700) < 0)
                return sbx_internal(e, errno, "failed to create a scratch directory in the store");
        return 0;
}

static bool layer_present(int layersfd, const char *hex)
{
        struct stat st;
        return hex[0] && fstatat(layersfd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode);
}

/* Unpack layer i (unless the store has it) and move it into layers/. */
static int import_layer(struct import *im, size_t i, struct unpack_budget *b, struct sbx_error *e)
{
        char *hex = im->m.layers[i];
        if (layer_present(im->layersfd, hex))
                return 0;
        char dir[32], what[128], got[DIGEST_HEX_LEN + 1];
        snprintf(dir, sizeof(dir), "layer-%zu", i);
        if (hex[0])
                snprintf(what, sizeof(what), "layer %zu of %zu (sha256:%.12s)", i + 1,
                         im->m.n_layers, hex);
        else
                snprintf(what, sizeof(what), "the root filesystem tarball");
        if (mkdirat(im->workfd, dir, 0755) < 0)
                return sbx_internal(e, errno, "failed to create '%s' in the store", dir);
        _cleanup_close_ int destfd =
            openat(im->workfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (destfd < 0)
                return sbx_internal(e, errno, "failed to open '%s' in the store", dir);
        int r = layer_unpack(im->m.layer_fds[i], destfd, what, hex[0] ? hex : NULL, got, b, e);
        if (r < 0)
                return r;
        if (!hex[0]) {
                memcpy(hex, got, sizeof(got));
                if (!im->m.id[0])
                        memcpy(im->m.id, got, sizeof(got));
                if (layer_present(im->layersfd, hex))
                        return 0; /* the same tarball again */
        }
        if (renameat(im->workfd, dir, im->layersfd, hex) < 0)
                return sbx_internal(e, errno, "failed to add a layer to the store");
        char *s = strdup(hex);
        if (!s || strv_add(&im->moved, s) < 0) {
                free(s);
                return -ENOMEM;
        }
        return 0;
}

static void rollback(struct import *im)
{
        for (size_t i = 0; im->moved && im->moved[i]; i++) {
                char back[96];
                snprintf(back, sizeof(back), "undo-%zu", i);
                if (renameat(im->layersfd, im->moved[i], im->workfd, back) < 0)
                        (void)store_rmtree(im->layersfd, im->moved[i]);
        }
}

/*
 * Whether the stored record of info->id lists info's layers. A docker-save image's id is its
 * config's digest, which its layer blobs (named by their own digests) need not match: an
 * archive with a copied config and other layers gets the same id, and must not pass for the
 * image recorded under it (or be passed for by it).
 */
static bool same_layers(int storefd, const struct image_info *info)
{
        struct image_info old = {0};
        if (store_record_read(storefd, info->id, &old) < 0)
                return false;
        size_t i = 0;
        while (old.layers && old.layers[i] && info->layers && info->layers[i] &&
               strcmp(old.layers[i], info->layers[i]) == 0)
                i++;
        bool same = (!old.layers || !old.layers[i]) && (!info->layers || !info->layers[i]);
        image_info_free(&old);
        return same;
}

static int commit(struct import *im, const char *name, const char *tag, struct image_info *info,
                  struct sbx_error *e)
{
        info->size = 0;
        for (size_t i = 0; i < im->m.n_layers; i++) {
                struct stat st;
                if (fstat(im->m.layer_fds[i], &st) == 0)
                        info->size += (uint64_t)st.st_size;
                char *s = strdup(im->m.layers[i]);
                if (!s || strv_add(&info->layers, s) < 0) {
                        free(s);
                        return -ENOMEM;
                }
        }
        memcpy(info->id, im->m.id, sizeof(info->id));
        info->env = TAKE_PTR(im->m.env);
        info->workdir = TAKE_PTR(im->m.workdir);
        info->base = TAKE_PTR(im->base);
        info->created_at = now_realtime_sec();
        if (!(info->name = strdup(name)) || !(info->tag = strdup(tag)))
                return -ENOMEM;
        /* An existing record of the same id is left alone: sessions hold locks on it. */
        char path[128];
        snprintf(path, sizeof(path), "images/%s.json", info->id);
        bool existed = faccessat(im->storefd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
        if (existed && !same_layers(im->storefd, info))
                return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                "the store holds an image sha256:%s with the same configuration "
                                "but other layers; not replaced (remove the tags that name it "
                                "first, see 'sbx image ls')",
                                info->id);
        int r = existed ? 0 : store_record_write(im->storefd, info);
        if (r < 0)
                return sbx_internal(e, -r, "failed to write the image record");
        r = store_tag_set(im->storefd, name, tag, info->id);
        if (r < 0) {
                if (!existed)
                        (void)unlinkat(im->storefd, path, 0);
                return sbx_internal(e, -r, "failed to tag the image");
        }
        return 0;
}

int image_max_unpacked(uint64_t *ret, struct sbx_error *e)
{
        const char *v = getenv("SBX_IMAGE_MAX_SIZE");
        *ret = IMAGE_MAX_UNPACKED;
        if (!v || !*v)
                return 0;
        if (parse_size(v, ret) < 0 || *ret < (UINT64_C(1) << 20))
                return sbx_usage(e,
                                 "invalid SBX_IMAGE_MAX_SIZE '%s': expected a size of at least "
                                 "1M like 16G",
                                 v);
        return 0;
}

/*
 * Every import and commit starts so: the unpack budget, the store open and locked (its lock
 * in *lockfd), what a killed import or commit left in tmp/ removed (a failure there does not
 * stop this one), the layers directory and a fresh work directory.
 */
static int import_begin(struct import *im, struct unpack_budget *b, int *lockfd,
                        struct sbx_error *e)
{
        int r = image_max_unpacked(&b->max_bytes, e);
        if (r == 0)
                r = image_store_open(true, &im->storefd, e);
        if (r == 0)
                r = store_lock(im->storefd, lockfd, e);
        if (r < 0)
                return r;
        (void)store_gc(im->storefd);
        im->layersfd =
            openat(im->storefd, "layers", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (im->layersfd < 0)
                return sbx_internal(e, errno, "failed to open the store's layers");
        return make_workdir(im, e);
}

/* The layers are in: name the image (and tag it), or take back what was moved in. */
static int import_finish(struct import *im, const char *name, const char *tag,
                         struct image_info *ret, struct sbx_error *e)
{
        struct image_info info = {0};
        int r = commit(im, name, tag, &info, e);
        if (r < 0) {
                image_info_free(&info);
                rollback(im);
        } else
                *ret = info;
        return r;
}

/* Every way out of an import or a commit: the scratch directory and the fds; r passed on. */
static int import_close(struct import *im, int r, struct sbx_error *e)
{
        if (im->workfd >= 0) {
                closep(&im->workfd);
                _cleanup_close_ int tmpfd =
                    openat(im->storefd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (tmpfd >= 0)
                        (void)store_rmtree(tmpfd, im->work + 4);
        }
        image_manifest_free(&im->m);
        strv_freep(&im->moved);
        free(im->base);
        closep(&im->layersfd);
        closep(&im->storefd);
        return r == -ENOMEM ? sbx_internal(e, ENOMEM, "out of memory") : r;
}

/*
 * An archive's headers make libarchive allocate before sbx sees an entry (a GNU sparse map:
 * ~47 bytes a pair, a hundred million pairs from 33 KiB compressed): an import's heap is
 * bounded (1 GiB more than it holds at the start), so such an archive fails the import instead
 * of the host's memory: libarchive then exits the process ("Out of memory"), and the next
 * import removes what this one left in the store's tmp/. The caller's
 * limit comes back after (a create that pulled goes on under its own).
 */
#define IMPORT_MAX_DATA ((rlim_t)1 << 30)

/* What the process has of data already (VmData: a sanitizer's shadow counts, terabytes). */
static rlim_t data_in_use(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[128];
        unsigned long long kb = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "VmData: %llu kB", &kb) == 1)
                        break;
        return (rlim_t)kb * 1024;
}

static bool data_cap(struct rlimit *old)
{
        if (getrlimit(RLIMIT_DATA, old) < 0)
                return false;
        rlim_t cap = data_in_use() + IMPORT_MAX_DATA;
        if (old->rlim_cur != RLIM_INFINITY && old->rlim_cur <= cap)
                return false;
        struct rlimit l = {.rlim_cur = cap, .rlim_max = old->rlim_max};
        return setrlimit(RLIMIT_DATA, &l) == 0;
}

static int import_source(const char *ref, const char *source, image_progress_fn progress, void *arg,
                         struct image_info *ret, struct sbx_error *e);

int image_import(const char *ref, const char *source, image_progress_fn progress, void *arg,
                 struct image_info *ret, struct sbx_error *e)
{
        struct rlimit old;
        bool capped = data_cap(&old);
        int r = import_source(ref, source, progress, arg, ret, e);
        if (capped)
                (void)setrlimit(RLIMIT_DATA, &old);
        return r;
}

static int import_source(const char *ref, const char *source, image_progress_fn progress, void *arg,
                         struct image_info *ret, struct sbx_error *e)
{
        _cleanup_free_ char *name = NULL, *tag = NULL;
        if (image_ref_split(ref, &name, &tag) < 0)
                return -ENOMEM;
        struct import im = {.storefd = -1, .layersfd = -1, .workfd = -1};
        _cleanup_close_ int lockfd = -1, scratch = -1;
        struct unpack_budget b = {.progress = progress, .progress_arg = arg};
        int r = import_begin(&im, &b, &lockfd, e);
        if (r < 0)
                goto out;
        scratch = openat(im.workfd, "src", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        r = scratch < 0 ? sbx_internal(e, errno, "failed to open the scratch directory")
                        : image_source_open(source, tag, b.max_bytes, scratch, &im.m, e);
        for (size_t i = 0; r == 0 && i < im.m.n_layers; i++)
                r = import_layer(&im, i, &b, e);
        if (r == 0)
                r = import_finish(&im, name, tag, ret, e);
out:
        return import_close(&im, r, e);
}

/* "name+with+slashes:tag" back into name and tag. */
static int parse_tag_file(const char *file, struct image_info *i)
{
        const char *colon = strrchr(file, ':');
        if (!colon)
                return -EINVAL;
        i->name = strndup(file, (size_t)(colon - file));
        i->tag = strdup(colon + 1);
        if (!i->name || !i->tag)
                return -ENOMEM;
        for (char *p = i->name; *p; p++)
                if (*p == '+')
                        *p = '/';
        return 0;
}

static int cmp_info(const void *a, const void *b)
{
        const struct image_info *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c ? c : strcmp(x->tag, y->tag);
}

void image_list_free(struct image_info *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                image_info_free(&v[i]);
        free(v);
}

static bool record_in_use(int storefd, const char *id)
{
        char path[128];
        snprintf(path, sizeof(path), "images/%s.json", id);
        _cleanup_close_ int fd = openat(storefd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
                return false;
        return errno == EWOULDBLOCK;
}

int image_list(struct image_info **ret, size_t *ret_n, struct sbx_error *e)
{
        *ret = NULL;
        *ret_n = 0;
        _cleanup_close_ int storefd = -1;
        struct sbx_error sub = {0};
        if (image_store_open(false, &storefd, &sub) < 0)
                return sub.code && strcmp(sub.code, "not_found") == 0 ? 0 : (*e = sub, -EINVAL);
        _cleanup_close_ int tagsfd = openat(storefd, "tags", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tagsfd < 0)
                return 0;
        int dfd = fcntl(tagsfd, F_DUPFD_CLOEXEC, 3);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d)
                return sbx_internal(e, errno, "failed to read the image store");
        struct image_info *v = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                char id[DIGEST_HEX_LEN + 1];
                ssize_t k = readlinkat(tagsfd, de->d_name, id, sizeof(id));
                if (de->d_name[0] == '.' || k != DIGEST_HEX_LEN)
                        continue;
                id[k] = '\0';
                struct image_info i;
                if (store_record_read(storefd, id, &i) < 0)
                        continue;
                struct image_info *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv || parse_tag_file(de->d_name, &i) < 0) {
                        image_info_free(&i);
                        image_list_free(nv ? nv : v, n);
                        return sbx_internal(e, ENOMEM, "out of memory");
                }
                i.in_use = record_in_use(storefd, id);
                v = nv;
                v[n++] = i;
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_info);
        *ret = v;
        *ret_n = n;
        return 0;
}

int image_remove(const char *ref, struct image_info *ret, struct sbx_error *e)
{
        _cleanup_free_ char *name = NULL, *tag = NULL;
        if (image_ref_split(ref, &name, &tag) < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        _cleanup_close_ int storefd = -1, lockfd = -1;
        int r = image_store_open(false, &storefd, e);
        if (r < 0)
                return r;
        if ((r = store_lock(storefd, &lockfd, e)) < 0)
                return r;
        char id[DIGEST_HEX_LEN + 1], path[128], tagpath[600], file[512];
        if (store_tag_get(storefd, name, tag, id) < 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0, "no image '%s:%s'", name, tag);
        snprintf(path, sizeof(path), "images/%s.json", id);
        _cleanup_close_ int rec = openat(storefd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (rec >= 0 && flock(rec, LOCK_EX | LOCK_NB) < 0)
                return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                "image '%s:%s' is in use by a session: destroy the session first",
                                name, tag);
        if (store_tag_file(name, tag, file, sizeof(file)) < 0)
                return sbx_internal(e, ENAMETOOLONG, "bad image name");
        snprintf(tagpath, sizeof(tagpath), "tags/%s", file);
        if (unlinkat(storefd, tagpath, 0) < 0)
                return sbx_internal(e, errno, "failed to remove the tag '%s:%s'", name, tag);
        closep(&rec); /* our own lock must not keep the record alive */
        if ((r = store_gc(storefd)) < 0)
                return sbx_internal(e, -r,
                                    "removed the tag '%s:%s', but failed to remove unused files "
                                    "from the image store",
                                    name, tag);
        *ret = (struct image_info){.name = TAKE_PTR(name), .tag = TAKE_PTR(tag)};
        memcpy(ret->id, id, sizeof(id));
        return 0;
}

/* A committed image's id: the sha256 of what defines it (its layers, Env, WorkingDir and base
 * directory), so the same commit twice is the same image. */
static int commit_id(const struct image_manifest *m, const char *base,
                     char out[static DIGEST_HEX_LEN + 1])
{
        _cleanup_buf_ struct buf b = {0};
        int r = buf_puts(&b, "sbx-commit 1\n");
        for (size_t i = 0; r == 0 && i < m->n_layers; i++)
                r = buf_printf(&b, "layer %s\n", m->layers[i]);
        for (size_t i = 0; r == 0 && m->env && m->env[i]; i++)
                r = buf_printf(&b, "env %zu %s\n", strlen(m->env[i]), m->env[i]);
        if (r == 0 && m->workdir)
                r = buf_printf(&b, "workdir %s\n", m->workdir);
        if (r == 0 && base)
                r = buf_printf(&b, "base %s\n", base);
        return r < 0 ? -ENOMEM : digest_mem(b.data, b.len, out);
}

/* The base image's layers (each present in the store), Env, WorkingDir and base directory
 * into m (or base_dir as the base), plus one slot for the new layer, read from blobfd. */
static int commit_manifest(struct import *im, const char *base_id, const char *base_dir, int blobfd,
                           struct sbx_error *e)
{
        struct image_info base = {0};
        if (base_id &&
            (!digest_hex_valid(base_id) || store_record_read(im->storefd, base_id, &base) < 0))
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "the session's image (%.12s) is no longer in the store", base_id);
        size_t n = base.layers ? strv_len(base.layers) : 0; /* no base_id: no base layers */
        im->m.layers = calloc(n + 1, sizeof(*im->m.layers));
        im->m.layer_fds = calloc(n + 1, sizeof(int));
        if (!im->m.layers || !im->m.layer_fds) {
                image_info_free(&base);
                return -ENOMEM;
        }
        im->m.n_layers = n + 1;
        int r = 0;
        for (size_t i = 0; i < n; i++) {
                im->m.layer_fds[i] = -1;
                snprintf(im->m.layers[i], DIGEST_HEX_LEN + 1, "%s", base.layers[i]);
                if (!layer_present(im->layersfd, base.layers[i]))
                        r = sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                     "the session's image lacks its layer %.12s", base.layers[i]);
        }
        im->m.layers[n][0] = '\0'; /* computed while unpacking */
        im->m.layer_fds[n] = fcntl(blobfd, F_DUPFD_CLOEXEC, 3);
        if (r == 0 && im->m.layer_fds[n] < 0)
                r = sbx_internal(e, errno, "failed to read the new layer");
        im->m.env = TAKE_PTR(base.env);
        im->m.workdir = TAKE_PTR(base.workdir);
        im->base = TAKE_PTR(base.base);
        /* base_dir "host": a host-base session's (a directory is absolute) */
        if (r == 0 && !base_id && base_dir &&
            asprintf(&im->base, "%s%s", base_dir[0] == '/' ? "rootfs:" : "", base_dir) < 0)
                r = (im->base = NULL, -ENOMEM);
        im->m.id[0] = 'x'; /* not the tarball's digest: set by commit_id once all are known */
        image_info_free(&base);
        return r;
}

int image_commit(const char *ref, const char *base_id, const char *base_dir, int blobfd,
                 bool replace, struct image_info *ret, struct sbx_error *e)
{
        _cleanup_free_ char *name = NULL, *tag = NULL;
        if (image_ref_split(ref, &name, &tag) < 0)
                return -ENOMEM;
        struct import im = {.storefd = -1, .layersfd = -1, .workfd = -1};
        _cleanup_close_ int lockfd = -1;
        struct unpack_budget b = {0};
        int r = import_begin(&im, &b, &lockfd, e);
        if (r < 0 || (r = commit_manifest(&im, base_id, base_dir, blobfd, e)) < 0)
                goto out;
        r = import_layer(&im, im.m.n_layers - 1, &b, e);
        if (r == 0 && (r = commit_id(&im.m, im.base, im.m.id)) < 0)
                r = sbx_internal(e, -r, "failed to name the image");
        char old[DIGEST_HEX_LEN + 1];
        if (r == 0 && !replace && store_tag_get(im.storefd, name, tag, old) == 0 &&
            strcmp(old, im.m.id) != 0)
                r = sbx_fail(e, EXIT_FAILED, "exists", 0,
                             "image '%s:%s' exists (another image): choose another tag, or "
                             "replace it with --replace",
                             name, tag);
        if (r == 0)
                r = import_finish(&im, name, tag, ret, e);
out:
        return import_close(&im, r, e);
}
