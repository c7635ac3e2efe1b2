/* SPDX-License-Identifier: MIT */
/*
 * The tool table (src/mcp/tools.c) and how tools/call turns arguments into an sbx command line
 * (src/mcp/mcp_call.c): the schema check, and argv where no value can become an option; what
 * a model reads (src/mcp/mcp_output.c): the cap with head and tail, images by magic bytes.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "mcp/mcp.h"
#include "mcp/tools.h"
#include "unit.h"

/* argv joined with '|' */
static const char *joined(char **argv, struct buf *b)
{
        b->len = 0;
        buf_puts(b, "");
        for (char **p = argv; p && *p; p++)
                buf_printf(b, "%s%s", p == argv ? "" : "|", *p);
        return b->data;
}

/* The command line of tool name for the JSON args, or the check's reason. */
static const char *line_of(const char *name, const char *args_json, struct mcp_run *r,
                           struct buf *b)
{
        static char why[256];
        json_object *args = json_tokener_parse(args_json);
        const struct tool *t = tool_find(name);
        struct mcp_server s = {.config_file = NULL};
        *r = (struct mcp_run){0};
        const char *out;
        if (!t || !args)
                out = "bad test";
        else if (mcp_check_args(t, args, why, sizeof(why)) < 0)
                out = why;
        else {
                char **argv = mcp_command_line(&s, t, args, r);
                out = joined(argv, b);
                mcp_argv_free(argv);
        }
        /* inputs point into args (fd 3's env text into r->env_json): copy what the tests look
         * at before it goes */
        static char in0[64], in1[128];
        snprintf(in0, sizeof(in0), "%s", r->in[0] ? r->in[0] : "");
        snprintf(in1, sizeof(in1), "%s", r->in[1] ? r->in[1] : "");
        r->in[0] = r->in[0] ? in0 : NULL;
        r->in[1] = r->in[1] ? in1 : NULL;
        r->in[2] = NULL;
        free(r->env_json);
        r->env_json = NULL;
        json_object_put(args);
        return out;
}

static void test_table(void)
{
        size_t n;
        const struct tool *t = tools_all(&n);
        CHECK(n == 18);
        CHECK(tool_find("stats") != NULL);
        bool all_described = true, unique = true, options_have_flags = true;
        for (size_t i = 0; i < n; i++) {
                all_described &= strlen(t[i].description) > 100;
                for (size_t k = 0; k < t[i].n_params; k++) {
                        const struct tool_param *p = &t[i].params[k];
                        all_described &= p->description && strlen(p->description) > 10;
                        if (p->via == TOOL_VIA_OPTION)
                                options_have_flags &= p->flag && strncmp(p->flag, "--", 2) == 0;
                        for (size_t j = 0; j < k; j++)
                                unique &= strcmp(p->name, t[i].params[j].name) != 0;
                }
        }
        CHECK(all_described);
        CHECK(unique);
        CHECK(options_have_flags);
        /* derived from the command table: types from the metavariables */
        const struct tool *read = tool_find("read");
        bool offset_int = false, binary_bool = false;
        for (size_t k = 0; k < read->n_params; k++) {
                offset_int |=
                    !strcmp(read->params[k].name, "offset") && read->params[k].type == TOOL_INTEGER;
                binary_bool |=
                    !strcmp(read->params[k].name, "binary") && read->params[k].type == TOOL_BOOLEAN;
        }
        CHECK(offset_int);
        CHECK(binary_bool);
        CHECK(tool_find("run") == NULL);
        _cleanup_buf_ struct buf b = {0};
        tools_json(&b, "input_schema");
        json_object *all = json_tokener_parse(b.data);
        CHECK(all && json_object_array_length(all) == 18);
        json_object_put(all);
}

