/* SPDX-License-Identifier: MIT */
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../image/image.h"
#include "../launch/audit_create.h"
#include "../launch/mount_guard.h"
#include "shared/util.h"
#include "envfile.h"
#include "progress.h"

/* Order matters: option ids are OPT_CREATE_FIRST + index. The names are literals (not read
 * from another array) so that the table is a constant initializer in standard C, not only
 * in GCC. */
#define CO(i, name, has)                                                                           \
        {                                                                                          \
                name, has, NULL, OPT_CREATE_FIRST + (i)                                            \
        }
const struct option create_long_options[] = {
    CO(0, "name", 1),           CO(1, "ttl", 1),         CO(2, "timeout", 1),   CO(3, "rootfs", 1),
    CO(4, "image", 1),          CO(5, "package", 1),     CO(6, "read-only", 0), CO(7, "workdir", 1),
    CO(8, "hostname", 1),       CO(9, "env", 1),         CO(10, "mount", 1),    CO(11, "memory", 1),
    CO(12, "cpus", 1),          CO(13, "pids", 1),       CO(14, "disk", 1),     CO(15, "nofile", 1),
    CO(16, "net", 1),           CO(17, "allow-host", 1), CO(18, "seccomp", 1),  CO(19, "ptys", 1),
    CO(20, "strict-limits", 0), CO(21, "env-file", 1),
};
const size_t n_create_long_options = sizeof(create_long_options) / sizeof(create_long_options[0]);

int args_print_help(struct cli *cli, const char *command)
{
        const struct command *c = command_find(command);
        if (!c)
                return EXIT_USAGE;
        _cleanup_buf_ struct buf b = {0}, usage = {0};
        buf_printf(&usage, "sbx %s%s%s", c->name, c->synopsis[0] ? " " : "", c->synopsis);
        if (!cli->json) {
                buf_printf(&b, "Usage: %s\n\n%s\n\nOptions:\n%s\nExamples:\n%s", usage.data,
                           c->summary, c->options, c->examples);
                return cli_print(cli, &b);
        }
        buf_puts(&b, "{\"name\":");
        json_cstr(&b, c->name);
        buf_puts(&b, ",\"usage\":");
        json_cstr(&b, usage.data);
        buf_puts(&b, ",\"summary\":");
        json_cstr(&b, c->summary);
        buf_puts(&b, ",\"options\":");
        json_cstr(&b, c->options);
        buf_puts(&b, ",\"examples\":");
        json_cstr(&b, c->examples);
        buf_puts(&b, ",\"flags\":[");
        /* the table's flag list: "--a --b ..." */
        for (const char *p = c->flags, *q; *p; p = *q ? q + 1 : q) {
                q = strchrnul(p, ' ');
                buf_puts(&b, p == c->flags ? "" : ",");
                json_string(&b, p, (size_t)(q - p));
        }
        buf_puts(&b, "]}\n");
        return cli_print(cli, &b);
}

int args_common_argv(struct cli *cli, const char *command, int opt, const char *argv_opt)
{
        switch (opt) {
        case OPT_JSON:
                cli->json = true;
                return 1;
        case OPT_CONFIG:
                cli->config_file = optarg;
                return 1;
        case OPT_PROGRESS:
                if (strcmp(optarg, "auto") == 0)
                        cli->progress = CLI_PROGRESS_AUTO;
                else if (strcmp(optarg, "none") == 0)
                        cli->progress = CLI_PROGRESS_NONE;
                else if (strcmp(optarg, "json") == 0)
                        cli->progress = CLI_PROGRESS_JSON;
                else {
                        sbx_usage(&cli->err, "invalid --progress '%s': expected auto, none or json",
                                  optarg);
                        return -2;
                }
                return 1;
        case OPT_HELP:
        case 'h':
                args_print_help(cli, command);
                return -1;
        case '?':
                sbx_usage(&cli->err, "unknown option '%s' for '%s'", argv_opt, command);
                return -2;
        case ':':
                sbx_usage(&cli->err, "option '%s' of '%s' requires a value", argv_opt, command);
                return -2;
        default:
                return 0;
        }
}

/* --env-file: each variable it gives is recorded as an --env of its own, in its place (full:
 * the list's own "too many" message). 1, or -1 with cli->err set. */
static int record_env_file(struct cli *cli, struct flag_list *fl, const char *path,
                           const char *full)
{
        char *const *kv;
        size_t n;
        if (envfile_read(cli, path, &kv, &n) < 0)
                return -1;
        for (size_t j = 0; j < n; j++) {
                if (fl->n >= ARRAY_SIZE(fl->items))
                        return sbx_usage(&cli->err, "%s", full);
                fl->items[fl->n].flag = "--env";
                fl->items[fl->n++].value = kv[j];
        }
        return 1;
}

int args_record_create_flag(struct cli *cli, struct flag_list *fl, int opt, const char *arg)
{
        if (opt < OPT_CREATE_FIRST ||
            opt >= OPT_CREATE_FIRST + (int)ARRAY_SIZE(create_long_options))
                return 0;
        if (fl->n >= ARRAY_SIZE(fl->items))
                return sbx_usage(&cli->err, "too many options");
        static char names[ARRAY_SIZE(create_long_options)][24];
        int i = opt - OPT_CREATE_FIRST;
        if (strcmp(create_long_options[i].name, "env-file") == 0)
                return record_env_file(cli, fl, arg, "too many options");
        snprintf(names[i], sizeof(names[i]), "--%s", create_long_options[i].name);
        fl->items[fl->n].flag = names[i];
        fl->items[fl->n].value = arg;
        fl->n++;
        return 1;
}

