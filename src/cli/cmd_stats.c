/* SPDX-License-Identifier: MIT */
/*
 * stats: a session's CPU, memory, pids, disk and network use against its limits
 * (launch/stats.c). The CPU percentage is the CPU time used between two samples over the
 * wall time between them (100% = one CPU busy): 250 ms apart once, or the last second with
 * --watch, which prints a sample every second until interrupted (JSON: one document a line).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../launch/launch.h"
#include "shared/util.h"
#include "args.h"

enum { OPT_WATCH = OPT_CREATE_FIRST };

static const struct option stats_options[] = {
    {"watch", 0, NULL, OPT_WATCH},
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

static const char *source_name(int v)
{
        return v == 2 ? "cgroup v2" : v == 1 ? "cgroup v1" : NULL;
}

/* 1536 -> "1.5KiB" */
static void human_size(char *out, size_t n, uint64_t v)
{
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double d = (double)v;
        size_t u = 0;
        while (d >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
                d /= 1024;
                u++;
        }
        snprintf(out, n, u ? "%.1f%s" : "%.0f%s", d, units[u]);
}

static double cpu_percent(const struct session_stats *a, const struct session_stats *b)
{
        if (!a || !b->cg.has_cpu || b->sampled_ms <= a->sampled_ms ||
            b->cg.cpu_usec < a->cg.cpu_usec)
                return -1;
        return (double)(b->cg.cpu_usec - a->cg.cpu_usec) * 100.0 /
               ((double)(b->sampled_ms - a->sampled_ms) * 1000.0);
}

