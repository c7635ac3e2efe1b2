/* SPDX-License-Identifier: MIT */
/* `sbx tools`: the tool definitions for a model (tools.c), as JSON or as a readable list. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "mcp/tools.h"

static const struct option tools_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

/* Append text wrapped at width columns, each line indented by indent spaces. */
static void wrap(struct buf *b, const char *text, size_t indent, size_t width)
{
        size_t col = 0;
        for (const char *w = text; *w;) {
                while (*w == ' ')
                        w++;
                size_t n = strcspn(w, " ");
                if (n == 0)
                        break;
                if (col > indent && col + 1 + n > width) {
                        buf_puts(b, "\n");
                        col = 0;
                }
                if (col == 0) {
                        buf_printf(b, "%*s", (int)indent, "");
                        col = indent;
                } else {
                        buf_puts(b, " ");
                        col++;
                }
                buf_append(b, w, n);
                col += n;
                w += n;
        }
        buf_puts(b, "\n");
}

static const char *type_name(const struct tool_param *p)
{
        switch (p->type) {
        case TOOL_INTEGER:
                return "integer";
        case TOOL_BOOLEAN:
                return "boolean";
        case TOOL_STRING_ARRAY:
                return "array of strings";
        case TOOL_NUMBER:
                return "number";
        case TOOL_QUANTITY:
                return "integer or string";
        default:
                return "string";
        }
}

static void tools_text(struct buf *b)
{
        size_t n;
        const struct tool *t = tools_all(&n);
        for (size_t i = 0; i < n; i++) {
                buf_printf(b, "%s%s\n", i ? "\n" : "", t[i].name);
                wrap(b, t[i].description, 4, 80);
                for (size_t k = 0; k < t[i].n_params; k++) {
                        const struct tool_param *p = &t[i].params[k];
                        buf_printf(b, "  %s (%s%s", p->name, type_name(p),
                                   p->required ? ", required" : "");
                        for (size_t c = 0; p->choices[c]; c++)
                                buf_printf(b, "%s%s", c ? "|" : ": ", p->choices[c]);
                        buf_puts(b, ")\n");
                        wrap(b, p->description, 8, 80);
                }
        }
}

int cmd_tools(struct cli *cli, int argc, char **argv)
{
        int opt;
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", tools_options, NULL)) != -1) {
                int k = args_common(cli, "tools", opt);
                if (k == -1)
                        return 0;
                if (k <= 0) {
                        if (k == 0)
                                sbx_usage(&cli->err, "unknown option '%s'", argv[optind - 1]);
                        return cli_finish_error(cli, "tools");
                }
        }
        if (optind < argc) {
                sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind]);
                return cli_finish_error(cli, "tools");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "tools");
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                tools_json(&b, "input_schema");
                buf_puts(&b, "\n");
        } else {
                tools_text(&b);
        }
        if (!b.data) {
                sbx_internal(&cli->err, ENOMEM, "out of memory");
                return cli_finish_error(cli, "tools");
        }
        return cli_print(cli, &b) ? cli_finish_error(cli, "tools") : 0;
}
