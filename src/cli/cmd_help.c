/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "args.h"

static int print_overview_json(struct cli *cli)
{
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b,
                 "{\"usage\":\"sbx [--json] [--config FILE] COMMAND [ARGS...]\",\"commands\":[");
        for (size_t i = 0; i < sbx_n_commands; i++) {
                buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
                json_cstr(&b, sbx_commands[i].name);
                buf_puts(&b, ",\"synopsis\":");
                json_cstr(&b, sbx_commands[i].synopsis);
                buf_puts(&b, ",\"summary\":");
                json_cstr(&b, sbx_commands[i].summary);
                buf_puts(&b, "}");
        }
        buf_puts(&b, "]}\n");
        return cli_print(cli, &b);
}

static void print_overview(void)
{
        printf("Usage: sbx [--json] [--config FILE] COMMAND [ARGS...]\n\n"
               "Disposable, locked-down Linux sandboxes for untrusted commands.\n\nCommands:\n");
        for (size_t i = 0; i < sbx_n_commands; i++)
                printf("  %-9s %s\n", sbx_commands[i].name, sbx_commands[i].summary);
        printf("\nRun 'sbx COMMAND --help' or 'sbx help COMMAND' for the options of a command.\n"
               "Exit codes: 0 ok, 1 failed as asked, 2 usage, 3 no such session, 4 host cannot "
               "provide it;\nexec: the command's own, 124 timeout, 125 sbx failed, 126 not "
               "executable, 127 not found, 128+N signal.\n");
}

int cmd_help(struct cli *cli, int argc, char **argv)
{
        if (argc >= 1 && strcmp(argv[0], "--version") == 0)
                return cli_print_version(cli);
        /* "sbx help", "sbx --help", "sbx help CMD", "sbx help --json"... */
        const char *topic = NULL;
        for (int i = 1; i < argc; i++) {
                if (argv[i][0] == '-')
                        continue;
                if (topic) {
                        sbx_usage(&cli->err, "unexpected argument '%s': help takes one COMMAND",
                                  argv[i]);
                        return cli_finish_error(cli, "help");
                }
                topic = argv[i];
        }
        if (!topic && cli->json)
                return print_overview_json(cli);
        if (!topic) {
                print_overview();
                return 0;
        }
        if (!command_find(topic)) {
                sbx_usage(&cli->err, "unknown command '%s'", topic);
                return cli_finish_error(cli, NULL);
        }
        return args_print_help(cli, topic);
}
