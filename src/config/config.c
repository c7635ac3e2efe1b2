/* SPDX-License-Identifier: MIT */
/*
 * Config layers, lowest first: built-in defaults, /etc/sbx/sandbox.ini,
 * ${XDG_CONFIG_HOME:-~/.config}/sbx/sandbox.ini, $SBX_CONFIG, --config FILE, the SBX_*
 * environment, the command-line flags.
 *
 * How layers combine:
 *  - a scalar: the highest layer that sets it wins;
 *  - a list (packages, mounts, allow): the highest layer that sets it replaces the lists of
 *    lower layers; within one layer its items add up (repeated flags, or a key repeated or
 *    continued on indented lines in one file). An empty value in a file ("packages =") clears;
 *  - [env] and --env: merged by variable name, the higher layer (or the later flag) wins;
 *  - allowed hosts imply network mode proxy, unless the same layer sets mode none or host
 *    (a usage error); a higher layer's mode none/host drops a lower layer's allowed hosts;
 *  - rootfs and image name the base: one set in a higher layer drops the other; both in the
 *    same layer is a usage error.
 * Within a file a scalar key or an [env] variable may be set only once.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "config-internal.h"

#define SYSTEM_CONFIG_FILE "/etc/sbx/sandbox.ini"

void config_init_defaults(struct sbx_config *c)
{
        /* On ENOMEM a string stays NULL and every config_* entry point fails with ENOMEM. */
        *c = (struct sbx_config){
            .ttl_sec = 1800,
            .timeout_sec = 1800,
            .rootfs = strdup("host"),
            .workdir = strdup("/workspace"),
            .hostname = strdup("sandbox"),
            .memory_bytes = UINT64_C(512) << 20,
            .cpus_milli = 1000,
            .pids = 256,
            .disk_bytes = UINT64_C(1) << 30,
            .nofile = 1024,
            .ptys = 64,
            .net = SBX_NET_NONE,
            .seccomp = SBX_SECCOMP_DEFAULT,
            .uid_range_pick = true,
            .uid_range_count = 65536,
            .image_lock_fd = -1,
            .serve_max_upload = UINT64_C(64) << 20, /* what `sbx fs put` takes (OPS_WRITE_MAX) */
        };
}

void config_free(struct sbx_config *c)
{
        free(c->name);
        free(c->rootfs);
        free(c->image);
        strv_freep(&c->packages);
        free(c->setup);
        free(c->workdir);
        free(c->hostname);
        config_mounts_clear(c);
        strv_freep(&c->env);
        strv_freep(&c->allow_hosts);
        free(c->audit_dir);
        strv_freep(&c->insecure_registries);
        strv_freep(&c->serve_host_images);
        strv_freep(&c->serve_volume_roots);
        free(c->package_index);
        strv_freep(&c->package_hosts);
        strv_freep(&c->warnings);
        free(c->image_layers_dir);
        strv_freep(&c->image_layers);
        free(c->image_id);
        free(c->image_rootfs);
        if (c->image_lock_fd >= 0)
                close(c->image_lock_fd);
        *c = (struct sbx_config){.image_lock_fd = -1};
}

static int defaults_ok(const struct sbx_config *c, struct sbx_error *e)
{
        if (!c->rootfs || !c->workdir || !c->hostname)
                return sbx_internal(e, ENOMEM, "cannot set up the default configuration");
        return 0;
}

int strv_push(char ***v, char *s)
{
        size_t n = 0;
        while (*v && (*v)[n])
                n++;
        char **nv = reallocarray(*v, n + 2, sizeof(char *));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        nv[n] = s;
        nv[n + 1] = NULL;
        *v = nv;
        return 0;
}

void strv_drop_prefix(char **v, const char *prefix)
{
        size_t n = strlen(prefix), j = 0;
        for (size_t i = 0; v && v[i]; i++) {
                if (strncmp(v[i], prefix, n) == 0)
                        free(v[i]);
                else
                        v[j++] = v[i];
        }
        if (v)
                v[j] = NULL;
}

void strv_clear(char ***v)
{
        strv_freep(v);
        *v = NULL;
}

int config_warn(struct sbx_config *c, const char *fmt, ...)
{
        char *s = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return strv_push(&c->warnings, s);
}

int config_env_put(struct sbx_config *c, const char *key, size_t key_len, const char *value)
{
        char *kv = NULL;
        if (asprintf(&kv, "%.*s=%s", (int)key_len, key, value) < 0)
                return -ENOMEM;
        for (char **p = c->env; p && *p; p++)
                if (strncmp(*p, kv, key_len + 1) == 0) {
                        free(*p);
                        *p = kv;
                        return 0;
                }
        return strv_push(&c->env, kv);
}

static enum sbx_origin *origin_at(struct sbx_config *c, const struct config_key *k)
{
        return k->origin_off ? (enum sbx_origin *)(void *)((char *)c + k->origin_off) : NULL;
}

/* Set earlier in the layer being applied? Flags come one call at a time: for them the origin
 * recorded in the struct is the memory of the layer. */
bool config_seen(const struct sbx_config *c, const struct layer *l, enum config_key_id id)
{
        if (l->origin == SBX_ORIGIN_FLAG) {
                const enum sbx_origin *o =
                    origin_at((struct sbx_config *)c, &config_keys(NULL)[id]);
                return o && *o == SBX_ORIGIN_FLAG;
        }
        return (l->seen >> id) & 1;
}

int config_set(struct sbx_config *c, struct layer *l, const struct config_key *k, const char *value)
{
        int r = k->set(c, l, k, value);
        if (r < 0)
                return r;
        l->seen |= UINT32_C(1) << k->id;
        enum sbx_origin *o = origin_at(c, k);
        if (o)
                *o = l->origin;
        return 0;
}

