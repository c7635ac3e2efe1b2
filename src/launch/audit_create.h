/* SPDX-License-Identifier: MIT */
#pragma once

#include "../config/config.h"
#include "../net/proxy.h"
#include "../session/state.h"
#include "cgroup.h"

/* The same words on stderr (cli) and in the audit log. */
#define SBX_WARN_NET_HOST "--net host: the session shares the host's network"
#define SBX_WARN_UNCONFINED "--seccomp unconfined: no system call filter in this session"

/* If the session's proxy has ended: reap it and write a "helper_exited" record (pid, exit
 * code or signal) to fd; 1. 0 while it runs or when there is none. */
int audit_proxy_exited(int fd, const char *id, struct proxy_handle *h);

/* The "create" record: the session's effective boundaries. 0 or -errno. */
int audit_write_create(int fd, const struct session_state *st, const struct sbx_config *c,
                       const struct cgroup_plan *plan);
/* One "warning" record per config warning, and for --net host and --seccomp unconfined. */
void audit_write_warnings(int fd, const char *id, const struct sbx_config *c);
/* Fail (exit 4) for a log that audit_create() could not make (err: its errno). */
int audit_create_failed(struct sbx_error *e, const char *audit_dir, int err);
