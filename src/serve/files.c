/* SPDX-License-Identifier: MIT */
/*
 * The execd file routes: info, delete, permissions, move, search, replace, directories (list,
 * create, delete); upload and download are in files_transfer.c. Each is a thin adapter over
 * `sbx fs` (files.h): the operation runs in the session with a session process's rights, so
 * no path the API is given can reach outside what the session itself can reach.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shared/util.h"
#include "argv.h"
#include "files.h"
#include "serve-internal.h"

#define FILES_MAX_PATHS 1000u /* ?path= values of one request */

int files_memfd(const char *data, size_t n)
{
        int fd = memfd_create("sbx-serve-files", MFD_CLOEXEC);
        if (fd < 0)
                return negerrno();
        int r = write_all(fd, data, n);
        if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
                r = negerrno();
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int files_run(const struct serve_request *rq, const char *op, const char *const *args, int in_fd,
              struct buf *out, size_t max_out, int *ret_exit)
{
        _cleanup_argv_ struct serve_argv a = {0};
        serve_argv_add(&a, "fs");
        serve_argv_add(&a, "--json");
        serve_argv_add(&a, "%s", rq->session_id);
        serve_argv_add(&a, "%s", op);
        for (size_t i = 0; args && args[i]; i++)
                serve_argv_add(&a, "%s", args[i]);
        if (a.error < 0)
                return a.error;
        return serve_sbx_run(rq->srv, a.v, in_fd, out, max_out, NULL, ret_exit);
}

int files_reply_error(struct serve_response *rs, int exit_code, const struct buf *out)
{
        char code[64] = "", msg[1024] = "";
        serve_sbx_error_fields(out, code, sizeof(code), msg, sizeof(msg));
        if (exit_code == EXIT_NO_SESSION)
                return serve_reply_sbx_error(rs, exit_code, out, NULL);
        if (!msg[0])
                snprintf(msg, sizeof(msg), "the file operation failed (exit code %d)", exit_code);
        if (exit_code == EXIT_USAGE)
                return serve_reply_error(rs, 400, "INVALID_REQUEST_BODY", "%s", msg);
        if (exit_code == EXIT_FAILED && strcmp(code, "not_found") == 0)
                return serve_reply_error(rs, 404, "FILE_NOT_FOUND", "%s", msg);
        if (exit_code == EXIT_FAILED && strcmp(code, "limit") == 0)
                return serve_reply_error(rs, 413, "FILE_TOO_LARGE", "%s", msg);
        if (exit_code == EXIT_FAILED && strcmp(code, "not_text") == 0)
                return serve_reply_error(rs, 400, "INVALID_FILE", "%s", msg);
        return serve_reply_error(rs, 500, "RUNTIME_ERROR", "%s", msg);
}

/* Run op and answer: its JSON output (json) or an empty 200. */
static int run_reply(struct serve_request *rq, struct serve_response *rs, const char *op,
                     const char *const *args, int in_fd, bool json)
{
        _cleanup_buf_ struct buf out = {0};
        int code;
        int r = files_run(rq, op, args, in_fd, &out, FILES_MAX_OUT, &code);
        if (r < 0)
                return r;
        if (code != 0)
                return files_reply_error(rs, code, &out);
        return json ? serve_reply_json(rs, 200, &out) : serve_reply_empty(rs, 200);
}

/* The JSON body as stdin of op. */
static int run_body(struct serve_request *rq, struct serve_response *rs, const char *op, bool json)
{
        if (!rq->body || rq->body_len == 0)
                return serve_reply_error(rs, 400, "INVALID_REQUEST_BODY",
                                         "error parsing request: the body is empty");
        _cleanup_close_ int fd = files_memfd(rq->body, rq->body_len);
        if (fd < 0)
                return fd;
        return run_reply(rq, rs, op, NULL, fd, json);
}

struct paths {
        const char *v[FILES_MAX_PATHS + 1];
        size_t n;
        bool too_many;
};

static void add_path(void *ctx, const char *value)
{
        struct paths *p = ctx;
        if (p->n == FILES_MAX_PATHS)
                p->too_many = true;
        else
                p->v[p->n++] = value;
}

/* op on every ?path= value; none: an empty answer of the op's kind, as execd gives. */
static int run_paths(struct serve_request *rq, struct serve_response *rs, const char *op, bool json)
{
        struct paths p = {0};
        serve_query_each(rq, "path", add_path, &p);
        if (p.too_many)
                return serve_reply_error(rs, 400, "INVALID_REQUEST_BODY",
                                         "more than %u path parameters", FILES_MAX_PATHS);
        for (size_t i = 0; i < p.n; i++)
                if (!p.v[i][0])
                        return serve_reply_error(rs, 400, "MISSING_QUERY",
                                                 "an empty query parameter 'path'");
        if (p.n == 0) {
                struct buf b = {0};
                if (!json)
                        return serve_reply_empty(rs, 200);
                return buf_puts(&b, "{}") < 0 ? -ENOMEM : serve_reply_json(rs, 200, &b);
        }
        p.v[p.n] = NULL;
        return run_reply(rq, rs, op, p.v, -1, json);
}

static int info(struct serve_request *rq, struct serve_response *rs)
{
        return run_paths(rq, rs, "info", true);
}

static int remove_files(struct serve_request *rq, struct serve_response *rs)
{
        return run_paths(rq, rs, "rm", false);
}

static int remove_dirs(struct serve_request *rq, struct serve_response *rs)
{
        return run_paths(rq, rs, "rmdir", false);
}

static int permissions(struct serve_request *rq, struct serve_response *rs)
{
        return run_body(rq, rs, "chmod", false);
}

static int make_dirs(struct serve_request *rq, struct serve_response *rs)
{
        return run_body(rq, rs, "mkdir", false);
}

static int move(struct serve_request *rq, struct serve_response *rs)
{
        return run_body(rq, rs, "mv", false);
}

static int replace(struct serve_request *rq, struct serve_response *rs)
{
        const char *v = serve_query(rq, "verbose");
        return run_body(rq, rs, "replace", v && strcmp(v, "true") == 0);
}

/* search and list answer a JSON array; a cut one carries the header SBX-Truncated: REASON. */
static int find(struct serve_request *rq, struct serve_response *rs, bool list)
{
        const char *path = serve_query(rq, "path");
        const char *extra = serve_query(rq, list ? "depth" : "pattern");
        if (!path || !path[0])
                return serve_reply_error(rs, 400, "MISSING_QUERY",
                                         "missing query parameter 'path'");
        if (list && extra && (!extra[0] || strspn(extra, "0123456789") != strlen(extra)))
                return serve_reply_error(rs, 400, "INVALID_REQUEST_BODY",
                                         "invalid query parameter 'depth': %s", extra);
        const char *args[] = {path, extra && extra[0] ? extra : NULL, NULL};
        _cleanup_buf_ struct buf out = {0};
        int code;
        int r = files_run(rq, list ? "list" : "search", args, -1, &out, FILES_MAX_OUT, &code);
        if (r < 0)
                return r;
        if (code != 0)
                return files_reply_error(rs, code, &out);
        char *nl = out.data ? strchr(out.data, '\n') : NULL;
        if (nl && strncmp(nl + 1, "truncated ", 10) == 0) {
                char *reason = nl + 11;
                reason[strcspn(reason, "\n")] = '\0';
                if ((r = serve_add_header(rs, "SBX-Truncated", "%s", reason)) < 0)
                        return r;
        }
        if (nl) {
                out.len = (size_t)(nl - out.data);
                *nl = '\0';
        }
        return serve_reply_json(rs, 200, &out);
}

static int search(struct serve_request *rq, struct serve_response *rs)
{
        return find(rq, rs, false);
}

static int list(struct serve_request *rq, struct serve_response *rs)
{
        return find(rq, rs, true);
}

const struct serve_route serve_file_routes[] = {
    {"GET", "/files/info", info},
    {"DELETE", "/files", remove_files},
    {"POST", "/files/permissions", permissions},
    {"POST", "/files/mv", move},
    {"GET", "/files/search", search},
    {"POST", "/files/replace", replace},
    {"POST", "/files/upload", files_upload, &files_upload_parts},
    {"GET", "/files/download", files_download},
    {"GET", "/directories/list", list},
    {"POST", "/directories", make_dirs},
    {"DELETE", "/directories", remove_dirs},
    {0},
};
