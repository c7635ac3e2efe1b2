/* SPDX-License-Identifier: MIT */
/*
 * POST /files/upload and GET /files/download. An upload's multipart body is taken apart by
 * libmicrohttpd as it arrives (struct serve_parts); each file part goes straight into a memfd,
 * its only copy in serve, that becomes the stdin of `sbx fs ID put PATH MODE`, which replaces
 * the file atomically in the session. A download is streamed: `sbx fs ID get PATH OFFSET
 * LENGTH` is run once per OPS_CAT_MAX bytes, so a big file never sits whole in serve's memory,
 * and each piece must come from the same file (its device and inode) or the transfer is
 * aborted rather than splice two files.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ops/ops.h"
#include "shared/util.h"
#include "files.h"
#include "serve-internal.h"

#define UPLOAD_MAX_PAIRS 64u
#define UPLOAD_MAX_METADATA 65536u

/* The memfds of uploads still arriving, across all connections: an upload holds its file parts'
 * from their first byte, so slow clients could otherwise take every fd serve has (512
 * connections of 64 parts). Past the budget an upload is answered 429. */
static atomic_uint upload_fds;
static unsigned upload_fds_max = 256;
/* Their bytes likewise: [serve] max_upload bounds one request, not the 512 connections
 * together (each could hold its bytes open, a byte a minute). */
static atomic_ullong upload_bytes;
static unsigned long long upload_bytes_max = 8ULL * (64u << 20);

struct upload {
        unsigned long long bytes; /* of its file parts so far, counted in upload_bytes */
        struct buf meta[UPLOAD_MAX_PAIRS];
        size_t n_meta;
        int file[UPLOAD_MAX_PAIRS];
        size_t n_file;
        const char *bad; /* why the form is refused (400) */
};

void files_upload_fds_budget(unsigned n)
{
        upload_fds_max = n;
}

void files_upload_bytes_budget(unsigned long long n)
{
        upload_bytes_max = n;
}

/* size more bytes for u, within the budget: 0, or -EMFILE past it (429, as for the fds). */
static int upload_bytes_take(struct upload *u, size_t size)
{
        if (atomic_fetch_add(&upload_bytes, size) + size > upload_bytes_max) {
                atomic_fetch_sub(&upload_bytes, size);
                return -EMFILE;
        }
        u->bytes += size;
        return 0;
}

/* A memfd for a file part, within the budget: an fd, or -errno (-EMFILE past the budget). */
static int upload_fd_new(void)
{
        if (atomic_fetch_add(&upload_fds, 1) >= upload_fds_max) {
                atomic_fetch_sub(&upload_fds, 1);
                return -EMFILE;
        }
        int fd = memfd_create("sbx-serve-upload", MFD_CLOEXEC);
        if (fd < 0) {
                int r = negerrno();
                atomic_fetch_sub(&upload_fds, 1);
                return r;
        }
        return fd;
}

static void *upload_make(void)
{
        return calloc(1, sizeof(struct upload));
}

static void upload_drop(void *ctx)
{
        struct upload *u = ctx;
        for (size_t i = 0; i < u->n_meta; i++)
                buf_freep(&u->meta[i]);
        for (size_t i = 0; i < u->n_file; i++)
                if (u->file[i] >= 0) {
                        close(u->file[i]);
                        atomic_fetch_sub(&upload_fds, 1);
                }
        atomic_fetch_sub(&upload_bytes, u->bytes);
        free(u);
}

static int on_part(void *ctx, const char *name, const char *filename, const char *content_type,
                   uint64_t off, const char *data, size_t size)
{
        (void)filename, (void)content_type;
        struct upload *u = ctx;
        bool meta = strcmp(name, "metadata") == 0;
        if (!meta && strcmp(name, "file") != 0)
                return 0; /* other fields are ignored, as execd does */
        size_t *n = meta ? &u->n_meta : &u->n_file;
        if (off == 0) { /* a new part */
                if (*n == UPLOAD_MAX_PAIRS) {
                        u->bad = "too many parts in one upload";
                        return -E2BIG;
                }
                if (!meta) {
                        int fd = upload_fd_new();
                        if (fd < 0)
                                return fd;
                        u->file[u->n_file] = fd;
                } else
                        u->meta[u->n_meta] = (struct buf){0};
                (*n)++;
        }
        if (meta) {
                struct buf *b = &u->meta[u->n_meta - 1];
                if (b->len + size > UPLOAD_MAX_METADATA) {
                        u->bad = "the metadata part is larger than 64 KiB";
                        return -E2BIG;
                }
                int r = upload_bytes_take(u, size); /* held as long as the files' bytes */
                return r < 0 ? r : buf_append(b, data, size);
        }
        int r = upload_bytes_take(u, size);
        return r < 0 ? r : write_all(u->file[u->n_file - 1], data, size);
}

