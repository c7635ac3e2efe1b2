/* SPDX-License-Identifier: MIT */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *find_crlf(const char *p, const char *end)
{
        for (; p + 1 < end; p++)
                if (p[0] == '\r' && p[1] == '\n')
                        return p;
        return NULL;
}

static const char *find_head_end(const char *buf, size_t n)
{
        for (size_t i = 0; i + 3 < n; i++)
                if (memcmp(buf + i, "\r\n\r\n", 4) == 0)
                        return buf + i + 4;
        return NULL;
}

/* "1".."65535", digits only. */
static int parse_port(const char *p, size_t n, uint16_t *ret)
{
        unsigned long v = 0;
        if (n == 0 || n > 5)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long)(p[i] - '0');
        }
        if (v < 1 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

/* host[:port] or [v6][:port] in a[0..n); default_port 0: the port is required. */
static int parse_authority(const char *a, size_t n, uint16_t default_port, struct http_request *req)
{
        const char *host = a, *port = NULL;
        size_t hn;
        if (n > 0 && a[0] == '[') {
                const char *close = memchr(a, ']', n);
                if (!close)
                        return -EINVAL;
                host = a + 1;
                hn = (size_t)(close - host);
                if (close + 1 < a + n) {
                        if (close[1] != ':')
                                return -EINVAL;
                        port = close + 2;
                }
        } else {
                const char *colon = memchr(a, ':', n);
                hn = colon ? (size_t)(colon - a) : n;
                if (colon)
                        port = colon + 1;
        }
        if (hn == 0 || hn >= sizeof(req->host))
                return -EINVAL;
        memcpy(req->host, host, hn);
        req->host[hn] = '\0';
        if (port)
                return parse_port(port, (size_t)(a + n - port), &req->port);
        if (default_port == 0)
                return -EINVAL;
        req->port = default_port;
        return 0;
}

/* http://[userinfo@]authority[/path][?query]; the fragment is never sent. */
static int parse_absolute_uri(const char *head, const char *t, size_t n, struct http_request *req,
                              const char **why)
{
        if (n >= 8 && strncasecmp(t, "https://", 8) == 0) {
                *why = "an https:// URL must go through CONNECT (HTTPS_PROXY)";
                return -EINVAL;
        }
        if (n < 7 || strncasecmp(t, "http://", 7) != 0) {
                *why = "not a proxy request (expected CONNECT or an http:// URL)";
                return -EINVAL;
        }
        const char *a = t + 7, *end = t + n;
        size_t an = strcspn(a, "/?# ");
        if (a + an > end)
                an = (size_t)(end - a);
        const char *at = NULL;
        for (const char *p = a; p < a + an; p++)
                if (*p == '@')
                        at = p;
        const char *auth = at ? at + 1 : a;
        if (parse_authority(auth, (size_t)(a + an - auth), 80, req) < 0) {
                *why = "invalid host or port in the URL";
                return -EINVAL;
        }
        const char *path = a + an;
        const char *hash = memchr(path, '#', (size_t)(end - path));
        req->path_off = (size_t)(path - head);
        req->path_len = (size_t)((hash ? hash : end) - path);
        return 0;
}

/* RFC 9110 tchar: the bytes of a field name. */
static bool is_tchar(unsigned char ch)
{
        return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
               (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* A field line's name: its length, or 0 when the line has no "token:" start. */
static size_t field_name_len(const char *line, size_t n)
{
        size_t k = 0;
        while (k < n && is_tchar((unsigned char)line[k]))
                k++;
        return k > 0 && k < n && line[k] == ':' ? k : 0;
}

static bool field_is(const char *line, size_t k, const char *name)
{
        return strlen(name) == k && strncasecmp(line, name, k) == 0;
}

/* Content-Length: optional whitespace, digits, optional whitespace. */
static int parse_content_length(const char *v, size_t n, int64_t *ret)
{
        size_t i = 0, digits = 0;
        int64_t len = 0;
        while (i < n && (v[i] == ' ' || v[i] == '\t'))
                i++;
        for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++) {
                if (len > (INT64_MAX - 9) / 10)
                        return -EINVAL;
                len = len * 10 + (v[i] - '0');
        }
        while (i < n && (v[i] == ' ' || v[i] == '\t'))
                i++;
        if (digits == 0 || i != n || (*ret >= 0 && *ret != len))
                return -EINVAL;
        *ret = len;
        return 0;
}

/* The field lines from p to end (the blank line's CRLF): each "name:value" with no control
 * byte but HTAB, no continuation line; Content-Length and Transfer-Encoding noted. */
static int parse_fields(const char *p, const char *end, struct http_request *req,
                        const char **ret_why)
{
        while (p < end) {
                const char *eol = find_crlf(p, end + 2);
                size_t n = (size_t)(eol - p);
                for (size_t i = 0; i < n; i++) {
                        unsigned char ch = (unsigned char)p[i];
                        if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
                                *ret_why = "a control character in a header line";
                                return -EINVAL;
                        }
                }
                size_t k = field_name_len(p, n);
                if (k == 0) {
                        *ret_why = p[0] == ' ' || p[0] == '\t'
                                       ? "a folded (obs-fold) header line"
                                       : "a header line that is not NAME: VALUE";
                        return -EINVAL;
                }
                if (field_is(p, k, "content-length") &&
                    parse_content_length(p + k + 1, n - k - 1, &req->content_length) < 0) {
                        *ret_why = "an invalid Content-Length";
                        return -EINVAL;
                }
                if (field_is(p, k, "transfer-encoding"))
                        req->transfer_encoding = true;
                p = eol + 2;
        }
        return 0;
}

int http_parse_head(const char *buf, size_t n, struct http_request *req, const char **ret_why)
{
        *req = (struct http_request){.content_length = -1};
        const char *end = find_head_end(buf, n < HTTP_HEAD_MAX ? n : HTTP_HEAD_MAX);
        if (!end)
                return n >= HTTP_HEAD_MAX ? -E2BIG : -EAGAIN;
        *ret_why = "malformed request line";
        const char *line_end = find_crlf(buf, end);
        const char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
        if (!sp1 || memchr(buf, '\0', (size_t)(end - buf)))
                return -EINVAL;
        const char *target = sp1 + 1;
        const char *sp2 = memchr(target, ' ', (size_t)(line_end - target));
        if (!sp2 || sp2 == target || (size_t)(sp1 - buf) >= sizeof(req->method))
                return -EINVAL;
        const char *version = sp2 + 1;
        if (line_end - version != 8 || strncmp(version, "HTTP/1.", 7) != 0)
                return -EINVAL;
        for (const char *p = buf; p < sp1; p++)
                if (*p < 'A' || *p > 'Z')
                        return -EINVAL;
        for (const char *p = buf; p < line_end; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return -EINVAL;
        memcpy(req->method, buf, (size_t)(sp1 - buf));
        req->method[sp1 - buf] = '\0';
        if (parse_fields(line_end + 2, end - 2, req, ret_why) < 0)
                return -EINVAL;
        *ret_why = "malformed request line";
        req->head_len = (size_t)(end - buf);
        req->version_off = (size_t)(version - buf);
        size_t tn = (size_t)(sp2 - target);
        if (strcmp(req->method, "CONNECT") == 0) {
                req->connect = true;
                *ret_why = "CONNECT needs HOST:PORT";
                return parse_authority(target, tn, 0, req);
        }
        return parse_absolute_uri(buf, target, tn, req, ret_why);
}

/* Headers a proxy must not pass on, and Host, which comes from the checked URL instead;
 * judged by the parsed field name (http_parse_head accepted only "token:" lines). */
static bool header_dropped(const char *line, size_t n)
{
        static const char *const names[] = {"host",       "connection",          "proxy-connection",
                                            "keep-alive", "proxy-authorization", "te",
                                            "upgrade"};
        size_t k = field_name_len(line, n);
        if (k == 0)
                return true; /* not a header: never passed on */
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (field_is(line, k, names[i]))
                        return true;
        return false;
}

int http_forward_head(const char *buf, const struct http_request *req, const char *host_header,
                      struct buf *out)
{
        int r = buf_printf(out, "%s ", req->method);
        if (req->path_len == 0 || buf[req->path_off] != '/')
                r |= buf_puts(out, "/");
        r |= buf_append(out, buf + req->path_off, req->path_len);
        r |= buf_printf(out, " %.8s\r\nHost: %s\r\n", buf + req->version_off, host_header);
        const char *end = buf + req->head_len - 2; /* the blank line's CRLF */
        const char *p = find_crlf(buf, end) + 2;
        while (p < end) {
                const char *eol = find_crlf(p, end + 2);
                size_t n = (size_t)(eol - p);
                if (!header_dropped(p, n)) {
                        r |= buf_append(out, p, n);
                        r |= buf_puts(out, "\r\n");
                }
                p = eol + 2;
        }
        r |= buf_puts(out, "Connection: close\r\n\r\n");
        return r < 0 ? -ENOMEM : 0;
}

int http_error_response(struct buf *out, int status, const char *reason, const char *body)
{
        int r = buf_printf(out,
                           "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           status, reason, strlen(body), body);
        return r < 0 ? -ENOMEM : 0;
}
