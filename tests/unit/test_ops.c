/* SPDX-License-Identifier: MIT */
/*
 * The file operations called directly (as the confined child calls them) in a temp dir:
 * exact output bytes for every format rule, and every error path.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/common.h"
#include "ops/ops.h"
#include "unit.h"

static char cwd[4096];
static struct sbx_error err;
static struct buf out;

/* Run an op; returns its output ("" when none); err holds its error. */
static const char *run(int (*fn)(void *, struct buf *, struct sbx_error *), void *req)
{
        out.len = 0;
        if (out.data)
                out.data[0] = '\0';
        err = (struct sbx_error){0};
        int r = fn(req, &out, &err);
        if ((r < 0) != (err.exit_code != 0))
                printf("# inconsistent: r=%d exit=%d\n", r, err.exit_code);
        return out.data ? out.data : "";
}

static void put(const char *path, const char *data, size_t n)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, n) != (ssize_t)n)
                printf("# cannot write %s\n", path);
        close(fd);
}

static void puts_file(const char *path, const char *s)
{
        put(path, s, strlen(s));
}

static char *slurp(const char *path)
{
        static char b[1 << 16];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);
        close(fd);
        b[n < 0 ? 0 : n] = '\0';
        return b;
}

static void set_mtime(const char *path, time_t t)
{
        struct timespec ts[2] = {{.tv_sec = t}, {.tv_sec = t}};
        utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

/* Formatted strings that live until the end of the test (freed by fmt_free_all). */
static char **fmt_all;
static size_t fmt_n;

static const char *fmt(const char *f, ...) _printf_(1, 2);
static const char *fmt(const char *f, ...)
{
        char *p = NULL;
        va_list ap;
        va_start(ap, f);
        if (vasprintf(&p, f, ap) < 0)
                p = NULL;
        va_end(ap);
        char **v = realloc(fmt_all, (fmt_n + 1) * sizeof(char *));
        if (!v || !p)
                abort();
        fmt_all = v;
        fmt_all[fmt_n++] = p;
        return p;
}

static void fmt_free_all(void)
{
        for (size_t i = 0; i < fmt_n; i++)
                free(fmt_all[i]);
        free(fmt_all);
}

static char *repeat(char c, size_t n)
{
        char *p = malloc(n + 1);
        memset(p, c, n);
        p[n] = '\0';
        return p;
}

/* ---- ls ---------------------------------------------------------------------------------- */

static void test_ls(void)
{
        struct stat st;
        mkdir("ls", 0755);
        mkdir("ls/sub", 0755);
        puts_file("ls/b.txt", "hello");
        puts_file("ls/.hidden", "");
        CHECK(symlink("target-x", "ls/link") == 0);
        mkfifo("ls/fifo", 0644);
        set_mtime("ls/sub", 0);
        set_mtime("ls/b.txt", 1700000000);
        set_mtime("ls/.hidden", 1700000001);
        set_mtime("ls/link", 86400);
        set_mtime("ls/fifo", 1);
        lstat("ls/sub", &st);

        struct ops_ls_req rq = {.path = "ls"};
        CHECK_STR(run(ops_ls, &rq), fmt("- 0 2023-11-14T22:13:21Z .hidden\n"
                                        "- 5 2023-11-14T22:13:20Z b.txt\n"
                                        "? 0 1970-01-01T00:00:01Z fifo\n"
                                        "l 8 1970-01-02T00:00:00Z link\n"
                                        "d %lld 1970-01-01T00:00:00Z sub\n",
                                        (long long)st.st_size));

        rq = (struct ops_ls_req){.path = "ls/sub", .json = true};
        CHECK_STR(run(ops_ls, &rq), "[]\n");
        mkdir("ls/sub/d", 0755);
        set_mtime("ls/sub/d", 0);
        lstat("ls/sub/d", &st);
        rq.path = "ls//sub/./";
        CHECK_STR(run(ops_ls, &rq), fmt("[{\"path\":\"%s/ls/sub/d\",\"is_dir\":true,\"size\":%lld,"
                                        "\"modified_at\":\"1970-01-01T00:00:00Z\"}]\n",
                                        cwd, (long long)st.st_size));

        /* a file operand prints its own line; a symlink operand to a file is not followed */
        rq = (struct ops_ls_req){.path = "ls/b.txt"};
        CHECK_STR(run(ops_ls, &rq), "- 5 2023-11-14T22:13:20Z ls/b.txt\n");
        rq.path = "ls/link"; /* dangling */
        CHECK_STR(run(ops_ls, &rq), "l 8 1970-01-02T00:00:00Z ls/link\n");
        /* a symlink to a directory as PATH is followed */
        CHECK(symlink("ls/sub", "lsdirlink") == 0);
        rq.path = "lsdirlink";
        CHECK(strstr(run(ops_ls, &rq), " d\n") != NULL);

        rq.path = "nope";
        run(ops_ls, &rq);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "not_found");
        CHECK_STR(err.message, "failed to list 'nope': No such file or directory");

        /* far-future and pre-1000 times stay in the fixed format */
        char t[21];
        ops_format_time(400000000000LL, t);
        CHECK_STR(t, "9999-12-31T23:59:59Z");
        ops_format_time(-40000000000LL, t);
        CHECK_STR(t, "1000-01-01T00:00:00Z");
}