/* The metadata's path, mode (execd digits, as a string for `sbx fs put`) and owner/group. */
static int parse_meta(const struct buf *b, json_object **root, const char **path, char mode[16])
{
        *root = b->data ? json_tokener_parse(b->data) : NULL;
        json_object *v;
        if (!*root || !json_object_is_type(*root, json_type_object) ||
            !json_object_object_get_ex(*root, "path", &v) ||
            !json_object_is_type(v, json_type_string) || !json_object_get_string(v)[0])
                return -EINVAL;
        *path = json_object_get_string(v);
        mode[0] = '\0';
        if (json_object_object_get_ex(*root, "mode", &v) &&
            !json_object_is_type(v, json_type_null)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                        return -EINVAL;
                snprintf(mode, 16, "%" PRId64, json_object_get_int64(v));
        }
        return 0;
}

/* Owner and group of an upload, through the same chmod as /files/permissions. */
static int upload_owner(struct serve_request *rq, json_object *meta, const char *path,
                        struct buf *out, int *code)
{
        json_object *o, *g;
        bool has_o = json_object_object_get_ex(meta, "owner", &o) &&
                     json_object_is_type(o, json_type_string) && json_object_get_string(o)[0];
        bool has_g = json_object_object_get_ex(meta, "group", &g) &&
                     json_object_is_type(g, json_type_string) && json_object_get_string(g)[0];
        *code = 0;
        if (!has_o && !has_g)
                return 0;
        json_object *req = json_object_new_object(), *perm = json_object_new_object();
        if (!req || !perm) {
                json_object_put(req);
                json_object_put(perm);
                return -ENOMEM;
        }
        if (has_o)
                json_object_object_add(perm, "owner", json_object_get(o));
        if (has_g)
                json_object_object_add(perm, "group", json_object_get(g));
        json_object_object_add(req, path, perm);
        const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
        int fd = s ? files_memfd(s, strlen(s)) : -ENOMEM;
        json_object_put(req);
        if (fd < 0)
                return fd;
        int r = files_run(rq, "chmod", NULL, fd, out, FILES_MAX_OUT, code);
        close(fd);
        return r;
}

static int upload_one(struct serve_request *rq, struct serve_response *rs, const struct buf *meta,
                      int fd)
{
        json_object *root = NULL;
        const char *path;
        char mode[16];
        if (parse_meta(meta, &root, &path, mode) < 0) {
                json_object_put(root);
                return serve_reply_error(rs, 400, "INVALID_FILE_METADATA",
                                         "invalid metadata: a JSON object with a non-empty "
                                         "\"path\" and an integer \"mode\" is expected");
        }
        _cleanup_buf_ struct buf out = {0};
        const char *args[] = {path, mode[0] ? mode : NULL, NULL};
        int code = 0;
        int r = lseek(fd, 0, SEEK_SET) < 0 ? negerrno() : 0;
        if (r == 0)
                r = files_run(rq, "put", args, fd, &out, FILES_MAX_OUT, &code);
        if (r == 0 && code == 0) {
                out.len = 0;
                r = upload_owner(rq, root, path, &out, &code);
        }
        json_object_put(root);
        if (r < 0)
                return r;
        return code ? files_reply_error(rs, code, &out) : 1;
}

const struct serve_parts files_upload_parts = {upload_make, on_part, upload_drop};

