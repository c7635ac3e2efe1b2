/* SPDX-License-Identifier: MIT */
#include "budget.h"

bool net_budget_take(struct net_budget *b, uint64_t now_ms)
{
        if (b->second_count == 0 || now_ms - b->second_ms >= 1000) {
                b->second_ms = now_ms;
                b->second_count = 0;
        }
        if (b->written < NET_RECORDS_MAX && b->second_count < NET_RECORDS_PER_S) {
                b->written++;
                b->second_count++;
                return true;
        }
        b->dropped++;
        return false;
}

bool net_budget_report_due(const struct net_budget *b, uint64_t now_ms, bool force)
{
        if (b->dropped == 0)
                return false;
        return force || !b->reported || now_ms - b->reported_ms >= NET_DROPPED_EVERY_MS;
}

void net_budget_reported(struct net_budget *b, uint64_t now_ms)
{
        b->dropped = 0;
        b->reported_ms = now_ms;
        b->reported = true;
}

const char *net_budget_reason(const struct net_budget *b)
{
        return b->written >= NET_RECORDS_MAX
                   ? "the session's net records reached their limit (10000)"
                   : "more than 100 net records a second";
}