/* ---- read -------------------------------------------------------------------------------- */

static const char *rd(const char *path, uint64_t off, uint64_t lim)
{
        struct ops_read_req rq = {.path = path, .offset = off, .limit = lim};
        return run(ops_read, &rq);
}

static void test_read_basic(void)
{
        puts_file("r1", "a\nb\nc\n");
        CHECK_STR(rd("r1", 0, 2000), "     1\ta\n     2\tb\n     3\tc\n");
        CHECK_STR(rd("r1", 1, 1), "     2\tb\n");
        CHECK_STR(rd("r1", 2, 5), "     3\tc\n");
        rd("r1", 3, 1);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "limit");
        CHECK_STR(err.message, "Line offset 3 exceeds file length (3 lines)");
        rd("r1", 99, 1);
        CHECK_STR(err.message, "Line offset 99 exceeds file length (3 lines)");

        puts_file("r2", "no newline");
        CHECK_STR(rd("r2", 0, 2000), "     1\tno newline\n");
        puts_file("r3", "x\r\ny\rz\r\n\r\nlast");
        CHECK_STR(rd("r3", 0, 2000), "     1\tx\n     2\ty\n     3\tz\n     4\t\n     5\tlast\n");
        puts_file("r4", "\n\n");
        CHECK_STR(rd("r4", 0, 2000), "     1\t\n     2\t\n");
        puts_file("r5", "a\r");
        CHECK_STR(rd("r5", 0, 2000), "     1\ta\n");
        CHECK_STR(rd("r5", 0, 2000), "     1\ta\n");

        puts_file("empty", "");
        CHECK_STR(rd("empty", 0, 2000), "System reminder: File exists but has empty contents\n");
        CHECK(err.exit_code == 0);
        rd("empty", 1, 2000);
        CHECK_STR(err.message, "Line offset 1 exceeds file length (0 lines)");

        /* lines 3-5 were left out by --limit: "truncated" tells the caller more exist */
        struct ops_read_req rq = {.path = "r3", .limit = 2, .json = true};
        CHECK_STR(run(ops_read, &rq),
                  fmt("{\"path\":\"%s/r3\",\"content\":\"     1\\tx\\n     2\\ty\\n\","
                      "\"lines\":5,\"truncated\":true}\n",
                      cwd));
        /* a window that reaches the end is complete */
        rq.offset = 3;
        CHECK(strstr(run(ops_read, &rq), "\"lines\":5,\"truncated\":false}") != NULL);
        rq.offset = 0;
        rq.path = "empty";
        CHECK_STR(
            run(ops_read, &rq),
            fmt("{\"path\":\"%s/empty\",\"content\":\"\",\"lines\":0,\"truncated\":false}\n", cwd));
}

