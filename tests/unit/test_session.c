/* SPDX-License-Identifier: MIT */
/* Session ids, names, state files and environments: the pure logic under src/session/. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "session/cmds.h"
#include "session/id.h"
#include "session/state.h"
#include "shared/util.h"
#include "unit.h"

static void test_ids(void)
{
        char id[SESSION_ID_LEN + 1], id2[SESSION_ID_LEN + 1];
        CHECK(session_id_generate(id) == 0);
        CHECK(session_id_generate(id2) == 0);
        CHECK(session_id_valid(id));
        CHECK(strcmp(id, id2) != 0); /* 64 random bits: a collision here means no randomness */
        CHECK(strncmp(id, "sb_", 3) == 0 && strlen(id) == 19);

        CHECK(session_id_valid("sb_0123456789abcdef"));
        CHECK(session_id_valid("sb_abcdefghijklmnop"));   /* base32 alphabet too */
        CHECK(!session_id_valid("sb_0123456789abcde"));   /* 15 */
        CHECK(!session_id_valid("sb_0123456789abcdef0")); /* 17 */
        CHECK(!session_id_valid("sb_0123456789ABCDEF"));  /* upper case */
        CHECK(!session_id_valid("sb_../../../../etc/x"));
        CHECK(!session_id_valid("sb_0123456789abcd/f"));
        CHECK(!session_id_valid("xx_0123456789abcdef"));
        CHECK(!session_id_valid(""));
        CHECK(!session_id_valid(NULL));
}

static void test_names(void)
{
        CHECK(session_name_valid("work"));
        CHECK(session_name_valid("a"));
        CHECK(session_name_valid("0day.v1_x-y"));
        char long_ok[64], too_long[65];
        memset(long_ok, 'a', 63);
        long_ok[63] = '\0';
        memset(too_long, 'a', 64);
        too_long[64] = '\0';
        CHECK(session_name_valid(long_ok));
        CHECK(!session_name_valid(too_long));
        CHECK(!session_name_valid(""));
        CHECK(!session_name_valid(NULL));
        CHECK(!session_name_valid("."));
        CHECK(!session_name_valid(".."));
        CHECK(!session_name_valid("../x"));
        CHECK(!session_name_valid("a/b"));
        CHECK(!session_name_valid("-rf"));
        CHECK(!session_name_valid("_x"));
        CHECK(!session_name_valid("Work"));
        CHECK(!session_name_valid("a b"));
        CHECK(!session_name_valid("a\nb"));
        CHECK(!session_name_valid("sb_0123456789abcdef")); /* would be taken for an id */
        CHECK(session_name_valid("sb_short"));
}

static void fill_state(struct session_state *s)
{
        memset(s, 0, sizeof(*s));
        memcpy(s->id, "sb_0123456789abcdef", SESSION_ID_LEN + 1);
        s->name = strdup("work");
        s->supervisor_pid = 1234;
        s->supervisor_start = 987654321;
        s->init_pid = 1235;
        s->created_at = 1700000000;
        s->expires_at = 1700001800;
        s->ttl_sec = 1800;
        s->timeout_sec = 60;
        s->workdir = strdup("/workspace/a b%c");
        s->hostname = strdup("sandbox");
        s->seccomp = SBX_SECCOMP_STRICT;
        s->net = SBX_NET_HOST;
        s->nofile = 4096;
        s->disk_bytes = 1ULL << 30;
        s->read_only = true;
        s->uid_start = 0x6ffe0000;
        s->uid_count = 65536;
        s->helper_uid = 0x6fff0000;
        s->env = calloc(4, sizeof(char *));
        s->env[0] = strdup("PATH=/usr/bin");
        s->env[1] = strdup("MULTI=line1\nline2=x%41\t\x01");
        s->env[2] = strdup("EMPTY=");
        s->volumes = calloc(3, sizeof(char *));
        s->volumes[0] = strdup("/home/u/proj");
        s->volumes[1] = strdup("/srv/a\nb");
}

