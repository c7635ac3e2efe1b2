/* SPDX-License-Identifier: MIT */
/*
 * Units of the config values: sizes, durations, counts, CPUs, booleans, uid ranges. Every
 * parser takes the whole string (no leading or trailing blanks, no sign, no junk) and returns
 * 0, -EINVAL for a malformed value or -ERANGE for one that does not fit.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* Leading decimal digits of s into *ret; returns the number of digits, or -ERANGE. */
static int parse_digits(const char *s, uint64_t *ret)
{
        uint64_t v = 0;
        int n = 0;
        for (; s[n] >= '0' && s[n] <= '9'; n++) {
                unsigned d = (unsigned)(s[n] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return n;
}

int parse_uint(const char *s, uint64_t *ret)
{
        uint64_t v;
        int n = parse_digits(s, &v);
        if (n < 0)
                return n;
        if (n == 0 || s[n] != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Digits followed by at most one suffix character, looked up case-insensitively in units
 * (index i multiplies by mult[i]). */
static int parse_with_suffix(const char *s, const char *units, const uint64_t *mult, uint64_t *ret)
{
        uint64_t v;
        int n = parse_digits(s, &v);
        if (n < 0)
                return n;
        if (n == 0)
                return -EINVAL;
        uint64_t m = 1;
        if (s[n] != '\0') {
                const char *u =
                    s[n + 1] == '\0' ? strchr(units, tolower((unsigned char)s[n])) : NULL;
                if (!u || !*u)
                        return -EINVAL;
                m = mult[u - units];
        }
        if (m != 0 && v > UINT64_MAX / m)
                return -ERANGE;
        *ret = v * m;
        return 0;
}

int parse_size(const char *s, uint64_t *ret)
{
        static const uint64_t mult[] = {UINT64_C(1) << 10, UINT64_C(1) << 20, UINT64_C(1) << 30,
                                        UINT64_C(1) << 40};
        if (!s)
                return -EINVAL;
        return parse_with_suffix(s, "kmgt", mult, ret);
}

int parse_duration(const char *s, uint64_t *ret_sec)
{
        static const uint64_t mult[] = {1, 60, 3600};
        uint64_t v;
        if (!s)
                return -EINVAL;
        int r = parse_with_suffix(s, "smh", mult, &v);
        if (r < 0)
                return r;
        if (v > DURATION_MAX_SEC)
                return -ERANGE;
        *ret_sec = v;
        return 0;
}

int parse_cpus(const char *s, uint64_t *ret_milli)
{
        uint64_t whole, frac = 0;
        int n = parse_digits(s, &whole);
        if (n < 0)
                return n;
        if (n == 0)
                return -EINVAL;
        if (whole > UINT64_MAX / 1000 - 1000)
                return -ERANGE;
        if (s[n] == '.') {
                const char *f = s + n + 1;
                int k = parse_digits(f, &frac);
                if (k <= 0 || k > 3 || f[k] != '\0')
                        return -EINVAL;
                for (; k < 3; k++)
                        frac *= 10;
        } else if (s[n] != '\0')
                return -EINVAL;
        *ret_milli = whole * 1000 + frac;
        return 0;
}

int parse_bool(const char *s, bool *ret)
{
        static const char *const yes[] = {"true", "yes", "on", "1"};
        static const char *const no[] = {"false", "no", "off", "0"};
        for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

int parse_uid_range(const char *s, uint32_t *ret_start, uint32_t *ret_count)
{
        uint64_t start, count;
        int n = parse_digits(s, &start);
        if (n < 0)
                return n;
        if (n == 0 || s[n] != ':')
                return -EINVAL;
        int r = parse_uint(s + n + 1, &count);
        if (r < 0)
                return r;
        if (start < 1 || count < 1)
                return -ERANGE;
        /* the last mapped id is start + count - 1 and must stay below (uid_t)-1 */
        if (start > UINT32_MAX || count > UINT32_MAX || start + count > UINT32_MAX)
                return -ERANGE;
        *ret_start = (uint32_t)start;
        *ret_count = (uint32_t)count;
        return 0;
}

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
static bool env_name_char(char ch, bool first)
{
        return ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
               (!first && ch >= '0' && ch <= '9');
}

int parse_env_assignment(const char *s)
{
        if (!s || !env_name_char(s[0], true))
                return -EINVAL;
        const char *p = s + 1;
        while (env_name_char(*p, false))
                p++;
        return *p == '=' ? 0 : -EINVAL;
}

const char *net_mode_name(enum sbx_net_mode m)
{
        switch (m) {
        case SBX_NET_NONE:
                return "none";
        case SBX_NET_HOST:
                return "host";
        case SBX_NET_PROXY:
                return "proxy";
        }
        return "unknown";
}

const char *seccomp_profile_name(enum sbx_seccomp_profile p)
{
        switch (p) {
        case SBX_SECCOMP_DEFAULT:
                return "default";
        case SBX_SECCOMP_STRICT:
                return "strict";
        case SBX_SECCOMP_UNCONFINED:
                return "unconfined";
        }
        return "unknown";
}
