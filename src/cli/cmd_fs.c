/* SPDX-License-Identifier: MIT */
/*
 * fs: the file operations of the OpenSandbox execd API (the ones sbx serve answers), each
 * run in the session through session_run_confined() like ls, read and write. Operations whose
 * execd request has a JSON body (mkdir, chmod, mv, replace) read that same JSON on stdin;
 * the others take their arguments on the command line. Modes are written as the execd API
 * writes them: the octal digits as a number (755).
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../launch/confined.h"
#include "../ops/ops.h"
#include "shared/escape.h"
#include "shared/util.h"
#include "args.h"
#include "cli.h"

#define FS_STDIN_MAX (1u << 20) /* a JSON request */
#define FS_ITEMS_MAX 10000u

static const struct option fs_options[] = {
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

static void json_putp(json_object **o)
{
        json_object_put(*o);
}

/* "755" (octal digits written as a decimal number) to 0755; 0 stays 0 (not given). */
static int mode_parse(struct cli *cli, int64_t v, unsigned *ret)
{
        unsigned m = 0, shift = 0;
        if (v < 0 || v > 7777)
                return sbx_usage(&cli->err,
                                 "invalid mode %" PRId64 ": expected octal digits, "
                                 "at most 7777",
                                 v);
        for (; v; v /= 10, shift += 3) {
                if (v % 10 > 7)
                        return sbx_usage(
                            &cli->err, "invalid mode: '%" PRId64 "' is not an octal digit", v % 10);
                m |= (unsigned)(v % 10) << shift;
        }
        *ret = m;
        return 0;
}

static int uint_arg(struct cli *cli, const char *what, const char *s, uint64_t *ret)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (!*s || *s < '0' || *s > '9' || *end || errno)
                return sbx_usage(&cli->err, "invalid %s '%s': expected a number", what, s);
        *ret = v;
        return 0;
}

static const char *str_field(json_object *o, const char *key, size_t *len)
{
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        if (len)
                *len = (size_t)json_object_get_string_len(v);
        return json_object_get_string(v);
}

/* One {"mode","owner","group"} or {"old","new"} value of a path-keyed request. */
static int item_from(struct cli *cli, enum ops_fs_kind kind, const char *path, json_object *v,
                     struct ops_fs_item *it)
{
        if (!json_object_is_type(v, json_type_object))
                return sbx_usage(&cli->err, "the value for '%s' is not an object", path);
        it->path = path;
        if (kind == OPS_FS_REPLACE) {
                it->old_str = str_field(v, "old", &it->old_len);
                it->new_str = str_field(v, "new", &it->new_len);
                if (!it->old_str || !it->new_str || it->old_len == 0)
                        return sbx_usage(&cli->err,
                                         "replace in '%s' needs a non-empty \"old\" and a \"new\"",
                                         path);
                return 0;
        }
        json_object *m;
        if (json_object_object_get_ex(v, "mode", &m) && !json_object_is_type(m, json_type_null)) {
                if (!json_object_is_type(m, json_type_int))
                        return sbx_usage(&cli->err, "the mode for '%s' is not a number", path);
                if (mode_parse(cli, json_object_get_int64(m), &it->mode) < 0)
                        return -EINVAL;
        }
        it->owner = str_field(v, "owner", NULL);
        it->group = str_field(v, "group", NULL);
        return 0;
}

/* The JSON request on stdin into items (which point into *root). */
static int items_from_stdin(struct cli *cli, enum ops_fs_kind kind, json_object **root,
                            struct ops_fs_item **ret, size_t *n)
{
        _cleanup_buf_ struct buf in = {0};
        int r = read_all(STDIN_FILENO, &in, FS_STDIN_MAX);
        if (r < 0)
                return sbx_fail(&cli->err, r == -EFBIG ? EXIT_USAGE : EXIT_FAILED,
                                r == -EFBIG ? "usage" : "internal", r == -EFBIG ? 0 : -r,
                                "failed to read the request on stdin%s",
                                r == -EFBIG ? ": larger than 1 MiB" : "");
        enum json_tokener_error je;
        *root = json_tokener_parse_verbose(in.data ? in.data : "", &je);
        bool array = kind == OPS_FS_MOVE;
        if (!*root || !json_object_is_type(*root, array ? json_type_array : json_type_object))
                return sbx_usage(&cli->err, "the request on stdin is not a JSON %s",
                                 array ? "array" : "object");
        size_t count =
            array ? json_object_array_length(*root) : (size_t)json_object_object_length(*root);
        if (count > FS_ITEMS_MAX)
                return sbx_usage(&cli->err, "more than %u entries in one request", FS_ITEMS_MAX);
        struct ops_fs_item *v = calloc(count ? count : 1, sizeof(*v));
        if (!v)
                return sbx_internal(&cli->err, ENOMEM, "out of memory");
        *ret = v;
        *n = 0;
        if (array) {
                for (size_t i = 0; i < count; i++) {
                        json_object *o = json_object_array_get_idx(*root, i);
                        v[i].path = json_object_is_type(o, json_type_object)
                                        ? str_field(o, "src", NULL)
                                        : NULL;
                        v[i].dest = v[i].path ? str_field(o, "dest", NULL) : NULL;
                        if (!v[i].path || !v[i].dest)
                                return sbx_usage(&cli->err,
                                                 "entry %zu needs a \"src\" and a \"dest\"", i);
                        (*n)++;
                }
                return 0;
        }
        json_object_object_foreach(*root, key, val)
        {
                if (item_from(cli, kind, key, val, &v[*n]) < 0)
                        return -EINVAL;
                (*n)++;
        }
        return 0;
}

