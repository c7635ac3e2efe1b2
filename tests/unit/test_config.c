/* SPDX-License-Identifier: MIT */
/* src/config: units, every key from ini/env/flag, layering, and sandbox.ini.example. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config-internal.h"
#include "config/config.h"
#include "shared/buf.h"
#include "unit.h"

#define M (UINT64_C(1) << 20)
#define G (UINT64_C(1) << 30)

struct t {
        struct sbx_config c;
        struct sbx_error e;
        char dir[PATH_MAX];       /* mkdtemp scratch dir */
        char file[PATH_MAX + 16]; /* dir/t.ini, rewritten by ini() */
        char msg[2048];           /* expected messages built with fmt() */
};

static const char *fmt(struct t *t, const char *f, ...) _printf_(2, 3);
static const char *fmt(struct t *t, const char *f, ...)
{
        va_list ap;
        va_start(ap, f);
        vsnprintf(t->msg, sizeof(t->msg), f, ap);
        va_end(ap);
        return t->msg;
}

static void reset(struct t *t)
{
        config_free(&t->c);
        config_init_defaults(&t->c);
        t->e = (struct sbx_error){0};
}

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        if (!f)
                abort();
        fputs(text, f);
        fclose(f);
}

static char *path_in(struct t *t, const char *name)
{
        char *p = NULL;
        if (asprintf(&p, "%s/%s", t->dir, name) < 0)
                abort();
        return p;
}

/* One flag on a fresh default config. */
static int flag(struct t *t, const char *f, const char *v)
{
        reset(t);
        return config_apply_flag(&t->c, f, v, &t->e);
}

/* One more flag on the current config. */
static int more(struct t *t, const char *f, const char *v)
{
        return config_apply_flag(&t->c, f, v, &t->e);
}

/* An ini text loaded on a fresh default config. */
static int ini(struct t *t, const char *text)
{
        reset(t);
        write_text(t->file, text);
        return config_load_file(&t->c, t->file, &t->e);
}

static int env(struct t *t, char *const *envp)
{
        reset(t);
        return config_load_env(&t->c, envp, &t->e);
}

static bool usage_err(struct t *t, int r)
{
        return r < 0 && t->e.exit_code == EXIT_USAGE && t->e.code &&
               strcmp(t->e.code, "usage") == 0;
}

