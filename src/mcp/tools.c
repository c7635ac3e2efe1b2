/* SPDX-License-Identifier: MIT */
/*
 * The tool table (see tools.h). Each tool is built from two sources:
 *  - the command table: every option line of the command ("  -t, --timeout DUR   kill ...")
 *    becomes a property named after the flag, typed by its metavariable (none: boolean;
 *    N: integer; anything else: string; "(repeatable)": array of strings), described by the
 *    help text plus the format of the metavariable;
 *  - the spec below: the tool's description for a model, its operands, better descriptions or
 *    types where the help line is too terse, and the options a model is not offered.
 */
#include "tools.h"

#include <ctype.h>
#include <pthread.h>
#include <string.h>

#include "cli/cli.h"

#define SESSION_PATTERN "^(sb_[a-z0-9]{16}|[a-z0-9][a-z0-9_.-]{0,62})$"
#define SESSION_DESC                                                                               \
        "The session: the id returned by create (sb_ followed by 16 characters) or its name."

/* What the spec adds to, or changes in, a property derived from an option line. */
struct note {
        const char *flag;
        const char *description; /* replaces the help text */
        const char *choices[TOOL_MAX_CHOICES + 1];
        const char *pattern;
        enum tool_type type;
        bool set_type;
        bool hidden; /* not offered to a model */
        long long minimum;
};

struct spec {
        const char *command;
        const char *description;
        const char *result_key;
        struct tool_param operands[5]; /* in command-line order; name NULL ends */
        struct note notes[16];         /* flag NULL ends */
};

/*
 * Options that reach host files or weaken the sandbox are for the person who runs sbx
 * (sandbox.ini, SBX_*, `sbx mcp --config FILE`), never for a model: a model that could mount
 * ~/.ssh, share the host's network, or allow itself 10.0.0.0/8 through the proxy would not
 * be sandboxed. Network access is the operator's decision ([network] in sandbox.ini).
 */
static const char *const never_offered[] = {
    /* the server's own business */
    "--json",
    "--config",
    "--help",
    /* host files */
    "--mount",
    "--rootfs",
    "--old-file",
    "--new-file",
    "--env-file",
    /* the operator's choice */
    "--net",
    "--allow-host",
    /* no terminal for a model */
    "--interactive",
    "--tty",
};

#define OPERAND_SESSION                                                                            \
        {                                                                                          \
                .name = "session", .type = TOOL_STRING, .via = TOOL_VIA_OPERAND, .required = true, \
                .pattern = SESSION_PATTERN, .description = SESSION_DESC                            \
        }
/* The file a file tool works on (read, write, edit). */
#define OPERAND_FILE(desc)                                                                         \
        {                                                                                          \
                .name = "path", .type = TOOL_STRING, .via = TOOL_VIA_OPERAND, .required = true,    \
                .description = (desc)                                                              \
        }

/* A detached command's id, as exec with detach true returned it. */
#define OPERAND_COMMAND                                                                            \
        {                                                                                          \
                .name = "command_id", .type = TOOL_STRING, .via = TOOL_VIA_OPERAND,                \
                .required = true, .pattern = "^c[1-9][0-9]{0,8}$",                                 \
                .description = "The detached command's id (c1, c2, ...) that exec returned."       \
        }

