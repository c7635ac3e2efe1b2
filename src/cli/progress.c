/* SPDX-License-Identifier: MIT */
/* One progress line on a terminal, rewritten in place, or JSON lines (progress.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/buf.h"
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

void cli_progress_init(const struct cli *cli, struct cli_progress *pr)
{
        *pr = (struct cli_progress){.mode = CLI_PROGRESS_NONE};
        if (cli->progress == CLI_PROGRESS_JSON)
                pr->mode = CLI_PROGRESS_JSON;
        else if (cli->progress == CLI_PROGRESS_AUTO && !cli->json && isatty(STDERR_FILENO))
                pr->mode = CLI_PROGRESS_AUTO;
}

/* One event: {"progress":{"what":...,"bytes":N,"total":N,"rate":N,"elapsed_ms":N}} ("bytes",
 * "total" and "rate" only for a step that counts bytes). */
static void emit_json(const char *what, bool bytes, uint64_t now, uint64_t total, uint64_t rate,
                      uint64_t elapsed_ms)
{
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"progress\":{\"what\":");
        json_cstr(&b, what);
        if (bytes)
                buf_printf(&b, ",\"bytes\":%llu,\"total\":%llu,\"rate\":%llu",
                           (unsigned long long)now, (unsigned long long)total,
                           (unsigned long long)rate);
        buf_printf(&b, ",\"elapsed_ms\":%llu}}\n", (unsigned long long)elapsed_ms);
        if (b.data)
                (void)!fwrite(b.data, 1, b.len, stderr);
        (void)fflush(stderr);
}

/* A new step restarts the clock; within one, at most one redraw per min_ms (a fast transfer
 * would otherwise spend its time drawing), and always its last. False: nothing to draw. */
static bool due(struct cli_progress *pr, const char *what, uint64_t min_ms, bool last,
                uint64_t *ret_ms)
{
        uint64_t ms = now_monotonic_ms();
        if (strcmp(pr->what, what) != 0) {
                snprintf(pr->what, sizeof(pr->what), "%s", what);
                pr->start_ms = ms;
        } else if (ms - pr->last_ms < min_ms && !last)
                return false;
        pr->last_ms = ms;
        *ret_ms = ms;
        return true;
}

void cli_progress_show(void *arg, const char *what, uint64_t now, uint64_t total)
{
        struct cli_progress *pr = arg;
        uint64_t ms;
        if (pr->mode == CLI_PROGRESS_NONE || !due(pr, what, 100, now >= total, &ms))
                return;
        uint64_t elapsed = ms - pr->start_ms, rate = elapsed ? now * 1000 / elapsed : 0;
        if (pr->mode == CLI_PROGRESS_JSON) {
                emit_json(what, true, now, total, rate, elapsed);
                return;
        }
        char a[16], b[16], r[16];
        cli_human_size(now, a);
        cli_human_size(total, b);
        cli_human_size(rate, r);
        fprintf(stderr, "\r\033[K%s  %s / %s  %s/s", what, a, b, r);
        (void)fflush(stderr);
        pr->shown = true;
}

void cli_progress_tick(struct cli_progress *pr, const char *what, uint64_t elapsed_ms)
{
        uint64_t ms;
        if (!pr || pr->mode == CLI_PROGRESS_NONE || !due(pr, what, 250, false, &ms))
                return;
        if (pr->mode == CLI_PROGRESS_JSON) {
                emit_json(what, false, 0, 0, 0, elapsed_ms);
                return;
        }
        fprintf(stderr, "\r\033[K%s  %llu.%llus", what, (unsigned long long)(elapsed_ms / 1000),
                (unsigned long long)(elapsed_ms % 1000 / 100));
        (void)fflush(stderr);
        pr->shown = true;
}

void cli_progress_attach(const struct cli *cli, struct image_pull_opts *o, struct cli_progress *pr)
{
        cli_progress_init(cli, pr);
        if (pr->mode == CLI_PROGRESS_NONE)
                return;
        o->progress = cli_progress_show;
        o->arg = pr;
}

void cli_progress_end(struct cli_progress *pr)
{
        if (!pr)
                return;
        if (pr->shown)
                (void)fputs("\r\033[K", stderr);
        pr->shown = false;
}