static void test_state_roundtrip(void)
{
        _cleanup_state_ struct session_state a, b = {0};
        fill_state(&a);
        _cleanup_buf_ struct buf out = {0};
        CHECK(session_state_format(&a, &out) == 0);
        CHECK(strncmp(out.data, "version=1\n", 10) == 0);
        CHECK(session_state_parse(out.data, out.len, &b) == 0);
        CHECK_STR(b.id, a.id);
        CHECK_STR(b.name, "work");
        CHECK(b.supervisor_pid == 1234 && b.supervisor_start == 987654321 && b.init_pid == 1235);
        CHECK(b.created_at == 1700000000 && b.expires_at == 1700001800);
        CHECK(b.ttl_sec == 1800 && b.timeout_sec == 60);
        CHECK_STR(b.workdir, "/workspace/a b%c");
        CHECK(b.seccomp == SBX_SECCOMP_STRICT && b.net == SBX_NET_HOST && b.read_only);
        CHECK(b.nofile == 4096 && b.disk_bytes == (1ULL << 30));
        CHECK(b.uid_start == 0x6ffe0000 && b.uid_count == 65536 && b.helper_uid == 0x6fff0000);
        CHECK(b.env && b.env[0] && b.env[1] && b.env[2] && !b.env[3]);
        CHECK_STR(b.env[1], "MULTI=line1\nline2=x%41\t\x01"); /* every byte round-trips */
        CHECK_STR(b.env[2], "EMPTY=");
        CHECK(b.volumes && b.volumes[0] && b.volumes[1] && !b.volumes[2]);
        CHECK_STR(b.volumes[0], "/home/u/proj");
        CHECK_STR(b.volumes[1], "/srv/a\nb");
        CHECK(b.volumes_known); /* the count is written even when there are none */
        /* the escaped form keeps one record per line */
        CHECK(strstr(out.data, "line1\nline2") == NULL);
}

static void test_state_rejects(void)
{
        struct session_state s;
        const char *bad[] = {
            "",                                                        /* empty */
            "id=sb_0123456789abcdef\nversion=1\n",                     /* version not first */
            "version=2\nid=sb_0123456789abcdef\n",                     /* future version */
            "version=1\nid=sb_0123456789abcdef\ninit_pid=5",           /* truncated line */
            "version=1\nid=../../etc\nsupervisor_pid=1\ninit_pid=2\n", /* bad id */
            "version=1\nid=sb_0123456789abcdef\nsupervisor_pid=1\n",   /* no init pid */
            "version=1\nid=sb_0123456789abcdef\nsupervisor_pid=x\ninit_pid=2\n",
            "version=1\nid=sb_0123456789abcdef\nsupervisor_pid=1\ninit_pid=2\nenv=A%00B\n",
            "version=1\nid=sb_0123456789abcdef\nsupervisor_pid=1\ninit_pid=2\nenv=A%4\n",
            "version=1\nnoequals\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = session_state_parse(bad[i], strlen(bad[i]), &s);
                CHECK(r < 0);
                if (r == 0)
                        session_state_free(&s);
        }
        const char *ok = "version=1\nid=sb_0123456789abcdef\nsupervisor_pid=1\ninit_pid=2\n"
                         "future_key=ignored\n";
        CHECK(session_state_parse(ok, strlen(ok), &s) == 0);
        session_state_free(&s);
}

static void test_state_file(void)
{
        char dir[] = "/tmp/sbx-unit-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_state_ struct session_state a, b = {0};
        fill_state(&a);
        CHECK(session_state_write(dfd, &a) == 0);
        struct stat st;
        CHECK(fstatat(dfd, "state", &st, AT_SYMLINK_NOFOLLOW) == 0);
        CHECK((st.st_mode & 0777) == 0600);
        CHECK(session_state_read(dfd, &b) == 0);
        CHECK_STR(b.name, "work");
        /* a rewrite replaces atomically and leaves no temp file behind */
        a.expires_at = 42;
        CHECK(session_state_write(dfd, &a) == 0);
        session_state_free(&b);
        CHECK(session_state_read(dfd, &b) == 0);
        CHECK(b.expires_at == 42);
        _cleanup_closedir_ DIR *d = fdopendir(dup(dfd));
        int entries = 0;
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        entries++;
        CHECK(entries == 1);
        /* a symlinked state file is never followed */
        CHECK(unlinkat(dfd, "state", 0) == 0);
        CHECK(symlinkat("/etc/passwd", dfd, "state") == 0);
        session_state_free(&b);
        CHECK(session_state_read(dfd, &b) == -ELOOP);
        unlinkat(dfd, "state", 0);
        rmdir(dir);
}

