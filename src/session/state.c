/* SPDX-License-Identifier: MIT */
#include "state.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/buf.h"
#include "shared/util.h"

void session_state_free(struct session_state *s)
{
        free(s->name);
        free(s->workdir);
        free(s->hostname);
        strv_freep(&s->env);
        strv_freep(&s->volumes);
        free(s->cgroup);
        free(s->cgroup_v1_memory);
        free(s->cgroup_v1_pids);
        free(s->cgroup_v1_cpu);
        free(s->base);
        free(s->cgroup_v1_freezer);
        free(s->audit_path);
        s->name = s->workdir = s->hostname = NULL;
        s->cgroup = s->cgroup_v1_memory = s->cgroup_v1_pids = s->cgroup_v1_cpu = s->base = NULL;
        s->cgroup_v1_freezer = NULL;
        s->audit_path = NULL;
}

/* %-escape everything that is not printable ASCII, plus '%' itself. */
static int put_escaped(struct buf *b, const char *v)
{
        for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
                int r = (*p > 0x20 && *p < 0x7f && *p != '%') ? buf_append(b, p, 1)
                                                              : buf_printf(b, "%%%02x", *p);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int put_kv(struct buf *b, const char *k, const char *v)
{
        int r = buf_printf(b, "%s=", k);
        if (r == 0)
                r = put_escaped(b, v);
        return r < 0 ? r : buf_puts(b, "\n");
}

static int put_num(struct buf *b, const char *k, int64_t v)
{
        return buf_printf(b, "%s=%" PRId64 "\n", k, v);
}

int session_state_format(const struct session_state *s, struct buf *b)
{
        int r = 0;
        r |= put_num(b, "version", STATE_VERSION);
        r |= put_kv(b, "id", s->id);
        if (s->name)
                r |= put_kv(b, "name", s->name);
        r |= put_num(b, "supervisor_pid", s->supervisor_pid);
        r |= put_num(b, "supervisor_start", s->supervisor_start);
        r |= put_num(b, "init_pid", s->init_pid);
        r |= put_num(b, "created_at", s->created_at);
        r |= put_num(b, "expires_at", s->expires_at);
        r |= put_num(b, "ttl", (int64_t)s->ttl_sec);
        r |= put_num(b, "timeout", (int64_t)s->timeout_sec);
        r |= put_kv(b, "workdir", s->workdir ? s->workdir : "/workspace");
        r |= put_kv(b, "hostname", s->hostname ? s->hostname : "sandbox");
        r |= put_num(b, "seccomp", s->seccomp);
        r |= put_num(b, "net", s->net);
        r |= put_num(b, "nofile", (int64_t)s->nofile);
        r |= put_num(b, "disk", (int64_t)s->disk_bytes);
        r |= put_num(b, "read_only", s->read_only);
        r |= put_num(b, "uid_start", s->uid_start);
        r |= put_num(b, "uid_count", s->uid_count);
        r |= put_num(b, "helper_uid", s->helper_uid);
        r |= put_num(b, "memory", (int64_t)s->memory_bytes);
        r |= put_num(b, "cpus_milli", (int64_t)s->cpus_milli);
        r |= put_num(b, "pids", (int64_t)s->pids);
        r |= put_num(b, "unenforced", s->limits_unenforced);
        if (s->cgroup)
                r |= put_kv(b, "cgroup", s->cgroup);
        if (s->cgroup_v1_memory)
                r |= put_kv(b, "cgroup_v1_memory", s->cgroup_v1_memory);
        if (s->cgroup_v1_pids)
                r |= put_kv(b, "cgroup_v1_pids", s->cgroup_v1_pids);
        if (s->cgroup_v1_cpu)
                r |= put_kv(b, "cgroup_v1_cpu", s->cgroup_v1_cpu);
        if (s->cgroup_v1_freezer)
                r |= put_kv(b, "cgroup_v1_freezer", s->cgroup_v1_freezer);
        if (s->audit_path)
                r |= put_kv(b, "audit", s->audit_path);
        if (s->base)
                r |= put_kv(b, "base", s->base);
        for (char **e = s->env; e && *e; e++)
                r |= put_kv(b, "env", *e);
        size_t nv = 0;
        for (char **v = s->volumes; v && *v; v++, nv++)
                r |= put_kv(b, "volume", *v);
        r |= put_num(b, "volumes", (int64_t)nv);
        return r ? -ENOMEM : 0;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Undo put_escaped(); NULL on malformed input or an embedded NUL. */
static char *unescape(const char *v, size_t n)
{
        _cleanup_free_ char *out = malloc(n + 1);
        char *o = out;
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (v[i] != '%') {
                        *o++ = v[i];
                        continue;
                }
                if (i + 2 >= n)
                        return NULL;
                int hi = hexval(v[i + 1]), lo = hexval(v[i + 2]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return NULL;
                *o++ = (char)(hi * 16 + lo);
                i += 2;
        }
        *o = '\0';
        return TAKE_PTR(out);
}

static int strv_push(char ***v, size_t *n, char *s)
{
        char **nv = realloc(*v, (*n + 2) * sizeof(char *));
        if (!nv)
                return -ENOMEM;
        nv[(*n)++] = s;
        nv[*n] = NULL;
        *v = nv;
        return 0;
}

static int parse_i64(const char *v, int64_t *out)
{
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end)
                return -EINVAL;
        *out = x;
        return 0;
}

static int state_set(struct session_state *s, const char *k, char *v, size_t n[2])
{
        int64_t x = 0;
        if (strcmp(k, "env") == 0)
                return strv_push(&s->env, &n[0], v);
        if (strcmp(k, "volume") == 0)
                return strv_push(&s->volumes, &n[1], v);
        if (strcmp(k, "volumes") == 0) {
                s->volumes_known = true;
                free(v);
                return 0;
        }
        if (strcmp(k, "id") == 0) {
                int ok = session_id_valid(v);
                if (ok)
                        memcpy(s->id, v, SESSION_ID_LEN + 1);
                free(v);
                return ok ? 0 : -EINVAL;
        }
        char **str = strcmp(k, "name") == 0                ? &s->name
                     : strcmp(k, "workdir") == 0           ? &s->workdir
                     : strcmp(k, "hostname") == 0          ? &s->hostname
                     : strcmp(k, "cgroup") == 0            ? &s->cgroup
                     : strcmp(k, "cgroup_v1_memory") == 0  ? &s->cgroup_v1_memory
                     : strcmp(k, "cgroup_v1_pids") == 0    ? &s->cgroup_v1_pids
                     : strcmp(k, "cgroup_v1_cpu") == 0     ? &s->cgroup_v1_cpu
                     : strcmp(k, "audit") == 0             ? &s->audit_path
                     : strcmp(k, "base") == 0              ? &s->base
                     : strcmp(k, "cgroup_v1_freezer") == 0 ? &s->cgroup_v1_freezer
                                                           : NULL;
        if (str) {
                free(*str);
                *str = v;
                return 0;
        }
        _cleanup_free_ char *owned = v;
        static const char *const numeric[] = {"version",    "supervisor_pid", "supervisor_start",
                                              "init_pid",   "created_at",     "expires_at",
                                              "ttl",        "timeout",        "seccomp",
                                              "net",        "nofile",         "disk",
                                              "read_only",  "uid_start",      "uid_count",
                                              "helper_uid", "memory",         "cpus_milli",
                                              "pids",       "unenforced"};
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(numeric); i++)
                known = known || strcmp(k, numeric[i]) == 0;
        if (!known)
                return 0; /* a key of a newer sbx with the same version: ignored */
        if (parse_i64(v, &x) < 0)
                return -EINVAL;
        if (strcmp(k, "version") == 0)
                return x == STATE_VERSION ? 0 : -EPROTO;
        else if (strcmp(k, "supervisor_pid") == 0)
                s->supervisor_pid = (pid_t)x;
        else if (strcmp(k, "supervisor_start") == 0)
                s->supervisor_start = x;
        else if (strcmp(k, "init_pid") == 0)
                s->init_pid = (pid_t)x;
        else if (strcmp(k, "created_at") == 0)
                s->created_at = x;
        else if (strcmp(k, "expires_at") == 0)
                s->expires_at = x;
        else if (strcmp(k, "ttl") == 0)
                s->ttl_sec = (uint64_t)x;
        else if (strcmp(k, "timeout") == 0)
                s->timeout_sec = (uint64_t)x;
        else if (strcmp(k, "seccomp") == 0 && x >= 0 && x <= SBX_SECCOMP_UNCONFINED)
                s->seccomp = (enum sbx_seccomp_profile)x;
        else if (strcmp(k, "net") == 0 && x >= 0 && x <= SBX_NET_PROXY)
                s->net = (enum sbx_net_mode)x;
        else if (strcmp(k, "nofile") == 0)
                s->nofile = (uint64_t)x;
        else if (strcmp(k, "disk") == 0)
                s->disk_bytes = (uint64_t)x;
        else if (strcmp(k, "read_only") == 0)
                s->read_only = x != 0;
        else if (strcmp(k, "memory") == 0)
                s->memory_bytes = (uint64_t)x;
        else if (strcmp(k, "cpus_milli") == 0)
                s->cpus_milli = (uint64_t)x;
        else if (strcmp(k, "pids") == 0)
                s->pids = (uint64_t)x;
        else if (strcmp(k, "unenforced") == 0)
                s->limits_unenforced = (unsigned)x & 7u;
        else if (x < 0 || x > UINT32_MAX)
                return -EINVAL;
        else if (strcmp(k, "uid_start") == 0)
                s->uid_start = (uint32_t)x;
        else if (strcmp(k, "uid_count") == 0)
                s->uid_count = (uint32_t)x;
        else if (strcmp(k, "helper_uid") == 0)
                s->helper_uid = (uint32_t)x;
        return 0;
}

