/* SPDX-License-Identifier: MIT */
/*
 * The distribution API v2 over libcurl (registry.h). A request that is answered 401 is sent
 * once more with what the challenge asks for: a bearer token from the realm it names (with the
 * host's credentials when there are any), or the credentials themselves for Basic. Bodies of
 * answers other than 200/206 are never kept; a blob's bytes are hashed as they are written.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config/config-internal.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "curl_lib.h"
#include "image-internal.h"
#include "registry.h"
#include "sbx-config.h"

#define DOCKER_HUB "docker.io"
#define DOCKER_HUB_API "registry-1.docker.io"
#define ACCEPT_MANIFESTS                                                                           \
        "Accept: application/vnd.oci.image.index.v1+json, "                                        \
        "application/vnd.oci.image.manifest.v1+json, "                                             \
        "application/vnd.docker.distribution.manifest.list.v2+json, "                              \
        "application/vnd.docker.distribution.manifest.v2+json"

struct registry {
        const struct curl_lib *cl;
        CURL *h;
        struct registry_ref ref;
        char base[300]; /* "https://host" */
        bool insecure;
        char *basic;  /* "Authorization: Basic ..." from an auth file, or NULL */
        char *bearer; /* "Authorization: Bearer ..." once a challenge was answered */
        bool use_basic;
        bool in_token;      /* fetching a token: a challenge now is not answered (no loop) */
        uint64_t unchecked; /* bytes written to the store since its free space was checked */
        registry_progress_fn progress;
        void *progress_arg;
};

/* ---- references ---- */

static bool is_host(const char *s, size_t n)
{
        return memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && !memcmp(s, "localhost", 9));
}