static void test_env(void)
{
        char *base[] = {"PATH=/bin", "HOME=/workspace", "LANG=C.UTF-8", NULL};
        char *over[] = {"HOME=/tmp", "NEW=1", "PATH=/x:/y", NULL};
        _cleanup_strv_ char **m = env_merge(base, over);
        CHECK(m && m[0] && m[1] && m[2] && m[3] && !m[4]);
        CHECK_STR(m[0], "PATH=/x:/y");
        CHECK_STR(m[1], "HOME=/tmp");
        CHECK_STR(m[2], "LANG=C.UTF-8");
        CHECK_STR(m[3], "NEW=1");

        struct sbx_config c;
        config_init_defaults(&c);
        char *cenv[] = {"LANG=en_US.UTF-8", "FOO=bar", NULL};
        c.env = cenv;
        _cleanup_strv_ char **e = session_env_build(&c);
        c.env = NULL;
        config_free(&c);
        CHECK(e && strncmp(e[0], "PATH=", 5) == 0);
        CHECK_STR(e[1], "HOME=/workspace");
        CHECK_STR(e[2], "LANG=en_US.UTF-8");
        CHECK_STR(e[3], "FOO=bar");
        CHECK(e[4] == NULL);
        /* never the caller's environment */
        setenv("SBX_UNIT_SECRET", "x", 1);
        for (char **p = e; *p; p++)
                CHECK(strncmp(*p, "SBX_UNIT_SECRET", 15) != 0);
}

/* session_ids_in_dir: every id once, nothing else, in some rotation of the directory order */
static void test_ids_in_dir(void)
{
        char tmpl[] = "/tmp/sbx-unit-ids.XXXXXX";
        CHECK(mkdtemp(tmpl) != NULL);
        int dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        static const char *const ids[] = {"sb_0000000000000001", "sb_00000000000000aa",
                                          "sb_ffffffffffffffff", "sb_0123456789abcdef",
                                          "sb_fedcba9876543210"};
        static const char *const junk[] = {"names", "sb_short", "sb_0000000000000001x", ".hidden"};
        for (size_t i = 0; i < 5; i++)
                CHECK(mkdirat(dfd, ids[i], 0700) == 0);
        for (size_t i = 0; i < 4; i++)
                CHECK(mkdirat(dfd, junk[i], 0700) == 0);
        for (int round = 0; round < 20; round++) {
                size_t n;
                char(*got)[SESSION_ID_LEN + 1] = session_ids_in_dir(dfd, &n);
                CHECK(n == 5 && got != NULL);
                int seen = 0;
                for (size_t i = 0; got && i < n; i++)
                        for (size_t k = 0; k < 5; k++)
                                if (strcmp(got[i], ids[k]) == 0)
                                        seen |= 1 << k;
                CHECK(seen == 0x1f);
                free(got);
        }
        for (size_t i = 0; i < 5; i++)
                (void)unlinkat(dfd, ids[i], AT_REMOVEDIR);
        for (size_t i = 0; i < 4; i++)
                (void)unlinkat(dfd, junk[i], AT_REMOVEDIR);
        close(dfd);
        (void)rmdir(tmpl);
        /* a directory without ids (the test's cwd): none */
        size_t n = 1;
        char(*none)[SESSION_ID_LEN + 1] = session_ids_in_dir(AT_FDCWD, &n);
        CHECK(none == NULL || n == 0);
        free(none);
}

