/* SPDX-License-Identifier: MIT */
#include "envfile.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config/config.h"
#include "shared/buf.h"
#include "shared/util.h"

/* What the files read so far gave: reachable until exit (flags point into it). */
static char *kept[ENVFILE_MAX_ENTRIES];
static size_t n_kept;
static bool read_stdin; /* "-" was read: standard input is used up */

bool envfile_used_stdin(void)
{
        return read_stdin;
}

static int bad(struct cli *cli, const char *path, const char *why)
{
        return sbx_usage(&cli->err, "invalid --env-file '%s': %s", path, why);
}

/* One variable; where names the entry in messages, which never quote the file's text (it may
 * be a line of a secret). */
static int add(struct cli *cli, const char *path, const char *where, const char *k, size_t kl,
               const char *v)
{
        if (n_kept >= ENVFILE_MAX_ENTRIES)
                return bad(cli, path, "more than 256 variables");
        char *kv = NULL;
        if (asprintf(&kv, "%.*s=%s", (int)kl, k, v) < 0)
                return sbx_internal(&cli->err, ENOMEM, "cannot read --env-file");
        if (memchr(k, '=', kl) || parse_env_assignment(kv) < 0) {
                free(kv);
                return sbx_usage(&cli->err,
                                 "invalid --env-file '%s': %s has no variable name like MY_VAR "
                                 "([A-Za-z_][A-Za-z0-9_]*)",
                                 path, where);
        }
        kept[n_kept++] = kv;
        return 0;
}

/* The whole text one JSON object, nothing after it. */
static json_object *json_whole(const char *text, size_t len)
{
        json_tokener *tok = json_tokener_new();
        json_object *o = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
        bool whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
                     text[json_tokener_get_parse_end(tok) +
                          strspn(text + json_tokener_get_parse_end(tok), " \t\r\n")] == '\0';
        if (tok)
                json_tokener_free(tok);
        if (!whole) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static int parse_json(struct cli *cli, const char *path, const char *text, size_t len)
{
        /* json-c cuts a name at a \u0000 without a word: refused here, for names and values
         * alike (an escaped backslash before "u0000" is refused too: never a real name) */
        if (strcasestr(text, "\\u0000"))
                return bad(cli, path, "it holds an escaped NUL");
        json_object *o = json_whole(text, len);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return bad(cli, path, "not one JSON object of strings");
        }
        int r = 0;
        json_object_object_foreach(o, key, val)
        {
                /* a \u0000 would cut a name or a value short: refused, as a NUL byte is */
                if (r == 0 && (!json_object_is_type(val, json_type_string) ||
                               strlen(json_object_get_string(val)) !=
                                   (size_t)json_object_get_string_len(val)))
                        r = bad(cli, path, "a value is not a string without NUL");
                if (r == 0)
                        r = add(cli, path, "a key", key, strlen(key), json_object_get_string(val));
        }
        json_object_put(o);
        return r;
}

static int parse_lines(struct cli *cli, const char *path, char *text)
{
        size_t no = 0;
        for (char *line = text, *next; line && *line; line = next) {
                no++;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                size_t len = strlen(line);
                if (len && line[len - 1] == '\r')
                        line[--len] = '\0';
                if (len == 0 || line[0] == '#')
                        continue;
                char *eq = strchr(line, '=');
                char where[32];
                snprintf(where, sizeof(where), "line %zu", no);
                if (!eq)
                        return sbx_usage(&cli->err, "invalid --env-file '%s': %s is not KEY=VALUE",
                                         path, where);
                int r = add(cli, path, where, line, (size_t)(eq - line), eq + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int envfile_read(struct cli *cli, const char *path, char *const **ret, size_t *ret_n)
{
        bool std_in = strcmp(path, "-") == 0;
        if (std_in && read_stdin)
                return bad(cli, path, "standard input was read already");
        read_stdin = read_stdin || std_in;
        int fd = std_in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return sbx_usage(&cli->err, "cannot read --env-file '%s': %s", path,
                                 strerror(errno));
        _cleanup_buf_ struct buf b = {0};
        int r = read_all(fd, &b, ENVFILE_MAX_BYTES);
        if (!std_in)
                close(fd);
        if (r == -EFBIG)
                return bad(cli, path, "larger than 1 MiB");
        if (r < 0 || buf_append(&b, "", 1) < 0)
                return sbx_usage(&cli->err, "cannot read --env-file '%s': %s", path,
                                 strerror(r < 0 ? -r : ENOMEM));
        if (memchr(b.data, '\0', b.len - 1))
                return bad(cli, path, "it holds a NUL byte");
        size_t first = n_kept;
        const char *p = b.data + strspn(b.data, " \t\r\n");
        r = *p == '{' ? parse_json(cli, path, b.data, b.len - 1) : parse_lines(cli, path, b.data);
        if (r < 0)
                return r;
        *ret = kept + first;
        *ret_n = n_kept - first;
        return 0;
}