int files_upload(struct serve_request *rq, struct serve_response *rs)
{
        const struct upload *u = rq->parts; /* made before the body came (files_upload_parts) */
        int r = rq->parts_result;
        if (r == -EBADMSG && !u->bad)
                return serve_reply_error(rs, 400, "INVALID_FILE",
                                         "the body is not a multipart/form-data form");
        if (u->bad)
                return serve_reply_error(rs, 400, "INVALID_FILE", "%s", u->bad);
        if (r == -EPROTO)
                return serve_reply_error(rs, 400, "INVALID_FILE",
                                         "the multipart form ends before its last part does");
        if (r == -EMFILE) /* past a budget (fds or bytes), or serve's own fd limit */
                return serve_reply_error(rs, 429, "TOO_MANY_UPLOADS",
                                         "uploads still arriving hold as many files (%u) or "
                                         "bytes (%llu MiB) as serve takes: try again",
                                         upload_fds_max, upload_bytes_max >> 20);
        if (r < 0)
                return r;
        if (u->n_meta == 0)
                return serve_reply_error(rs, 400, "INVALID_FILE_METADATA",
                                         "the metadata part is missing");
        if (u->n_file == 0)
                return serve_reply_error(rs, 400, "INVALID_FILE_CONTENT",
                                         "the file part is missing");
        if (u->n_meta != u->n_file)
                return serve_reply_error(rs, 400, "INVALID_FILE",
                                         "metadata and file count mismatch: %zu vs %zu", u->n_meta,
                                         u->n_file);
        for (size_t i = 0; i < u->n_meta; i++)
                if ((r = upload_one(rq, rs, &u->meta[i], u->file[i])) <= 0)
                        return r;
        return serve_reply_empty(rs, 200);
}

/* A download in progress (the stream's context). */
struct download {
        const struct serve *srv;
        char *session_id, *path;
        uint64_t start, len; /* the bytes sent: [start, start+len) of the file */
        unsigned long long dev, ino;
        struct buf chunk; /* the piece in hand: file bytes from chunk_at */
        uint64_t chunk_at;
};

static void download_free(void *ctx)
{
        struct download *d = ctx;
        free(d->session_id);
        free(d->path);
        buf_freep(&d->chunk);
        free(d);
}

/* Fetch length bytes from offset into d->chunk; 0 with the header parsed, or exit/-errno. */
static int fetch(const struct serve_request *rq, struct download *d, uint64_t offset,
                 uint64_t length, struct buf *out, int *code, long long *size)
{
        char off[32], len[32];
        snprintf(off, sizeof(off), "%" PRIu64, offset);
        snprintf(len, sizeof(len), "%" PRIu64, length);
        const char *args[] = {d->path, off, len, NULL};
        out->len = 0;
        int r = files_run(rq, "get", args, -1, out, OPS_CAT_MAX + 4096, code);
        if (r < 0 || *code)
                return r;
        char *nl = out->data ? memchr(out->data, '\n', out->len) : NULL;
        unsigned long long dev, ino;
        if (!nl || sscanf(out->data, "%lld %llu %llu", size, &dev, &ino) != 3)
                return -EBADMSG;
        if (d->ino && (dev != d->dev || ino != d->ino))
                return -ESTALE; /* the path names another file now */
        d->dev = dev, d->ino = ino;
        size_t head = (size_t)(nl + 1 - out->data);
        memmove(out->data, out->data + head, out->len - head);
        out->len -= head;
        d->chunk_at = offset;
        return 0;
}

static ssize_t download_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
        struct download *d = ctx;
        if (pos >= d->len)
                return SERVE_STREAM_END;
        uint64_t at = d->start + pos;
        if (at < d->chunk_at || at >= d->chunk_at + d->chunk.len) {
                uint64_t want = d->len - pos < OPS_CAT_MAX ? d->len - pos : OPS_CAT_MAX;
                struct serve_request rq = {.srv = (struct serve *)d->srv,
                                           .session_id = d->session_id};
                long long size;
                int code;
                if (fetch(&rq, d, at, want, &d->chunk, &code, &size) < 0 || code ||
                    d->chunk.len == 0)
                        return SERVE_STREAM_ERROR; /* shrunk, replaced, or gone */
        }
        size_t have = (size_t)(d->chunk_at + d->chunk.len - at);
        size_t n = have < max ? have : max;
        if (n > d->len - pos)
                n = (size_t)(d->len - pos);
        memcpy(buf, d->chunk.data + (at - d->chunk_at), n);
        return (ssize_t)n;
}

/* The decimal number at *p, moved past it: digits only (sscanf's %llu would also take
 * spaces and a sign, "-1" as 2^64 - 1) and no overflow. */
