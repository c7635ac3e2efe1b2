/* SPDX-License-Identifier: MIT */
/*
 * The records of a session's detached commands, in its runtime dir: cmds/<id>/ holds "argv"
 * (NUL-separated, written once), "state" (replaced atomically), "out.<offset>" (the kept
 * segments of the combined output, named by the absolute offset of their first byte) and
 * "killed" (present once `kill` signalled the command). Written only by host-side sbx
 * processes: the command's keeper, and the clients of ps/logs/wait/kill.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/buf.h"

#define CMDS_DIR "cmds"
#define CMD_STATE_FILE "state"
#define CMD_ARGV_FILE "argv"
#define CMD_KILLED_FILE "killed"

/* A host process recorded with its start time, so that a reused pid is never taken for it. */
struct cmd_proc {
        pid_t pid; /* 0: none (yet) */
        int64_t start;
};

struct cmd_state {
        bool running;
        int exit_code;
        bool timed_out;
        int64_t started_ms, ended_ms;           /* wall clock */
        uint64_t cap;                           /* output bytes kept at most */
        struct cmd_proc keeper, runner, reaper; /* reaper: the command's B, as the host sees it */
        char error[256];
};

/* "c" and 1-9 digits without a leading zero. */
bool cmd_id_valid(const char *s);
/* The session's cmds/ (made when create). fd or -errno. */
int cmds_dir_open(int sessfd, bool create);
/* cmds/<id>/ of a valid id. fd or -errno (-ENOENT: no such command). */
int cmd_dir_open(int cmdsfd, const char *id);
/* Make the next command's directory: *ret_num and its fd. */
int cmd_dir_make(int cmdsfd, unsigned *ret_num, int *ret_fd);
/* The command numbers in cmds/, ascending; *ret (caller frees). */
int cmd_list_nums(int cmdsfd, unsigned **ret, size_t *ret_n);
/* Remove one command's directory and files (its keeper must be gone). */
int cmd_dir_remove(int cmdsfd, const char *id);

int cmd_state_write(int cmdfd, const struct cmd_state *s);
int cmd_state_read(int cmdfd, struct cmd_state *s);
/* Whether p is still the process that was recorded. */
bool cmd_proc_alive(const struct cmd_proc *p);
/* The calling process's record (pid and start time). */
struct cmd_proc cmd_proc_self(void);

/* The kept output segments, ascending by offset. */
struct cmd_segment {
        uint64_t offset, size;
};
int cmd_segments(int cmdfd, struct cmd_segment **ret, size_t *ret_n);

/*
 * Every detached command of the session ends and leaves nothing: their keepers (and the
 * processes running their commands) are killed and awaited, then cmds/ is removed. For the
 * removal of a session's runtime dir.
 */
void cmds_remove_all(int sessfd);
