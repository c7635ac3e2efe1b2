/* SPDX-License-Identifier: MIT */
/*
 * The option table: each create option with its ini section/key, its SBX_* variable and its
 * flag, in one place (sandbox.ini.example, the man page and the completions are checked
 * against it), and the setter that validates and stores a value.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config-internal.h"
#include "shared/ident.h"

static uint64_t *u64_at(struct sbx_config *c, const struct config_key *k)
{
        return (uint64_t *)(void *)((char *)c + k->value_off);
}

/* Durations, sizes and counts: parse, then check [min, max]. */
static int set_number(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v, int (*parse)(const char *, uint64_t *))
{
        uint64_t x = 0;
        int r = parse(v, &x);
        if (r == -EINVAL)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        /* a value past 64 bits, where the range only names a minimum, is too large, not small */
        if (r == -ERANGE && k->max == UINT64_MAX)
                return layer_invalid(l, k, v, "too large");
        if (r < 0 || x < k->min || x > k->max)
                return layer_invalid(l, k, v, "%s", k->range);
        *u64_at(c, k) = x;
        return 0;
}

static int set_duration(struct sbx_config *c, struct layer *l, const struct config_key *k,
                        const char *v)
{
        return set_number(c, l, k, v, parse_duration);
}

static int set_size(struct sbx_config *c, struct layer *l, const struct config_key *k,
                    const char *v)
{
        return set_number(c, l, k, v, parse_size);
}

static int set_count(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *v)
{
        return set_number(c, l, k, v, parse_uint);
}

/*
 * [limits] memory, cpus and pids: "unlimited" asks for no limit at all (stored as 0, which no
 * number can give: their minimum is above 0). Any other value is a number as usual.
 */
static int set_limit(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *v, int (*parse)(const char *, uint64_t *))
{
        if (strcmp(v, "unlimited") == 0) {
                *u64_at(c, k) = 0;
                return 0;
        }
        return set_number(c, l, k, v, parse);
}

static int set_memory(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        return set_limit(c, l, k, v, parse_size);
}

static int set_cpus(struct sbx_config *c, struct layer *l, const struct config_key *k,
                    const char *v)
{
        return set_limit(c, l, k, v, parse_cpus);
}

static int set_pids(struct sbx_config *c, struct layer *l, const struct config_key *k,
                    const char *v)
{
        return set_limit(c, l, k, v, parse_uint);
}

/* Replace *field with a copy of v, or with NULL when v is NULL. */
static int set_str(struct layer *l, char **field, const char *v)
{
        char *copy = NULL;
        if (v && !(copy = strdup(v)))
                return layer_oom(l);
        free(*field);
        *field = copy;
        return 0;
}

/* In a file "key =" (empty) resets an optional value; elsewhere an empty value is invalid. */
static bool file_reset(const struct layer *l, const char *v)
{
        return l->origin == SBX_ORIGIN_FILE && v[0] == '\0';
}

static int set_name(struct sbx_config *c, struct layer *l, const struct config_key *k,
                    const char *v)
{
        if (!session_name_valid(v))
                return sbx_usage(l->e, "invalid session name '%s': use [a-z0-9][a-z0-9_.-]{0,62}",
                                 v);
        (void)k;
        return set_str(l, &c->name, v);
}

static int set_rootfs(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        _cleanup_free_ char *norm = NULL;
        if (strcmp(v, "host") != 0) {
                int r = path_normalize(v, &norm);
                if (r == -ENOMEM)
                        return layer_oom(l);
                if (r < 0)
                        return layer_invalid(l, k, v, "expected %s", k->expected);
                if (strcmp(norm, "/") == 0)
                        return layer_invalid(l, k, v,
                                             "'/' would give the sandbox the whole host; 'host' "
                                             "is the host's /usr with a generated /etc");
        }
        if (c->image) {
                const struct config_key *img = &config_keys(NULL)[KEY_IMAGE];
                if (config_seen(c, l, KEY_IMAGE))
                        return layer_conflict(l, k, v, img, c->image,
                                              "the base is either a rootfs or an image");
                set_str(l, &c->image, NULL); /* a lower layer's image: this layer wins */
                c->image_origin = SBX_ORIGIN_DEFAULT;
        }
        return set_str(l, &c->rootfs, norm ? norm : v);
}