static bool range_number(const char **p, unsigned long long *ret)
{
        if (**p < '0' || **p > '9')
                return false;
        char *end;
        errno = 0;
        *ret = strtoull(*p, &end, 10);
        if (errno != 0)
                return false;
        *p = end;
        return true;
}

/* "bytes=A-B", "bytes=A-", "bytes=-N" (one range) against size: 0, or -ERANGE. */
static int parse_range(const char *h, uint64_t size, uint64_t *start, uint64_t *len)
{
        unsigned long long a = 0, b = 0;
        if (strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
                return -ERANGE;
        h += 6;
        if (h[0] == '-') {
                h++;
                if (!range_number(&h, &b) || *h || b == 0 || size == 0)
                        return -ERANGE;
                *start = b >= size ? 0 : size - b;
                *len = size - *start;
                return 0;
        }
        if (!range_number(&h, &a) || *h != '-' || a >= size)
                return -ERANGE;
        h++;
        if (*h == '\0')
                b = size - 1;
        else {
                if (!range_number(&h, &b) || *h || b < a)
                        return -ERANGE;
                if (b >= size)
                        b = size - 1;
        }
        *start = a;
        *len = b - a + 1;
        return 0;
}

static int disposition(struct serve_response *rs, const char *path)
{
        const char *base = strrchr(path, '/');
        base = base && base[1] ? base + 1 : path;
        /* a name with quotes, controls or non-ASCII bytes goes percent-encoded (RFC 5987) */
        bool plain = true;
        for (const unsigned char *p = (const unsigned char *)base; *p; p++)
                if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\' || *p == '%')
                        plain = false;
        if (plain)
                return serve_add_header(rs, "Content-Disposition", "attachment; filename=\"%s\"",
                                        base);
        _cleanup_buf_ struct buf enc = {0};
        for (const unsigned char *p = (const unsigned char *)base; *p; p++) {
                bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9') || strchr("-._~", *p);
                if ((keep ? buf_append(&enc, p, 1) : buf_printf(&enc, "%%%02X", *p)) < 0)
                        return -ENOMEM;
        }
        return serve_add_header(rs, "Content-Disposition",
                                "attachment; filename=\"%s\"; filename*=UTF-8''%s",
                                enc.data ? enc.data : "", enc.data ? enc.data : "");
}

int files_download(struct serve_request *rq, struct serve_response *rs)
{
        const char *path = serve_query(rq, "path");
        if (!path || !path[0])
                return serve_reply_error(rs, 400, "MISSING_QUERY",
                                         "missing query parameter 'path'");
        struct download *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->srv = rq->srv;
        d->session_id = strdup(rq->session_id);
        d->path = strdup(path);
        if (!d->session_id || !d->path) {
                download_free(d);
                return -ENOMEM;
        }
        /* the first piece: the file's size and identity, and the errors (404 ...) */
        long long size = 0;
        int code = 0;
        int r = fetch(rq, d, 0, OPS_CAT_MAX, &d->chunk, &code, &size);
        if (r < 0 || code) {
                if (code)
                        r = files_reply_error(rs, code, &d->chunk);
                download_free(d);
                return r;
        }
        d->start = 0;
        d->len = (uint64_t)size;
        unsigned status = 200;
        const char *range = serve_header(rq, "Range");
        if (range && parse_range(range, (uint64_t)size, &d->start, &d->len) < 0) {
                download_free(d);
                return serve_reply_error(rs, 416, "UNKNOWN",
                                         "the range '%s' cannot be satisfied (size %lld)", range,
                                         size);
        }
        if (range) {
                status = 206;
                r = serve_add_header(rs, "Content-Range", "bytes %" PRIu64 "-%" PRIu64 "/%lld",
                                     d->start, d->start + d->len - 1, size);
        }
        if (r == 0)
                r = disposition(rs, path);
        if (r < 0) {
                download_free(d);
                return r;
        }
        /* a file that shrank after the first piece: download_read finds a short piece and
         * aborts the stream rather than pad it */
        rs->status = status;
        rs->content_type = "application/octet-stream";
        rs->stream = (struct serve_stream){
            .read = download_read, .free = download_free, .ctx = d, .size = d->len};
        return 0;
}
