/* SPDX-License-Identifier: MIT */
#include "allow.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macros.h"

void allow_list_free(struct allow_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->rules[i].name);
        free(l->rules);
        *l = (struct allow_list){0};
}

/* IPv4-mapped (::ffff:a.b.c.d) and NAT64 well-known (64:ff9b::a.b.c.d) addresses reach IPv4
 * hosts: check them as the IPv4 address they carry. */
static void net_addr_normalize(struct net_addr *a)
{
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
        if (a->family != AF_INET6)
                return;
        if (memcmp(a->a, mapped, 12) == 0 || memcmp(a->a, nat64, 12) == 0) {
                memmove(a->a, a->a + 12, 4);
                memset(a->a + 4, 0, 12);
                a->family = AF_INET;
        }
}

bool net_addr_parse(const char *text, struct net_addr *ret)
{
        struct net_addr a = {0};
        if (inet_pton(AF_INET, text, a.a) == 1)
                a.family = AF_INET;
        else if (inet_pton(AF_INET6, text, a.a) == 1)
                a.family = AF_INET6;
        else
                return false;
        net_addr_normalize(&a);
        *ret = a;
        return true;
}

bool net_addr_from_sockaddr(const void *sa, struct net_addr *ret)
{
        struct net_addr a = {0};
        const struct sockaddr *s = sa;
        if (s->sa_family == AF_INET) {
                a.family = AF_INET;
                memcpy(a.a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        } else if (s->sa_family == AF_INET6) {
                a.family = AF_INET6;
                memcpy(a.a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        } else {
                return false;
        }
        net_addr_normalize(&a);
        *ret = a;
        return true;
}

void net_addr_format(const struct net_addr *a, char *out, size_t n)
{
        if (!inet_ntop(a->family, a->a, out, (socklen_t)n))
                snprintf(out, n, "?");
}

static bool prefix_match(const unsigned char *a, const unsigned char *net, unsigned prefix)
{
        unsigned full = prefix / 8, rest = prefix % 8;
        if (memcmp(a, net, full) != 0)
                return false;
        if (rest == 0)
                return true;
        unsigned char mask = (unsigned char)(0xff << (8 - rest));
        return (a[full] & mask) == (net[full] & mask);
}

struct special_range {
        int family;
        unsigned char net[16];
        unsigned prefix;
        const char *what;
};

static const struct special_range special_ranges[] = {
    {AF_INET, {0}, 8, "an unspecified (0.0.0.0/8) address"},
    {AF_INET, {10}, 8, "a private (10.0.0.0/8) address"},
    {AF_INET, {100, 64}, 10, "a shared/CGNAT (100.64.0.0/10) address"},
    {AF_INET, {127}, 8, "a loopback address"},
    {AF_INET, {169, 254}, 16, "a link-local (169.254.0.0/16, cloud metadata) address"},
    {AF_INET, {172, 16}, 12, "a private (172.16.0.0/12) address"},
    {AF_INET, {192, 0, 0}, 24, "an IETF protocol (192.0.0.0/24) address"},
    {AF_INET, {192, 0, 2}, 24, "a documentation (192.0.2.0/24) address"},
    {AF_INET, {192, 168}, 16, "a private (192.168.0.0/16) address"},
    {AF_INET, {198, 18}, 15, "a benchmarking (198.18.0.0/15) address"},
    {AF_INET, {198, 51, 100}, 24, "a documentation (198.51.100.0/24) address"},
    {AF_INET, {203, 0, 113}, 24, "a documentation (203.0.113.0/24) address"},
    {AF_INET, {224}, 4, "a multicast address"},
    {AF_INET, {240}, 4, "a reserved or broadcast address"},
    /* ::/96 holds ::, ::1 and the deprecated IPv4-compatible forms */
    {AF_INET6, {0}, 96, "an unspecified, loopback or IPv4-compatible IPv6 address"},
    {AF_INET6,
     {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01},
     48,
     "a local-use NAT64 (64:ff9b:1::/48) address"},
    {AF_INET6, {0x01, 0x00}, 64, "a discard-only (100::/64) address"},
    /* Teredo carries an IPv4 server and client address: any of them may be the host's */
    {AF_INET6, {0x20, 0x01, 0x00, 0x00}, 32, "a Teredo (2001::/32) address"},
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}, 32, "a documentation (2001:db8::/32) address"},
    {AF_INET6, {0xfc}, 7, "a unique-local (fc00::/7) address"},
    {AF_INET6, {0xfe, 0x80}, 10, "a link-local (fe80::/10) address"},
    {AF_INET6, {0xfe, 0xc0}, 10, "a site-local (fec0::/10) address"},
    {AF_INET6, {0xff}, 8, "a multicast address"},
};

