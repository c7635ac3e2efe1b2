/* SPDX-License-Identifier: MIT */
/* The execd routes served for each session behind its endpoint (the command API). */
#include "serve-internal.h"

static int ping(struct serve_request *rq, struct serve_response *rs)
{
        (void)rq;
        return serve_reply_empty(rs, 200);
}

const struct serve_route serve_execd_routes[] = {
    {"GET", "/ping", ping, 0},
    {0},
};