static int run_fs(struct cli *cli, const char *id, confined_fn fn, void *req,
                  const struct confined_audit *audit)
{
        _cleanup_buf_ struct buf out = {0};
        int r = session_run_confined(id, fn, req, audit, &out, &cli->err);
        if (r < 0 || cli->err.exit_code) {
                if (!cli->err.exit_code)
                        sbx_internal(&cli->err, -r, "failed to run 'fs' in the session");
                return cli_finish_error(cli, "fs");
        }
        if (out.len == 0 && cli->json && buf_puts(&out, "{}\n") < 0)
                return sbx_internal(&cli->err, ENOMEM, "out of memory"),
                       cli_finish_error(cli, "fs");
        return cli_print(cli, &out) ? cli_finish_error(cli, "fs") : 0;
}

struct fs_op {
        const char *name;
        enum ops_fs_kind kind;
        bool body;      /* the request is JSON on stdin */
        const char *ev; /* audit event of a change, NULL: none */
};
static const struct fs_op fs_ops[] = {
    {"info", OPS_FS_INFO, false, NULL},
    {"mkdir", OPS_FS_MKDIR, true, "fs_mkdir"},
    {"chmod", OPS_FS_CHMOD, true, "fs_chmod"},
    {"rm", OPS_FS_RM_FILE, false, "fs_rm"},
    {"rmdir", OPS_FS_RM_DIR, false, "fs_rmdir"},
    {"mv", OPS_FS_MOVE, true, "fs_mv"},
    {"replace", OPS_FS_REPLACE, true, "fs_replace"},
};

static int fs_batch(struct cli *cli, const struct fs_op *op, const char *id, int argc, char **argv)
{
        _cleanup_(json_putp) json_object *root = NULL;
        _cleanup_free_ struct ops_fs_item *items = NULL;
        size_t n = 0;
        if (op->body) {
                if (argc > 0) {
                        sbx_usage(&cli->err, "'fs %s' reads its request on stdin, not '%s'",
                                  op->name, argv[0]);
                        return cli_finish_error(cli, "fs");
                }
                if (items_from_stdin(cli, op->kind, &root, &items, &n) < 0)
                        return cli_finish_error(cli, "fs");
        } else {
                if (argc == 0) {
                        sbx_usage(&cli->err, "missing PATH");
                        return cli_finish_error(cli, "fs");
                }
                items = calloc((size_t)argc, sizeof(*items));
                if (!items)
                        return sbx_internal(&cli->err, ENOMEM, "out of memory"),
                               cli_finish_error(cli, "fs");
                for (n = 0; n < (size_t)argc; n++)
                        items[n].path = argv[n];
        }
        struct ops_fs_req req = {.kind = op->kind, .items = items, .n = n};
        struct confined_audit audit = {op->ev, n ? items[0].path : "", -1, -1};
        return run_fs(cli, id, ops_fs, &req, op->ev ? &audit : NULL);
}

static int fs_find(struct cli *cli, bool list, const char *id, int argc, char **argv)
{
        struct ops_find_req req = {.list = list, .depth = 1};
        if (argc < 1 || argc > 2) {
                sbx_usage(&cli->err, argc < 1 ? "missing PATH" : "unexpected argument '%s'",
                          argv[argc - 1]);
                return cli_finish_error(cli, "fs");
        }
        req.path = argv[0];
        if (argc == 2 && !list)
                req.pattern = argv[1];
        uint64_t d;
        if (argc == 2 && list) {
                if (uint_arg(cli, "DEPTH", argv[1], &d) < 0)
                        return cli_finish_error(cli, "fs");
                req.depth = d > OPS_WALK_MAX_DEPTH ? OPS_WALK_MAX_DEPTH : (unsigned)d;
        }
        return run_fs(cli, id, ops_find, &req, NULL);
}

