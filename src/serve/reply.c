/* SPDX-License-Identifier: MIT */
/* Building the answers handlers give (serve.h), and reading multipart bodies. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "serve-internal.h"

void serve_response_clear(struct serve_response *rs)
{
        buf_freep(&rs->body);
        for (size_t i = 0; i < rs->n_headers; i++) {
                free(rs->headers[i].name);
                free(rs->headers[i].value);
        }
        if (rs->stream.read && rs->stream.free)
                rs->stream.free(rs->stream.ctx);
        *rs = (struct serve_response){0};
}

int serve_add_header(struct serve_response *rs, const char *name, const char *fmt, ...)
{
        if (rs->n_headers == SERVE_MAX_HEADERS)
                return -E2BIG;
        va_list ap;
        va_start(ap, fmt);
        char *value = NULL;
        int n = vasprintf(&value, fmt, ap);
        va_end(ap);
        char *copy = strdup(name);
        if (n < 0 || !copy) {
                free(copy);
                if (n >= 0)
                        free(value);
                return -ENOMEM;
        }
        rs->headers[rs->n_headers].name = copy;
        rs->headers[rs->n_headers++].value = value;
        return 0;
}

int serve_reply_json(struct serve_response *rs, unsigned status, struct buf *b)
{
        buf_freep(&rs->body);
        rs->body = *b;
        *b = (struct buf){0};
        rs->status = status;
        rs->content_type = "application/json";
        return 0;
}

int serve_reply_empty(struct serve_response *rs, unsigned status)
{
        buf_freep(&rs->body);
        rs->status = status;
        rs->content_type = NULL;
        return 0;
}

int serve_reply_error(struct serve_response *rs, unsigned status, const char *code, const char *fmt,
                      ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        _cleanup_buf_ struct buf b = {0};
        int r = buf_puts(&b, "{\"code\":");
        if (r >= 0)
                r = json_cstr(&b, code);
        if (r >= 0)
                r = buf_puts(&b, ",\"message\":");
        if (r >= 0)
                r = json_cstr(&b, msg);
        if (r >= 0)
                r = buf_puts(&b, "}");
        if (r < 0)
                return r;
        return serve_reply_json(rs, status, &b);
}

void serve_reply_internal(struct serve_response *rs, int r)
{
        serve_reply_error(rs, 500, "INTERNAL_ERROR", "internal error: %s", strerror(-r));
}

/* The last non-empty line of text (an sbx error on stderr), in out. */
static void last_line(const struct buf *b, char *out, size_t n)
{
        out[0] = '\0';
        if (!b || !b->data)
                return;
        size_t end = b->len;
        while (end > 0 && (b->data[end - 1] == '\n' || b->data[end - 1] == ' '))
                end--;
        size_t start = end;
        while (start > 0 && b->data[start - 1] != '\n')
                start--;
        snprintf(out, n, "%.*s", (int)(end - start), b->data + start);
}

void serve_sbx_error_fields(const struct buf *out, char *code, size_t code_n, char *msg,
                            size_t msg_n)
{
        json_object *o = out && out->data ? json_tokener_parse(out->data) : NULL;
        json_object *e = NULL, *v = NULL;
        if (o && json_object_object_get_ex(o, "error", &e)) {
                if (json_object_object_get_ex(e, "code", &v))
                        snprintf(code, code_n, "%s", json_object_get_string(v));
                if (json_object_object_get_ex(e, "message", &v))
                        snprintf(msg, msg_n, "%s", json_object_get_string(v));
        }
        json_object_put(o);
}

int serve_reply_sbx_error(struct serve_response *rs, int exit_code, const struct buf *out,
                          const struct buf *err)
{
        char code[64] = "", msg[1024] = "";
        serve_sbx_error_fields(out, code, sizeof(code), msg, sizeof(msg));
        if (!msg[0])
                last_line(err, msg, sizeof(msg));
        if (!msg[0])
                snprintf(msg, sizeof(msg), "sbx failed with exit code %d", exit_code);
        switch (exit_code) {
        case EXIT_NO_SESSION:
                return serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "%s", msg);
        case EXIT_USAGE:
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_PARAMETER", "%s", msg);
        case EXIT_UNSUPPORTED:
                return serve_reply_error(rs, 501, "SANDBOX::API_NOT_SUPPORTED", "%s", msg);
        case EXIT_FAILED:
                if (strcmp(code, "not_found") == 0)
                        return serve_reply_error(rs, 404, "SBX::NOT_FOUND", "%s", msg);
                if (strcmp(code, "unavailable") == 0)
                        return serve_reply_error(rs, 400, "SBX::IMAGE_UNAVAILABLE", "%s", msg);
                if (strcmp(code, "limit") == 0)
                        return serve_reply_error(rs, 429, "SBX::LIMIT", "%s", msg);
                return serve_reply_error(rs, 409, "SBX::CONFLICT", "%s", msg);
        default:
                return serve_reply_error(rs, 500, "SANDBOX::UNKNOWN_ERROR", "%s", msg);
        }
}