static const struct spec specs[] = {
    {"create",
     "Create a new sandbox session: an isolated Linux environment (its own filesystem, "
     "processes and hostname, no network unless the operator allows it, memory/CPU/process "
     "limits) where commands and file operations run without touching the host. Returns the "
     "session id (sb_ followed by 16 characters) that every other tool takes as `session`, "
     "with ttl_seconds and expires_at. Files persist across calls in the same session; "
     "commands start in /workspace, which is writable (so is /tmp). The session lives until "
     "destroy, or until its TTL (default 30m) runs out without a connect to renew it, also "
     "after this connection ends (a later conversation can go on in it by id or name). "
     "Destroy it when you are done. Limits you give can only be tighter than the operator's "
     "(the defaults), never looser or unlimited. The other tools act only on sessions created "
     "with this tool.",
     NULL,
     {{0}},
     {{"--name", "A name for the session, usable instead of its id (unique per user).",
       .pattern = "^[a-z0-9][a-z0-9_.-]{0,62}$"},
      {"--ttl", "How long the session lives without being renewed by connect: at most the "
                "operator's limit, which is also the default (30m unless changed); 0 (never "
                "expires) is refused. A duration: seconds, or with an s, m or h suffix."},
      {"--timeout", "The default time limit of each exec in this session: at most the "
                    "operator's limit, which is also the default (1800s unless changed). A "
                    "duration: seconds, or with an s, m or h suffix."},
      {"--seccomp", "System call filter: default, or strict (an allow list).",
       .choices = {"default", "strict"}},
      {"--memory", "Memory limit, no swap: at most the operator's limit, which is also the "
                   "default (512M unless changed); unlimited is refused. A size: bytes, or "
                   "with a K, M or G suffix (powers of 1024), e.g. 256M."},
      {"--cpus",
       "CPU bandwidth as a number of CPUs, fractional (e.g. 0.5, at most 3 decimals): at most "
       "the operator's limit, which is also the default (1 unless changed); unlimited is "
       "refused.",
       .type = TOOL_NUMBER, .set_type = true},
      {"--pids",
       "Maximum number of processes and threads: at most the operator's limit, "
       "which is also the default (256 unless changed); unlimited is refused.",
       .type = TOOL_INTEGER, .set_type = true, .minimum = 1},
      {"--disk", "Size of the session's writable layer: at most the operator's limit, which "
                 "is also the default (1G unless changed). A size: bytes, or with a K, M or G "
                 "suffix (powers of 1024), e.g. 256M."},
      {"--nofile",
       "Open files per process: at most the operator's limit, which is also the "
       "default (1024 unless changed).",
       .minimum = 16},
      {"--env", "Environment variables of every command in the session, each as KEY=VALUE."},
      {"--package", "Python packages to pip-install when the session is created, e.g. numpy."},
      {"--read-only", "Keep the base system read-only: only /workspace and /tmp are writable."},
      {"--workdir", "The absolute directory commands start in (default /workspace)."},
      {0}}},
    {"connect",
     "Check that a session is still alive and renew its time to live from now. Returns id, "
     "name, ttl_seconds and expires_at. Fails with session_not_found when it expired or was "
     "destroyed: then create a new one.",
     NULL,
     {OPERAND_SESSION},
     {{"--ttl", "The new time to live from now (default: the session's own): at most the "
                "operator's limit (30m unless changed); 0 (never expires) is refused. A "
                "duration: seconds, or with an s, m or h suffix."},
      {0}}},
    {"exec",
     "Run a command inside a session and return, once it exits, its exit_code and its output "
     "(stdout and stderr interleaved in arrival order). `command` is the argument vector and "
     "runs without a shell: for pipes, redirection, globbing, variables or &&, pass "
     "[\"sh\", \"-c\", \"...\"]. It starts in the session's workdir (/workspace) with an empty "
     "stdin. It is killed with everything it started after `timeout` (default: the session's, "
     "1800s): then timed_out is true and exit_code 124. Output beyond max_output (default 1M) "
     "is dropped and truncated is true. Processes left in the background keep running in the "
     "session. Exit codes: the command's own; 124 timeout; 126 not executable; 127 not found; "
     "128+N killed by signal N (137 also when the memory limit was hit).",
     NULL,
     {OPERAND_SESSION,
      {.name = "command",
       .type = TOOL_STRING_ARRAY,
       .via = TOOL_VIA_OPERAND,
       .required = true,
       .description = "The program and its arguments, e.g. [\"python3\", \"main.py\"] or "
                      "[\"sh\", \"-c\", \"make 2>&1 | tail -n 20\"]."}},
     {{"--timeout", "Time limit of this command (default: the session's, 1800s): at most "
                    "the operator's limit (1800s unless changed). A duration: seconds, or with "
                    "an s, m or h suffix."},
      {"--workdir", "The absolute directory to run in (default: the session's workdir)."},
      {"--env", "Extra environment variables, each as KEY=VALUE."},
      {"--max-output", "Cap on the captured output (default 1M): a size in bytes or with a K, "
                       "M or G suffix."},
      {"--detach", "Return at once with the id of the command (c1, c2, ...) instead of "
                   "waiting: for servers and long jobs. Read its output with logs, see it with "
                   "ps, stop it with kill; it still ends after timeout. Its last 8M of output "
                   "(or max_output) are kept."},
      {0}}},
    {"ls",
     "List a directory inside a session (default: the session's workdir), sorted by name. "
     "Returns one entry per file with path, is_dir, size and modified_at; symlinks are shown, "
     "not followed. Fails with not_found when the directory does not exist.",
     "entries",
     {OPERAND_SESSION,
      {.name = "path",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .description = "The directory, absolute or relative to the workdir (default: the "
                      "workdir)."}},
     {{0}}},
    {"read",
     "Read a text file in a session. Returns its lines numbered like `cat -n`: each line is its "
     "1-based number right-aligned in 6 columns, a tab, then the text (the number and tab are "
     "not part of the file: leave them out of edit's old_string). Returns lines offset+1 to "
     "offset+limit (default: the first 2000). A line longer than 5000 characters continues on "
     "rows numbered N.1, N.2, ... The output stops after 500 KiB with a line saying so: read "
     "again with a larger offset or a smaller limit. An offset at or past the end is an error "
     "that gives the file's number of lines. An empty file reads as 'System reminder: File "
     "exists but has empty contents'. A file that is not text (a NUL byte or invalid UTF-8 in "
     "its first 8 KiB) fails with not_text; a missing file or a directory with not_found.",
     NULL,
     {OPERAND_SESSION, OPERAND_FILE("The file, absolute or relative to the workdir.")},
     {{"--offset", "Number of lines to skip (default 0).", .minimum = 0},
      {"--limit", "Maximum number of lines to return (default 2000).", .minimum = 1},
      {"--binary", "Return a non-text file whole, base64-encoded, instead of failing."},
      {0}}},
    {"write",
     "Create a new file in a session with the given content; missing parent directories are "
     "created. Fails with exists when the path already exists: to change an existing file, "
     "read it and then use edit. Returns the absolute path and the number of bytes written.",
     NULL,
     {OPERAND_SESSION,
      OPERAND_FILE("The new file, absolute or relative to the workdir."),
      {.name = "content",
       .type = TOOL_STRING,
       .via = TOOL_VIA_STDIN,
       .required = true,
       .description = "The whole content of the file."}},
     {{0}}},
    {"edit",
     "Replace an exact string in an existing file in a session (no regular expressions). "
     "old_string must occur exactly once, unless replace_all is true: include enough of the "
     "surrounding lines to make it unique. Copy it from read's output without the line-number "
     "prefix. If it only matches with the file's line endings (CRLF or LF), those are used. The "
     "file is replaced atomically and keeps its mode. Returns the number of replacements. "
     "Fails, leaving the file unchanged, when old_string is not found or occurs more than once "
     "without replace_all.",
     NULL,
     {OPERAND_SESSION,
      OPERAND_FILE("The file, absolute or relative to the workdir."),
      {.name = "old_string",
       .type = TOOL_STRING,
       .via = TOOL_VIA_FD3,
       .flag = "--old-file",
       .required = true,
       .description = "The exact text to replace (not empty)."},
      {.name = "new_string",
       .type = TOOL_STRING,
       .via = TOOL_VIA_FD4,
       .flag = "--new-file",
       .required = true,
       .description = "The text to put in its place."}},
     {{"--replace-all", "Replace every occurrence instead of requiring exactly one."}, {0}}},
    {"glob",
     "Find files by name pattern in a session, newest first. In the pattern, * and ? match "
     "within one path component and not a leading dot, [...] is a character class, {a,b} "
     "alternatives, and ** as a whole component matches any depth (e.g. **/*.py, "
     "src/**/test_*.c). Returns up to 10000 entries with path, is_dir, size and modified_at; "
     "symlinks are listed, never followed. No match returns an empty list.",
     "entries",
     {OPERAND_SESSION,
      {.name = "pattern",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .required = true,
       .description = "The pattern, relative to path."}},
     {{"--path", "The directory to search from, absolute or relative to the workdir (default: "
                 "the workdir)."},
      {0}}},
    {"grep",
     "Search file contents in a session with a regular expression (PCRE syntax, as ripgrep or "
     "grep -P; fixed_strings for a literal string) in the files under path, skipping binary "
     "files. mode files_with_matches (default) returns the paths of matching files; content "
     "returns {path, line, text} for each matching line, and the context lines asked for with "
     "after_context, before_context or context; count returns {path, count} per file. At most "
     "10000 results. No match returns an empty list.",
     "results",
     {OPERAND_SESSION,
      {.name = "pattern",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .required = true,
       .description = "The regular expression (or the literal string with fixed_strings)."},
      {.name = "path",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .description = "The file or directory to search, absolute or relative to the workdir "
                      "(default: the workdir)."}},
     {{"--mode", "What to return: files_with_matches (default), content or count.",
       .choices = {"files_with_matches", "content", "count"}},
      {"--after-context", "Lines to show after each match (content mode).", .minimum = 0},
      {"--before-context", "Lines to show before each match (content mode).", .minimum = 0},
      {"--context", "Lines to show before and after each match (content mode).", .minimum = 0},
      {"--ignore-case", "Match case-insensitively."},
      {"--fixed-strings", "Take pattern as a literal string, not a regular expression."},
      {"--glob", "Only search files whose name matches this glob, e.g. *.py."},
      {0}}},
    {"destroy",
     "End a session: kill every process in it and delete its filesystem; nothing of it "
     "remains. Call it when you are done with a session. Returns the sessions destroyed.",
     NULL,
     {OPERAND_SESSION},
     {{"--force", "Succeed even when the session no longer exists."}, {0}}},
    {"stats",
     "What a session uses against its limits: cpu (usage_usec, percent of one CPU over 250 ms, "
     "limit_cpus), memory (current, peak, limit in bytes; files in the session's filesystem "
     "count too), pids (current, limit), disk (used_bytes and inodes_used of the writable "
     "layer against total_bytes and inodes_total) and, with the egress proxy, network bytes. "
     "A null limit means none. Use it when a command fails with no space or memory left.",
     NULL,
     {OPERAND_SESSION},
     {{"--watch", NULL, .hidden = true}, {0}}},
    /* detached commands (exec with detach: true) */
    {"ps",
     "List the detached commands of a session (started by exec with detach true), oldest "
     "first: id, argv, state (running, exited, or killed after kill signalled it), exit_code "
     "(null while running), started_at, duration_ms, output_bytes (the cursor at the end of "
     "its output) and dropped_bytes (its oldest output no longer kept).",
     "commands",
     {OPERAND_SESSION},
     {{0}}},
    {"logs",
     "Read the combined stdout and stderr of a detached command from byte offset cursor "
     "(default 0). Returns data, cursor (pass it next time to read only what is new), dropped "
     "(bytes before the oldest kept byte that were lost: only the last 8M or max_output of a "
     "command are kept) and ended (the command has exited and nothing more will come). It "
     "does not wait: call it again, or ps, to see more.",
     NULL,
     {OPERAND_SESSION, OPERAND_COMMAND},
     {{"--cursor",
       "Byte offset in the command's output to read from (default 0): the cursor "
       "a previous call returned.",
       .minimum = 0},
      {"--follow", NULL, .hidden = true},
      {0}}},
    {"kill",
     "Send a signal to a detached command's process group (default TERM; KILL cannot be "
     "caught). Fails with not_running when it has already ended. Its end shows in ps.",
     NULL,
     {OPERAND_SESSION,
      OPERAND_COMMAND,
      {.name = "signal",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .pattern = "^([A-Za-z]{2,8}|[0-9]{1,2})$",
       .description = "The signal: a name like TERM, INT, KILL, HUP or a number (default TERM)."}},
     {{0}}},
    {"pause",
     "Freeze every process of a session (a running command stops where it is; nothing is "
     "lost). While paused, exec and the file tools fail at once with code paused; the "
     "session's time to live keeps running. Use it to stop a runaway command without losing "
     "its state, or before inspecting it; resume continues it.",
     NULL,
     {OPERAND_SESSION},
     {{0}}},
    {"resume",
     "Thaw a session that pause froze: its processes continue where they stopped. Fails with "
     "code not_paused when the session is not paused.",
     NULL,
     {OPERAND_SESSION},
     {{0}}},
    {"diff",
     "What a session changed in its filesystem since it was created: one entry per path with "
     "kind A (added), C (changed) or D (deleted), sorted by path, like docker diff. Files on "
     "the host directories mounted in are not listed. Use it to review what a command did.",
     "changes",
     {OPERAND_SESSION},
     {{0}}},
    {"commit",
     "Save a session (on the host's base, an image or a rootfs directory) as a new image "
     "NAME:TAG (its filesystem changes as a layer on that base; /workspace, /tmp and the "
     "per-session /etc are not included; a rootfs directory or the host's /usr is "
     "referenced, not copied), to create later sessions "
     "from with create's image. Returns the image id. Fails with code busy while a command "
     "runs (pass pause to freeze the session for the snapshot), exists when NAME:TAG names "
     "another image, unsupported for read-only sessions.",
     NULL,
     {OPERAND_SESSION,
      {.name = "image",
       .type = TOOL_STRING,
       .via = TOOL_VIA_OPERAND,
       .required = true,
       .description = "The new image's NAME[:TAG] (lowercase; TAG latest when omitted), e.g. "
                      "myenv:1."}},
     {{"--pause", "Freeze the session while its filesystem is read, resume it after."},
      {"--replace", NULL, .hidden = true}, /* a model never moves a tag someone relies on */
      {0}}},
};

