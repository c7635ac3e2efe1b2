/* SPDX-License-Identifier: MIT */
/*
 * What serve keeps per session, in the session's own runtime directory (so it lives and dies
 * with the session and a restarted serve finds it): the access token of its execd endpoint
 * and the OpenSandbox fields sbx has no place for (metadata, image, entrypoint).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "session/runtime.h"
#include "shared/util.h"
#include "meta.h"

#define TOKEN_FILE "serve-token"
#define META_FILE "serve.json"

/* The directory of the session that ref (an id or a name) names, its id in id (may be
 * NULL): -ENOENT when there is none. */
static int open_session_id(const char *ref, char *id)
{
        struct sbx_error e = {0};
        if (runtime_check_ref(ref, &e) < 0)
                return -ENOENT;
        _cleanup_close_ int rtfd = -1;
        int r = runtime_open(&rtfd, &e);
        if (r < 0)
                return r;
        char buf[SESSION_ID_LEN + 1];
        if (runtime_resolve(rtfd, ref, id ? id : buf, &e) < 0)
                return -ENOENT;
        return runtime_open_session(rtfd, id ? id : buf);
}

static int open_session(const char *ref)
{
        return open_session_id(ref, NULL);
}

static int read_token(int sessfd, char out[static SERVE_TOKEN_LEN + 1])
{
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(sessfd, TOKEN_FILE, &b, SERVE_TOKEN_LEN + 1);
        if (r < 0)
                return r;
        if (b.len != SERVE_TOKEN_LEN)
                return -EBADMSG;
        memcpy(out, b.data, SERVE_TOKEN_LEN + 1);
        return 0;
}

int serve_token_get(const char *ref, char id[static SESSION_ID_LEN + 1],
                    char out[static SERVE_TOKEN_LEN + 1])
{
        _cleanup_close_ int sessfd = open_session_id(ref, id);
        if (sessfd < 0)
                return sessfd;
        int r = read_token(sessfd, out);
        if (r != -ENOENT)
                return r;
        unsigned char rnd[SERVE_TOKEN_LEN / 2];
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
                return -EIO;
        char tok[SERVE_TOKEN_LEN + 1];
        for (size_t i = 0; i < sizeof(rnd); i++)
                snprintf(tok + 2 * i, 3, "%02x", rnd[i]);
        /* two requests may race to make it: the first link wins, both read the winner, and
         * nobody reads a token half written */
        char tmp[64];
        snprintf(tmp, sizeof(tmp), TOKEN_FILE ".%d", (int)gettid());
        (void)unlinkat(sessfd, tmp, 0);
        r = write_file_at(sessfd, tmp, tok, SERVE_TOKEN_LEN, 0600);
        if (r >= 0 && linkat(sessfd, tmp, sessfd, TOKEN_FILE, 0) < 0 && errno != EEXIST)
                r = -errno;
        (void)unlinkat(sessfd, tmp, 0);
        if (r < 0)
                return r;
        return read_token(sessfd, out);
}

int serve_token_check(const char *id, const char *token)
{
        _cleanup_close_ int sessfd = open_session(id);
        if (sessfd < 0)
                return sessfd;
        char want[SERVE_TOKEN_LEN + 1];
        int r = read_token(sessfd, want);
        if (r < 0)
                return -EACCES;
        unsigned char d = strlen(token) != SERVE_TOKEN_LEN;
        for (size_t i = 0; i < SERVE_TOKEN_LEN; i++)
                d |= (unsigned char)want[i] ^ (unsigned char)token[i < strlen(token) ? i : 0];
        return d ? -EACCES : 0;
}

int serve_meta_write(const char *id, const struct buf *json)
{
        _cleanup_close_ int sessfd = open_session(id);
        if (sessfd < 0)
                return sessfd;
        /* a name of this thread's own: several requests write at a time */
        char tmp[64];
        snprintf(tmp, sizeof(tmp), META_FILE ".%d", (int)gettid());
        (void)unlinkat(sessfd, tmp, 0);
        int r = write_file_at(sessfd, tmp, json->data, json->len, 0600);
        if (r >= 0 && renameat(sessfd, tmp, sessfd, META_FILE) < 0)
                r = -errno;
        (void)unlinkat(sessfd, tmp, 0);
        return r;
}

int serve_meta_read(const char *id, struct buf *out)
{
        _cleanup_close_ int sessfd = open_session(id);
        if (sessfd < 0)
                return sessfd;
        return read_file_at(sessfd, META_FILE, out, 1 << 20);
}