int registry_ref_parse(const char *s, struct registry_ref *r, const char **ret_why)
{
        *r = (struct registry_ref){0};
        *ret_why = "expected [HOST[:PORT]/]NAME[:TAG][@sha256:DIGEST]";
        if (strncmp(s, "docker://", 9) == 0)
                s += 9;
        char buf[600];
        size_t len = strlen(s);
        if (!s[0] || len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, s, len + 1);
        char *at = strchr(buf, '@');
        if (at) {
                *at = '\0';
                if (digest_parse(at + 1, r->digest) < 0) {
                        *ret_why = "a digest must be sha256: and 64 hexadecimal digits";
                        return -EINVAL;
                }
        }
        char *path = buf, *slash = strchr(buf, '/');
        if (slash && is_host(buf, (size_t)(slash - buf))) {
                *slash = '\0';
                for (char *p = buf; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                len = strlen(buf);
                if (len >= sizeof(r->host))
                        return -EINVAL;
                memcpy(r->host, buf, len + 1); /* length checked: no truncation to warn of */
                path = slash + 1;
        } else
                snprintf(r->host, sizeof(r->host), "%s", DOCKER_HUB);
        if (!strcmp(r->host, "index.docker.io") || !strcmp(r->host, DOCKER_HUB_API))
                snprintf(r->host, sizeof(r->host), "%s", DOCKER_HUB);
        char *last = strrchr(path, '/'), *colon = strchr(last ? last : path, ':');
        if (colon) {
                *colon = '\0';
                len = strlen(colon + 1);
                if (!len || len >= sizeof(r->tag))
                        return -EINVAL;
                memcpy(r->tag, colon + 1, len + 1);
        } else if (!r->digest[0])
                snprintf(r->tag, sizeof(r->tag), "%s", "latest");
        bool hub = !strcmp(r->host, DOCKER_HUB);
        int n = snprintf(r->repo, sizeof(r->repo), "%s%s",
                         hub && !strchr(path, '/') ? "library/" : "", path);
        if (n < 0 || (size_t)n >= sizeof(r->repo))
                return -EINVAL;
        /* the store's name: docker.io's images by their short name, others with their host */
        const char *shortname = hub && !strncmp(r->repo, "library/", 8) ? r->repo + 8 : r->repo;
        n = hub ? snprintf(r->name, sizeof(r->name), "%s", shortname)
                : snprintf(r->name, sizeof(r->name), "%s/%s", r->host, r->repo);
        if (n < 0 || (size_t)n >= sizeof(r->name))
                return -EINVAL;
        char full[600];
        snprintf(full, sizeof(full), "%s:%s", r->name, r->tag[0] ? r->tag : "x");
        const char *why = image_name_check(full);
        if (why) {
                *ret_why = why;
                return -EINVAL;
        }
        return 0;
}

/* ---- credentials ---- */

/* The "auth" (base64 of user:password) that the auth file at path holds for host. */
static char *auth_from_file(const char *path, const char *host)
{
        _cleanup_buf_ struct buf b = {0};
        if (read_file_at(AT_FDCWD, path, &b, 1 << 20) < 0 || !b.data)
                return NULL;
        struct json_object *root = json_tokener_parse(b.data), *auths, *entry, *auth;
        char *ret = NULL;
        const char *keys[] = {host, NULL, NULL};
        if (!strcmp(host, DOCKER_HUB)) {
                keys[1] = "https://index.docker.io/v1/";
                keys[2] = "index.docker.io";
        }
        for (size_t i = 0; root && !ret && i < ARRAY_SIZE(keys) && keys[i]; i++)
                if (json_object_object_get_ex(root, "auths", &auths) &&
                    json_object_object_get_ex(auths, keys[i], &entry) &&
                    json_object_object_get_ex(entry, "auth", &auth) &&
                    json_object_is_type(auth, json_type_string))
                        ret = strdup(json_object_get_string(auth));
        json_object_put(root);
        return ret;
}

static char *find_auth(const char *host)
{
        const char *env = getenv("REGISTRY_AUTH_FILE"), *rt = getenv("XDG_RUNTIME_DIR");
        const char *home = getenv("HOME"), *cfg = getenv("XDG_CONFIG_HOME");
        char paths[4][PATH_MAX] = {{0}};
        if (env)
                snprintf(paths[0], PATH_MAX, "%s", env);
        if (rt)
                snprintf(paths[1], PATH_MAX, "%s/containers/auth.json", rt);
        if (cfg)
                snprintf(paths[2], PATH_MAX, "%s/containers/auth.json", cfg);
        else if (home)
                snprintf(paths[2], PATH_MAX, "%s/.config/containers/auth.json", home);
        if (home)
                snprintf(paths[3], PATH_MAX, "%s/.docker/config.json", home);
        for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                char *a = paths[i][0] ? auth_from_file(paths[i], host) : NULL;
                if (a)
                        return a;
        }
        return NULL;
}

/* ---- one request ---- */

struct xfer {
        struct registry *reg;
        struct buf *b; /* the body into b (at most max bytes) ... */
        size_t max;
        int fd; /* ... or into fd, hashed, at most limit bytes from offset on */
        struct sha256_ctx sha;
        uint64_t offset, written, limit;
        uint64_t reserve; /* what the store keeps free, once a check found too little */
        bool started;
        int err; /* -errno of a failed write, -EFBIG past the bound */
        char ctype[128];
        char *challenge; /* WWW-Authenticate of the last answer */
};

static long status_of(struct xfer *x)
{
        long st = 0;
        x->reg->cl->easy_getinfo(x->reg->h, CURLINFO_RESPONSE_CODE, &st);
        return st;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
        struct xfer *x = arg;
        size_t len = size * n;
        if (len >= 5 && !strncmp(p, "HTTP/", 5)) { /* a new answer (after a redirect) */
                x->ctype[0] = '\0';
                free(x->challenge);
                x->challenge = NULL;
                return len;
        }
        const char *colon = memchr(p, ':', len);
        if (!colon)
                return len;
        size_t klen = (size_t)(colon - p), vlen = len - klen - 1;
        const char *v = colon + 1;
        while (vlen && (*v == ' ' || *v == '\t'))
                v++, vlen--;
        while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
                vlen--;
        if (klen == 12 && !strncasecmp(p, "content-type", 12))
                snprintf(x->ctype, sizeof(x->ctype), "%.*s", (int)vlen, v);
        else if (klen == 16 && !strncasecmp(p, "www-authenticate", 16)) {
                free(x->challenge);
                x->challenge = strndup(v, vlen);
        }
        return len;
}

