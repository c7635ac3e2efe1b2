/* SPDX-License-Identifier: MIT */
/*
 * A route's multipart/form-data body taken apart as it arrives (form.h): libmicrohttpd's post
 * processor gets each piece of the body, and the route's part() each piece of each part.
 *
 * The post processor calls its iterator once at the start of every part, with whatever of the
 * value it can already tell from the boundary: nothing, when the piece of the body in hand ends
 * within four bytes of the value's start. The part's data then comes in later calls that also
 * say offset 0. So a call with no data at offset 0 is held back: if the next call continues the
 * same part (same name, file name and type, offset 0, data), it was only the part's start;
 * anything else (another part, the form's end) shows it was an empty part, passed on then. The
 * one case this cannot tell apart is an empty part directly followed by one of the same name,
 * file name and type: the two are taken as one.
 */
#include "form.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/macros.h"
#include "serve-internal.h"

struct serve_form {
        const struct mhd_lib *mhd;
        const struct serve_parts *parts;
        struct serve_request *rq;
        struct MHD_PostProcessor *pp;
        struct { /* a call with no data at offset 0, not passed on yet */
                bool on;
                char *name, *filename, *type;
        } held;
};

static void held_clear(struct serve_form *f)
{
        free(f->held.name);
        free(f->held.filename);
        free(f->held.type);
        f->held.on = false;
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
        if (!f->held.on)
                return 0;
        int r = pass(f, f->held.name, f->held.filename, f->held.type, 0, "", 0);
        held_clear(f);
        return r;
}

static int hold(struct serve_form *f, const char *name, const char *filename, const char *type)
{
        f->held.on = true;
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
        bool continues = f->held.on && off == 0 && size > 0 && strcmp(f->held.name, name) == 0 &&
                         same_str(f->held.filename, filename) &&
                         same_str(f->held.type, content_type);
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
        if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0)
                f->pp = f->mhd->create_post_processor(c, 65536, on_piece, f);
        if (!f->pp)
                rq->parts_result = -EBADMSG;
        return f;
}

void serve_form_feed(struct serve_form *f, const char *data, size_t size)
{
        if (f->pp && f->rq->parts_result == 0 &&
            f->mhd->post_process(f->pp, data, size) != MHD_YES && f->rq->parts_result == 0)
                f->rq->parts_result = -EBADMSG;
}

void serve_form_end(struct serve_form *f)
{
        if (!f->pp)
                return;
        /* the last part's end shows here; a part cut short is an error */
        if (f->mhd->destroy_post_processor(f->pp) != MHD_YES && f->rq->parts_result == 0)
                f->rq->parts_result = -EBADMSG;
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
