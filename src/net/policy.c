/* SPDX-License-Identifier: MIT */
/*
 * A live session's allow list changes (`sbx net`): the supervisor sends the whole new list
 * down the proxy's stop pipe, which until then only ever closed. One message: a 4-byte length
 * and the entries, each NUL-terminated. The proxy reads it whole when the pipe turns
 * readable (its end of the pipe blocks: the only writer writes each message in one go) and
 * swaps its list before it looks at the next request, so every request after the change is
 * judged by the new list. A connection already relaying is not cut.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/buf.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "proxy.h"

static int read_exact(int fd, void *p, size_t n)
{
        for (size_t got = 0; got < n;) {
                ssize_t k = RETRY_EINTR(read(fd, (char *)p + got, n - got));
                if (k < 0)
                        return negerrno();
                if (k == 0)
                        return got ? -EPIPE : 0;
                got += (size_t)k;
        }
        return 1;
}

int proxy_policy_send(int stop_fd, char *const *entries)
{
        _cleanup_buf_ struct buf b = {0};
        uint32_t len = 0;
        if (buf_append(&b, &len, sizeof(len)) < 0)
                return -ENOMEM;
        for (char *const *p = entries; p && *p; p++)
                if (buf_append(&b, *p, strlen(*p) + 1) < 0)
                        return -ENOMEM;
        if (b.len - sizeof(len) > PROXY_POLICY_MAX)
                return -E2BIG;
        len = (uint32_t)(b.len - sizeof(len));
        memcpy(b.data, &len, sizeof(len));
        return write_all(stop_fd, b.data, b.len);
}

int proxy_policy_read(int fd, struct allow_list *allow)
{
        uint32_t len;
        int r = read_exact(fd, &len, sizeof(len));
        if (r <= 0)
                return r;
        if (len > PROXY_POLICY_MAX)
                return -EBADMSG;
        _cleanup_free_ char *data = malloc(len + 1);
        if (!data)
                return -ENOMEM;
        if ((r = read_exact(fd, data, len)) < 0 || (len && r == 0))
                return r < 0 ? r : -EPIPE;
        data[len] = '\0';
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                n += data[i] == '\0';
        _cleanup_free_ char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0, k = 0; i < len && k < n; k++) {
                v[k] = data + i;
                i += strlen(data + i) + 1;
        }
        struct allow_list fresh;
        if ((r = allow_list_parse(v, &fresh)) < 0)
                return r; /* the old list stays */
        allow_list_free(allow);
        *allow = fresh;
        return 1;
}