/* A resumed blob answered 200 instead of 206: start it again from byte 0. */
static int restart_file(struct xfer *x)
{
        if (ftruncate(x->fd, 0) < 0 || lseek(x->fd, 0, SEEK_SET) < 0)
                return -errno;
        sha256_init(&x->sha);
        x->offset = 0;
        return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
        struct xfer *x = arg;
        size_t len = size * n;
        long st = status_of(x);
        if (st != 200 && st != 206)
                return len; /* an error's body: not kept */
        if (x->b) {
                if (x->b->len + len > x->max || buf_append(x->b, p, len) < 0)
                        return x->err = -EFBIG, 0;
                return len;
        }
        if (!x->started && st == 200 && x->offset > 0 && (x->err = restart_file(x)) < 0)
                return 0;
        x->started = true;
        if (x->offset + x->written + len > x->limit)
                return x->err = -EFBIG, 0;
        /* the store's reserve, as for an import (a registry may send what it likes) */
        if ((x->reg->unchecked += len) >= STORE_CHECK_EVERY) {
                x->reg->unchecked = 0;
                if ((x->err = store_space_check(x->fd, &x->reserve)) < 0)
                        return 0;
        }
        if (write_all(x->fd, p, len) < 0)
                return x->err = -errno, 0;
        sha256_update(&x->sha, len, (const uint8_t *)p);
        x->written += len;
        return len;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ut,
                       curl_off_t un)
{
        (void)dltotal, (void)ut, (void)un;
        struct xfer *x = arg;
        if (x->reg->progress)
                x->reg->progress(x->reg->progress_arg, x->offset + (uint64_t)dlnow, x->limit);
        return 0;
}

static void set_common(struct registry *reg, const char *url, struct xfer *x, char *errbuf)
{
        const struct curl_lib *cl = reg->cl;
        CURL *h = reg->h;
        cl->easy_reset(h);
        cl->easy_setopt(h, CURLOPT_URL, url);
        cl->easy_setopt(h, CURLOPT_USERAGENT, "sbx/" SBX_VERSION);
        cl->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        cl->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        cl->easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
        /* plain http only for a registry the user called insecure; never another scheme */
        cl->easy_setopt(h, CURLOPT_PROTOCOLS_STR, reg->insecure ? "http,https" : "https");
        cl->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, reg->insecure ? "http,https" : "https");
        cl->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 15L);
        /* A registry that stops sending, or trickles, fails the pull in a minute, not never:
         * under 1 KiB/s for a minute ends a transfer, and a manifest or token (into memory, at
         * most a few MiB) has five minutes in all. */
        cl->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
        cl->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
        cl->easy_setopt(h, CURLOPT_TIMEOUT, x->b ? 300L : 0L);
        cl->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
        cl->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        cl->easy_setopt(h, CURLOPT_HEADERDATA, x);
        cl->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        cl->easy_setopt(h, CURLOPT_WRITEDATA, x);
        cl->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        cl->easy_setopt(h, CURLOPT_XFERINFODATA, x);
        cl->easy_setopt(h, CURLOPT_NOPROGRESS, x->b ? 1L : 0L);
}