int args_check_config(struct cli *cli)
{
        /* a --config or $SBX_CONFIG file that cannot be used is an error for every command
         * (sandbox.ini(5)), not only for those that use what it sets */
        const char *env = getenv("SBX_CONFIG");
        if (!cli->config_file && !(env && env[0]))
                return 0;
        struct sbx_config c;
        config_init_defaults(&c);
        int r = config_load(&c, cli->config_file, &cli->err);
        config_free(&c);
        return r;
}

int args_build_config(struct cli *cli, const struct flag_list *fl, struct sbx_config *c)
{
        config_init_defaults(c);
        int r = config_load(c, cli->config_file, &cli->err);
        for (size_t i = 0; r == 0 && i < fl->n; i++)
                r = config_apply_flag(c, fl->items[i].flag, fl->items[i].value, &cli->err);
        if (r == 0)
                r = mount_guard_check(c, &cli->err);
        if (r == 0) { /* resolves --image (pulled when missing), holds it for the session */
                struct cli_progress pr;
                struct image_pull_opts pull = {0};
                cli_progress_attach(cli, &pull, &pr);
                r = image_use(c, &pull, &cli->err);
                cli_progress_end(&pr);
        }
        return r;
}

void args_print_warnings(const struct sbx_config *c)
{
        for (char **w = c->warnings; w && *w; w++)
                cli_warn("%s", *w);
        if (c->net == SBX_NET_HOST)
                cli_warn("%s", SBX_WARN_NET_HOST);
        if (c->seccomp == SBX_SECCOMP_UNCONFINED)
                cli_warn("%s", SBX_WARN_UNCONFINED);
}

int args_exec_option(struct cli *cli, int opt, const char *arg, struct exec_request *rq,
                     struct flag_list *env_adds)
{
        uint64_t v;
        switch (opt) {
        case 't':
                if (parse_duration(arg, &v) < 0 || v == 0)
                        return sbx_usage(
                            &cli->err, "invalid --timeout '%s': expected a duration like 30s", arg);
                rq->timeout_ms = v * 1000;
                return 1;
        case 'w':
                if (arg[0] != '/')
                        return sbx_usage(&cli->err, "invalid --workdir '%s': must be absolute",
                                         arg);
                rq->workdir = arg;
                return 1;
        case 'e':
                if (parse_env_assignment(arg) < 0)
                        return sbx_usage(&cli->err, "invalid --env '%s': expected KEY=VALUE", arg);
                if (env_adds->n >= ARRAY_SIZE(env_adds->items))
                        return sbx_usage(&cli->err, "too many --env options");
                env_adds->items[env_adds->n++].value = arg;
                return 1;
        case OPT_EXEC_ENV_FILE:
                return record_env_file(cli, env_adds, arg, "too many --env options");
        case 'i':
                rq->interactive = true;
                return 1;
        case 'T':
                rq->tty = true;
                return 1;
        case 'M':
                if (parse_size(arg, &v) < 0)
                        return sbx_usage(&cli->err,
                                         "invalid --max-output '%s': expected a size like 1M", arg);
                rq->max_output = v;
                return 1;
        default:
                return 0;
        }
}

int args_finish_exec(struct cli *cli, const char *cmd, struct exec_result *res, int r)
{
        if (r < 0 && !res->timed_out)
                return cli_finish_error(cli, cmd);
        struct sbx_error *x = &res->exec_error;
        if (!cli->json) {
                if (x->exit_code)
                        cli_message("sbx: ", x->message);
                if (res->truncated)
                        fprintf(stderr, "sbx: output truncated at --max-output\n");
                if (res->timed_out)
                        fprintf(stderr, "sbx: the command timed out and was killed\n");
                if (res->oom_killed)
                        fprintf(stderr, "sbx: the command was killed by the session's memory "
                                        "limit\n");
                return res->exit_code;
        }
        _cleanup_buf_ struct buf b = {0};
        buf_printf(&b, "{\"exit_code\":%d,\"output\":", res->exit_code);
        json_string(&b, res->output.data ? res->output.data : "", res->output.len);
        buf_printf(&b, ",\"timed_out\":%s,\"oom_killed\":%s,\"truncated\":%s",
                   res->timed_out ? "true" : "false", res->oom_killed ? "true" : "false",
                   res->truncated ? "true" : "false");
        buf_printf(&b, ",\"duration_ms\":%llu", (unsigned long long)res->duration_ms);
        if (x->exit_code) {
                buf_puts(&b, ",\"error\":{\"code\":");
                json_cstr(&b, x->code);
                buf_puts(&b, ",\"message\":");
                json_cstr(&b, x->message);
                buf_puts(&b, "}");
        }
        buf_puts(&b, "}\n");
        /* a result that does not reach the caller is no result (`--json exec ... >/dev/full`) */
        if (cli_print(cli, &b) != 0)
                return cli_finish_error(cli, cmd);
        return res->exit_code;
}

char **args_env_vector(const struct flag_list *fl, char *store[], size_t cap)
{
        size_t i;
        for (i = 0; i < fl->n && i + 1 < cap; i++)
                store[i] = (char *)fl->items[i].value;
        store[i] = NULL;
        return store;
}

int exec_finish_request(struct cli *cli, struct exec_request *rq)
{
        if (cli->json) {
                rq->capture = true;
                if (!rq->max_output)
                        rq->max_output = 1u << 20;
        }
        if (rq->tty && cli->json)
                return sbx_usage(&cli->err, "--tty cannot be combined with --json");
        if ((rq->interactive || rq->tty) && envfile_used_stdin())
                return sbx_usage(&cli->err, "--env-file - reads standard input: not with "
                                            "--interactive or --tty");
        return 0;
}
