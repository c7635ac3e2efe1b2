/* SPDX-License-Identifier: MIT */
/*
 * Where a request goes, and who may make it: the lifecycle routes under / and /v1 need the
 * API key (when serve has one); the execd routes under /sandboxes/{id}/proxy/44772/ need the
 * session's own access token instead, so a token handed to a client for one sandbox opens
 * that sandbox alone. Also the listening socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "session/id.h"
#include "meta.h"
#include "serve-internal.h"

/* Constant time in the length of want: a wrong key's first bytes tell nothing. */
static bool secret_equal(const char *got, const char *want)
{
        size_t n = strlen(want), m = strlen(got);
        unsigned char d = n != m;
        for (size_t i = 0; i < n; i++)
                d |= (unsigned char)want[i] ^ (unsigned char)(i < m ? got[i] : 0);
        return d == 0;
}

static bool key_ok(struct serve *srv, struct serve_request *rq, struct serve_response *rs)
{
        /* serve_run made one when none was given: without a key nothing is answered */
        const char *key = srv->opt.api_key ? serve_header(rq, SERVE_KEY_HEADER) : NULL;
        if (!key || !*key) {
                serve_reply_error(rs, 401, "MISSING_API_KEY",
                                  "Authentication credentials are missing: send the API key "
                                  "in the " SERVE_KEY_HEADER " header.");
                return false;
        }
        if (!secret_equal(key, srv->opt.api_key)) {
                serve_reply_error(rs, 401, "INVALID_API_KEY",
                                  "Authentication credentials are invalid.");
                return false;
        }
        return true;
}

/* Match path against pattern ("{}" = one non-empty segment); the segments are cut in place
 * only on success, so path is kept for the next pattern otherwise. */
static bool match(const char *pattern, char *path, struct serve_request *rq)
{
        const char *p = pattern;
        const char *s = path;
        const char *starts[4];
        size_t lens[4];
        size_t n = 0;
        while (*p && *s) {
                if (p[0] == '{' && p[1] == '}') {
                        size_t len = strcspn(s, "/");
                        if (len == 0 || n == 4)
                                return false;
                        starts[n] = s;
                        lens[n++] = len;
                        s += len;
                        p += 2;
                } else if (*p++ != *s++) {
                        return false;
                }
        }
        if (*p || *s)
                return false;
        for (size_t i = 0; i < n; i++) {
                ((char *)starts[i])[lens[i]] = '\0';
                rq->params[i] = starts[i];
        }
        rq->n_params = n;
        return true;
}

/* The route of one table for method and path; *path_known says the path exists at all. */
static const struct serve_route *lookup(const struct serve_route *table, const char *method,
                                        char *path, struct serve_request *rq, bool *path_known)
{
        for (const struct serve_route *r = table; r->method; r++) {
                char copy[4096];
                size_t len = strlen(path);
                if (len >= sizeof(copy))
                        return NULL;
                memcpy(copy, path, len + 1);
                if (!match(r->pattern, copy, rq))
                        continue;
                *path_known = true;
                if (strcmp(r->method, method) != 0)
                        continue;
                (void)match(r->pattern, path, rq);
                return r;
        }
        return NULL;
}

/* "/sandboxes/{id}/proxy/{port}[/rest]": the session id (cut in place), whether the port is
 * execd's, and the rest ("/" when none; it starts where the port ends, so nothing moves). */
static bool proxy_path(char *path, const char **ret_id, bool *ret_execd, const char **ret_rest)
{
        static const char prefix[] = "/sandboxes/";
        if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
                return false;
        char *id = path + sizeof(prefix) - 1;
        char *slash = strchr(id, '/');
        if (!slash || slash == id || strncmp(slash, "/proxy/", 7) != 0)
                return false;
        const char *port = slash + 7;
        size_t plen = strspn(port, "0123456789");
        if (plen == 0 || (port[plen] != '/' && port[plen] != '\0'))
                return false;
        *slash = '\0';
        *ret_id = id;
        *ret_execd = plen == 5 && strncmp(port, "44772", 5) == 0;
        *ret_rest = port[plen] ? port + plen : "/";
        return true;
}

