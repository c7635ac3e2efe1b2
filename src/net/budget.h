/* SPDX-License-Identifier: MIT */
/*
 * The budget of the proxy's "net" audit records (docs/DESIGN.md, "Audit log"): a sandbox
 * decides how many connections it makes, so it must not decide how much the host's disk
 * takes. At most NET_RECORDS_MAX per session and NET_RECORDS_PER_S a second; what is left
 * out is counted and reported in a "net_dropped" record at most once a second. Pure logic
 * (the caller passes the time): unit-tested in tests/unit/test_budget.c.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define NET_RECORDS_MAX 10000
#define NET_RECORDS_PER_S 100
#define NET_DROPPED_EVERY_MS 1000

struct net_budget {
        uint64_t written;                 /* records written in the session */
        uint64_t second_ms, second_count; /* the current one-second window */
        uint64_t dropped;                 /* left out since the last report */
        uint64_t reported_ms;             /* when the last report was written */
        bool reported;                    /* ...if any */
};

/* May one more record be written at now_ms? Counts it as written or dropped. */
bool net_budget_take(struct net_budget *b, uint64_t now_ms);

/* Is a "net_dropped" report due at now_ms (something dropped, none reported for a second)?
 * force: the proxy is exiting, report whatever was dropped. */
bool net_budget_report_due(const struct net_budget *b, uint64_t now_ms, bool force);

/* The report was written: the count starts again from 0. */
void net_budget_reported(struct net_budget *b, uint64_t now_ms);

/* Why records are being dropped, for the report. */
const char *net_budget_reason(const struct net_budget *b);
