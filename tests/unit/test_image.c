/* SPDX-License-Identifier: MIT */
/* Pure parts of src/image/: digests, entry-name normalisation, references, tag file names;
 * store_rmtree on a scratch directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image-internal.h"
#include "unit.h"

static void test_digest(void)
{
        char hex[DIGEST_HEX_LEN + 1];
        digest_mem("abc", 3, hex);
        CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        digest_mem("", 0, hex);
        CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        CHECK(
            digest_parse("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                         hex) == 0);
        CHECK(
            digest_parse("sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                         hex) == -EINVAL);
        CHECK(
            digest_parse("sha256:BA7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                         hex) == -EINVAL);
        CHECK(digest_parse("sha256:../../etc/passwd", hex) == -EINVAL);
        CHECK(digest_parse(NULL, hex) == -EINVAL);
        CHECK(!digest_hex_valid("abc"));
}

static void test_clean_path(void)
{
        char out[PATH_MAX];
        CHECK(unpack_clean_path("/etc/passwd", out, sizeof(out)) == 0);
        CHECK_STR(out, "etc/passwd");
        CHECK(unpack_clean_path("./a//b/./c/", out, sizeof(out)) == 0);
        CHECK_STR(out, "a/b/c");
        CHECK(unpack_clean_path("./", out, sizeof(out)) == 0);
        CHECK_STR(out, "");
        CHECK(unpack_clean_path("a/../b", out, sizeof(out)) == -EPERM);
        CHECK(unpack_clean_path("../x", out, sizeof(out)) == -EPERM);
        CHECK(unpack_clean_path("/..", out, sizeof(out)) == -EPERM);
        CHECK(unpack_clean_path("a/..b/...", out, sizeof(out)) == 0);
        CHECK_STR(out, "a/..b/...");
        char longname[300];
        memset(longname, 'x', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        CHECK(unpack_clean_path(longname, out, sizeof(out)) == -ENAMETOOLONG);
        CHECK(unpack_clean_path("abcdef", out, 4) == -ENAMETOOLONG);
}

static void test_refs(void)
{
        char *name, *tag;
        CHECK(image_ref_split("python:3.12", &name, &tag) == 0);
        CHECK_STR(name, "python");
        CHECK_STR(tag, "3.12");
        free(name);
        free(tag);
        CHECK(image_ref_split("library/ubuntu", &name, &tag) == 0);
        CHECK_STR(name, "library/ubuntu");
        CHECK_STR(tag, "latest");
        char file[64];
        CHECK(store_tag_file(name, tag, file, sizeof(file)) == 0);
        CHECK_STR(file, "library+ubuntu:latest");
        CHECK(store_tag_file(name, tag, file, 8) == -ENAMETOOLONG);
        free(name);
        free(tag);
}

/* Under tmp: "outside/keep", and "tree": DEPTH nested "d" directories, each with a file, a
 * FIFO at the bottom, symlinks to outside/ and outside/keep halfway, 300 subdirectories
 * with a file each at the top and a 0555 directory at the bottom. */
static int make_tree(int tmp, const char *outside, int depth)
{
        if (mkdirat(tmp, "outside", 0755) < 0 || mkdirat(tmp, "tree", 0755) < 0)
                return -1;
        int k = openat(tmp, "outside/keep", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (k < 0)
                return -1;
        close(k);
        int cur = openat(tmp, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; cur >= 0 && i < 300; i++) {
                char name[32];
                snprintf(name, sizeof(name), "w%d", i);
                if (mkdirat(cur, name, 0755) < 0)
                        return -1;
                snprintf(name, sizeof(name), "w%d/f", i);
                int f = openat(cur, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (f < 0)
                        return -1;
                close(f);
        }
        for (int i = 0; cur >= 0 && i < depth; i++) {
                int f = openat(cur, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (f < 0 || mkdirat(cur, "d", 0755) < 0)
                        return -1;
                close(f);
                if (i == depth / 2) {
                        char target[PATH_MAX + 8];
                        snprintf(target, sizeof(target), "%s/keep", outside);
                        if (symlinkat(outside, cur, "out") < 0 ||
                            symlinkat(target, cur, "keep") < 0)
                                return -1;
                }
                int next = openat(cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(cur);
                cur = next;
        }
        if (cur < 0 || mkfifoat(cur, "fifo", 0600) < 0 || mkdirat(cur, "ro", 0755) < 0)
                return -1;
        int f = openat(cur, "ro/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (f < 0 || fchmodat(cur, "ro", 0555, 0) < 0)
                return -1;
        close(f);
        close(cur);
        return 0;
}

static void test_rmtree(void)
{
        char tmpl[] = "/tmp/sbx-unit-rmtree.XXXXXX";
        CHECK(mkdtemp(tmpl) != NULL);
        int tmp = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char outside[PATH_MAX];
        snprintf(outside, sizeof(outside), "%s/outside", tmpl);
        CHECK(make_tree(tmp, outside, 1500) == 0);
        /* 32 fds for a tree 1,500 deep: one open directory per level would need 1,500 */
        struct rlimit old, low;
        CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
        low = old;
        low.rlim_cur = 32;
        CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
        CHECK(store_rmtree(tmp, "tree") == 0);
        CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
        CHECK(faccessat(tmp, "tree", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
        /* the symlinks went, never what they point at */
        CHECK(faccessat(tmp, "outside/keep", F_OK, 0) == 0);
        CHECK(store_rmtree(tmp, "tree") == 0); /* nothing there: nothing to do */
        CHECK(store_rmtree(tmp, "outside") == 0);
        CHECK(rmdir(tmpl) == 0);
        close(tmp);
}

int main(void)
{
        test_digest();
        test_clean_path();
        test_refs();
        test_rmtree();
        return unit_done();
}
