/* SPDX-License-Identifier: MIT */
/*
 * `image pull` (image.h). The manifest (through an index, for this host's platform), the
 * config and the layers the store lacks are fetched into $STORE/downloads/, each verified
 * against its digest as it is written (registry.c); an interrupted pull leaves its partial blob
 * there, and the next pull asks only for the rest. The blobs are then laid out as a private OCI
 * layout beside them and imported from it as any local layout is (import.c): import verifies
 * every digest once more, unpacks under its bounds and commits atomically. Blobs are removed
 * once imported: the store keeps layers unpacked, once each, whichever image brought them.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "image-internal.h"
#include "registry.h"

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"

struct blob {
        char hex[DIGEST_HEX_LEN + 1];
        uint64_t size;
};

struct pull {
        const struct image_pull_opts *o;
        struct registry_ref ref;
        struct registry *reg;
        int storefd, dlfd, layersfd;
        char layout[64]; /* downloads/<this pull's layout> */
        struct buf manifest;
        char mtype[128];
        char mhex[DIGEST_HEX_LEN + 1];
        struct blob config, layers[IMAGE_MAX_LAYERS];
        size_t n_layers;
        char what[96]; /* for progress: "layer 2/5 sha256:abcd..." */
};

static void json_putp(struct json_object **o)
{
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

static const char *jstr(struct json_object *o, const char *key)
{
        struct json_object *v;
        return o && json_object_object_get_ex(o, key, &v) &&
                       json_object_is_type(v, json_type_string)
                   ? json_object_get_string(v)
                   : NULL;
}

static int parse_blob(struct json_object *d, struct blob *b)
{
        struct json_object *sz;
        if (!d || digest_parse(jstr(d, "digest"), b->hex) < 0 ||
            !json_object_object_get_ex(d, "size", &sz) || !json_object_is_type(sz, json_type_int))
                return -EINVAL;
        int64_t n = json_object_get_int64(sz);
        if (n <= 0 || (uint64_t)n > IMAGE_MAX_UNPACKED)
                return -EINVAL;
        b->size = (uint64_t)n;
        return 0;
}

static int bad_manifest(struct pull *p, const char *why, struct sbx_error *e)
{
        return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                        "registry '%s' sent an unusable manifest for '%s': %s", p->ref.host,
                        p->ref.repo, why);
}

/* GET reference; when it was asked for by digest, the body must hash to it. */
static int get_manifest(struct pull *p, const char *reference, const char *want_hex,
                        struct sbx_error *e)
{
        int r = registry_manifest(p->reg, reference, &p->manifest, p->mtype, sizeof(p->mtype), e);
        if (r < 0)
                return r;
        digest_mem(p->manifest.data, p->manifest.len, p->mhex);
        if (want_hex && strcmp(p->mhex, want_hex) != 0)
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' sent a manifest that does not match its digest "
                                "sha256:%.12s (got sha256:%.12s)",
                                p->ref.host, want_hex, p->mhex);
        return 0;
}

static bool is_index(const char *mtype, struct json_object *root)
{
        const char *mt = jstr(root, "mediaType");
        if (!mt || !mt[0])
                mt = mtype;
        struct json_object *v;
        return (mt && (!strncmp(mt, MT_OCI_INDEX, strlen(MT_OCI_INDEX)) ||
                       !strncmp(mt, MT_DOCKER_LIST, strlen(MT_DOCKER_LIST)))) ||
               (json_object_object_get_ex(root, "manifests", &v) &&
                !json_object_object_get_ex(root, "layers", &v));
}

/* The index's manifest for linux on this host's architecture. */
static int pick_platform(struct pull *p, struct json_object *root, char hex[DIGEST_HEX_LEN + 1],
                         struct sbx_error *e)
{
        struct json_object *list;
        if (!json_object_object_get_ex(root, "manifests", &list) ||
            !json_object_is_type(list, json_type_array))
                return bad_manifest(p, "an index without manifests", e);
        char seen[256] = "";
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                struct json_object *d = json_object_array_get_idx(list, i), *plat;
                if (!json_object_object_get_ex(d, "platform", &plat))
                        continue;
                const char *os = jstr(plat, "os"), *arch = jstr(plat, "architecture");
                if (!os || !arch)
                        continue;
                if (!strcmp(os, "linux") && !strcmp(arch, image_host_arch()))
                        return digest_parse(jstr(d, "digest"), hex) < 0
                                   ? bad_manifest(p, "a manifest digest is not sha256", e)
                                   : 0;
                size_t l = strlen(seen);
                snprintf(seen + l, sizeof(seen) - l, "%s%s/%s", l ? ", " : "", os, arch);
        }
        return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                        "image '%s' has no variant for linux/%s (it has: %s)", p->ref.name,
                        image_host_arch(), seen[0] ? seen : "none");
}