static void json_limit(struct buf *b, const char *key, uint64_t v)
{
        if (v == UINT64_MAX)
                buf_printf(b, ",\"%s\":null", key);
        else
                buf_printf(b, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void json_source(struct buf *b, int v)
{
        buf_puts(b, ",\"source\":");
        if (source_name(v))
                json_cstr(b, source_name(v));
        else
                buf_puts(b, "null");
}

static void format_json(struct buf *b, const struct session_stats *s, double pct)
{
        const struct cgroup_usage *u = &s->cg;
        buf_printf(b, "{\"id\":\"%s\",\"paused\":%s,\"cpu\":{", s->id,
                   s->paused ? "true" : "false");
        if (u->has_cpu)
                buf_printf(b, "\"usage_usec\":%llu", (unsigned long long)u->cpu_usec);
        else
                buf_puts(b, "\"usage_usec\":null");
        if (pct >= 0)
                buf_printf(b, ",\"percent\":%.2f", pct);
        else
                buf_puts(b, ",\"percent\":null");
        if (u->cpus_milli)
                buf_printf(b, ",\"limit_cpus\":%.3f", (double)u->cpus_milli / 1000.0);
        else
                buf_puts(b, ",\"limit_cpus\":null");
        json_source(b, u->has_cpu);
        buf_puts(b, "},\"memory\":");
        if (u->has_memory) {
                buf_printf(b, "{\"current\":%llu", (unsigned long long)u->mem_current);
                json_limit(b, "peak", u->has_mem_peak ? u->mem_peak : UINT64_MAX);
                json_limit(b, "limit", u->mem_limit);
                json_source(b, u->has_memory);
                buf_puts(b, "}");
        } else
                buf_puts(b, "null");
        buf_puts(b, ",\"pids\":");
        if (u->has_pids) {
                buf_printf(b, "{\"current\":%llu", (unsigned long long)u->pids_current);
                json_limit(b, "limit", u->pids_limit);
                json_source(b, u->has_pids);
                buf_puts(b, "}");
        } else
                buf_puts(b, "null");
        buf_puts(b, ",\"disk\":");
        if (s->has_disk)
                buf_printf(b,
                           "{\"used_bytes\":%llu,\"total_bytes\":%llu,\"limit_bytes\":%llu,"
                           "\"inodes_used\":%llu,\"inodes_total\":%llu}",
                           (unsigned long long)s->disk_used, (unsigned long long)s->disk_total,
                           (unsigned long long)s->disk_limit, (unsigned long long)s->inodes_used,
                           (unsigned long long)s->inodes_total);
        else
                buf_puts(b, "null");
        buf_puts(b, ",\"network\":");
        if (s->net_proxy)
                buf_printf(b,
                           "{\"bytes_in\":%llu,\"bytes_out\":%llu,\"connections\":%llu,"
                           "\"complete\":%s}",
                           (unsigned long long)s->net_bytes_in,
                           (unsigned long long)s->net_bytes_out, (unsigned long long)s->net_conns,
                           s->net_records_dropped ? "false" : "true");
        else
                buf_puts(b, "null");
        buf_puts(b, "}\n");
}

#define HEADER_FMT "%-20s %-7s %-8s %-10s %-21s %-9s %-11s %-21s %-17s %s\n"

static void format_header(struct buf *b)
{
        buf_printf(b, HEADER_FMT, "SESSION", "STATE", "CPU %", "CPU TIME", "MEM USAGE / LIMIT",
                   "MEM PEAK", "PIDS", "DISK / LIMIT", "INODES", "NET IN / OUT");
}

static void format_text(struct buf *b, const struct session_stats *s, double pct)
{
        const struct cgroup_usage *u = &s->cg;
        char cpu[16] = "-", time_s[24] = "-", mem[48] = "-", cur[16], lim[16], peak[16] = "-";
        char pids[32] = "-", disk[48] = "-", inodes[48] = "-", net[48] = "-";
        if (pct >= 0)
                snprintf(cpu, sizeof(cpu), "%.2f%%", pct);
        if (u->has_cpu)
                snprintf(time_s, sizeof(time_s), "%.3fs", (double)u->cpu_usec / 1e6);
        if (u->has_memory) {
                human_size(cur, sizeof(cur), u->mem_current);
                if (u->mem_limit == UINT64_MAX)
                        snprintf(lim, sizeof(lim), "none");
                else
                        human_size(lim, sizeof(lim), u->mem_limit);
                snprintf(mem, sizeof(mem), "%s / %s", cur, lim);
                if (u->has_mem_peak)
                        human_size(peak, sizeof(peak), u->mem_peak);
        }
        if (u->has_pids && u->pids_limit == UINT64_MAX)
                snprintf(pids, sizeof(pids), "%llu / none", (unsigned long long)u->pids_current);
        else if (u->has_pids)
                snprintf(pids, sizeof(pids), "%llu / %llu", (unsigned long long)u->pids_current,
                         (unsigned long long)u->pids_limit);
        if (s->has_disk) {
                human_size(cur, sizeof(cur), s->disk_used);
                human_size(lim, sizeof(lim), s->disk_total);
                snprintf(disk, sizeof(disk), "%s / %s", cur, lim);
                snprintf(inodes, sizeof(inodes), "%llu / %llu", (unsigned long long)s->inodes_used,
                         (unsigned long long)s->inodes_total);
        }
        if (s->net_proxy) {
                human_size(cur, sizeof(cur), s->net_bytes_in);
                human_size(lim, sizeof(lim), s->net_bytes_out);
                snprintf(net, sizeof(net), "%s / %s", cur, lim);
        }
        buf_printf(b, HEADER_FMT, s->id, s->paused ? "paused" : "running", cpu, time_s, mem, peak,
                   pids, disk, inodes, net);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int print_sample(struct cli *cli, const struct session_stats *prev,
                        const struct session_stats *s, bool header)
{
        _cleanup_buf_ struct buf b = {0};
        double pct = cpu_percent(prev, s);
        if (cli->json)
                format_json(&b, s, pct);
        else {
                if (header)
                        format_header(&b);
                format_text(&b, s, pct);
        }
        return cli_print(cli, &b);
}

int cmd_stats(struct cli *cli, int argc, char **argv)
{
        bool watch = false;
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", stats_options, NULL)) != -1) {
                int k = args_common(cli, "stats", opt);
                if (k == -1)
                        return 0;
                if (k == 0 && opt == OPT_WATCH)
                        watch = true;
                else if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return cli_finish_error(cli, "stats");
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "stats");
        if (optind + 1 != argc) {
                sbx_usage(&cli->err, optind >= argc ? "missing session ID"
                                                    : "too many arguments: stats takes one ID");
                return cli_finish_error(cli, "stats");
        }
        const char *id = argv[optind];
        struct session_stats prev = {0}, cur = {0};
        if (session_stats_read(id, &prev, &cli->err) < 0)
                return cli_finish_error(cli, "stats");
        for (bool first = true;; first = false) {
                sleep_ms(watch ? 1000 : 250);
                cur = prev; /* the network counters go on from where the last sample ended */
                if (session_stats_read(id, &cur, &cli->err) < 0 ||
                    print_sample(cli, &prev, &cur, first) < 0)
                        return cli_finish_error(cli, "stats");
                if (!watch)
                        return 0;
                prev = cur;
        }
}
