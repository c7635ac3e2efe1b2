/* SPDX-License-Identifier: MIT */
/* Picking and locking a root-run session's host uid/gid range (uidrange.h). */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "uidrange.h"

/* Lock attempts on slots that another session holds, before giving up. */
#define MAX_HELD_TRIES 64

void uid_busy_mark(struct uid_busy *b, uint64_t first, uint64_t count)
{
        const uint64_t pool_end =
            UIDRANGE_POOL_START + (uint64_t)UIDRANGE_SLOTS * UIDRANGE_SLOT_SIZE;
        if (count == 0)
                return;
        uint64_t last = first + count - 1;
        if (last < UIDRANGE_POOL_START || first >= pool_end)
                return;
        if (first < UIDRANGE_POOL_START)
                first = UIDRANGE_POOL_START;
        if (last >= pool_end)
                last = pool_end - 1;
        for (uint64_t i = (first - UIDRANGE_POOL_START) / UIDRANGE_SLOT_SIZE;
             i <= (last - UIDRANGE_POOL_START) / UIDRANGE_SLOT_SIZE; i++)
                b->bits[i / 64] |= UINT64_C(1) << (i % 64);
}

bool uid_busy_test(const struct uid_busy *b, uint32_t index)
{
        return index >= UIDRANGE_SLOTS || (b->bits[index / 64] >> (index % 64)) & 1;
}

/* A decimal number of up to 10 digits at *p (moved past it); false if there is none. */
static bool take_number(const char **p, const char *end, uint64_t *ret)
{
        uint64_t v = 0;
        const char *s = *p;
        while (s < end && *s == ' ')
                s++;
        const char *digits = s;
        while (s < end && isdigit((unsigned char)*s) && s - digits < 10)
                v = v * 10 + (uint64_t)(*s++ - '0');
        if (s == digits || (s < end && isdigit((unsigned char)*s)))
                return false;
        *p = s;
        *ret = v;
        return true;
}

/* Each line's fields after skip ':'-separated ones; fn gets the line's rest. */
static const char *after_fields(const char *p, const char *eol, int skip)
{
        for (int i = 0; i < skip; i++) {
                p = memchr(p, ':', (size_t)(eol - p));
                if (!p)
                        return NULL;
                p++;
        }
        return p;
}

void uid_busy_mark_subid(struct uid_busy *b, const char *text, size_t len)
{
        const char *end = text + len;
        for (const char *p = text; p < end;) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                if (!eol)
                        eol = end;
                const char *f = after_fields(p, eol, 1);
                uint64_t start, count;
                if (f && take_number(&f, eol, &start) && f < eol && *f == ':' &&
                    (f++, take_number(&f, eol, &count)))
                        uid_busy_mark(b, start, count);
                p = eol + 1;
        }
}

void uid_busy_mark_ids(struct uid_busy *b, const char *text, size_t len)
{
        const char *end = text + len;
        for (const char *p = text; p < end;) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                if (!eol)
                        eol = end;
                const char *f = after_fields(p, eol, 2);
                uint64_t id;
                if (f && take_number(&f, eol, &id))
                        uid_busy_mark(b, id, 1);
                p = eol + 1;
        }
}

void uid_busy_mark_status(struct uid_busy *b, const char *text, size_t len)
{
        const char *end = text + len;
        for (const char *p = text; p < end;) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                if (!eol)
                        eol = end;
                if (eol - p > 4 && (memcmp(p, "Uid:", 4) == 0 || memcmp(p, "Gid:", 4) == 0)) {
                        const char *f = p + 4;
                        uint64_t id;
                        while (f < eol && (*f == '\t' || *f == ' '))
                                f++;
                        while (take_number(&f, eol, &id)) {
                                uid_busy_mark(b, id, 1);
                                while (f < eol && (*f == '\t' || *f == ' '))
                                        f++;
                        }
                }
                p = eol + 1;
        }
}

