/* SPDX-License-Identifier: MIT */
/*
 * read: numbered lines offset+1 .. offset+limit of a text file, streamed through a fixed
 * chunk buffer so that memory stays bounded whatever the file is.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/escape.h"
#include "shared/util.h"
#include "common.h"
#include "ops.h"

#define READ_CHUNK (64u * 1024u)

struct reader {
        uint64_t first, last; /* the window: lines first..last, 1-based, inclusive */
        bool keep_counting;   /* go on to EOF after the window (JSON needs "lines") */
        bool escape;          /* rows escaped for a terminal (shared/escape.h) */

        uint64_t line;       /* the line being read, 1-based */
        bool line_has_bytes; /* it has content (a last line without newline still counts) */
        bool pending_cr;     /* the previous byte was '\r': a following '\n' belongs to it */

        struct buf row;   /* text of the row being built (window only) */
        unsigned chars;   /* characters in row */
        unsigned cont;    /* continuation bytes the current character still expects */
        unsigned part;    /* 0: first row of the line, then N.1, N.2, ... */
        struct buf *rows; /* the numbered rows */
        bool entered;     /* the window was reached: offset < the file's line count */
        bool truncated;   /* the output cap was hit */
        bool printing_done;
        int error; /* -ENOMEM */
};

static void reader_free(struct reader *rd)
{
        buf_freep(&rd->row);
}

/* Nothing more is needed from the file. */
static bool reader_satisfied(const struct reader *rd)
{
        return rd->printing_done && rd->entered && !rd->keep_counting;
}

static bool reader_in_window(const struct reader *rd)
{
        return !rd->printing_done && rd->line >= rd->first && rd->line <= rd->last;
}

static void reader_flush_row(struct reader *rd)
{
        char num[48];
        if (rd->part == 0)
                snprintf(num, sizeof(num), "%6" PRIu64, rd->line);
        else {
                char n[44];
                snprintf(n, sizeof(n), "%" PRIu64 ".%u", rd->line, rd->part);
                snprintf(num, sizeof(num), "%6s", n);
        }
        size_t need = strlen(num) + 1 + rd->row.len + 1;
        if (rd->rows->len + need > OPS_READ_OUTPUT_MAX) {
                rd->truncated = true;
                rd->printing_done = true;
        } else if (buf_puts(rd->rows, num) < 0 || buf_append(rd->rows, "\t", 1) < 0 ||
                   (rd->escape ? escape_append(rd->rows, rd->row.data ? rd->row.data : "",
                                               rd->row.len, ESCAPE_KEEP_TAB)
                               : buf_append(rd->rows, rd->row.data ? rd->row.data : "",
                                            rd->row.len)) < 0 ||
                   buf_append(rd->rows, "\n", 1) < 0) {
                rd->error = -ENOMEM;
                rd->printing_done = true;
        }
        rd->row.len = 0;
        rd->chars = 0;
}

static void reader_end_line(struct reader *rd, bool in_window)
{
        if (in_window) {
                reader_flush_row(rd);
                if (rd->line >= rd->last)
                        rd->printing_done = true;
        }
        rd->line++;
        rd->line_has_bytes = false;
        rd->part = 0;
        rd->cont = 0;
}

static unsigned utf8_cont_expected(unsigned char c)
{
        if (c >= 0xc2 && c <= 0xdf)
                return 1;
        if (c >= 0xe0 && c <= 0xef)
                return 2;
        if (c >= 0xf0 && c <= 0xf4)
                return 3;
        return 0;
}

/* One content byte of a line in the window. */
static void reader_add_byte(struct reader *rd, unsigned char c)
{
        if ((c & 0xc0) == 0x80 && rd->cont > 0) {
                rd->cont--;
        } else {
                if (rd->chars == OPS_READ_ROW_CHARS) {
                        reader_flush_row(rd);
                        rd->part++;
                        if (rd->printing_done)
                                return;
                }
                rd->chars++;
                rd->cont = utf8_cont_expected(c);
        }
        if (buf_append(&rd->row, &c, 1) < 0) {
                rd->error = -ENOMEM;
                rd->printing_done = true;
        }
}

/*
 * A run of content bytes of one line in the window. ASCII runs that fit the row are appended
 * whole (a 1 MB read was 16 million per-byte appends: 3.9x `cat -n`); anything else, and the
 * byte where a row is full, goes through reader_add_byte.
 */
