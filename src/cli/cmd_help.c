/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "sbx-config.h"
#include "args.h"

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
        if (argc >= 1 && strcmp(argv[0], "--version") == 0) {
                printf("sbx %s\nfeatures: namespaces(user,mount,pid,net,ipc,uts,cgroup) "
                       "overlayfs seccomp(bpf built with libseccomp) capabilities(libcap-ng) config(inih)\n",
                       SBX_VERSION);
                return 0;
        }
        /* "sbx help", "sbx --help", "sbx help CMD", "sbx help --json"... */
        const char *topic = NULL;
        for (int i = 1; i < argc; i++) {
                if (argv[i][0] == '-')
                        continue;
                if (topic) {
                        sbx_usage(&cli->err, "too many arguments");
                        return cli_finish_error(cli, "help");
                }
                topic = argv[i];
        }
        if (!topic) {
                print_overview();
                return 0;
        }
        if (!command_find(topic)) {
                sbx_usage(&cli->err, "unknown command '%s'", topic);
                return cli_finish_error(cli, NULL);
        }
        return args_print_help(topic);
}