static int parse_manifest(struct pull *p, struct json_object *root, struct sbx_error *e)
{
        struct json_object *cfg, *layers;
        if (!json_object_object_get_ex(root, "config", &cfg) || parse_blob(cfg, &p->config) < 0)
                return bad_manifest(p, "no valid config descriptor", e);
        if (!json_object_object_get_ex(root, "layers", &layers) ||
            !json_object_is_type(layers, json_type_array))
                return bad_manifest(p, "no layers", e);
        p->n_layers = json_object_array_length(layers);
        if (p->n_layers == 0 || p->n_layers > IMAGE_MAX_LAYERS)
                return bad_manifest(p, "no layers, or more than sbx takes", e);
        for (size_t i = 0; i < p->n_layers; i++)
                if (parse_blob(json_object_array_get_idx(layers, i), &p->layers[i]) < 0)
                        return bad_manifest(p, "a layer descriptor is not valid", e);
        const char *mt = jstr(root, "mediaType");
        if (mt && mt[0])
                snprintf(p->mtype, sizeof(p->mtype), "%s", mt);
        else if (strncmp(p->mtype, MT_DOCKER_MANIFEST, strlen(MT_DOCKER_MANIFEST)) != 0)
                snprintf(p->mtype, sizeof(p->mtype), "%s", MT_OCI_MANIFEST);
        p->mtype[strcspn(p->mtype, "; ")] = '\0';
        return 0;
}

/* The manifest to import: the reference's own, or its index's entry for this platform. */
static int resolve(struct pull *p, struct sbx_error *e)
{
        char want[DIGEST_HEX_LEN + 8];
        if (p->ref.digest[0])
                snprintf(want, sizeof(want), "sha256:%s", p->ref.digest);
        int r = get_manifest(p, p->ref.digest[0] ? want : p->ref.tag,
                             p->ref.digest[0] ? p->ref.digest : NULL, e);
        if (r < 0)
                return r;
        _cleanup_json_ struct json_object *root = json_tokener_parse(p->manifest.data);
        if (!root || !json_object_is_type(root, json_type_object))
                return bad_manifest(p, "not a JSON object", e);
        if (is_index(p->mtype, root)) {
                char hex[DIGEST_HEX_LEN + 1];
                if ((r = pick_platform(p, root, hex, e)) < 0)
                        return r;
                json_object_put(root);
                snprintf(want, sizeof(want), "sha256:%s", hex);
                if ((r = get_manifest(p, want, hex, e)) < 0)
                        return r;
                root = json_tokener_parse(p->manifest.data);
                if (!root || !json_object_is_type(root, json_type_object) ||
                    is_index(p->mtype, root))
                        return bad_manifest(p, "an index entry is not an image manifest", e);
        }
        return parse_manifest(p, root, e);
}

static void on_progress(void *arg, uint64_t now, uint64_t total)
{
        struct pull *p = arg;
        p->o->progress(p->o->arg, p->what, now, total);
}