static void reader_add_span(struct reader *rd, const unsigned char *s, size_t len)
{
        while (len > 0 && !rd->printing_done) {
                size_t room = rd->cont == 0 ? OPS_READ_ROW_CHARS - rd->chars : 0, run = 0;
                while (run < len && run < room && s[run] < 0x80)
                        run++;
                if (run == 0) {
                        reader_add_byte(rd, *s);
                        s++;
                        len--;
                        continue;
                }
                if (buf_append(&rd->row, s, run) < 0) {
                        rd->error = -ENOMEM;
                        rd->printing_done = true;
                        return;
                }
                rd->chars += (unsigned)run;
                s += run;
                len -= run;
        }
}

/* Index of the first '\n' or '\r' in p[i..n), or n. cr caches the next '\r' (or NULL). */
static size_t next_eol(const char *p, size_t i, size_t n, const char **cr)
{
        if (*cr && *cr < p + i)
                *cr = memchr(p + i, '\r', n - i);
        const char *lf = memchr(p + i, '\n', n - i);
        const char *end = p + n;
        if (lf && (!*cr || lf < *cr))
                end = lf;
        else if (*cr)
                end = *cr;
        return (size_t)(end - p);
}

/* Feed a chunk. Returns false once nothing more is needed from the file. */
static bool reader_feed(struct reader *rd, const char *p, size_t n)
{
        const char *cr = memchr(p, '\r', n);
        size_t i = 0;

        while (i < n) {
                if (rd->pending_cr) {
                        rd->pending_cr = false;
                        if (p[i] == '\n') {
                                i++;
                                continue;
                        }
                }
                if (reader_in_window(rd)) {
                        rd->entered = true;
                        size_t j = next_eol(p, i, n, &cr);
                        if (j > i) {
                                rd->line_has_bytes = true;
                                reader_add_span(rd, (const unsigned char *)p + i, j - i);
                                i = j;
                                continue; /* the line end, if any, as the window allows */
                        }
                        rd->pending_cr = p[i++] == '\r';
                        reader_end_line(rd, true);
                        continue;
                }
                if (reader_satisfied(rd))
                        return false;
                size_t j = next_eol(p, i, n, &cr);
                if (j > i)
                        rd->line_has_bytes = true;
                if (j == n)
                        break;
                rd->pending_cr = p[j] == '\r';
                reader_end_line(rd, false);
                i = j + 1;
        }
        return !reader_satisfied(rd);
}

/* End of file: the last line without a line end, and the total line count. */
static uint64_t reader_finish(struct reader *rd)
{
        if (rd->line_has_bytes) {
                if (reader_in_window(rd))
                        reader_flush_row(rd);
                return rd->line;
        }
        return rd->line - 1;
}

static ssize_t read_full(int fd, char *p, size_t n)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = RETRY_EINTR(read(fd, p + got, n - got));
                if (k < 0)
                        return negerrno();
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        return (ssize_t)got;
}

static int read_format(const struct ops_read_req *req, const char *abs, const struct buf *rows,
                       uint64_t lines, bool truncated, bool empty, struct buf *out)
{
        int r;
        if (req->json) {
                if ((r = buf_puts(out, "{\"path\":")) < 0 || (r = json_cstr(out, abs)) < 0 ||
                    (r = buf_puts(out, ",\"content\":")) < 0 ||
                    (r = json_string(out, rows->data ? rows->data : "", rows->len)) < 0)
                        return r;
                return buf_printf(out, ",\"lines\":%" PRIu64 ",\"truncated\":%s}\n", lines,
                                  truncated ? "true" : "false");
        }
        if (empty)
                return buf_puts(out, "System reminder: File exists but has empty contents\n");
        if ((r = buf_append(out, rows->data ? rows->data : "", rows->len)) < 0)
                return r;
        if (truncated)
                r = buf_puts(out, "[Output truncated at 500 KiB: continue with a larger "
                                  "--offset or a smaller --limit]\n");
        return r;
}

static int read_text(int fd, const struct ops_read_req *req, const char *abs, struct buf *out,
                     struct sbx_error *e)
{
        _cleanup_free_ char *chunk = malloc(READ_CHUNK);
        _cleanup_buf_ struct buf rows = {0};
        _cleanup_(reader_free) struct reader rd = {
            .first = req->offset + 1,
            .last = req->limit > UINT64_MAX - req->offset ? UINT64_MAX : req->offset + req->limit,
            .keep_counting = req->json,
            .escape = req->escape_content,
            .line = 1,
            .rows = &rows,
        };
        uint64_t scanned = 0;
        bool more = true;