int session_state_parse(const char *text, size_t len, struct session_state *s)
{
        size_t n_list[2] = {0, 0}; /* env, volume */
        bool saw_version = false;
        const char *p = text, *end = text + len;

        memset(s, 0, sizeof(*s));
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                if (!nl)
                        return -EINVAL; /* truncated: every line ends in \n */
                const char *eq = memchr(p, '=', (size_t)(nl - p));
                if (!eq || eq == p || eq - p > 32)
                        return -EINVAL;
                char key[33];
                memcpy(key, p, (size_t)(eq - p));
                key[eq - p] = '\0';
                if (!saw_version && strcmp(key, "version") != 0)
                        return -EPROTO;
                saw_version = true;
                char *v = unescape(eq + 1, (size_t)(nl - eq - 1));
                if (!v)
                        return -EINVAL;
                int r = state_set(s, key, v, n_list);
                if (r < 0) {
                        session_state_free(s);
                        return r;
                }
                p = nl + 1;
        }
        if (!saw_version || !s->id[0] || s->init_pid <= 0 || s->supervisor_pid <= 0) {
                session_state_free(s);
                return -EINVAL;
        }
        return 0;
}

int session_state_write(int sessfd, const struct session_state *s)
{
        _cleanup_buf_ struct buf b = {0};
        int r = session_state_format(s, &b);
        if (r < 0)
                return r;
        return write_file_atomic_at(sessfd, "state", b.data, b.len, 0600);
}

