/* SPDX-License-Identifier: MIT */
/*
 * The egress allow list of a proxy-mode session (docs/DESIGN.md, "Network egress"): which
 * host names may be resolved and which resolved or literal addresses may be connected to.
 * Pure logic, no I/O: unit-tested in tests/unit/test_allow.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum allow_kind { ALLOW_NAME, ALLOW_SUFFIX, ALLOW_CIDR };

struct allow_rule {
        enum allow_kind kind;
        char *name; /* ALLOW_NAME: the name; ALLOW_SUFFIX: ".example.com" */
        int family; /* ALLOW_CIDR: AF_INET or AF_INET6 */
        unsigned char addr[16];
        unsigned prefix;
        uint16_t port; /* 0: any port */
};

struct allow_list {
        struct allow_rule *rules;
        size_t n;
};

/* An address as the checks see it: IPv4-mapped and NAT64 IPv6 forms become IPv4. */
struct net_addr {
        int family; /* AF_INET or AF_INET6 */
        unsigned char a[16];
};

/* Build the list from entries already checked and lowercased by the config layer
 * (config/validate.c allow_entry_check). 0 or -errno (-EINVAL on an entry it cannot read). */
int allow_list_parse(char *const *entries, struct allow_list *ret);
void allow_list_free(struct allow_list *l);

/* Lowercase host, drop one trailing dot, and check it is a name or a literal IP (IPv6 without
 * brackets). False for anything else (it is then never resolved). */
bool allow_host_normalize(char *host);

/* Literal IP in text? Fills *ret (normalized: mapped forms become IPv4). */
bool net_addr_parse(const char *text, struct net_addr *ret);
/* From a sockaddr_in/in6; normalized like net_addr_parse. */
bool net_addr_from_sockaddr(const void *sa, struct net_addr *ret);
void net_addr_format(const struct net_addr *a, char *out, size_t n);

/*
 * Loopback, link-local (cloud metadata), private, CGNAT, unique-local, multicast, unspecified,
 * documentation, reserved, or an IPv6 form that reaches such an IPv4 address (6to4, Teredo,
 * local-use NAT64; mapped and well-known NAT64 forms are IPv4 already): never reached unless
 * allowed literally. Sets *ret_what to a short description. *ret_prefix (may be NULL) gets the
 * length of the special range.
 */
bool net_addr_special(const struct net_addr *a, const char **ret_what, unsigned *ret_prefix);

/* Does a name rule allow host:port? (Only such names are ever resolved: a name outside the
 * list must not reach a resolver, or DNS itself becomes a channel out of the sandbox.) */
bool allow_name(const struct allow_list *l, const char *host, uint16_t port);

/*
 * May the proxy connect to address a, port? named: a name rule allowed the request (a is one
 * of its resolved addresses). A special address needs a CIDR rule that contains it and lies
 * within the special range (0.0.0.0/0 does not open 127.0.0.1); an ordinary one needs named,
 * or any CIDR rule that contains it.
 */
bool allow_address(const struct allow_list *l, const struct net_addr *a, uint16_t port, bool named);

/* Is a (an address of this host) allowed literally: a CIDR rule of exactly that address
 * (/32, /128) for this port? The host's own addresses are reached only then, since a
 * service listening on 0.0.0.0 there is the host's, not the internet's. */
bool allow_address_literal(const struct allow_list *l, const struct net_addr *a, uint16_t port);
