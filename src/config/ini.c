/* SPDX-License-Identifier: MIT */
/*
 * One sandbox.ini file through libinih. inih is driven with our own line reader
 * (ini_parse_stream) rather than ini_parse_file because:
 *  - the reader counts lines, so every message names the file and line;
 *  - inih silently splits a line longer than its fixed buffer (INI_MAX_LINE) into two lines,
 *    which could turn the tail of a long list into a different key; the reader refuses it;
 *  - it sees the raw line, so it can tell when inih's inline comment (';' after a blank) cut
 *    a free-text value such as a setup command, and a section header can be checked even when
 *    the section holds no key.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <string.h>
#include <sys/stat.h>

#include "config-internal.h"

struct ini_ctx {
        struct sbx_config *c;
        struct layer l;
        FILE *f;
        bool cut_comment; /* the current line has an inline ';' comment */
        char **env_seen;  /* [env] variables set in this file */
        int r;            /* the first error */
};

static void ini_ctx_done(struct ini_ctx *x)
{
        strv_freep(&x->env_seen);
}

/* inih's inline comment: a ';' right after a blank. */
static bool has_inline_comment(const char *line)
{
        bool was_space = false;
        for (const char *p = line + strspn(line, " \t"); *p; p++) {
                if (was_space && *p == ';')
                        return true;
                was_space = isspace((unsigned char)*p);
        }
        return false;
}

static int check_section_line(struct ini_ctx *x, const char *line)
{
        const char *end = strchr(line, ']');
        if (line[0] != '[' || !end)
                return 0; /* not a section header, or inih reports the syntax error */
        _cleanup_free_ char *name = strndup(line + 1, (size_t)(end - line - 1));
        if (!name)
                return layer_oom(&x->l);
        if (!config_section_known(name))
                return sbx_usage(x->l.e,
                                 "unknown section [%s] in %s line %u: expected [sandbox], [env], "
                                 "[limits], [network], [security] or [audit]",
                                 name, x->l.file, x->l.line);
        return 0;
}

/*
 * fgets with the length it read: a NUL byte would end the line for inih, silently dropping
 * the rest of it (a setup command cut short, a list that loses items). -1 at EOF.
 */
static ssize_t get_line(char *str, int num, FILE *f)
{
        ssize_t n = 0;
        int ch = EOF;
        while (n + 1 < num && (ch = getc(f)) != EOF) {
                str[n++] = (char)ch;
                if (ch == '\n')
                        break;
        }
        str[n] = '\0';
        return n == 0 && ch == EOF ? -1 : n;
}

/* fgets for inih, one line per call. */
static char *read_line(char *str, int num, void *stream)
{
        struct ini_ctx *x = stream;
        ssize_t n = x->r < 0 ? -1 : get_line(str, num, x->f);
        if (n < 0)
                return NULL;
        x->l.line++;
        size_t len = strlen(str);
        if (len != (size_t)n) {
                x->r = sbx_usage(x->l.e, "line %u of %s contains a NUL byte: a config file is text",
                                 x->l.line, x->l.file);
                return NULL;
        }
        if (len > 0 && str[len - 1] != '\n') {
                int ch = getc(x->f);
                if (ch != EOF && ch != '\n') {
                        x->r = sbx_usage(x->l.e,
                                         "line %u of %s is too long (at most %d characters): "
                                         "split a list over several lines ('key = a, b' then "
                                         "'key = c')",
                                         x->l.line, x->l.file, num - 2);
                        return NULL;
                }
        }
        x->cut_comment = has_inline_comment(str);
        x->r = check_section_line(x, str);
        return x->r < 0 ? NULL : str;
}

static bool env_name_valid(const char *s)
{
        _cleanup_free_ char *kv = NULL;
        return asprintf(&kv, "%s=", s) >= 0 && parse_env_assignment(kv) == 0;
}