/* "key=value" or key="quoted value" of a challenge's parameter list. */
static char *challenge_param(const char *c, const char *key)
{
        size_t kl = strlen(key);
        for (const char *p = c; *p;) {
                while (*p == ' ' || *p == ',')
                        p++;
                const char *eq = strchr(p, '=');
                if (!eq)
                        return NULL;
                bool match = (size_t)(eq - p) == kl && !strncasecmp(p, key, kl);
                const char *v = eq + 1, *end;
                if (*v == '"') {
                        v++;
                        end = strchr(v, '"');
                        if (!end)
                                return NULL;
                        p = end + 1;
                } else {
                        end = v + strcspn(v, ",");
                        p = end;
                }
                if (match)
                        return strndup(v, (size_t)(end - v));
        }
        return NULL;
}

static int perform(struct registry *reg, const char *url, const char *accept, uint64_t range,
                   struct xfer *x, long *status, struct sbx_error *e);

/* Answer a 401's challenge: a bearer token from its realm, or Basic with the credentials. */
static int authenticate(struct registry *reg, const char *challenge, struct sbx_error *e)
{
        if (!strncasecmp(challenge, "Basic", 5)) {
                if (!reg->basic)
                        return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                        "registry '%s' asks for credentials: log in with "
                                        "'podman login %s' (or docker login)",
                                        reg->ref.host, reg->ref.host);
                reg->use_basic = true;
                return 0;
        }
        if (strncasecmp(challenge, "Bearer ", 7) != 0)
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' asks for an authentication sbx does not speak",
                                reg->ref.host);
        _cleanup_free_ char *realm = challenge_param(challenge + 7, "realm");
        _cleanup_free_ char *service = challenge_param(challenge + 7, "service");
        _cleanup_free_ char *scope = challenge_param(challenge + 7, "scope");
        bool https = realm && !strncmp(realm, "https://", 8);
        if (!realm || !(https || (reg->insecure && !strncmp(realm, "http://", 7))))
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' names no usable token realm", reg->ref.host);
        char dscope[300];
        snprintf(dscope, sizeof(dscope), "repository:%s:pull", reg->ref.repo);
        char *es = reg->cl->easy_escape(reg->h, service ? service : "", 0);
        char *ec = reg->cl->easy_escape(reg->h, scope ? scope : dscope, 0);
        _cleanup_free_ char *url = NULL;
        int n = asprintf(&url, "%s%sservice=%s&scope=%s", realm, strchr(realm, '?') ? "&" : "?",
                         es ? es : "", ec ? ec : "");
        reg->cl->free(es);
        reg->cl->free(ec);
        if (n < 0)
                return -ENOMEM;
        _cleanup_buf_ struct buf b = {0};
        struct xfer x = {.reg = reg, .b = &b, .max = 1 << 20};
        long st = 0;
        reg->use_basic = reg->basic != NULL; /* the token endpoint takes the credentials */
        reg->in_token = true;
        int r = perform(reg, url, NULL, 0, &x, &st, e);
        reg->use_basic = reg->in_token = false;
        free(x.challenge);
        if (r < 0)
                return r;
        if (st != 200 || !b.data)
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' refused a token (HTTP %ld)%s", reg->ref.host, st,
                                reg->basic ? "" : ": it may need 'podman login'");
        struct json_object *root = json_tokener_parse(b.data), *t;
        const char *tok = NULL;
        if (root && ((json_object_object_get_ex(root, "token", &t) &&
                      json_object_is_type(t, json_type_string)) ||
                     (json_object_object_get_ex(root, "access_token", &t) &&
                      json_object_is_type(t, json_type_string))))
                tok = json_object_get_string(t);
        free(reg->bearer);
        reg->bearer = NULL;
        /* asprintf leaves the pointer undefined when it fails: not the NULL tested below */
        if (tok && strlen(tok) < 16384 && !strpbrk(tok, "\r\n") &&
            asprintf(&reg->bearer, "Authorization: Bearer %s", tok) < 0)
                reg->bearer = NULL;
        json_object_put(root);
        if (!reg->bearer)
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' sent no usable token", reg->ref.host);
        return 0;
}

