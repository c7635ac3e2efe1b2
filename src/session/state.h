/* SPDX-License-Identifier: MIT */
/*
 * A session's state file ($RT/<id>/state): what every later client needs to join the session
 * and list it. Written by the supervisor only (0600, temp file + rename), read by clients.
 * Format: "key=value" lines, "version=1" first; values are %-escaped so any byte round-trips.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/buf.h"
#include "shared/error.h"
#include "id.h"

#define STATE_VERSION 1

struct session_state {
        char id[SESSION_ID_LEN + 1];
        char *name; /* NULL when unnamed */
        pid_t supervisor_pid;
        int64_t supervisor_start; /* /proc start time, defeats pid reuse */
        pid_t init_pid;           /* in the host pid namespace */
        int64_t created_at;       /* unix seconds */
        int64_t expires_at;       /* 0 = never (ttl 0) */
        uint64_t ttl_sec;
        uint64_t timeout_sec;
        char *workdir;
        char *hostname;
        char **env; /* the session's exec environment, "K=V", NULL-terminated */
        /* The host directories of its writable volumes (what the session can plant links in:
         * host-side copies do not follow them) as "DEV:INO:PATH", the directory stat()ed when
         * the session was made (never looked up by its path again), NULL-terminated; NULL
         * when none. volumes_known: the state says how many (an older sbx's does not). */
        char **volumes;
        bool volumes_known;
        enum sbx_seccomp_profile seccomp;
        enum sbx_net_mode net;
        uint64_t nofile;
        uint64_t disk_bytes;
        bool read_only;
        /* Host uid/gid that uid 0 inside is, and how many ids are mapped; the host uid and
         * gid of its host-side helpers (the proxy), 0 when none. */
        uint32_t uid_start, uid_count, helper_uid;
        /* The cgroup limits asked for (0: unlimited), and which of them the session goes without
         * (bit per launch/cgroup.h's enum cg_ctrl: a default the host could not enforce). */
        uint64_t memory_bytes, cpus_milli, pids;
        unsigned limits_unenforced;
        /* The session's cgroups (launch/cgroup.h), absolute paths; NULL when none. */
        char *cgroup;           /* cgroup v2: <parent>/<id> */
        char *cgroup_v1_memory; /* cgroup v1, per controller that v2 does not provide */
        char *cgroup_v1_pids;
        char *cgroup_v1_cpu;
        char *cgroup_v1_freezer; /* cgroup v1 freezer, for pause when v2 gave it no cgroup */
        /* What the session's root is made of (for `sbx commit`): "host", "rootfs" or
         * "image:<id>" (the image record's sha256 hex); NULL in states of older versions. */
        char *base;
        /* The audit log when [audit] dir is set (absolute); NULL: $RT/<id>/audit.jsonl. */
        char *audit_path;
};

void session_state_free(struct session_state *s);
static inline void session_state_freep(struct session_state *s)
{
        session_state_free(s);
}
#define _cleanup_state_ _cleanup_(session_state_freep)

/* Serialise / parse (pure; unit-tested). */
int session_state_format(const struct session_state *s, struct buf *out);
int session_state_parse(const char *text, size_t len, struct session_state *s);

/* Atomically write sessfd/state; read it back. */
int session_state_write(int sessfd, const struct session_state *s);
int session_state_read(int sessfd, struct session_state *s);

/*
 * The exec environment of a session: the built-in PATH, HOME=/workspace, LANG=C.UTF-8, then
 * the config's env (later entries override earlier ones with the same key).
 */
char **session_env_build(const struct sbx_config *c);
/* The host paths of c's writable volumes (for session_state.volumes); NULL: out of memory. */
char **session_volumes_build(const struct sbx_config *c);
/* Copy base and apply "K=V" overrides (exec -e, TERM for -T). NULL on ENOMEM. */
char **env_merge(char *const *base, char *const *overrides);
