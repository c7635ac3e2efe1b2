/* SPDX-License-Identifier: MIT */
/* src/launch/uidrange.c: which pool slots the host's id files and processes rule out. */
#include <string.h>

#include "launch/uidrange.h"
#include "unit.h"

#define SLOT(i) (UIDRANGE_POOL_START + (uint64_t)(i)*UIDRANGE_SLOT_SIZE)

static unsigned count_busy(const struct uid_busy *b)
{
        unsigned n = 0;
        for (uint32_t i = 0; i < UIDRANGE_SLOTS; i++)
                n += uid_busy_test(b, i);
        return n;
}

static void test_mark(void)
{
        struct uid_busy b = {0};
        uid_busy_mark(&b, 100000, 65536);              /* below the pool */
        uid_busy_mark(&b, SLOT(UIDRANGE_SLOTS), 1000); /* above it */
        uid_busy_mark(&b, SLOT(3), 0);
        CHECK(count_busy(&b) == 0);
        uid_busy_mark(&b, SLOT(0) - 1, 2); /* straddles the pool's start */
        CHECK(uid_busy_test(&b, 0) && count_busy(&b) == 1);
        uid_busy_mark(&b, SLOT(5) - 1, 2); /* the last id of 4 and the first of 5 */
        CHECK(uid_busy_test(&b, 4) && uid_busy_test(&b, 5) && count_busy(&b) == 3);
        uid_busy_mark(&b, SLOT(UIDRANGE_SLOTS) - 1, 10);
        CHECK(uid_busy_test(&b, UIDRANGE_SLOTS - 1) && count_busy(&b) == 4);
        CHECK(uid_busy_test(&b, UIDRANGE_SLOTS)); /* out of the pool: never free */
        uid_busy_mark(&b, 0, UINT64_C(1) << 32);  /* everything */
        CHECK(count_busy(&b) == UIDRANGE_SLOTS);
}

static void test_subid(void)
{
        struct uid_busy b = {0};
        char text[256];
        snprintf(text, sizeof(text),
                 "alice:100000:65536\nbob:%llu:1\n1001:%llu:%u\nbad line\nx:%llu\n:%llu:9:\n"
                 "y:%llu:99999999999\nz:%llu:5",
                 (unsigned long long)SLOT(7) + 5, (unsigned long long)SLOT(9),
                 UIDRANGE_SLOT_SIZE + 1, (unsigned long long)SLOT(20), (unsigned long long)SLOT(21),
                 (unsigned long long)SLOT(22), (unsigned long long)SLOT(30));
        uid_busy_mark_subid(&b, text, strlen(text));
        /* bob's one id, 1001's range over 9 and one id of 10, the empty name's 21, the last
         * line without a newline; "x" lacks a count, y's count has too many digits */
        CHECK(uid_busy_test(&b, 7) && uid_busy_test(&b, 9) && uid_busy_test(&b, 10));
        CHECK(uid_busy_test(&b, 21) && uid_busy_test(&b, 30));
        CHECK(!uid_busy_test(&b, 20) && !uid_busy_test(&b, 22) && !uid_busy_test(&b, 11));
        CHECK(count_busy(&b) == 5);
}

static void test_ids_and_status(void)
{
        struct uid_busy b = {0};
        char text[512];
        snprintf(text, sizeof(text), "root:x:0:0::/root:/bin/sh\nsvc:x:%llu:5::/:/bin/false\nbad\n",
                 (unsigned long long)SLOT(2) + 77);
        uid_busy_mark_ids(&b, text, strlen(text));
        CHECK(uid_busy_test(&b, 2) && count_busy(&b) == 1);
        snprintf(text, sizeof(text),
                 "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t0\t%llu\t0\t0\n"
                 "Gid:\t%llu\t0\t0\t%llu\nGroups:\t%llu\n",
                 (unsigned long long)SLOT(40), (unsigned long long)SLOT(41) + 3,
                 (unsigned long long)SLOT(42), (unsigned long long)SLOT(43));
        uid_busy_mark_status(&b, text, strlen(text));
        /* every id of Uid: and Gid:, not the supplementary groups */
        CHECK(uid_busy_test(&b, 40) && uid_busy_test(&b, 41) && uid_busy_test(&b, 42));
        CHECK(!uid_busy_test(&b, 43) && count_busy(&b) == 4);
}

/* A nested user namespace maps only some ids: the slots it lacks (whole or in part) are taken. */
static void test_unmapped(void)
{
        struct uid_busy b = {0};
        static const char all[] = "         0          0 4294967295\n";
        CHECK(uid_busy_mark_unmapped(&b, all, sizeof(all) - 1) == UIDRANGE_SLOTS);
        CHECK(!uid_busy_test(&b, 0) && !uid_busy_test(&b, UIDRANGE_SLOTS - 1));
        struct uid_busy small = {0};
        static const char some[] = "0 0 200000\n";
        CHECK(uid_busy_mark_unmapped(&small, some, sizeof(some) - 1) == 0);
        CHECK(uid_busy_test(&small, 0));
        /* exactly slot 1 and half of slot 2 mapped: slot 1 free, the others taken */
        struct uid_busy part = {0};
        char text[128];
        snprintf(text, sizeof(text), "0 0 1\n%u 5000 %u\n",
                 UIDRANGE_POOL_START + UIDRANGE_SLOT_SIZE,
                 UIDRANGE_SLOT_SIZE + UIDRANGE_SLOT_SIZE / 2);
        CHECK(uid_busy_mark_unmapped(&part, text, strlen(text)) == 1);
        CHECK(uid_busy_test(&part, 0) && !uid_busy_test(&part, 1) && uid_busy_test(&part, 2));
}

int main(void)
{
        test_mark();
        test_unmapped();
        test_subid();
        test_ids_and_status();
        return unit_done();
}