/* Whether the last response came from the registry itself: a challenge from a host it
 * redirected to is not answered (the token request would carry the registry's credentials). */
static bool from_registry(struct registry *reg)
{
        char *u = NULL;
        size_t n = strlen(reg->base);
        return reg->cl->easy_getinfo(reg->h, CURLINFO_EFFECTIVE_URL, &u) == CURLE_OK && u &&
               strncasecmp(u, reg->base, n) == 0 && (u[n] == '/' || u[n] == '\0');
}

static int perform(struct registry *reg, const char *url, const char *accept, uint64_t range,
                   struct xfer *x, long *status, struct sbx_error *e)
{
        for (int attempt = 0;; attempt++) {
                char errbuf[CURL_ERROR_SIZE] = "";
                set_common(reg, url, x, errbuf);
                struct curl_slist *hdr = NULL;
                char rangeh[64];
                if (accept)
                        hdr = reg->cl->slist_append(hdr, accept);
                if (reg->use_basic && reg->basic)
                        hdr = reg->cl->slist_append(hdr, reg->basic);
                else if (reg->bearer)
                        hdr = reg->cl->slist_append(hdr, reg->bearer);
                if (range) {
                        snprintf(rangeh, sizeof(rangeh), "Range: bytes=%llu-",
                                 (unsigned long long)range);
                        hdr = reg->cl->slist_append(hdr, rangeh);
                }
                reg->cl->easy_setopt(reg->h, CURLOPT_HTTPHEADER, hdr);
                CURLcode c = reg->cl->easy_perform(reg->h);
                reg->cl->slist_free_all(hdr);
                if (x->err == -EFBIG)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "registry '%s' sent more than the manifest announced",
                                        reg->ref.host);
                if (x->err == -ENOSPC && x->reserve)
                        return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                        "image too large for the store: what registry '%s' sends "
                                        "would leave less than %llu MiB free on its filesystem",
                                        reg->ref.host, (unsigned long long)(x->reserve >> 20));
                if (x->err)
                        return sbx_internal(e, -x->err, "failed to store what registry '%s' sent",
                                            reg->ref.host);
                if (c != CURLE_OK)
                        return sbx_fail(
                            e, EXIT_FAILED, "unavailable", 0,
                            "failed to fetch from registry '%s': %s%s", reg->ref.host,
                            errbuf[0] ? errbuf : reg->cl->easy_strerror(c),
                            c == CURLE_SSL_CONNECT_ERROR && !reg->insecure
                                ? " (a plain-HTTP registry needs --insecure-registry or [images] "
                                  "insecure_registries)"
                                : "");
                *status = status_of(x);
                if (*status != 401 || attempt > 0 || !x->challenge || reg->use_basic ||
                    reg->in_token || !from_registry(reg))
                        return 0;
                _cleanup_free_ char *ch = x->challenge;
                x->challenge = NULL;
                int r = authenticate(reg, ch, e);
                if (r < 0)
                        return r;
                if (x->b)
                        x->b->len = 0;
        }
}

/* ---- the API ---- */

int registry_open(const struct registry_ref *ref, bool insecure, struct registry **ret,
                  struct sbx_error *e)
{
        const struct curl_lib *cl = curl_lib_load(e);
        if (!cl)
                return -ENOSYS;
        struct registry *reg = calloc(1, sizeof(*reg));
        if (!reg || !(reg->h = cl->easy_init())) {
                free(reg);
                return sbx_internal(e, ENOMEM, "failed to start an HTTP client");
        }
        reg->cl = cl;
        reg->ref = *ref;
        reg->insecure = insecure;
        snprintf(reg->base, sizeof(reg->base), "%s://%s", insecure ? "http" : "https",
                 strcmp(ref->host, DOCKER_HUB) ? ref->host : DOCKER_HUB_API);
        _cleanup_free_ char *auth = find_auth(ref->host);
        if (auth && !strpbrk(auth, "\r\n") &&
            asprintf(&reg->basic, "Authorization: Basic %s", auth) < 0)
                reg->basic = NULL;
        *ret = reg;
        return 0;
}

