/* SPDX-License-Identifier: MIT */
/*
 * The setters of the [images], [serve] and [packages] keys: the sections that configure the
 * front-ends and provisioning rather than a session's own boundaries. The option table in
 * keys.c refers to them.
 */
#include <string.h>

#include "config-internal.h"

int set_image_pull(struct sbx_config *c, struct layer *l, const struct config_key *k, const char *v)
{
        if (strcmp(v, "missing") != 0 && strcmp(v, "never") != 0)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        c->image_pull_never = strcmp(v, "never") == 0;
        return 0;
}

/* A registry as image pull names it: HOST[:PORT], the host in lowercase letters, digits, '.'
 * and '-' (an IPv6 literal is not taken). */
static int add_registry(struct sbx_config *c, struct layer *l, const struct config_key *k,
                        const char *item)
{
        size_t n = strspn(item, "abcdefghijklmnopqrstuvwxyz0123456789.-");
        if (n == 0 || n > 253 ||
            (item[n] && (item[n] != ':' || !item[n + 1] ||
                         strspn(item + n + 1, "0123456789") != strlen(item + n + 1) ||
                         strlen(item + n + 1) > 5)))
                return layer_invalid(l, k, item, "expected %s", k->expected);
        char *s = strdup(item);
        return s && strv_push(&c->insecure_registries, s) >= 0 ? 0 : (free(s), layer_oom(l));
}

int set_insecure_registries(struct sbx_config *c, struct layer *l, const struct config_key *k,
                            const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->insecure_registries);
        return for_each_item(c, l, k, v, true, add_registry);
}

/* [serve] network: what a sandbox made through sbx serve without a networkPolicy gets. */
int set_serve_network(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        if (strcmp(v, "none") != 0 && strcmp(v, "host") != 0)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        c->serve_network_host = strcmp(v, "host") == 0;
        return 0;
}

static int add_host_image(struct sbx_config *c, struct layer *l, const struct config_key *k,
                          const char *item)
{
        if (strpbrk(item, " \t\"") || strlen(item) > 255)
                return layer_invalid(l, k, item, "expected %s", k->expected);
        char *s = strdup(item);
        return s && strv_push(&c->serve_host_images, s) >= 0 ? 0 : (free(s), layer_oom(l));
}

int set_serve_host_images(struct sbx_config *c, struct layer *l, const struct config_key *k,
                          const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->serve_host_images);
        return for_each_item(c, l, k, v, true, add_host_image);
}

static int add_volume_root(struct sbx_config *c, struct layer *l, const struct config_key *k,
                           const char *item)
{
        if (item[0] != '/' || strstr(item, "/..") || strstr(item, "../"))
                return layer_invalid(l, k, item, "expected %s", k->expected);
        char *s = strdup(item);
        return s && strv_push(&c->serve_volume_roots, s) >= 0 ? 0 : (free(s), layer_oom(l));
}

int set_serve_volume_roots(struct sbx_config *c, struct layer *l, const struct config_key *k,
                           const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->serve_volume_roots);
        return for_each_item(c, l, k, v, true, add_volume_root);
}

int set_package_index(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        if (!v[0]) { /* empty: PyPI */
                free(c->package_index);
                c->package_index = NULL;
                return 0;
        }
        const char *why = package_index_check(v, NULL);
        if (why)
                return layer_invalid(l, k, v, "%s", why);
        char *s = strdup(v);
        if (!s)
                return layer_oom(l);
        free(c->package_index);
        c->package_index = s;
        return 0;
}

static int add_package_host(struct sbx_config *c, struct layer *l, const struct config_key *k,
                            const char *item)
{
        char *norm = NULL;
        const char *why = allow_entry_check(item, &norm);
        if (why)
                return layer_invalid(l, k, item, "%s", why);
        return strv_push(&c->package_hosts, norm) >= 0 ? 0 : layer_oom(l);
}

int set_package_hosts(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->package_hosts);
        int r = for_each_item(c, l, k, v, true, add_package_host);
        return r < 0 ? r : 0;
}
