/* SPDX-License-Identifier: MIT */
/*
 * The CLI layer: the one command table (dispatch, help, completions and the man page are
 * checked against it) and the helpers every command uses to parse flags and print results.
 * Only this layer prints.
 */
#pragma once

#include <stdbool.h>

#include "shared/buf.h"
#include "shared/error.h"

/* --progress: a line on a terminal (auto), nothing, or JSON lines on stderr */
enum cli_progress_mode { CLI_PROGRESS_AUTO = 0, CLI_PROGRESS_NONE, CLI_PROGRESS_JSON };

struct cli {
        bool json; /* --json: exactly one JSON document on stdout */
        enum cli_progress_mode progress;
        const char *config_file; /* --config FILE */
        struct sbx_error err;    /* the one error of this invocation */
        bool stdout_closed;      /* sbx started with fd 1 closed (now /dev/null) */
};

struct command {
        const char *name;
        int (*run)(struct cli *cli, int argc, char **argv); /* returns the exit code */
        const char *synopsis;                               /* "[OPTIONS] ID [--] CMD [ARG...]" */
        const char *summary;                                /* one line */
        const char *options;  /* the option lines of `sbx COMMAND --help` */
        const char *examples; /* example lines of `sbx help COMMAND` */
        const char *flags;    /* every long flag, space separated (completions, man check) */
};

extern const struct command sbx_commands[];
extern const size_t sbx_n_commands;

const struct command *command_find(const char *name);

/*
 * Print the invocation's error (sbx: message, or {"error":...} with --json) and return its
 * exit code. A usage error adds "Try 'sbx COMMAND --help'." on stderr.
 */
int cli_finish_error(struct cli *cli, const char *command);
/* Print b to stdout, checking write errors; returns 0 or an error code set in cli->err. */
int cli_print(struct cli *cli, const struct buf *b);
/* Print `sbx --version`: the version and the features of this build. */
int cli_print_version(struct cli *cli);
/*
 * Print prefix and msg as one line on stderr, msg escaped (shared/escape.h): a message that
 * echoes user input or a session's file names can neither span lines nor reach the
 * terminal as control characters.
 */
void cli_message(const char *prefix, const char *msg);
/* Print "sbx: warning: ..." on stderr (escaped, as cli_message). */
void cli_warn(const char *fmt, ...) _printf_(1, 2);

/* Command entry points (one file each under src/cli/). */
int cmd_create(struct cli *cli, int argc, char **argv);
int cmd_connect(struct cli *cli, int argc, char **argv);
int cmd_exec(struct cli *cli, int argc, char **argv);
int cmd_destroy(struct cli *cli, int argc, char **argv);
int cmd_run(struct cli *cli, int argc, char **argv);
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_check(struct cli *cli, int argc, char **argv);
int cmd_help(struct cli *cli, int argc, char **argv);
int cmd_ls(struct cli *cli, int argc, char **argv);
int cmd_read(struct cli *cli, int argc, char **argv);
int cmd_write(struct cli *cli, int argc, char **argv);
int cmd_edit(struct cli *cli, int argc, char **argv);
int cmd_glob(struct cli *cli, int argc, char **argv);
int cmd_grep(struct cli *cli, int argc, char **argv);
int cmd_log(struct cli *cli, int argc, char **argv);
int cmd_image(struct cli *cli, int argc, char **argv);
int cmd_tools(struct cli *cli, int argc, char **argv);
int cmd_mcp(struct cli *cli, int argc, char **argv);
int cmd_pause(struct cli *cli, int argc, char **argv);
int cmd_resume(struct cli *cli, int argc, char **argv);
int cmd_stats(struct cli *cli, int argc, char **argv);
int cmd_net(struct cli *cli, int argc, char **argv);
int cmd_diff(struct cli *cli, int argc, char **argv);
int cmd_cp(struct cli *cli, int argc, char **argv);
int cmd_fs(struct cli *cli, int argc, char **argv);
int cmd_serve(struct cli *cli, int argc, char **argv);
int cmd_ps(struct cli *cli, int argc, char **argv);
int cmd_logs(struct cli *cli, int argc, char **argv);
int cmd_wait(struct cli *cli, int argc, char **argv);
int cmd_kill(struct cli *cli, int argc, char **argv);
int cmd_commit(struct cli *cli, int argc, char **argv);
