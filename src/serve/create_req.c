/* SPDX-License-Identifier: MIT */
/*
 * CreateSandboxRequest -> `sbx create --json ...`. Each field maps onto a create flag, so the
 * session is made, limited and audited exactly as the CLI's; what has no sbx equivalent is
 * refused with the reason (400), so that nothing asked for is silently dropped.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "create_req.h"

#define DEFAULT_ENTRYPOINT_0 "tail"

static int refuse(char *why, size_t n, const char *fmt, ...) _printf_(3, 4);
static int refuse(char *why, size_t n, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(why, n, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static json_object *field(json_object *o, const char *key)
{
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null)
                   ? v
                   : NULL;
}

/* "500m" -> 500, "2" -> 2000, "0.25" -> 250 (CPU in thousandths). */
static int parse_cpu(const char *s, unsigned long long *ret)
{
        char *end;
        size_t len = strlen(s);
        if (len > 0 && s[len - 1] == 'm') {
                unsigned long long m = strtoull(s, &end, 10);
                if (end != s + len - 1 || end == s || m == 0)
                        return -EINVAL;
                *ret = m;
                return 0;
        }
        unsigned long long whole = strtoull(s, &end, 10), frac = 0;
        if (end == s && *end != '.')
                return -EINVAL;
        if (*end == '.') {
                const char *f = end + 1;
                size_t k = strspn(f, "0123456789");
                if (k == 0 || k > 3 || f[k])
                        return -EINVAL;
                char d[4] = "000";
                memcpy(d, f, k);
                frac = strtoull(d, NULL, 10);
        } else if (*end) {
                return -EINVAL;
        }
        if (whole > 1000000 || (whole == 0 && frac == 0))
                return -EINVAL;
        *ret = whole * 1000 + frac;
        return 0;
}

/* Kubernetes quantities: "512Mi", "2Gi" (powers of 1024), "1G", "500M" (of 1000), bytes. */
static int parse_quantity(const char *s, unsigned long long *ret)
{
        static const struct {
                const char *suffix;
                unsigned long long mul;
        } units[] = {{"Ki", 1ULL << 10},      {"Mi", 1ULL << 20},
                     {"Gi", 1ULL << 30},      {"Ti", 1ULL << 40},
                     {"k", 1000ULL},          {"K", 1000ULL},
                     {"M", 1000000ULL},       {"G", 1000000000ULL},
                     {"T", 1000000000000ULL}, {"", 1}};
        char *end;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        unsigned long long v = strtoull(s, &end, 10);
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcmp(end, units[i].suffix) != 0)
                        continue;
                if (v == 0 || v > ULLONG_MAX / units[i].mul)
                        return -EINVAL;
                *ret = v * units[i].mul;
                return 0;
        }
        return -EINVAL;
}

static int map_limits(json_object *lim, struct serve_argv *a, char *why, size_t n)
{
        if (!json_object_is_type(lim, json_type_object))
                return refuse(why, n, "resourceLimits must be an object of strings");
        json_object_object_foreach(lim, key, val)
        {
                if (!json_object_is_type(val, json_type_string))
                        return refuse(why, n, "resourceLimits.%s must be a string", key);
                const char *s = json_object_get_string(val);
                unsigned long long x;
                if (strcmp(key, "cpu") == 0) {
                        if (parse_cpu(s, &x) < 0)
                                return refuse(why, n,
                                              "invalid resourceLimits.cpu '%s': expected "
                                              "a CPU quantity like 500m or 2",
                                              s);
                        serve_argv_add(a, "--cpus=%llu.%03llu", x / 1000, x % 1000);
                } else if (strcmp(key, "memory") == 0 || strcmp(key, "ephemeral-storage") == 0) {
                        if (parse_quantity(s, &x) < 0)
                                return refuse(why, n,
                                              "invalid resourceLimits.%s '%s': expected "
                                              "a quantity like 512Mi or 2Gi",
                                              key, s);
                        serve_argv_add(a, "--%s=%llu", key[0] == 'm' ? "memory" : "disk", x);
                } else if (strcmp(key, "pids") == 0) {
                        char *end;
                        x = strtoull(s, &end, 10);
                        if (*s < '0' || *s > '9' || *end)
                                return refuse(why, n, "invalid resourceLimits.pids '%s'", s);
                        serve_argv_add(a, "--pids=%llu", x);
                } else if (strcmp(key, "gpu") == 0 && strcmp(s, "0") == 0) {
                        continue;
                } else {
                        return refuse(why, n,
                                      "resourceLimits.%s is not a limit sbx enforces "
                                      "(cpu, memory, ephemeral-storage, pids)",
                                      key);
                }
        }
        return 0;
}

