/* SPDX-License-Identifier: MIT */
/* sbx: dispatch through the command table (src/cli/commands.c); nothing else lives here. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "shared/proctitle.h"

/* fds 0-2 must exist, or a pipe created later could land on them. Returns whether stdout was
 * closed: then what is printed reaches nobody (create says so, cli.h). */
static bool ensure_stdio(void)
{
        bool stdout_closed = false;
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0) {
                        stdout_closed |= fd == STDOUT_FILENO;
                        int n = open("/dev/null", O_RDWR);
                        if (n >= 0 && n != fd)
                                close(n);
                }
        return stdout_closed;
}

/*
 * stdout write errors (a full disk, a closed pipe) are failures, reported once. 125 is exec's,
 * run's and wait's ("sbx failed around the command"); any other command that fails in itself exits
 * 1, with its JSON code ("internal") telling the cause.
 */
static int finish(const char *command, int code)
{
        if (fflush(stdout) != 0 || ferror(stdout)) {
                if (code == 0)
                        fprintf(stderr, "sbx: failed to write the output: %m\n");
                code = code ? code : EXIT_SBX_FAILED;
        }
        /* wait exits with a detached command's code, which may be 125 too */
        bool runs_command = strcmp(command, "exec") == 0 || strcmp(command, "run") == 0 ||
                            strcmp(command, "wait") == 0;
        return code == EXIT_SBX_FAILED && !runs_command ? EXIT_FAILED : code;
}

/*
 * Is "--json" among argv[from..] before "--"? Decided before anything can fail, so that every
 * error, also one found before the option is reached, is one JSON document. exec and run are
 * left to their own parsing: the words after their options are the command's.
 */
static bool wants_json(int argc, char **argv, int from)
{
        for (int i = from; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "--json") == 0)
                        return true;
        return false;
}

int main(int argc, char **argv)
{
        struct cli cli = {0};
        /* before anything keeps a pointer into argv or environ (shared/proctitle.h) */
        proctitle_init(argc, argv);
        cli.stdout_closed = ensure_stdio();

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
                         !strcmp(argv[i], "--version")) {
                        cli.json = cli.json || wants_json(argc, argv, i);
                        return finish("help", command_find("help")->run(&cli, argc - i, argv + i));
                } else {
                        cli.json = cli.json || wants_json(argc, argv, i);
                        if (strcmp(argv[i], "--config") == 0) /* the last word: no FILE */
                                sbx_usage(&cli.err, "option '--config' requires a value");
                        else
                                sbx_usage(&cli.err, "unknown option '%s'", argv[i]);
                        return cli_finish_error(&cli, NULL);
                }
        }
        if (i >= argc)
                return finish("help", command_find("help")->run(&cli, 1, (char *[]){"help", NULL}));
        const struct command *cmd = command_find(argv[i]);
        if (!cmd || (strcmp(cmd->name, "exec") != 0 && strcmp(cmd->name, "run") != 0))
                cli.json = cli.json || wants_json(argc, argv, i);
        if (!cmd) {
                sbx_usage(&cli.err, "unknown command '%s'", argv[i]);
                return cli_finish_error(&cli, NULL);
        }
        return finish(cmd->name, cmd->run(&cli, argc - i, argv + i));
}