static int fs_get(struct cli *cli, const char *id, int argc, char **argv)
{
        struct ops_cat_req req = {.length = UINT64_MAX};
        if (argc < 1 || argc > 3) {
                sbx_usage(&cli->err, argc < 1 ? "missing PATH" : "unexpected argument '%s'",
                          argv[argc - 1]);
                return cli_finish_error(cli, "fs");
        }
        req.path = argv[0];
        if ((argc > 1 && uint_arg(cli, "OFFSET", argv[1], &req.offset) < 0) ||
            (argc > 2 && uint_arg(cli, "LENGTH", argv[2], &req.length) < 0))
                return cli_finish_error(cli, "fs");
        _cleanup_buf_ struct buf out = {0};
        int r = session_run_confined(id, ops_cat, &req, NULL, &out, &cli->err);
        if (r < 0 || cli->err.exit_code) {
                if (!cli->err.exit_code)
                        sbx_internal(&cli->err, -r, "failed to run 'fs' in the session");
                return cli_finish_error(cli, "fs");
        }
        /* the bytes are the session's: a terminal gets them escaped, a pipe or file exact */
        if (isatty(STDOUT_FILENO) && escape_needed(out.data, out.len, ESCAPE_TERMINAL_PASS)) {
                _cleanup_buf_ struct buf safe = {0};
                if (escape_append(&safe, out.data, out.len, ESCAPE_TERMINAL_PASS) < 0)
                        return sbx_internal(&cli->err, ENOMEM, "out of memory"),
                               cli_finish_error(cli, "fs");
                return cli_print(cli, &safe) ? cli_finish_error(cli, "fs") : 0;
        }
        return cli_print(cli, &out) ? cli_finish_error(cli, "fs") : 0;
}

static int fs_put(struct cli *cli, const char *id, int argc, char **argv)
{
        struct ops_write_req req = {.replace = true};
        _cleanup_buf_ struct buf content = {0};
        uint64_t m = 0;
        if (argc < 1 || argc > 2) {
                sbx_usage(&cli->err, argc < 1 ? "missing PATH" : "unexpected argument '%s'",
                          argv[argc - 1]);
                return cli_finish_error(cli, "fs");
        }
        req.path = argv[0];
        if (argc == 2 && (uint_arg(cli, "MODE", argv[1], &m) < 0 ||
                          mode_parse(cli, (int64_t)(m > 99999 ? 99999 : m), &req.mode) < 0))
                return cli_finish_error(cli, "fs");
        int r = read_all(STDIN_FILENO, &content, OPS_WRITE_MAX);
        if (r < 0) {
                sbx_fail(&cli->err, EXIT_FAILED, r == -EFBIG ? "limit" : "internal",
                         r == -EFBIG ? 0 : -r, "failed to read the content on stdin%s",
                         r == -EFBIG ? ": larger than 64 MiB" : "");
                return cli_finish_error(cli, "fs");
        }
        req.content = content.data ? content.data : "";
        req.len = content.len;
        struct confined_audit audit = {"write", req.path, (int64_t)req.len, -1};
        return run_fs(cli, id, ops_write, &req, &audit);
}

int cmd_fs(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", fs_options, NULL)) != -1) {
                int k = args_common(cli, "fs", opt);
                if (k == -1)
                        return 0;
                if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "fs");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "fs");
        if (argc - optind < 2) {
                sbx_usage(&cli->err, argc - optind < 1 ? "missing session ID" : "missing OP");
                return cli_finish_error(cli, "fs");
        }
        const char *id = argv[optind], *name = argv[optind + 1];
        int n = argc - optind - 2;
        char **rest = argv + optind + 2;
        for (size_t i = 0; i < sizeof(fs_ops) / sizeof(fs_ops[0]); i++)
                if (strcmp(name, fs_ops[i].name) == 0)
                        return fs_batch(cli, &fs_ops[i], id, n, rest);
        if (strcmp(name, "search") == 0 || strcmp(name, "list") == 0)
                return fs_find(cli, name[0] == 'l', id, n, rest);
        if (strcmp(name, "get") == 0)
                return fs_get(cli, id, n, rest);
        if (strcmp(name, "put") == 0)
                return fs_put(cli, id, n, rest);
        sbx_usage(&cli->err,
                  "unknown fs operation '%s' (info, mkdir, chmod, rm, rmdir, mv, replace, search, "
                  "list, get, put)",
                  name);
        return cli_finish_error(cli, "fs");
}