static void test_read_errors(void)
{
        mkdir("rdir", 0755);
        rd("rdir", 0, 10);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "not_found");
        CHECK_STR(err.message, "failed to read 'rdir': Is a directory");
        rd("missing", 0, 10);
        CHECK_STR(err.code, "not_found");
        CHECK_STR(err.message, "failed to read 'missing': No such file or directory");
        mkfifo("rfifo", 0644);
        rd("rfifo", 0, 10); /* no hang */
        CHECK_STR(err.code, "not_text");
        CHECK_STR(err.message, "failed to read 'rfifo': not a regular file");
        rd("/dev/zero", 0, 10);
        CHECK_STR(err.code, "not_text");

        put("bin", "ab\0cd", 5);
        rd("bin", 0, 10);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "not_text");
        CHECK_STR(err.message, "'bin' is not a text file (use --binary to read it)");
        puts_file("latin1", "caf\xe9\n");
        rd("latin1", 0, 10);
        CHECK_STR(err.code, "not_text");

        /* a sequence cut at the 8 KiB boundary is still text; later invalid bytes are fine */
        char *big = repeat('a', 9000);
        memcpy(big + 8191, "\xc3\xa9", 2);
        big[8500] = '\xff';
        put("cut", big, 9000);
        rd("cut", 0, 1);
        CHECK(err.exit_code == 0);
        put("cutend", big, 8192); /* the file really ends inside the sequence */
        rd("cutend", 0, 1);
        CHECK_STR(err.code, "not_text");
        free(big);

        struct ops_read_req rq = {.path = "bin", .binary = true};
        CHECK_STR(run(ops_read, &rq), "YWIAY2Q=\n");
        rq.json = true;
        CHECK_STR(run(ops_read, &rq),
                  fmt("{\"path\":\"%s/bin\",\"content\":\"YWIAY2Q=\",\"lines\":1,"
                      "\"truncated\":false}\n",
                      cwd));
        char *b57 = repeat('x', 60);
        put("b60", b57, 60);
        rq = (struct ops_read_req){.path = "b60", .binary = true};
        const char *o = run(ops_read, &rq);
        CHECK(strlen(o) == 80 + 2 && o[76] == '\n'); /* 76-column lines like base64(1) */
        free(b57);
        rq.path = "empty";
        CHECK_STR(run(ops_read, &rq), "");
}

static void test_read_long_lines(void)
{
        char *l = repeat('a', 5001);
        puts_file("long1", l);
        CHECK_STR(rd("long1", 0, 10), fmt("     1\t%.5000s\n   1.1\ta\n", l));
        l[5000] = '\0';
        puts_file("long0", l); /* exactly 5000: no continuation row */
        CHECK_STR(rd("long0", 0, 10), fmt("     1\t%s\n", l));
        free(l);

        /* 12001 characters: N, N.1, N.2; a two-byte character is never split */
        char *m = malloc(20000);
        memset(m, 'b', 4999);
        memcpy(m + 4999, "\xc3\xa9", 2); /* the 5000th character */
        memset(m + 5001, 'c', 7001);
        memcpy(m + 12002, "\nend\n", 6);
        puts_file("long2", m);
        _cleanup_buf_ struct buf want = {0};
        buf_printf(&want, "     1\t%.4999s\xc3\xa9\n", m);
        buf_printf(&want, "   1.1\t%.5000s\n", m + 5001);
        buf_printf(&want, "   1.2\t%.2001s\n", m + 10001);
        buf_puts(&want, "     2\tend\n");
        CHECK_STR(rd("long2", 0, 10), want.data);
        free(m);

        /* seven-digit numbers just widen */
        char *nl = repeat('\n', 1000001);
        puts_file("many", nl);
        free(nl);
        CHECK_STR(rd("many", 999999, 5), "1000000\t\n1000001\t\n");
}

static void test_read_cap(void)
{
        /* 6000 rows of 108 bytes: 4740 fit in 500 KiB */
        _cleanup_buf_ struct buf b = {0};
        char *line = repeat('z', 100);
        for (int i = 0; i < 6000; i++)
                buf_printf(&b, "%s\n", line);
        free(line);
        put("capped", b.data, b.len);
        const char *o = rd("capped", 0, 100000);
        size_t n = strlen(o);
        const char *notice = "[Output truncated at 500 KiB: continue with a larger --offset or a "
                             "smaller --limit]\n";
        CHECK(n == 4740 * 108 + strlen(notice));
        CHECK(n > strlen(notice) && strcmp(o + n - strlen(notice), notice) == 0);
        CHECK(strncmp(o + 4739 * 108, "  4740\t", 7) == 0);

        struct ops_read_req rq = {.path = "capped", .limit = 100000, .json = true};
        o = run(ops_read, &rq);
        CHECK(strstr(o, "\"lines\":6000,\"truncated\":true}\n") != NULL);
        /* default limit 2000: not truncated */
        CHECK(strlen(rd("capped", 0, OPS_READ_DEFAULT_LIMIT)) == 2000 * 108);
}

/* ---- write ------------------------------------------------------------------------------- */