static void test_argv(void)
{
        _cleanup_buf_ struct buf b = {0};
        struct mcp_run r;
        /* values are "--flag=VALUE", operands follow "--": nothing becomes an option */
        CHECK_STR(line_of("exec",
                          "{\"session\":\"w\",\"command\":[\"--help\",\"-x\"],"
                          "\"timeout\":\"5s\",\"env\":[\"A=1\",\"B=--json\"]}",
                          &r, &b),
                  "sbx|exec|--json|--timeout=5s|--env-file=/dev/fd/3|--|w|--|--help|-x");
        /* the env values on fd 3 as one JSON object, never in the command line */
        CHECK_STR(r.in[1], "{\"A\":\"1\",\"B\":\"--json\"}");
        CHECK_STR(line_of("exec", "{\"session\":\"w\",\"command\":[\"true\"],\"env\":[\"NOEQ\"]}",
                          &r, &b),
                  "'env' items must be KEY=VALUE");
        CHECK_STR(line_of("read",
                          "{\"path\":\"-x\",\"session\":\"w\",\"offset\":5,"
                          "\"binary\":true}",
                          &r, &b),
                  "sbx|read|--json|--offset=5|--binary|--|w|-x");
        CHECK_STR(line_of("read", "{\"path\":\"a\",\"session\":\"w\",\"binary\":false}", &r, &b),
                  "sbx|read|--json|--|w|a");
        /* large inputs travel on fds, never in argv */
        CHECK_STR(
            line_of("write", "{\"session\":\"w\",\"path\":\"p\",\"content\":\"--x\"}", &r, &b),
            "sbx|write|--json|--|w|p|-");
        CHECK_STR(r.in[0], "--x");
        CHECK_STR(line_of("edit",
                          "{\"session\":\"w\",\"path\":\"p\",\"old_string\":\"a\","
                          "\"new_string\":\"b\",\"replace_all\":true}",
                          &r, &b),
                  "sbx|edit|--json|--old-file=/dev/fd/3|--new-file=/dev/fd/4|--replace-all|--|w|p");
        CHECK_STR(line_of("create", "{}", &r, &b), "sbx|create|--json");
        CHECK_STR(line_of("grep",
                          "{\"session\":\"w\",\"pattern\":\"-e\",\"mode\":\"count\","
                          "\"context\":2}",
                          &r, &b),
                  "sbx|grep|--json|--mode=count|--context=2|--|w|-e");
}

/* numbers are numbers, strings of digits are taken too; both reach argv as decimal text */
static void test_types(void)
{
        _cleanup_buf_ struct buf b = {0};
        struct mcp_run r;
        CHECK_STR(line_of("create",
                          "{\"pids\":100,\"cpus\":0.5,\"ttl\":600,\"memory\":268435456,"
                          "\"nofile\":\"512\"}",
                          &r, &b),
                  "sbx|create|--json|--ttl=600|--memory=268435456|--cpus=0.5|--pids=100|"
                  "--nofile=512");
        CHECK_STR(line_of("create", "{\"cpus\":2,\"pids\":\"7\",\"ttl\":\"10m\"}", &r, &b),
                  "sbx|create|--json|--ttl=10m|--cpus=2|--pids=7");
        CHECK_STR(line_of("create", "{\"cpus\":\"0.125\"}", &r, &b),
                  "sbx|create|--json|--cpus=0.125");
        CHECK_STR(line_of("create", "{\"cpus\":0.0001}", &r, &b),
                  "'cpus' must be a number of at least 0 (at most 3 decimals)");
        CHECK_STR(line_of("create", "{\"cpus\":\"1e3\"}", &r, &b),
                  "'cpus' must be a number of at least 0 (at most 3 decimals)");
        CHECK_STR(line_of("create", "{\"pids\":\"12a\"}", &r, &b),
                  "'pids' must be an integer of at least 1");
        CHECK_STR(line_of("create", "{\"pids\":true}", &r, &b),
                  "'pids' must be an integer of at least 1");
        CHECK_STR(line_of("create", "{\"ttl\":-1}", &r, &b),
                  "'ttl' must be an integer or a string");
        CHECK_STR(
            line_of("exec", "{\"session\":\"w\",\"command\":[\"x\"],\"timeout\":[1]}", &r, &b),
            "'timeout' must be an integer or a string");
}

