/* SPDX-License-Identifier: MIT */
/*
 * The search of one file: the file streams through one reused buffer of whole lines; PCRE2
 * (JIT) runs over the whole buffer at once and lines are only split around matches, so a
 * file without a match costs one read and one match call. A match that spans a line end is
 * checked again against its line alone: a match never spans lines, as in grep.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "shared/escape.h"
#include "grep.h"

#define GREP_BUF_INIT (1u << 20)

struct gfile {
        struct grep_search *s;
        const struct ops_grep_req *req;
        const char *path;
        int fd;
        uint64_t size_hint, total_read;
        bool eof;
        size_t len;            /* bytes in s->buf; buf[0] always starts a line */
        size_t cnt_off;        /* an offset whose line number is known ... */
        uint64_t cnt_line;     /* ... this one */
        uint64_t last_printed; /* line number, 0: nothing printed from this file */
        unsigned after_left;   /* after-context lines still to print */
        uint64_t count;        /* matching lines */
        bool done;             /* nothing more to do in this file */
};

void grep_search_free(struct grep_search *s)
{
        free(s->buf);
        buf_freep(&s->long_line_path);
        s->buf = NULL;
        s->cap = 0;
}

static size_t count_nl(const char *p, size_t n)
{
        size_t c = 0;
        const char *end = p + n;
        while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
                c++;
                p++;
        }
        return c;
}

/* A path of a human output line: escaped always (one name, one line). */
static int put_path(struct buf *out, const char *path, const char *suffix)
{
        int r = escape_cstr(out, path, 0);
        return r < 0 ? r : buf_puts(out, suffix);
}

/* A content line of the human output: escaped when it goes to a terminal. */
static int put_text(const struct grep_search *s, const char *text, size_t n)
{
        if (s->req->escape_content)
                return escape_append(s->out, text, n, ESCAPE_KEEP_TAB);
        return buf_append(s->out, text, n);
}

/* The line number of the line holding offset off. */
static uint64_t line_at(struct gfile *g, size_t off)
{
        const char *b = g->s->buf;
        if (off >= g->cnt_off)
                g->cnt_line += count_nl(b + g->cnt_off, off - g->cnt_off);
        else
                g->cnt_line -= count_nl(b + off, g->cnt_off - off);
        g->cnt_off = off;
        return g->cnt_line;
}

static size_t line_end(const char *b, size_t from, size_t end)
{
        const char *p = memchr(b + from, '\n', end - from);
        return p ? (size_t)(p - b) : end;
}

static bool line_matches(struct gfile *g, size_t ls, size_t le)
{
        size_t ms, me;
        return grep_matcher_find(g->s->m, g->s->buf + ls, le - ls, 0, &ms, &me) > 0;
}

/* A result slot: false when the cap is reached (the walk then stops). */
static bool take_slot(struct gfile *g)
{
        struct grep_search *s = g->s;
        if (s->results >= OPS_RESULTS_MAX) {
                s->truncated = true;
                g->done = true;
                return false;
        }
        if (s->req->json && s->results > 0 && buf_append(s->out, ",", 1) < 0)
                s->error = -ENOMEM;
        s->results++;
        return true;
}

static void emit_line(struct gfile *g, size_t ls, size_t le, bool match)
{
        struct grep_search *s = g->s;
        const char *text = s->buf + ls;
        size_t n = le - ls;
        uint64_t ln = line_at(g, ls);
        bool context = g->req->before > 0 || g->req->after > 0;
        bool sep = context && (g->last_printed ? ln > g->last_printed + 1 : s->any_group);

        if (!take_slot(g))
                return;
        if (n > 0 && text[n - 1] == '\r')
                n--;
        bool cut = n > OPS_GREP_TEXT_MAX;
        if (cut) {
                n = OPS_GREP_TEXT_MAX;
                for (int i = 0; i < 3 && ((unsigned char)text[n] & 0xc0) == 0x80; i++)
                        n--;
        }
        int r;
        if (g->req->json) {
                char tmp[OPS_GREP_TEXT_MAX + 8];
                if (cut) {
                        memcpy(tmp, text, n);
                        /* text is (pointer, length) from here on: no NUL needed */
                        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
                        memcpy(tmp + n, "[...]", 5);
                        text = tmp;
                        n += 5;
                }
                if ((r = buf_puts(s->out, "{\"path\":")) >= 0 &&
                    (r = json_cstr(s->out, g->path)) >= 0 &&
                    (r = buf_printf(s->out, ",\"line\":%" PRIu64 ",\"text\":", ln)) >= 0 &&
                    (r = json_string(s->out, text, n)) >= 0)
                        r = buf_puts(s->out, match ? "}" : ",\"context\":true}");
        } else {
                char c = match ? ':' : '-';
                if ((r = buf_puts(s->out, sep ? "--\n" : "")) >= 0 &&
                    (r = put_path(s->out, g->path, "")) >= 0 &&
                    (r = buf_printf(s->out, "%c%" PRIu64 "%c", c, ln, c)) >= 0 &&
                    (r = put_text(s, text, n)) >= 0)
                        r = buf_puts(s->out, cut ? "[...]\n" : "\n");
        }
        if (r < 0)
                s->error = -ENOMEM;
        g->last_printed = ln;
        s->any_group = true;
}

