/* SPDX-License-Identifier: MIT */
/*
 * Progress of the long steps (progress.c): image pull, image import, the package installs of
 * create. On a terminal one line on stderr, rewritten in place; with --progress json one JSON
 * object a line on stderr; otherwise nothing.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../image/image.h"
#include "cli.h"

struct cli_progress {
        enum cli_progress_mode mode; /* AUTO: drawing on the terminal; NONE: off */
        uint64_t last_ms, start_ms;
        char what[160];
        bool shown;
};

/* Decide pr's mode for cli: JSON when asked, a line when stderr is a terminal and stdout is
 * not --json, else none. */
void cli_progress_init(const struct cli *cli, struct cli_progress *pr);
/* An image_progress_fn over pr (arg). */
void cli_progress_show(void *arg, const char *what, uint64_t now, uint64_t total);
/* A step that counts no bytes: what, running for elapsed_ms (drawn at most 4 times a second). */
void cli_progress_tick(struct cli_progress *pr, const char *what, uint64_t elapsed_ms);
/* Set o's progress callback to cli_progress_show when pr is on. */
void cli_progress_attach(const struct cli *cli, struct image_pull_opts *o, struct cli_progress *pr);
/* Clear the line, if one was drawn. */
void cli_progress_end(struct cli_progress *pr);

/* n bytes as "1.5G", "3.2M", "4.0K". */
void cli_human_size(uint64_t n, char out[16]);
