/* SPDX-License-Identifier: MIT */
#include "globmatch.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { GLOB_POS_SEG, GLOB_POS_STAR2, GLOB_POS_ACCEPT };

/* ---- one component ---------------------------------------------------------------- */

/* Decode one UTF-8 character of s[i..n): its length, and the code point in *cp (an invalid
 * byte decodes as itself + 0x110000 so it only ever equals itself). */
static size_t u8_next(const char *s, size_t i, size_t n, uint32_t *cp)
{
        const unsigned char *u = (const unsigned char *)s + i;
        size_t len = 1, avail = n - i;
        uint32_t c = u[0];

        if (c < 0x80) {
                *cp = c;
                return 1;
        }
        if (c >= 0xc2 && c <= 0xdf)
                len = 2, c &= 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
                len = 3, c &= 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
                len = 4, c &= 0x07;
        else
                len = 0;
        if (len == 0 || len > avail)
                goto invalid;
        for (size_t k = 1; k < len; k++) {
                if ((u[k] & 0xc0) != 0x80)
                        goto invalid;
                c = (c << 6) | (u[k] & 0x3f);
        }
        *cp = c;
        return len;
invalid:
        *cp = 0x110000u + u[0];
        return 1;
}

/* Index just after the "]" closing the bracket expression at p[i] == '[', or 0. */
static size_t class_end(const char *p, size_t i, size_t n)
{
        size_t j = i + 1;
        if (j < n && (p[j] == '!' || p[j] == '^'))
                j++;
        if (j < n && p[j] == ']')
                j++;
        while (j < n && p[j] != ']') {
                if (p[j] == '[' && j + 1 < n && p[j + 1] == ':') {
                        const char *end = memmem(p + j + 2, n - j - 2, ":]", 2);
                        j = end ? (size_t)(end - p) + 2 : j + 1;
                } else if (p[j] == '\\' && j + 1 < n)
                        j += 2;
                else
                        j++;
        }
        return j < n ? j + 1 : 0;
}

static bool named_class_match(const char *name, size_t len, uint32_t c)
{
        static const struct {
                const char *name;
                int (*fn)(int);
        } classes[] = {
            {"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank}, {"cntrl", iscntrl},
            {"digit", isdigit}, {"graph", isgraph}, {"lower", islower}, {"print", isprint},
            {"punct", ispunct}, {"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
        };
        if (c >= 0x80)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
                if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0)
                        return classes[i].fn((int)c) != 0;
        return false;
}

/* Does c match the bracket expression p[i..end) (end is just after its "]")? */
static bool class_match(const char *p, size_t i, size_t end, uint32_t c)
{
        size_t j = i + 1, last = end - 1; /* p[last] == ']' */
        bool neg = false, hit = false;

        if (p[j] == '!' || p[j] == '^')
                neg = true, j++;
        while (j < last) {
                uint32_t lo, hi;
                if (p[j] == '[' && j + 1 < last && p[j + 1] == ':') {
                        const char *ce = memmem(p + j + 2, last - j - 2, ":]", 2);
                        if (ce) {
                                hit |= named_class_match(p + j + 2, (size_t)(ce - p) - j - 2, c);
                                j = (size_t)(ce - p) + 2;
                                continue;
                        }
                }
                if (p[j] == '\\' && j + 1 < last)
                        j++;
                j += u8_next(p, j, last, &lo);
                hi = lo;
                if (j + 1 < last && p[j] == '-') {
                        size_t k = j + 1;
                        if (p[k] == '\\' && k + 1 < last)
                                k++;
                        j = k + u8_next(p, k, last, &hi);
                }
                if (c >= lo && c <= hi)
                        hit = true;
        }
        return hit != neg;
}

/* Match one non-star pattern item at p[*pi] against s[*si]; advance both on success. */
static bool match_one(const char *p, size_t pn, size_t *pi, const char *s, size_t sn, size_t *si)
{
        uint32_t c;
        size_t clen = u8_next(s, *si, sn, &c);

        if (p[*pi] == '?') {
                *pi += 1;
                *si += clen;
                return true;
        }
        if (p[*pi] == '[') {
                size_t end = class_end(p, *pi, pn);
                if (end > 0) {
                        if (!class_match(p, *pi, end, c))
                                return false;
                        *pi = end;
                        *si += clen;
                        return true;
                }
        }
        size_t q = *pi;
        if (p[q] == '\\' && q + 1 < pn)
                q++;
        if (p[q] != s[*si])
                return false;
        *pi = q + 1;
        *si += 1;
        return true;
}

bool glob_segment_match(const char *p, size_t pn, const char *s, size_t sn)
{
        size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;

        /* a leading "." must be matched by a literal "." */
        if (sn > 0 && s[0] == '.' &&
            !(pn > 0 && (p[0] == '.' || (p[0] == '\\' && pn > 1 && p[1] == '.'))))
                return false;
        while (si < sn) {
                if (pi < pn && p[pi] == '*') {
                        while (pi < pn && p[pi] == '*')
                                pi++;
                        star_p = pi;
                        star_s = si;
                        continue;
                }
                if (pi < pn && match_one(p, pn, &pi, s, sn, &si))
                        continue;
                if (star_p == SIZE_MAX)
                        return false;
                uint32_t c;
                star_s += u8_next(s, star_s, sn, &c);
                pi = star_p;
                si = star_s;
        }
        while (pi < pn && p[pi] == '*')
                pi++;
        return pi == pn;
}

/* ---- braces --------------------------------------------------------------------------- */

struct strv {
        char **v;
        size_t n, max;
};

static int strv_push(struct strv *l, char *s)
{
        if (l->n >= l->max) {
                free(s);
                return -E2BIG;
        }
        char **v = realloc(l->v, (l->n + 2) * sizeof(char *));
        if (!v) {
                free(s);
                return -ENOMEM;
        }
        l->v = v;
        l->v[l->n++] = s;
        l->v[l->n] = NULL;
        return 0;
}

/* Find the first "{" that expands: its index, the matching "}" and the top-level commas. */
static bool brace_find(const char *s, size_t n, size_t *open, size_t *close)
{
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\') {
                        i++;
                        continue;
                }
                if (s[i] == '[') {
                        size_t end = class_end(s, i, n);
                        if (end > 0)
                                i = end - 1;
                        continue;
                }
                if (s[i] != '{')
                        continue;
                int depth = 0;
                bool comma = false;
                for (size_t j = i; j < n; j++) {
                        if (s[j] == '\\') {
                                j++;
                        } else if (s[j] == '[') {
                                size_t end = class_end(s, j, n);
                                if (end > 0)
                                        j = end - 1;
                        } else if (s[j] == '{') {
                                depth++;
                        } else if (s[j] == '}' && --depth == 0) {
                                if (comma) {
                                        *open = i;
                                        *close = j;
                                        return true;
                                }
                                break;
                        } else if (s[j] == ',' && depth == 1) {
                                comma = true;
                        }
                }
        }
        return false;
}