/* 6to4 (2002:V4::/48) reaches the IPv4 address V4 through a relay: special when V4 is. */
static bool sixtofour_special(const struct net_addr *a, const char **ret_what, unsigned *ret_prefix)
{
        if (a->family != AF_INET6 || a->a[0] != 0x20 || a->a[1] != 0x02)
                return false;
        struct net_addr v4 = {.family = AF_INET};
        memcpy(v4.a, a->a + 2, 4);
        unsigned p4 = 0;
        if (!net_addr_special(&v4, NULL, &p4))
                return false;
        if (ret_what)
                *ret_what = "a 6to4 (2002::/16) address that embeds a special IPv4 address";
        if (ret_prefix)
                *ret_prefix = 16 + p4;
        return true;
}

bool net_addr_special(const struct net_addr *a, const char **ret_what, unsigned *ret_prefix)
{
        if (sixtofour_special(a, ret_what, ret_prefix))
                return true;
        for (size_t i = 0; i < ARRAY_SIZE(special_ranges); i++) {
                const struct special_range *r = &special_ranges[i];
                if (r->family == a->family && prefix_match(a->a, r->net, r->prefix)) {
                        if (ret_what)
                                *ret_what = r->what;
                        if (ret_prefix)
                                *ret_prefix = r->prefix;
                        return true;
                }
        }
        return false;
}

/* "[v6]", "[v6/len]", "v6", "v4", "v4/len", each with an optional ":port" (not after a bare
 * v6). s is modified. */
static int parse_cidr_rule(char *s, struct allow_rule *r)
{
        char *port = NULL;
        if (s[0] == '[') {
                char *end = strchr(s, ']');
                if (!end)
                        return -EINVAL;
                *end = '\0';
                if (end[1] == ':')
                        port = end + 2;
                s++;
        } else if (strchr(s, ':') == strrchr(s, ':') && strchr(s, ':')) {
                port = strchr(s, ':');
                *port++ = '\0';
        }
        char *slash = strchr(s, '/');
        if (slash)
                *slash++ = '\0';
        struct net_addr a;
        if (!net_addr_parse(s, &a))
                return -EINVAL;
        bool was_v6 = strchr(s, ':') != NULL;
        unsigned bits = was_v6 ? 128 : 32;
        unsigned long prefix = slash ? strtoul(slash, NULL, 10) : bits;
        if (prefix > bits)
                return -EINVAL;
        /* a mapped v6 rule (::ffff:10.0.0.0/104) is the IPv4 rule it carries */
        if (was_v6 && a.family == AF_INET)
                prefix = prefix >= 96 ? prefix - 96 : 0;
        r->kind = ALLOW_CIDR;
        r->family = a.family;
        memcpy(r->addr, a.a, sizeof(r->addr));
        r->prefix = (unsigned)prefix;
        if (port) {
                unsigned long p = strtoul(port, NULL, 10);
                if (p < 1 || p > 65535)
                        return -EINVAL;
                r->port = (uint16_t)p;
        }
        return 0;
}

static int parse_name_rule(char *s, struct allow_rule *r)
{
        char *colon = strchr(s, ':');
        if (colon) {
                *colon = '\0';
                unsigned long p = strtoul(colon + 1, NULL, 10);
                if (p < 1 || p > 65535)
                        return -EINVAL;
                r->port = (uint16_t)p;
        }
        if (strncmp(s, "*.", 2) == 0) {
                r->kind = ALLOW_SUFFIX;
                r->name = strdup(s + 1); /* keeps the dot: ".example.com" */
        } else {
                r->kind = ALLOW_NAME;
                r->name = strdup(s);
        }
        return r->name ? 0 : -ENOMEM;
}

