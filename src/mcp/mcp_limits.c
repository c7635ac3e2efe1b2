/* SPDX-License-Identifier: MIT */
/*
 * The operator's limits are the ceiling of what a model asks for. `sbx mcp` loads the config
 * it was started with (defaults, sandbox.ini, SBX_*, --config) once; a limit in a tool call is
 * parsed by the config's own setter (config_apply_flag into a scratch config, so units and
 * "unlimited" mean exactly what they mean in sandbox.ini) and compared with the operator's:
 *  - "unlimited" (memory, cpus, pids) and a ttl of 0 (never expires) are refused: a model may
 *    not lift a limit, even one the operator left at its default;
 *  - a value above the operator's is refused, unless the operator's is itself unlimited.
 * So a model can make its sandbox tighter than the operator's, never looser.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mcp.h"

enum unit { UNIT_SIZE, UNIT_CPUS, UNIT_COUNT, UNIT_DURATION };

struct ceiling {
        const char *tool, *param, *flag;
        size_t off; /* of the uint64_t in struct sbx_config */
        enum unit unit;
};

#define CEILING(tool, param, field, unit)                                                          \
        {                                                                                          \
                tool, #param, "--" #param, offsetof(struct sbx_config, field), unit                \
        }

static const struct ceiling ceilings[] = {
    CEILING("create", memory, memory_bytes, UNIT_SIZE),
    CEILING("create", cpus, cpus_milli, UNIT_CPUS),
    CEILING("create", pids, pids, UNIT_COUNT),
    CEILING("create", disk, disk_bytes, UNIT_SIZE),
    CEILING("create", nofile, nofile, UNIT_COUNT),
    CEILING("create", ttl, ttl_sec, UNIT_DURATION),
    CEILING("create", timeout, timeout_sec, UNIT_DURATION),
    CEILING("connect", ttl, ttl_sec, UNIT_DURATION),
    CEILING("exec", timeout, timeout_sec, UNIT_DURATION),
};

static uint64_t value_at(const struct sbx_config *c, const struct ceiling *k)
{
        uint64_t v;
        memcpy(&v, (const char *)c + k->off, sizeof(v));
        return v;
}

/* A value as sandbox.ini would take it: 512M, 1.5, 256, 30m; 0 as unlimited. */
static void format_value(char *out, size_t n, enum unit u, uint64_t v)
{
        static const char sizes[] = "TGMK";
        unsigned long long x = v;
        if (v == 0) {
                snprintf(out, n, "%s", u == UNIT_DURATION ? "0 (never expires)" : "unlimited");
                return;
        }
        switch (u) {
        case UNIT_SIZE:
                for (int i = 0; i < 4; i++) {
                        unsigned long long m = 1ULL << (10 * (4 - i));
                        if (x % m == 0) {
                                snprintf(out, n, "%llu%c", x / m, sizes[i]);
                                return;
                        }
                }
                snprintf(out, n, "%llu", x);
                return;
        case UNIT_CPUS:
                if (x % 1000 == 0) {
                        snprintf(out, n, "%llu", x / 1000);
                } else {
                        snprintf(out, n, "%llu.%03llu", x / 1000, x % 1000);
                        for (size_t len = strlen(out); len > 0 && out[len - 1] == '0';)
                                out[--len] = '\0'; /* a digit after the point is not 0 */
                }
                return;
        case UNIT_COUNT:
                snprintf(out, n, "%llu", x);
                return;
        case UNIT_DURATION:
                snprintf(out, n, "%llu%s",
                         x % 3600 == 0 ? x / 3600
                         : x % 60 == 0 ? x / 60
                                       : x,
                         x % 3600 == 0 ? "h"
                         : x % 60 == 0 ? "m"
                                       : "s");
                return;
        }
}

/* What the model asked for, parsed as the config parses it; false when it does not parse
 * (or is not a string or number: the schema check refuses it). */
static bool asked_value(const struct ceiling *k, json_object *v, uint64_t *ret)
{
        char num[64];
        const char *text = num;
        if (json_object_is_type(v, json_type_string))
                text = json_object_get_string(v);
        else if (!mcp_arg_text(v, num, sizeof(num)))
                return false;
        struct sbx_config scratch;
        struct sbx_error e = {0};
        config_init_defaults(&scratch);
        bool ok = config_apply_flag(&scratch, k->flag, text, &e) == 0;
        *ret = value_at(&scratch, k);
        config_free(&scratch);
        return ok;
}

static int check_one(const struct sbx_config *op, const struct ceiling *k, json_object *v,
                     char *why, size_t n)
{
        uint64_t asked, limit = value_at(op, k);
        if (!asked_value(k, v, &asked))
                return 0;
        char lim[48], got[48];
        format_value(lim, sizeof(lim), k->unit, limit);
        format_value(got, sizeof(got), k->unit, asked);
        if (asked == 0 && limit == 0)
                snprintf(why, n,
                         "'%s' cannot be %s: a model may not lift the operator's limits; ask "
                         "for a finite value",
                         k->param, got);
        else if (asked == 0)
                snprintf(why, n,
                         "'%s' cannot be %s: a model may not lift the operator's limits; ask "
                         "for at most the operator's %s",
                         k->param, got, lim);
        else if (limit != 0 && asked > limit)
                snprintf(why, n, "'%s' %s is above the operator's limit of %s: ask for at most %s",
                         k->param, got, lim, lim);
        else
                return 0;
        return -EPERM;
}

int mcp_check_limits(const struct sbx_config *op, const struct tool *t, json_object *args,
                     char *why, size_t n)
{
        for (size_t i = 0; i < ARRAY_SIZE(ceilings); i++) {
                json_object *v;
                if (strcmp(ceilings[i].tool, t->name) != 0 ||
                    !json_object_object_get_ex(args, ceilings[i].param, &v))
                        continue;
                int r = check_one(op, &ceilings[i], v, why, n);
                if (r < 0)
                        return r;
        }
        return 0;
}
