/* SPDX-License-Identifier: MIT */
/*
 * Import sources: an OCI image layout (directory or oci-archive tar), a docker-save tree or
 * tar, or a plain root-filesystem tarball. Tar sources of the first kinds are copied (only the
 * files those layouts name, bounded) into a private scratch directory, so every blob is read
 * from a file nobody else can change. Every file of a source directory is opened with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a symlinked blob never reaches a host file.
 * Index, manifest and config digests are verified here; layers while they are unpacked.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "archive_lib.h"
#include "image-internal.h"

#define MEDIA_INDEX "application/vnd.oci.image.index.v1+json"
#define MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"

void image_manifest_free(struct image_manifest *m)
{
        for (size_t i = 0; m->layer_fds && i < m->n_layers; i++)
                closep(&m->layer_fds[i]);
        free(m->layer_fds);
        free(m->layers);
        strv_freep(&m->env);
        free(m->workdir);
        *m = (struct image_manifest){0};
}

static int invalid(struct sbx_error *e, const char *source, const char *why)
{
        return sbx_fail(e, EXIT_USAGE, "usage", 0, "invalid image source '%s': %s", source, why);
}

/*
 * Open a regular file for reading without ever blocking or having an effect on open: a FIFO
 * (which would block until a writer comes, while the store lock is held) or a device is
 * opened O_NONBLOCK | O_NOCTTY, seen by fstat and refused. O_NONBLOCK is cleared again for
 * the regular file. -EINVAL: not a regular file.
 */
static int open_regular_fd(int fd)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

static int open_beneath(int dirfd, const char *path)
{
        struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                               .resolve =
                                   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = sys_openat2(dirfd, path, &how);
        if (fd < 0)
                return -errno;
        int r = open_regular_fd(fd);
        return r < 0 ? r : TAKE_FD(fd);
}

/* Why a file of a source could not be opened: missing, not a regular file (a FIFO, a
 * directory), or the error. */
static int open_failed(struct sbx_error *e, const char *source, const char *what, const char *path,
                       int r)
{
        if (r == -EINVAL)
                return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                "invalid image source '%s': %s '%s' is not a regular file", source,
                                what, path);
        return sbx_fail(e, EXIT_USAGE, "usage", -r, "invalid image source '%s': %s %s '%s'", source,
                        r == -ENOENT ? "missing" : "cannot open", what, path);
}

static void json_putp(struct json_object **o)
{
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

/* Read and parse a JSON file below dirfd; verify its sha256 when expect is not NULL. */
static int read_json(int dirfd, const char *path, const char *expect, const char *source,
                     struct json_object **ret, char hex[static DIGEST_HEX_LEN + 1],
                     struct sbx_error *e)
{
        _cleanup_close_ int fd = open_beneath(dirfd, path);
        if (fd < 0)
                return open_failed(e, source, "file", path, fd);
        _cleanup_buf_ struct buf b = {0};
        int r = read_all(fd, &b, IMAGE_MAX_JSON);
        if (r < 0 || b.len >= IMAGE_MAX_JSON)
                return sbx_fail(e, EXIT_USAGE, "usage", r < 0 ? -r : 0,
                                "invalid image source '%s': cannot read '%s' (at most 4 MiB)",
                                source, path);
        digest_mem(b.data, b.len, hex);
        if (expect && strcmp(expect, hex) != 0)
                return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                "invalid image source '%s': '%s' does not match its digest "
                                "sha256:%s",
                                source, path, expect);
        struct json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        struct json_object *o = json_tokener_parse_ex(tok, b.data ? b.data : "", (int)b.len);
        bool ok = o && json_tokener_get_error(tok) == json_tokener_success;
        json_tokener_free(tok);
        if (!ok) {
                if (o)
                        json_object_put(o);
                return sbx_fail(e, EXIT_USAGE, "usage", 0,
                                "invalid image source '%s': '%s' is not valid JSON", source, path);
        }
        *ret = o;
        return 0;
}