/* downloads/<hex>, fetched (or resumed from <hex>.partial) unless a pull finished it. */
static int fetch_blob(struct pull *p, const struct blob *b, struct sbx_error *e)
{
        char part[DIGEST_HEX_LEN + 16];
        struct stat st;
        if (fstatat(p->dlfd, b->hex, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size == b->size)
                return 0;
        snprintf(part, sizeof(part), "%s.partial", b->hex);
        _cleanup_close_ int fd =
            openat(p->dlfd, part, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return sbx_internal(e, errno, "failed to create a download in the store");
        /* one pull at a time writes a blob; the others wait and then find it done */
        if (RETRY_EINTR(flock(fd, LOCK_EX)) < 0)
                return sbx_internal(e, errno, "failed to lock a download");
        if (fstatat(p->dlfd, b->hex, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (uint64_t)st.st_size == b->size)
                return 0;
        int r = registry_blob(p->reg, b->hex, b->size, fd, e);
        if (r < 0)
                return r;
        if (fsync(fd) < 0 || renameat(p->dlfd, part, p->dlfd, b->hex) < 0)
                return sbx_internal(e, errno, "failed to store a download");
        return 0;
}

static int make_layout(struct pull *p, struct sbx_error *e)
{
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) < 0)
                rnd = now_monotonic_ms();
        snprintf(p->layout, sizeof(p->layout), "layout-%d-%016llx", (int)getpid(),
                 (unsigned long long)rnd);
        _cleanup_buf_ struct buf index = {0};
        char mpath[DIGEST_HEX_LEN + 128];
        snprintf(mpath, sizeof(mpath), "%s/blobs/sha256/%s", p->layout, p->mhex);
        /* the media type is the registry's text: escaped */
        if (buf_puts(&index, "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":") < 0 ||
            json_cstr(&index, p->mtype) < 0 ||
            buf_printf(&index,
                       ",\"digest\":\"sha256:%s\",\"size\":%zu,\"annotations\":{\"org."
                       "opencontainers.image.ref.name\":\"pulled\"}}]}",
                       p->mhex, p->manifest.len) < 0)
                return -ENOMEM;
        char dir[128];
        int r = mkdirat(p->dlfd, p->layout, 0700);
        snprintf(dir, sizeof(dir), "%s/blobs", p->layout);
        r = r < 0 ? -errno : (mkdirat(p->dlfd, dir, 0700) < 0 ? -errno : 0);
        snprintf(dir, sizeof(dir), "%s/blobs/sha256", p->layout);
        r = r < 0 ? r : (mkdirat(p->dlfd, dir, 0700) < 0 ? -errno : 0);
        snprintf(dir, sizeof(dir), "%s/oci-layout", p->layout);
        static const char oci_layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
        if (r == 0)
                r = write_file_at(p->dlfd, dir, oci_layout, sizeof(oci_layout) - 1, 0600);
        snprintf(dir, sizeof(dir), "%s/index.json", p->layout);
        if (r == 0)
                r = write_file_at(p->dlfd, dir, index.data, index.len, 0600);
        if (r == 0)
                r = write_file_at(p->dlfd, mpath, p->manifest.data, p->manifest.len, 0600);
        return r < 0 ? sbx_internal(e, -r, "failed to lay out the pulled image") : 0;
}

/* Put blob b into the layout: fetched and linked, or (a layer the store has) an empty file
 * import never reads, as it skips a present layer under the store lock before reading it. */
static int place_blob(struct pull *p, const struct blob *b, bool is_layer, struct sbx_error *e)
{
        char dst[DIGEST_HEX_LEN + 128];
        snprintf(dst, sizeof(dst), "%s/blobs/sha256/%s", p->layout, b->hex);
        struct stat st;
        if (is_layer && fstatat(p->layersfd, b->hex, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode))
                return write_file_at(p->dlfd, dst, "", 0, 0600) < 0
                           ? sbx_internal(e, errno, "failed to lay out the pulled image")
                           : 0;
        int r = fetch_blob(p, b, e);
        if (r < 0)
                return r;
        if (linkat(p->dlfd, b->hex, p->dlfd, dst, 0) < 0 && errno != EEXIST)
                return sbx_internal(e, errno, "failed to lay out the pulled image");
        return 0;
}

/* A download cut short a day ago and not being written (its lock is free): nobody resumes it. */
static void sweep_partial(int dlfd, const char *name)
{
        size_t n = strlen(name);
        if (n < 8 || strcmp(name + n - 8, ".partial") != 0)
                return;
        _cleanup_close_ int fd = openat(dlfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 &&
            st.st_mtime < now_realtime_sec() - 86400)
                (void)unlinkat(dlfd, name, 0);
}

/* Layouts of pulls that were killed (their pid is gone), and stale partial downloads. */
static void sweep_layouts(int dlfd)
{
        int dfd = fcntl(dlfd, F_DUPFD_CLOEXEC, 3);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d))) {
                int pid;
                if (sscanf(de->d_name, "layout-%d-", &pid) == 1 && pid > 0 && pid != getpid() &&
                    kill(pid, 0) < 0 && errno == ESRCH)
                        (void)store_rmtree(dlfd, de->d_name);
                else
                        sweep_partial(dlfd, de->d_name);
        }
}

