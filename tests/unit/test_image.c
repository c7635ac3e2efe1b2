/* SPDX-License-Identifier: MIT */
/* Pure parts of src/image/: digests, entry-name normalisation, references, tag file names. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

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

int main(void)
{
        test_digest();
        test_clean_path();
        test_refs();
        return unit_done();
}
