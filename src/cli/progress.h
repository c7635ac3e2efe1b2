/* SPDX-License-Identifier: MIT */
/* Progress of an image pull on a terminal (progress.c): `image pull` and `--image` of an image
 * the store lacks show the same line. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../image/image.h"
#include "cli.h"

struct cli_progress {
        uint64_t last_ms, start_ms;
        char what[96];
        bool shown;
};

/* Set o's progress callback to one drawing on stderr, when stderr is a terminal and the
 * output is not --json; pr holds its state. */
void cli_progress_attach(const struct cli *cli, struct image_pull_opts *o, struct cli_progress *pr);
/* Clear the line, if one was drawn. */
void cli_progress_end(struct cli_progress *pr);

/* n bytes as "1.5G", "3.2M", "4.0K". */
void cli_human_size(uint64_t n, char out[16]);