/* Print the before-context of the line at ls that is still in the buffer and not printed. */
static void emit_before(struct gfile *g, size_t ls)
{
        const char *b = g->s->buf;
        uint64_t ln = line_at(g, ls);
        uint64_t first = ln > g->req->before ? ln - g->req->before : 1;
        if (g->last_printed >= first)
                first = g->last_printed + 1;
        size_t off = ls;
        for (uint64_t n = ln; n > first && off > 0; n--) {
                const char *p = memrchr(b, '\n', off - 1);
                off = p ? (size_t)(p - b) + 1 : 0;
        }
        while (off < ls && !g->done) {
                size_t le = line_end(b, off, ls);
                emit_line(g, off, le, false);
                off = le + 1;
        }
}

static void on_match(struct gfile *g, size_t ls, size_t le)
{
        struct grep_search *s = g->s;
        g->count++;
        switch (g->req->mode) {
        case OPS_GREP_FILES: {
                g->done = true;
                if (!take_slot(g))
                        return;
                int r = g->req->json ? json_cstr(s->out, g->path) : put_path(s->out, g->path, "\n");
                if (r < 0)
                        s->error = -ENOMEM;
                return;
        }
        case OPS_GREP_COUNT:
                return;
        case OPS_GREP_CONTENT:
                if (g->req->before > 0)
                        emit_before(g, ls);
                emit_line(g, ls, le, true);
                g->after_left = g->req->after;
                return;
        }
}

/* Search the complete lines s->buf[pos..we). */
static void process(struct gfile *g, size_t pos, size_t we)
{
        const char *b = g->s->buf;
        bool linewise = false; /* after a PCRE2 error (a limit): one line at a time */

        while (pos < we && !g->done) {
                size_t ls = pos, le, ms, me;
                if (g->after_left > 0 || linewise) {
                        le = line_end(b, pos, we);
                        if (line_matches(g, ls, le))
                                on_match(g, ls, le);
                        else if (g->after_left > 0) {
                                emit_line(g, ls, le, false);
                                g->after_left--;
                        }
                        pos = le + 1;
                        continue;
                }
                int r = grep_matcher_find(g->s->m, b, we, pos, &ms, &me);
                if (r < 0) {
                        linewise = true;
                        continue;
                }
                /* none, or only an empty match after the last line end */
                if (r == 0 || (ms >= we && b[we - 1] == '\n'))
                        return;
                const char *nl = ms > pos ? memrchr(b + pos, '\n', ms - pos) : NULL;
                ls = nl ? (size_t)(nl - b) + 1 : pos;
                le = line_end(b, ms, we);
                if (me <= le || line_matches(g, ls, le))
                        on_match(g, ls, le);
                pos = le + 1;
        }
}

/* One read into the free part of the buffer. */
static void fill(struct gfile *g)
{
        struct grep_search *s = g->s;
        while (!g->eof) {
                ssize_t n = read(g->fd, s->buf + g->len, s->cap - g->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        g->eof = true; /* a read error ends the file like EOF */
                        return;
                }
                g->len += (size_t)n;
                g->total_read += (uint64_t)n;
                if (g->size_hint > 0 && g->total_read >= g->size_hint)
                        g->eof = true; /* saves the read that would return 0 */
                return;
        }
}

