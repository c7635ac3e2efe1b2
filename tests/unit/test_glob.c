/* SPDX-License-Identifier: MIT */
/* The glob pattern logic: components, braces, "**" and the dotfile rules. */
#include <errno.h>
#include <stdlib.h>

#include "ops/globmatch.h"
#include "unit.h"

static bool seg(const char *p, const char *s)
{
        return glob_segment_match(p, strlen(p), s, strlen(s));
}

static bool path(const char *pattern, const char *p)
{
        struct glob_pattern *g = NULL;
        if (glob_compile(pattern, 1024, &g) < 0)
                return false;
        bool r = glob_match_path(g, p);
        glob_free(g);
        return r;
}

/* The brace expansion joined with spaces. */
static const char *braces(const char *p, char *out, size_t n)
{
        char **v = NULL;
        out[0] = '\0';
        if (glob_expand_braces(p, 1024, &v) < 0)
                return "(error)";
        for (char **s = v; *s; s++) {
                if (s != v)
                        strncat(out, " ", n - strlen(out) - 1);
                strncat(out, *s, n - strlen(out) - 1);
        }
        strv_freep(&v);
        return out;
}

static void test_segments(void)
{
        CHECK(seg("*", "abc"));
        CHECK(seg("*", ""));
        CHECK(seg("a*c", "abbbc"));
        CHECK(seg("a*c", "ac"));
        CHECK(!seg("a*c", "abcd"));
        CHECK(seg("*.c", "main.c"));
        CHECK(!seg("*.c", "main.h"));
        CHECK(seg("a?c", "abc"));
        CHECK(!seg("a?c", "ac"));
        CHECK(seg("?", "\xc3\xa9")); /* one code point, two bytes */
        CHECK(!seg("??", "\xc3\xa9"));
        CHECK(seg("[abc]x", "bx"));
        CHECK(!seg("[abc]x", "dx"));
        CHECK(seg("[a-c]", "b"));
        CHECK(!seg("[a-c]", "d"));
        CHECK(seg("[!a-c]", "d"));
        CHECK(seg("[^a-c]", "d"));
        CHECK(!seg("[!a-c]", "a"));
        CHECK(seg("[]]", "]"));
        CHECK(seg("[!]]", "a"));
        CHECK(seg("[a-]", "-"));
        CHECK(seg("[[:digit:]]x", "7x"));
        CHECK(!seg("[[:digit:]]x", "ax"));
        CHECK(seg("[[:alpha:][:digit:]]", "q"));
        CHECK(seg("[\xc3\xa0-\xc3\xbf]", "\xc3\xa9")); /* a range of code points */
        CHECK(seg("[", "["));                          /* unclosed: literal */
        CHECK(seg("a[b", "a[b"));
        CHECK(seg("\\*", "*"));
        CHECK(!seg("\\*", "a"));
        CHECK(seg("\\[a]", "[a]"));
        CHECK(seg("*a*b*c*", "xxaxxbxxcxx"));
        CHECK(!seg("*a*b*c*", "xxaxxcxxbxx"));
        CHECK(seg("**", "abc")); /* within a component: like "*" */
        /* the dotfile rule */
        CHECK(!seg("*", ".hidden"));
        CHECK(!seg("?hidden", ".hidden"));
        CHECK(!seg("[.]hidden", ".hidden"));
        CHECK(seg(".*", ".hidden"));
        CHECK(seg(".h*", ".hidden"));
        CHECK(seg("\\.hidden", ".hidden"));
        CHECK(seg("a.*", "a.txt")); /* only a LEADING dot is special */
        /* no exponential blowup */
        CHECK(!seg("*a*a*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

static void test_braces(void)
{
        char b[512];
        CHECK_STR(braces("a{b,c}d", b, sizeof(b)), "abd acd");
        CHECK_STR(braces("{a,b}{1,2}", b, sizeof(b)), "a1 a2 b1 b2");
        CHECK_STR(braces("x{a,{b,c}}y", b, sizeof(b)), "xay xby xcy");
        CHECK_STR(braces("{,x}a", b, sizeof(b)), "a xa");
        CHECK_STR(braces("{a}", b, sizeof(b)), "{a}");
        CHECK_STR(braces("{a}{b,c}", b, sizeof(b)), "{a}b {a}c");
        CHECK_STR(braces("\\{a,b}", b, sizeof(b)), "\\{a,b}");
        CHECK_STR(braces("[{]a,b}", b, sizeof(b)), "[{]a,b}");
        CHECK_STR(braces("{src,include}/**/*.{c,h}", b, sizeof(b)),
                  "src/**/*.c src/**/*.h include/**/*.c include/**/*.h");
        CHECK_STR(braces("a{b", b, sizeof(b)), "a{b");
        char **v = NULL;
        CHECK(glob_expand_braces("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", 1024,
                                 &v) == -E2BIG);
}

static void test_paths(void)
{
        CHECK(path("*.c", "a.c"));
        CHECK(!path("*.c", "src/a.c")); /* "*" does not cross "/" */
        CHECK(path("src/*.c", "src/a.c"));
        CHECK(path("**/*.c", "a.c")); /* zero directories */
        CHECK(path("**/*.c", "src/a.c"));
        CHECK(path("**/*.c", "src/x/y/z/a.c"));
        CHECK(!path("**/*.c", "src/.git/a.c")); /* "**" does not enter dot-directories */
        CHECK(!path("**/*.c", ".hidden/a.c"));
        CHECK(path("**/.git/*.c", "src/.git/a.c")); /* unless named */
        CHECK(path(".hidden/**/*.c", ".hidden/a.c"));
        CHECK(path("src/**", "src/a/b"));
        CHECK(path("src/**", "src/a"));
        CHECK(path("src/**/x", "src/x"));
        CHECK(path("src/**/x", "src/a/b/x"));
        CHECK(!path("src/**/x", "src/a/b/y"));
        CHECK(path("**/a/**/b", "a/b"));
        CHECK(path("**/a/**/b", "x/a/y/z/b"));
        CHECK(path("**/**/b", "b"));
        CHECK(path("a/**/**/b", "a/x/b"));
        CHECK(path("{src,lib}/*.c", "lib/a.c"));
        CHECK(!path("{src,lib}/*.c", "inc/a.c"));
        CHECK(path("src/{a,b/**}/*.c", "src/b/x/y.c"));
        CHECK(path("./src//a.c", "src/a.c")); /* "." and empty components are ignored */
        CHECK(path("*.{c,h}", "x.h"));
        CHECK(!path("*", ".x"));
        CHECK(path("**", "a/b/c"));
        CHECK(!path("**", "a/.b/c"));

        struct glob_pattern *g = NULL;
        CHECK(glob_compile("", 1024, &g) == -EINVAL);
        CHECK(glob_compile("./", 1024, &g) == -EINVAL);
        CHECK(glob_compile("src/", 1024, &g) == 0 && g->dirs_only);
        glob_free(g);
}

/* The NFA step flags drive the pruning of the walk. */
static void test_step(void)
{
        struct glob_pattern *g = NULL;
        CHECK(glob_compile("src/*.c", 1024, &g) == 0);
        uint8_t s0[16], s1[16], s2[16];
        glob_state_init(g, s0);
        CHECK(glob_step(g, s0, "src", 3, s1) == GLOB_DESCEND);
        CHECK(glob_step(g, s0, "lib", 3, s1) == 0); /* pruned */
        glob_step(g, s0, "src", 3, s1);
        CHECK(glob_step(g, s1, "a.c", 3, s2) == GLOB_MATCH);
        CHECK(glob_step(g, s1, "a.h", 3, s2) == 0);
        glob_free(g);

        CHECK(glob_compile("**/*.c", 1024, &g) == 0);
        glob_state_init(g, s0);
        CHECK(glob_step(g, s0, "x.c", 3, s1) == (GLOB_MATCH | GLOB_DESCEND));
        CHECK(glob_step(g, s0, "dir", 3, s1) == GLOB_DESCEND);
        CHECK(glob_step(g, s0, ".git", 4, s1) == 0);
        glob_free(g);
}

int main(void)
{
        test_segments();
        test_braces();
        test_paths();
        test_step();
        return unit_done();
}
