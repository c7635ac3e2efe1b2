/* SPDX-License-Identifier: MIT */
/*
 * `sbx list --json` recast as OpenSandbox Sandbox objects, with what serve keeps per session
 * (meta.c). A session made by the CLI shows too: sessions are the same whoever made them.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/id.h"
#include "meta.h"
#include "sandbox_json.h"
#include "serve-internal.h"

#define MAX_LIST_OUT (16u << 20)

bool serve_ref_valid(const char *s)
{
        return session_id_valid(s) || session_name_valid(s);
}

int parse_rfc3339(const char *s, int64_t *ret)
{
        struct tm tm = {0};
        const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!p)
                return -EINVAL;
        if (*p == '.')
                p += 1 + strspn(p + 1, "0123456789");
        long off = 0;
        if (*p == 'Z' || *p == 'z') {
                p++;
        } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
                   strspn(p + 1, "0123456789") == 2 && strspn(p + 4, "0123456789") == 2) {
                /* two digits each, checked: atoi would read "+ab:cd" as +00:00 */
                int hh = (p[1] - '0') * 10 + (p[2] - '0'), mm = (p[4] - '0') * 10 + (p[5] - '0');
                off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
                p += 6;
        } else {
                return -EINVAL;
        }
        if (*p)
                return -EINVAL;
        *ret = (int64_t)timegm(&tm) - off;
        return 0;
}

static const char *str_of(json_object *o, const char *key)
{
        json_object *v = NULL;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                   ? json_object_get_string(v)
                   : NULL;
}

/* The Sandbox object of one `sbx list --json` entry into a (new) json object. */
static json_object *sandbox_object(json_object *entry, bool full)
{
        const char *id = str_of(entry, "id");
        _cleanup_buf_ struct buf mb = {0};
        json_object *meta =
            id && serve_meta_read(id, &mb) >= 0 ? json_tokener_parse(mb.data) : NULL;
        json_object *o = json_object_new_object(), *v = NULL;
        json_object_object_add(o, "id", json_object_new_string(id ? id : ""));
        const char *image = meta ? str_of(meta, "image") : NULL;
        if (full && image) {
                json_object *img = json_object_new_object();
                json_object_object_add(img, "uri", json_object_new_string(image));
                json_object_object_add(o, "image", img);
        }
        /* list's "paused": the freezer's state, however the session was paused */
        json_object *pv = NULL;
        bool paused =
            json_object_object_get_ex(entry, "paused", &pv) && json_object_get_boolean(pv);
        json_object *st = json_object_new_object();
        json_object_object_add(st, "state", json_object_new_string(paused ? "Paused" : "Running"));
        json_object_object_add(st, "reason", json_object_new_string(paused ? "paused" : "running"));
        json_object_object_add(o, "status", st);
        json_object_object_add(o, "metadata",
                               meta && json_object_object_get_ex(meta, "metadata", &v)
                                   ? json_object_get(v)
                                   : json_object_new_object());
        json_object *ep = NULL;
        if (meta && json_object_object_get_ex(meta, "entrypoint", &v)) {
                ep = json_object_get(v);
        } else {
                ep = json_object_new_array();
                json_object_array_add(ep, json_object_new_string("tail"));
                json_object_array_add(ep, json_object_new_string("-f"));
                json_object_array_add(ep, json_object_new_string("/dev/null"));
        }
        json_object_object_add(o, "entrypoint", ep);
        const char *exp = str_of(entry, "expires_at");
        if (exp) /* a session without a TTL has none: OpenSandbox leaves the field out */
                json_object_object_add(o, "expiresAt", json_object_new_string(exp));
        const char *created = str_of(entry, "created_at");
        if (created)
                json_object_object_add(o, "createdAt", json_object_new_string(created));
        json_object_put(meta);
        return o;
}

/* `sbx list --json` as a json array (NULL on failure, with *rs answered when it was sbx's). */
static json_object *list_sessions(struct serve_request *rq, struct serve_response *rs, int *ret)
{
        _cleanup_buf_ struct buf out = {0}, err = {0};
        char *argv[] = {(char *)"list", (char *)"--json", NULL};
        int code = 0;
        *ret = serve_sbx_run(rq->srv, argv, -1, &out, MAX_LIST_OUT, &err, &code);
        if (*ret < 0)
                return NULL;
        if (code) {
                *ret = serve_reply_sbx_error(rs, code, &out, &err);
                return NULL;
        }
        json_object *a = json_tokener_parse(out.data);
        if (!a || !json_object_is_type(a, json_type_array)) {
                json_object_put(a);
                *ret = -EBADMSG;
                return NULL;
        }
        return a;
}

static int reply_object(struct serve_response *rs, unsigned status, json_object *o)
{
        _cleanup_buf_ struct buf b = {0};
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
        int r = s ? buf_puts(&b, s) : -ENOMEM;
        return r < 0 ? r : serve_reply_json(rs, status, &b);
}