static struct tool tools[ARRAY_SIZE(specs)];
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

static bool hidden_flag(const char *flag, size_t n)
{
        for (size_t i = 0; i < ARRAY_SIZE(never_offered); i++)
                if (strlen(never_offered[i]) == n && strncmp(never_offered[i], flag, n) == 0)
                        return true;
        return false;
}

static const struct note *note_find(const struct spec *s, const char *flag, size_t n)
{
        for (const struct note *x = s->notes; x->flag; x++)
                if (strlen(x->flag) == n && strncmp(x->flag, flag, n) == 0)
                        return x;
        return NULL;
}

/* The format of a metavariable, for a model that does not know sbx's units. */
static const char *metavar_format(const char *mv, size_t n)
{
        if (n == 3 && strncmp(mv, "DUR", 3) == 0)
                return " A duration: seconds, or with an s, m or h suffix (30s, 10m, 1h).";
        if (n == 4 && strncmp(mv, "SIZE", 4) == 0)
                return " A size: bytes, or with a K, M or G suffix (powers of 1024), e.g. 512M.";
        return "";
}

/* DUR and SIZE: a number, or a string with its unit. */
static bool metavar_quantity(const char *mv, size_t n)
{
        return (n == 3 && strncmp(mv, "DUR", 3) == 0) || (n == 4 && strncmp(mv, "SIZE", 4) == 0);
}