static int set_image(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *v)
{
        if (file_reset(l, v))
                return set_str(l, &c->image, NULL);
        const char *why = image_name_check(v);
        if (why)
                return layer_invalid(l, k, v, "%s", why);
        if (config_seen(c, l, KEY_ROOTFS))
                return layer_conflict(l, k, v, &config_keys(NULL)[KEY_ROOTFS], c->rootfs,
                                      "the base is either a rootfs or an image");
        int r = set_str(l, &c->rootfs, "host"); /* a lower layer's rootfs: this layer wins */
        if (r < 0)
                return r;
        c->rootfs_origin = SBX_ORIGIN_DEFAULT;
        return set_str(l, &c->image, v);
}

static int set_setup(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *v)
{
        (void)k;
        return set_str(l, &c->setup, file_reset(l, v) ? NULL : v);
}

static int set_read_only(struct sbx_config *c, struct layer *l, const struct config_key *k,
                         const char *v)
{
        if (!v) { /* --read-only */
                c->read_only = true;
                return 0;
        }
        if (parse_bool(v, &c->read_only) < 0)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        return 0;
}

static int set_strict_limits(struct sbx_config *c, struct layer *l, const struct config_key *k,
                             const char *v)
{
        if (!v) { /* --strict-limits */
                c->strict_limits = true;
                return 0;
        }
        if (parse_bool(v, &c->strict_limits) < 0)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        return 0;
}

/* An absolute path, stored normalised; optional resets it to NULL in a file. */
static int set_path(struct layer *l, const struct config_key *k, const char *v, char **field,
                    bool optional)
{
        if (optional && file_reset(l, v))
                return set_str(l, field, NULL);
        _cleanup_free_ char *norm = NULL;
        int r = path_normalize(v, &norm);
        if (r == -ENOMEM)
                return layer_oom(l);
        if (r < 0)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        free(*field);
        *field = TAKE_PTR(norm);
        return 0;
}

static int set_workdir(struct sbx_config *c, struct layer *l, const struct config_key *k,
                       const char *v)
{
        return set_path(l, k, v, &c->workdir, false);
}

static int set_audit_dir(struct sbx_config *c, struct layer *l, const struct config_key *k,
                         const char *v)
{
        return set_path(l, k, v, &c->audit_dir, true);
}

static int set_hostname(struct sbx_config *c, struct layer *l, const struct config_key *k,
                        const char *v)
{
        if (!hostname_valid(v))
                return layer_invalid(l, k, v, "expected %s", k->expected);
        return set_str(l, &c->hostname, v);
}

static int set_net(struct sbx_config *c, struct layer *l, const struct config_key *k, const char *v)
{
        static const char *const names[] = {
            [SBX_NET_NONE] = "none", [SBX_NET_HOST] = "host", [SBX_NET_PROXY] = "proxy"};
        size_t m = 0;
        while (m < ARRAY_SIZE(names) && strcasecmp(v, names[m]) != 0)
                m++;
        if (m == ARRAY_SIZE(names))
                return layer_invalid(l, k, v, "expected %s", k->expected);
        if (m != SBX_NET_PROXY && c->allow_hosts && c->allow_hosts[0]) {
                if (config_seen(c, l, KEY_ALLOW))
                        return layer_conflict(l, k, v, &config_keys(NULL)[KEY_ALLOW],
                                              c->allow_hosts[0],
                                              "allowed hosts need network mode 'proxy'");
                strv_clear(&c->allow_hosts); /* a lower layer's list: this layer wins */
        }
        c->net = (enum sbx_net_mode)m;
        return 0;
}

