/* SPDX-License-Identifier: MIT */
/*
 * Small file helpers of the cgroup code (cgroup-internal.h): paths, reads and writes of
 * control files, and making the shared parents that sessions live below.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"

int cg_path(char *out, size_t n, const char *dir, const char *name)
{
        int k = snprintf(out, n, "%s/%s", dir, name);
        return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}

int cg_write(const char *dir, const char *file, const char *value)
{
        char p[PATH_MAX];
        if (cg_path(p, sizeof(p), dir, file) < 0)
                return -ENAMETOOLONG;
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negerrno();
        return write_all(fd, value, strlen(value));
}

int cg_write_u64(const char *dir, const char *file, uint64_t v)
{
        char s[32];
        snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
        return cg_write(dir, file, s);
}

int cg_read(const char *dir, const char *file, char *buf, size_t n)
{
        char p[PATH_MAX];
        if (cg_path(p, sizeof(p), dir, file) < 0)
                return -ENAMETOOLONG;
        return cg_read_at(AT_FDCWD, p, buf, n);
}

int cg_read_at(int dfd, const char *file, char *buf, size_t n)
{
        _cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negerrno();
        ssize_t k = RETRY_EINTR(read(fd, buf, n - 1));
        if (k < 0)
                return negerrno();
        buf[k] = '\0';
        if (k > 0 && buf[k - 1] == '\n')
                buf[k - 1] = '\0';
        return 0;
}

int cg_read_key_at(int dfd, const char *file, const char *key, uint64_t *ret)
{
        char text[4096];
        int r = cg_read_at(dfd, file, text, sizeof(text));
        if (r < 0)
                return r;
        size_t kl = strlen(key);
        for (char *line = text; line && *line;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                unsigned long long v;
                if (strncmp(line, key, kl) == 0 && line[kl] == ' ' &&
                    sscanf(line + kl + 1, "%llu", &v) == 1) {
                        *ret = v;
                        return 0;
                }
        }
        return -ENOENT;
}

int cg_mkdir(const char *dir, const char *name, bool exist_ok)
{
        char p[PATH_MAX];
        if (cg_path(p, sizeof(p), dir, name) < 0)
                return -ENAMETOOLONG;
        if (mkdir(p, 0755) == 0 || (exist_ok && errno == EEXIST))
                return 0;
        return negerrno();
}

int cg_parent_ready(const char *parent, bool v2, unsigned mask)
{
        int r = 0;
        for (int tries = 0; tries < CG_PARENT_TRIES; tries++) {
                if (v2)
                        r = cg_v2_make_parent(parent, mask);
                else
                        r = mkdir(parent, 0755) < 0 && errno != EEXIST ? negerrno() : 0;
                /* made by someone else (root) before: sessions must go into it */
                if (r == 0 && access(parent, W_OK) < 0)
                        r = negerrno();
                if (r != -ENOENT)
                        break;
        }
        return r;
}

bool cg_has_word(const char *list, const char *word)
{
        size_t wl = strlen(word);
        for (const char *p = list; (p = strstr(p, word)); p += wl) {
                bool start = p == list || p[-1] == ' ' || p[-1] == ',';
                bool end = p[wl] == '\0' || p[wl] == ' ' || p[wl] == ',' || p[wl] == '\n';
                if (start && end)
                        return true;
        }
        return false;
}

void cg_mask_format(unsigned mask, const char *prefix, char *out, size_t n)
{
        size_t k = 0;
        out[0] = '\0';
        for (int i = 0; i < CG_NCTRL; i++)
                if (mask & CG_BIT(i) && k < n)
                        k += (size_t)snprintf(out + k, n - k, "%s%s%s", k ? " " : "", prefix,
                                              cg_ctrl_names[i]);
}
