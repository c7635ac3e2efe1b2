/* SPDX-License-Identifier: MIT */
#include "id.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <unistd.h>

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

/* The ids of a read into ids, each once (a read that goes round may meet them again), up to
 * max. true: max reached. */
static bool sample_take(const char *buf, ssize_t len, char (*ids)[SESSION_ID_LEN + 1], size_t max,
                        size_t *n)
{
        for (ssize_t off = 0; off < len && *n < max;) {
                const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + off);
                off += de->d_reclen;
                bool seen = !session_id_valid(de->d_name);
                for (size_t k = 0; k < *n && !seen; k++)
                        seen = strcmp(ids[k], de->d_name) == 0;
                if (!seen)
                        memcpy(ids[(*n)++], de->d_name, SESSION_ID_LEN + 1);
        }
        return *n == max;
}

/* Whether fd is a directory of a cgroup file system (kernfs: positions are name hashes). */
static bool on_cgroupfs(int fd)
{
        struct statfs sf;
        return fstatfs(fd, &sf) == 0 &&
               (sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC);
}

/* Up to max of every id, from a random one on. */
static char (*ids_of_all(int dirfd, size_t max, size_t *ret_n))[SESSION_ID_LEN + 1]
{
        char(*ids)[SESSION_ID_LEN + 1] = session_ids_in_dir(dirfd, ret_n);
        if (*ret_n > max)
                *ret_n = max;
        return ids;
}

char (*session_ids_sample(int dirfd, size_t max, size_t *ret_n))[SESSION_ID_LEN + 1]
{
        *ret_n = 0;
        _cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint32_t rnd = 0;
        if (fd < 0)
                return NULL;
        /* A random position is a random start only where positions are spread evenly over
         * the entries: kernfs's name hashes (2 to INT_MAX - 1). Elsewhere (tmpfs: a counter
         * of every entry ever made, with the gaps of the removed ones) it would mostly land
         * after one gap: every entry is read there, as before. */
        if (max == 0 || !on_cgroupfs(fd) ||
            getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd) ||
            lseek(fd, (off_t)(2 + rnd % (INT32_MAX - 3)), SEEK_SET) < 0)
                return max ? ids_of_all(fd, max, ret_n) : session_ids_in_dir(fd, ret_n);
        _cleanup_free_ char(*ids)[SESSION_ID_LEN + 1] = calloc(max, sizeof(*ids));
        if (!ids)
                return NULL;
        size_t n = 0;
        /* a few kilobytes: what max entries take, and the control files of a cgroup dir */
        _Alignas(struct dirent64) char buf[4096];
        bool wrapped = false;
        for (;;) {
                ssize_t len = getdents64(fd, buf, sizeof(buf));
                if (len < 0 || (len > 0 && sample_take(buf, len, ids, max, &n)))
                        break;
                /* the end: on from the beginning, once (the second end stops it) */
                if (len == 0 && (wrapped || lseek(fd, 0, SEEK_SET) < 0))
                        break;
                wrapped |= len == 0;
        }
        if (n == 0)
                return NULL;
        *ret_n = n;
        return TAKE_PTR(ids);
}
