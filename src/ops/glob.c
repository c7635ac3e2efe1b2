/* SPDX-License-Identifier: MIT */
/* glob: paths matching a pattern, newest first, from one bounded walk. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/escape.h"
#include "common.h"
#include "globmatch.h"
#include "ops.h"
#include "walk.h"

struct glob_hit {
        char *rel; /* relative to the walk's root */
        struct stat st;
};

/* The OPS_RESULTS_MAX best hits so far, as a heap with the worst one on top. */
struct glob_run {
        const struct glob_pattern *g;
        struct glob_hit *heap;
        size_t n;
        size_t total; /* every match, kept or not */
};

static void glob_run_free(struct glob_run *run)
{
        for (size_t i = 0; i < run->n; i++)
                free(run->heap[i].rel);
        free(run->heap);
}

/* Is a listed before b: newer first, then by path. */
static bool hit_before(const struct glob_hit *a, const struct glob_hit *b)
{
        if (a->st.st_mtim.tv_sec != b->st.st_mtim.tv_sec)
                return a->st.st_mtim.tv_sec > b->st.st_mtim.tv_sec;
        if (a->st.st_mtim.tv_nsec != b->st.st_mtim.tv_nsec)
                return a->st.st_mtim.tv_nsec > b->st.st_mtim.tv_nsec;
        return strcmp(a->rel, b->rel) < 0;
}

static int hit_cmp(const void *a, const void *b)
{
        return hit_before(a, b) ? -1 : hit_before(b, a) ? 1 : 0;
}

static void heap_swap(struct glob_hit *h, size_t i, size_t j)
{
        struct glob_hit t = h[i];
        h[i] = h[j];
        h[j] = t;
}

