/* SPDX-License-Identifier: MIT */
/* Option parsing shared by the commands: global options, create options, exec options. */
#pragma once

#include <getopt.h>

#include "../config/config.h"
#include "../launch/launch.h"
#include "cli.h"

/* getopt_long ids of long-only options */
enum {
        OPT_JSON = 0x100,
        OPT_CONFIG,
        OPT_HELP,
        OPT_CREATE_FIRST, /* create options: index into create_flag_names */
};

/* --progress MODE (create, run, image) and exec's --env-file: apart from the create options'
 * range */
enum { OPT_PROGRESS = 0x1f0, OPT_EXEC_ENV_FILE };

/* The long options of `create` (terminated); run adds the exec ones. */
extern const struct option create_long_options[];
extern const size_t n_create_long_options;

/* Flags seen on the command line, applied after the config files and environment. */
struct flag_list {
        struct {
                const char *flag;
                const char *value;
        } items[256];
        size_t n;
};

/*
 * Handle --json/--config/--help; returns 1 when handled, -1 when help was printed, -2 on a
 * usage error (unknown option or missing value: argv_opt is the offending argument).
 */
int args_common_argv(struct cli *cli, const char *command, int opt, const char *argv_opt);
#define args_common(cli, command, opt) args_common_argv(cli, command, opt, argv[optind - 1])
/* Commands that do not build a session config still reject a bad --config FILE (exit 2). */
int args_check_config(struct cli *cli);
int args_record_create_flag(struct cli *cli, struct flag_list *fl, int opt, const char *arg);
/* Load the config layers, apply the recorded flags, refuse what is not implemented yet. */
int args_build_config(struct cli *cli, const struct flag_list *fl, struct sbx_config *c);
void args_print_warnings(const struct sbx_config *c);

/* exec options; returns 1 when opt was one, 0 when not, negative on a bad value */
int args_exec_option(struct cli *cli, int opt, const char *arg, struct exec_request *rq,
                     struct flag_list *env_adds);
/* Print `sbx COMMAND --help` (with --json: {"name","usage","summary","options","examples",
 * "flags":[...]}). */
int args_print_help(struct cli *cli, const char *command);
/* Print an exec result (human: nothing more; JSON: the result object) and return its code. */
int args_finish_exec(struct cli *cli, const char *cmd, struct exec_result *res, int r);
/* The -e values recorded in fl as a NULL-terminated vector (pointers into argv). */
char **args_env_vector(const struct flag_list *fl, char *store[], size_t cap);
/* --json implies capture with a 1M default cap; -T and --json exclude each other. */
int exec_finish_request(struct cli *cli, struct exec_request *rq);
