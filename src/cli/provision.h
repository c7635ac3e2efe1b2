/* SPDX-License-Identifier: MIT */
/*
 * Provisioning a new session before `create`/`run` returns: `--package`/[sandbox] packages
 * with pip, then [sandbox] setup with sh -c, each as an exec in the session (its network
 * policy, its environment, its exec timeout).
 */
#pragma once

#include "../config/config.h"
#include "../launch/launch.h"
#include "progress.h"

/* Runs one request in the new session (exec_in_session or exec_join). */
typedef int (*provision_exec_fn)(void *ctx, const struct exec_request *rq, struct exec_result *res,
                                 struct sbx_error *e);

/*
 * Run the installs and setup of c. On failure (exit 1) *e names the step, its exit status and
 * the end of its output, and *ret_output (when not NULL) holds its whole captured output.
 */
int provision_session(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                      struct buf *ret_output, struct sbx_error *e);

/* The two steps of provision_session on their own (create saves the packages between). */
int provision_packages(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                       struct cli_progress *pr, struct buf *ret_output, struct sbx_error *e);
int provision_setup(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                    struct buf *ret_output, struct sbx_error *e);

/*
 * Default packages once (pkgcache.c). With an image and packages: when the store has the
 * image saved for this base, index and package list, c uses it instead and has no packages
 * left to install (1); otherwise *ret_ref (caller frees) names the image to save them as once
 * installed (0). -errno with *e set when the saved image cannot be used.
 */
int pkgcache_use(struct sbx_config *c, char **ret_ref, struct sbx_error *e);
/* Save session id's writable layer (its installed packages) as ref; a warning on failure. */
void pkgcache_save(const char *id, const char *ref);

/* create: exec by id; on failure destroy the session (nothing is left behind). */
int provision_exec_by_id(void *id, const struct exec_request *rq, struct exec_result *res,
                         struct sbx_error *e);
void provision_destroy(const char *id);