static int handle_env(struct ini_ctx *x, const char *name, const char *value)
{
        struct layer *l = &x->l;
        if (!env_name_valid(name))
                return sbx_usage(l->e,
                                 "invalid variable name '%s' in [env] in %s line %u: expected a "
                                 "name like MY_VAR ([A-Za-z_][A-Za-z0-9_]*)",
                                 name, l->file, l->line);
        if (x->cut_comment)
                return sbx_usage(l->e,
                                 "invalid value '%s' for [env] %s in %s line %u: ' ;' starts a "
                                 "comment in sandbox.ini and cut the value",
                                 value, name, l->file, l->line);
        for (char **p = x->env_seen; p && *p; p++)
                if (strcmp(*p, name) == 0)
                        return sbx_usage(l->e, "[env] %s is set twice in %s line %u", name, l->file,
                                         l->line);
        char *copy = strdup(name);
        if (!copy || strv_push(&x->env_seen, copy) < 0 ||
            config_env_put(x->c, name, strlen(name), value) < 0)
                return layer_oom(l);
        return 0;
}

static int unknown_key(struct ini_ctx *x, const char *section, const char *name)
{
        char known[256] = "";
        size_t n, len = 0;
        const struct config_key *keys = config_keys(&n);
        for (size_t i = 0; i < n && len < sizeof(known); i++)
                if (keys[i].section && strcmp(keys[i].section, section) == 0)
                        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
                                                len ? ", " : "", keys[i].key);
        return sbx_usage(x->l.e, "unknown key '%s' in [%s] in %s line %u (known keys: %s)", name,
                         section, x->l.file, x->l.line, known);
}

static int handle(struct ini_ctx *x, const char *section, const char *name, const char *value)
{
        struct layer *l = &x->l;
        if (!section[0])
                return sbx_usage(l->e, "key '%s' outside a section in %s line %u", name, l->file,
                                 l->line);
        if (!config_section_known(section))
                return sbx_usage(l->e, "unknown section [%s] in %s line %u", section, l->file,
                                 l->line);
        if (strcmp(section, "env") == 0)
                return handle_env(x, name, value);
        const struct config_key *k = config_key_by_ini(section, name);
        if (!k)
                return unknown_key(x, section, name);
        if (x->cut_comment && k->free_text)
                return layer_invalid(l, k, value,
                                     "' ;' starts a comment in sandbox.ini and cut the value "
                                     "(join commands with '&&' instead of ';')");
        if (!k->list && config_seen(x->c, l, k->id))
                return sbx_usage(l->e,
                                 "[%s] %s is set twice in %s line %u (only a list may be repeated "
                                 "or continued on an indented line)",
                                 section, name, l->file, l->line);
        return config_set(x->c, l, k, value);
}

static int on_value(void *user, const char *section, const char *name, const char *value)
{
        struct ini_ctx *x = user;
        if (x->r < 0)
                return 0;
        x->r = handle(x, section, name, value);
        return x->r >= 0;
}

static int open_config(const char *path, bool optional, const char *what, FILE **ret,
                       struct sbx_error *e)
{
        FILE *f = fopen(path, "re");
        int err = errno;
        struct stat st;
        if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
                (void)fclose(f);
                f = NULL;
                err = EISDIR;
        }
        if (!f && optional && (err == ENOENT || err == ENOTDIR)) {
                *ret = NULL;
                return 0;
        }
        if (!f)
                return sbx_fail(e, EXIT_USAGE, "usage", err, "cannot open config file '%s'%s%s%s",
                                path, what ? " (from " : "", what ? what : "", what ? ")" : "");
        *ret = f;
        return 0;
}

int config_load_ini(struct sbx_config *c, const char *path, bool optional, const char *what,
                    char *const *envp, struct sbx_error *e)
{
        _cleanup_fclose_ FILE *f = NULL;
        int r = open_config(path, optional, what, &f, e);
        if (r < 0 || !f)
                return r;

        _cleanup_(ini_ctx_done) struct ini_ctx x = {
            .c = c,
            .l = {.origin = SBX_ORIGIN_FILE, .file = path, .envp = envp, .e = e},
            .f = f,
        };
        int line = ini_parse_stream(read_line, &x, on_value, &x);
        if (x.r < 0)
                return x.r;
        if (ferror(f))
                return sbx_fail(e, EXIT_USAGE, "usage", EIO, "cannot read config file '%s'", path);
        if (line > 0)
                return sbx_usage(e,
                                 "syntax error in %s line %d: expected '[section]', 'key = value' "
                                 "or a comment",
                                 path, line);
        if (line < 0)
                return sbx_internal(e, ENOMEM, "cannot parse config file '%s'", path);
        return 0;
}