uint32_t uid_busy_mark_unmapped(struct uid_busy *b, const char *text, size_t len)
{
        struct {
                uint64_t first, count;
        } ext[340]; /* the kernel's limit of lines in an id map */
        size_t n = 0;
        const char *p = text, *end = text + len;
        while (p < end && n < ARRAY_SIZE(ext)) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                eol = eol ? eol : end;
                uint64_t inside, outside, count;
                const char *q = p;
                if (take_number(&q, eol, &inside) && take_number(&q, eol, &outside) &&
                    take_number(&q, eol, &count))
                        ext[n].first = inside, ext[n++].count = count;
                p = eol + 1;
        }
        uint32_t free_slots = 0;
        for (uint32_t i = 0; i < UIDRANGE_SLOTS; i++) {
                uint64_t first = UIDRANGE_POOL_START + (uint64_t)i * UIDRANGE_SLOT_SIZE;
                bool mapped = false;
                for (size_t k = 0; k < n && !mapped; k++)
                        mapped = ext[k].first <= first &&
                                 first + UIDRANGE_SLOT_SIZE <= ext[k].first + ext[k].count;
                if (!mapped)
                        uid_busy_mark(b, first, UIDRANGE_SLOT_SIZE);
                free_slots += mapped && !uid_busy_test(b, i);
        }
        return free_slots;
}

/* The slots this process's user namespace maps whole, for uids and gids: in the initial
 * namespace every one; nested in a container's, often none. 0, or exit 4 saying why. */
static int mark_unmapped(struct uid_busy *b, struct sbx_error *e)
{
        static const char *const maps[] = {"/proc/self/uid_map", "/proc/self/gid_map"};
        for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
                _cleanup_buf_ struct buf text = {0};
                _cleanup_close_ int fd = open(maps[i], O_RDONLY | O_CLOEXEC);
                int r = fd < 0 ? negerrno() : read_all(fd, &text, 1 << 20);
                if (r < 0)
                        return sbx_unsupported(e, -r, "failed to read '%s'", maps[i]);
                if (uid_busy_mark_unmapped(b, text.data, text.len) == 0)
                        return sbx_unsupported(
                            e, 0,
                            "no host uid range for the session: this user namespace does not map "
                            "the ids %u to %u that root-run sessions take their ranges from (%s); "
                            "map them in it, or run sbx as an unprivileged user there",
                            UIDRANGE_POOL_START,
                            UIDRANGE_POOL_START + UIDRANGE_SLOTS * UIDRANGE_SLOT_SIZE - 1, maps[i]);
        }
        return 0;
}

/* A host file of ids (root's own, a symlink on some systems): a missing one lists nothing, an
 * unreadable one fails the pick. */
static int mark_file(struct uid_busy *b, const char *path, bool subid, struct sbx_error *e)
{
        _cleanup_buf_ struct buf text = {0};
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return 0;
        int r = fd < 0 ? negerrno() : read_all(fd, &text, 64 << 20);
        if (r < 0)
                return sbx_unsupported(e, -r, "failed to read '%s'", path);
        (subid ? uid_busy_mark_subid : uid_busy_mark_ids)(b, text.data, text.len);
        return 0;
}

/*
 * The ids of every live process. full: all of them (real, effective, saved, fs), from the
 * first part of each status file: the Uid: and Gid: lines come before the first kilobyte ends
 * (Name is escaped to at most 64 bytes). Else only the effective ones, from the owner of each
 * /proc/PID (a stat, about ten times cheaper than generating status). A process that ends
 * meanwhile is skipped.
 */
