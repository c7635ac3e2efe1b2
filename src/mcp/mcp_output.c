/* SPDX-License-Identifier: MIT */
/*
 * What a model reads of a result. A model's context is small and dear: a build log of 1 MiB
 * would fill a quarter of it, so the text of a result is capped (--max-output, 64 KiB by
 * default, about 16k tokens). The head and the tail are kept (a command's errors are at its
 * end), a quarter and three quarters of the cap, around one line saying how many bytes were
 * cut; cuts fall on UTF-8 character boundaries. exec's output in structuredContent is the
 * same capped text (with output_cut: true); any other structuredContent larger than the cap
 * (a long ls, glob or grep) is left out: the text says the same, capped.
 *
 * An image read with `read` comes back as MCP image content (base64 and its MIME type), so
 * a model that sees images sees it; the type is told by the file's first bytes, never by its
 * name.
 */
#include <stdio.h>
#include <string.h>

#include "mcp.h"

/* The largest n' <= n such that s[n'] starts a UTF-8 character (or is the end). */
static size_t char_start(const char *s, size_t len, size_t n)
{
        while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
                n--;
        return n;
}

/* s capped at max bytes (a new string), or NULL when it fits (or there is no memory). */
static json_object *capped(const char *s, size_t len, size_t max)
{
        if (len <= max)
                return NULL;
        char marker[128];
        size_t head = char_start(s, len, max / 4);
        size_t tail = char_start(s, len, len - (max - max / 4));
        if (tail < head)
                tail = head;
        int m = snprintf(marker, sizeof(marker),
                         "\n[... %zu bytes cut: the output has %zu bytes; its first %zu and last "
                         "%zu are shown ...]\n",
                         tail - head, len, head, len - tail);
        _cleanup_buf_ struct buf b = {0};
        if (buf_append(&b, s, head) < 0 || buf_append(&b, marker, (size_t)m) < 0 ||
            buf_append(&b, s + tail, len - tail) < 0)
                return NULL;
        return json_object_new_string_len(b.data, (int)b.len);
}

/* Replace o[key] (a string) by its capped copy; true when it was cut. */
static bool cap_key(json_object *o, const char *key, size_t max)
{
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return false;
        json_object *c =
            capped(json_object_get_string(v), (size_t)json_object_get_string_len(v), max);
        if (!c)
                return false;
        json_object_object_add(o, key, c);
        return true;
}

void mcp_output_cap(json_object *result, size_t max)
{
        json_object *content, *sc;
        if (json_object_object_get_ex(result, "content", &content))
                for (size_t i = 0; i < json_object_array_length(content); i++)
                        (void)cap_key(json_object_array_get_idx(content, i), "text", max);
        if (!json_object_object_get_ex(result, "structuredContent", &sc))
                return;
        if (cap_key(sc, "output", max))
                json_object_object_add(sc, "output_cut", json_object_new_boolean(true));
        if (json_object_object_get_ex(sc, "output", NULL))
                return; /* exec: the output is capped, the rest is a few numbers */
        size_t len = 0;
        (void)json_object_to_json_string_length(sc, JSON_C_TO_STRING_PLAIN, &len);
        if (len > max)
                json_object_object_del(result, "structuredContent");
}

/* Decode the first bytes of base64 text (enough for a magic number); how many. */
static size_t b64_prefix(const char *s, unsigned char *out, size_t n)
{
        static const char abc[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t k = 0;
        unsigned bits = 0, acc = 0;
        for (; *s && *s != '=' && k < n; s++) {
                const char *p = strchr(abc, *s);
                if (!p)
                        continue; /* line breaks */
                acc = (acc << 6) | (unsigned)(p - abc);
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[k++] = (unsigned char)(acc >> bits);
                        acc &= (1u << bits) - 1;
                }
        }
        return k;
}

static const char *image_type(const unsigned char *m, size_t n)
{
        if (n >= 8 && memcmp(m, "\x89PNG\r\n\x1a\n", 8) == 0)
                return "image/png";
        if (n >= 3 && memcmp(m, "\xff\xd8\xff", 3) == 0)
                return "image/jpeg";
        if (n >= 6 && (memcmp(m, "GIF87a", 6) == 0 || memcmp(m, "GIF89a", 6) == 0))
                return "image/gif";
        if (n >= 12 && memcmp(m, "RIFF", 4) == 0 && memcmp(m + 8, "WEBP", 4) == 0)
                return "image/webp";
        return NULL;
}

json_object *mcp_output_image(json_object *o)
{
        json_object *content;
        if (!json_object_object_get_ex(o, "content", &content) ||
            !json_object_is_type(content, json_type_string))
                return NULL;
        unsigned char magic[12];
        const char *mime =
            image_type(magic, b64_prefix(json_object_get_string(content), magic, sizeof(magic)));
        if (!mime)
                return NULL;
        json_object *res = json_object_new_object(), *items = json_object_new_array(),
                    *img = json_object_new_object();
        json_object_object_add(img, "type", json_object_new_string("image"));
        json_object_object_add(img, "data", json_object_get(content));
        json_object_object_add(img, "mimeType", json_object_new_string(mime));
        json_object_array_add(items, img);
        json_object_object_add(res, "content", items);
        json_object_object_add(res, "isError", json_object_new_boolean(false));
        return res;
}

bool mcp_arg_text(json_object *v, char *out, size_t n)
{
        if (json_object_is_type(v, json_type_string)) {
                snprintf(out, n, "%s", json_object_get_string(v));
        } else if (json_object_is_type(v, json_type_int)) {
                snprintf(out, n, "%lld", (long long)json_object_get_int64(v));
        } else if (json_object_is_type(v, json_type_double)) {
                /* a fraction as the config writes it: at most 3 decimals, no trailing 0 */
                snprintf(out, n, "%.3f", json_object_get_double(v));
                for (size_t len = strlen(out); len > 0 && out[len - 1] == '0';)
                        out[--len] = '\0';
                size_t len = strlen(out);
                if (len > 0 && out[len - 1] == '.')
                        out[len - 1] = '\0';
        } else {
                return false;
        }
        return true;
}
