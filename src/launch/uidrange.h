/* SPDX-License-Identifier: MIT */
/*
 * The host uid/gid range of a root-run session. Every such session takes a slot of its own from
 * a pool far above the ranges useradd hands out for /etc/subuid and /etc/subgid (100000 up to
 * 600100000 by default): a slot listed there for anybody, owned by a user or group in
 * /etc/passwd or /etc/group, used by any live process, or locked by another live session is
 * never taken. Host uid ids sharing would let the owner of a subordinate range (or another
 * session) signal, renice or ptrace a session's processes and share its per-uid kernel counters.
 *
 * A slot is SLOT_SIZE ids: the first UIDRANGE_MAP_COUNT are what uid/gid 0.. inside map to, the
 * next one is the uid and gid of the session's host-side helpers (the egress proxy), mapped in no
 * namespace, so no sandbox process has it. The slot stays locked (flock on a file in
 * UIDRANGE_LOCK_DIR) as long as its holder lives: a supervisor that dies frees it by dying.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/error.h"

#define UIDRANGE_POOL_START 0x40000000u
#define UIDRANGE_SLOT_SIZE 0x20000u
#define UIDRANGE_SLOTS 0x1800u /* up to 0x6fffffff, as nspawn's own pool */
#define UIDRANGE_MAP_COUNT 0x10000u
#define UIDRANGE_LOCK_DIR "/run/sbx-uidrange"

struct uid_slot {
        uint32_t start, count; /* uid/gid 0 inside is host start; count ids are mapped */
        uint32_t helper;       /* host uid and gid of the session's host-side helpers; 0: none */
        uint32_t slot;         /* the locked slot's first id; 0: none (not root) */
        int lock_fd;
        int dir_fd; /* the lock directory: let go by fd, also from inside a session's mount ns */
};
#define UID_SLOT_INIT                                                                              \
        {                                                                                          \
                .lock_fd = -1, .dir_fd = -1                                                        \
        }

/* Pool slots that must not be taken, one bit a slot. */
struct uid_busy {
        uint64_t bits[UIDRANGE_SLOTS / 64];
};

/* Mark every slot that ids first .. first+count-1 touch (pure; unit-tested). */
void uid_busy_mark(struct uid_busy *b, uint64_t first, uint64_t count);
bool uid_busy_test(const struct uid_busy *b, uint32_t index);
/* Mark every slot that the user namespace whose uid_map (or gid_map) text is given does not map
 * whole: a map cannot name an id its own namespace lacks. Returns how many slots stay free. */
uint32_t uid_busy_mark_unmapped(struct uid_busy *b, const char *text, size_t len);
/* /etc/subuid or /etc/subgid text: "name:start:count" lines; malformed lines are skipped. */
void uid_busy_mark_subid(struct uid_busy *b, const char *text, size_t len);
/* /etc/passwd or /etc/group text: the third field of each line, as one id. */
void uid_busy_mark_ids(struct uid_busy *b, const char *text, size_t len);
/* /proc/<pid>/status text: the four ids of its Uid: and Gid: lines. */
void uid_busy_mark_status(struct uid_busy *b, const char *text, size_t len);

/*
 * The session's range. As root: a slot taken and locked from the pool (its first ids are the
 * map, unless [security] uid_range names one explicitly, which is then used as it is); as a
 * user: the caller's own uid, count 1, no slot. Exit 4 when no slot is free.
 */
int uid_slot_take(const struct sbx_config *c, struct uid_slot *ret, struct sbx_error *e);
/* Give the slot back: only once no process of the session is left. */
void uid_slot_release(struct uid_slot *s);
/* Let go of this process's hold on the slot without giving it back: a forked process that shares
 * the lock (its fd, the same open file) gives it back later. */
void uid_slot_forget(struct uid_slot *s);