static int pull_blobs(struct pull *p, struct sbx_error *e)
{
        int r = make_layout(p, e);
        snprintf(p->what, sizeof(p->what), "pulling config sha256:%.12s", p->config.hex);
        if (r == 0)
                r = place_blob(p, &p->config, false, e);
        for (size_t i = 0; r == 0 && i < p->n_layers; i++) {
                snprintf(p->what, sizeof(p->what), "pulling layer %zu/%zu sha256:%.12s", i + 1,
                         p->n_layers, p->layers[i].hex);
                r = place_blob(p, &p->layers[i], true, e);
        }
        return r;
}

static void pull_done(struct pull *p)
{
        if (p->layout[0])
                (void)store_rmtree(p->dlfd, p->layout);
        registry_freep(&p->reg);
        buf_freep(&p->manifest);
        closep(&p->layersfd);
        closep(&p->dlfd);
        closep(&p->storefd);
}

static int open_dirs(struct pull *p, struct sbx_error *e)
{
        int r = image_store_open(true, &p->storefd, e);
        if (r < 0)
                return r;
        if (mkdirat(p->storefd, "downloads", 0700) < 0 && errno != EEXIST)
                return sbx_internal(e, errno, "failed to create the store's downloads");
        const int dir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        p->dlfd = openat(p->storefd, "downloads", dir);
        p->layersfd = openat(p->storefd, "layers", dir);
        if (p->dlfd < 0 || p->layersfd < 0)
                return sbx_internal(e, errno, "failed to open the image store");
        sweep_layouts(p->dlfd);
        return 0;
}

int image_pull(const char *ref, const struct image_pull_opts *o, struct image_info *ret,
               struct sbx_error *e)
{
        struct pull p = {.o = o, .storefd = -1, .dlfd = -1, .layersfd = -1};
        const char *why;
        if (registry_ref_parse(ref, &p.ref, &why) < 0)
                return sbx_usage(e, "invalid image reference '%s': %s", ref, why);
        bool insecure = o->insecure;
        for (size_t i = 0; o->insecure_hosts && o->insecure_hosts[i]; i++)
                insecure = insecure || !strcmp(o->insecure_hosts[i], p.ref.host);
        int r = open_dirs(&p, e);
        if (r == 0)
                r = registry_open(&p.ref, insecure, &p.reg, e);
        if (r == 0 && o->progress)
                registry_set_progress(p.reg, on_progress, &p);
        if (r == 0)
                r = resolve(&p, e);
        if (r == 0)
                r = pull_blobs(&p, e);
        char local[sizeof(p.ref.name) + sizeof(p.ref.tag) + 80], source[PATH_MAX];
        if (p.ref.tag[0])
                snprintf(local, sizeof(local), "%s:%s", p.ref.name, p.ref.tag);
        else
                snprintf(local, sizeof(local), "%s:sha256-%s", p.ref.name, p.ref.digest);
        _cleanup_free_ char *store = NULL;
        if (r == 0 && (r = image_store_path(&store)) < 0)
                r = sbx_internal(e, -r, "failed to find the image store");
        if (r == 0) {
                snprintf(source, sizeof(source), "%s/downloads/%s", store, p.layout);
                r = image_import(local, source, o->progress, o->arg, ret, e);
        }
        /* Imported: the store has the layers unpacked. Or it failed: the whole blobs it fetched
         * are kept for nothing (a registry could send new ones each time); only a download cut
         * short stays, for a resume, until the sweep finds it a day old. */
        (void)unlinkat(p.dlfd, p.config.hex, 0);
        for (size_t i = 0; i < p.n_layers; i++)
                (void)unlinkat(p.dlfd, p.layers[i].hex, 0);
        pull_done(&p);
        return r;
}
