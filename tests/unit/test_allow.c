/* SPDX-License-Identifier: MIT */
/* src/net/allow.c: the egress allow list of proxy-mode sessions. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "net/allow.h"
#include "unit.h"

static struct allow_list list(char **entries)
{
        struct allow_list l = {0};
        if (allow_list_parse(entries, &l) < 0) {
                printf("not ok - allow_list_parse failed\n");
                unit_failed++;
        }
        return l;
}

static bool addr_ok(const struct allow_list *l, const char *ip, uint16_t port, bool named)
{
        struct net_addr a;
        return net_addr_parse(ip, &a) && allow_address(l, &a, port, named);
}

static bool special(const char *ip)
{
        struct net_addr a;
        return net_addr_parse(ip, &a) && net_addr_special(&a, NULL, NULL);
}

static const char *norm(char *buf, size_t n, const char *host)
{
        snprintf(buf, n, "%s", host);
        return allow_host_normalize(buf) ? buf : NULL;
}

static void test_names(void)
{
        char *e[] = {"pypi.org", "*.pythonhosted.org", "git.example.com:22", NULL};
        struct allow_list l = list(e);
        CHECK(l.n == 3);
        CHECK(allow_name(&l, "pypi.org", 443));
        CHECK(allow_name(&l, "pypi.org", 80));
        CHECK(!allow_name(&l, "evil.org", 443));
        CHECK(!allow_name(&l, "xpypi.org", 443));
        CHECK(!allow_name(&l, "pypi.org.evil.com", 443));
        CHECK(!allow_name(&l, "sub.pypi.org", 443)); /* exact names are exact */
        /* wildcards: subdomains at any depth, not the bare domain, not a look-alike */
        CHECK(allow_name(&l, "files.pythonhosted.org", 443));
        CHECK(allow_name(&l, "a.b.pythonhosted.org", 443));
        CHECK(!allow_name(&l, "pythonhosted.org", 443));
        CHECK(!allow_name(&l, "evilpythonhosted.org", 443));
        /* ports */
        CHECK(allow_name(&l, "git.example.com", 22));
        CHECK(!allow_name(&l, "git.example.com", 443));
        allow_list_free(&l);
}

static void test_normalize(void)
{
        char b[300];
        CHECK_STR(norm(b, sizeof(b), "PyPI.Org."), "pypi.org");
        CHECK_STR(norm(b, sizeof(b), "10.0.0.1"), "10.0.0.1");
        CHECK_STR(norm(b, sizeof(b), "::1"), "::1");
        CHECK(norm(b, sizeof(b), "") == NULL);
        CHECK(norm(b, sizeof(b), ".") == NULL);
        CHECK(norm(b, sizeof(b), "a..b") == NULL);
        CHECK(norm(b, sizeof(b), "a b") == NULL);
        CHECK(norm(b, sizeof(b), "a/b") == NULL);
        CHECK(norm(b, sizeof(b), "a\r\nHost: x") == NULL);
        CHECK(norm(b, sizeof(b), "[::1]") == NULL); /* brackets are the caller's to strip */
}

static void test_special(void)
{
        const char *bad[] = {
            "127.0.0.1", "127.1.2.3", "169.254.169.254", "10.1.2.3", "172.16.0.1", "172.31.255.255",
            "192.168.1.1", "100.64.0.1", "100.127.255.255", "0.0.0.0", "224.0.0.1",
            "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
            "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
            /* documentation ranges */
            "192.0.2.77", "198.51.100.1", "203.0.113.255", "2001:db8::1",
            /* IPv6 forms that reach IPv4 hosts or nowhere */
            "2002:7f00:1::1",    /* 6to4 of 127.0.0.1 */
            "2002:a9fe:a9fe::",  /* 6to4 of 169.254.169.254 */
            "2002:0a00:0001::5", /* 6to4 of 10.0.0.1 */
            "64:ff9b:1::a9fe:a9fe", "2001:0:4136:e378:8000:63bf:3fff:fdd2", /* Teredo */
            "100::1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                bool s = special(bad[i]);
                CHECK(s);
                if (!s)
                        printf("# not special: %s\n", bad[i]);
        }
        const char *good[] = {"93.184.216.34",
                              "172.32.0.1",
                              "172.15.255.255",
                              "100.128.0.1",
                              "11.0.0.1",
                              "2606:4700::6810:84e5",
                              "::ffff:93.184.216.34",
                              "192.0.3.1",
                              "198.51.101.1",
                              "2002:5db8:d822::1" /* 6to4 of 93.184.216.34 */,
                              "2001:1::1",
                              "100::1:0:0:0:1" /* past 100::/64 */};
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                CHECK(!special(good[i]));
}

