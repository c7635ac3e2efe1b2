/* SPDX-License-Identifier: MIT */
/* Syntax checks of config values: paths, host names, image names, packages, allow entries,
 * volume mounts. Pure except for home_dir() (passwd lookup). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "config-internal.h"

const char *env_lookup(char *const *envp, const char *name)
{
        size_t n = strlen(name);
        for (char *const *p = envp; p && *p; p++)
                if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
                        return *p + n + 1;
        return NULL;
}

char *home_dir(char *const *envp)
{
        const char *h = env_lookup(envp, "HOME");
        if (h && h[0] == '/')
                return strdup(h);

        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res || !res->pw_dir ||
            res->pw_dir[0] != '/')
                return NULL;
        return strdup(res->pw_dir);
}

/* Copy the absolute path in into a new string with "//" and "/./" folded and no trailing '/'.
 * A ".." component is refused: it would make the path mean something else once a symlink is
 * involved, and nothing here needs it. */
int path_normalize(const char *in, char **ret)
{
        if (!in || in[0] != '/')
                return -EINVAL;
        _cleanup_free_ char *out = malloc(strlen(in) + 2);
        if (!out)
                return -ENOMEM;
        size_t len = 0;
        for (const char *p = in; *p;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p += n;
                        continue;
                }
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return -EINVAL;
                out[len++] = '/';
                memcpy(out + len, p, n);
                len += n;
                p += n;
        }
        if (len == 0)
                out[len++] = '/';
        out[len] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

/* RFC 1123: dot-separated labels of letters, digits and '-', not starting or ending with '-',
 * 1..63 characters each, and at most 64 in all: the kernel's limit for a host name (RFC
 * 1123's 253 is a DNS name's; sethostname(2) refuses more than 64). */
bool hostname_valid(const char *s)
{
        size_t total = strlen(s);
        if (total == 0 || total > 64)
                return false;
        for (const char *p = s;;) {
                size_t n = 0;
                for (; p[n] && p[n] != '.'; n++)
                        if (!isalnum((unsigned char)p[n]) && p[n] != '-')
                                return false;
                if (n == 0 || n > 63 || p[0] == '-' || p[n - 1] == '-')
                        return false;
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

static bool all_digits(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char)s[i]))
                        return false;
        return n > 0;
}

/* NAME[:TAG]: NAME is '/'-separated components of [a-z0-9][a-z0-9_.-]*, TAG is
 * [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} (the shapes of docker references, without a registry). */
const char *image_ref_tag_colon(const char *s)
{
        const char *slash = strrchr(s, '/');
        return strchr(slash ? slash : s, ':');
}

/* A registry host as a name's first component, "127.0.0.1:5000/..." or "localhost:5000/...":
 * lowercase letters, digits, '.' and '-', then an optional ":PORT". */
static size_t registry_host_len(const char *s, size_t name_len)
{
        const char *slash = memchr(s, '/', name_len);
        const char *colon = slash ? memchr(s, ':', (size_t)(slash - s)) : NULL;
        if (!colon || colon == s || colon + 1 == slash)
                return 0;
        for (const char *p = s; p < colon; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' ||
                      *p == '-'))
                        return 0;
        for (const char *p = colon + 1; p < slash; p++)
                if (*p < '0' || *p > '9')
                        return 0;
        return (size_t)(slash - s) + 1;
}

const char *image_name_check(const char *s)
{
        static const char *const why = "expected NAME[:TAG] like python:3.12 (NAME of lowercase "
                                       "letters, digits and '_.-', optionally after a registry "
                                       "HOST:PORT/, TAG of at most 128 characters)";
        const char *colon = image_ref_tag_colon(s);
        size_t name_len = colon ? (size_t)(colon - s) : strlen(s);
        if (name_len == 0 || name_len > 255)
                return why;
        size_t host = registry_host_len(s, name_len);
        for (size_t i = host; i < name_len; i++) {
                bool start = i == host || s[i - 1] == '/';
                char ch = s[i];
                bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                if (!start)
                        ok = ok || ch == '_' || ch == '.' || ch == '-' || ch == '/';
                if (!ok || (ch == '/' && i + 1 == name_len))
                        return why;
        }
        if (!colon)
                return NULL;
        const char *tag = colon + 1;
        size_t n = strlen(tag);
        if (n == 0 || n > 128 || tag[0] == '.' || tag[0] == '-')
                return why;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)tag[i]) && !strchr("_.-", tag[i]))
                        return why;
        return NULL;
}

/* A pip requirement as pip would take it, but never an option ("--index-url=...") and never a
 * fragment of a specifier that a comma split ("foo>=1,<2" in a comma-separated list). */
