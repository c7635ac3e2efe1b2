/* SPDX-License-Identifier: MIT */
/* A route's multipart form, taken apart as its body arrives (struct serve_parts, form.c). */
#pragma once

#include <stddef.h>

#include "serve.h"

struct MHD_Connection;
struct serve_form;

/*
 * When the request's headers are in: the route's context in rq->parts (parts->make()) and the
 * parser, or rq->parts_result -EBADMSG when the body is not multipart/form-data. NULL: out of
 * memory (nothing made).
 */
struct serve_form *serve_form_begin(const struct serve *srv, struct MHD_Connection *c,
                                    const struct serve_parts *parts, struct serve_request *rq);
/* A piece of the body; after an error (rq->parts_result) the rest is dropped. */
void serve_form_feed(struct serve_form *f, const char *data, size_t size);
/* The body's end, before the handler runs: the last part is passed on, the parse checked
 * (rq->parts_result -EPROTO for a form cut short). */
void serve_form_end(struct serve_form *f);
/* Free the parser and the route's context (parts->drop()); NULL is a no-op. */
void serve_form_free(struct serve_form *f);