static int brace_expand(const char *s, struct strv *out)
{
        size_t n = strlen(s), open, close;
        if (!brace_find(s, n, &open, &close)) {
                char *copy = strdup(s);
                return copy ? strv_push(out, copy) : -ENOMEM;
        }
        size_t start = open + 1;
        int depth = 0;
        for (size_t j = open + 1; j <= close; j++) {
                if (s[j] == '\\') {
                        j++;
                        continue;
                }
                if (s[j] == '[') {
                        size_t end = class_end(s, j, n);
                        if (end > 0)
                                j = end - 1;
                        continue;
                }
                if (s[j] == '{')
                        depth++;
                else if (s[j] == '}' && j < close)
                        depth--;
                if (!((s[j] == ',' && depth == 0) || j == close))
                        continue;
                /* prefix + alternative + suffix, expanded again */
                size_t alen = j - start, len = open + alen + (n - close - 1);
                _cleanup_free_ char *alt = malloc(len + 1);
                if (!alt)
                        return -ENOMEM;
                memcpy(alt, s, open);
                memcpy(alt + open, s + start, alen);
                memcpy(alt + open + alen, s + close + 1, n - close - 1);
                alt[len] = '\0';
                int r = brace_expand(alt, out);
                if (r < 0)
                        return r;
                start = j + 1;
        }
        return 0;
}

int glob_expand_braces(const char *pattern, size_t max_alts, char ***ret)
{
        struct strv l = {.max = max_alts};
        int r = strlen(pattern) > GLOB_MAX_PATTERN ? -E2BIG : brace_expand(pattern, &l);
        /* brace_expand gives at least one alternative; an empty list would still be refused */
        if (r < 0 || !l.v) {
                strv_freep(&l.v);
                return r < 0 ? r : -EINVAL;
        }
        *ret = l.v;
        return 0;
}

/* ---- the NFA ---------------------------------------------------------------------------- */

void glob_free(struct glob_pattern *g)
{
        for (size_t i = 0; i < g->n_pos; i++)
                free(g->pos_pat[i]);
        free(g->pos_pat);
        free(g->kind);
        free(g->alt_start);
        free(g);
}

static int glob_add_pos(struct glob_pattern *g, const char *pat, size_t len, unsigned char kind)
{
        if (g->n_pos >= GLOB_MAX_POSITIONS)
                return -E2BIG;
        char **pp = realloc(g->pos_pat, (g->n_pos + 1) * sizeof(char *));
        if (!pp)
                return -ENOMEM;
        g->pos_pat = pp;
        unsigned char *k = realloc(g->kind, g->n_pos + 1);
        if (!k)
                return -ENOMEM;
        g->kind = k;
        g->pos_pat[g->n_pos] = pat ? strndup(pat, len) : NULL;
        if (pat && !g->pos_pat[g->n_pos])
                return -ENOMEM;
        g->kind[g->n_pos++] = kind;
        return 0;
}