int session_state_read(int sessfd, struct session_state *s)
{
        memset(s, 0, sizeof(*s)); /* safe to free whatever happens below */
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(sessfd, "state", &b, 1 << 20);
        if (r < 0)
                return r;
        return session_state_parse(b.data ? b.data : "", b.len, s);
}

static size_t env_key_len(const char *kv)
{
        const char *eq = strchr(kv, '=');
        return eq ? (size_t)(eq - kv) : strlen(kv);
}

char **env_merge(char *const *base, char *const *overrides)
{
        size_t n = 0;
        _cleanup_strv_ char **out = calloc(1, sizeof(char *));
        if (!out)
                return NULL;
        char *const *lists[2] = {base, overrides};
        for (int l = 0; l < 2; l++)
                for (char *const *p = lists[l]; p && *p; p++) {
                        size_t kl = env_key_len(*p);
                        size_t i;
                        for (i = 0; i < n; i++)
                                if (env_key_len(out[i]) == kl && !strncmp(out[i], *p, kl))
                                        break;
                        char *copy = strdup(*p);
                        if (!copy)
                                return NULL;
                        if (i < n) {
                                free(out[i]);
                                out[i] = copy;
                        } else if (strv_push(&out, &n, copy) < 0) {
                                free(copy);
                                return NULL;
                        }
                }
        return TAKE_PTR(out);
}

char **session_env_build(const struct sbx_config *c)
{
        static char *const builtin[] = {
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME=/workspace",
            "LANG=C.UTF-8",
            NULL,
        };
        /* proxy mode: every tool that honours the usual variables goes through the proxy */
        static char *const proxied[] = {
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME=/workspace",
            "LANG=C.UTF-8",
            "HTTP_PROXY=" PROXY_URL,
            "HTTPS_PROXY=" PROXY_URL,
            "http_proxy=" PROXY_URL,
            "https_proxy=" PROXY_URL,
            "NO_PROXY=localhost,127.0.0.1",
            "no_proxy=localhost,127.0.0.1",
            NULL,
        };
        if (c->net != SBX_NET_PROXY)
                return env_merge(builtin, c->env);
        /* and pip uses the configured index, installing as a disposable sandbox may ([packages]) */
        _cleanup_strv_ char **pip = NULL, **base = NULL;
        if (package_pip_env(c, &pip) < 0 || !(base = env_merge(proxied, pip)))
                return NULL;
        return env_merge(base, c->env);
}

char **session_volumes_build(const struct sbx_config *c)
{
        _cleanup_strv_ char **out = calloc(c->n_mounts + 1, sizeof(char *));
        size_t n = 0;
        for (size_t i = 0; out && i < c->n_mounts; i++) {
                struct stat st;
                /* a file, or a path gone: no directory to plant links in */
                if (c->mounts[i].read_only || stat(c->mounts[i].host, &st) < 0 ||
                    !S_ISDIR(st.st_mode))
                        continue;
                if (asprintf(&out[n], "%llu:%llu:%s", (unsigned long long)st.st_dev,
                             (unsigned long long)st.st_ino, c->mounts[i].host) < 0) {
                        out[n] = NULL;
                        return NULL;
                }
                n++;
        }
        return TAKE_PTR(out);
}
