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
