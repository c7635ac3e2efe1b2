/* SPDX-License-Identifier: MIT */
/* An OpenSandbox CreateSandboxRequest as a `sbx create` command line (create_req.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "argv.h"

/* What the operator allows in [serve] (sandbox.ini(5)). */
struct serve_policy {
        char **host_images;    /* image uris answered with the host's base ("*": every uri) */
        char **volume_roots;   /* host directories volumes may come from (none: no volumes) */
        bool allow_all_egress; /* [serve] network = host: no networkPolicy means --net host */
};

struct create_plan {
        struct serve_argv argv;  /* "create" "--json" ... */
        const char *image_uri;   /* borrowed from the request; NULL without an image */
        json_object *metadata;   /* borrowed; NULL when none */
        json_object *entrypoint; /* borrowed; NULL when none */
        bool run_entrypoint;     /* an entrypoint other than the idle default: exec -d it */
        char *env;               /* the env object as JSON, for --env-file - (stdin); or NULL */
};

/*
 * Map req onto out->argv. A request sbx cannot honour as asked (a limit it cannot express, a
 * volume outside the allowed roots, an allow-all policy the operator did not allow, a
 * snapshot) is refused, never half applied: -EINVAL with the reason in why. -ENOMEM else.
 */
int create_plan_build(const struct serve_policy *p, json_object *req, struct create_plan *out,
                      char *why, size_t n);
void create_plan_free(struct create_plan *p);