        if (!chunk)
                return ops_oom(e);
        for (bool first = true; more && scanned < OPS_READ_SCAN_MAX; first = false) {
                ssize_t n = read_full(fd, chunk, READ_CHUNK);
                if (n < 0)
                        return ops_fail_errno(e, (int)n, "failed to read '%s'", req->path);
                if (first && !ops_is_text(chunk, (size_t)n))
                        return sbx_fail(e, EXIT_FAILED, "not_text", 0,
                                        "'%s' is not a text file (use --binary to read it)",
                                        req->path);
                if (n == 0)
                        break;
                scanned += (uint64_t)n;
                more = reader_feed(&rd, chunk, (size_t)n);
                if (rd.error < 0)
                        return ops_oom(e);
                if ((size_t)n < READ_CHUNK)
                        break;
        }
        /* when more is false the count stopped early: the window was reached, offset < M */
        uint64_t lines = reader_finish(&rd);
        if (rd.error < 0)
                return ops_oom(e);
        if (more && req->offset >= lines && !(lines == 0 && req->offset == 0))
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "Line offset %" PRIu64 " exceeds file length (%" PRIu64 " lines)",
                                req->offset, lines);
        /* JSON "truncated": the caller did not get every line after the offset, whether the
         * output cap, the --limit or the scan bound ended the window */
        bool truncated = rd.truncated || lines > rd.last || (more && scanned >= OPS_READ_SCAN_MAX);
        if (read_format(req, abs, &rows, lines, req->json ? truncated : rd.truncated, lines == 0,
                        out) < 0)
                return ops_oom(e);
        return 0;
}

static int base64_encode(const unsigned char *p, size_t n, unsigned wrap, struct buf *out)
{
        static const char tbl[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char q[4];
        unsigned col = 0;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16;
                if (i + 1 < n)
                        v |= (uint32_t)p[i + 1] << 8;
                if (i + 2 < n)
                        v |= p[i + 2];
                q[0] = tbl[(v >> 18) & 63];
                q[1] = tbl[(v >> 12) & 63];
                q[2] = q[3] = '='; /* padding, where the input ran out */
                if (i + 1 < n)
                        q[2] = tbl[(v >> 6) & 63];
                if (i + 2 < n)
                        q[3] = tbl[v & 63];
                if (buf_append(out, q, 4) < 0)
                        return -ENOMEM;
                col += 4;
                if (wrap && col >= wrap && i + 3 < n) {
                        if (buf_append(out, "\n", 1) < 0)
                                return -ENOMEM;
                        col = 0;
                }
        }
        return wrap && n > 0 ? buf_append(out, "\n", 1) : 0;
}

static int read_binary(int fd, const struct ops_read_req *req, const char *abs,
                       const struct stat *st, struct buf *out, struct sbx_error *e)
{
        _cleanup_buf_ struct buf data = {0};
        int r =
            (uint64_t)st->st_size > OPS_BINARY_MAX ? -EFBIG : read_all(fd, &data, OPS_BINARY_MAX);
        if (r == -EFBIG)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "failed to read '%s': larger than the --binary limit of %u MiB",
                                req->path, OPS_BINARY_MAX >> 20);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to read '%s'", req->path);

        _cleanup_buf_ struct buf none = {0};
        _cleanup_(reader_free) struct reader rd = {
            .first = UINT64_MAX, .last = UINT64_MAX, .line = 1, .rows = &none};
        const char *bytes = data.data ? data.data : ""; /* an empty file has no buffer */
        reader_feed(&rd, bytes, data.len);
        uint64_t lines = reader_finish(&rd);

        _cleanup_buf_ struct buf b64 = {0};
        if (base64_encode((const unsigned char *)bytes, data.len, req->json ? 0 : 76, &b64) < 0)
                return ops_oom(e);
        if (!req->json)
                r = buf_append(out, b64.data ? b64.data : "", b64.len);
        else if ((r = buf_puts(out, "{\"path\":")) >= 0 && (r = json_cstr(out, abs)) >= 0 &&
                 (r = buf_puts(out, ",\"content\":")) >= 0 &&
                 (r = json_string(out, b64.data ? b64.data : "", b64.len)) >= 0)
                r = buf_printf(out, ",\"lines\":%" PRIu64 ",\"truncated\":false}\n", lines);
        return r < 0 ? ops_oom(e) : 0;
}

int ops_read(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_read_req *req = arg;
        _cleanup_buf_ struct buf abs = {0};
        struct stat st;

        _cleanup_close_ int fd = ops_open_regular(req->path, &st, e);
        if (fd < 0)
                return fd;
        int r = ops_path_abs(req->path, &abs);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", req->path);
        if (req->binary)
                return read_binary(fd, req, abs.data, &st, out, e);
        return read_text(fd, req, abs.data, out, e);
}