/* One directory of ids (and entries that are not ids) under base, for session_ids_sample. */
static int ids_dir(const char *base, char *path, size_t size, unsigned count)
{
        snprintf(path, size, "%s/sbx-unit-sample.XXXXXX", base);
        if (!mkdtemp(path))
                return -1;
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        unsigned made = 0; /* one check for the lot: not one test line per directory */
        for (unsigned i = 0; dfd >= 0 && i < count; i++) {
                char id[32];
                snprintf(id, sizeof(id), "sb_%016x", i * 2654435761u);
                made += mkdirat(dfd, id, 0700) == 0;
        }
        if (dfd >= 0)
                CHECK(made == count && mkdirat(dfd, "names", 0700) == 0 &&
                      mkdirat(dfd, "sb_short", 0700) == 0);
        return dfd;
}

static void ids_dir_remove(int dfd, const char *path)
{
        size_t n;
        char(*all)[SESSION_ID_LEN + 1] = session_ids_in_dir(dfd, &n);
        for (size_t i = 0; all && i < n; i++)
                (void)unlinkat(dfd, all[i], AT_REMOVEDIR);
        free(all);
        (void)unlinkat(dfd, "names", AT_REMOVEDIR);
        (void)unlinkat(dfd, "sb_short", AT_REMOVEDIR);
        close(dfd);
        (void)rmdir(path);
}

/* Whether got holds n distinct ids that the directory has. */
static bool sample_ok(int dfd, char (*got)[SESSION_ID_LEN + 1], size_t n)
{
        for (size_t i = 0; got && i < n; i++) {
                struct stat st;
                if (!session_id_valid(got[i]) || fstatat(dfd, got[i], &st, 0) < 0)
                        return false;
                for (size_t k = 0; k < i; k++)
                        if (strcmp(got[i], got[k]) == 0)
                                return false;
        }
        return got != NULL;
}

/* A cgroup file system this process may make cgroups in (root), or NULL. */
static const char *cgroup_base(void)
{
        static const char *const bases[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup",
                                            "/sys/fs/cgroup/pids"};
        for (size_t i = 0; i < 3; i++) {
                struct statfs sf;
                if (statfs(bases[i], &sf) == 0 &&
                    (sf.f_type == CGROUP2_SUPER_MAGIC || sf.f_type == CGROUP_SUPER_MAGIC) &&
                    access(bases[i], W_OK) == 0)
                        return bases[i];
        }
        return NULL;
}

/* 30 samples of 64 from a directory of 300 ids: distinct ids that it has, starting at >= 10
 * different ones; all 5 of a directory of 5; every one with max 0. */
static void check_sample(const char *base)
{
        char path[PATH_MAX];
        int dfd = ids_dir(base, path, sizeof(path), 300);
        CHECK(dfd >= 0);
        char first[30][SESSION_ID_LEN + 1];
        size_t distinct = 0, n = 0;
        for (int round = 0; round < 30; round++) {
                char(*got)[SESSION_ID_LEN + 1] = session_ids_sample(dfd, 64, &n);
                CHECK(n == 64 && sample_ok(dfd, got, n));
                bool seen = false;
                for (size_t k = 0; got && k < distinct; k++)
                        seen |= strcmp(first[k], got[0]) == 0;
                if (got && !seen)
                        memcpy(first[distinct++], got[0], SESSION_ID_LEN + 1);
                free(got);
        }
        printf("# %s: %zu different first ids in 30 samples\n", base, distinct);
        CHECK(distinct >= 10);
        char(*all)[SESSION_ID_LEN + 1] = session_ids_sample(dfd, 0, &n);
        CHECK(n == 300 && sample_ok(dfd, all, n));
        free(all);
        ids_dir_remove(dfd, path);
        dfd = ids_dir(base, path, sizeof(path), 5);
        for (int round = 0; round < 20; round++) {
                char(*got)[SESSION_ID_LEN + 1] = session_ids_sample(dfd, 64, &n);
                CHECK(n == 5 && sample_ok(dfd, got, n));
                free(got);
        }
        ids_dir_remove(dfd, path);
}

/*
 * session_ids_sample on ext4 (/tmp here), tmpfs (/dev/shm: read whole, a position there is no
 * random start) and a cgroup file system (read from a random position, as far as it takes;
 * root only: the case is named skipped otherwise).
 */