static const char *jstr(struct json_object *o, const char *key)
{
        struct json_object *v;
        if (!o || !json_object_object_get_ex(o, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static struct json_object *jget(struct json_object *o, const char *key, json_type t)
{
        struct json_object *v;
        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
                return NULL;
        return v;
}

const char *image_host_arch(void)
{
#if defined(__x86_64__)
        return "amd64";
#elif defined(__aarch64__)
        return "arm64";
#else
        return "";
#endif
}

/* Env and WorkingDir of an image config (OCI and docker have the same "config" object). */
static int parse_config(struct json_object *cfg, const char *source, struct image_manifest *m,
                        struct sbx_error *e)
{
        struct json_object *c = jget(cfg, "config", json_type_object);
        if (!c)
                c = jget(cfg, "Config", json_type_object);
        struct json_object *env = jget(c, "Env", json_type_array);
        for (size_t i = 0; env && i < json_object_array_length(env); i++) {
                struct json_object *v = json_object_array_get_idx(env, i);
                const char *s =
                    json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                /* an entry sbx would refuse as --env is dropped, never passed on */
                if (!s || parse_env_assignment(s) < 0)
                        continue;
                char *copy = strdup(s);
                if (!copy || strv_add(&m->env, copy) < 0) {
                        free(copy);
                        return -ENOMEM;
                }
        }
        const char *wd = jstr(c, "WorkingDir");
        if (wd && wd[0]) {
                if (wd[0] != '/' || strstr(wd, "/../") || strlen(wd) > 1024 ||
                    (strlen(wd) >= 3 && strcmp(wd + strlen(wd) - 3, "/..") == 0))
                        return invalid(e, source,
                                       "WorkingDir must be an absolute path without '..'");
                if (!(m->workdir = strdup(wd)))
                        return -ENOMEM;
        }
        return 0;
}

static int blob_path(const char *digest, char *out, size_t n, char hex[static DIGEST_HEX_LEN + 1])
{
        if (digest_parse(digest, hex) < 0)
                return -EINVAL;
        snprintf(out, n, "blobs/sha256/%s", hex);
        return 0;
}

/* n layer slots in m, their fds -1 (closed by the manifest's cleanup). */
static int alloc_layers(struct image_manifest *m, size_t n)
{
        m->layers = calloc(n, sizeof(*m->layers));
        m->layer_fds = malloc(n * sizeof(int));
        if (!m->layers || !m->layer_fds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                m->layer_fds[i] = -1;
        m->n_layers = n;
        return 0;
}

static int add_layers(int dirfd, struct json_object *layers, const char *source,
                      struct image_manifest *m, struct sbx_error *e)
{
        size_t n = layers ? json_object_array_length(layers) : 0;
        if (n == 0 || n > IMAGE_MAX_LAYERS)
                return invalid(e, source, "the manifest must list 1 to 128 layers");
        if (alloc_layers(m, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char path[128];
                if (blob_path(jstr(json_object_array_get_idx(layers, i), "digest"), path,
                              sizeof(path), m->layers[i]) < 0)
                        return invalid(e, source, "a layer has no valid sha256 digest");
                m->layer_fds[i] = open_beneath(dirfd, path);
                if (m->layer_fds[i] < 0)
                        return open_failed(e, source, "layer blob", path, m->layer_fds[i]);
        }
        return 0;
}

/* Pick one entry of an index's "manifests": the only one, the one tagged `tag`, or the one
 * for this host's platform. */
static struct json_object *pick_manifest(struct json_object *list, const char *tag)
{
        size_t n = json_object_array_length(list);
        if (n == 1)
                return json_object_array_get_idx(list, 0);
        struct json_object *by_platform = NULL;
        size_t n_platform = 0;
        for (size_t i = 0; i < n; i++) {
                struct json_object *d = json_object_array_get_idx(list, i);
                const char *ref = jstr(jget(d, "annotations", json_type_object),
                                       "org.opencontainers.image.ref.name");
                if (ref && tag && strcmp(ref, tag) == 0)
                        return d;
                struct json_object *p = jget(d, "platform", json_type_object);
                const char *os = jstr(p, "os"), *arch = jstr(p, "architecture");
                if (os && arch && strcmp(os, "linux") == 0 &&
                    strcmp(arch, image_host_arch()) == 0) {
                        by_platform = d;
                        n_platform++;
                }
        }
        return n_platform == 1 ? by_platform : NULL;
}

static int open_oci(int dirfd, const char *source, const char *tag, struct image_manifest *m,
                    struct sbx_error *e)
{
        char hex[DIGEST_HEX_LEN + 1], path[128];
        _cleanup_json_ struct json_object *index = NULL;
        int r = read_json(dirfd, "index.json", NULL, source, &index, hex, e);
        if (r < 0)
                return r;
        /* an index may point at another index (multi-platform): follow at most 4 levels */
        struct json_object *desc = NULL;
        _cleanup_json_ struct json_object *nested = NULL;
        struct json_object *cur = index;
        for (int depth = 0;; depth++) {
                struct json_object *list = jget(cur, "manifests", json_type_array);
                if (!list || json_object_array_length(list) == 0)
                        return invalid(e, source, "the index lists no manifest");
                desc = pick_manifest(list, tag);
                if (!desc)
                        return sbx_fail(e, EXIT_FAILED, "ambiguous", 0,
                                        "image source '%s' holds several images and none is "
                                        "tagged '%s' or is the only one for linux/%s",
                                        source, tag, image_host_arch());
                const char *mt = jstr(desc, "mediaType");
                if (!mt || (strcmp(mt, MEDIA_INDEX) != 0 && strcmp(mt, MEDIA_DOCKER_LIST) != 0))
                        break;
                if (depth >= 4)
                        return invalid(e, source, "indexes nested too deeply");
                if (blob_path(jstr(desc, "digest"), path, sizeof(path), hex) < 0)
                        return invalid(e, source, "an index entry has no valid sha256 digest");
                struct json_object *next = NULL;
                if ((r = read_json(dirfd, path, hex, source, &next, hex, e)) < 0)
                        return r;
                json_putp(&nested);
                nested = cur = next;
        }
        if (blob_path(jstr(desc, "digest"), path, sizeof(path), hex) < 0)
                return invalid(e, source, "the manifest has no valid sha256 digest");
        _cleanup_json_ struct json_object *man = NULL, *cfg = NULL;
        if ((r = read_json(dirfd, path, hex, source, &man, m->id, e)) < 0)
                return r;
        char cfg_hex[DIGEST_HEX_LEN + 1];
        if (blob_path(jstr(jget(man, "config", json_type_object), "digest"), path, sizeof(path),
                      cfg_hex) < 0)
                return invalid(e, source, "the manifest has no valid config digest");
        if ((r = read_json(dirfd, path, cfg_hex, source, &cfg, cfg_hex, e)) < 0 ||
            (r = parse_config(cfg, source, m, e)) < 0)
                return r;
        return add_layers(dirfd, jget(man, "layers", json_type_array), source, m, e);
}

/* docker save: manifest.json names the config ("<hex>.json" or "blobs/sha256/<hex>") and
 * the layer tars; each layer is checked against the config's rootfs.diff_ids (or its blob
 * name). */
static int config_hex_of(const char *path, char hex[static DIGEST_HEX_LEN + 1])
{
        if (strncmp(path, "blobs/sha256/", 13) == 0 && digest_hex_valid(path + 13)) {
                memcpy(hex, path + 13, DIGEST_HEX_LEN + 1);
                return 0;
        }
        if (strlen(path) == DIGEST_HEX_LEN + 5 && strcmp(path + DIGEST_HEX_LEN, ".json") == 0) {
                memcpy(hex, path, DIGEST_HEX_LEN);
                hex[DIGEST_HEX_LEN] = '\0';
                if (digest_hex_valid(hex))
                        return 0;
        }
        return -EINVAL;
}

static struct json_object *pick_docker(struct json_object *list, const char *tag)
{
        size_t n = json_object_array_length(list);
        if (n == 1)
                return json_object_array_get_idx(list, 0);
        for (size_t i = 0; i < n; i++) {
                struct json_object *d = json_object_array_get_idx(list, i);
                struct json_object *tags = jget(d, "RepoTags", json_type_array);
                for (size_t j = 0; tags && j < json_object_array_length(tags); j++) {
                        const char *t = json_object_get_string(json_object_array_get_idx(tags, j));
                        const char *colon = t ? strrchr(t, ':') : NULL;
                        if (colon && tag && strcmp(colon + 1, tag) == 0)
                                return d;
                }
        }
        return NULL;
}

static int open_docker(int dirfd, const char *source, const char *tag, struct image_manifest *m,
                       struct sbx_error *e)
{
        char hex[DIGEST_HEX_LEN + 1];
        _cleanup_json_ struct json_object *list = NULL, *cfg = NULL;
        int r = read_json(dirfd, "manifest.json", NULL, source, &list, hex, e);
        if (r < 0)
                return r;
        if (!json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0)
                return invalid(e, source, "manifest.json lists no image");
        struct json_object *d = pick_docker(list, tag);
        if (!d)
                return sbx_fail(e, EXIT_FAILED, "ambiguous", 0,
                                "image source '%s' holds several images and none is tagged '%s'",
                                source, tag);
        const char *cpath = jstr(d, "Config");
        if (!cpath || config_hex_of(cpath, hex) < 0)
                return invalid(e, source, "manifest.json names no config by its digest");
        if ((r = read_json(dirfd, cpath, hex, source, &cfg, m->id, e)) < 0 ||
            (r = parse_config(cfg, source, m, e)) < 0)
                return r;
        struct json_object *layers = jget(d, "Layers", json_type_array);
        struct json_object *diffs =
            jget(jget(cfg, "rootfs", json_type_object), "diff_ids", json_type_array);
        size_t n = layers ? json_object_array_length(layers) : 0;
        if (n == 0 || n > IMAGE_MAX_LAYERS || !diffs || json_object_array_length(diffs) != n)
                return invalid(e, source, "the layers and the config's diff_ids do not agree");
        if (alloc_layers(m, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *lp = json_object_get_string(json_object_array_get_idx(layers, i));
                if (!lp)
                        return invalid(e, source, "a layer has no path");
                if (strncmp(lp, "blobs/sha256/", 13) == 0 && digest_hex_valid(lp + 13))
                        memcpy(m->layers[i], lp + 13, DIGEST_HEX_LEN + 1);
                else if (digest_parse(json_object_get_string(json_object_array_get_idx(diffs, i)),
                                      m->layers[i]) < 0)
                        return invalid(e, source, "a diff_id is not a sha256 digest");
                m->layer_fds[i] = open_beneath(dirfd, lp);
                if (m->layer_fds[i] < 0)
                        return open_failed(e, source, "layer", lp, m->layer_fds[i]);
        }
        return 0;
}

/* The names an OCI layout or a docker-save archive holds; nothing else is copied out. */
static bool layout_name(const char *p)
{
        static const char *const plain[] = {"index.json", "oci-layout", "manifest.json"};
        for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
                if (strcmp(p, plain[i]) == 0)
                        return true;
        char hex[DIGEST_HEX_LEN + 1];
        if (config_hex_of(p, hex) == 0)
                return true;
        /* skopeo and podman write docker-archive layers as "<hex>.tar" beside the config */
        if (strlen(p) == DIGEST_HEX_LEN + 4 && strcmp(p + DIGEST_HEX_LEN, ".tar") == 0) {
                memcpy(hex, p, DIGEST_HEX_LEN);
                hex[DIGEST_HEX_LEN] = '\0';
                return digest_hex_valid(hex);
        }
        if (strlen(p) == DIGEST_HEX_LEN + 10 && strcmp(p + DIGEST_HEX_LEN, "/layer.tar") == 0) {
                memcpy(hex, p, DIGEST_HEX_LEN);
                hex[DIGEST_HEX_LEN] = '\0';
                return digest_hex_valid(hex);
        }
        return false;
}

/* The store's reserve, checked while a source is copied into its scratch directory. */
static int no_space(int fd, const char *name, struct sbx_error *e)
{
        uint64_t reserve = 0;
        int r = store_space_check(fd, &reserve);
        if (r == -ENOSPC)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "image too large for the store: copying '%s' would leave less "
                                "than %llu MiB free on its filesystem",
                                name, (unsigned long long)(reserve >> 20));
        return r < 0 ? sbx_internal(e, -r, "failed to check the free space for '%s'", name) : 0;
}

static int copy_entry(const struct archive_lib *la, struct archive *a, int scratchfd,
                      const char *name, uint64_t max_bytes, uint64_t *budget, uint64_t *unchecked,
                      struct sbx_error *e)
{
        const char *slash = strchr(name, '/');
        if (slash) {
                char dir[80];
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
                if (strcmp(dir, "blobs") == 0) {
                        (void)mkdirat(scratchfd, "blobs", 0700);
                        (void)mkdirat(scratchfd, "blobs/sha256", 0700);
                } else
                        (void)mkdirat(scratchfd, dir, 0700);
        }
        _cleanup_close_ int fd =
            openat(scratchfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return errno == EEXIST ? sbx_fail(e, EXIT_USAGE, "usage", 0,
                                                  "invalid image source: '%s' appears twice", name)
                                       : sbx_internal(e, errno, "failed to copy '%s'", name);
        const void *buf;
        size_t size;
        la_int64_t off;
        int r;
        uint64_t end = 0;
        while ((r = la->read_data_block(a, &buf, &size, &off)) == ARCHIVE_OK) {
                if ((uint64_t)off + size > *budget)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "image too large: the source exceeds %llu MiB (the "
                                        "bound of one import: SBX_IMAGE_MAX_SIZE)",
                                        (unsigned long long)(max_bytes >> 20));
                end = (uint64_t)off + size;
                if (store_all_zero(buf, size))
                        continue; /* a hole (the file is new): zeros cost no disk */
                if ((*unchecked += size) >= STORE_CHECK_EVERY) { /* across the whole scan */
                        *unchecked = 0;
                        if ((r = no_space(fd, name, e)) < 0)
                                return r;
                }
                if (lseek(fd, off, SEEK_SET) < 0 || write_all(fd, buf, size) < 0)
                        return sbx_internal(e, errno, "failed to copy '%s'", name);
        }
        if (ftruncate(fd, (off_t)end) < 0) /* the trailing hole, if any */
                return sbx_internal(e, errno, "failed to copy '%s'", name);
        if (r != ARCHIVE_EOF)
                return sbx_fail(e, EXIT_USAGE, "usage", 0, "invalid image source: '%s': %s", name,
                                la->error_string(a) ? la->error_string(a) : "truncated");
        struct stat st;
        if (fstat(fd, &st) == 0)
                *budget -= (uint64_t)st.st_size < *budget ? (uint64_t)st.st_size : *budget;
        return 0;
}

/* One pass over a tar source: copy the layout's files into scratch. *ret_layout: whether
 * it held an OCI index or a docker manifest (else it is a plain rootfs tarball). */
static int scan_tar(int fd, const char *source, uint64_t max_bytes, int scratchfd, bool *ret_layout,
                    struct sbx_error *e)
{
        const struct archive_lib *la;
        _cleanup_(archive_lib_freep) struct archive *a = archive_lib_reader(&la, e);
        if (!a)
                return -EIO; /* *e says why */
        if (la->read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK)
                return invalid(e, source, "not a directory or a tar archive");
        struct archive_entry *en;
        uint64_t budget = max_bytes, logical = max_bytes, entries = 0, unchecked = 0;
        int ar;
        *ret_layout = false;
        while ((ar = la->read_next_header(a, &en)) != ARCHIVE_EOF) {
                if (ar != ARCHIVE_OK && ar != ARCHIVE_WARN)
                        return sbx_fail(e, EXIT_USAGE, "usage", 0, "invalid image source '%s': %s",
                                        source, la->error_string(a) ? la->error_string(a) : "?");
                if (++entries > IMAGE_MAX_ENTRIES)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "image too large: more than %u entries", IMAGE_MAX_ENTRIES);
                /* the bound of the unpacking, already here: a plain tarball is read twice */
                int64_t size = la->entry_size(en);
                if (size < 0 || (uint64_t)size > logical)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "image too large: '%s' would unpack beyond %llu MiB "
                                        "(the bound of one import: SBX_IMAGE_MAX_SIZE)",
                                        source, (unsigned long long)(max_bytes >> 20));
                logical -= (uint64_t)size;
                const char *p = la->entry_pathname(en);
                while (p && p[0] == '.' && p[1] == '/')
                        p += 2;
                if (!p || la->entry_filetype(en) != AE_IFREG || !layout_name(p))
                        continue;
                int r = copy_entry(la, a, scratchfd, p, max_bytes, &budget, &unchecked, e);
                if (r < 0)
                        return r;
                if (strcmp(p, "index.json") == 0 || strcmp(p, "manifest.json") == 0)
                        *ret_layout = true;
        }
        return 0;
}

static int open_plain(int fd, struct image_manifest *m)
{
        m->layers = calloc(1, sizeof(*m->layers));
        m->layer_fds = malloc(sizeof(int));
        if (!m->layers || !m->layer_fds)
                return -ENOMEM;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        m->layer_fds[0] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        m->n_layers = 1;
        return m->layer_fds[0] < 0 ? -errno : 0; /* id and layer digest: known once read */
}

static int open_layout(int dirfd, const char *source, const char *tag, struct image_manifest *m,
                       struct sbx_error *e)
{
        if (faccessat(dirfd, "index.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return open_oci(dirfd, source, tag, m, e);
        if (faccessat(dirfd, "manifest.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return open_docker(dirfd, source, tag, m, e);
        return invalid(e, source,
                       "a directory without index.json (OCI) or manifest.json "
                       "(docker save)");
}

int image_source_open(const char *source, const char *tag, uint64_t max_bytes, int scratchfd,
                      struct image_manifest *m, struct sbx_error *e)
{
        *m = (struct image_manifest){0};
        if (strncmp(source, "docker://", 9) == 0)
                return sbx_usage(e, "'%s' is a registry reference: use 'sbx image pull %s'", source,
                                 source + 9);
        /* O_NONBLOCK: a FIFO as the source must not block (the store lock is held) */
        _cleanup_close_ int fd = open(source, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        /* "DIR:REF" (as skopeo writes oci:DIR:REF) picks the image tagged REF in DIR */
        const char *colon = strrchr(source, ':');
        _cleanup_free_ char *dir = NULL;
        if (fd < 0 && errno == ENOENT && colon && colon[1] && !strchr(colon, '/') &&
            (dir = strndup(source, (size_t)(colon - source)))) {
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        tag = colon + 1;
                else
                        errno = ENOENT;
        }
        if (fd < 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", errno,
                                "failed to open image source '%s'", source);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return sbx_internal(e, errno, "failed to stat '%s'", source);
        int r;
        if (S_ISDIR(st.st_mode))
                r = open_layout(fd, source, tag, m, e);
        else if (!S_ISREG(st.st_mode) || open_regular_fd(fd) < 0)
                r = invalid(e, source, "not a directory or a regular file");
        else {
                bool layout = false;
                r = scan_tar(fd, source, max_bytes, scratchfd, &layout, e);
                if (r == 0)
                        r = layout ? open_layout(scratchfd, source, tag, m, e) : open_plain(fd, m);
        }
        if (r < 0)
                image_manifest_free(m);
        return r;
}