static int set_seccomp(struct sbx_config *c, struct layer *l, const struct config_key *k,
                       const char *v)
{
        static const char *const names[] = {[SBX_SECCOMP_DEFAULT] = "default",
                                            [SBX_SECCOMP_STRICT] = "strict",
                                            [SBX_SECCOMP_UNCONFINED] = "unconfined"};
        for (size_t p = 0; p < ARRAY_SIZE(names); p++)
                if (strcasecmp(v, names[p]) == 0) {
                        c->seccomp = (enum sbx_seccomp_profile)p;
                        return 0;
                }
        return layer_invalid(l, k, v, "expected %s", k->expected);
}

static int set_uid_range(struct sbx_config *c, struct layer *l, const struct config_key *k,
                         const char *v)
{
        if (strcasecmp(v, "pick") == 0) {
                c->uid_range_pick = true;
                c->uid_range_start = 0;
                c->uid_range_count = 65536;
                return 0;
        }
        c->uid_range_pick = false;
        int r = parse_uid_range(v, &c->uid_range_start, &c->uid_range_count);
        if (r == -EINVAL)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        if (r < 0)
                return layer_invalid(l, k, v, "%s", k->range);
        return 0;
}

/* --- lists --- */

/* Comma-separated items, blanks around them trimmed, empty ones skipped; from a flag, the one
 * value is one item unless split_flag. Returns the number of items added or -errno. */
int for_each_item(struct sbx_config *c, struct layer *l, const struct config_key *k, const char *v,
                  bool split_flag, item_adder add)
{
        if (l->origin == SBX_ORIGIN_FLAG && !split_flag) {
                int r = add(c, l, k, v);
                return r < 0 ? r : 1;
        }
        _cleanup_free_ char *copy = strdup(v);
        if (!copy)
                return layer_oom(l);
        int n = 0;
        char *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                while (isspace((unsigned char)*t))
                        t++;
                size_t len = strlen(t);
                while (len > 0 && isspace((unsigned char)t[len - 1]))
                        t[--len] = '\0';
                if (len == 0)
                        continue;
                int r = add(c, l, k, t);
                if (r < 0)
                        return r;
                n++;
        }
        if (n == 0 && l->origin != SBX_ORIGIN_FILE)
                return layer_invalid(l, k, v, "expected %s", k->expected);
        return n;
}

static int add_package(struct sbx_config *c, struct layer *l, const struct config_key *k,
                       const char *item)
{
        const char *why = package_check(item);
        if (why)
                return layer_invalid(l, k, item, "%s", why);
        char *copy = strdup(item);
        return copy && strv_push(&c->packages, copy) >= 0 ? 0 : layer_oom(l);
}

static int set_packages(struct sbx_config *c, struct layer *l, const struct config_key *k,
                        const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->packages);
        int r = for_each_item(c, l, k, v, false, add_package);
        return r < 0 ? r : 0;
}

static int add_allow(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *item)
{
        char *norm = NULL;
        const char *why = allow_entry_check(item, &norm);
        if (why)
                return layer_invalid(l, k, item, "%s", why);
        for (char **p = c->allow_hosts; p && *p; p++)
                if (strcmp(*p, norm) == 0) {
                        free(norm);
                        return 0;
                }
        return strv_push(&c->allow_hosts, norm) >= 0 ? 0 : layer_oom(l);
}

/* Allowed hosts imply proxy mode; with none or host set in the same layer they conflict. */
static int set_allow(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *v)
{
        if (!config_seen(c, l, k->id))
                strv_clear(&c->allow_hosts);
        int r = for_each_item(c, l, k, v, true, add_allow);
        if (r <= 0 || c->net == SBX_NET_PROXY)
                return r;
        if (config_seen(c, l, KEY_NET))
                return layer_conflict(l, k, v, &config_keys(NULL)[KEY_NET], net_mode_name(c->net),
                                      "allowed hosts need network mode 'proxy'");
        c->net = SBX_NET_PROXY;
        c->net_origin = l->origin;
        return 0;
}

#define MOUNT_SKIPPED "volume host path "

static void mount_clear(struct sbx_mount *m)
{
        free(m->host);
        free(m->sandbox);
        *m = (struct sbx_mount){0};
}

