/* SPDX-License-Identifier: MIT */
#include "id.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "shared/macros.h"

int session_id_generate(char out[static SESSION_ID_LEN + 1])
{
        unsigned char rnd[8];
        size_t got = 0;
        while (got < sizeof(rnd)) {
                ssize_t r = getrandom(rnd + got, sizeof(rnd) - got, 0);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negerrno();
                }
                got += (size_t)r;
        }
        /* the snprintf calls below go on from here and end the string */
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        memcpy(out, "sb_", 3);
        for (size_t i = 0; i < sizeof(rnd); i++)
                snprintf(out + 3 + 2 * i, 3, "%02x", rnd[i]);
        return 0;
}

char (*session_ids_in_dir(int dirfd, size_t *ret_n))[SESSION_ID_LEN + 1]
{
        *ret_n = 0;
        int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return NULL;
        }
        char(*ids)[SESSION_ID_LEN + 1] = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!session_id_valid(de->d_name))
                        continue;
                if (n == cap) {
                        void *grown = reallocarray(ids, cap ? 2 * cap : 64, sizeof(*ids));
                        if (!grown)
                                break; /* the ones read so far */
                        ids = grown;
                        cap = cap ? 2 * cap : 64;
                }
                memcpy(ids[n++], de->d_name, SESSION_ID_LEN + 1);
        }
        uint32_t rnd = 0;
        char(*rot)[SESSION_ID_LEN + 1] = n > 1 ? calloc(n, sizeof(*ids)) : NULL;
        if (rot && getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) == (ssize_t)sizeof(rnd)) {
                for (size_t i = 0; i < n; i++)
                        memcpy(rot[i], ids[(rnd % n + i) % n], sizeof(*ids));
                free(ids);
                ids = TAKE_PTR(rot);
        }
        free(rot);
        *ret_n = n;
        return ids;
}

/* Entries of a read into ids (up to max), until the first id is met again (wrapped). true:
 * stop reading. */
static bool sample_take(const char *buf, ssize_t len, char (*ids)[SESSION_ID_LEN + 1], size_t max,
                        size_t *n)
{
        for (ssize_t off = 0; off < len;) {
                const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
                off += de->d_reclen;
                if (!session_id_valid(de->d_name))
                        continue;
                if (*n > 0 && strcmp(ids[0], de->d_name) == 0)
                        return true; /* round the directory once */
                memcpy(ids[(*n)++], de->d_name, SESSION_ID_LEN + 1);
                if (*n == max)
                        return true;
        }
        return false;
}

/* xorshift64: the probes' positions (seeded from getrandom) */
static uint64_t next_rand(uint64_t *x)
{
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* The d_off (the position after it) of the first and the last entry of a read, dots aside. */
static void read_span(const char *buf, ssize_t len, uint64_t *first, uint64_t *last)
{
        bool any = false;
        *first = *last = 0;
        for (ssize_t off = 0; off < len;) {
                const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
                off += de->d_reclen;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue; /* positions 1 and 2 on many file systems: not the order */
                if (!any)
                        *first = (uint64_t)de->d_off;
                *last = (uint64_t)de->d_off;
                any = true;
        }
}

/*
 * A read at a random position of a directory of more than one read, given its first read (from
 * position 0). The positions are the file system's: where they go down (tmpfs: the newest
 * entry first), the first read's first position is the highest; where they go up, they are
 * hashes below 2^31 (kernfs, ext4 for 32-bit callers) or 2^63 (ext4), or dense from 2 on
 * (btrfs): a position past the end reads nothing, and the next probe is below it. len: what
 * the read returned; 0 when no probe found an entry (the caller reads from the beginning).
 */
static ssize_t read_from_random(int fd, char *buf, size_t size, ssize_t len0, uint64_t seed)
{
        uint64_t first, last, x = seed | 1;
        read_span(buf, len0, &first, &last);
        uint64_t hi = last < first ? first + 1 : last > INT32_MAX ? INT64_MAX : INT32_MAX;
        for (int probe = 0; probe < 64 && hi > 2; probe++) {
                off_t at = (off_t)(2 + next_rand(&x) % (hi - 2));
                hi = (uint64_t)at;
                if (lseek(fd, at, SEEK_SET) < 0)
                        continue;
                ssize_t len = getdents64(fd, buf, size);
                if (len > 0)
                        return len;
        }
        return 0;
}

/* Up to max of a directory of one read: all of it, from a random one on. */
static char (*ids_of_small(int fd, size_t max, size_t *ret_n))[SESSION_ID_LEN + 1]
{
        char(*ids)[SESSION_ID_LEN + 1] = session_ids_in_dir(fd, ret_n);
        if (*ret_n > max)
                *ret_n = max;
        return ids;
}

char (*session_ids_sample(int dirfd, size_t max, size_t *ret_n))[SESSION_ID_LEN + 1]
{
        if (max == 0)
                return session_ids_in_dir(dirfd, ret_n);
        *ret_n = 0;
        _cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint64_t seed = 0;
        if (fd < 0 || getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
                return NULL;
        /* a few kilobytes: what max entries take, and the control files of a cgroup dir */
        _Alignas(struct dirent64) char buf[4096], rest[sizeof(struct dirent64)];
        ssize_t len = getdents64(fd, buf, sizeof(buf));
        if (len <= 0)
                return NULL;
        if (getdents64(fd, rest, sizeof(rest)) == 0)
                return ids_of_small(fd, max, ret_n);
        _cleanup_free_ char(*ids)[SESSION_ID_LEN + 1] = calloc(max, sizeof(*ids));
        if (!ids)
                return NULL;
        size_t n = 0;
        len = read_from_random(fd, buf, sizeof(buf), len, seed);
        bool wrapped = len == 0 && lseek(fd, 0, SEEK_SET) == 0;
        if (wrapped)
                len = getdents64(fd, buf, sizeof(buf));
        while (len >= 0 && !(len > 0 && sample_take(buf, len, ids, max, &n))) {
                if (len == 0) {
                        if (wrapped || lseek(fd, 0, SEEK_SET) < 0)
                                break;
                        wrapped = true;
                }
                len = getdents64(fd, buf, sizeof(buf));
        }
        if (n == 0)
                return NULL;
        *ret_n = n;
        return TAKE_PTR(ids);
}