/* --- errors that name where the value came from --- */

const char *layer_key_name(const struct layer *l, const struct config_key *k, char *buf, size_t n)
{
        if (l->origin == SBX_ORIGIN_FILE)
                snprintf(buf, n, "[%s] %s", k->section, k->key);
        else
                snprintf(buf, n, "%s", l->origin == SBX_ORIGIN_ENV ? k->env : k->flag);
        return buf;
}

int layer_invalid(struct layer *l, const struct config_key *k, const char *value, const char *fmt,
                  ...)
{
        char why[512], name[64];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (l->origin == SBX_ORIGIN_FILE)
                return sbx_usage(l->e, "invalid value '%s' for [%s] %s in %s line %u: %s", value,
                                 k->section, k->key, l->file, l->line, why);
        return sbx_usage(l->e, "invalid %s '%s': %s", layer_key_name(l, k, name, sizeof(name)),
                         value, why);
}

int layer_conflict(struct layer *l, const struct config_key *k, const char *value,
                   const struct config_key *other, const char *other_value, const char *why)
{
        char a[64], b[64];
        layer_key_name(l, k, a, sizeof(a));
        layer_key_name(l, other, b, sizeof(b));
        if (l->origin == SBX_ORIGIN_FILE)
                return sbx_usage(l->e, "%s '%s' conflicts with %s '%s' in %s line %u: %s", a, value,
                                 b, other_value, l->file, l->line, why);
        return sbx_usage(l->e, "%s '%s' conflicts with %s '%s': %s", a, value, b, other_value, why);
}

int layer_oom(struct layer *l)
{
        return sbx_internal(l->e, ENOMEM, "cannot apply the configuration");
}

/* --- the environment and flag layers --- */

int config_load_env(struct sbx_config *c, char *const *envp, struct sbx_error *e)
{
        int r = defaults_ok(c, e);
        if (r < 0)
                return r;
        struct layer l = {.origin = SBX_ORIGIN_ENV, .envp = envp, .e = e};
        size_t n;
        const struct config_key *keys = config_keys(&n);
        for (size_t i = 0; i < n; i++) {
                const char *v = keys[i].env ? env_lookup(envp, keys[i].env) : NULL;
                if (!v || !v[0]) /* empty counts as unset */
                        continue;
                r = config_set(c, &l, &keys[i], v);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int apply_env_flag(struct sbx_config *c, const char *value, struct sbx_error *e)
{
        if (parse_env_assignment(value) < 0)
                return sbx_usage(e,
                                 "invalid --env '%s': expected KEY=VALUE with KEY like MY_VAR "
                                 "([A-Za-z_][A-Za-z0-9_]*)",
                                 value);
        const char *eq = strchr(value, '=');
        if (config_env_put(c, value, (size_t)(eq - value), eq + 1) < 0)
                return sbx_internal(e, ENOMEM, "cannot apply --env");
        return 0;
}

int config_apply_flag(struct sbx_config *c, const char *flag, const char *value,
                      struct sbx_error *e)
{
        int r = defaults_ok(c, e);
        if (r < 0)
                return r;
        bool is_env = strcmp(flag, "--env") == 0;
        const struct config_key *k = is_env ? NULL : config_key_by_flag(flag);
        if (!k && !is_env)
                return sbx_usage(e, "unknown create option '%s'", flag);
        if (!value && (is_env || (k->id != KEY_READ_ONLY && k->id != KEY_STRICT_LIMITS)))
                return sbx_usage(e, "option '%s' needs a value", flag);
        if (is_env)
                return apply_env_flag(c, value, e);
        struct layer l = {.origin = SBX_ORIGIN_FLAG, .envp = environ, .e = e};
        return config_set(c, &l, k, value);
}

/* --- all layers --- */

/* ${XDG_CONFIG_HOME:-$HOME/.config}/sbx/sandbox.ini; NULL without a home (or on ENOMEM). */
static char *user_config_path(char *const *envp)
{
        const char *xdg = env_lookup(envp, "XDG_CONFIG_HOME");
        char *path = NULL;
        if (xdg && xdg[0] == '/') /* the XDG spec: a relative value is ignored */
                return asprintf(&path, "%s/sbx/sandbox.ini", xdg) < 0 ? NULL : path;
        _cleanup_free_ char *home = home_dir(envp);
        if (!home)
                return NULL;
        return asprintf(&path, "%s/.config/sbx/sandbox.ini", home) < 0 ? NULL : path;
}

int config_load_from(struct sbx_config *c, const char *system_file, const char *explicit_file,
                     char *const *envp, struct sbx_error *e)
{
        int r = defaults_ok(c, e);
        if (r < 0)
                return r;
        if (system_file && (r = config_load_ini(c, system_file, true, NULL, envp, e)) < 0)
                return r;
        _cleanup_free_ char *user = user_config_path(envp);
        if (user && (r = config_load_ini(c, user, true, NULL, envp, e)) < 0)
                return r;
        const char *sbx_config = env_lookup(envp, "SBX_CONFIG");
        if (sbx_config && sbx_config[0] &&
            (r = config_load_ini(c, sbx_config, false, "$SBX_CONFIG", envp, e)) < 0)
                return r;
        if (explicit_file &&
            (r = config_load_ini(c, explicit_file, false, "--config", envp, e)) < 0)
                return r;
        return config_load_env(c, envp, e);
}

int config_load(struct sbx_config *c, const char *explicit_file, struct sbx_error *e)
{
        return config_load_from(c, SYSTEM_CONFIG_FILE, explicit_file, environ, e);
}

int config_load_file(struct sbx_config *c, const char *path, struct sbx_error *e)
{
        int r = defaults_ok(c, e);
        if (r < 0)
                return r;
        return config_load_ini(c, path, false, NULL, environ, e);
}