static void test_addresses(void)
{
        char *none[] = {"example.com", NULL};
        struct allow_list l = list(none);
        /* a name's public address is fine; its private/loopback/metadata ones are not */
        CHECK(addr_ok(&l, "93.184.216.34", 443, true));
        CHECK(!addr_ok(&l, "93.184.216.34", 443, false)); /* a literal IP needs an IP rule */
        CHECK(!addr_ok(&l, "127.0.0.1", 443, true));
        CHECK(!addr_ok(&l, "169.254.169.254", 80, true));
        CHECK(!addr_ok(&l, "10.0.0.5", 80, true));
        CHECK(!addr_ok(&l, "::ffff:127.0.0.1", 80, true));
        CHECK(!addr_ok(&l, "::1", 80, true));
        allow_list_free(&l);

        char *e[] = {"10.20.0.0/16", "192.168.1.7:8080", "[fd00::/8]", "[2001:db8::1]:443",
                     "0.0.0.0/0",    "93.184.216.34",    NULL};
        l = list(e);
        CHECK(addr_ok(&l, "10.20.3.4", 80, false));
        CHECK(addr_ok(&l, "10.20.3.4", 80, true));
        CHECK(addr_ok(&l, "::ffff:10.20.3.4", 80, false)); /* the mapped form is the same host */
        CHECK(!addr_ok(&l, "10.21.0.1", 80, true));
        CHECK(addr_ok(&l, "192.168.1.7", 8080, false));
        CHECK(!addr_ok(&l, "192.168.1.7", 80, false));
        CHECK(addr_ok(&l, "fd00::5", 443, false));
        CHECK(addr_ok(&l, "2001:db8::1", 443, false));
        CHECK(!addr_ok(&l, "2001:db8::1", 80, false));
        CHECK(addr_ok(&l, "93.184.216.34", 1, false));
        /* 0.0.0.0/0 opens public addresses, never loopback, metadata or private ranges */
        CHECK(addr_ok(&l, "8.8.8.8", 53, false));
        CHECK(!addr_ok(&l, "127.0.0.1", 80, false));
        CHECK(!addr_ok(&l, "169.254.169.254", 80, false));
        CHECK(!addr_ok(&l, "172.16.0.1", 80, false));
        allow_list_free(&l);

        /* explicitly allowed literally: loopback and metadata too */
        char *lit[] = {"127.0.0.1:9000", "169.254.169.254", "::ffff:10.9.9.9", NULL};
        l = list(lit);
        CHECK(addr_ok(&l, "127.0.0.1", 9000, false));
        CHECK(!addr_ok(&l, "127.0.0.1", 9001, false));
        CHECK(!addr_ok(&l, "127.0.0.2", 9000, false));
        CHECK(addr_ok(&l, "169.254.169.254", 80, true));
        CHECK(addr_ok(&l, "10.9.9.9", 80, false));
        allow_list_free(&l);
}

/* The host's own addresses open only to a rule of exactly that address. */
static void test_literal(void)
{
        char *e[] = {"0.0.0.0/0", "203.0.113.0/24", "198.51.100.9:8080", "[2001:db8::7]", NULL};
        struct allow_list l = list(e);
        struct net_addr a;
        CHECK(net_addr_parse("93.184.216.34", &a) && !allow_address_literal(&l, &a, 80));
        CHECK(net_addr_parse("203.0.113.5", &a) && !allow_address_literal(&l, &a, 80));
        CHECK(addr_ok(&l, "203.0.113.5", 80, false)); /* a rule inside the range opens it */
        CHECK(net_addr_parse("198.51.100.9", &a) && allow_address_literal(&l, &a, 8080));
        CHECK(!allow_address_literal(&l, &a, 80));
        CHECK(net_addr_parse("::ffff:198.51.100.9", &a) && allow_address_literal(&l, &a, 8080));
        CHECK(net_addr_parse("2001:db8::7", &a) && allow_address_literal(&l, &a, 1));
        CHECK(net_addr_parse("2001:db8::8", &a) && !allow_address_literal(&l, &a, 1));
        allow_list_free(&l);
        /* 6to4: opened by a rule inside the range its IPv4 address makes (16 + 8 bits) */
        char *six[] = {"[::/0]", "[2002:0a00::/24]", NULL};
        l = list(six);
        CHECK(addr_ok(&l, "2002:5db8:d822::1", 443, false));
        CHECK(addr_ok(&l, "2002:0a01:0203::1", 443, false));
        CHECK(!addr_ok(&l, "2002:7f00:1::1", 443, false));
        allow_list_free(&l);
}

/* Every form the config layer accepts (tests/unit/test_config.c) parses into the rule meant. */
static void test_config_forms(void)
{
        struct {
                const char *entry;
                enum allow_kind kind;
                uint16_t port;
                unsigned prefix;
        } forms[] = {
            {"a.com:65535", ALLOW_NAME, 65535, 0},
            {"[::1]:443", ALLOW_CIDR, 443, 128},
            {"::1", ALLOW_CIDR, 0, 128},
            {"fd00::/8", ALLOW_CIDR, 0, 8},
            {"[fd00::/8]:443", ALLOW_CIDR, 443, 8},
            {"[::1]", ALLOW_CIDR, 0, 128},
            {"1.2.3.4", ALLOW_CIDR, 0, 32},
            {"1.2.3.4:80", ALLOW_CIDR, 80, 32},
            {"0.0.0.0/0", ALLOW_CIDR, 0, 0},
            {"localhost", ALLOW_NAME, 0, 0},
            {"*.co.uk", ALLOW_SUFFIX, 0, 0},
            {"10.0.0.0/8:443", ALLOW_CIDR, 443, 8},
            {"::ffff:10.0.0.0/104", ALLOW_CIDR, 0, 8},
        };
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                char *e[] = {(char *)forms[i].entry, NULL};
                struct allow_list l = list(e);
                bool ok = l.n == 1 && l.rules[0].kind == forms[i].kind &&
                          l.rules[0].port == forms[i].port &&
                          (forms[i].kind != ALLOW_CIDR || l.rules[0].prefix == forms[i].prefix);
                CHECK(ok);
                if (!ok)
                        printf("# %s\n", forms[i].entry);
                allow_list_free(&l);
        }
        char *ml[] = {"::ffff:10.0.0.0/104", NULL};
        struct allow_list l = list(ml);
        CHECK(addr_ok(&l, "10.200.0.1", 80, false)); /* a mapped rule is its IPv4 rule */
        allow_list_free(&l);
        char *bad[] = {"[::1", NULL};
        CHECK(allow_list_parse(bad, &l) == -EINVAL);
}

int main(void)
{
        test_config_forms();
        test_names();
        test_normalize();
        test_special();
        test_literal();
        test_addresses();
        return unit_done();
}
