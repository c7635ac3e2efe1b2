/* SPDX-License-Identifier: MIT */
/*
 * ls, read, write, edit, glob, grep: parse the arguments, read the client-side inputs
 * (write's CONTENT, edit's --old-file/--new-file, "-" = stdin) here on the host, then run the
 * operation of src/ops/ inside the session with session_run_confined() and print its output.
 *
 * Options may come before or after the operands and "--" ends them. An argument is an option
 * only when it is exactly one of the command's options: anything else that starts with "-"
 * ("- item", "-1", "-x") is an operand, so markdown lists, negative numbers and grep
 * patterns can be passed as OLD, NEW, CONTENT or PATTERN without "--". An unknown "--name"
 * is a usage error.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../launch/confined.h"
#include "../ops/ops.h"
#include "shared/escape.h"
#include "shared/util.h"
#include "args.h"

enum {
        OPT_OFFSET = 0x200,
        OPT_LIMIT,
        OPT_BINARY,
        OPT_REPLACE_ALL,
        OPT_OLD_FILE,
        OPT_NEW_FILE,
        OPT_PATH,
        OPT_MODE,
        OPT_GLOB,
};

/* Every command also takes --json, --config FILE and --help. */
static const struct option ls_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};
static const struct option read_options[] = {
    {"offset", required_argument, NULL, OPT_OFFSET},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"binary", no_argument, NULL, OPT_BINARY},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};
static const struct option edit_options[] = {
    {"replace-all", no_argument, NULL, OPT_REPLACE_ALL},
    {"old-file", required_argument, NULL, OPT_OLD_FILE},
    {"new-file", required_argument, NULL, OPT_NEW_FILE},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};
static const struct option glob_options[] = {
    {"path", required_argument, NULL, OPT_PATH},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};
static const struct option grep_options[] = {
    {"mode", required_argument, NULL, OPT_MODE},
    {"after-context", required_argument, NULL, 'A'},
    {"before-context", required_argument, NULL, 'B'},
    {"context", required_argument, NULL, 'C'},
    {"ignore-case", no_argument, NULL, 'i'},
    {"fixed-strings", no_argument, NULL, 'F'},
    {"glob", required_argument, NULL, OPT_GLOB},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

/* The arguments of one command, split into options (for getopt_long) and operands. */
struct args {
        const char *cmd;
        const struct option *lopts;
        const char *sopts; /* getopt short options, without the leading "+" */
        int optc;
        char **optv; /* optv[0] = argv[0] */
        int opc;
        char **opv; /* the operands */
};

static void args_free(struct args *a)
{
        free(a->optv);
        free(a->opv);
}

static const struct option *long_find(const struct option *lo, const char *name, size_t n)
{
        for (; lo->name; lo++)
                if (strlen(lo->name) == n && strncmp(lo->name, name, n) == 0)
                        return lo;
        return NULL;
}

/* Is a (starting with "-") a cluster of known short options? *needs_value: its last one
 * takes a value from the next argument. */
static bool short_cluster(const char *a, const char *so, bool *needs_value)
{
        *needs_value = false;
        for (size_t j = 1; a[j]; j++) {
                const char *p = a[j] == ':' ? NULL : strchr(so, a[j]);
                if (!p)
                        return false;
                if (p[1] == ':') {
                        *needs_value = a[j + 1] == '\0';
                        return true;
                }
        }
        return a[1] != '\0';
}

static int args_split(struct args *a, int argc, char **argv, struct sbx_error *e)
{
        a->optv = calloc((size_t)argc + 1, sizeof(char *));
        a->opv = calloc((size_t)argc + 1, sizeof(char *));
        if (!a->optv || !a->opv)
                return sbx_internal(e, ENOMEM, "out of memory");
        a->optv[a->optc++] = argv[0];
        for (int i = 1; i < argc; i++) {
                char *s = argv[i];
                bool value = false;
                if (strcmp(s, "--") == 0) {
                        while (++i < argc)
                                a->opv[a->opc++] = argv[i];
                        break;
                }
                if (s[0] == '-' && s[1] == '-' && s[2]) {
                        const char *eq = strchr(s + 2, '=');
                        const struct option *o =
                            long_find(a->lopts, s + 2, eq ? (size_t)(eq - s - 2) : strlen(s + 2));
                        if (!o)
                                return sbx_usage(e, "invalid option '%s' for '%s'", s, a->cmd);
                        if (o->has_arg == no_argument && eq)
                                return sbx_usage(e, "option '--%s' takes no value", o->name);
                        value = o->has_arg == required_argument && !eq;
                } else if (!(s[0] == '-' && short_cluster(s, a->sopts, &value))) {
                        a->opv[a->opc++] = s;
                        continue;
                }
                a->optv[a->optc++] = s;
                if (value) {
                        if (i + 1 >= argc)
                                return sbx_usage(e, "option '%s' needs a value", s);
                        a->optv[a->optc++] = argv[++i];
                }
        }
        return 0;
}

/* Next option of a (after args_split), like getopt_long. -1 at the end. */
static int args_next(struct args *a)
{
        char sopts[32];
        snprintf(sopts, sizeof(sopts), "+:%s", a->sopts);
        return getopt_long(a->optc, a->optv, sopts, a->lopts, NULL);
}

/*
 * Split and check the common options; returns 1 with the command's own option in *opt, 0 at
 * the end, -1 when help was printed, < -1 on a usage error.
 */
static int args_step(struct cli *cli, struct args *a, int *opt)
{
        while ((*opt = args_next(a)) != -1) {
                int k = args_common_argv(cli, a->cmd, *opt, a->optv[optind - 1]);
                if (k == -1)
                        return -1;
                if (k < 0)
                        return -2;
                if (k == 0)
                        return 1;
        }
        return args_check_config(cli) < 0 ? -2 : 0;
}

static int args_begin(struct cli *cli, struct args *a, int argc, char **argv)
{
        optind = 0; /* full re-initialisation of glibc's getopt */
        opterr = 0;
        /* --json anywhere before "--" shapes every error, also the usage errors found
         * before the option is reached */
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "--json") == 0)
                        cli->json = true;
        return args_split(a, argc, argv, &cli->err) < 0 ? -2 : 0;
}