static bool path_has_dotdot(const char *p)
{
        for (const char *s = p; (s = strstr(s, "..")); s += 2)
                if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
                        return true;
        return false;
}

/* real is under one of the roots (each resolved too): a symlink cannot lead out of them. */
static bool under_root(char **roots, const char *real)
{
        for (size_t i = 0; roots && roots[i]; i++) {
                char root[PATH_MAX];
                if (!realpath(roots[i], root))
                        continue;
                size_t k = strlen(root);
                if (strncmp(real, root, k) == 0 &&
                    (real[k] == '\0' || real[k] == '/' || (k == 1 && root[0] == '/')))
                        return true;
        }
        return false;
}

/*
 * The check above is on a path, and the sbx create that mounts it resolves the path again:
 * whoever can rename or replace an entry on the way in between (a sandbox writing its own
 * volume, another user) could swap in a symlink to any directory. So every directory in
 * which a component of real is looked up must be root's or serve's own user's, and one
 * that others may write must be sticky with the entry root's or ours: then only root and
 * serve's user can change what real names before it is mounted.
 */
static bool path_stable(const char *real)
{
        uid_t me = geteuid();
        char parent[PATH_MAX] = "/", child[PATH_MAX];
        const char *p = real;
        while (*p == '/')
                p++;
        while (*p) {
                size_t k = strcspn(p, "/");
                int w = snprintf(child, sizeof(child), "%s%s%.*s", parent,
                                 strcmp(parent, "/") == 0 ? "" : "/", (int)k, p);
                if (w < 0 || (size_t)w >= sizeof(child))
                        return false;
                struct stat ds, cs;
                if (lstat(parent, &ds) < 0 || lstat(child, &cs) < 0)
                        return false;
                if (ds.st_uid != 0 && ds.st_uid != me)
                        return false;
                bool shared = ds.st_mode & (S_IWGRP | S_IWOTH);
                if (shared && !((ds.st_mode & S_ISVTX) && (cs.st_uid == 0 || cs.st_uid == me)))
                        return false;
                memcpy(parent, child, (size_t)w + 1);
                p += k;
                while (*p == '/')
                        p++;
        }
        return true;
}

static int map_volume(const struct serve_policy *p, json_object *v, struct serve_argv *a, char *why,
                      size_t n)
{
        json_object *host = field(v, "host"), *mp = field(v, "mountPath");
        json_object *sub = field(v, "subPath"), *ro = field(v, "readOnly");
        if (field(v, "pvc") || field(v, "ossfs") || !host)
                return refuse(why, n, "sbx mounts host volumes only (volume 'host')");
        json_object *hp = field(host, "path");
        if (!hp || !json_object_is_type(hp, json_type_string) || !mp ||
            !json_object_is_type(mp, json_type_string))
                return refuse(why, n, "a volume needs host.path and mountPath strings");
        const char *path = json_object_get_string(hp), *target = json_object_get_string(mp);
        const char *subpath = sub ? json_object_get_string(sub) : "";
        if (path[0] != '/' || target[0] != '/' || subpath[0] == '/' || path_has_dotdot(path) ||
            path_has_dotdot(target) || path_has_dotdot(subpath) || strpbrk(path, ":,") ||
            strpbrk(target, ":,") || strpbrk(subpath, ":,"))
                return refuse(why, n,
                              "invalid volume: host.path and mountPath must be absolute, "
                              "subPath relative, none with '..', ':' or ','");
        char full[PATH_MAX], real[PATH_MAX];
        if (snprintf(full, sizeof(full), "%s/%s", path, subpath) >= (int)sizeof(full))
                return refuse(why, n, "volume path too long");
        if (!realpath(full, real))
                return refuse(why, n, "volume host path '%s' does not exist", full);
        if (!under_root(p->volume_roots, real))
                return refuse(why, n,
                              "volume host path '%s' is not under a directory allowed "
                              "by [serve] volume_roots",
                              full);
        if (!path_stable(real))
                return refuse(why, n,
                              "volume host path '%s' is reached through a directory that "
                              "another user (or a sandbox's volume) can change: use a path "
                              "whose directories only root or serve's user can write",
                              full);
        serve_argv_add(a, "--mount=%s:%s%s", real, target,
                       ro && json_object_get_boolean(ro) ? ":ro" : "");
        return 0;
}