void registry_freep(struct registry **p)
{
        struct registry *reg = *p;
        if (!reg)
                return;
        reg->cl->easy_cleanup(reg->h);
        free(reg->basic);
        free(reg->bearer);
        free(reg);
        *p = NULL;
}

void registry_set_progress(struct registry *reg, registry_progress_fn fn, void *arg)
{
        reg->progress = fn;
        reg->progress_arg = arg;
}

int registry_manifest(struct registry *reg, const char *reference, struct buf *b, char *ctype,
                      size_t ctype_n, struct sbx_error *e)
{
        char url[700];
        snprintf(url, sizeof(url), "%s/v2/%s/manifests/%s", reg->base, reg->ref.repo, reference);
        struct xfer x = {.reg = reg, .b = b, .max = IMAGE_MAX_JSON};
        long st = 0;
        b->len = 0;
        int r = perform(reg, url, ACCEPT_MANIFESTS, 0, &x, &st, e);
        free(x.challenge);
        if (r < 0)
                return r;
        if (st == 404 || st == 401 || st == 403)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "no image '%s%s%s' in registry '%s' (HTTP %ld)", reg->ref.repo,
                                strncmp(reference, "sha256:", 7) ? ":" : "@", reference,
                                reg->ref.host, st);
        if (st != 200 || !b->data)
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' answered HTTP %ld for '%s:%s'", reg->ref.host, st,
                                reg->ref.repo, reference);
        snprintf(ctype, ctype_n, "%s", x.ctype);
        return 0;
}

/* Hash what fd already holds (an interrupted pull's start of the blob). */
static int hash_existing(int fd, struct sha256_ctx *sha, uint64_t *ret_n)
{
        uint8_t chunk[1 << 16];
        uint64_t n = 0;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(fd, chunk, sizeof(chunk));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                sha256_update(sha, (size_t)k, chunk);
                n += (uint64_t)k;
        }
        *ret_n = n;
        return 0;
}

int registry_blob(struct registry *reg, const char *hex, uint64_t size, int fd, struct sbx_error *e)
{
        struct xfer x = {.reg = reg, .fd = fd, .limit = size};
        sha256_init(&x.sha);
        int r = hash_existing(fd, &x.sha, &x.offset);
        if (r < 0)
                return sbx_internal(e, -r, "failed to read a partial download");
        if (x.offset > size) {
                if ((r = restart_file(&x)) < 0)
                        return sbx_internal(e, -r, "failed to reset a partial download");
        }
        if (x.offset < size) {
                char url[700];
                snprintf(url, sizeof(url), "%s/v2/%s/blobs/sha256:%s", reg->base, reg->ref.repo,
                         hex);
                long st = 0;
                r = perform(reg, url, NULL, x.offset, &x, &st, e);
                free(x.challenge);
                if (r < 0)
                        return r;
                if (st != 200 && st != 206)
                        return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                        "registry '%s' answered HTTP %ld for blob sha256:%.12s",
                                        reg->ref.host, st, hex);
        }
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_digest(&x.sha, sizeof(d), d);
        char got[DIGEST_HEX_LEN + 1];
        for (size_t i = 0; i < sizeof(d); i++)
                snprintf(got + 2 * i, 3, "%02x", d[i]);
        if (x.offset + x.written != size || strcmp(got, hex) != 0) {
                (void)restart_file(&x); /* nothing of a wrong blob is kept for a resume */
                return sbx_fail(e, EXIT_FAILED, "unavailable", 0,
                                "registry '%s' sent a blob that does not match its digest "
                                "sha256:%.12s (%llu of %llu bytes, sha256:%.12s)",
                                reg->ref.host, hex, (unsigned long long)x.offset + x.written,
                                (unsigned long long)size, got);
        }
        return 0;
}
