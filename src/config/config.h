/* SPDX-License-Identifier: MIT */
/*
 * The effective options of a session: built-in defaults, then sandbox.ini files, then SBX_*
 * environment variables, then command-line flags (sandbox.ini(5), PRECEDENCE). Parsing is pure:
 * nothing here touches a session or prints; errors go into struct sbx_error (exit 2).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "shared/error.h"

enum sbx_net_mode { SBX_NET_NONE = 0, SBX_NET_HOST, SBX_NET_PROXY };
/* Where a proxy-mode session finds its egress proxy: in its own network namespace, so the
 * session's environment (session/state.c) and the proxy (net/) agree on one address. */
#define PROXY_PORT 3128
#define PROXY_URL "http://127.0.0.1:3128"
enum sbx_seccomp_profile { SBX_SECCOMP_DEFAULT = 0, SBX_SECCOMP_STRICT, SBX_SECCOMP_UNCONFINED };

struct sbx_mount {
        char *host;    /* absolute host path, '~' already expanded */
        char *sandbox; /* absolute path inside the sandbox */
        bool read_only;
};

/* Where a value came from, so "asked for" can be told from "default" (error messages, audit). */
enum sbx_origin { SBX_ORIGIN_DEFAULT = 0, SBX_ORIGIN_FILE, SBX_ORIGIN_ENV, SBX_ORIGIN_FLAG };

struct sbx_config {
        /* [sandbox] */
        char *name;           /* --name only; NULL when unset */
        uint64_t ttl_sec;     /* 0 = until destroyed; default 1800 (30m) */
        uint64_t timeout_sec; /* default per-exec timeout; default 1800 */
        char *rootfs;         /* "host" or an absolute directory */
        char *image;          /* NULL when unset */
        char **packages;      /* NULL-terminated, may be NULL */
        char *setup;          /* NULL when unset */
        bool read_only;
        char *workdir;  /* absolute; default "/workspace" */
        char *hostname; /* default "sandbox" */
        struct sbx_mount *mounts;
        size_t n_mounts;
        char **env; /* "K=V" from [env] and --env, later ones override earlier */
        /* Origins of the [sandbox] keys whose layering is not "last one wins": a list is replaced
         * by the first layer that sets it and accumulates within that layer; rootfs and image
         * exclude each other. */
        enum sbx_origin rootfs_origin, image_origin, packages_origin, mounts_origin;
        enum sbx_origin workdir_origin; /* an image's WorkingDir applies only below a set one */

        /* Resolved from `image` by the CLI (src/image/use.c), not keys of their own. */
        char *image_layers_dir; /* absolute $STORE/layers; NULL without an image */
        char **image_layers;    /* layer ids below it, lowest first */
        char *image_id;         /* the image record's id (sha256 hex); NULL without an image */
        char *image_rootfs;     /* the directory below its layers (a commit of a --rootfs
                                   session); NULL: the layers are the whole root */
        bool image_host_base;   /* a commit of a host-base session: its layers over a root
                                   built as the host base's (its /usr under theirs) */
        int image_lock_fd;      /* shared lock on the image's record, kept for the session's
                                   life (`image rm` refuses meanwhile); -1 without an image */

        /* [limits] */
        /* 0 = "unlimited": no limit asked for (any number is above 0) */
        uint64_t memory_bytes; /* default 512M */
        uint64_t cpus_milli;   /* CPUs x 1000; default 1000 */
        uint64_t pids;         /* default 256 */
        uint64_t disk_bytes;   /* default 1G */
        uint64_t nofile;       /* default 1024 */
        uint64_t ptys;         /* ptys of the session's devpts (its max=); default 64 */
        enum sbx_origin memory_origin, cpus_origin, pids_origin, disk_origin, nofile_origin,
            ptys_origin;
        /* [limits] strict: a built-in default limit that cannot be enforced fails create too
         * (otherwise the session goes without it, and says so) */
        bool strict_limits;

        /* [network] */
        enum sbx_net_mode net;
        enum sbx_origin net_origin;
        char **allow_hosts; /* NULL-terminated, may be NULL; non-empty implies proxy */
        enum sbx_origin allow_origin;

        /* [security] */
        enum sbx_seccomp_profile seccomp;
        /* As root: uid/gid 0 inside maps to host uid_range_start, uid_range_count ids; with
         * uid_range_pick (the default, "pick") each session takes a range of its own
         * (launch/uidrange.h) and start is 0 here. */
        bool uid_range_pick;
        uint32_t uid_range_start;
        uint32_t uid_range_count;

