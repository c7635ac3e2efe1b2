/* SPDX-License-Identifier: MIT */
/* What the files of src/serve/ share beyond serve.h. */
#pragma once

#include <stdint.h>

#include "config/config.h"
#include "create_req.h"
#include "mhd_lib.h"
#include "serve.h"

/* The port the OpenSandbox SDKs ask the execd endpoint for (serve answers it itself). */
#define SERVE_EXECD_PORT 44772
/* The header that carries a session's access token on the execd routes. */
#define SERVE_TOKEN_HEADER "X-EXECD-ACCESS-TOKEN"
#define SERVE_KEY_HEADER "OPEN-SANDBOX-API-KEY"
/* A request body held in memory (every route but uploads): larger is answered 413. */
#define SERVE_MAX_BODY (1u << 20)
#define SERVE_KEY_LEN 64 /* hex digits of a key serve makes */

struct serve {
        struct serve_options opt;
        const struct mhd_lib *mhd;
        struct MHD_Daemon *daemon;
        int listen_fd;
        char host[64]; /* the address as clients reach it, for endpoint URLs: "127.0.0.1:8083" */
        struct sbx_config config; /* the [serve] keys and the rest, loaded once at start */
        struct serve_policy policy;
        uint64_t max_upload;              /* [serve] max_upload */
        char **child_env;                 /* the environment of the sbx commands serve runs */
        char made_key[SERVE_KEY_LEN + 1]; /* the key serve made when given none (key.c) */
};

/* key.c: a new random key in out, written to RT/serve.key (0600) and named on stderr. */
int serve_key_make(char out[static SERVE_KEY_LEN + 1], struct sbx_error *e);

struct serve_conn {
        struct MHD_Connection *c;
};

/* Route a request: fills *rq's path, params and session_id, returns the route, or NULL with
 * *rs filled (404, 405, 401). */
const struct serve_route *serve_route_find(struct serve *srv, struct serve_request *rq,
                                           char *path_buf, struct serve_response *rs);

/* serve_reply_*: the error body for a handler that returned -errno. */
void serve_reply_internal(struct serve_response *rs, int r);
void serve_response_clear(struct serve_response *rs);

/* Parse "ADDR:PORT" / "[ADDR6]:PORT" and bind a listening TCP socket on it (router.c). */
int serve_listen(struct serve *srv, struct sbx_error *e);
