/* SPDX-License-Identifier: MIT */
/*
 * The tools sbx offers to a model (`sbx tools`, `sbx mcp`): one per command, with a JSON Schema
 * of its arguments. The options of a tool are derived from the command table (src/cli/
 * commands.c): every option line of `sbx COMMAND --help` becomes a property, typed from its
 * metavariable, so a new flag shows up here by itself. tools.c adds what the table cannot say:
 * the operands, descriptions written for a model, value choices, and the options a model is
 * not offered because they reach host files or weaken the sandbox (--mount, --rootfs,
 * --config, --net host, --seccomp unconfined, ...).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "shared/buf.h"

/* TOOL_INTEGER, TOOL_NUMBER: numbers in the schema, also taken as strings of digits (a client
 * that sends "100" is not refused); TOOL_QUANTITY: a duration or a size, an integer (seconds,
 * bytes) or a string with a unit ("10m", "512M"). */
enum tool_type {
        TOOL_STRING,
        TOOL_INTEGER,
        TOOL_BOOLEAN,
        TOOL_STRING_ARRAY,
        TOOL_NUMBER,
        TOOL_QUANTITY,
};

/* How a property's value reaches the sbx command line. */
enum tool_via {
        TOOL_VIA_OPTION,  /* "--flag=VALUE" (repeated for arrays; bare "--flag" for true) */
        TOOL_VIA_OPERAND, /* after "--", in property order (arrays: one argument each) */
        TOOL_VIA_STDIN,   /* the value is the command's stdin; the operand is "-" */
        TOOL_VIA_FD3,     /* the value is fd 3, named by "--flag=/dev/fd/3" */
        TOOL_VIA_FD4,     /* the value is fd 4, named by "--flag=/dev/fd/4" */
};

#define TOOL_MAX_PARAMS 32
#define TOOL_MAX_CHOICES 4

struct tool_param {
        const char *name; /* property name: the flag without "--", '-' as '_' */
        enum tool_type type;
        enum tool_via via;
        const char *flag; /* "--timeout" (options and fds), NULL for operands */
        const char *description;
        const char *pattern; /* a regular expression the string must match, or NULL */
        const char *choices[TOOL_MAX_CHOICES + 1]; /* allowed strings, NULL-terminated */
        long long minimum;                         /* integers: the smallest value */
        bool required;
};

struct tool {
        const char *name; /* the command */
        const char *description;
        const char *result_key; /* structuredContent key of an array result ("entries") */
        struct tool_param params[TOOL_MAX_PARAMS];
        size_t n_params;
};

/* The tools, built once from the command table; never fails (the tables are static). */
const struct tool *tools_all(size_t *ret_n);
const struct tool *tool_find(const char *name);

/* Append the JSON Schema (draft 2020-12) of a tool's arguments. */
int tool_schema_json(struct buf *b, const struct tool *t);
/* Append [{"name","description",<schema_key>:{...}}...]: "input_schema" or "inputSchema". */
int tools_json(struct buf *b, const char *schema_key);