const char *package_check(const char *s)
{
        if (!s[0])
                return "empty package name";
        if (!isalnum((unsigned char)s[0]) && !strchr("._/", s[0]))
                return "a package must start with a letter, a digit, '.', '_' or '/' (a "
                       "comma-separated list cannot hold a specifier with a comma: use --package)";
        if (strlen(s) > 1024)
                return "package specification too long";
        for (const char *p = s; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return "control character in package specification";
        return NULL;
}

/* "/N" CIDR suffix of an address of bits bits: N in 0..bits and no host bits set. */
static const char *prefix_check(int af, const char *addr, const char *len)
{
        unsigned char a[16];
        uint64_t n;
        unsigned bits = af == AF_INET ? 32 : 128;
        if (inet_pton(af, addr, a) != 1)
                return af == AF_INET ? "invalid IPv4 address" : "invalid IPv6 address";
        if (!len)
                return NULL;
        if (parse_uint(len, &n) < 0 || n > bits)
                return "invalid CIDR prefix length";
        for (unsigned i = (unsigned)n; i < bits; i++)
                if (a[i / 8] & (0x80 >> (i % 8)))
                        return "CIDR has host bits set (use the network address)";
        return NULL;
}

/* An address, or address/prefix; s is modified (the '/' is cut). */
static const char *ip_check(int af, char *s)
{
        char *slash = strchr(s, '/');
        if (slash)
                *slash++ = '\0';
        return prefix_check(af, s, slash);
}

static const char *port_check(const char *p)
{
        uint64_t port;
        if (parse_uint(p, &port) < 0 || port < 1 || port > 65535)
                return "port must be a number from 1 to 65535";
        return NULL;
}

/* host (name, *.suffix, IPv4 or IPv4/len) with any ":port" already cut off; a name whose last
 * label is all digits can only be meant as an IPv4 address */
static const char *host_check(char *h)
{
        const char *last = strrchr(h, '.');
        last = last ? last + 1 : h;
        if (strchr(h, '/') || all_digits(last, strlen(last)))
                return ip_check(AF_INET, h);
        if (strcmp(h, "*") == 0)
                return "'*' alone would allow everything: name a domain as '*.example.com'";
        if (!hostname_valid(strncmp(h, "*.", 2) == 0 ? h + 2 : h))
                return "expected a host name, '*.domain', an IP address or a CIDR, with an "
                       "optional ':PORT'";
        return NULL;
}

const char *allow_entry_check(const char *s, char **ret)
{
        _cleanup_free_ char *copy = strdup(s);
        _cleanup_free_ char *out = strdup(s);
        if (!copy || !out)
                return "out of memory";
        for (char *p = out; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        if (!copy[0])
                return "empty host";

        const char *why;
        if (copy[0] == '[') { /* [v6] [v6/len] [v6]:port */
                char *end = strchr(copy, ']');
                if (!end)
                        return "missing ']' after an IPv6 address";
                *end = '\0';
                if (end[1] && end[1] != ':')
                        return "expected ':PORT' after ']'";
                if (end[1] && (why = port_check(end + 2)))
                        return why;
                why = ip_check(AF_INET6, copy + 1);
        } else if (strchr(copy, ':') != strrchr(copy, ':')) { /* bare v6, no port */
                why = ip_check(AF_INET6, copy);
        } else {
                char *colon = strchr(copy, ':');
                if (colon) {
                        *colon = '\0';
                        if ((why = port_check(colon + 1)))
                                return why;
                }
                why = host_check(copy);
        }
        if (why)
                return why;
        *ret = TAKE_PTR(out);
        return NULL;
}

/* Under dir or dir itself. */
static bool path_under(const char *p, const char *dir)
{
        size_t n = strlen(dir);
        return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int expand_home(const char *h, const char *home, char **ret, const char **ret_why)
{
        if (h[0] != '~')
                return (*ret = strdup(h)) ? 0 : -ENOMEM;
        if (h[1] != '\0' && h[1] != '/') {
                *ret_why = "only '~' and '~/...' are expanded, not '~user'";
                return -EINVAL;
        }
        if (!home) {
                *ret_why = "cannot expand '~': no home directory ($HOME is not set)";
                return -EINVAL;
        }
        if (asprintf(ret, "%s%s", home, h + 1) < 0)
                return -ENOMEM;
        return 0;
}

static int mount_split(const char *spec, char **ret_h, char **ret_s, bool *ret_ro,
                       const char **ret_why)
{
        const char *c1 = strchr(spec, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || (c2 && strchr(c2 + 1, ':'))) {
                *ret_why = "expected HOST:SANDBOX[:ro] (paths may not contain ':')";
                return -EINVAL;
        }
        if (c2 && strcmp(c2 + 1, "ro") != 0 && strcmp(c2 + 1, "rw") != 0) {
                *ret_why = "the mode after the second ':' must be 'ro' or 'rw'";
                return -EINVAL;
        }
        *ret_ro = c2 && strcmp(c2 + 1, "ro") == 0;
        *ret_h = strndup(spec, (size_t)(c1 - spec));
        *ret_s = c2 ? strndup(c1 + 1, (size_t)(c2 - c1 - 1)) : strdup(c1 + 1);
        return *ret_h && *ret_s ? 0 : -ENOMEM;
}

int mount_parse(const char *spec, const char *home, struct sbx_mount *ret, const char **ret_why)
{
        _cleanup_free_ char *h = NULL;
        _cleanup_free_ char *s = NULL;
        _cleanup_free_ char *hx = NULL; /* '~' expanded */
        _cleanup_free_ char *hn = NULL; /* normalised */
        _cleanup_free_ char *sn = NULL;
        bool ro;
        int r = mount_split(spec, &h, &s, &ro, ret_why);
        if (r < 0)
                return r;
        r = expand_home(h, home, &hx, ret_why);
        if (r < 0)
                return r;
        r = path_normalize(hx, &hn);
        if (r == -EINVAL)
                *ret_why = "the host path must be absolute (or start with '~') without '..'";
        if (r < 0)
                return r;
        r = path_normalize(s, &sn);
        if (r == -EINVAL)
                *ret_why = "the sandbox path must be absolute without '..'";
        if (r < 0)
                return r;
        if (strcmp(sn, "/") == 0 || path_under(sn, "/proc") || path_under(sn, "/dev")) {
                *ret_why = "the sandbox path may not be '/' or under /proc or /dev";
                return -EINVAL;
        }
        *ret = (struct sbx_mount){.host = TAKE_PTR(hn), .sandbox = TAKE_PTR(sn), .read_only = ro};
        return 0;
}