/* The text of the first content item of a result whose text is s, capped at max. */
static const char *capped_text(const char *s, size_t max, struct buf *b)
{
        json_object *res = json_object_new_object(), *items = json_object_new_array(),
                    *item = json_object_new_object();
        json_object_object_add(item, "type", json_object_new_string("text"));
        json_object_object_add(item, "text", json_object_new_string(s));
        json_object_array_add(items, item);
        json_object_object_add(res, "content", items);
        mcp_output_cap(res, max);
        b->len = 0;
        buf_puts(b, json_object_get_string(json_object_object_get(item, "text")));
        json_object_put(res);
        return b->data;
}

static void test_output(void)
{
        _cleanup_buf_ struct buf b = {0}, in = {0};
        CHECK_STR(capped_text("short", 1024, &b), "short");
        /* 4000 bytes at a cap of 1000: 250 of the head, 750 of the tail, the cut said */
        for (int i = 0; i < 1000; i++)
                buf_puts(&in, i == 0 ? "HEAD" : i == 999 ? "TAIL" : "....");
        const char *t = capped_text(in.data, 1000, &b);
        CHECK(strncmp(t, "HEAD", 4) == 0);
        CHECK(strlen(t) > 3000 ? false : strcmp(t + strlen(t) - 4, "TAIL") == 0);
        CHECK(strstr(t, "[... 3000 bytes cut: the output has 4000 bytes; its first 250 and "
                        "last 750 are shown ...]") != NULL);
        /* a cut never splits a UTF-8 character: 2-byte characters, cap at an odd byte */
        buf_freep(&in);
        for (int i = 0; i < 1000; i++)
                buf_puts(&in, "\xc3\xa9");
        t = capped_text(in.data, 101, &b);
        CHECK(strncmp(t, "\xc3\xa9", 2) == 0 && t[24] == '\n');
        CHECK(strstr(t, "first 24 and last 76") != NULL);

        /* images by their first bytes */
        static const struct {
                const char *b64, *mime;
        } cases[] = {
            {"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", "image/png"},
            {"/9j/4AAQSkZJRgABAQ==", "image/jpeg"},
            {"R0lGODlhAQABAAAAADs=", "image/gif"},
            {"UklGRhoAAABXRUJQVlA4TA0AAAA=", "image/webp"},
            {"UklGRhoAAABBVkkgTElTVA==", NULL}, /* RIFF, but AVI */
            {"UE5HAAEC", NULL},                 /* "PNG\0\1\2" */
            {"", NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "content", json_object_new_string(cases[i].b64));
                json_object *img = mcp_output_image(o);
                json_object *item =
                    img ? json_object_array_get_idx(json_object_object_get(img, "content"), 0)
                        : NULL;
                const char *mime =
                    item ? json_object_get_string(json_object_object_get(item, "mimeType")) : NULL;
                CHECK(cases[i].mime ? mime && strcmp(mime, cases[i].mime) == 0 : !img);
                json_object_put(img);
                json_object_put(o);
        }
}

static void test_check(void)
{
        _cleanup_buf_ struct buf b = {0};
        struct mcp_run r;
        CHECK_STR(line_of("ls", "{}", &r, &b), "missing required argument 'session' for tool 'ls'");
        CHECK_STR(line_of("ls", "{\"session\":\"w\",\"mount\":\"/:/h\"}", &r, &b),
                  "unknown argument 'mount' for tool 'ls'");
        CHECK_STR(line_of("ls", "{\"session\":\"../x\"}", &r, &b),
                  "'session' must match ^(sb_[a-z0-9]{16}|[a-z0-9][a-z0-9_.-]{0,62})$");
        CHECK_STR(line_of("read", "{\"session\":\"w\",\"path\":\"a\",\"limit\":0}", &r, &b),
                  "'limit' must be an integer of at least 1");
        CHECK_STR(line_of("read", "{\"session\":\"w\",\"path\":\"a\",\"offset\":1.5}", &r, &b),
                  "'offset' must be an integer of at least 0");
        CHECK_STR(line_of("exec", "{\"session\":\"w\",\"command\":[]}", &r, &b),
                  "'command' must be an array of strings (at least one)");
        CHECK_STR(line_of("exec", "{\"session\":\"w\",\"command\":[\"a\\u0000b\"]}", &r, &b),
                  "'command' must not contain a NUL character");
        CHECK_STR(line_of("create", "{\"seccomp\":\"unconfined\"}", &r, &b),
                  "'seccomp' must be one of the values of its enum");
        CHECK_STR(line_of("create", "{\"net\":\"host\"}", &r, &b),
                  "unknown argument 'net' for tool 'create'");
        CHECK_STR(line_of("destroy", "{\"session\":\"w\",\"force\":\"yes\"}", &r, &b),
                  "'force' must be a boolean");
}

