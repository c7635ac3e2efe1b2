/* SPDX-License-Identifier: MIT */
/*
 * sbx cp's stream unpacked in a temp dir: a tree comes out whole with its modes, or not at all,
 * whatever the stream says (a second top entry, an entry twice, a bad type); and the parent
 * directories that write makes are removed again exactly down to what was there.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/common.h"
#include "ops/cpstream-internal.h"
#include "ops/cpstream.h"
#include "unit.h"

static struct sbx_error err;

/* The entries of dir, sorted, one a line ("" when empty). */
static const char *entries(const char *dir)
{
        static char b[4096];
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);
        b[0] = '\0';
        for (int i = 0; i < n; i++) {
                if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
                        snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s\n", names[i]->d_name);
                free(names[i]);
        }
        if (n >= 0)
                free(names);
        return b;
}

/* Append one record to s. */
static void rec(struct buf *s, char type, const char *path, const char *data)
{
        struct cp_rec r = {type, 0755, (uint32_t)strlen(path), data ? strlen(data) : 0};
        buf_append(s, &r, sizeof(r));
        buf_append(s, path, strlen(path));
        if (data)
                buf_append(s, data, strlen(data));
}

static int unpack(const struct buf *s, const char *dst)
{
        uint64_t bytes;
        err = (struct sbx_error){0};
        return cp_unpack(s->data, s->len, dst, NULL, &bytes, &err);
}

static void test_round_trip(void)
{
        mode_t um = umask(022);
        mkdir("src", 0755);
        mkdir("src/ro", 0755);
        int fd = open("src/ro/f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
        CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
        close(fd);
        CHECK(symlink("ro/f", "src/l") == 0);
        chmod("src/ro", 0555);
        chmod("src", 0777); /* the umask applies: 0755 */
        _cleanup_buf_ struct buf s = {0};
        err = (struct sbx_error){0};
        CHECK(cp_pack("src", NULL, CP_MAX_BYTES, &s, &err) == 0);
        mkdir("d1", 0755);
        CHECK(unpack(&s, "d1/copy") == 0);
        CHECK(unpack(&s, "d1") == 0); /* an existing directory: under the source's name */
        CHECK_STR(entries("d1"), "copy\nsrc\n");
        struct stat st;
        CHECK(stat("d1/copy", &st) == 0 && (st.st_mode & 07777) == 0755);
        CHECK(stat("d1/src/ro", &st) == 0 && (st.st_mode & 07777) == 0555);
        CHECK(stat("d1/copy/ro/f", &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_size == 5);
        char t[16] = "";
        CHECK(readlink("d1/copy/l", t, sizeof(t)) == 4 && !memcmp(t, "ro/f", 4));
        /* an existing destination: refused before anything is made, nothing replaced */
        CHECK(unpack(&s, "d1") < 0);
        CHECK_STR(err.code, "exists");
        CHECK_STR(err.message, "cannot copy to 'd1': 'src' exists");
        CHECK(unpack(&s, "d1/copy/l") < 0); /* a link to a file is not followed into */
        CHECK_STR(err.message, "cannot copy to 'd1/copy/l': 'l' exists");
        CHECK_STR(entries("d1"), "copy\nsrc\n");
        CHECK_STR(entries("d1/copy"), "l\nro\n");
        umask(um);
}

static void test_hostile_streams(void)
{
        mkdir("d2", 0755);
        _cleanup_buf_ struct buf two = {0}, twice = {0}, untyped = {0}, deep = {0};
        rec(&two, 'd', "a", NULL); /* a second top entry beside the first */
        rec(&two, 'f', "a/x", "x");
        rec(&two, 'f', "b", "b");
        CHECK(unpack(&two, "d2/") < 0);
        CHECK_STR(err.message, "a malformed copy stream");
        rec(&twice, 'd', "a", NULL);
        rec(&twice, 'f', "a/x", "1");
        rec(&twice, 'f', "a/x", "2");
        CHECK(unpack(&twice, "d2/") < 0);
        CHECK_STR(err.message, "cannot copy to 'd2/': 'a/x' exists");
        rec(&untyped, 'd', "a", NULL);
        rec(&untyped, '\0', "a/x", "x");
        CHECK(unpack(&untyped, "d2/named") < 0);
        CHECK_STR(err.message, "a malformed copy stream");
        /* deeper than any packed tree (its removal is bounded as deep) */
        _cleanup_buf_ struct buf p = {0};
        buf_puts(&p, "a");
        rec(&deep, 'd', "a", NULL);
        for (int i = 0; i < CP_MAX_DEPTH + 2; i++) {
                buf_puts(&p, "/a");
                rec(&deep, 'd', p.data, NULL);
        }
        CHECK(unpack(&deep, "d2/") < 0);
        CHECK_STR(err.message, "a malformed copy stream");
        CHECK_STR(entries("d2"), ""); /* no temporary entry stays */
}

static void test_mkdirs(void)
{
        size_t kept = 0;
        mkdir("m", 0755);
        CHECK(ops_mkdirs("m/a//b/c/", &kept) == 0);
        CHECK(kept == 1);
        ops_rmdirs("m/a//b/c/", kept);
        CHECK_STR(entries("m"), "");
        CHECK(ops_mkdirs("m/a", &kept) == 0 && kept == 1);
        CHECK(ops_mkdirs("m/a/b", &kept) == 0 && kept == 3);
        CHECK(close(open("m/a/b/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == 0);
        ops_rmdirs("m/a/b", 1); /* not empty: stays, and so do its parents */
        CHECK_STR(entries("m/a"), "b\n");
        /* a failure after making some: what was made goes again */
        char longname[512] = "m/new/";
        memset(longname + 6, 'x', 300);
        CHECK(ops_mkdirs(longname, &kept) == -ENAMETOOLONG);
        CHECK_STR(entries("m"), "a\n");
}

int main(void)
{
        char tmpl[] = "/tmp/sbx-test-cp-XXXXXX";
        if (!mkdtemp(tmpl) || chdir(tmpl) < 0)
                return 1;
        test_round_trip();
        test_hostile_streams();
        test_mkdirs();
        unit_scratch_remove(tmpl);
        return unit_done();
}