static int option_uint(struct cli *cli, const char *opt, const char *s, uint64_t min, uint64_t max,
                       uint64_t *ret)
{
        uint64_t v;
        if (parse_uint(s, &v) < 0 || v < min || v > max)
                return sbx_usage(&cli->err,
                                 "invalid %s '%s': expected a number from %" PRIu64 " to %" PRIu64,
                                 opt, s, min, max);
        *ret = v;
        return 0;
}

/* Read a client-side input: a file, or stdin for "-". */
static int read_input(struct cli *cli, const char *what, const char *path, size_t max,
                      struct buf *b)
{
        _cleanup_close_ int fd = -1;
        int in = STDIN_FILENO;
        if (strcmp(path, "-") != 0) {
                fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
                /* a host file named on the command line: a bad argument when unreadable */
                if (fd < 0)
                        return sbx_fail(&cli->err, EXIT_USAGE, "usage", errno,
                                        "failed to read %s '%s'", what, path);
                in = fd;
        }
        int r = read_all(in, b, max);
        if (r == -EFBIG)
                return sbx_fail(&cli->err, EXIT_FAILED, "limit", 0, "%s is larger than %zu MiB",
                                what, max >> 20);
        if (r < 0)
                return sbx_fail(&cli->err, EXIT_FAILED, "internal", -r, "failed to read %s '%s'",
                                what, strcmp(path, "-") ? path : "stdin");
        return 0;
}

/* Run the operation inside the session and print what it produced. */
static int run_op(struct cli *cli, const char *cmd, const char *id, confined_fn fn, void *req,
                  const struct confined_audit *audit)
{
        _cleanup_buf_ struct buf out = {0};
        int r = session_run_confined(id, fn, req, audit, &out, &cli->err);
        if (r < 0 || cli->err.exit_code != 0) {
                if (cli->err.exit_code == 0)
                        sbx_internal(&cli->err, -r, "failed to run '%s' in the session", cmd);
                /* an empty message (grep without a match) exits quietly */
                return cli_finish_error(cli, cmd);
        }
        /* The op escaped names, and content for a terminal (escape_content). One last pass
         * for a terminal keeps any control byte that slipped through from reaching it. */
        if (!cli->json && isatty(STDOUT_FILENO) &&
            escape_needed(out.data, out.len, ESCAPE_TERMINAL_PASS)) {
                _cleanup_buf_ struct buf safe = {0};
                if (escape_append(&safe, out.data, out.len, ESCAPE_TERMINAL_PASS) < 0) {
                        sbx_internal(&cli->err, ENOMEM, "failed to build the output");
                        return cli_finish_error(cli, cmd);
                }
                return cli_print(cli, &safe) ? cli_finish_error(cli, cmd) : 0;
        }
        return cli_print(cli, &out) ? cli_finish_error(cli, cmd) : 0;
}