static size_t strv_len(char **v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

static void test_sizes(void)
{
        uint64_t v = 7;
        CHECK(parse_size("0", &v) == 0 && v == 0);
        CHECK(parse_size("1", &v) == 0 && v == 1);
        CHECK(parse_size("1K", &v) == 0 && v == 1024);
        CHECK(parse_size("1k", &v) == 0 && v == 1024);
        CHECK(parse_size("512M", &v) == 0 && v == 512 * M);
        CHECK(parse_size("512m", &v) == 0 && v == 512 * M);
        CHECK(parse_size("1G", &v) == 0 && v == G);
        CHECK(parse_size("2T", &v) == 0 && v == 2048 * G);
        CHECK(parse_size("18446744073709551615", &v) == 0 && v == UINT64_MAX);
        CHECK(parse_size("16777215T", &v) == 0 && v == UINT64_C(16777215) << 40);
        CHECK(parse_size("18446744073709551616", &v) == -ERANGE);
        CHECK(parse_size("16777216T", &v) == -ERANGE);
        CHECK(parse_size("99999999999999999999999G", &v) == -ERANGE);
        const char *bad[] = {"",     "K",    "1KB", "1KiB", "-1",  "+1", " 1", "1 ",
                             "1.5G", "0x10", "1P",  "1b",   "1 M", "M1", "١"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(parse_size(bad[i], &v) == -EINVAL);
        CHECK(parse_size(NULL, &v) == -EINVAL);
}

static void test_durations(void)
{
        uint64_t v = 7;
        CHECK(parse_duration("0", &v) == 0 && v == 0);
        CHECK(parse_duration("90", &v) == 0 && v == 90);
        CHECK(parse_duration("1800s", &v) == 0 && v == 1800);
        CHECK(parse_duration("30m", &v) == 0 && v == 1800);
        CHECK(parse_duration("2h", &v) == 0 && v == 7200);
        CHECK(parse_duration("2H", &v) == 0 && v == 7200);
        CHECK(parse_duration("4294967295", &v) == 0 && v == UINT32_MAX);
        CHECK(parse_duration("4294967296", &v) == -ERANGE);
        CHECK(parse_duration("1193047h", &v) == -ERANGE);
        CHECK(parse_duration("99999999999999999999", &v) == -ERANGE);
        const char *bad[] = {"", "s", "1d", "1w", "1.5h", "-1", "+1", "1hm", "1h30m", " 1", "1 "};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(parse_duration(bad[i], &v) == -EINVAL);
}

static void test_small_parsers(void)
{
        CHECK(parse_env_assignment("A=1") == 0);
        CHECK(parse_env_assignment("_x=") == 0);
        CHECK(parse_env_assignment("a_B9=x=y") == 0);
        const char *bad[] = {"=1", "1A=2", "A", "A-B=1", "", "A B=1", "Ä=1"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(parse_env_assignment(bad[i]) == -EINVAL);
        CHECK(parse_env_assignment(NULL) == -EINVAL);

        bool b = false;
        const char *yes[] = {"true", "yes", "on", "1", "TRUE", "Yes"};
        const char *no[] = {"false", "no", "off", "0", "False"};
        for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
                CHECK(parse_bool(yes[i], &b) == 0 && b);
        for (size_t i = 0; i < ARRAY_SIZE(no); i++)
                CHECK(parse_bool(no[i], &b) == 0 && !b);
        CHECK(parse_bool("y", &b) == -EINVAL && parse_bool("", &b) == -EINVAL);

        uint32_t s = 0, n = 0;
        CHECK(parse_uid_range("100000:65536", &s, &n) == 0 && s == 100000 && n == 65536);
        CHECK(parse_uid_range("1:1", &s, &n) == 0 && s == 1 && n == 1);
        CHECK(parse_uid_range("4294967294:1", &s, &n) == 0);
        CHECK(parse_uid_range("4294967295:1", &s, &n) == -ERANGE);
        CHECK(parse_uid_range("1:4294967295", &s, &n) == -ERANGE);
        CHECK(parse_uid_range("0:10", &s, &n) == -ERANGE);
        CHECK(parse_uid_range("10:0", &s, &n) == -ERANGE);
        CHECK(parse_uid_range("10", &s, &n) == -EINVAL);
        CHECK(parse_uid_range("10:", &s, &n) == -EINVAL);
        CHECK(parse_uid_range(":10", &s, &n) == -EINVAL);
        CHECK(parse_uid_range("1:2:3", &s, &n) == -EINVAL);

        CHECK_STR(net_mode_name(SBX_NET_NONE), "none");
        CHECK_STR(net_mode_name(SBX_NET_HOST), "host");
        CHECK_STR(net_mode_name(SBX_NET_PROXY), "proxy");
        CHECK_STR(seccomp_profile_name(SBX_SECCOMP_DEFAULT), "default");
        CHECK_STR(seccomp_profile_name(SBX_SECCOMP_STRICT), "strict");
        CHECK_STR(seccomp_profile_name(SBX_SECCOMP_UNCONFINED), "unconfined");
}

static void test_defaults(struct t *t)
{
        reset(t);
        struct sbx_config *c = &t->c;
        CHECK(c->name == NULL && c->image == NULL && c->setup == NULL && c->packages == NULL);
        CHECK(c->ttl_sec == 1800 && c->timeout_sec == 1800);
        CHECK_STR(c->rootfs, "host");
        CHECK_STR(c->workdir, "/workspace");
        CHECK_STR(c->hostname, "sandbox");
        CHECK(!c->read_only && c->mounts == NULL && c->n_mounts == 0 && c->env == NULL);
        CHECK(c->memory_bytes == 512 * M && c->cpus_milli == 1000 && c->pids == 256);
        CHECK(c->disk_bytes == G && c->nofile == 1024);
        CHECK(c->memory_origin == SBX_ORIGIN_DEFAULT && c->net_origin == SBX_ORIGIN_DEFAULT);
        CHECK(c->net == SBX_NET_NONE && c->allow_hosts == NULL);
        CHECK(c->seccomp == SBX_SECCOMP_DEFAULT);
        CHECK(c->uid_range_pick && c->uid_range_start == 0 && c->uid_range_count == 65536);
        CHECK(c->audit_dir == NULL && c->warnings == NULL);
}

/* "unlimited" asks for no limit (stored as 0) for memory, cpus and pids only; any layer. */
static void test_unlimited(struct t *t)
{
        reset(t);
        CHECK(flag(t, "--memory", "unlimited") == 0 && t->c.memory_bytes == 0);
        CHECK(t->c.memory_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--cpus", "unlimited") == 0 && t->c.cpus_milli == 0);
        CHECK(t->c.cpus_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--pids", "unlimited") == 0 && t->c.pids == 0);
        CHECK(flag(t, "--memory", "1G") == 0 && t->c.memory_bytes == G); /* a number again */
        /* exact spelling only, and never for the other sizes and counts */
        CHECK(usage_err(t, flag(t, "--memory", "Unlimited")));
        CHECK(usage_err(t, flag(t, "--pids", "unlimited ")));
        CHECK(usage_err(t, flag(t, "--cpus", "inf")));
        CHECK(usage_err(t, flag(t, "--disk", "unlimited")));
        CHECK(usage_err(t, flag(t, "--nofile", "unlimited")));
        CHECK(usage_err(t, flag(t, "--ttl", "unlimited")));

        reset(t);
        CHECK(ini(t, "[limits]\nmemory = unlimited\ncpus = unlimited\npids = unlimited\n") == 0);
        CHECK(t->c.memory_bytes == 0 && t->c.cpus_milli == 0 && t->c.pids == 0);
        CHECK(t->c.memory_origin == SBX_ORIGIN_FILE && t->c.pids_origin == SBX_ORIGIN_FILE);
        /* a later layer can ask for a limit again */
        CHECK(more(t, "--pids", "64") == 0 && t->c.pids == 64);

        char *const unl[] = {"SBX_MEMORY=unlimited", "SBX_CPUS=unlimited", "SBX_PIDS=unlimited",
                             NULL};
        CHECK(env(t, unl) == 0 && t->c.memory_bytes == 0 && t->c.cpus_milli == 0 && t->c.pids == 0);
        CHECK(t->c.cpus_origin == SBX_ORIGIN_ENV);
}

static void test_flag_numbers(struct t *t)
{
        CHECK(flag(t, "--memory", "1G") == 0 && t->c.memory_bytes == G);
        CHECK(t->c.memory_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--memory", "4M") == 0 && t->c.memory_bytes == 4 * M);
        CHECK(usage_err(t, flag(t, "--memory", "12X")));
        CHECK_STR(t->e.message, "invalid --memory '12X': expected a size like 512M, or unlimited");
        CHECK(usage_err(t, flag(t, "--memory", "4095K")));
        CHECK_STR(t->e.message, "invalid --memory '4095K': must be at least 4M (or unlimited)");
        CHECK(usage_err(t, flag(t, "--memory", "0")));
        CHECK(usage_err(t, flag(t, "--memory", "99999999999T")));
        CHECK_STR(t->e.message, "invalid --memory '99999999999T': too large");
        CHECK(flag(t, "--disk", "1M") == 0 && t->c.disk_bytes == M);
        CHECK(usage_err(t, flag(t, "--disk", "1023K")));
        CHECK(usage_err(t, flag(t, "--disk", "0")));

        CHECK(flag(t, "--cpus", "0.5") == 0 && t->c.cpus_milli == 500);
        CHECK(t->c.cpus_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--cpus", "2") == 0 && t->c.cpus_milli == 2000);
        CHECK(flag(t, "--cpus", "1.25") == 0 && t->c.cpus_milli == 1250);
        CHECK(flag(t, "--cpus", "0.001") == 0 && t->c.cpus_milli == 1);
        CHECK(flag(t, "--cpus", "1024") == 0 && t->c.cpus_milli == 1024000);
        CHECK(flag(t, "--cpus", "1024.000") == 0 && t->c.cpus_milli == 1024000);
        const char *bad_cpus[] = {
            "0",  "0.0", "0.0004", "1024.001", "1025", "1.2345", ".5",
            "2.", "-1",  "abc",    "1,5",      "",     "1e3",    "99999999999999999999"};
        for (size_t i = 0; i < ARRAY_SIZE(bad_cpus); i++)
                CHECK(usage_err(t, flag(t, "--cpus", bad_cpus[i])));
        CHECK(usage_err(t, flag(t, "--cpus", "0")));
        CHECK_STR(t->e.message,
                  "invalid --cpus '0': must be more than 0 and at most 1024 (or unlimited)");

        CHECK(flag(t, "--pids", "1") == 0 && t->c.pids == 1 && t->c.pids_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--pids", "4194304") == 0 && t->c.pids == 4194304);
        CHECK(usage_err(t, flag(t, "--pids", "0")) && usage_err(t, flag(t, "--pids", "4194305")));
        CHECK(usage_err(t, flag(t, "--pids", "1k")) && usage_err(t, flag(t, "--pids", "-1")));
        CHECK(flag(t, "--nofile", "16") == 0 && t->c.nofile == 16);
        CHECK(t->c.nofile_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--nofile", "1048576") == 0 && t->c.nofile == 1048576);
        CHECK(usage_err(t, flag(t, "--nofile", "15")));
        CHECK(usage_err(t, flag(t, "--nofile", "1048577")));
        CHECK(t->c.ptys == 64);
        CHECK(flag(t, "--ptys", "1") == 0 && t->c.ptys == 1);
        CHECK(t->c.ptys_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--ptys", "4096") == 0 && t->c.ptys == 4096);
        CHECK(usage_err(t, flag(t, "--ptys", "0")) && usage_err(t, flag(t, "--ptys", "4097")));

        CHECK(flag(t, "--ttl", "0") == 0 && t->c.ttl_sec == 0);
        CHECK(flag(t, "--ttl", "2h") == 0 && t->c.ttl_sec == 7200);
        CHECK(usage_err(t, flag(t, "--ttl", "1d")));
        CHECK(flag(t, "--timeout", "5m") == 0 && t->c.timeout_sec == 300);
        CHECK(usage_err(t, flag(t, "--timeout", "0")));
        CHECK_STR(t->e.message, "invalid --timeout '0': must be from 1s to 4294967295s");
        CHECK(usage_err(t, flag(t, "--timeout", "0s")));
}

static void test_flag_strings(struct t *t)
{
        CHECK(flag(t, "--rootfs", "/srv//root/./") == 0);
        CHECK_STR(t->c.rootfs, "/srv/root");
        CHECK(t->c.rootfs_origin == SBX_ORIGIN_FLAG);
        CHECK(flag(t, "--rootfs", "host") == 0);
        CHECK_STR(t->c.rootfs, "host");
        CHECK(usage_err(t, flag(t, "--rootfs", "rel/dir")));
        CHECK(usage_err(t, flag(t, "--rootfs", "/a/../b")));
        CHECK(usage_err(t, flag(t, "--rootfs", "")));
        CHECK(usage_err(t, flag(t, "--rootfs", "//")));

        CHECK(flag(t, "--image", "python:3.12") == 0);
        CHECK_STR(t->c.image, "python:3.12");
        CHECK(flag(t, "--image", "library/ubuntu") == 0);
        const char *bad_img[] = {"Python", "a:", ":tag", "a//b", "a/", "/a", "a:b:c", "a:-x", ""};
        for (size_t i = 0; i < ARRAY_SIZE(bad_img); i++)
                CHECK(usage_err(t, flag(t, "--image", bad_img[i])));

        CHECK(flag(t, "--read-only", NULL) == 0 && t->c.read_only);
        CHECK(flag(t, "--read-only", "false") == 0 && !t->c.read_only);

        CHECK(!t->c.strict_limits);
        CHECK(flag(t, "--strict-limits", NULL) == 0 && t->c.strict_limits);
        CHECK(flag(t, "--strict-limits", "no") == 0 && !t->c.strict_limits);
        CHECK(usage_err(t, flag(t, "--strict-limits", "maybe")));

        CHECK(flag(t, "--workdir", "/workspace//src/") == 0);
        CHECK_STR(t->c.workdir, "/workspace/src");
        CHECK(flag(t, "--workdir", "/") == 0);
        CHECK_STR(t->c.workdir, "/");
        CHECK(flag(t, "--workdir", "/a/./b") == 0);
        CHECK_STR(t->c.workdir, "/a/b");
        CHECK(usage_err(t, flag(t, "--workdir", "rel")));
        CHECK(usage_err(t, flag(t, "--workdir", "/a/..")));
        CHECK_STR(t->e.message,
                  "invalid --workdir '/a/..': expected an absolute path without '..'");
        CHECK(flag(t, "--workdir", "/a/..b") == 0);

        CHECK(flag(t, "--hostname", "my-box.local") == 0);
        CHECK_STR(t->c.hostname, "my-box.local");
        char label[80];
        memset(label, 'a', 63);
        label[63] = '\0';
        CHECK(flag(t, "--hostname", label) == 0);
        strcat(label, "a");
        CHECK(usage_err(t, flag(t, "--hostname", label)));
        char longname[300];
        memset(longname, 'a', 255); /* 4 labels of 63 with 3 dots: 255 characters */
        longname[63] = longname[127] = longname[191] = '.';
        longname[255] = '\0';
        CHECK(strlen(longname) == 255 && usage_err(t, flag(t, "--hostname", longname)));
        longname[253] = '\0'; /* a valid DNS name, longer than the kernel's 64 */
        CHECK(usage_err(t, flag(t, "--hostname", longname)));
        memset(longname, 'a', 65); /* two labels, 64 in all: the most sethostname(2) takes */
        longname[30] = '.';
        longname[64] = '\0';
        CHECK(flag(t, "--hostname", longname) == 0);
        longname[64] = 'a'; /* 65 */
        longname[65] = '\0';
        CHECK(usage_err(t, flag(t, "--hostname", longname)));
        const char *bad_host[] = {"-bad", "bad-", "a_b", "a..b", ".a", "a.", "", "a b"};
        for (size_t i = 0; i < ARRAY_SIZE(bad_host); i++)
                CHECK(usage_err(t, flag(t, "--hostname", bad_host[i])));

        CHECK(flag(t, "--seccomp", "strict") == 0 && t->c.seccomp == SBX_SECCOMP_STRICT);
        CHECK(flag(t, "--seccomp", "unconfined") == 0 && t->c.seccomp == SBX_SECCOMP_UNCONFINED);
        CHECK(flag(t, "--seccomp", "default") == 0 && t->c.seccomp == SBX_SECCOMP_DEFAULT);
        CHECK(usage_err(t, flag(t, "--seccomp", "none")));
        CHECK_STR(t->e.message, "invalid --seccomp 'none': expected default, strict or unconfined");

        CHECK(flag(t, "--name", "my-box_1.x") == 0);
        CHECK_STR(t->c.name, "my-box_1.x");
        CHECK(usage_err(t, flag(t, "--name", "Bad")));
        CHECK_STR(t->e.message, "invalid session name 'Bad': use [a-z0-9][a-z0-9_.-]{0,62}");
        CHECK(usage_err(t, flag(t, "--name", "sb_0123456789abcdef")));

        CHECK(usage_err(t, flag(t, "--bogus", "1")));
        CHECK(usage_err(t, flag(t, "--memory", NULL)));
        CHECK(usage_err(t, flag(t, "--uid-range", "1:1"))); /* ini/env only */
}

static void test_flag_lists(struct t *t)
{
        CHECK(flag(t, "--package", "numpy") == 0 && more(t, "--package", "pandas>=2,<3") == 0);
        CHECK(strv_len(t->c.packages) == 2);
        CHECK_STR(t->c.packages[1], "pandas>=2,<3"); /* one flag, one package: no comma split */
        CHECK(usage_err(t, more(t, "--package", "--index-url=http://x")));
        CHECK(usage_err(t, flag(t, "--package", "")));

        CHECK(flag(t, "--env", "A=1") == 0 && more(t, "--env", "B=x=y") == 0);
        CHECK(more(t, "--env", "A=2") == 0 && strv_len(t->c.env) == 2);
        CHECK_STR(t->c.env[0], "A=2");
        CHECK_STR(t->c.env[1], "B=x=y");
        CHECK(more(t, "--env", "AB=") == 0 && strv_len(t->c.env) == 3);
        CHECK(usage_err(t, more(t, "--env", "1A=x")) && usage_err(t, flag(t, "--env", "A")));
        CHECK_STR(
            t->e.message,
            "invalid --env 'A': expected KEY=VALUE with KEY like MY_VAR ([A-Za-z_][A-Za-z0-9_]*)");
        CHECK(usage_err(t, flag(t, "--env", NULL)));

        /* allowed hosts */
        CHECK(flag(t, "--allow-host", "PyPI.org") == 0 && t->c.net == SBX_NET_PROXY);
        CHECK(t->c.net_origin == SBX_ORIGIN_FLAG && t->c.allow_origin == SBX_ORIGIN_FLAG);
        CHECK_STR(t->c.allow_hosts[0], "pypi.org");
        CHECK(more(t, "--allow-host", "*.example.com:443, 10.0.0.0/8") == 0);
        CHECK(more(t, "--allow-host", "pypi.org") == 0 && strv_len(t->c.allow_hosts) == 3);
        CHECK(more(t, "--net", "proxy") == 0 && t->c.net == SBX_NET_PROXY);
        CHECK(usage_err(t, more(t, "--net", "none")));
        CHECK_STR(t->e.message,
                  "--net 'none' conflicts with --allow-host 'pypi.org': allowed hosts "
                  "need network mode 'proxy'");
        CHECK(flag(t, "--net", "host") == 0 && usage_err(t, more(t, "--allow-host", "a.com")));
        CHECK_STR(t->e.message, "--allow-host 'a.com' conflicts with --net 'host': allowed hosts "
                                "need network mode 'proxy'");
        const char *good[] = {"a.com:65535",    "[::1]:443", "::1",     "fd00::/8",
                              "[fd00::/8]:443", "[::1]",     "1.2.3.4", "1.2.3.4:80",
                              "0.0.0.0/0",      "localhost", "*.co.uk", "xn--bcher-kva.example"};
        for (size_t i = 0; i < ARRAY_SIZE(good); i++)
                CHECK(flag(t, "--allow-host", good[i]) == 0 && t->c.allow_hosts[1] == NULL);
        const char *bad[] = {
            "1.2.3",  "256.1.1.1",    "*",          "a.com:0",     "a.com:65536",
            "[::1",   "[::1]x",       "10.0.0.1/8", "10.0.0.0/33", "fd00::/129",
            "a..com", "-a.com",       "a.com:",     "a.com:x",     "*.",
            "a*.com", "http://a.com", "a.com/x",    ":80",         "::1:80:x:y:z:w:v:u",
            ""};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(usage_err(t, flag(t, "--allow-host", bad[i])));
        CHECK(usage_err(t, flag(t, "--allow-host", "10.0.0.1/8")));
        CHECK_STR(
            t->e.message,
            "invalid --allow-host '10.0.0.1/8': CIDR has host bits set (use the network address)");
        CHECK(usage_err(t, flag(t, "--net", "bogus")));
        CHECK(flag(t, "--net", "host") == 0 && t->c.net == SBX_NET_HOST);
        CHECK(t->c.net_origin == SBX_ORIGIN_FLAG);
}

static void test_mounts(struct t *t)
{
        _cleanup_free_ char *data = path_in(t, "data"), *home = path_in(t, "home");
        _cleanup_free_ char *sub = path_in(t, "home/sub");
        mkdir(data, 0700);
        mkdir(home, 0700);
        mkdir(sub, 0700);
        setenv("HOME", home, 1);
        char spec[PATH_MAX + 64];

        snprintf(spec, sizeof(spec), "%s/:/data//x/", data);
        CHECK(flag(t, "--mount", spec) == 0 && t->c.n_mounts == 1);
        CHECK_STR(t->c.mounts[0].host, data);
        CHECK_STR(t->c.mounts[0].sandbox, "/data/x");
        CHECK(!t->c.mounts[0].read_only && t->c.mounts_origin == SBX_ORIGIN_FLAG);
        snprintf(spec, sizeof(spec), "%s:/ro:ro", data);
        CHECK(more(t, "--mount", spec) == 0 && t->c.n_mounts == 2 && t->c.mounts[1].read_only);
        snprintf(spec, sizeof(spec), "%s:/rw:rw", data);
        CHECK(more(t, "--mount", spec) == 0 && t->c.n_mounts == 3 && !t->c.mounts[2].read_only);
        CHECK(usage_err(t, more(t, "--mount", spec)));
        CHECK_STR(t->e.message,
                  fmt(t, "invalid --mount '%s': '/rw' is already a mount target", spec));

        CHECK(flag(t, "--mount", "~:/home") == 0 && t->c.n_mounts == 1);
        CHECK_STR(t->c.mounts[0].host, home);
        CHECK(flag(t, "--mount", "~/sub:/s:ro") == 0 && t->c.n_mounts == 1);
        CHECK_STR(t->c.mounts[0].host, sub);
        CHECK(usage_err(t, flag(t, "--mount", "~root:/x")));

        /* a missing host path is skipped with a warning */
        CHECK(flag(t, "--mount", "/nonexistent/sbx-test:/x") == 0 && t->c.n_mounts == 0);
        CHECK(strv_len(t->c.warnings) == 1);
        CHECK_STR(t->c.warnings[0],
                  "volume host path '/nonexistent/sbx-test' does not exist: skipped");
        CHECK(flag(t, "--mount", "~/missing:/x") == 0 && t->c.n_mounts == 0);
        CHECK_STR(t->c.warnings[0],
                  fmt(t, "volume host path '%s/missing' does not exist: skipped", home));

        const char *targets[] = {"/",       "/proc", "/proc/sys", "/dev", "/dev/shm",
                                 "//proc/", "rel",   "/a/../b",   ""};
        for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
                snprintf(spec, sizeof(spec), "%s:%s", data, targets[i]);
                CHECK(usage_err(t, flag(t, "--mount", spec)));
        }
        snprintf(spec, sizeof(spec), "%s:/procfs", data);
        CHECK(flag(t, "--mount", spec) == 0 && t->c.n_mounts == 1);
        snprintf(spec, sizeof(spec), "%s:/x:xx", data);
        CHECK(usage_err(t, flag(t, "--mount", spec)));
        snprintf(spec, sizeof(spec), "%s:/x:ro:z", data);
        CHECK(usage_err(t, flag(t, "--mount", spec)));
        snprintf(spec, sizeof(spec), "%s/../data:/x", data);
        CHECK(usage_err(t, flag(t, "--mount", spec)));
        CHECK(usage_err(t, flag(t, "--mount", "rel:/x")));
        CHECK(usage_err(t, flag(t, "--mount", "/tmp")));
        CHECK_STR(t->e.message,
                  "invalid --mount '/tmp': expected HOST:SANDBOX[:ro] (paths may not contain ':')");
}

static void test_ini(struct t *t)
{
        const char *f = t->file;
        CHECK(ini(t, "[sandbox]\nttl = 1h\ntimeout = 10m\nrootfs = /srv/r/\nread_only = yes\n"
                     "workdir = /w\nhostname = box\nsetup = pip install x && echo ok\n"
                     "packages = numpy , pandas,\n  requests\npackages = rich\n"
                     "[limits]\nmemory = 1G\ncpus = 0.25\npids = 64\ndisk = 2G\nnofile = 4096\n"
                     "[network]\nallow = pypi.org\n"
                     "[security]\nseccomp = strict\nuid_range = 200000:1000\n"
                     "[audit]\ndir = /var/log/sbx/\n[env]\nFOO = bar baz\nEMPTY =\n") == 0);
        struct sbx_config *c = &t->c;
        CHECK(c->ttl_sec == 3600 && c->timeout_sec == 600 && c->read_only);
        CHECK_STR(c->rootfs, "/srv/r");
        CHECK_STR(c->workdir, "/w");
        CHECK_STR(c->hostname, "box");
        CHECK_STR(c->setup, "pip install x && echo ok");
        CHECK(strv_len(c->packages) == 4 && c->packages_origin == SBX_ORIGIN_FILE);
        CHECK_STR(c->packages[2], "requests");
        CHECK_STR(c->packages[3], "rich");
        CHECK(c->memory_bytes == G && c->cpus_milli == 250 && c->pids == 64);
        CHECK(c->disk_bytes == 2 * G && c->nofile == 4096);
        CHECK(c->memory_origin == SBX_ORIGIN_FILE && c->pids_origin == SBX_ORIGIN_FILE);
        CHECK(c->net == SBX_NET_PROXY && c->net_origin == SBX_ORIGIN_FILE);
        CHECK(c->seccomp == SBX_SECCOMP_STRICT);
        CHECK(!c->uid_range_pick && c->uid_range_start == 200000 && c->uid_range_count == 1000);
        CHECK_STR(c->audit_dir, "/var/log/sbx");
        CHECK(strv_len(c->env) == 2);
        CHECK_STR(c->env[0], "FOO=bar baz");
        CHECK_STR(c->env[1], "EMPTY=");

        CHECK(usage_err(t, ini(t, "[sandbox]\n\n[limits]\nmemory = x\n")));
        CHECK_STR(t->e.message, fmt(t,
                                    "invalid value 'x' for [limits] memory in %s line 4: "
                                    "expected a size like 512M, or unlimited",
                                    f));
        CHECK(usage_err(t, ini(t, "[limits]\nmemroy = 1G\n")));
        CHECK_STR(t->e.message, fmt(t,
                                    "unknown key 'memroy' in [limits] in %s line 2 (known keys: "
                                    "memory, cpus, pids, disk, nofile, ptys, strict)",
                                    f));
        CHECK(usage_err(t, ini(t, "# c\n[limit]\nmemory = 1G\n")));
        CHECK_STR(t->e.message, fmt(t,
                                    "unknown section [limit] in %s line 2: expected [sandbox], "
                                    "[env], [limits], [network], [security] or [audit]",
                                    f));
        CHECK(usage_err(t, ini(t, "[sandbox]\n[nothing]\n")));
        CHECK(usage_err(t, ini(t, "ttl = 1\n")));
        CHECK_STR(t->e.message, fmt(t, "key 'ttl' outside a section in %s line 1", f));
        CHECK(usage_err(t, ini(t, "[sandbox]\nttl = 1\nttl = 2\n")));
        CHECK(strstr(t->e.message, "[sandbox] ttl is set twice in") &&
              strstr(t->e.message, "line 3"));
        CHECK(usage_err(t, ini(t, "[sandbox]\nsetup = a\n  b\n")));
        CHECK(usage_err(t, ini(t, "[env]\nA = 1\nA = 2\n")));
        CHECK_STR(t->e.message, fmt(t, "[env] A is set twice in %s line 3", f));
        CHECK(usage_err(t, ini(t, "[env]\nA-B = 1\n")));
        CHECK(usage_err(t, ini(t, "[sandbox]\nsetup = apt update ; apt install x\n")));
        CHECK(strstr(t->e.message, "' ;' starts a comment") && strstr(t->e.message, "line 2"));
        CHECK(ini(t, "[limits]\nmemory = 1G ; a comment\n") == 0 && t->c.memory_bytes == G);
        CHECK(ini(t, "; comment\n# comment\n\n[limits]\n  memory=2G\n") == 0);
        CHECK(t->c.memory_bytes == 2 * G);
        CHECK(usage_err(t, ini(t, "[limits]\nmemory 1G\n")));
        CHECK_STR(t->e.message, fmt(t,
                                    "syntax error in %s line 2: expected '[section]', "
                                    "'key = value' or a comment",
                                    f));
        CHECK(usage_err(t, ini(t, "[limits\nmemory = 1G\n")));
        CHECK(usage_err(t, ini(t, "[limits]\nmemory = 1G # not a comment\n")));

        /* a line longer than inih's buffer is refused, never split */
        char big[512] = "[sandbox]\npackages = a";
        for (int i = 0; i < 100; i++)
                strcat(big, ",b");
        strcat(big, "\n");
        CHECK(usage_err(t, ini(t, big)));
        CHECK(strstr(t->e.message, "line 2 of") && strstr(t->e.message, "is too long"));
        char edge[256] = "[sandbox]\nsetup = ";
        size_t n = strlen(edge);
        memset(edge + n, 'x', 198 - 8); /* "setup = " + 190 = 198 characters */
        strcpy(edge + n + 190, "\n");
        CHECK(ini(t, edge) == 0 && strlen(t->c.setup) == 190);
        CHECK(ini(t, "[sandbox]\nttl = 5") == 0 && t->c.ttl_sec == 5); /* no final newline */

        /* empty values reset optional keys and clear lists */
        CHECK(ini(t, "[sandbox]\nimage =\nsetup =\npackages =\nmounts =\n[audit]\ndir =\n"
                     "[network]\nallow =\n") == 0);
        CHECK(!t->c.image && !t->c.setup && !t->c.packages && !t->c.n_mounts && !t->c.audit_dir);
        CHECK(!t->c.allow_hosts && t->c.net == SBX_NET_NONE);
        CHECK(usage_err(t, ini(t, "[sandbox]\nworkdir =\n")));
        CHECK(usage_err(t, ini(t, "[limits]\nmemory =\n")));

        /* same-file conflicts */
        CHECK(usage_err(t, ini(t, "[network]\nmode = none\nallow = a.com\n")));
        CHECK_STR(t->e.message, fmt(t,
                                    "[network] allow 'a.com' conflicts with [network] mode "
                                    "'none' in %s line 3: allowed hosts need network mode "
                                    "'proxy'",
                                    f));
        CHECK(usage_err(t, ini(t, "[network]\nallow = a.com\nmode = host\n")));
        CHECK(ini(t, "[network]\nallow = a.com\nmode = proxy\n") == 0);
        CHECK(usage_err(t, ini(t, "[sandbox]\nrootfs = /r\nimage = py\n")));
        CHECK(usage_err(t, ini(t, "[sandbox]\nimage = py\nrootfs = host\n")));
        CHECK(ini(t, "[sandbox]\nimage = py:3\n") == 0);
        CHECK_STR(t->c.image, "py:3");
        CHECK(ini(t, "[sandbox]\nrootfs = host\nimage =\n") == 0 && !t->c.image);

        CHECK(ini(t, "\xef\xbb\xbf[limits]\r\npids = 9\r\n") == 0 && t->c.pids == 9);
        CHECK(usage_err(t, ini(t, "[security]\nuid_range = 0:5\n")));
        CHECK(strstr(t->e.message, "START and COUNT must be at least 1"));
        CHECK(usage_err(t, ini(t, "[security]\nuid_range = picky\n")));
        CHECK(strstr(t->e.message, "expected pick, or START:COUNT"));
        CHECK(ini(t, "[security]\nuid_range = 3:4\n") == 0 && !t->c.uid_range_pick);
        CHECK(ini(t, "[security]\nuid_range = PICK\n") == 0 && t->c.uid_range_pick);
        CHECK(t->c.uid_range_start == 0 && t->c.uid_range_count == 65536);

        reset(t);
        CHECK(usage_err(t, config_load_file(&t->c, "/nonexistent/sbx.ini", &t->e)));
        CHECK_STR(t->e.message, "cannot open config file '/nonexistent/sbx.ini': No such file or "
                                "directory");
        reset(t);
        CHECK(usage_err(t, config_load_file(&t->c, t->dir, &t->e)));
}

static void test_env(struct t *t)
{
        char *const ok[] = {"SBX_TTL=5m",
                            "SBX_MEMORY=1G",
                            "SBX_CPUS=1.5",
                            "SBX_READ_ONLY=on",
                            "SBX_PACKAGES=a, b",
                            "SBX_NET=",
                            "SBX_ALLOW_HOSTS=x.org,y.org",
                            "SBX_SECCOMP=strict",
                            "SBX_UID_RANGE=5:5",
                            "SBX_AUDIT_DIR=/a/",
                            "SBX_RUNTIME_DIR=/whatever",
                            "SBX_BOGUS=1",
                            "PATH=/bin",
                            "SBX_HOSTNAME=h",
                            "SBX_WORKDIR=/w",
                            "SBX_SETUP=true",
                            "SBX_IMAGE=i",
                            "SBX_TIMEOUT=9",
                            "SBX_PIDS=7",
                            "SBX_DISK=8M",
                            "SBX_NOFILE=99",
                            "SBX_STRICT_LIMITS=yes",
                            NULL};
        CHECK(env(t, ok) == 0);
        struct sbx_config *c = &t->c;
        CHECK(c->ttl_sec == 300 && c->memory_bytes == G && c->cpus_milli == 1500 && c->read_only);
        CHECK(c->memory_origin == SBX_ORIGIN_ENV && c->cpus_origin == SBX_ORIGIN_ENV);
        CHECK(strv_len(c->packages) == 2 && strv_len(c->allow_hosts) == 2);
        CHECK(c->net == SBX_NET_PROXY && c->net_origin == SBX_ORIGIN_ENV);
        CHECK(c->seccomp == SBX_SECCOMP_STRICT && c->uid_range_start == 5);
        CHECK_STR(c->audit_dir, "/a");
        CHECK_STR(c->hostname, "h");
        CHECK_STR(c->image, "i");
        CHECK(c->timeout_sec == 9 && c->pids == 7 && c->disk_bytes == 8 * M && c->nofile == 99);
        CHECK(c->strict_limits);

        char *const bad[] = {"SBX_MEMORY=1X", NULL};
        CHECK(usage_err(t, env(t, bad)));
        CHECK_STR(t->e.message, "invalid SBX_MEMORY '1X': expected a size like 512M, or unlimited");
        char *const conflict[] = {"SBX_ALLOW_HOSTS=a.org", "SBX_NET=host", NULL};
        CHECK(usage_err(t, env(t, conflict)));
        CHECK_STR(t->e.message, "SBX_ALLOW_HOSTS 'a.org' conflicts with SBX_NET 'host': allowed "
                                "hosts need network mode 'proxy'");
        char *const both[] = {"SBX_ROOTFS=/r", "SBX_IMAGE=py", NULL};
        CHECK(usage_err(t, env(t, both)));
        char *const mounts[] = {"SBX_VOLUME_MOUNTS=/nonexistent/a:/a, /nonexistent/b:/b:ro", NULL};
        CHECK(env(t, mounts) == 0 && t->c.n_mounts == 0 && strv_len(t->c.warnings) == 2);
        /* a higher layer's mounts replace these, and the warnings about them go too */
        CHECK(more(t, "--mount", "/nonexistent/c:/c") == 0 && strv_len(t->c.warnings) == 1);
        CHECK_STR(t->c.warnings[0], "volume host path '/nonexistent/c' does not exist: skipped");
        CHECK(more(t, "--mount", "/nonexistent/d:/d") == 0 && strv_len(t->c.warnings) == 2);
}

/* Writes name in the scratch dir and returns its path (caller frees). */
static char *file_with(struct t *t, const char *name, const char *text)
{
        char *p = path_in(t, name);
        write_text(p, text);
        return p;
}

static void test_layers(struct t *t)
{
        _cleanup_free_ char *sys = file_with(t, "sys.ini",
                                             "[limits]\nmemory = 1G\ncpus = 2\npids = 10\n"
                                             "[sandbox]\npackages = a, b\nimage = base\n"
                                             "[env]\nA = sys\nB = sys\n[network]\nallow = s.org\n");
        _cleanup_free_ char *xdg = path_in(t, "xdg"), *xdgsbx = path_in(t, "xdg/sbx");
        mkdir(xdg, 0700);
        mkdir(xdgsbx, 0700);
        _cleanup_free_ char *user = file_with(t, "xdg/sbx/sandbox.ini",
                                              "[limits]\ncpus = 3\n[sandbox]\npackages = c\n"
                                              "[env]\nB = user\n[network]\nmode = none\n");
        _cleanup_free_ char *sbxc = file_with(t, "sbxconfig.ini",
                                              "[limits]\npids = 11\nnofile = 20\n"
                                              "[sandbox]\nrootfs = /r\n");
        _cleanup_free_ char *expl = file_with(t, "explicit.ini", "[limits]\npids = 12\n");
        _cleanup_free_ char *xdg_env = NULL, *sbxc_env = NULL;
        CHECK(asprintf(&xdg_env, "XDG_CONFIG_HOME=%s", xdg) > 0);
        CHECK(asprintf(&sbxc_env, "SBX_CONFIG=%s", sbxc) > 0);
        char *const envp[] = {xdg_env, sbxc_env, "SBX_NOFILE=30", "SBX_PACKAGES=d", NULL};

        reset(t);
        struct sbx_config *c = &t->c;
        CHECK(config_load_from(c, sys, expl, envp, &t->e) == 0);
        CHECK(c->memory_bytes == G && c->memory_origin == SBX_ORIGIN_FILE); /* system file */
        CHECK(c->cpus_milli == 3000);                                       /* user file */
        CHECK(c->pids == 12);                                         /* --config > $SBX_CONFIG */
        CHECK(c->nofile == 30 && c->nofile_origin == SBX_ORIGIN_ENV); /* env > files */
        CHECK(strv_len(c->packages) == 1 && c->packages_origin == SBX_ORIGIN_ENV);
        CHECK_STR(c->packages[0], "d");
        CHECK(c->env && strv_len(c->env) == 2);
        CHECK_STR(c->env[0], "A=sys");
        CHECK_STR(c->env[1], "B=user");
        CHECK(c->net == SBX_NET_NONE && !c->allow_hosts); /* a higher mode drops lower hosts */
        CHECK(!c->image && c->image_origin == SBX_ORIGIN_DEFAULT); /* a higher rootfs drops image */
        CHECK_STR(c->rootfs, "/r");
        CHECK(c->cpus_origin == SBX_ORIGIN_FILE && c->pids_origin == SBX_ORIGIN_FILE);

        /* flags on top: lists replace then accumulate, env merges, allow implies proxy */
        CHECK(more(t, "--package", "e") == 0 && more(t, "--package", "f") == 0);
        CHECK(strv_len(c->packages) == 2 && c->packages_origin == SBX_ORIGIN_FLAG);
        CHECK_STR(c->packages[0], "e");
        CHECK(more(t, "--env", "A=flag") == 0);
        CHECK_STR(c->env[0], "A=flag");
        CHECK(more(t, "--allow-host", "f.org") == 0 && c->net == SBX_NET_PROXY);
        CHECK(more(t, "--image", "img") == 0);
        CHECK_STR(c->rootfs, "host");
        CHECK(usage_err(t, more(t, "--rootfs", "/x")));
        CHECK(more(t, "--cpus", "4") == 0 && c->cpus_milli == 4000);

        /* missing default files are skipped; a missing $SBX_CONFIG or --config is an error */
        _cleanup_free_ char *none = path_in(t, "none.ini");
        char *const plain[] = {"HOME=/nonexistent", NULL};
        reset(t);
        CHECK(config_load_from(c, none, NULL, plain, &t->e) == 0 && c->pids == 256);
        reset(t);
        CHECK(usage_err(t, config_load_from(c, none, none, plain, &t->e)));
        CHECK_STR(t->e.message, fmt(t,
                                    "cannot open config file '%s' (from --config): No such "
                                    "file or directory",
                                    none));
        char *const missing[] = {"SBX_CONFIG=/nonexistent/x.ini", NULL};
        reset(t);
        CHECK(usage_err(t, config_load_from(c, NULL, NULL, missing, &t->e)));
        CHECK_STR(t->e.message, "cannot open config file '/nonexistent/x.ini' (from $SBX_CONFIG): "
                                "No such file or directory");
        char *const empty[] = {"SBX_CONFIG=", NULL};
        reset(t);
        CHECK(config_load_from(c, NULL, NULL, empty, &t->e) == 0);

        /* without XDG_CONFIG_HOME: $HOME/.config/sbx/sandbox.ini */
        _cleanup_free_ char *h = path_in(t, "h"), *h1 = path_in(t, "h/.config"),
                            *h2 = path_in(t, "h/.config/sbx"), *home_env = NULL;
        mkdir(h, 0700);
        mkdir(h1, 0700);
        mkdir(h2, 0700);
        _cleanup_free_ char *hu =
            file_with(t, "h/.config/sbx/sandbox.ini", "[limits]\npids = 77\n");
        CHECK(asprintf(&home_env, "HOME=%s", h) > 0);
        char *const homes[] = {home_env, "XDG_CONFIG_HOME=relative/ignored", NULL};
        reset(t);
        CHECK(config_load_from(c, NULL, NULL, homes, &t->e) == 0 && c->pids == 77);

        /* the public entry point reads the process environment (and the real system file,
         * so only where there is none) */
        if (access("/etc/sbx/sandbox.ini", F_OK) == 0)
                return;
        setenv("HOME", h, 1);
        unsetenv("XDG_CONFIG_HOME");
        setenv("SBX_CONFIG", expl, 1);
        setenv("SBX_DISK", "3M", 1);
        reset(t);
        CHECK(config_load(c, NULL, &t->e) == 0 && c->disk_bytes == 3 * M);
        CHECK(c->pids == 12); /* $SBX_CONFIG beats the user file */
        unsetenv("SBX_CONFIG");
        unsetenv("SBX_DISK");
}

static void test_higher_allow_overrides_mode(struct t *t)
{
        _cleanup_free_ char *f = file_with(t, "host.ini", "[network]\nmode = host\n");
        char *const envp[] = {"SBX_ALLOW_HOSTS=a.org", NULL};
        reset(t);
        CHECK(config_load_from(&t->c, f, NULL, envp, &t->e) == 0 && t->c.net == SBX_NET_PROXY);
        CHECK(t->c.net_origin == SBX_ORIGIN_ENV);
        CHECK(more(t, "--net", "none") == 0 && !t->c.allow_hosts); /* flag beats env hosts */
}

static bool strv_is(char **v, const char *const *want, size_t n)
{
        if (strv_len(v) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], want[i]) != 0)
                        return false;
        return true;
}

/* [packages]: the index URL, the provisioning window's allow entries, pip's settings. */
static void test_packages(struct t *t)
{
        _cleanup_free_ char *entry = NULL;
        CHECK(package_index_check("https://pypi.org/simple", &entry) == NULL &&
              strcmp(entry, "pypi.org") == 0);
        free(TAKE_PTR(entry));
        CHECK(package_index_check("http://127.0.0.1:3141/root/pypi/+simple/", &entry) == NULL &&
              strcmp(entry, "127.0.0.1:3141") == 0);
        free(TAKE_PTR(entry));
        CHECK(package_index_check("http://[::1]:8000/simple", &entry) == NULL &&
              strcmp(entry, "[::1]:8000") == 0);
        CHECK(package_index_check("ftp://x/simple", NULL) != NULL);
        CHECK(package_index_check("https:///simple", NULL) != NULL);
        CHECK(package_index_check("https://u:p@x.org/simple", NULL) != NULL);
        CHECK(package_index_check("https://x.org/a b", NULL) != NULL);
        CHECK(package_index_check("https://x.org:99999/", NULL) != NULL);

        reset(t);
        _cleanup_strv_ char **w = NULL;
        static const char *const pypi[] = {"pypi.org", "files.pythonhosted.org"};
        CHECK(package_window(&t->c, &w) == 0 && strv_is(w, pypi, 2));
        strv_freep(&w);
        CHECK(ini(t, "[packages]\nindex_url = http://127.0.0.1:3141/simple\n"
                     "hosts = files.example.com, 10.0.0.5:8080\n") == 0);
        static const char *const mirror[] = {"127.0.0.1:3141", "files.example.com",
                                             "10.0.0.5:8080"};
        CHECK(package_window(&t->c, &w) == 0 && strv_is(w, mirror, 3));
        _cleanup_strv_ char **pip = NULL;
        CHECK(package_pip_env(&t->c, &pip) == 0);
        bool url = false, trusted = false, proxy = false;
        for (size_t i = 0; pip && pip[i]; i++) {
                url |= strcmp(pip[i], "PIP_INDEX_URL=http://127.0.0.1:3141/simple") == 0;
                trusted |= strcmp(pip[i], "PIP_TRUSTED_HOST=127.0.0.1:3141") == 0;
                proxy |= strncmp(pip[i], "PIP_PROXY=", 10) == 0;
        }
        CHECK(url && trusted && !proxy); /* no proxy mode: no PIP_PROXY */
        strv_freep(&pip);
        CHECK(more(t, "--net", "proxy") == 0 && package_pip_env(&t->c, &pip) == 0);
        proxy = false;
        for (size_t i = 0; pip && pip[i]; i++)
                proxy |= strcmp(pip[i], "PIP_PROXY=http://127.0.0.1:3128") == 0;
        CHECK(proxy); /* a loopback index in proxy mode: pip goes through the proxy */
        /* an empty value is PyPI again; a bad one is a usage error */
        CHECK(ini(t, "[packages]\nindex_url =\n") == 0 && !t->c.package_index);
        CHECK(usage_err(t, ini(t, "[packages]\nindex_url = pypi.org\n")));
        CHECK(usage_err(t, ini(t, "[packages]\nhosts = a b\n")));
}

static char *existing(const char *dir, const char *name)
{
        char cand[PATH_MAX + 64], real[PATH_MAX];
        snprintf(cand, sizeof(cand), "%s%s", dir, name);
        return realpath(cand, real) && access(real, R_OK) == 0 ? strdup(real) : NULL;
}

/* Locate sandbox.ini.example: $SBX_SRC, else two levels above this source file (__FILE__ as
 * the compiler saw it, relative to the build dir where meson runs the test), else above cwd. */
static char *find_example(void)
{
        const char *name = "sandbox.ini.example";
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", __FILE__);
        char *slash = strrchr(dir, '/');
        if (slash)
                strcpy(slash + 1, "../../");
        const char *src = getenv("SBX_SRC");
        char *p = src ? existing(src, "/sandbox.ini.example") : NULL;
        if (!p && slash)
                p = existing(dir, name);
        if (!p)
                p = existing("", name);
        if (!p)
                p = existing("../", name);
        if (!p)
                p = existing("../../", name);
        return p;
}

/* Convention of the example: "#key = value" (no blank after '#') is a setting. */
static char *uncomment_example(const char *path)
{
        _cleanup_fclose_ FILE *in = fopen(path, "re");
        struct buf out = {0};
        char line[1024];
        while (in && fgets(line, sizeof(line), in)) {
                size_t k = strspn(line + 1, "abcdefghijklmnopqrstuvwxyz_");
                bool setting = line[0] == '#' && k > 0 && strncmp(line + 1 + k, " =", 2) == 0;
                if (buf_puts(&out, setting ? line + 1 : line) < 0)
                        abort();
        }
        return out.data;
}

static bool strv_eq(char **a, char **b)
{
        size_t n = strv_len(a);
        if (n != strv_len(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

static void test_example(struct t *t)
{
        _cleanup_free_ char *path = find_example();
        CHECK(path != NULL);
        if (!path)
                return;
        _cleanup_free_ char *text = uncomment_example(path);
        CHECK(text && strstr(text, "\nmemory = 512M\n"));
        CHECK(ini(t, text ? text : "") == 0);
        if (t->e.exit_code)
                printf("# %s\n", t->e.message);

        struct sbx_config d;
        config_init_defaults(&d);
        const struct sbx_config *c = &t->c;
        CHECK(str_eq(c->name, d.name) && c->ttl_sec == d.ttl_sec &&
              c->timeout_sec == d.timeout_sec);
        CHECK(str_eq(c->rootfs, d.rootfs) && str_eq(c->image, d.image));
        CHECK(strv_eq(c->packages, d.packages) && str_eq(c->setup, d.setup));
        CHECK(c->read_only == d.read_only && str_eq(c->workdir, d.workdir));
        CHECK(str_eq(c->hostname, d.hostname) && c->n_mounts == d.n_mounts);
        CHECK(strv_eq(c->env, d.env));
        CHECK(c->memory_bytes == d.memory_bytes && c->cpus_milli == d.cpus_milli);
        CHECK(c->pids == d.pids && c->disk_bytes == d.disk_bytes && c->nofile == d.nofile);
        CHECK(c->net == d.net && strv_eq(c->allow_hosts, d.allow_hosts));
        CHECK(c->seccomp == d.seccomp && c->uid_range_start == d.uid_range_start);
        CHECK(c->uid_range_count == d.uid_range_count && str_eq(c->audit_dir, d.audit_dir));
        CHECK(strv_eq(c->warnings, d.warnings));
        config_free(&d);

        /* every ini key of the option table is documented, as a setting, in its section */
        size_t n;
        const struct config_key *keys = config_keys(&n);
        for (size_t i = 0; i < n; i++)
                CHECK(keys[i].id == i && keys[i].set && (keys[i].env || keys[i].flag));
        for (size_t i = 0; text && i < n; i++) {
                if (!keys[i].section)
                        continue;
                char want[64], sect[32];
                snprintf(sect, sizeof(sect), "\n[%s]\n", keys[i].section);
                snprintf(want, sizeof(want), "\n%s =", keys[i].key);
                const char *s = strstr(text, sect), *k = s ? strstr(s, want) : NULL;
                const char *next = s ? strstr(s + 1, "\n[") : NULL;
                CHECK(k && (!next || k < next));
                if (!(k && (!next || k < next)))
                        printf("# missing in the example: [%s] %s\n", keys[i].section, keys[i].key);
        }
        CHECK(text && strstr(text, "\n[env]\n"));
}

int main(void)
{
        struct t t = {0};
        snprintf(t.dir, sizeof(t.dir), "%s/sbx-test-config-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(t.dir))
                return 1;
        snprintf(t.file, sizeof(t.file), "%s/t.ini", t.dir);
        unsetenv("XDG_CONFIG_HOME");
        config_init_defaults(&t.c);

        test_sizes();
        test_durations();
        test_small_parsers();
        test_defaults(&t);
        test_flag_numbers(&t);
        test_unlimited(&t);
        test_flag_strings(&t);
        test_flag_lists(&t);
        test_mounts(&t);
        test_ini(&t);
        test_env(&t);
        test_layers(&t);
        test_higher_allow_overrides_mode(&t);
        test_packages(&t);
        test_example(&t);

        config_free(&t.c);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t.dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", t.dir);
        return unit_done();
}