/* One brace-free alternative: its components, then its accepting position. */
static int glob_add_alt(struct glob_pattern *g, const char *s)
{
        size_t start = g->n_pos, comps = 0;
        int r;
        for (const char *p = s; *p;) {
                while (*p == '/')
                        p++;
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);
                if (n > 0 && !(n == 1 && p[0] == '.')) {
                        bool star2 = n == 2 && p[0] == '*' && p[1] == '*';
                        if ((r = glob_add_pos(g, p, n, star2 ? GLOB_POS_STAR2 : GLOB_POS_SEG)) < 0)
                                return r;
                        comps++;
                }
                p = end;
        }
        if (comps == 0)
                return 0; /* matches only the root itself, which is never an entry */
        if ((r = glob_add_pos(g, NULL, 0, GLOB_POS_ACCEPT)) < 0)
                return r;
        size_t *as = realloc(g->alt_start, (g->n_alts + 1) * sizeof(size_t));
        if (!as)
                return -ENOMEM;
        g->alt_start = as;
        g->alt_start[g->n_alts++] = start;
        return 0;
}

int glob_compile(const char *pattern, size_t max_alts, struct glob_pattern **ret)
{
        _cleanup_strv_ char **alts = NULL;
        _cleanup_glob_ struct glob_pattern *g = calloc(1, sizeof(*g));
        size_t len = strlen(pattern);
        int r;

        if (!g)
                return -ENOMEM;
        if (len == 0)
                return -EINVAL;
        g->dirs_only = pattern[len - 1] == '/';
        if ((r = glob_expand_braces(pattern, max_alts, &alts)) < 0)
                return r;
        for (char **a = alts; *a; a++)
                if ((r = glob_add_alt(g, *a)) < 0)
                        return r;
        if (g->n_alts == 0)
                return -EINVAL;
        g->state_bytes = (g->n_pos + 7) / 8;
        *ret = TAKE_PTR(g);
        return 0;
}

static inline bool bit_get(const uint8_t *s, size_t i)
{
        return s[i / 8] & (1u << (i % 8));
}

static inline void bit_set(uint8_t *s, size_t i)
{
        s[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* "**" may match zero components: wherever it is, the position after it is too. */
static void glob_closure(const struct glob_pattern *g, uint8_t *s)
{
        for (size_t i = 0; i < g->n_pos; i++)
                if (g->kind[i] == GLOB_POS_STAR2 && bit_get(s, i))
                        bit_set(s, i + 1);
}

void glob_state_init(const struct glob_pattern *g, uint8_t *state)
{
        memset(state, 0, g->state_bytes);
        for (size_t a = 0; a < g->n_alts; a++)
                bit_set(state, g->alt_start[a]);
        glob_closure(g, state);
}

unsigned glob_step(const struct glob_pattern *g, const uint8_t *state, const char *name, size_t len,
                   uint8_t *next)
{
        unsigned flags = 0;

        memset(next, 0, g->state_bytes);
        for (size_t b = 0; b < g->state_bytes; b++) {
                if (!state[b])
                        continue;
                for (size_t i = b * 8; i < b * 8 + 8 && i < g->n_pos; i++) {
                        if (!bit_get(state, i))
                                continue;
                        if (g->kind[i] == GLOB_POS_STAR2) {
                                if (len > 0 && name[0] != '.')
                                        bit_set(next, i);
                        } else if (g->kind[i] == GLOB_POS_SEG) {
                                if (glob_segment_match(g->pos_pat[i], strlen(g->pos_pat[i]), name,
                                                       len))
                                        bit_set(next, i + 1);
                        }
                }
        }
        glob_closure(g, next);
        for (size_t i = 0; i < g->n_pos; i++)
                if (bit_get(next, i))
                        flags |= g->kind[i] == GLOB_POS_ACCEPT ? GLOB_MATCH : GLOB_DESCEND;
        return flags;
}

bool glob_match_path(const struct glob_pattern *g, const char *path)
{
        uint8_t small[2][64];
        _cleanup_free_ uint8_t *big = NULL;
        uint8_t *cur = small[0], *next = small[1];

        if (g->state_bytes > sizeof(small[0])) {
                big = malloc(2 * g->state_bytes);
                if (!big)
                        return false;
                cur = big;
                next = big + g->state_bytes;
        }
        glob_state_init(g, cur);
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                const char *end = strchrnul(p, '/');
                const char *rest = end;
                while (*rest == '/')
                        rest++;
                unsigned flags = glob_step(g, cur, p, (size_t)(end - p), next);
                if (*rest == '\0')
                        return flags & GLOB_MATCH;
                if (!(flags & GLOB_DESCEND))
                        return false;
                uint8_t *t = cur;
                cur = next;
                next = t;
                p = rest;
        }
        return false;
}