static int mark_procs(struct uid_busy *b, bool full, struct sbx_error *e)
{
        _cleanup_closedir_ DIR *d = opendir("/proc");
        if (!d)
                return sbx_unsupported(e, errno, "failed to read '/proc'");
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                if (!full) {
                        struct stat st;
                        if (fstatat(dirfd(d), de->d_name, &st, 0) == 0) {
                                uid_busy_mark(b, st.st_uid, 1);
                                uid_busy_mark(b, st.st_gid, 1);
                        }
                        continue;
                }
                char path[300], text[1024];
                snprintf(path, sizeof(path), "%s/status", de->d_name);
                _cleanup_close_ int fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                ssize_t n = RETRY_EINTR(read(fd, text, sizeof(text)));
                if (n > 0)
                        uid_busy_mark_status(b, text, (size_t)n);
        }
        return 0;
}

/*
 * The effective-id scan's result, shared by the creates that follow it for PROCSCAN_TTL_NS: a
 * scan stats every /proc/PID, so without it a create cost O(processes) (~9 ms with 1,000 idle
 * sessions here) and 1,000 creates O(n^2). The file lives in the root-only lock directory.
 * What the sharing gives up: a process of another tool that starts on the pool's ids less than
 * PROCSCAN_TTL_NS before a create is not seen, as one that starts after a create's scan never
 * is; sbx's own sessions are held off by their locks, not by the scan.
 */
#define PROCSCAN_FILE "procscan"
#define PROCSCAN_TTL_NS 1000000000ULL
struct procscan {
        uint64_t magic;               /* PROCSCAN_MAGIC: this layout */
        uint64_t pool[3];             /* UIDRANGE_POOL_START, _SLOT_SIZE, _SLOTS */
        uint64_t pidns[2], userns[2]; /* the scanner's namespaces (st_dev, st_ino): whose /proc and
                                         whose ids the marks are */
        uint64_t when;                /* CLOCK_BOOTTIME, ns */
        struct uid_busy busy;
};
#define PROCSCAN_MAGIC 0x7362787363616e32ULL /* "sbxscan2" */

static void busy_merge(struct uid_busy *b, const struct uid_busy *more)
{
        for (size_t i = 0; i < ARRAY_SIZE(b->bits); i++)
                b->bits[i] |= more->bits[i];
}

