/* SPDX-License-Identifier: MIT */
/* The HTTP the proxy speaks: the request head of CONNECT and of absolute-URI requests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/buf.h"

/* The longest request head the proxy reads (request line and headers). */
#define HTTP_HEAD_MAX 16384

struct http_request {
        bool connect; /* CONNECT host:port (a tunnel) or a request to forward */
        char method[24];
        char host[256]; /* as written, without IPv6 brackets (not yet normalized) */
        uint16_t port;
        size_t path_off, path_len; /* forward: origin-form target inside the head */
        size_t version_off;        /* forward: "HTTP/1.x" inside the head */
        size_t head_len;           /* bytes of the head including the blank line */
        int64_t content_length;    /* forward: the body's length; -1: no Content-Length */
        bool transfer_encoding;    /* a Transfer-Encoding header (a chunked body) */
};

/*
 * Parse the request head at buf[0..n). 0: complete, *req filled; -EAGAIN: no blank line yet;
 * -E2BIG: the head is longer than HTTP_HEAD_MAX; -EINVAL: malformed or not a proxy request,
 * *ret_why says why in a few words. Strict where a lenient parser upstream could read the
 * head differently (request smuggling): a control byte anywhere in a header line (a bare CR
 * or LF included), whitespace before a field name's colon, an obs-fold continuation line, or
 * a Content-Length that is not one decimal number (or two that disagree) is -EINVAL.
 */
int http_parse_head(const char *buf, size_t n, struct http_request *req, const char **ret_why);

/*
 * The head to send upstream for a forwarded request: origin-form request line, Host from the
 * URL (never the client's own Host: the destination is the one that was checked),
 * hop-by-hop and proxy headers dropped, "Connection: close". 0 or -ENOMEM.
 */
int http_forward_head(const char *buf, const struct http_request *req, const char *host_header,
                      struct buf *out);

/* A complete response with a text body and "Connection: close". */
int http_error_response(struct buf *out, int status, const char *reason, const char *body);
