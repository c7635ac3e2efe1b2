/* SPDX-License-Identifier: MIT */
/* sbx serve's file search and directory listing (ops.h, ops_find), on the bounded walk. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "fsinfo.h"
#include "globmatch.h"
#include "ops.h"
#include "walk.h"

struct find_run {
        const struct ops_find_req *req;
        char **alts; /* the pattern's brace alternatives; NULL: every file */
        struct fs_names names;
        struct buf root; /* the absolute path of the walk's root */
        struct buf path; /* scratch */
        struct buf *out;
        size_t n;
        bool results_cut;
};

static void find_run_free(struct find_run *run)
{
        for (char **a = run->alts; a && *a; a++)
                free(*a);
        free(run->alts);
        fs_names_free(&run->names);
        buf_freep(&run->root);
        buf_freep(&run->path);
}

static bool name_matches(const struct find_run *run, const struct walk_entry *ent)
{
        if (!run->alts)
                return true;
        for (char **a = run->alts; *a; a++)
                if (glob_segment_match(*a, strlen(*a), ent->name, ent->name_len))
                        return true;
        return false;
}

static int find_visit(void *ctx, const struct walk_entry *ent)
{
        struct find_run *run = ctx;
        bool dir = ent->type == DT_DIR;
        bool want = run->req->list ? true : !dir && name_matches(run, ent);
        if (want) {
                if (run->n == OPS_RESULTS_MAX) {
                        run->results_cut = true;
                        return WALK_STOP;
                }
                run->path.len = 0;
                int r = buf_append(&run->path, run->root.data, run->root.len);
                if (r == 0)
                        r = ops_path_join(&run->path, ent->path, ent->path_len);
                if (r == 0)
                        r = buf_puts(run->out, run->n ? "," : "");
                if (r < 0)
                        return r;
                r = fs_info_json(run->out, &run->names, ent->dirfd, ent->name, run->path.data);
                if (r == -ENOMEM)
                        return r;
                if (r == 0)
                        run->n++;
                else /* vanished meanwhile: drop its separator */
                        run->out->data[run->out->len -= run->n ? 1 : 0] = '\0';
        }
        if (!dir)
                return WALK_SKIP;
        return run->req->list && ent->depth >= run->req->depth ? WALK_SKIP : WALK_DESCEND;
}

static int find_prepare(struct find_run *run, struct sbx_error *e)
{
        const struct ops_find_req *req = run->req;
        if (!req->path || !req->path[0])
                return sbx_usage(e, "an empty path");
        if (!req->list && req->pattern && req->pattern[0] && strcmp(req->pattern, "**") != 0) {
                if (strchr(req->pattern, '/'))
                        return sbx_usage(e, "invalid pattern '%s': it matches names, not paths",
                                         req->pattern);
                int r = glob_expand_braces(req->pattern, OPS_GLOB_MAX_ALTS, &run->alts);
                if (r == -E2BIG)
                        return sbx_usage(e, "invalid pattern '%s': more than %u alternatives",
                                         req->pattern, OPS_GLOB_MAX_ALTS);
                if (r < 0)
                        return ops_oom(e);
        }
        int r = ops_path_abs(req->path, &run->root);
        return r < 0 ? ops_fail_errno(e, r, "failed to resolve '%s'", req->path) : 0;
}

int ops_find(void *arg, struct buf *out, struct sbx_error *e)
{
        _cleanup_(find_run_free) struct find_run run = {.req = arg, .out = out};
        const struct ops_find_req *req = run.req;
        int r = find_prepare(&run, e);
        if (r < 0)
                return r;
        /* a listing refuses a symlink as its root; a search follows it, as find -H does */
        int flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        _cleanup_close_ int fd = open(req->path, flags | (req->list ? O_NOFOLLOW : 0));
        if (fd < 0)
                return ops_fail_errno(e, errno == ELOOP ? ENOTDIR : errno, "failed to %s '%s'",
                                      req->list ? "list" : "search", req->path);
        if (buf_puts(out, "[") < 0)
                return ops_oom(e);
        struct walk w = {
            .fn = find_visit,
            .ctx = &run,
            .max_depth =
                req->list && req->depth < OPS_WALK_MAX_DEPTH ? req->depth : OPS_WALK_MAX_DEPTH,
            .max_visits = OPS_WALK_MAX_VISITS,
        };
        if (!req->list || req->depth > 0)
                r = walk_tree(&w, fd);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to %s '%s'", req->list ? "list" : "search",
                                      req->path);
        const char *cut = run.results_cut                 ? "results"
                          : w.visits_limited              ? "entries"
                          : w.depth_limited && !req->list ? "depth"
                                                          : NULL;
        r = buf_puts(out, "]\n");
        if (r == 0 && cut)
                r = buf_printf(out, "truncated %s\n", cut);
        return r < 0 ? ops_oom(e) : 0;
}
