/* SPDX-License-Identifier: MIT */
/* One progress line on a terminal, rewritten in place (progress.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/util.h"
#include "progress.h"

void cli_human_size(uint64_t n, char out[16])
{
        if (n >= (UINT64_C(1) << 30))
                snprintf(out, 16, "%.1fG", (double)n / (1 << 30));
        else if (n >= (1u << 20))
                snprintf(out, 16, "%.1fM", (double)n / (1 << 20));
        else
                snprintf(out, 16, "%.1fK", (double)n / 1024);
}

/* At most ten redraws a second: a fast transfer would otherwise spend its time drawing. */
static void show(void *arg, const char *what, uint64_t now, uint64_t total)
{
        struct cli_progress *pr = arg;
        uint64_t ms = now_monotonic_ms();
        if (strcmp(pr->what, what) != 0) {
                snprintf(pr->what, sizeof(pr->what), "%s", what);
                pr->start_ms = ms;
        } else if (ms - pr->last_ms < 100 && now < total)
                return;
        pr->last_ms = ms;
        char a[16], b[16], rate[16];
        cli_human_size(now, a);
        cli_human_size(total, b);
        cli_human_size(ms > pr->start_ms ? now * 1000 / (ms - pr->start_ms) : 0, rate);
        fprintf(stderr, "\r\033[Kpulling %s  %s / %s  %s/s", what, a, b, rate);
        fflush(stderr);
        pr->shown = true;
}

void cli_progress_attach(const struct cli *cli, struct image_pull_opts *o, struct cli_progress *pr)
{
        *pr = (struct cli_progress){0};
        if (cli->json || !isatty(STDERR_FILENO))
                return;
        o->progress = show;
        o->arg = pr;
}

void cli_progress_end(struct cli_progress *pr)
{
        if (pr->shown)
                fputs("\r\033[K", stderr);
        pr->shown = false;
}