/* An entry names addresses when it starts with '[', has two colons (bare v6), or its host
 * part (before ':port') is an IPv4 address or CIDR: the config layer's own rule. */
static bool entry_is_cidr(const char *s)
{
        if (s[0] == '[' || strchr(s, ':') != strrchr(s, ':'))
                return true;
        size_t n = strcspn(s, ":");
        const char *last = s;
        for (size_t i = 0; i < n; i++)
                if (s[i] == '.')
                        last = s + i + 1;
        if (memchr(s, '/', n))
                return true;
        size_t ln = (size_t)(s + n - last);
        if (ln == 0)
                return false;
        for (size_t i = 0; i < ln; i++)
                if (!isdigit((unsigned char)last[i]))
                        return false;
        return true;
}

int allow_list_parse(char *const *entries, struct allow_list *ret)
{
        size_t n = 0;
        for (char *const *p = entries; p && *p; p++)
                n++;
        struct allow_list l = {.rules = calloc(n ? n : 1, sizeof(struct allow_rule))};
        if (!l.rules)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *s = strdup(entries[i]);
                if (!s) {
                        allow_list_free(&l);
                        return -ENOMEM;
                }
                int r = entry_is_cidr(s) ? parse_cidr_rule(s, &l.rules[i])
                                         : parse_name_rule(s, &l.rules[i]);
                l.n = i + 1;
                if (r < 0) {
                        allow_list_free(&l);
                        return r;
                }
        }
        *ret = l;
        return 0;
}

bool allow_host_normalize(char *host)
{
        size_t n = strlen(host);
        if (n > 0 && host[n - 1] == '.')
                host[--n] = '\0';
        if (n == 0 || n > 253)
                return false;
        struct net_addr a;
        if (net_addr_parse(host, &a))
                return true;
        for (char *p = host; *p; p++) {
                *p = (char)tolower((unsigned char)*p);
                if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
                        return false;
        }
        return host[0] != '.' && !strstr(host, "..");
}

static bool port_ok(const struct allow_rule *r, uint16_t port)
{
        return r->port == 0 || r->port == port;
}

bool allow_name(const struct allow_list *l, const char *host, uint16_t port)
{
        size_t hn = strlen(host);
        for (size_t i = 0; i < l->n; i++) {
                const struct allow_rule *r = &l->rules[i];
                if (!port_ok(r, port))
                        continue;
                if (r->kind == ALLOW_NAME && strcmp(host, r->name) == 0)
                        return true;
                if (r->kind == ALLOW_SUFFIX) {
                        size_t sn = strlen(r->name);
                        if (hn > sn && strcmp(host + hn - sn, r->name) == 0)
                                return true;
                }
        }
        return false;
}

bool allow_address(const struct allow_list *l, const struct net_addr *a, uint16_t port, bool named)
{
        unsigned special_prefix = 0;
        bool special = net_addr_special(a, NULL, &special_prefix);
        if (!special && named)
                return true;
        for (size_t i = 0; i < l->n; i++) {
                const struct allow_rule *r = &l->rules[i];
                if (r->kind != ALLOW_CIDR || r->family != a->family || !port_ok(r, port))
                        continue;
                if (!prefix_match(a->a, r->addr, r->prefix))
                        continue;
                if (!special || r->prefix >= special_prefix)
                        return true;
        }
        return false;
}

bool allow_address_literal(const struct allow_list *l, const struct net_addr *a, uint16_t port)
{
        unsigned bits = a->family == AF_INET ? 32 : 128;
        for (size_t i = 0; i < l->n; i++) {
                const struct allow_rule *r = &l->rules[i];
                if (r->kind == ALLOW_CIDR && r->family == a->family && port_ok(r, port) &&
                    r->prefix == bits && memcmp(r->addr, a->a, bits / 8) == 0)
                        return true;
        }
        return false;
}
