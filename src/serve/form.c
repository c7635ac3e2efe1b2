/* SPDX-License-Identifier: MIT */
/*
 * A route's multipart/form-data body taken apart as it arrives (form.h): libmicrohttpd's post
 * processor gets each piece of the body, and the route's part() each piece of each part.
 *
 * The post processor calls its iterator once at the start of every part, with whatever of the
 * value it can already tell from the boundary: nothing, when the piece of the body in hand ends
 * within four bytes of the value's start. The part's data then comes in later calls that also
 * say offset 0. So a call with no data at offset 0 is held back until it is known what it was.
 * The body goes to the post processor cut after each delimiter ("\r\n--" and the boundary):
 * once one has gone through, a call still held was an empty part (a part with data has given
 * it before its delimiter), and it is passed on; a call that comes while one is held is the
 * same part's data, as no delimiter came between. (Without a boundary to look for, a held call
 * is taken as the start of the next call's part when that has the same name, file name and
 * type; else as an empty part.)
 */
#include "form.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/macros.h"
#include "serve-internal.h"

#define FORM_BOUNDARY_MAX 70 /* RFC 2046 */

struct serve_form {
        const struct mhd_lib *mhd;
        const struct serve_parts *parts;
        struct serve_request *rq;
        struct MHD_PostProcessor *pp;
        struct { /* a call with no data at offset 0, not passed on yet (name not NULL) */
                char *name, *filename, *type;
        } held;
        char delim[4 + FORM_BOUNDARY_MAX + 1]; /* "\r\n--" + boundary; "" when unknown */
        size_t delim_len, matched;             /* matched: its bytes at the end of the feed */
};

static void held_clear(struct serve_form *f)
{
        free(f->held.name);
        free(f->held.filename);
        free(f->held.type);
        f->held.name = f->held.filename = f->held.type = NULL;
}

static bool same_str(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int pass(struct serve_form *f, const char *name, const char *filename, const char *type,
                uint64_t off, const char *data, size_t size)
{
        int r = f->parts->part(f->rq->parts, name, filename, type, off, data, size);
        if (r < 0 && f->rq->parts_result == 0)
                f->rq->parts_result = r;
        return r;
}

/* The held call was an empty part: pass it on. */
static int held_flush(struct serve_form *f)
{
        if (!f->held.name)
                return 0;
        int r = pass(f, f->held.name, f->held.filename, f->held.type, 0, "", 0);
        held_clear(f);
        return r;
}

static int hold(struct serve_form *f, const char *name, const char *filename, const char *type)
{
        f->held.name = strdup(name);
        f->held.filename = filename ? strdup(filename) : NULL;
        f->held.type = type ? strdup(type) : NULL;
        if (!f->held.name || (filename && !f->held.filename) || (type && !f->held.type)) {
                held_clear(f);
                return -ENOMEM;
        }
        return 0;
}

static enum MHD_Result on_piece(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *filename, const char *content_type,
                                const char *transfer_encoding, const char *data, uint64_t off,
                                size_t size)
{
        (void)kind, (void)transfer_encoding;
        struct serve_form *f = cls;
        const char *name = key ? key : "";
        bool continues = f->held.name && off == 0 && size > 0 &&
                         (f->delim_len || (strcmp(f->held.name, name) == 0 &&
                                           same_str(f->held.filename, filename) &&
                                           same_str(f->held.type, content_type)));
        int r = 0;
        if (continues)
                held_clear(f);
        else
                r = held_flush(f);
        if (r == 0 && off == 0 && size == 0)
                r = hold(f, name, filename, content_type);
        else if (r == 0)
                r = pass(f, name, filename, content_type, off, data, size);
        if (r < 0 && f->rq->parts_result == 0)
                f->rq->parts_result = r;
        return r < 0 ? MHD_NO : MHD_YES;
}

/* The delimiter of the Content-Type's boundary (RFC 2046: 1-70 characters, maybe quoted). */
static void delim_from(struct serve_form *f, const char *ct)
{
        const char *b = strcasestr(ct, "boundary=");
        if (!b)
                return;
        b += strlen("boundary=");
        bool quoted = *b == '"';
        b += quoted;
        size_t n = strcspn(b, quoted ? "\"" : "; \t");
        if (n == 0 || n > FORM_BOUNDARY_MAX)
                return;
        f->delim_len = (size_t)snprintf(f->delim, sizeof(f->delim), "\r\n--%.*s", (int)n, b);
}

/* How many of the n bytes at p go to the parser in one piece: up to the end of the first
 * delimiter that ends in them (f->matched then is delim_len), else all. The boundary holds no
 * CR, so a mismatch can restart the match only at a CR. */
static size_t delim_scan(struct serve_form *f, const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (f->matched == 0) {
                        const char *cr = memchr(p + i, '\r', n - i);
                        if (!cr)
                                return n;
                        i = (size_t)(cr - p);
                }
                if (p[i] == f->delim[f->matched])
                        f->matched++;
                else
                        f->matched = p[i] == '\r';
                if (f->matched == f->delim_len)
                        return i + 1;
        }
        return n;
}

struct serve_form *serve_form_begin(const struct serve *srv, struct MHD_Connection *c,
                                    const struct serve_parts *parts, struct serve_request *rq)
{
        struct serve_form *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        *f = (struct serve_form){.mhd = srv->mhd, .parts = parts, .rq = rq};
        rq->parts = parts->make();
        if (!rq->parts) {
                free(f);
                return NULL;
        }
        const char *ct = f->mhd->lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0) {
                delim_from(f, ct);
                f->pp = f->mhd->create_post_processor(c, 65536, on_piece, f);
        }
        if (!f->pp)
                rq->parts_result = -EBADMSG;
        return f;
}

void serve_form_feed(struct serve_form *f, const char *data, size_t size)
{
        for (size_t at = 0, n; f->pp && f->rq->parts_result == 0 && at < size; at += n) {
                n = f->delim_len ? delim_scan(f, data + at, size - at) : size - at;
                if (f->mhd->post_process(f->pp, data + at, n) != MHD_YES) {
                        if (f->rq->parts_result == 0)
                                f->rq->parts_result = -EBADMSG;
                        return;
                }
                if (f->delim_len && f->matched == f->delim_len) {
                        f->matched = 0;
                        (void)held_flush(f); /* the part before this delimiter was empty */
                }
        }
}

void serve_form_end(struct serve_form *f)
{
        if (!f->pp)
                return;
        /* the last part's end shows here; a part cut short is an error */
        if (f->mhd->destroy_post_processor(f->pp) != MHD_YES && f->rq->parts_result == 0)
                f->rq->parts_result = -EPROTO;
        f->pp = NULL;
        if (f->rq->parts_result == 0)
                (void)held_flush(f);
}

void serve_form_free(struct serve_form *f)
{
        if (!f)
                return;
        if (f->pp)
                (void)f->mhd->destroy_post_processor(f->pp);
        held_clear(f);
        if (f->rq->parts)
                f->parts->drop(f->rq->parts);
        f->rq->parts = NULL;
        free(f);
}
