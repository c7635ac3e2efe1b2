/* SPDX-License-Identifier: MIT */
/* src/net/http.c: the request heads the egress proxy reads and the heads it forwards. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/http.h"
#include "unit.h"

static int parse(const char *head, struct http_request *req, const char **why)
{
        *why = "";
        return http_parse_head(head, strlen(head), req, why);
}

static void test_connect(void)
{
        struct http_request r;
        const char *why;
        CHECK(parse("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", &r, &why) == 0);
        CHECK(r.connect && r.port == 443);
        CHECK_STR(r.host, "pypi.org");
        CHECK(r.head_len == strlen("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n"));
        CHECK(parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\nTLS", &r, &why) == 0);
        CHECK_STR(r.host, "2001:db8::1");
        CHECK(r.port == 8443 &&
              r.head_len == strlen("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n"));
        CHECK(parse("CONNECT pypi.org HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL); /* no port */
        CHECK(parse("CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("CONNECT pypi.org:65536 HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("CONNECT pypi.org:44x HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("CONNECT pypi.org:443 HTTP/1.1\r\n", &r, &why) == -EAGAIN);
}

static void test_absolute(void)
{
        struct http_request r;
        const char *why;
        const char *h = "GET http://user:pw@Example.COM:8080/a/b?c=d#frag HTTP/1.1\r\n"
                        "Host: evil.test\r\nProxy-Connection: keep-alive\r\n"
                        "Proxy-Authorization: Basic eA==\r\nAccept: */*\r\n"
                        "X-Kept: a\r\nCONNECTION: keep-alive\r\nContent-Length: 3\r\n\r\n";
        CHECK(parse(h, &r, &why) == 0);
        CHECK(!r.connect && r.port == 8080);
        CHECK_STR(r.host, "Example.COM"); /* userinfo is not the host */
        CHECK_STR(r.method, "GET");
        CHECK(r.content_length == 3 && !r.transfer_encoding);
        struct buf b = {0};
        CHECK(http_forward_head(h, &r, "example.com:8080", &b) == 0);
        CHECK_STR(b.data, "GET /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n"
                          "X-Kept: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
        buf_freep(&b);

        CHECK(parse("GET http://a.test HTTP/1.0\r\n\r\n", &r, &why) == 0 && r.port == 80);
        CHECK(r.content_length == -1);
        CHECK(http_forward_head("GET http://a.test HTTP/1.0\r\n\r\n", &r, "a.test", &b) == 0);
        CHECK_STR(b.data, "GET / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
        buf_freep(&b);
        CHECK(parse("GET http://a.test?q HTTP/1.1\r\n\r\n", &r, &why) == 0);
        CHECK(http_forward_head("GET http://a.test?q HTTP/1.1\r\n\r\n", &r, "a.test", &b) == 0);
        CHECK(strncmp(b.data, "GET /?q HTTP/1.1\r\n", 18) == 0);
        buf_freep(&b);
        CHECK(parse("POST http://[::1]:81/x HTTP/1.1\r\n\r\n", &r, &why) == 0);
        CHECK_STR(r.host, "::1");
        CHECK(r.port == 81);
}

static void test_refused(void)
{
        struct http_request r;
        const char *why;
        CHECK(parse("GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET https://a.test/ HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(strstr(why, "CONNECT") != NULL);
        CHECK(parse("GET ftp://a.test/ HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("get http://a.test/ HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET http://a.test/ HTTP/2.0\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET http://a.test/ HTTP/1.1 x\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET http://a\x01.test/ HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET http://a.test:/ HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GET http:///x HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(parse("GEThttp://a.test/HTTP/1.1\r\n\r\n", &r, &why) == -EINVAL);
        static char big[HTTP_HEAD_MAX + 10];
        memset(big, 'a', sizeof(big) - 1);
        memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
        CHECK(http_parse_head(big, strlen(big), &r, &why) == -E2BIG);
        CHECK(http_parse_head(big, 100, &r, &why) == -EAGAIN);
}

/* Heads a lenient upstream could read differently from the proxy (request smuggling). */
static void test_strict_fields(void)
{
        struct http_request r;
        const char *why;
        static const char *const bad[] = {
            "GET http://a.test/ HTTP/1.1\r\nX: a\nHost: b\r\n\r\n",      /* bare LF */
            "GET http://a.test/ HTTP/1.1\r\nX: a\rHost: b\r\n\r\n",      /* bare CR */
            "GET http://a.test/ HTTP/1.1\r\nX: a\x01b\r\n\r\n",          /* CTL */
            "GET http://a.test/ HTTP/1.1\r\nX: a\x7f\r\n\r\n",           /* DEL */
            "GET http://a.test/ HTTP/1.1\r\nHost : b\r\n\r\n",           /* space before : */
            "GET http://a.test/ HTTP/1.1\r\nHost\t: b\r\n\r\n",          /* tab before : */
            "GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",         /* obs-fold */
            "GET http://a.test/ HTTP/1.1\r\n\tX: a\r\n\r\n",             /* leading tab */
            "GET http://a.test/ HTTP/1.1\r\nno colon\r\n\r\n",           /* not a field */
            "GET http://a.test/ HTTP/1.1\r\n: v\r\n\r\n",                /* empty name */
            "GET http://a.test/ HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", /* not a number */
            "GET http://a.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nContent-Length:\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\ncontent-length: 1\r\nContent-Length: 2\r\n\r\n",
            "CONNECT a.test:443 HTTP/1.1\r\nX: a\nY: b\r\n\r\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int rr = parse(bad[i], &r, &why);
                if (rr != -EINVAL)
                        printf("# bad head %zu was not refused\n", i);
                CHECK(rr == -EINVAL);
        }
        CHECK(parse("GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", &r, &why) == -EINVAL);
        CHECK(strstr(why, "obs-fold") != NULL);
        /* what is fine: HTAB and obs-text in a value, the same length twice, whitespace */
        CHECK(parse("GET http://a.test/ HTTP/1.1\r\nX:\ta\tb \xe9\r\n\r\n", &r, &why) == 0);
        CHECK(parse("POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\n"
                    "CONTENT-LENGTH:5 \r\n\r\n",
                    &r, &why) == 0);
        CHECK(r.content_length == 5);
        CHECK(parse("POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r,
                    &why) == 0);
        CHECK(r.transfer_encoding && r.content_length == -1);
        /* a dropped header is judged by its parsed name, in any case */
        const char *h = "GET http://a.test/ HTTP/1.1\r\nPROXY-authorization: x\r\n"
                        "Proxy-Authorization-X: kept\r\nhOsT: evil\r\nUpGrade: h2c\r\n\r\n";
        CHECK(parse(h, &r, &why) == 0);
        struct buf b = {0};
        CHECK(http_forward_head(h, &r, "a.test", &b) == 0);
        CHECK_STR(b.data, "GET / HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization-X: kept\r\n"
                          "Connection: close\r\n\r\n");
        buf_freep(&b);
}

static void test_error_response(void)
{
        struct buf b = {0};
        CHECK(http_error_response(&b, 403, "Forbidden", "no\n") == 0);
        CHECK_STR(b.data, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                          "Content-Length: 3\r\nConnection: close\r\n\r\nno\n");
        buf_freep(&b);
}

int main(void)
{
        test_connect();
        test_absolute();
        test_refused();
        test_strict_fields();
        test_error_response();
        return unit_done();
}
