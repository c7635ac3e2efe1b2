/* SPDX-License-Identifier: MIT */
/* grep: PCRE2 (with JIT) over a file or a bounded walk of a directory. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "globmatch.h"
#include "grep.h"
#include "walk.h"

#define GREP_MATCH_LIMIT 10000000u
#define GREP_JIT_STACK_MAX (1u << 20)

int grep_matcher_init(struct grep_matcher *m, const char *pattern, bool caseless, bool fixed,
                      char *err, size_t errlen)
{
        uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
        int ec;
        PCRE2_SIZE eo;

        *m = (struct grep_matcher){0};
        if (caseless)
                opts |= PCRE2_CASELESS;
        /* PCRE2_LITERAL allows no MULTILINE; a literal has no ^ or $ anyway */
        opts |= fixed ? PCRE2_LITERAL : PCRE2_MULTILINE;
        pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
        if (!cc)
                return -ENOMEM;
        /* "$" matches before "\r\n" too (CRLF files) */
        pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
        m->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, cc);
        pcre2_compile_context_free(cc);
        if (!m->code) {
                PCRE2_UCHAR msg[256];
                if (pcre2_get_error_message(ec, msg, sizeof(msg)) < 0)
                        snprintf((char *)msg, sizeof(msg), "error %d", ec);
                snprintf(err, errlen, "%s at offset %zu", (const char *)msg, (size_t)eo);
                return -EINVAL;
        }
        m->md = pcre2_match_data_create(1, NULL);
        m->mctx = pcre2_match_context_create(NULL);
        if (!m->md || !m->mctx)
                return -ENOMEM;
        pcre2_set_match_limit(m->mctx, GREP_MATCH_LIMIT);
        /* JIT where the kernel and the seccomp profile allow executable memory */
        m->jit = pcre2_jit_compile(m->code, PCRE2_JIT_COMPLETE) == 0;
        if (m->jit) {
                m->jit_stack = pcre2_jit_stack_create(32 * 1024, GREP_JIT_STACK_MAX, NULL);
                if (m->jit_stack)
                        pcre2_jit_stack_assign(m->mctx, NULL, m->jit_stack);
        }
        return 0;
}

void grep_matcher_free(struct grep_matcher *m)
{
        pcre2_jit_stack_free(m->jit_stack);
        pcre2_match_context_free(m->mctx);
        pcre2_match_data_free(m->md);
        pcre2_code_free(m->code);
        *m = (struct grep_matcher){0};
}