static uint64_t boottime_ns(void)
{
        struct timespec ts = {0};
        (void)clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* What a scan made here is for: this pool, seen from these namespaces. false: unknown. */
static bool procscan_header(struct procscan *ps)
{
        struct stat pidns, userns;
        if (stat("/proc/self/ns/pid", &pidns) < 0 || stat("/proc/self/ns/user", &userns) < 0)
                return false;
        ps->magic = PROCSCAN_MAGIC;
        ps->pool[0] = UIDRANGE_POOL_START;
        ps->pool[1] = UIDRANGE_SLOT_SIZE;
        ps->pool[2] = UIDRANGE_SLOTS;
        ps->pidns[0] = pidns.st_dev;
        ps->pidns[1] = pidns.st_ino;
        ps->userns[0] = userns.st_dev;
        ps->userns[1] = userns.st_ino;
        return true;
}

/* A recent scan's marks into b: true, or false when there is none young enough made from
 * where this process stands. */
static bool procscan_load(int dirfd, struct uid_busy *b)
{
        struct procscan ps, want = {0};
        struct stat st;
        _cleanup_close_ int fd = openat(dirfd, PROCSCAN_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
            st.st_size != (off_t)sizeof(ps) ||
            RETRY_EINTR(read(fd, &ps, sizeof(ps))) != (ssize_t)sizeof(ps) ||
            !procscan_header(&want) || memcmp(&ps, &want, offsetof(struct procscan, when)) != 0)
                return false;
        uint64_t now = boottime_ns();
        if (ps.when > now || now - ps.when > PROCSCAN_TTL_NS)
                return false;
        busy_merge(b, &ps.busy);
        return true;
}

/* Best effort: a create that cannot share its scan only makes the next one scan again. A
 * file of its own (random name, O_EXCL) renamed over the shared one: readers see a whole
 * scan or the one before. */
static void procscan_save(int dirfd, const struct uid_busy *b, uint64_t when)
{
        struct procscan ps = {0};
        uint64_t rnd;
        if (!procscan_header(&ps) || getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                return;
        ps.when = when;
        ps.busy = *b;
        char tmp[48];
        snprintf(tmp, sizeof(tmp), PROCSCAN_FILE ".%016llx", (unsigned long long)rnd);
        _cleanup_close_ int fd =
            openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        if (RETRY_EINTR(write(fd, &ps, sizeof(ps))) != (ssize_t)sizeof(ps) ||
            renameat(dirfd, tmp, dirfd, PROCSCAN_FILE) < 0)
                (void)unlinkat(dirfd, tmp, 0);
}

/* The processes' ids into b: from the shared scan when it is young and full is not asked for,
 * else by a scan of /proc that is then shared. */
static int mark_procs_shared(int dirfd, struct uid_busy *b, bool full, struct sbx_error *e)
{
        if (!full && procscan_load(dirfd, b))
                return 0;
        struct uid_busy seen = {0};
        uint64_t when = boottime_ns(); /* before: what starts during the scan may be missed */
        int r = mark_procs(&seen, full, e);
        if (r < 0)
                return r;
        procscan_save(dirfd, &seen, when);
        busy_merge(b, &seen);
        return 0;
}

/* *ret_made: the directory did not exist (a boot, or somebody removed it: the files of live
 * sessions may be gone with it). */
static int open_lock_dir(bool *ret_made, struct sbx_error *e)
{
        *ret_made = mkdir(UIDRANGE_LOCK_DIR, 0700) == 0;
        if (!*ret_made && errno != EEXIST)
                return sbx_unsupported(e, errno, "failed to create '%s'", UIDRANGE_LOCK_DIR);
        _cleanup_close_ int fd =
            open(UIDRANGE_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return sbx_unsupported(e, errno, "failed to open '%s'", UIDRANGE_LOCK_DIR);
        if (st.st_uid != 0 || (st.st_mode & 022))
                return sbx_unsupported(e, EPERM, "'%s' is not root's own directory",
                                       UIDRANGE_LOCK_DIR);
        return TAKE_FD(fd);
}

/*
 * The lock of one slot: an fd holding flock on dirfd/<first id in hex>, or -EWOULDBLOCK when a
 * live holder has it. A holder removes the file before it lets go, so a lock taken on a file
 * that is no longer the one at the path is taken again on the new one. *ret_stale: the file
 * was there already, unlocked: its holder died without letting go (see pick_slot).
 */
static int lock_slot(int dirfd, uint32_t first, bool *ret_stale)
{
        char name[16];
        snprintf(name, sizeof(name), "%08x", first);
        for (int tries = 0; tries < 8; tries++) {
                _cleanup_close_ int fd =
                    openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                *ret_stale = fd < 0 && errno == EEXIST;
                if (*ret_stale)
                        fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negerrno();
                if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                        return negerrno();
                struct stat held, now;
                if (fstat(fd, &held) < 0)
                        return negerrno();
                if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                    held.st_dev == now.st_dev && held.st_ino == now.st_ino)
                        return TAKE_FD(fd);
        }
        return -EWOULDBLOCK;
}

static void unlock_slot(int dirfd, uint32_t first, int *fd)
{
        if (*fd < 0)
                return;
        char name[16];
        snprintf(name, sizeof(name), "%08x", first);
        (void)unlinkat(dirfd, name, 0); /* still locked: nobody holds the file */
        closep(fd);
}

/*
 * From a random slot on, the first that no file lists and that we can lock; then the live
 * processes are looked at once (after the first lock, so that a session which ended just
 * before, and whose processes are still going, is seen), and a slot one of them uses is given
 * back for the next. A holder lets go (removes its file) only once every process with one of
 * its ids is gone (session_kill), so for sbx's own sessions the lock suffices; the scan is
 * for processes of other tools (another runtime's user namespace on ids of the pool). Every
 * id of every process is read only when the lock cannot be trusted (its file was left by a
 * holder that died, or the lock directory is new); otherwise the effective ids, by a stat of
 * each /proc/PID: reading every status file cost more than the rest of a create's choice. That
 * scan is shared for a second (procscan_load).
 */
static int pick_slot(struct uid_slot *s, struct sbx_error *e)
{
        struct uid_busy busy = {0};
        int r = mark_unmapped(&busy, e);
        if (r == 0)
                r = mark_file(&busy, "/etc/subuid", true, e);
        if (r == 0)
                r = mark_file(&busy, "/etc/subgid", true, e);
        if (r == 0)
                r = mark_file(&busy, "/etc/passwd", false, e);
        if (r == 0)
                r = mark_file(&busy, "/etc/group", false, e);
        if (r < 0)
                return r;
        bool dir_made;
        _cleanup_close_ int dirfd = open_lock_dir(&dir_made, e);
        if (dirfd < 0)
                return dirfd;
        uint32_t at;
        if (getrandom(&at, sizeof(at), 0) != (ssize_t)sizeof(at))
                return sbx_internal(e, errno, "failed to read the kernel's random source");
        int scanned = 0; /* 1: effective ids, 2: all ids */
        int held = 0;
        for (uint32_t k = 0; k < UIDRANGE_SLOTS && held < MAX_HELD_TRIES; k++) {
                uint32_t i = (at + k) % UIDRANGE_SLOTS;
                if (uid_busy_test(&busy, i))
                        continue;
                uint32_t first = UIDRANGE_POOL_START + i * UIDRANGE_SLOT_SIZE;
                bool stale;
                int fd = lock_slot(dirfd, first, &stale);
                if (fd == -EWOULDBLOCK) {
                        held++;
                        continue;
                }
                if (fd < 0)
                        return sbx_unsupported(e, -fd, "failed to lock a uid range in '%s'",
                                               UIDRANGE_LOCK_DIR);
                int need = stale || dir_made ? 2 : 1;
                if (scanned < need && (r = mark_procs_shared(dirfd, &busy, need == 2, e)) < 0) {
                        unlock_slot(dirfd, first, &fd);
                        return r;
                }
                scanned = scanned > need ? scanned : need;
                if (uid_busy_test(&busy, i)) {
                        unlock_slot(dirfd, first, &fd);
                        continue;
                }
                s->slot = first;
                s->lock_fd = fd;
                s->dir_fd = TAKE_FD(dirfd);
                return 0;
        }
        return sbx_unsupported(e, EAGAIN,
                               "no free host uid range for the session: the %u ranges of %u ids "
                               "from %u are listed in /etc/subuid, /etc/subgid, /etc/passwd or "
                               "/etc/group, or in use",
                               UIDRANGE_SLOTS, UIDRANGE_SLOT_SIZE, UIDRANGE_POOL_START);
}

int uid_slot_take(const struct sbx_config *c, struct uid_slot *ret, struct sbx_error *e)
{
        *ret = (struct uid_slot)UID_SLOT_INIT;
        if (geteuid() != 0) {
                ret->start = (uint32_t)geteuid();
                ret->count = 1;
                return 0;
        }
        int r = pick_slot(ret, e);
        if (r < 0)
                return r;
        ret->helper = ret->slot + UIDRANGE_MAP_COUNT;
        if (c->uid_range_pick) {
                ret->start = ret->slot;
                ret->count = UIDRANGE_MAP_COUNT;
        } else {
                ret->start = c->uid_range_start;
                ret->count = c->uid_range_count;
        }
        return 0;
}

void uid_slot_release(struct uid_slot *s)
{
        unlock_slot(s->dir_fd, s->slot, &s->lock_fd);
        closep(&s->dir_fd);
        s->slot = 0;
}

void uid_slot_forget(struct uid_slot *s)
{
        closep(&s->lock_fd); /* flock: held while any fd of the open file is */
        closep(&s->dir_fd);
        s->slot = 0;
}