/* Static strings for the derived names and descriptions: built once, never freed. */
static char str_store[32768];
static size_t str_used;

/* A NUL-terminated copy of s[0..n) followed by suffix, or "" when the store is full
 * (tests/510-mcp.bats checks that every description is non-empty). */
static char *str_keep(const char *s, size_t n, const char *suffix)
{
        size_t need = n + strlen(suffix) + 1;
        if (str_used + need > sizeof(str_store))
                return (char *)"";
        char *d = str_store + str_used;
        memcpy(d, s, n);
        memcpy(d + n, suffix, need - n);
        str_used += need;
        return d;
}

/* "kill the command (DUR)" -> "Kill the command (DUR)." plus the metavariable's format */
static const char *description_of(const char *text, size_t n, const char *format)
{
        char *d = str_keep(text, n, ".");
        if (!*d)
                return d;
        d[0] = (char)toupper((unsigned char)d[0]);
        return *format ? str_keep(d, strlen(d), format) : d;
}

/* One option line of the help: "  -t, --timeout DUR       kill the command ...". */
static void add_option_line(struct tool *t, const struct spec *s, const char *line, size_t len)
{
        const char *f = strstr(line, "--");
        if (!f || f >= line + len || t->n_params >= TOOL_MAX_PARAMS)
                return;
        size_t fn = 2;
        while (f + fn < line + len && (islower((unsigned char)f[fn]) || f[fn] == '-'))
                fn++;
        const struct note *x = note_find(s, f, fn);
        if (hidden_flag(f, fn) || (x && x->hidden))
                return;
        const char *p = f + fn, *end = line + len, *mv = NULL;
        size_t mvn = 0;
        if (p + 1 < end && p[0] == ' ' && p[1] != ' ') {
                mv = ++p;
                while (p < end && *p != ' ')
                        p++;
                mvn = (size_t)(p - mv);
        }
        while (p < end && *p == ' ')
                p++;
        size_t dn = (size_t)(end - p);

        struct tool_param *tp = &t->params[t->n_params++];
        char *name = str_keep(f + 2, fn - 2, "");
        for (char *c = name; *c; c++)
                if (*c == '-')
                        *c = '_';
        *tp =
            (struct tool_param){.name = name, .via = TOOL_VIA_OPTION, .flag = str_keep(f, fn, "")};
        const char *rep = memmem(p, dn, " (repeatable)", 13);
        bool repeatable = rep != NULL;
        if (rep && rep + 13 == end)
                dn -= 13; /* the array type says it */
        tp->type = !mv                          ? TOOL_BOOLEAN
                   : repeatable                 ? TOOL_STRING_ARRAY
                   : (mvn == 1 && mv[0] == 'N') ? TOOL_INTEGER
                   : metavar_quantity(mv, mvn)  ? TOOL_QUANTITY
                                                : TOOL_STRING;
        tp->description = description_of(p, dn, mv ? metavar_format(mv, mvn) : "");
        if (!x)
                return;
        if (x->description)
                tp->description = x->description;
        if (x->set_type)
                tp->type = x->type;
        tp->pattern = x->pattern;
        tp->minimum = x->minimum;
        memcpy(tp->choices, x->choices, sizeof(tp->choices));
}

