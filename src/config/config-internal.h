/* SPDX-License-Identifier: MIT */
/*
 * Private to src/config (and its unit test): the option table, the "layer" a value is being
 * applied from, and the validators behind the setters.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Every option that is settable from more than one place; the index is a bit in layer.seen. */
enum config_key_id {
        KEY_NAME,
        KEY_TTL,
        KEY_TIMEOUT,
        KEY_ROOTFS,
        KEY_IMAGE,
        KEY_PACKAGES,
        KEY_SETUP,
        KEY_READ_ONLY,
        KEY_WORKDIR,
        KEY_HOSTNAME,
        KEY_MOUNTS,
        KEY_MEMORY,
        KEY_CPUS,
        KEY_PIDS,
        KEY_DISK,
        KEY_NOFILE,
        KEY_PTYS,
        KEY_STRICT_LIMITS,
        KEY_NET,
        KEY_ALLOW,
        KEY_SECCOMP,
        KEY_UID_RANGE,
        KEY_AUDIT_DIR,
        KEY_IMAGE_PULL,
        KEY_INSECURE_REGISTRIES,
        KEY_SERVE_NETWORK,
        KEY_SERVE_HOST_IMAGES,
        KEY_SERVE_VOLUME_ROOTS,
        KEY_SERVE_MAX_UPLOAD,
        KEY_PACKAGE_INDEX,
        KEY_PACKAGE_HOSTS,
        KEY__MAX,
};

/* Where the value being applied comes from: one ini file, the environment, or one flag. */
struct layer {
        enum sbx_origin origin;
        const char *file;  /* SBX_ORIGIN_FILE: its path */
        unsigned line;     /* SBX_ORIGIN_FILE: the line being parsed */
        uint32_t seen;     /* bit per config_key_id: already set in this layer */
        char *const *envp; /* for $HOME when a mount starts with '~' */
        struct sbx_error *e;
};

struct config_key;
typedef int (*config_setter)(struct sbx_config *c, struct layer *l, const struct config_key *k,
                             const char *value);

struct config_key {
        enum config_key_id id;
        const char *section; /* ini section, NULL when the option is a flag only */
        const char *key;     /* ini key */
        const char *env;     /* SBX_* variable, NULL when none */
        const char *flag;    /* create flag, NULL when none */
        bool list;           /* comma-separated in ini/env; layering of lists (config.c) */
        bool free_text;      /* an inline ';' comment would cut the value: refuse it */
        config_setter set;
        size_t value_off;     /* offsetof the uint64_t value (generic numeric setters) */
        size_t origin_off;    /* offsetof the enum sbx_origin field, 0 when none */
        uint64_t min, max;    /* accepted range of numeric values */
        const char *expected; /* "a size like 512M" */
        const char *range;    /* why a well-formed value is out of [min, max] */
};

/* keys.c: the one table of options (ini section/key, SBX_* variable, flag). */
const struct config_key *config_keys(size_t *ret_n);
const struct config_key *config_key_by_ini(const char *section, const char *key);
const struct config_key *config_key_by_flag(const char *flag);
bool config_section_known(const char *section);

/* config.c: apply one value from layer l (validates, replaces or accumulates, records origin). */
int config_set(struct sbx_config *c, struct layer *l, const struct config_key *k,
               const char *value);
/* config.c: set "K=V" in c->env, replacing an earlier K. */
int config_env_put(struct sbx_config *c, const char *key, size_t key_len, const char *value);
int config_warn(struct sbx_config *c, const char *fmt, ...) _printf_(2, 3);
void config_mounts_clear(struct sbx_config *c);
/* Append s (taken: freed on failure) to the NULL-terminated *v; 0 or -ENOMEM. */
int strv_push(char ***v, char *s);
void strv_clear(char ***v);
/* Remove (and free) the strings of v that start with prefix. */
void strv_drop_prefix(char **v, const char *prefix);
bool config_seen(const struct sbx_config *c, const struct layer *l, enum config_key_id id);

/* keys.c: comma-separated items, blanks trimmed, empty ones skipped; from a flag the one value
 * is one item unless split_flag. Returns the number of items added or -errno. */
typedef int (*item_adder)(struct sbx_config *c, struct layer *l, const struct config_key *k,
                          const char *item);
int for_each_item(struct sbx_config *c, struct layer *l, const struct config_key *k, const char *v,
                  bool split_flag, item_adder add);

/* keys_sections.c: the setters of [images], [serve] and [packages] (the table is in keys.c) */
int set_image_pull(struct sbx_config *c, struct layer *l, const struct config_key *k,
                   const char *v);
int set_insecure_registries(struct sbx_config *c, struct layer *l, const struct config_key *k,
                            const char *v);
int set_serve_network(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v);
int set_serve_host_images(struct sbx_config *c, struct layer *l, const struct config_key *k,
                          const char *v);
int set_serve_volume_roots(struct sbx_config *c, struct layer *l, const struct config_key *k,
                           const char *v);
int set_package_index(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v);
int set_package_hosts(struct sbx_config *c, struct layer *l, const struct config_key *k,
                      const char *v);

/* config.c: error messages that name the layer ("--memory", "SBX_MEMORY", "[limits] memory in
 * FILE line N"). Both return -EINVAL (or -ENOMEM) after filling l->e. */
int layer_invalid(struct layer *l, const struct config_key *k, const char *value, const char *fmt,
                  ...) _printf_(4, 5);
int layer_conflict(struct layer *l, const struct config_key *k, const char *value,
                   const struct config_key *other, const char *other_value, const char *why);
int layer_oom(struct layer *l);
/* "[limits] memory" / "SBX_MEMORY" / "--memory" into buf. */
const char *layer_key_name(const struct layer *l, const struct config_key *k, char *buf, size_t n);

/* config.c: every layer below the flags, with the system file and environment given (tests). */
int config_load_from(struct sbx_config *c, const char *system_file, const char *explicit_file,
                     char *const *envp, struct sbx_error *e);
/* ini.c: one file; optional = a missing file is skipped; what names it in errors. */
int config_load_ini(struct sbx_config *c, const char *path, bool optional, const char *what,
                    char *const *envp, struct sbx_error *e);

/* units.c */
int parse_bool(const char *s, bool *ret);
int parse_cpus(const char *s, uint64_t *ret_milli); /* "0.5" -> 500, up to 3 decimals */
int parse_uid_range(const char *s, uint32_t *ret_start, uint32_t *ret_count);

/* validate.c: pure checks; the ones returning a string give the reason or NULL when valid. */
int path_normalize(const char *in, char **ret); /* absolute, no "..", "//" and "/." folded */
bool hostname_valid(const char *s);
const char *image_name_check(const char *s);
/* The ':' before a NAME[:TAG]'s tag (after the last '/', so not a registry's port), or NULL. */
const char *image_ref_tag_colon(const char *s);
const char *package_check(const char *s);
/* Validate one allow entry and return it lowercased in *ret; NULL or the reason. */
const char *allow_entry_check(const char *s, char **ret);
/* Parse "H:S[:ro|rw]" with '~' expanded from home (may be NULL: then '~' is refused). Returns
 * 0, -EINVAL with *ret_why set, or -ENOMEM. */
int mount_parse(const char *spec, const char *home, struct sbx_mount *ret, const char **ret_why);
/* $HOME from envp when absolute, else the passwd entry; NULL when neither (caller frees). */
char *home_dir(char *const *envp);
const char *env_lookup(char *const *envp, const char *name);