/* Content lines are escaped only for a terminal: a pipe or file gets them exact. */
static bool escape_content(const struct cli *cli)
{
        return !cli->json && isatty(STDOUT_FILENO);
}

/* The operand count must be in [min, max]. */
static int check_operands(struct cli *cli, const struct args *a, int min, int max,
                          const char *missing)
{
        if (a->opc < min)
                return sbx_usage(&cli->err, "missing %s", a->opc == 0 ? "session ID" : missing);
        if (a->opc > max)
                return sbx_usage(&cli->err, "unexpected argument '%s'", a->opv[max]);
        return 0;
}

/* Parse a command that has only the common options. */
static int parse_simple(struct cli *cli, struct args *a, int argc, char **argv)
{
        int opt, r = args_begin(cli, a, argc, argv);
        while (r == 0 && (r = args_step(cli, a, &opt)) == 1)
                r = sbx_usage(&cli->err, "invalid option '%s' for '%s'", a->optv[optind - 1],
                              a->cmd);
        return r;
}

int cmd_ls(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {.cmd = "ls", .lopts = ls_options, .sopts = "h"};
        int r = parse_simple(cli, &a, argc, argv);
        if (r == -1)
                return 0;
        if (r < 0 || check_operands(cli, &a, 1, 2, "PATH") < 0)
                return cli_finish_error(cli, "ls");
        struct ops_ls_req req = {.path = a.opc > 1 ? a.opv[1] : NULL, .json = cli->json};
        return run_op(cli, "ls", a.opv[0], ops_ls, &req, NULL);
}

int cmd_read(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {.cmd = "read", .lopts = read_options, .sopts = "h"};
        struct ops_read_req req = {.limit = OPS_READ_DEFAULT_LIMIT};
        int opt, r = args_begin(cli, &a, argc, argv);

        while (r == 0 && (r = args_step(cli, &a, &opt)) == 1) {
                if (opt == OPT_OFFSET)
                        r = option_uint(cli, "--offset", optarg, 0, UINT64_MAX / 2, &req.offset);
                else if (opt == OPT_LIMIT)
                        r = option_uint(cli, "--limit", optarg, 1, UINT64_MAX / 2, &req.limit);
                else {
                        req.binary = true;
                        r = 0;
                }
        }
        if (r == -1)
                return 0;
        if (r < 0 || check_operands(cli, &a, 2, 2, "PATH") < 0)
                return cli_finish_error(cli, "read");
        req.path = a.opv[1];
        req.json = cli->json;
        req.escape_content = escape_content(cli);
        return run_op(cli, "read", a.opv[0], ops_read, &req, NULL);
}

int cmd_write(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {.cmd = "write", .lopts = ls_options, .sopts = "h"};
        _cleanup_buf_ struct buf content = {0};
        int r = parse_simple(cli, &a, argc, argv);
        if (r == -1)
                return 0;
        if (r < 0 || check_operands(cli, &a, 2, 3, "PATH") < 0)
                return cli_finish_error(cli, "write");
        struct ops_write_req req = {.path = a.opv[1], .json = cli->json};
        if (a.opc == 3 && strcmp(a.opv[2], "-") != 0) {
                req.content = a.opv[2];
                req.len = strlen(a.opv[2]);
        } else {
                if (read_input(cli, "CONTENT", "-", OPS_WRITE_MAX, &content) < 0)
                        return cli_finish_error(cli, "write");
                req.content = content.data ? content.data : "";
                req.len = content.len;
        }
        struct confined_audit audit = {"write", req.path, (int64_t)req.len, -1};
        return run_op(cli, "write", a.opv[0], ops_write, &req, &audit);
}