        /* [audit] */
        char *audit_dir; /* NULL = the session's runtime dir only */

        /* [images] */
        bool image_pull_never;      /* pull = never: --image of a missing image fails */
        char **insecure_registries; /* "HOST[:PORT]" reached over plain HTTP; may be NULL */

        /* [serve] (sbx serve, the OpenSandbox API) */
        bool serve_network_host;   /* network = host: a sandbox without a policy gets all egress */
        char **serve_host_images;  /* image uris answered with the host's base; "*": all */
        char **serve_volume_roots; /* host directories that volumes may come from */
        uint64_t serve_max_upload; /* largest upload body; default 64M */
        /* [packages] */
        char *package_index;  /* index_url: NULL = PyPI */
        char **package_hosts; /* hosts: more allow entries while packages install; may be NULL */

        /* Non-fatal messages for the CLI to print ("volume host path '/x' does not exist:
         * skipped"). NULL-terminated, may be NULL. */
        char **warnings;
};

/* Fill *c with the built-in defaults. */
void config_init_defaults(struct sbx_config *c);
void config_free(struct sbx_config *c);

/*
 * Load every config layer in precedence order (lowest first): /etc/sbx/sandbox.ini,
 * ~/.config/sbx/sandbox.ini, $SBX_CONFIG, explicit_file (--config, may be NULL), then the
 * SBX_* environment. A missing default file is skipped; a missing $SBX_CONFIG or --config file,
 * an unknown section or key, or a bad value is an error (exit 2) naming file, line and key.
 */
int config_load(struct sbx_config *c, const char *explicit_file, struct sbx_error *e);

/* Load one ini file on top of *c (used by config_load and the unit tests). */
int config_load_file(struct sbx_config *c, const char *path, struct sbx_error *e);
/* Apply SBX_* variables from envp (NULL-terminated "K=V") on top of *c. */
int config_load_env(struct sbx_config *c, char *const *envp, struct sbx_error *e);

/*
 * Apply one create option given on the command line ("--memory", "512M"), with the same
 * validation as the ini key. Flags are the top layer. Returns -EINVAL with a usage error.
 * Flag names: --name --ttl --timeout --rootfs --image --package --read-only (value NULL)
 * --workdir --hostname --env --mount --memory --cpus --pids --disk --nofile --ptys --net
 * --allow-host --seccomp --strict-limits (value NULL).
 */
int config_apply_flag(struct sbx_config *c, const char *flag, const char *value,
                      struct sbx_error *e);

/* Longest duration accepted, in seconds (136 years): keeps "seconds * 1000" and
 * "now + ttl" far from overflowing wherever the value is used. */
#define DURATION_MAX_SEC UINT64_C(0xffffffff)

/* Validation helpers shared with the CLI (exec -e, exec -t, --max-output). */
int parse_size(const char *s, uint64_t *ret);         /* bytes, K/M/G/T suffix, powers of 1024 */
int parse_duration(const char *s, uint64_t *ret_sec); /* seconds, or s/m/h suffix */
int parse_uint(const char *s, uint64_t *ret);         /* decimal digits only; -ERANGE on overflow */
int parse_env_assignment(const char *s);              /* 0 if "K=V" with a valid K */
/* One --allow-host entry: NULL with *ret the lowercased entry (caller frees), or the reason. */
const char *allow_entry_check(const char *s, char **ret);

const char *net_mode_name(enum sbx_net_mode m);

/* packages.c: the package index and the provisioning window. */
#define PACKAGE_INDEX_DEFAULT "https://pypi.org/simple"
/* NULL when url is an http(s) index URL; *ret_entry (may be NULL) gets its host as an allow
 * entry ("host[:port]"). */
const char *package_index_check(const char *url, char **ret_entry);
const char *package_index_url(const struct sbx_config *c);
/* The allow entries the proxy admits while packages install: the index's host (PyPI's two
 * by default) and [packages] hosts. 0 or -errno. */
int package_window(const struct sbx_config *c, char ***ret);
/* "K=V" for pip in the session: the index, and the externally-managed guard answered. */
int package_pip_env(const struct sbx_config *c, char ***ret);
const char *seccomp_profile_name(enum sbx_seccomp_profile p);