static void test_ids_sample(void)
{
        check_sample("/tmp");
        if (access("/dev/shm", W_OK) == 0)
                check_sample("/dev/shm");
        const char *cg = cgroup_base();
        if (cg)
                check_sample(cg);
        else
                printf("ok %d # SKIP no cgroup file system writable here\n", ++unit_n);
}

/* Field 22 of /proc/self/stat, counted here independently (comm has no ')' for this test). */
static void test_proc_start_time(void)
{
        FILE *f = fopen("/proc/self/stat", "re");
        char line[4096] = "";
        CHECK(f && fgets(line, sizeof(line), f));
        if (f)
                fclose(f);
        char *p = strrchr(line, ')');
        long long want = -1;
        int field = 2;
        for (char *t = strtok(p ? p + 1 : line, " "); t; t = strtok(NULL, " "))
                if (++field == 22)
                        want = atoll(t);
        CHECK(want > 0);
        CHECK(proc_start_time(getpid()) == want);
        struct cmd_proc me = cmd_proc_self();
        CHECK(cmd_proc_alive(&me));
        me.start++;
        CHECK(!cmd_proc_alive(&me));
}

static void test_cmds(void)
{
        CHECK(cmd_id_valid("c1"));
        CHECK(cmd_id_valid("c999999999"));
        CHECK(!cmd_id_valid("c0"));
        CHECK(!cmd_id_valid("c01"));
        CHECK(!cmd_id_valid("c1000000000"));
        CHECK(!cmd_id_valid("c"));
        CHECK(!cmd_id_valid("../c1"));
        CHECK(!cmd_id_valid("c1/.."));
        CHECK(!cmd_id_valid("C1"));
        CHECK(!cmd_id_valid(""));
        CHECK(!cmd_id_valid(NULL));

        char dir[] = "/tmp/sbx-unit-cmds-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        int sessfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int cmdsfd = cmds_dir_open(sessfd, true);
        CHECK(cmdsfd >= 0);
        unsigned n1 = 0, n2 = 0;
        int fd1 = -1, fd2 = -1;
        CHECK(cmd_dir_make(cmdsfd, &n1, &fd1) == 0 && n1 == 1);
        CHECK(cmd_dir_make(cmdsfd, &n2, &fd2) == 0 && n2 == 2);
        struct cmd_state s = {.running = true,
                              .exit_code = 137,
                              .timed_out = true,
                              .started_ms = 1700000000123,
                              .ended_ms = 1700000001123,
                              .cap = 8 << 20,
                              .keeper = {.pid = 42, .start = 7},
                              .reaper = {.pid = 43, .start = 8}};
        snprintf(s.error, sizeof(s.error), "no\nnewline");
        CHECK(cmd_state_write(fd1, &s) == 0);
        struct cmd_state r;
        CHECK(cmd_state_read(fd1, &r) == 0);
        CHECK(r.running && r.exit_code == 137 && r.timed_out && r.started_ms == s.started_ms &&
              r.ended_ms == s.ended_ms && r.cap == s.cap && r.keeper.pid == 42 &&
              r.keeper.start == 7 && r.reaper.pid == 43 && r.runner.pid == 0);
        CHECK(strcmp(r.error, "no newline") == 0);
        CHECK(cmd_state_read(fd2, &r) == -ENOENT);
        /* a removed command's number is not given again while a newer one is kept */
        CHECK(cmd_dir_remove(cmdsfd, "c1") == 0);
        unsigned n3 = 0;
        int fd3 = -1;
        CHECK(cmd_dir_make(cmdsfd, &n3, &fd3) == 0 && n3 == 3);
        close(fd1);
        close(fd2);
        close(fd3);
        close(cmdsfd);
        cmds_remove_all(sessfd); /* no keeper recorded: only the files go */
        CHECK(faccessat(sessfd, CMDS_DIR, F_OK, 0) < 0);
        close(sessfd);
        CHECK(rmdir(dir) == 0);
}

int main(void)
{
        test_ids();
        test_ids_in_dir();
        test_ids_sample();
        test_names();
        test_state_roundtrip();
        test_state_rejects();
        test_state_file();
        test_env();
        test_proc_start_time();
        test_cmds();
        return unit_done();
}