static int add_mount(struct sbx_config *c, struct layer *l, const struct config_key *k,
                     const char *item)
{
        _cleanup_free_ char *home = item[0] == '~' ? home_dir(l->envp) : NULL;
        _cleanup_(mount_clear) struct sbx_mount m = {0};
        const char *why = NULL;
        int r = mount_parse(item, home, &m, &why);
        if (r == -ENOMEM)
                return layer_oom(l);
        if (r < 0)
                return layer_invalid(l, k, item, "%s", why);
        for (size_t i = 0; i < c->n_mounts; i++)
                if (strcmp(c->mounts[i].sandbox, m.sandbox) == 0)
                        return layer_invalid(l, k, item, "'%s' is already a mount target",
                                             m.sandbox);
        struct stat st;
        if (stat(m.host, &st) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
                r = config_warn(c, MOUNT_SKIPPED "'%s' does not exist: skipped", m.host);
                return r < 0 ? layer_oom(l) : 0;
        }
        struct sbx_mount *n = reallocarray(c->mounts, c->n_mounts + 1, sizeof(*n));
        if (!n)
                return layer_oom(l);
        c->mounts = n;
        c->mounts[c->n_mounts++] = m;
        m = (struct sbx_mount){0};
        return 0;
}

static int set_mounts(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v)
{
        if (!config_seen(c, l, k->id)) {
                /* the mounts of a lower layer, and the warnings about the ones it skipped */
                config_mounts_clear(c);
                strv_drop_prefix(c->warnings, MOUNT_SKIPPED);
        }
        int r = for_each_item(c, l, k, v, false, add_mount);
        return r < 0 ? r : 0;
}

void config_mounts_clear(struct sbx_config *c)
{
        for (size_t i = 0; i < c->n_mounts; i++)
                mount_clear(&c->mounts[i]);
        free(c->mounts);
        c->mounts = NULL;
        c->n_mounts = 0;
}

/* --- the table --- */

#define NUM(field) .value_off = offsetof(struct sbx_config, field)
#define ORIGIN(field) .origin_off = offsetof(struct sbx_config, field)
#define KB UINT64_C(1024)

_Static_assert(KEY__MAX <= 32, "struct layer has one bit of 'seen' per key");

