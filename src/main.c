/* SPDX-License-Identifier: MIT */
/* sbx: dispatch through the command table (src/cli/commands.c); nothing else lives here. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "shared/proctitle.h"

/* fds 0-2 must exist, or a pipe created later could land on them. */
static void ensure_stdio(void)
{
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0) {
                        int n = open("/dev/null", O_RDWR);
                        if (n >= 0 && n != fd)
                                close(n);
                }
}

/* stdout write errors (a full disk, a closed pipe) are failures, reported once. */
static int finish(int code)
{
        if (fflush(stdout) != 0 || ferror(stdout)) {
                if (code == 0)
                        fprintf(stderr, "sbx: failed to write the output: %m\n");
                return code ? code : EXIT_SBX_FAILED;
        }
        return code;
}

int main(int argc, char **argv)
{
        struct cli cli = {0};
        /* before anything keeps a pointer into argv or environ (shared/proctitle.h) */
        proctitle_init(argc, argv);
        ensure_stdio();

        /* global options before the command name */
        int i = 1;
        for (; i < argc && argv[i][0] == '-'; i++) {
                if (strcmp(argv[i], "--json") == 0)
                        cli.json = true;
                else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
                        cli.config_file = argv[++i];
                else if (strncmp(argv[i], "--config=", 9) == 0)
                        cli.config_file = argv[i] + 9;
                else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
                         !strcmp(argv[i], "--version"))
                        return finish(command_find("help")->run(&cli, argc - i, argv + i));
                else {
                        sbx_usage(&cli.err, "unknown option '%s'", argv[i]);
                        return cli_finish_error(&cli, NULL);
                }
        }
        if (i >= argc)
                return finish(command_find("help")->run(&cli, 1, (char *[]){"help", NULL}));
        const struct command *cmd = command_find(argv[i]);
        if (!cmd) {
                sbx_usage(&cli.err, "unknown command '%s'", argv[i]);
                return cli_finish_error(&cli, NULL);
        }
        return finish(cmd->run(&cli, argc - i, argv + i));
}