static int map_volumes(const struct serve_policy *p, json_object *vols, struct serve_argv *a,
                       char *why, size_t n)
{
        if (!json_object_is_type(vols, json_type_array))
                return refuse(why, n, "volumes must be an array");
        for (size_t i = 0; i < json_object_array_length(vols); i++) {
                int r = map_volume(p, json_object_array_get_idx(vols, i), a, why, n);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* OpenSandbox: no policy = all egress allowed; sbx: no network unless the operator set
 * [serve] network = host. A deny default with allow rules is sbx's allow list. */
static int map_network(const struct serve_policy *p, json_object *np, struct serve_argv *a,
                       char *why, size_t n)
{
        json_object *def = np ? field(np, "defaultAction") : NULL;
        json_object *rules = np ? field(np, "egress") : NULL;
        size_t n_rules = rules && json_object_is_type(rules, json_type_array)
                             ? json_object_array_length(rules)
                             : 0;
        if (rules && !json_object_is_type(rules, json_type_array))
                return refuse(why, n, "networkPolicy.egress must be an array");
        const char *action = def ? json_object_get_string(def) : NULL;
        if (action && strcmp(action, "allow") != 0 && strcmp(action, "deny") != 0)
                return refuse(why, n, "networkPolicy.defaultAction must be allow or deny");
        bool allow_all =
            (!np || (!def && n_rules == 0)) ? true : (action && strcmp(action, "allow") == 0);
        if (allow_all) {
                for (size_t i = 0; i < n_rules; i++) {
                        json_object *act = field(json_object_array_get_idx(rules, i), "action");
                        if (act && strcmp(json_object_get_string(act), "deny") == 0)
                                return refuse(why, n,
                                              "sbx enforces allow lists only: a deny "
                                              "rule under defaultAction allow cannot be "
                                              "honoured");
                }
                if (!np && !p->allow_all_egress) {
                        serve_argv_add(a, "--net=none");
                        return 0;
                }
                if (!p->allow_all_egress)
                        return refuse(why, n,
                                      "egress to everywhere needs [serve] network = host "
                                      "on this server; send defaultAction deny with "
                                      "allow rules instead");
                serve_argv_add(a, "--net=host");
                return 0;
        }
        size_t allowed = 0;
        for (size_t i = 0; i < n_rules; i++) {
                json_object *r = json_object_array_get_idx(rules, i);
                json_object *act = field(r, "action"), *target = field(r, "target");
                if (!act || !target || !json_object_is_type(target, json_type_string))
                        return refuse(why, n, "each egress rule needs action and target");
                if (strcmp(json_object_get_string(act), "allow") != 0)
                        continue; /* a deny under a deny default changes nothing */
                serve_argv_add(a, "--allow-host=%s", json_object_get_string(target));
                allowed++;
        }
        if (allowed == 0)
                serve_argv_add(a, "--net=none");
        return 0;
}

static int map_image(const struct serve_policy *p, json_object *req, struct create_plan *out,
                     char *why, size_t n)
{
        if (field(req, "snapshotId"))
                return refuse(why, n, "sbx has no snapshots: create from an image");
        json_object *img = field(req, "image");
        json_object *uri = img ? field(img, "uri") : NULL;
        if (!uri || !json_object_is_type(uri, json_type_string) || !*json_object_get_string(uri))
                return refuse(why, n, "image.uri is required");
        if (field(img, "auth"))
                return refuse(why, n, "registry credentials (image.auth) are not supported");
        out->image_uri = json_object_get_string(uri);
        for (size_t i = 0; p->host_images && p->host_images[i]; i++)
                if (strcmp(p->host_images[i], "*") == 0 ||
                    strcmp(p->host_images[i], out->image_uri) == 0) {
                        serve_argv_add(&out->argv, "--rootfs=host");
                        return 0;
                }
        serve_argv_add(&out->argv, "--image=%s", out->image_uri);
        return 0;
}

static int map_platform(json_object *req, char *why, size_t n)
{
        json_object *pf = field(req, "platform");
        if (!pf)
                return 0;
        json_object *os = field(pf, "os"), *arch = field(pf, "arch");
        struct utsname u;
        uname(&u);
        const char *mine = strcmp(u.machine, "x86_64") == 0    ? "amd64"
                           : strcmp(u.machine, "aarch64") == 0 ? "arm64"
                                                               : u.machine;
        if ((os && strcmp(json_object_get_string(os), "linux") != 0) ||
            (arch && strcmp(json_object_get_string(arch), mine) != 0))
                return refuse(why, n, "this server runs linux/%s sandboxes only", mine);
        return 0;
}

static int map_entrypoint(json_object *req, struct create_plan *out, char *why, size_t n)
{
        json_object *ep = field(req, "entrypoint");
        if (!ep)
                return 0;
        size_t k = json_object_is_type(ep, json_type_array) ? json_object_array_length(ep) : 0;
        if (k == 0)
                return refuse(why, n, "entrypoint must be a non-empty array of strings");
        for (size_t i = 0; i < k; i++)
                if (!json_object_is_type(json_object_array_get_idx(ep, i), json_type_string))
                        return refuse(why, n, "entrypoint must be a non-empty array of strings");
        out->entrypoint = ep;
        /* the SDKs' default, ["tail", "-f", "/dev/null"], only keeps a container alive: an sbx
         * session lives by itself, so it is not run */
        const char *e0 = json_object_get_string(json_object_array_get_idx(ep, 0));
        out->run_entrypoint =
            !(k == 3 && strcmp(e0, DEFAULT_ENTRYPOINT_0) == 0 &&
              strcmp(json_object_get_string(json_object_array_get_idx(ep, 1)), "-f") == 0 &&
              strcmp(json_object_get_string(json_object_array_get_idx(ep, 2)), "/dev/null") == 0);
        return 0;
}

static int check_metadata(json_object *md, char *why, size_t n)
{
        json_object_object_foreach(md, key, val)
        {
                (void)key;
                if (!json_object_is_type(val, json_type_string))
                        return refuse(why, n, "metadata values must be strings");
        }
        return 0;
}

int create_plan_build(const struct serve_policy *p, json_object *req, struct create_plan *out,
                      char *why, size_t n)
{
        *out = (struct create_plan){0};
        if (!json_object_is_type(req, json_type_object))
                return refuse(why, n, "the body must be a JSON object");
        struct serve_argv *a = &out->argv;
        serve_argv_add(a, "create");
        serve_argv_add(a, "--json");
        int r = map_image(p, req, out, why, n);
        json_object *t = field(req, "timeout");
        if (r >= 0 && t) {
                if (!json_object_is_type(t, json_type_int) || json_object_get_int64(t) < 1)
                        r = refuse(why, n, "timeout must be a number of seconds");
                else
                        serve_argv_add(a, "--ttl=%lld", (long long)json_object_get_int64(t));
        } else if (r >= 0) {
                serve_argv_add(a, "--ttl=0"); /* no timeout: until deleted */
        }
        json_object *v;
        if (r >= 0 && (v = field(req, "resourceLimits")))
                r = map_limits(v, a, why, n);
        if (r >= 0 && (v = field(req, "env")))
                r = serve_argv_env(a, v, "env", &out->env, why, n);
        if (r >= 0 && (v = field(req, "volumes")))
                r = map_volumes(p, v, a, why, n);
        if (r >= 0)
                r = map_network(p, field(req, "networkPolicy"), a, why, n);
        if (r >= 0)
                r = map_platform(req, why, n);
        if (r >= 0)
                r = map_entrypoint(req, out, why, n);
        if (r >= 0 && (v = field(req, "credentialProxy")) && field(v, "enabled") &&
            json_object_get_boolean(field(v, "enabled")))
                r = refuse(why, n, "credentialProxy is not supported");
        if (r >= 0 && (v = field(req, "metadata"))) {
                if (!json_object_is_type(v, json_type_object))
                        r = refuse(why, n, "metadata must be an object of strings");
                else
                        r = check_metadata(v, why, n);
                out->metadata = v;
        }
        if (r >= 0 && a->error)
                r = a->error;
        if (r < 0)
                create_plan_free(out);
        return r;
}

void create_plan_free(struct create_plan *p)
{
        serve_argv_free(&p->argv);
        free(p->env);
        *p = (struct create_plan){0};
}
