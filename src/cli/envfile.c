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

static int bad(struct cli *cli, const char *path, const char *why)
{
        return sbx_usage(&cli->err, "invalid --env-file '%s': %s", path, why);
}

static int add(struct cli *cli, const char *path, const char *k, size_t kl, const char *v)
{
        if (n_kept >= ENVFILE_MAX_ENTRIES)
                return bad(cli, path, "more than 256 variables");
        char *kv = NULL;
        if (asprintf(&kv, "%.*s=%s", (int)kl, k, v) < 0)
                return sbx_internal(&cli->err, ENOMEM, "cannot read --env-file");
        if (parse_env_assignment(kv) < 0) {
                free(kv);
                return sbx_usage(&cli->err,
                                 "invalid --env-file '%s': '%.*s' is not a variable name like "
                                 "MY_VAR ([A-Za-z_][A-Za-z0-9_]*)",
                                 path, (int)(kl > 64 ? 64 : kl), k);
        }
        kept[n_kept++] = kv;
        return 0;
}

static int parse_json(struct cli *cli, const char *path, const char *text)
{
        json_object *o = json_tokener_parse(text);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return bad(cli, path, "not a JSON object of strings");
        }
        int r = 0;
        json_object_object_foreach(o, key, val)
        {
                if (r == 0 && !json_object_is_type(val, json_type_string))
                        r = bad(cli, path, "a value is not a string");
                if (r == 0)
                        r = add(cli, path, key, strlen(key), json_object_get_string(val));
        }
        json_object_put(o);
        return r;
}

static int parse_lines(struct cli *cli, const char *path, char *text)
{
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                size_t len = strlen(line);
                if (len && line[len - 1] == '\r')
                        line[--len] = '\0';
                if (len == 0 || line[0] == '#')
                        continue;
                char *eq = strchr(line, '=');
                if (!eq)
                        return bad(cli, path, "a line is not KEY=VALUE");
                int r = add(cli, path, line, (size_t)(eq - line), eq + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int envfile_read(struct cli *cli, const char *path, char *const **ret, size_t *ret_n)
{
        bool std_in = strcmp(path, "-") == 0;
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
        r = *p == '{' ? parse_json(cli, path, b.data) : parse_lines(cli, path, b.data);
        if (r < 0)
                return r;
        *ret = kept + first;
        *ret_n = n_kept - first;
        return 0;
}