static void test_write(void)
{
        mode_t um = umask(022);
        struct ops_write_req rq = {.path = "w/deep/er/f.txt", .content = "hi\n", .len = 3};
        CHECK_STR(run(ops_write, &rq), "Wrote 3 bytes to 'w/deep/er/f.txt'\n");
        CHECK_STR(slurp("w/deep/er/f.txt"), "hi\n");
        struct stat st;
        stat("w/deep/er/f.txt", &st);
        CHECK((st.st_mode & 07777) == 0644);
        stat("w/deep", &st);
        CHECK((st.st_mode & 07777) == 0755);

        run(ops_write, &rq);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "exists");
        CHECK_STR(err.message, "Cannot write to w/deep/er/f.txt because it already exists. Read "
                               "and then make an edit, or write to a new path.");
        CHECK_STR(slurp("w/deep/er/f.txt"), "hi\n");

        CHECK(symlink("/nonexistent/target", "w/dangling") == 0);
        rq = (struct ops_write_req){.path = "w/dangling", .content = "x", .len = 1};
        run(ops_write, &rq);
        CHECK_STR(err.code, "exists");
        rq.path = "w";
        run(ops_write, &rq);
        CHECK_STR(err.code, "exists");

        rq = (struct ops_write_req){.path = "w/empty", .content = "", .len = 0, .json = true};
        CHECK_STR(run(ops_write, &rq), fmt("{\"path\":\"%s/w/empty\",\"bytes\":0}\n", cwd));
        rq = (struct ops_write_req){.path = "w/deep/er/f.txt/x", .content = "", .len = 0};
        run(ops_write, &rq);
        CHECK_STR(err.code, "not_found");
        umask(um);
}

/* ---- edit -------------------------------------------------------------------------------- */

static const char *ed(const char *path, const char *o, const char *n, bool all)
{
        struct ops_edit_req rq = {.path = path,
                                  .old_str = o,
                                  .old_len = strlen(o),
                                  .new_str = n,
                                  .new_len = strlen(n),
                                  .replace_all = all};
        return run(ops_edit, &rq);
}

static bool no_temp_left(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        bool ok = true;
        while (d && (de = readdir(d)))
                if (strncmp(de->d_name, ".sbx-edit-", 10) == 0)
                        ok = false;
        if (d)
                closedir(d);
        return ok;
}

static void test_edit(void)
{
        mkdir("e", 0755);
        puts_file("e/f", "one two two three\n");
        chmod("e/f", 0751);
        CHECK_STR(ed("e/f", "one", "ONE", false),
                  "Successfully replaced 1 instance(s) of the string in 'e/f'\n");
        CHECK_STR(slurp("e/f"), "ONE two two three\n");
        struct stat st;
        stat("e/f", &st);
        CHECK((st.st_mode & 07777) == 0751);

        ed("e/f", "two", "2", false);
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "ambiguous");
        CHECK_STR(err.message,
                  "String 'two' appears 2 times in file. Use --replace-all to replace every "
                  "instance, or provide a more specific string with surrounding context.");
        CHECK_STR(slurp("e/f"), "ONE two two three\n");
        CHECK_STR(ed("e/f", "two", "2", true),
                  "Successfully replaced 2 instance(s) of the string in 'e/f'\n");
        CHECK_STR(slurp("e/f"), "ONE 2 2 three\n");
        ed("e/f", "zzz", "y", false);
        CHECK_STR(err.code, "not_found");
        CHECK_STR(err.message, "String not found in file: 'zzz'");
        /* overlapping occurrences count left to right */
        puts_file("e/o", "aaa");
        CHECK_STR(ed("e/o", "aa", "b", true),
                  "Successfully replaced 1 instance(s) of the string in 'e/o'\n");
        CHECK_STR(slurp("e/o"), "ba");

        struct ops_edit_req rq = {.path = "e/f", .old_str = "", .old_len = 0};
        run(ops_edit, &rq);
        CHECK(err.exit_code == EXIT_USAGE);

        /* CRLF <-> LF fallback */
        puts_file("e/crlf", "a\r\nb\r\nc\r\n");
        CHECK_STR(ed("e/crlf", "a\nb\n", "x\ny\n", false),
                  "Successfully replaced 1 instance(s) of the string in 'e/crlf'\n");
        CHECK_STR(slurp("e/crlf"), "x\r\ny\r\nc\r\n");
        puts_file("e/lf", "a\nb\nc\n");
        CHECK_STR(ed("e/lf", "b\r\nc", "B\r\nC", false),
                  "Successfully replaced 1 instance(s) of the string in 'e/lf'\n");
        CHECK_STR(slurp("e/lf"), "a\nB\nC\n");
        ed("e/lf", "q\nr", "s", false);
        CHECK_STR(err.message, "String not found in file: 'q\nr'");

        /* setuid/setgid dropped, mode otherwise kept */
        puts_file("e/suid", "x");
        chmod("e/suid", 04755);
        ed("e/suid", "x", "y", false);
        stat("e/suid", &st);
        CHECK((st.st_mode & 07777) == 0755);

        /* through a symlink: the target changes, the link stays */
        puts_file("e/target", "old");
        CHECK(symlink("target", "e/link") == 0);
        ed("e/link", "old", "new", false);
        CHECK(err.exit_code == 0);
        CHECK_STR(slurp("e/target"), "new");
        CHECK(lstat("e/link", &st) == 0 && S_ISLNK(st.st_mode));
        CHECK(no_temp_left("e"));

        ed("e", "a", "b", false);
        CHECK_STR(err.code, "not_found");
        ed("e/none", "a", "b", false);
        CHECK_STR(err.code, "not_found");
        mkfifo("e/fifo", 0644);
        ed("e/fifo", "a", "b", false);
        CHECK_STR(err.code, "not_text");

        rq = (struct ops_edit_req){.path = "e/target",
                                   .old_str = "new",
                                   .old_len = 3,
                                   .new_str = "z",
                                   .new_len = 1,
                                   .json = true};
        CHECK_STR(run(ops_edit, &rq), fmt("{\"path\":\"%s/e/target\",\"replacements\":1}\n", cwd));
        /* a long OLD is shortened in the message so the advice still fits */
        char *lo = repeat('q', 2000);
        ed("e/target", lo, "x", false);
        CHECK(strlen(err.message) == strlen("String not found in file: ''...") + 768);
        free(lo);
}