static void build_one(struct tool *t, const struct spec *s)
{
        *t = (struct tool){
            .name = s->command, .description = s->description, .result_key = s->result_key};
        for (const struct tool_param *o = s->operands; o->name; o++)
                t->params[t->n_params++] = *o;
        const struct command *c = command_find(s->command);
        for (const char *l = c ? c->options : ""; *l;) {
                const char *nl = strchrnul(l, '\n');
                add_option_line(t, s, l, (size_t)(nl - l));
                l = *nl ? nl + 1 : nl;
        }
}

static void build_all(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(specs); i++)
                build_one(&tools[i], &specs[i]);
}

const struct tool *tools_all(size_t *ret_n)
{
        pthread_once(&tools_once, build_all);
        *ret_n = ARRAY_SIZE(tools);
        return tools;
}

const struct tool *tool_find(const char *name)
{
        size_t n;
        const struct tool *t = tools_all(&n);
        for (size_t i = 0; i < n; i++)
                if (strcmp(t[i].name, name) == 0)
                        return &t[i];
        return NULL;
}

static int param_schema_json(struct buf *b, const struct tool_param *p)
{
        static const char *const types[] = {
            [TOOL_STRING] = "\"string\"",   [TOOL_INTEGER] = "\"integer\"",
            [TOOL_BOOLEAN] = "\"boolean\"", [TOOL_STRING_ARRAY] = "\"array\"",
            [TOOL_NUMBER] = "\"number\"",   [TOOL_QUANTITY] = "[\"integer\",\"string\"]"};
        int r = buf_printf(b, "{\"type\":%s", types[p->type]);
        if (p->type == TOOL_STRING_ARRAY)
                buf_puts(b, p->via == TOOL_VIA_OPERAND ? ",\"items\":{\"type\":\"string\"},"
                                                         "\"minItems\":1"
                                                       : ",\"items\":{\"type\":\"string\"}");
        if (p->type == TOOL_INTEGER || p->type == TOOL_NUMBER)
                buf_printf(b, ",\"minimum\":%lld", p->minimum);
        if (p->choices[0]) {
                buf_puts(b, ",\"enum\":[");
                for (size_t i = 0; p->choices[i]; i++) {
                        buf_puts(b, i ? "," : "");
                        json_cstr(b, p->choices[i]);
                }
                buf_puts(b, "]");
        }
        if (p->pattern) {
                buf_puts(b, ",\"pattern\":");
                json_cstr(b, p->pattern);
        }
        buf_puts(b, ",\"description\":");
        json_cstr(b, p->description);
        return r < 0 ? r : buf_puts(b, "}");
}

int tool_schema_json(struct buf *b, const struct tool *t)
{
        buf_puts(b, "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                    "\"type\":\"object\",\"properties\":{");
        for (size_t i = 0; i < t->n_params; i++) {
                buf_puts(b, i ? "," : "");
                json_cstr(b, t->params[i].name);
                buf_puts(b, ":");
                param_schema_json(b, &t->params[i]);
        }
        buf_puts(b, "},\"required\":[");
        bool first = true;
        for (size_t i = 0; i < t->n_params; i++)
                if (t->params[i].required) {
                        buf_puts(b, first ? "" : ",");
                        json_cstr(b, t->params[i].name);
                        first = false;
                }
        return buf_puts(b, "],\"additionalProperties\":false}");
}

int tools_json(struct buf *b, const char *schema_key)
{
        size_t n;
        const struct tool *t = tools_all(&n);
        buf_puts(b, "[");
        for (size_t i = 0; i < n; i++) {
                buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
                json_cstr(b, t[i].name);
                buf_puts(b, ",\"description\":");
                json_cstr(b, t[i].description);
                buf_printf(b, ",\"%s\":", schema_key);
                tool_schema_json(b, &t[i]);
                buf_puts(b, "}");
        }
        return buf_puts(b, "]");
}
