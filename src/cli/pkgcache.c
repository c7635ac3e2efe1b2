/* SPDX-License-Identifier: MIT */
/*
 * Default packages once: a session of an image with packages is saved (sbx commit) as the
 * image "sbx-packages:<key>", the key a digest of the base image's id, the index and the
 * package list, and the next create of the same asks for that image instead of installing
 * again (provision.h).
 */
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../launch/commit.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cli.h"
#include "provision.h"

#define PKGCACHE_NAME "sbx-packages"

static void feed(struct sha256_ctx *ctx, const char *s)
{
        sha256_update(ctx, strlen(s) + 1, (const uint8_t *)s); /* with its NUL: a separator */
}

/* "sbx-packages:<32 hex>" for c, or NULL when c has no image or no packages. */
static char *cache_ref(const struct sbx_config *c)
{
        if (!c->image_id || !c->packages || !c->packages[0])
                return NULL;
        struct sha256_ctx ctx;
        sha256_init(&ctx);
        feed(&ctx, "sbx-packages 1");
        feed(&ctx, c->image_id);
        feed(&ctx, package_index_url(c));
        for (char **p = c->packages; *p; p++)
                feed(&ctx, *p);
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_digest(&ctx, sizeof(d), d);
        char *ref = malloc(sizeof(PKGCACHE_NAME) + 1 + 32);
        if (!ref)
                return NULL;
        int n = snprintf(ref, sizeof(PKGCACHE_NAME) + 1, "%s:", PKGCACHE_NAME);
        for (size_t i = 0; i < 16; i++)
                n += snprintf(ref + n, 3, "%02x", d[i]);
        return ref;
}

static bool image_present(const char *ref)
{
        struct image_info *v = NULL;
        size_t n = 0;
        struct sbx_error ignored = {0};
        if (image_list(&v, &n, &ignored) < 0)
                return false;
        bool found = false;
        size_t len = strlen(PKGCACHE_NAME);
        for (size_t i = 0; i < n && !found; i++)
                found =
                    strcmp(v[i].name, PKGCACHE_NAME) == 0 && strcmp(v[i].tag, ref + len + 1) == 0;
        image_list_free(v, n);
        return found;
}

/* Drop what image_use resolved, so it can resolve another image. */
static void image_release(struct sbx_config *c)
{
        free(c->image_id);
        c->image_id = NULL;
        free(c->image_layers_dir);
        c->image_layers_dir = NULL;
        free(c->image_rootfs);
        c->image_rootfs = NULL;
        c->image_host_base = false;
        strv_freep(&c->image_layers);
        if (c->image_lock_fd >= 0)
                close(c->image_lock_fd);
        c->image_lock_fd = -1;
}

int pkgcache_use(struct sbx_config *c, char **ret_ref, struct sbx_error *e)
{
        *ret_ref = NULL;
        _cleanup_free_ char *ref = cache_ref(c);
        if (!ref)
                return 0;
        if (!image_present(ref)) {
                *ret_ref = TAKE_PTR(ref);
                return 0;
        }
        /* the saved image has the base's Env and WorkingDir, and the packages installed */
        image_release(c);
        free(c->image);
        c->image = TAKE_PTR(ref);
        int r = image_use(c, NULL, e);
        if (r < 0)
                return r;
        strv_freep(&c->packages);
        return 1;
}

void pkgcache_save(const char *id, const char *ref)
{
        struct commit_opts o = {0};
        struct commit_result res = {0};
        struct sbx_error e = {0};
        int r;
        /* the install's exec connection may not be closed on the supervisor's side yet */
        for (int i = 0; (r = session_commit(id, ref, &o, &res, &e)) < 0 && i < 20 && e.code &&
                        strcmp(e.code, "busy") == 0;
             i++) {
                commit_result_free(&res);
                res = (struct commit_result){0};
                e = (struct sbx_error){0};
                (void)usleep(50 * 1000);
        }
        if (r < 0)
                cli_warn("the installed packages were not saved as image '%s' (the next create "
                         "installs them again): %s",
                         ref, e.message);
        commit_result_free(&res);
}