/* ---- glob -------------------------------------------------------------------------------- */

static const char *gl(const char *pattern, const char *dir)
{
        struct ops_glob_req rq = {.pattern = pattern, .dir = dir};
        return run(ops_glob, &rq);
}

static void test_glob(void)
{
        mkdir("g", 0755);
        mkdir("g/src", 0755);
        mkdir("g/src/sub", 0755);
        mkdir("g/.hid", 0755);
        puts_file("g/top.c", "");
        puts_file("g/src/a.c", "");
        puts_file("g/src/b.h", "");
        puts_file("g/src/.d.c", "");
        puts_file("g/src/sub/c.c", "");
        puts_file("g/.hid/x.c", "");
        CHECK(symlink("src", "g/lnk") == 0);
        set_mtime("g/top.c", 100);
        set_mtime("g/src/a.c", 300);
        set_mtime("g/src/b.h", 200);
        set_mtime("g/src/sub/c.c", 300); /* tie with a.c: path order */
        set_mtime("g/lnk", 50);

        const char *d = fmt("%s/g", cwd);
        CHECK_STR(gl("**/*.c", "g"), fmt("%s/src/a.c\n%s/src/sub/c.c\n%s/top.c\n", d, d, d));
        CHECK_STR(gl("*.c", "g"), fmt("%s/top.c\n", d));
        CHECK_STR(gl("src/*.{c,h}", "g"), fmt("%s/src/a.c\n%s/src/b.h\n", d, d));
        CHECK_STR(gl(".hid/*.c", "g"), fmt("%s/.hid/x.c\n", d));
        CHECK_STR(gl("src/.*", "g"), fmt("%s/src/.d.c\n", d));
        CHECK_STR(gl("lnk/*", "g"), "");              /* never followed into */
        CHECK_STR(gl("l*", "g"), fmt("%s/lnk\n", d)); /* but listed */
        CHECK_STR(gl("src/", "g"), fmt("%s/src\n", d));
        CHECK_STR(gl("*/", "g"), fmt("%s/src\n", d)); /* dirs only: not the symlink */
        CHECK_STR(gl("nothing*", "g"), "");
        CHECK(err.exit_code == 0);
        CHECK_STR(gl("g/src/sub/*.c", NULL), fmt("%s/src/sub/c.c\n", d));
        CHECK_STR(gl("../top.c", "g/src"), fmt("%s/top.c\n", d));
        CHECK_STR(gl(fmt("%s/src/*.h", d), "/nonexistent"), fmt("%s/src/b.h\n", d));

        gl("*", "g/missing");
        CHECK(err.exit_code == EXIT_FAILED);
        CHECK_STR(err.code, "not_found");
        gl("", "g");
        CHECK(err.exit_code == EXIT_USAGE);

        struct ops_glob_req rq = {.pattern = "src/b.h", .dir = "g", .json = true};
        CHECK_STR(run(ops_glob, &rq), fmt("[{\"path\":\"%s/src/b.h\",\"is_dir\":false,\"size\":0,"
                                          "\"modified_at\":\"1970-01-01T00:03:20Z\"}]\n",
                                          d));
        rq.pattern = "none";
        CHECK_STR(run(ops_glob, &rq), "[]\n");
}