/* mcp_check_limits of tool's args against the operator's config: "ok" or the reason. */
static const char *limits_of(const struct sbx_config *op, const char *tool, const char *args_json)
{
        static char why[512];
        json_object *args = json_tokener_parse(args_json);
        int r = args ? mcp_check_limits(op, tool_find(tool), args, why, sizeof(why)) : -1;
        json_object_put(args);
        return r == 0 ? "ok" : r == -EPERM ? why : "bad test";
}

static void test_limits(void)
{
        struct sbx_config op;
        config_init_defaults(&op); /* 512M, 1 CPU, 256 pids, 1G disk, 1024 files, 30m, 1800s */
        /* what lifts a limit is refused, whatever the operator allows */
        CHECK_STR(limits_of(&op, "create", "{\"memory\":\"unlimited\"}"),
                  "'memory' cannot be unlimited: a model may not lift the operator's limits; ask "
                  "for at most the operator's 512M");
        CHECK_STR(limits_of(&op, "create", "{\"ttl\":\"0\"}"),
                  "'ttl' cannot be 0 (never expires): a model may not lift the operator's "
                  "limits; ask for at most the operator's 30m");
        CHECK_STR(limits_of(&op, "connect", "{\"session\":\"w\",\"ttl\":\"0s\"}"),
                  "'ttl' cannot be 0 (never expires): a model may not lift the operator's "
                  "limits; ask for at most the operator's 30m");
        CHECK(strstr(limits_of(&op, "create", "{\"pids\":\"unlimited\"}"), "'pids' cannot"));
        CHECK(strstr(limits_of(&op, "create", "{\"cpus\":\"unlimited\"}"), "'cpus' cannot"));
        /* above the operator's, in the config's own units */
        CHECK_STR(limits_of(&op, "create", "{\"memory\":\"524289K\"}"),
                  "'memory' 524289K is above the operator's limit of 512M: ask for at most 512M");
        CHECK_STR(limits_of(&op, "create", "{\"cpus\":\"1.001\"}"),
                  "'cpus' 1.001 is above the operator's limit of 1: ask for at most 1");
        CHECK_STR(limits_of(&op, "create", "{\"nofile\":1025}"),
                  "'nofile' 1025 is above the operator's limit of 1024: ask for at most 1024");
        CHECK(strstr(limits_of(&op, "create", "{\"disk\":\"2G\"}"), "'disk' 2G is above"));
        CHECK(strstr(limits_of(&op, "create", "{\"pids\":\"257\"}"), "'pids' 257 is above"));
        CHECK(strstr(limits_of(&op, "create", "{\"timeout\":\"31m\"}"), "'timeout' 31m is"));
        CHECK(strstr(limits_of(&op, "exec", "{\"timeout\":\"1801\"}"), "'timeout' 1801s is"));
        CHECK(strstr(limits_of(&op, "connect", "{\"ttl\":\"1h\"}"), "'ttl' 1h is above"));
        /* at or under the ceiling, and what does not parse (the schema or sbx refuses it) */
        CHECK_STR(limits_of(&op, "create",
                            "{\"memory\":\"512M\",\"cpus\":\"0.5\",\"pids\":\"10\","
                            "\"disk\":\"1G\",\"nofile\":64,\"ttl\":\"30m\",\"timeout\":\"5s\"}"),
                  "ok");
        CHECK_STR(limits_of(&op, "exec", "{\"timeout\":\"30m\"}"), "ok");
        CHECK_STR(limits_of(&op, "create", "{\"memory\":\"lots\"}"), "ok");
        CHECK_STR(limits_of(&op, "ls", "{\"memory\":\"unlimited\"}"), "ok");
        /* an operator who allows no limit: any finite value, still not unlimited */
        op.memory_bytes = 0;
        op.ttl_sec = 0;
        CHECK_STR(limits_of(&op, "create", "{\"memory\":\"64G\",\"ttl\":\"100h\"}"), "ok");
        CHECK_STR(limits_of(&op, "create", "{\"memory\":\"unlimited\"}"),
                  "'memory' cannot be unlimited: a model may not lift the operator's limits; ask "
                  "for a finite value");
        CHECK(strstr(limits_of(&op, "create", "{\"ttl\":\"0\"}"), "'ttl' cannot be 0"));
        config_free(&op);
}

