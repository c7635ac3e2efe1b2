/* SPDX-License-Identifier: MIT */
/* The execd command API (command*.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "serve.h"

/* Foreground commands live as long as their stream (command_fg.c); serve keeps the last
 * ones' states for GET /command/status and finds a running one for DELETE /command. */
#define FG_ID_PREFIX "fg-"
#define FG_KEPT 256

struct fg_status {
        char content[512]; /* the command, cut at 511 bytes */
        bool running;
        int exit_code;
        int64_t started_ms, finished_ms; /* wall clock; finished 0 while running */
};

/* Start `sbx exec` for the command (in_fd: its stdin, -1 for none) and answer with its event
 * stream. */
int command_fg_start(struct serve_request *rq, struct serve_response *rs, char **argv,
                     const char *content, int in_fd);
/* The state of foreground command id of session: 0 or -ENOENT. */
int command_fg_status(const char *session, const char *id, struct fg_status *ret);
/* Kill foreground command id of session: 0, -ENOENT, or -ESRCH when it has ended. */
int command_fg_kill(const char *session, const char *id);
/* Kill every foreground command (serve is stopping). */
void command_fg_kill_all(void);

/* One SSE event as execd writes it: a JSON object and a blank line. */
int sse_event(struct buf *b, const char *type, const char *text, size_t text_len);