/* Drop buf[0..keep): keep retained before-context lines and the partial last line. */
static void shift(struct gfile *g, size_t keep)
{
        struct grep_search *s = g->s;
        if (g->req->mode == OPS_GREP_CONTENT) {
                uint64_t line = line_at(g, keep);
                g->cnt_off = 0;
                g->cnt_line = line;
        }
        memmove(s->buf, s->buf + keep, g->len - keep);
        g->len -= keep;
}

/* Where the retained part starts: the before-context of the partial line at we. */
static size_t retain_from(struct gfile *g, size_t we)
{
        const char *b = g->s->buf;
        size_t keep = we;
        if (g->req->mode != OPS_GREP_CONTENT)
                return we;
        for (unsigned k = 0; k < g->req->before && keep > 0; k++) {
                const char *p = memrchr(b, '\n', keep - 1);
                keep = p ? (size_t)(p - b) + 1 : 0;
        }
        return g->len - keep > g->s->cap / 2 ? we : keep;
}

/* Room for a longer line: false when the line is over OPS_GREP_LINE_MAX (recorded: the
 * search says it was cut) or memory ran out (s->error). */
static bool grow(struct gfile *g)
{
        struct grep_search *s = g->s;
        if (s->cap >= OPS_GREP_LINE_MAX) {
                if (s->long_lines++ == 0 && buf_puts(&s->long_line_path, g->path) < 0)
                        s->error = -ENOMEM;
                return false;
        }
        char *p = realloc(s->buf, s->cap * 2);
        if (!p) {
                s->error = -ENOMEM;
                return false;
        }
        s->buf = p;
        s->cap *= 2;
        return true;
}

static void search_loop(struct gfile *g)
{
        struct grep_search *s = g->s;
        size_t scan = 0;

        for (;;) {
                size_t we = g->len;
                if (!g->eof) {
                        const char *p = memrchr(s->buf + scan, '\n', g->len - scan);
                        if (!p) {
                                /* no complete line yet: read on, growing for a long line */
                                if (memchr(s->buf + scan, '\0', g->len - scan))
                                        return; /* a binary tail */
                                if (g->len == s->cap && !grow(g))
                                        return; /* longer than OPS_GREP_LINE_MAX: stop here */
                                fill(g);
                                continue;
                        }
                        we = (size_t)(p - s->buf) + 1;
                }
                /* a NUL after the first 8 KiB (a sparse or binary tail) ends the search */
                const char *nul = memchr(s->buf + scan, '\0', we - scan);
                if (nul) {
                        const char *nl =
                            memrchr(s->buf + scan, '\n', (size_t)(nul - s->buf) - scan);
                        we = nl ? (size_t)(nl - s->buf) + 1 : scan;
                        g->done = true;
                }
                process(g, scan, we);
                if (g->done || g->eof || s->error < 0)
                        return;
                size_t keep = retain_from(g, we);
                shift(g, keep);
                scan = we - keep;
                fill(g);
        }
}

int grep_search_fd(struct grep_search *s, int fd, const struct stat *st, const char *path)
{
        struct gfile g = {
            .s = s,
            .req = s->req,
            .path = path,
            .fd = fd,
            .size_hint = (uint64_t)st->st_size,
            .cnt_line = 1,
        };

        if (!s->buf) {
                s->buf = malloc(GREP_BUF_INIT);
                if (!s->buf)
                        return -ENOMEM;
                s->cap = GREP_BUF_INIT;
        }
        fill(&g);
        if (memchr(s->buf, '\0', g.len < OPS_TEXT_PROBE ? g.len : OPS_TEXT_PROBE))
                return 0; /* binary */
        search_loop(&g);
        if (s->error < 0)
                return s->error;
        if (g.req->mode == OPS_GREP_COUNT && g.count > 0 && take_slot(&g)) {
                int r;
                if (g.req->json) {
                        if ((r = buf_puts(s->out, "{\"path\":")) >= 0 &&
                            (r = json_cstr(s->out, path)) >= 0)
                                r = buf_printf(s->out, ",\"count\":%" PRIu64 "}", g.count);
                } else if ((r = put_path(s->out, path, "")) >= 0)
                        r = buf_printf(s->out, ":%" PRIu64 "\n", g.count);
                if (r < 0)
                        return -ENOMEM;
        }
        return s->error;
}