/* mcp_resolve_session: the session argument afterwards, or the reason it was refused. */
static const char *resolved(const struct mcp_server *s, const char *tool, const char *args_json)
{
        static char out[512];
        json_object *args = json_tokener_parse(args_json), *v;
        int r = mcp_resolve_session(s, tool_find(tool), args, out, sizeof(out));
        if (r == 0)
                snprintf(out, sizeof(out), "%s",
                         json_object_object_get_ex(args, "session", &v) ? json_object_get_string(v)
                                                                        : "(none)");
        json_object_put(args);
        return out;
}

static void test_sessions(void)
{
        struct mcp_session table[] = {{(char *)"sb_0123456789abcdef", (char *)"work"},
                                      {(char *)"sb_aaaaaaaaaaaaaaaa", NULL},
                                      {(char *)"sb_bbbbbbbbbbbbbbbb", (char *)"work"}};
        struct mcp_server s = {.sessions = table, .n_sessions = 3};
        /* ids stay, names become the id of the newest session of that name */
        CHECK_STR(resolved(&s, "exec", "{\"session\":\"sb_0123456789abcdef\"}"),
                  "sb_0123456789abcdef");
        CHECK_STR(resolved(&s, "destroy", "{\"session\":\"work\"}"), "sb_bbbbbbbbbbbbbbbb");
        CHECK_STR(resolved(&s, "create", "{\"name\":\"x\"}"), "(none)");
        /* anything else is refused, by id or by name */
        CHECK_STR(resolved(&s, "read", "{\"session\":\"dev\"}"),
                  "session dev was not created by this MCP server (or was destroyed): its tools "
                  "act only on the sessions made with its create tool");
        CHECK(strstr(resolved(&s, "destroy", "{\"session\":\"sb_cccccccccccccccc\"}"),
                     "was not created by this MCP server"));
        /* unless the operator opened them all: then unknown ones go through as given */
        s.any_session = true;
        CHECK_STR(resolved(&s, "read", "{\"session\":\"dev\"}"), "dev");
        CHECK_STR(resolved(&s, "read", "{\"session\":\"work\"}"), "sb_bbbbbbbbbbbbbbbb");
}

int main(void)
{
        /* a name the table does not know is looked up among the marked sessions: in a runtime
         * directory of the test's own, not the user's */
        char rt[] = "/tmp/sbx-unit-tools-XXXXXX";
        if (!mkdtemp(rt))
                return 1;
        setenv("SBX_RUNTIME_DIR", rt, 1);
        test_table();
        test_argv();
        test_types();
        test_output();
        test_check();
        test_limits();
        test_sessions();
        char names[sizeof(rt) + 8];
        snprintf(names, sizeof(names), "%s/names", rt);
        (void)rmdir(names); /* made by runtime_open */
        (void)rmdir(rt);
        return unit_done();
}