int grep_matcher_find(struct grep_matcher *m, const char *s, size_t len, size_t start, size_t *ms,
                      size_t *me)
{
        int rc = m->jit ? pcre2_jit_match(m->code, (PCRE2_SPTR)s, len, start, 0, m->md, m->mctx)
                        : pcre2_match(m->code, (PCRE2_SPTR)s, len, start, 0, m->md, m->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
                return 0;
        if (rc < 0)
                return -EIO;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
        /* \K may put the start after the end */
        *ms = ov[0] < ov[1] ? ov[0] : ov[1];
        *me = ov[0] < ov[1] ? ov[1] : ov[0];
        return 1;
}

int ops_grep_mode_parse(const char *s, enum ops_grep_mode *ret)
{
        if (strcmp(s, "files_with_matches") == 0)
                *ret = OPS_GREP_FILES;
        else if (strcmp(s, "content") == 0)
                *ret = OPS_GREP_CONTENT;
        else if (strcmp(s, "count") == 0)
                *ret = OPS_GREP_COUNT;
        else
                return -EINVAL;
        return 0;
}

struct grep_run {
        struct grep_search s;
        struct grep_matcher m;
        struct glob_pattern *glob;
        bool glob_has_slash;
        struct buf root; /* absolute PATH */
        struct buf path; /* absolute path of the file being searched */
};

static void grep_run_free(struct grep_run *run)
{
        grep_search_free(&run->s);
        grep_matcher_free(&run->m);
        if (run->glob)
                glob_free(run->glob);
        buf_freep(&run->root);
        buf_freep(&run->path);
}

static int grep_compile(const struct ops_grep_req *req, struct grep_run *run, struct sbx_error *e)
{
        char err[300];
        if (!req->pattern)
                return sbx_usage(e, "grep needs a PATTERN");
        int r =
            grep_matcher_init(&run->m, req->pattern, req->caseless, req->fixed, err, sizeof(err));
        if (r == -EINVAL)
                return sbx_usage(e, "invalid regular expression '%s': %s", req->pattern, err);
        if (r < 0)
                return ops_oom(e);
        if (!req->glob)
                return 0;
        r = glob_compile(req->glob, OPS_GLOB_MAX_ALTS, &run->glob);
        if (r == -EINVAL || r == -E2BIG)
                return sbx_usage(e, "invalid --glob pattern '%s'", req->glob);
        if (r < 0)
                return ops_oom(e);
        run->glob_has_slash = strchr(req->glob, '/') != NULL;
        return 0;
}

static int grep_prepare(const struct ops_grep_req *req, struct grep_run *run, struct sbx_error *e)
{
        if (req->before > OPS_CONTEXT_MAX || req->after > OPS_CONTEXT_MAX)
                return sbx_usage(e, "context lines must be at most %u", OPS_CONTEXT_MAX);
        return grep_compile(req, run, e);
}

int ops_grep_validate(const struct ops_grep_req *req, struct sbx_error *e)
{
        _cleanup_(grep_run_free) struct grep_run run = {0};
        return grep_prepare(req, &run, e);
}

static bool vcs_dir(const char *name)
{
        return strcmp(name, ".git") == 0 || strcmp(name, ".hg") == 0 || strcmp(name, ".svn") == 0;
}

static int grep_file_at(struct grep_run *run, int dirfd, const char *name, const char *path)
{
        _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return 0; /* vanished, swapped, unreadable or not a regular file: skipped */
        return grep_search_fd(&run->s, fd, &st, path);
}

static int grep_visit(void *ctx, const struct walk_entry *ent)
{
        struct grep_run *run = ctx;
        int r;

        if (ent->type == DT_DIR)
                return vcs_dir(ent->name) ? WALK_SKIP : WALK_DESCEND;
        if (ent->type != DT_REG)
                return WALK_SKIP;
        if (run->glob && !glob_match_path(run->glob, run->glob_has_slash ? ent->path : ent->name))
                return WALK_SKIP;
        run->path.len = 0;
        if ((r = buf_append(&run->path, run->root.data, run->root.len)) < 0 ||
            (r = ops_path_join(&run->path, ent->path, ent->path_len)) < 0)
                return r;
        if ((r = grep_file_at(run, ent->dirfd, ent->name, run->path.data)) < 0)
                return r;
        return run->s.truncated ? WALK_STOP : WALK_SKIP;
}

static int grep_dir(struct grep_run *run, int fd, struct walk *w)
{
        *w = (struct walk){
            .fn = grep_visit,
            .ctx = run,
            .max_depth = OPS_WALK_MAX_DEPTH,
            .max_visits = OPS_WALK_MAX_VISITS,
        };
        return walk_tree(w, fd);
}

/*
 * The end of the output. A search that was cut short (the result cap, a bound of the walk, a
 * line too long to search) says so in its last lines, or in elements of the JSON array, and
 * is never "no match": content past the cut may match.
 */
static int grep_finish(const struct grep_run *run, const struct walk *w, bool json, struct buf *out,
                       struct sbx_error *e)
{
        const struct grep_search *s = &run->s;
        bool cut = s->truncated || s->long_lines || w->visits_limited || w->depth_limited;
        size_t n_items = s->results;
        char text[600];
        int r = 0;

        if (!json && s->results == 0 && !cut)
                return ops_fail_silent(e);
        if (s->truncated) {
                snprintf(text, sizeof(text), "Results truncated at %u entries", OPS_RESULTS_MAX);
                r = json ? ops_cut_json(out, &n_items, "results", text) : ops_cut_line(out, text);
        }
        if (r == 0 && s->long_lines) {
                snprintf(text, sizeof(text),
                         "Search cut short: %zu file(s) have a line longer than %u MiB, searched "
                         "up to it; the first: %.400s",
                         s->long_lines, OPS_GREP_LINE_MAX >> 20, s->long_line_path.data);
                r = json ? ops_cut_json(out, &n_items, "line", text) : ops_cut_line(out, text);
        }
        if (r == 0)
                r = ops_walk_cuts(out, json, &n_items, w);
        if (r == 0 && json)
                r = buf_puts(out, "]\n");
        return r < 0 ? ops_oom(e) : 0;
}

int ops_grep(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_grep_req *req = arg;
        const char *path = req->path && req->path[0] ? req->path : ".";
        _cleanup_(grep_run_free) struct grep_run run = {0};
        struct walk w = {0};
        struct stat st;
        int r;

        if ((r = grep_prepare(req, &run, e)) < 0)
                return r;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return ops_fail_errno(e, errno, "failed to search '%s'", path);
        if (fstat(fd, &st) < 0)
                return ops_fail_errno(e, errno, "failed to search '%s'", path);
        if ((r = ops_path_abs(path, &run.root)) < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", path);
        run.s = (struct grep_search){.req = req, .m = &run.m, .out = out};
        if (req->json && buf_append(out, "[", 1) < 0)
                return ops_oom(e);
        if (S_ISDIR(st.st_mode))
                r = grep_dir(&run, fd, &w);
        else if (S_ISREG(st.st_mode))
                r = grep_search_fd(&run.s, fd, &st, run.root.data);
        if (r == -ENOMEM)
                return ops_oom(e);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to search '%s'", path);
        return grep_finish(&run, &w, req->json, out, e);
}
