/* SPDX-License-Identifier: MIT */
/* src/net/budget.c: the budget of the egress proxy's "net" audit records. */
#include <string.h>

#include "net/budget.h"
#include "unit.h"

/* n records asked for at now_ms: how many may be written. */
static unsigned take(struct net_budget *b, unsigned n, uint64_t now_ms)
{
        unsigned ok = 0;
        for (unsigned i = 0; i < n; i++)
                ok += net_budget_take(b, now_ms);
        return ok;
}

static void test_rate(void)
{
        struct net_budget b = {0};
        CHECK(!net_budget_report_due(&b, 0, true)); /* nothing dropped: nothing to report */
        CHECK(take(&b, 1000, 5000) == NET_RECORDS_PER_S);
        CHECK(b.dropped == 1000 - NET_RECORDS_PER_S);
        CHECK(net_budget_report_due(&b, 5000, false)); /* the first report at once */
        net_budget_reported(&b, 5000);
        CHECK(b.dropped == 0);
        CHECK(take(&b, 10, 5999) == 0); /* the same second */
        CHECK(!net_budget_report_due(&b, 5999, false));
        CHECK(net_budget_report_due(&b, 5999, true)); /* at exit: whatever is left */
        CHECK(net_budget_report_due(&b, 6000, false));
        net_budget_reported(&b, 6000);
        CHECK(take(&b, 1000, 6000) == NET_RECORDS_PER_S); /* a new second */
        CHECK(strstr(net_budget_reason(&b), "a second") != NULL);
}

static void test_total(void)
{
        struct net_budget b = {0};
        unsigned written = 0;
        for (uint64_t s = 0; s < 200; s++)
                written += take(&b, 150, s * 1000);
        CHECK(written == NET_RECORDS_MAX);
        CHECK(b.written == NET_RECORDS_MAX);
        CHECK(b.dropped == 200 * 150 - NET_RECORDS_MAX);
        CHECK(take(&b, 1, 10000000) == 0); /* never again, however slowly */
        CHECK(strstr(net_budget_reason(&b), "limit") != NULL);
}

int main(void)
{
        test_rate();
        test_total();
        return unit_done();
}