static const struct config_key keys[KEY__MAX] = {
    [KEY_NAME] = {KEY_NAME, NULL, NULL, NULL, "--name", .set = set_name},
    [KEY_TTL] = {KEY_TTL, "sandbox", "ttl", "SBX_TTL", "--ttl", .set = set_duration, NUM(ttl_sec),
                 .min = 0, .max = UINT32_MAX,
                 .expected = "a duration like 30m (seconds, or an s/m/h suffix; 0 = until "
                             "destroyed)",
                 .range = "too long (at most 4294967295 seconds)"},
    [KEY_TIMEOUT] = {KEY_TIMEOUT, "sandbox", "timeout", "SBX_TIMEOUT", "--timeout",
                     .set = set_duration, NUM(timeout_sec), .min = 1, .max = UINT32_MAX,
                     .expected = "a duration like 1800s (seconds, or an s/m/h suffix)",
                     .range = "must be from 1s to 4294967295s"},
    [KEY_ROOTFS] = {KEY_ROOTFS, "sandbox", "rootfs", "SBX_ROOTFS", "--rootfs", .set = set_rootfs,
                    ORIGIN(rootfs_origin), .expected = "'host' or an absolute path without '..'"},
    [KEY_IMAGE] = {KEY_IMAGE, "sandbox", "image", "SBX_IMAGE", "--image", .set = set_image,
                   ORIGIN(image_origin)},
    [KEY_PACKAGES] = {KEY_PACKAGES, "sandbox", "packages", "SBX_PACKAGES", "--package",
                      .list = true, .free_text = true, .set = set_packages, ORIGIN(packages_origin),
                      .expected = "a pip package like numpy"},
    [KEY_SETUP] = {KEY_SETUP, "sandbox", "setup", "SBX_SETUP", NULL, .free_text = true,
                   .set = set_setup},
    [KEY_READ_ONLY] = {KEY_READ_ONLY, "sandbox", "read_only", "SBX_READ_ONLY", "--read-only",
                       .set = set_read_only,
                       .expected = "true or false (also yes/no, on/off, 1/0)"},
    [KEY_WORKDIR] = {KEY_WORKDIR, "sandbox", "workdir", "SBX_WORKDIR", "--workdir",
                     .set = set_workdir, ORIGIN(workdir_origin),
                     .expected = "an absolute path without '..'"},
    [KEY_HOSTNAME] = {KEY_HOSTNAME, "sandbox", "hostname", "SBX_HOSTNAME", "--hostname",
                      .set = set_hostname,
                      .expected = "a host name like sandbox (labels of letters, digits and "
                                  "'-', at most 63 characters each, 64 in all)"},
    [KEY_MOUNTS] = {KEY_MOUNTS, "sandbox", "mounts", "SBX_VOLUME_MOUNTS", "--mount", .list = true,
                    .set = set_mounts, ORIGIN(mounts_origin),
                    .expected = "HOST:SANDBOX[:ro] like ~/src:/workspace/src:ro"},
    [KEY_MEMORY] = {KEY_MEMORY, "limits", "memory", "SBX_MEMORY", "--memory", .set = set_memory,
                    NUM(memory_bytes), ORIGIN(memory_origin), .min = 4 * KB * KB, .max = UINT64_MAX,
                    .expected = "a size like 512M, or unlimited",
                    .range = "must be at least 4M (or unlimited)"},
    [KEY_CPUS] = {KEY_CPUS, "limits", "cpus", "SBX_CPUS", "--cpus", .set = set_cpus,
                  NUM(cpus_milli), ORIGIN(cpus_origin), .min = 1, .max = 1024000,
                  .expected = "a number of CPUs like 0.5 or 2 (at most 3 decimals), or "
                              "unlimited",
                  .range = "must be more than 0 and at most 1024 (or unlimited)"},
    [KEY_PIDS] = {KEY_PIDS, "limits", "pids", "SBX_PIDS", "--pids", .set = set_pids, NUM(pids),
                  ORIGIN(pids_origin), .min = 1, .max = 4194304,
                  .expected = "a whole number like 256, or unlimited",
                  .range = "must be from 1 to 4194304 (or unlimited)"},
    [KEY_DISK] = {KEY_DISK, "limits", "disk", "SBX_DISK", "--disk", .set = set_size,
                  NUM(disk_bytes), ORIGIN(disk_origin), .min = KB * KB, .max = UINT64_MAX,
                  .expected = "a size like 1G", .range = "must be at least 1M"},
    [KEY_NOFILE] = {KEY_NOFILE, "limits", "nofile", "SBX_NOFILE", "--nofile", .set = set_count,
                    NUM(nofile), ORIGIN(nofile_origin), .min = 16, .max = 1048576,
                    .expected = "a whole number like 1024", .range = "must be from 16 to 1048576"},
    [KEY_PTYS] = {KEY_PTYS, "limits", "ptys", "SBX_PTYS", "--ptys", .set = set_count, NUM(ptys),
                  ORIGIN(ptys_origin), .min = 1, .max = 4096, .expected = "a whole number like 64",
                  .range = "must be from 1 to 4096"},
    [KEY_STRICT_LIMITS] = {KEY_STRICT_LIMITS, "limits", "strict", "SBX_STRICT_LIMITS",
                           "--strict-limits", .set = set_strict_limits,
                           .expected = "true or false (also yes/no, on/off, 1/0)"},
    [KEY_NET] = {KEY_NET, "network", "mode", "SBX_NET", "--net", .set = set_net, ORIGIN(net_origin),
                 .expected = "none, host or proxy"},
    [KEY_ALLOW] = {KEY_ALLOW, "network", "allow", "SBX_ALLOW_HOSTS", "--allow-host", .list = true,
                   .set = set_allow, ORIGIN(allow_origin),
                   .expected = "a host like pypi.org, *.example.com:443, 10.0.0.0/8 or "
                               "[::1]:8080"},
    [KEY_SECCOMP] = {KEY_SECCOMP, "security", "seccomp", "SBX_SECCOMP", "--seccomp",
                     .set = set_seccomp, .expected = "default, strict or unconfined"},
    [KEY_UID_RANGE] = {KEY_UID_RANGE, "security", "uid_range", "SBX_UID_RANGE", NULL,
                       .set = set_uid_range,
                       .expected = "pick, or START:COUNT like 2000000000:65536",
                       .range = "START and COUNT must be at least 1 and START + COUNT at "
                                "most 4294967295"},
    [KEY_AUDIT_DIR] = {KEY_AUDIT_DIR, "audit", "dir", "SBX_AUDIT_DIR", NULL, .set = set_audit_dir,
                       .expected = "an absolute path without '..'"},
    [KEY_IMAGE_PULL] = {KEY_IMAGE_PULL, "images", "pull", "SBX_IMAGE_PULL", NULL,
                        .set = set_image_pull, .expected = "missing or never"},
    [KEY_INSECURE_REGISTRIES] = {KEY_INSECURE_REGISTRIES, "images", "insecure_registries",
                                 "SBX_INSECURE_REGISTRIES", NULL, .list = true,
                                 .set = set_insecure_registries,
                                 .expected = "a registry HOST[:PORT] like 127.0.0.1:5000"},
    [KEY_SERVE_NETWORK] = {KEY_SERVE_NETWORK, "serve", "network", "SBX_SERVE_NETWORK", NULL,
                           .set = set_serve_network, .expected = "none or host"},
    [KEY_SERVE_HOST_IMAGES] = {KEY_SERVE_HOST_IMAGES, "serve", "host_images",
                               "SBX_SERVE_HOST_IMAGES", NULL, .list = true,
                               .set = set_serve_host_images,
                               .expected = "an image uri like python:3.11, or *"},
    [KEY_SERVE_VOLUME_ROOTS] = {KEY_SERVE_VOLUME_ROOTS, "serve", "volume_roots",
                                "SBX_SERVE_VOLUME_ROOTS", NULL, .list = true,
                                .set = set_serve_volume_roots,
                                .expected = "an absolute path without '..'"},
    [KEY_SERVE_MAX_UPLOAD] = {KEY_SERVE_MAX_UPLOAD, "serve", "max_upload", "SBX_SERVE_MAX_UPLOAD",
                              NULL, .set = set_size, NUM(serve_max_upload), .min = 1,
                              .max = UINT64_MAX, .expected = "a size like 256M",
                              .range = "must be at least 1 byte"},
    [KEY_PACKAGE_INDEX] = {KEY_PACKAGE_INDEX, "packages", "index_url", "SBX_PACKAGE_INDEX_URL",
                           NULL, .free_text = true, .set = set_package_index,
                           .expected = "an index URL like https://pypi.org/simple"},
    [KEY_PACKAGE_HOSTS] = {KEY_PACKAGE_HOSTS, "packages", "hosts", "SBX_PACKAGE_HOSTS", NULL,
                           .list = true, .set = set_package_hosts,
                           .expected = "a host like files.example.com or 10.0.0.5:3141"},
};

const struct config_key *config_keys(size_t *ret_n)
{
        if (ret_n)
                *ret_n = ARRAY_SIZE(keys);
        return keys;
}

const struct config_key *config_key_by_ini(const char *section, const char *key)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (keys[i].section && strcmp(keys[i].section, section) == 0 &&
                    strcmp(keys[i].key, key) == 0)
                        return &keys[i];
        return NULL;
}

const struct config_key *config_key_by_flag(const char *flag)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (keys[i].flag && strcmp(keys[i].flag, flag) == 0)
                        return &keys[i];
        return NULL;
}

bool config_section_known(const char *section)
{
        if (strcmp(section, "env") == 0)
                return true;
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (keys[i].section && strcmp(keys[i].section, section) == 0)
                        return true;
        return false;
}