int cmd_edit(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {.cmd = "edit", .lopts = edit_options, .sopts = "h"};
        _cleanup_buf_ struct buf old = {0}, new = {0};
        const char *old_file = NULL, *new_file = NULL;
        struct ops_edit_req req = {0};
        int opt, r = args_begin(cli, &a, argc, argv);

        while (r == 0 && (r = args_step(cli, &a, &opt)) == 1) {
                if (opt == OPT_REPLACE_ALL)
                        req.replace_all = true;
                else if (opt == OPT_OLD_FILE)
                        old_file = optarg;
                else
                        new_file = optarg;
                r = 0;
        }
        if (r == -1)
                return 0;
        int want = 4 - !!old_file - !!new_file;
        if (r < 0 || check_operands(cli, &a, want, want, a.opc < 2 ? "PATH" : "OLD or NEW") < 0)
                return cli_finish_error(cli, "edit");
        if (old_file && new_file && strcmp(old_file, "-") == 0 && strcmp(new_file, "-") == 0) {
                sbx_usage(&cli->err, "--old-file and --new-file cannot both read stdin");
                return cli_finish_error(cli, "edit");
        }
        if ((old_file && read_input(cli, "--old-file", old_file, OPS_EDIT_MAX, &old) < 0) ||
            (new_file && read_input(cli, "--new-file", new_file, OPS_EDIT_MAX, &new) < 0))
                return cli_finish_error(cli, "edit");
        int k = 2;
        req.path = a.opv[1];
        req.old_str = old_file ? (old.data ? old.data : "") : a.opv[k++];
        req.old_len = old_file ? old.len : strlen(req.old_str);
        req.new_str = new_file ? (new.data ? new.data : "") : a.opv[k++];
        req.new_len = new_file ? new.len : strlen(req.new_str);
        req.json = cli->json;
        if (req.old_len == 0) {
                sbx_usage(&cli->err, "OLD must not be empty");
                return cli_finish_error(cli, "edit");
        }
        struct confined_audit audit = {"edit", req.path, (int64_t)req.new_len, req.replace_all};
        return run_op(cli, "edit", a.opv[0], ops_edit, &req, &audit);
}

int cmd_glob(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {.cmd = "glob", .lopts = glob_options, .sopts = "h"};
        struct ops_glob_req req = {0};
        int opt, r = args_begin(cli, &a, argc, argv);

        while (r == 0 && (r = args_step(cli, &a, &opt)) == 1) {
                req.dir = optarg; /* --path */
                r = 0;
        }
        if (r == -1)
                return 0;
        if (r < 0 || check_operands(cli, &a, 2, 2, "PATTERN") < 0)
                return cli_finish_error(cli, "glob");
        req.pattern = a.opv[1];
        req.json = cli->json;
        if (ops_glob_validate(&req, &cli->err) < 0)
                return cli_finish_error(cli, "glob");
        return run_op(cli, "glob", a.opv[0], ops_glob, &req, NULL);
}

static int grep_option(struct cli *cli, int opt, struct ops_grep_req *req, uint64_t ctx[3])
{
        switch (opt) {
        case OPT_MODE:
                if (ops_grep_mode_parse(optarg, &req->mode) < 0)
                        return sbx_usage(&cli->err,
                                         "invalid --mode '%s': expected "
                                         "files_with_matches, content or count",
                                         optarg);
                return 0;
        case 'A':
                return option_uint(cli, "-A", optarg, 0, OPS_CONTEXT_MAX, &ctx[0]);
        case 'B':
                return option_uint(cli, "-B", optarg, 0, OPS_CONTEXT_MAX, &ctx[1]);
        case 'C':
                return option_uint(cli, "-C", optarg, 0, OPS_CONTEXT_MAX, &ctx[2]);
        case 'i':
                req->caseless = true;
                return 0;
        case 'F':
                req->fixed = true;
                return 0;
        case OPT_GLOB:
                req->glob = optarg;
                return 0;
        default:
                return sbx_usage(&cli->err, "invalid option for 'grep'");
        }
}

int cmd_grep(struct cli *cli, int argc, char **argv)
{
        _cleanup_(args_free) struct args a = {
            .cmd = "grep", .lopts = grep_options, .sopts = "hA:B:C:iF"};
        struct ops_grep_req req = {.mode = OPS_GREP_FILES};
        uint64_t ctx[3] = {UINT64_MAX, UINT64_MAX, 0}; /* -A, -B (unset), -C */
        int opt, r = args_begin(cli, &a, argc, argv);

        while (r == 0 && (r = args_step(cli, &a, &opt)) == 1)
                r = grep_option(cli, opt, &req, ctx);
        if (r == -1)
                return 0;
        if (r < 0 || check_operands(cli, &a, 2, 3, "PATTERN") < 0)
                return cli_finish_error(cli, "grep");
        /* -A and -B override -C whatever their order */
        req.after = (unsigned)(ctx[0] != UINT64_MAX ? ctx[0] : ctx[2]);
        req.before = (unsigned)(ctx[1] != UINT64_MAX ? ctx[1] : ctx[2]);
        req.pattern = a.opv[1];
        req.path = a.opc > 2 ? a.opv[2] : NULL;
        req.json = cli->json;
        req.escape_content = escape_content(cli);
        if (ops_grep_validate(&req, &cli->err) < 0)
                return cli_finish_error(cli, "grep");
        return run_op(cli, "grep", a.opv[0], ops_grep, &req, NULL);
}
