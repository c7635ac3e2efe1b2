/* SPDX-License-Identifier: MIT */
/* The lifecycle routes (under / and /v1): sandboxes made, read, renewed and ended. */
#include "serve-internal.h"

static int health(struct serve_request *rq, struct serve_response *rs)
{
        (void)rq;
        _cleanup_buf_ struct buf b = {0};
        int r = buf_puts(&b, "{\"status\":\"healthy\"}");
        return r < 0 ? r : serve_reply_json(rs, 200, &b);
}

const struct serve_route serve_lifecycle_routes[] = {
    {"GET", "/health", health, 0},
    {0},
};
