/* SPDX-License-Identifier: MIT */
/*
 * Provisioning a new session before `create`/`run` returns: `--package`/[sandbox] packages
 * with pip, then [sandbox] setup with sh -c, each as an exec in the session (its network
 * policy, its environment, its exec timeout).
 */
#pragma once

#include "../config/config.h"
#include "../launch/launch.h"

/* Runs one request in the new session (exec_in_session or exec_join). */
typedef int (*provision_exec_fn)(void *ctx, const struct exec_request *rq, struct exec_result *res,
                                 struct sbx_error *e);

/*
 * Run the installs and setup of c. On failure (exit 1) *e names the step, its exit status and
 * the end of its output, and *ret_output (when not NULL) holds its whole captured output.
 */
int provision_session(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                      struct buf *ret_output, struct sbx_error *e);

/* create: exec by id; on failure destroy the session (nothing is left behind). */
int provision_exec_by_id(void *id, const struct exec_request *rq, struct exec_result *res,
                         struct sbx_error *e);
void provision_destroy(const char *id);