static void test_glob_cap(void)
{
        mkdir("gc", 0755);
        for (int i = 0; i < 10005; i++) {
                const char *p = fmt("gc/f%05d", i);
                puts_file(p, "");
                set_mtime(p, 1000000 + i);
        }
        const char *o = gl("*", "gc");
        const char *tail = "[Results truncated at 10000 entries]\n";
        size_t lines = 0;
        for (const char *p = o; *p; p++)
                lines += *p == '\n';
        CHECK(lines == 10001);
        CHECK(strlen(o) > strlen(tail) && strcmp(o + strlen(o) - strlen(tail), tail) == 0);
        CHECK(strncmp(o, fmt("%s/gc/f10004\n", cwd), strlen(cwd) + 11) == 0); /* newest */
        CHECK(strstr(o, "/gc/f00004\n") == NULL);                             /* dropped */
        CHECK(strstr(o, "/gc/f00005\n") != NULL);
}

/* ---- grep ------------------------------------------------------------------------------- */

static struct ops_grep_req gq(const char *pattern, const char *path, enum ops_grep_mode mode)
{
        return (struct ops_grep_req){.pattern = pattern, .path = path, .mode = mode};
}

static void test_grep_modes(void)
{
        mkdir("gr", 0755);
        mkdir("gr/sub", 0755);
        mkdir("gr/.git", 0755);
        puts_file("gr/a.txt", "hello\nworld\nhello again\n");
        puts_file("gr/b.md", "nothing here\n");
        put("gr/bin", "hello\0", 6);
        puts_file("gr/sub/c.txt", "say hello\n");
        puts_file("gr/.git/config", "hello\n");
        CHECK(symlink("a.txt", "gr/zlink") == 0);
        const char *d = fmt("%s/gr", cwd);

        struct ops_grep_req rq = gq("hel+o", "gr", OPS_GREP_FILES);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt\n%s/sub/c.txt\n", d, d));
        rq.mode = OPS_GREP_CONTENT;
        CHECK_STR(
            run(ops_grep, &rq),
            fmt("%s/a.txt:1:hello\n%s/a.txt:3:hello again\n%s/sub/c.txt:1:say hello\n", d, d, d));
        rq.mode = OPS_GREP_COUNT;
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt:2\n%s/sub/c.txt:1\n", d, d));

        rq = gq("xyzzy", "gr", OPS_GREP_FILES);
        CHECK_STR(run(ops_grep, &rq), "");
        CHECK(err.exit_code == EXIT_FAILED && err.message[0] == '\0'); /* silent exit 1 */
        rq.json = true;
        CHECK_STR(run(ops_grep, &rq), "[]\n");
        CHECK(err.exit_code == 0);

        rq = gq("hello", "gr", OPS_GREP_FILES);
        rq.json = true;
        CHECK_STR(run(ops_grep, &rq), fmt("[\"%s/a.txt\",\"%s/sub/c.txt\"]\n", d, d));
        rq.mode = OPS_GREP_CONTENT;
        CHECK_STR(run(ops_grep, &rq),
                  fmt("[{\"path\":\"%s/a.txt\",\"line\":1,\"text\":\"hello\"},"
                      "{\"path\":\"%s/a.txt\",\"line\":3,\"text\":\"hello again\"},"
                      "{\"path\":\"%s/sub/c.txt\",\"line\":1,\"text\":\"say hello\"}]\n",
                      d, d, d));
        rq.mode = OPS_GREP_COUNT;
        CHECK_STR(run(ops_grep, &rq),
                  fmt("[{\"path\":\"%s/a.txt\",\"count\":2},{\"path\":\"%s/sub/c.txt\","
                      "\"count\":1}]\n",
                      d, d));

        /* -i, -F, --glob, a file as PATH */
        rq = gq("HELLO A", "gr", OPS_GREP_CONTENT);
        rq.caseless = true;
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt:3:hello again\n", d));
        puts_file("gr/sub/re.txt", "a.b\naxb\n");
        rq = gq("a.b", "gr/sub", OPS_GREP_CONTENT);
        rq.fixed = true;
        CHECK_STR(run(ops_grep, &rq), fmt("%s/sub/re.txt:1:a.b\n", d));
        rq = gq("hello", "gr", OPS_GREP_FILES);
        rq.glob = "*.txt";
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt\n%s/sub/c.txt\n", d, d));
        rq.glob = "sub/*.txt";
        CHECK_STR(run(ops_grep, &rq), fmt("%s/sub/c.txt\n", d));
        rq.glob = "*.{md,txt}";
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt\n%s/sub/c.txt\n", d, d));
        rq = gq("world", "gr/a.txt", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/a.txt:2:world\n", d));
        rq = gq("hello", "gr/bin", OPS_GREP_FILES); /* binary: skipped even when named */
        run(ops_grep, &rq);
        CHECK(err.exit_code == EXIT_FAILED);

        rq = gq("a(b", "gr", OPS_GREP_FILES);
        run(ops_grep, &rq);
        CHECK(err.exit_code == EXIT_USAGE);
        CHECK_STR(err.code, "usage");
        CHECK(strncmp(err.message, "invalid regular expression 'a(b': missing closing parenthesis",
                      61) == 0);
        CHECK(ops_grep_validate(&rq, &err) < 0);
        rq = gq("x", "gr/none", OPS_GREP_FILES);
        run(ops_grep, &rq);
        CHECK_STR(err.code, "not_found");

        enum ops_grep_mode m;
        CHECK(ops_grep_mode_parse("content", &m) == 0 && m == OPS_GREP_CONTENT);
        CHECK(ops_grep_mode_parse("files", &m) == -EINVAL);
}

static void test_grep_context(void)
{
        mkdir("cx", 0755);
        puts_file("cx/f", "l1\nl2\nM3\nl4\nl5\nl6\nl7\nM8\nl9\nl10\n");
        puts_file("cx/g", "M1\nl2\n");
        const char *f = fmt("%s/cx/f", cwd), *g = fmt("%s/cx/g", cwd);
        struct ops_grep_req rq = gq("^M", "cx", OPS_GREP_CONTENT);
        rq.before = rq.after = 1;
        CHECK_STR(run(ops_grep, &rq),
                  fmt("%s-2-l2\n%s:3:M3\n%s-4-l4\n--\n%s-7-l7\n%s:8:M8\n%s-9-l9\n--\n"
                      "%s:1:M1\n%s-2-l2\n",
                      f, f, f, f, f, f, g, g));
        rq.before = rq.after = 2; /* adjacent groups merge */
        rq.path = "cx/f";
        CHECK_STR(run(ops_grep, &rq),
                  fmt("%s-1-l1\n%s-2-l2\n%s:3:M3\n%s-4-l4\n%s-5-l5\n%s-6-l6\n%s-7-l7\n"
                      "%s:8:M8\n%s-9-l9\n%s-10-l10\n",
                      f, f, f, f, f, f, f, f, f, f));
        rq = gq("M3", "cx/f", OPS_GREP_CONTENT);
        rq.after = 1;
        rq.json = true;
        CHECK_STR(run(ops_grep, &rq),
                  fmt("[{\"path\":\"%s\",\"line\":3,\"text\":\"M3\"},{\"path\":\"%s\","
                      "\"line\":4,\"text\":\"l4\",\"context\":true}]\n",
                      f, f));
        /* a match in the after-context extends it */
        puts_file("cx/h", "M\nM\nx\ny\n");
        rq = gq("M", "cx/h", OPS_GREP_CONTENT);
        rq.after = 1;
        const char *h = fmt("%s/cx/h", cwd);
        CHECK_STR(run(ops_grep, &rq), fmt("%s:1:M\n%s:2:M\n%s-3-x\n", h, h, h));
}

static void test_grep_lines(void)
{
        mkdir("gl", 0755);
        puts_file("gl/crlf", "foo\r\nbar\r\n");
        puts_file("gl/multi", "a\nb\n");
        const char *c = fmt("%s/gl/crlf", cwd);
        struct ops_grep_req rq = gq("foo$", "gl/crlf", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s:1:foo\n", c));
        rq = gq("a\\sb", "gl/multi", OPS_GREP_FILES); /* never across a line end */
        run(ops_grep, &rq);
        CHECK(err.exit_code == EXIT_FAILED);
        rq = gq("[^x]b", "gl/multi", OPS_GREP_CONTENT);
        run(ops_grep, &rq);
        CHECK(err.exit_code == EXIT_FAILED);
        rq = gq("^$", "gl/multi", OPS_GREP_COUNT); /* no empty line after the last "\n" */
        run(ops_grep, &rq);
        CHECK(err.exit_code == EXIT_FAILED);
        puts_file("gl/nonl", "x\nlast");
        rq = gq("t$", "gl/nonl", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/gl/nonl:2:last\n", cwd));

        /* long lines are cut */
        char *l = repeat('k', 5000);
        puts_file("gl/long", l);
        rq = gq("k", "gl/long", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/gl/long:1:%.4096s[...]\n", cwd, l));
        free(l);
        /* invalid UTF-8 is searched, not fatal */
        puts_file("gl/latin", "caf\xe9 ok\n");
        rq = gq("ok", "gl/latin", OPS_GREP_FILES);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/gl/latin\n", cwd));
}

static void test_grep_big(void)
{
        /* 3 MiB over the 1 MiB buffer: line numbers and context across buffer boundaries */
        mkdir("gb", 0755);
        _cleanup_buf_ struct buf b = {0};
        for (int i = 1; i <= 250000; i++)
                buf_printf(&b, "line %d\n", i);
        put("gb/big", b.data, b.len);
        const char *p = fmt("%s/gb/big", cwd);
        struct ops_grep_req rq = gq("^line", "gb", OPS_GREP_COUNT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s:250000\n", p));
        /* the line that crosses the first 1 MiB boundary, and its context */
        size_t off = 1u << 20;
        while (b.data[off - 1] != '\n')
                off--;
        int n = atoi(b.data + off + 5); /* the first line of the second window */
        char pat[64];
        snprintf(pat, sizeof(pat), "^line %d$", n);
        rq = gq(pat, "gb/big", OPS_GREP_CONTENT);
        rq.before = 3;
        rq.after = 1;
        CHECK_STR(run(ops_grep, &rq),
                  fmt("%s-%d-line %d\n%s-%d-line %d\n%s-%d-line %d\n%s:%d:line %d\n%s-%d-line %d\n",
                      p, n - 3, n - 3, p, n - 2, n - 2, p, n - 1, n - 1, p, n, n, p, n + 1, n + 1));
        rq = gq("^line 249999$", "gb/big", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s:249999:line 249999\n", p));

        /* the 10,000 result cap */
        rq = gq("^line", "gb/big", OPS_GREP_CONTENT);
        const char *o = run(ops_grep, &rq);
        const char *tail = "[Results truncated at 10000 entries]\n";
        size_t lines = 0;
        for (const char *q = o; *q; q++)
                lines += *q == '\n';
        CHECK(lines == 10001);
        CHECK(strcmp(o + strlen(o) - strlen(tail), tail) == 0);
        CHECK(strstr(o, fmt("%s:10000:line 10000\n", p)) != NULL);

        /* a line longer than the buffer grows it */
        _cleanup_buf_ struct buf big = {0};
        char *l = repeat('w', 3u << 20);
        buf_printf(&big, "first\n%sNEEDLE\nlast\n", l);
        free(l);
        put("gb/longline", big.data, big.len);
        rq = gq("NEEDLE", "gb/longline", OPS_GREP_COUNT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/gb/longline:1\n", cwd));
        rq = gq("last", "gb/longline", OPS_GREP_CONTENT);
        CHECK_STR(run(ops_grep, &rq), fmt("%s/gb/longline:3:last\n", cwd));
}

int main(void)
{
        char tmpl[] = "/tmp/sbx-test-ops-XXXXXX";
        if (!mkdtemp(tmpl) || chdir(tmpl) < 0 || !getcwd(cwd, sizeof(cwd)))
                return 1;
        test_ls();
        test_read_basic();
        test_read_errors();
        test_read_long_lines();
        test_read_cap();
        test_write();
        test_edit();
        test_glob();
        test_glob_cap();
        test_grep_modes();
        test_grep_context();
        test_grep_lines();
        test_grep_big();
        buf_freep(&out);
        fmt_free_all();
        unit_scratch_remove(tmpl);
        return unit_done();
}