/* Worst on top: a parent is listed after its children. */
static void heap_up(struct glob_hit *h, size_t i)
{
        while (i > 0 && hit_before(&h[(i - 1) / 2], &h[i])) {
                heap_swap(h, i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void heap_down(struct glob_hit *h, size_t n, size_t i)
{
        for (;;) {
                size_t w = i, l = 2 * i + 1, r = l + 1;
                if (l < n && hit_before(&h[w], &h[l]))
                        w = l;
                if (r < n && hit_before(&h[w], &h[r]))
                        w = r;
                if (w == i)
                        return;
                heap_swap(h, i, w);
                i = w;
        }
}

static int glob_record(struct glob_run *run, const struct walk_entry *ent)
{
        struct glob_hit hit;
        if (fstatat(ent->dirfd, ent->name, &hit.st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0; /* vanished */
        hit.rel = (char *)ent->path;
        run->total++;
        if (run->n == OPS_RESULTS_MAX && !hit_before(&hit, &run->heap[0]))
                return 0;
        hit.rel = strndup(ent->path, ent->path_len);
        if (!hit.rel)
                return -ENOMEM;
        if (run->n < OPS_RESULTS_MAX) {
                run->heap[run->n++] = hit;
                heap_up(run->heap, run->n - 1);
        } else {
                free(run->heap[0].rel);
                run->heap[0] = hit;
                heap_down(run->heap, run->n, 0);
        }
        return 0;
}

static int glob_visit(void *ctx, const struct walk_entry *ent)
{
        struct glob_run *run = ctx;
        unsigned flags = glob_step(run->g, ent->state, ent->name, ent->name_len, ent->child_state);
        if ((flags & GLOB_MATCH) && (!run->g->dirs_only || ent->type == DT_DIR)) {
                int r = glob_record(run, ent);
                if (r < 0)
                        return r;
        }
        return (flags & GLOB_DESCEND) && ent->type == DT_DIR ? WALK_DESCEND : WALK_SKIP;
}

/*
 * Split the pattern into the directory the walk starts at and the relative rest: "/..." is
 * absolute, leading "./" are dropped and leading "../" move the base up.
 */
static int glob_split(const char *pattern, const char *dir, struct buf *base, const char **rest)
{
        const char *p = pattern;
        int r;
        base->len = 0;
        if (p[0] == '/') {
                r = buf_puts(base, "/");
                while (*p == '/')
                        p++;
        } else
                r = buf_puts(base, dir && dir[0] ? dir : ".");
        while (r == 0) {
                if (p[0] == '.' && (p[1] == '/' || p[1] == '\0'))
                        p += 1;
                else if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) {
                        r = buf_puts(base, "/..");
                        p += 2;
                } else
                        break;
                while (*p == '/')
                        p++;
        }
        *rest = p;
        return r;
}

static int glob_prepare(const struct ops_glob_req *req, struct buf *base, struct glob_pattern **g,
                        struct sbx_error *e)
{
        const char *rest;
        if (!req->pattern || !req->pattern[0])
                return sbx_usage(e, "the glob pattern must not be empty");
        if (glob_split(req->pattern, req->dir, base, &rest) < 0)
                return ops_oom(e);
        int r = glob_compile(rest, OPS_GLOB_MAX_ALTS, g);
        if (r == -E2BIG)
                return sbx_usage(e,
                                 "invalid glob pattern '%s': longer than %u bytes or more than "
                                 "%u brace alternatives",
                                 req->pattern, GLOB_MAX_PATTERN, OPS_GLOB_MAX_ALTS);
        if (r == -EINVAL)
                return sbx_usage(e, "invalid glob pattern '%s': it names no entry", req->pattern);
        return r < 0 ? ops_oom(e) : 0;
}

int ops_glob_validate(const struct ops_glob_req *req, struct sbx_error *e)
{
        _cleanup_buf_ struct buf base = {0};
        _cleanup_glob_ struct glob_pattern *g = NULL;
        return glob_prepare(req, &base, &g, e);
}

static int glob_format(struct glob_run *run, const struct walk *w, const char *root, bool json,
                       struct buf *out)
{
        _cleanup_buf_ struct buf p = {0};
        int r = 0;

        qsort(run->heap, run->n, sizeof(*run->heap), hit_cmp);
        if (json)
                r = buf_append(out, "[", 1);
        for (size_t i = 0; r == 0 && i < run->n; i++) {
                p.len = 0;
                if ((r = buf_puts(&p, root)) < 0 ||
                    (r = ops_path_join(&p, run->heap[i].rel, strlen(run->heap[i].rel))) < 0)
                        break;
                if (!json) {
                        if ((r = escape_append(out, p.data, p.len, 0)) == 0)
                                r = buf_append(out, "\n", 1);
                } else if ((r = buf_puts(out, i ? "," : "")) == 0)
                        r = ops_entry_json(out, &run->heap[i].st, p.data);
        }
        if (r < 0)
                return r;
        size_t n_items = run->n;
        char text[64];
        snprintf(text, sizeof(text), "Results truncated at %u entries", OPS_RESULTS_MAX);
        if (run->total > run->n)
                r = json ? ops_cut_json(out, &n_items, "results", text) : ops_cut_line(out, text);
        if (r == 0)
                r = ops_walk_cuts(out, json, &n_items, w);
        return r == 0 && json ? buf_puts(out, "]\n") : r;
}

int ops_glob(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_glob_req *req = arg;
        _cleanup_buf_ struct buf base = {0}, root = {0};
        _cleanup_glob_ struct glob_pattern *g = NULL;
        _cleanup_(glob_run_free) struct glob_run run = {0};
        _cleanup_free_ uint8_t *state = NULL;
        int r;

        if ((r = glob_prepare(req, &base, &g, e)) < 0)
                return r;
        _cleanup_close_ int fd =
            open(base.data, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to search '%s'", base.data);
        if ((r = ops_path_abs(base.data, &root)) < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", base.data);

        run.g = g;
        run.heap = malloc(OPS_RESULTS_MAX * sizeof(*run.heap));
        state = malloc(g->state_bytes);
        if (!run.heap || !state)
                return ops_oom(e);
        glob_state_init(g, state);
        struct walk w = {
            .fn = glob_visit,
            .ctx = &run,
            .max_depth = OPS_WALK_MAX_DEPTH,
            .max_visits = OPS_WALK_MAX_VISITS,
            .state_size = g->state_bytes,
            .root_state = state,
        };
        if ((r = walk_tree(&w, fd)) < 0)
                return ops_fail_errno(e, r, "failed to search '%s'", base.data);
        if (glob_format(&run, &w, root.data, req->json, out) < 0)
                return ops_oom(e);
        return 0;
}