static const struct serve_route *execd_route(struct serve *srv, struct serve_request *rq,
                                             char *path, struct serve_response *rs)
{
        (void)srv;
        const char *id, *rest;
        bool execd;
        if (!proxy_path(path, &id, &execd, &rest))
                return NULL;
        if (!session_id_valid(id) || !execd || strstr(rest, "/../") ||
            strcmp(rest + strlen(rest) - (strlen(rest) >= 3 ? 3 : 0), "/..") == 0) {
                serve_reply_error(rs, 404, "NOT_FOUND",
                                  "no execd endpoint at this path (sbx serves port %d)",
                                  SERVE_EXECD_PORT);
                return NULL;
        }
        const char *token = serve_header(rq, SERVE_TOKEN_HEADER);
        int r = token ? serve_token_check(id, token) : -EACCES;
        if (r == -ENOENT) {
                serve_reply_error(rs, 404, "SANDBOX_NOT_FOUND", "no sandbox '%s'", id);
                return NULL;
        }
        if (r < 0) {
                serve_reply_error(rs, 401, "INVALID_ACCESS_TOKEN",
                                  "the " SERVE_TOKEN_HEADER " header does not open this "
                                  "sandbox: take it from the sandbox's endpoint");
                return NULL;
        }
        rq->session_id = id;
        rq->path = rest;
        bool known = false;
        const struct serve_route *rt =
            lookup(serve_execd_routes, rq->method, (char *)rest, rq, &known);
        if (!rt)
                rt = lookup(serve_file_routes, rq->method, (char *)rest, rq, &known);
        if (!rt)
                serve_reply_error(rs, known ? 405 : 404, known ? "METHOD_NOT_ALLOWED" : "NOT_FOUND",
                                  "%s %s is not an execd route", rq->method, rest);
        return rt;
}

const struct serve_route *serve_route_find(struct serve *srv, struct serve_request *rq,
                                           char *path_buf, struct serve_response *rs)
{
        char *path = path_buf;
        if (strncmp(path, "/v1", 3) == 0 && (path[3] == '/' || path[3] == '\0'))
                path += 3;
        if (*path == '\0')
                path = (char *)"/";
        if (strncmp(path, "/sandboxes/", 11) == 0 && strstr(path, "/proxy/")) {
                const struct serve_route *rt = execd_route(srv, rq, path, rs);
                if (rt || rs->status)
                        return rt;
        }
        /* /health answers without a key, as OpenSandbox's does (a liveness probe has none) */
        if (strcmp(path, "/health") != 0 && !key_ok(srv, rq, rs))
                return NULL;
        rq->path = path;
        bool known = false;
        const struct serve_route *rt = lookup(serve_lifecycle_routes, rq->method, path, rq, &known);
        if (!rt)
                serve_reply_error(rs, known ? 405 : 404, known ? "METHOD_NOT_ALLOWED" : "NOT_FOUND",
                                  "%s %s is not a route of this server", rq->method, path);
        return rt;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
        if (ss->ss_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a);
}

static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
        char host[64];
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= sizeof(host) || colon == s)
                return -EINVAL;
        memcpy(host, s, colon - s);
        host[colon - s] = '\0';
        char *end;
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (!colon[1] || *end || port > 65535)
                return -EINVAL;
        memset(ss, 0, sizeof(*ss));
        size_t hl = strlen(host);
        if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
                host[hl - 1] = '\0';
                if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
                        return -EINVAL;
                a->sin6_family = AF_INET6;
                a->sin6_port = htons(port);
                *len = sizeof(*a);
                return 0;
        }
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
                return -EINVAL;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        *len = sizeof(*a);
        return 0;
}

int serve_listen(struct serve *srv, struct sbx_error *e)
{
        struct sockaddr_storage ss;
        socklen_t len;
        const char *l = srv->opt.listen;
        if (parse_listen(l, &ss, &len) < 0)
                return sbx_usage(e,
                                 "invalid --listen '%s': expected ADDR:PORT ('127.0.0.1:8083', "
                                 "'[::1]:8083')",
                                 l);
        if (!is_loopback(&ss) && !srv->opt.api_key)
                return sbx_usage(e,
                                 "refusing to listen on '%s' without an API key: set "
                                 "SBX_SERVE_API_KEY or --api-key-file, or listen on a "
                                 "loopback address",
                                 l);
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", errno, "failed to listen on '%s'",
                                l);
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0 ||
            getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
                int err = errno;
                (void)close(fd);
                return sbx_fail(e, EXIT_FAILED, "internal", err, "failed to listen on '%s'", l);
        }
        char addr[INET6_ADDRSTRLEN];
        if (ss.ss_family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                inet_ntop(AF_INET, &a->sin_addr, addr, sizeof(addr));
                snprintf(srv->host, sizeof(srv->host), "%s:%u", addr, ntohs(a->sin_port));
        } else {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof(addr));
                snprintf(srv->host, sizeof(srv->host), "[%s]:%u", addr, ntohs(a->sin6_port));
        }
        srv->listen_fd = fd;
        return 0;
}