int sandbox_reply(struct serve_request *rq, struct serve_response *rs, unsigned status,
                  const char *id, bool full)
{
        if (!serve_ref_valid(id))
                return serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "no sandbox '%s'", id);
        int r = 0;
        json_object *all = list_sessions(rq, rs, &r);
        if (!all)
                return r;
        json_object *found = NULL;
        for (size_t i = 0; i < json_object_array_length(all) && !found; i++) {
                json_object *e = json_object_array_get_idx(all, i);
                const char *eid = str_of(e, "id"), *name = str_of(e, "name");
                if ((eid && strcmp(eid, id) == 0) || (name && strcmp(name, id) == 0))
                        found = e;
        }
        if (!found) {
                json_object_put(all);
                return serve_reply_error(rs, 404, "SBX::SANDBOX_NOT_FOUND", "no sandbox '%s'", id);
        }
        json_object *o = sandbox_object(found, full);
        r = reply_object(rs, status, o);
        json_object_put(o);
        json_object_put(all);
        return r;
}

struct filter {
        const char *states[16];
        size_t n_states;
        bool too_many;
};

static void add_state(void *ctx, const char *value)
{
        struct filter *f = ctx;
        if (f->n_states == 16)
                f->too_many = true;
        else
                f->states[f->n_states++] = value;
}

static bool state_matches(const struct filter *f, json_object *sb)
{
        if (f->n_states == 0)
                return true;
        json_object *st = NULL, *state = NULL;
        json_object_object_get_ex(sb, "status", &st);
        json_object_object_get_ex(st, "state", &state);
        for (size_t i = 0; i < f->n_states; i++)
                if (strcasecmp(f->states[i], json_object_get_string(state)) == 0)
                        return true;
        return false;
}

/* metadata=k=v&k2=v2 (already URL-decoded once): every pair must be in the sandbox's. */
static bool metadata_matches(const char *filter, json_object *sb)
{
        if (!filter || !*filter)
                return true;
        json_object *md = NULL;
        json_object_object_get_ex(sb, "metadata", &md);
        _cleanup_free_ char *copy = strdup(filter);
        if (!copy)
                return false;
        char *save = NULL;
        for (char *pair = strtok_r(copy, "&", &save); pair; pair = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(pair, '=');
                if (!eq)
                        return false;
                *eq = '\0';
                const char *have = str_of(md, pair);
                if (!have || strcmp(have, eq + 1) != 0)
                        return false;
        }
        return true;
}

static int page_arg(const struct serve_request *rq, const char *name, long def, long *ret)
{
        const char *s = serve_query(rq, name);
        if (!s) {
                *ret = def;
                return 0;
        }
        char *end;
        long v = strtol(s, &end, 10);
        if (!*s || *end || v < 1 || v > 1000000)
                return -EINVAL;
        *ret = v;
        return 0;
}

int sandbox_list_reply(struct serve_request *rq, struct serve_response *rs)
{
        struct filter f = {0};
        long page, size;
        serve_query_each(rq, "state", add_state, &f);
        if (f.too_many || page_arg(rq, "page", 1, &page) < 0 ||
            page_arg(rq, "pageSize", 20, &size) < 0)
                return serve_reply_error(rs, 400, "SANDBOX::INVALID_PARAMETER",
                                         "page and pageSize must be whole numbers from 1; at "
                                         "most 16 state filters");
        int r = 0;
        json_object *all = list_sessions(rq, rs, &r);
        if (!all)
                return r;
        const char *md = serve_query(rq, "metadata");
        json_object *items = json_object_new_array();
        long total = 0;
        for (size_t i = 0; i < json_object_array_length(all); i++) {
                json_object *sb = sandbox_object(json_object_array_get_idx(all, i), true);
                if (state_matches(&f, sb) && metadata_matches(md, sb)) {
                        if (total >= (page - 1) * size && total < page * size)
                                json_object_array_add(items, json_object_get(sb));
                        total++;
                }
                json_object_put(sb);
        }
        json_object_put(all);
        long pages = (total + size - 1) / size;
        json_object *o = json_object_new_object(), *pg = json_object_new_object();
        json_object_object_add(o, "items", items);
        json_object_object_add(pg, "page", json_object_new_int64(page));
        json_object_object_add(pg, "pageSize", json_object_new_int64(size));
        json_object_object_add(pg, "totalItems", json_object_new_int64(total));
        json_object_object_add(pg, "totalPages", json_object_new_int64(pages));
        json_object_object_add(pg, "hasNextPage", json_object_new_boolean(page < pages));
        json_object_object_add(o, "pagination", pg);
        r = reply_object(rs, 200, o);
        json_object_put(o);
        return r;
}
