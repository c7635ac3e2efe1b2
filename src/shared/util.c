/* SPDX-License-Identifier: MIT */
#include "util.h"
#include "syscalls.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int write_all(int fd, const void *p, size_t n)
{
        const char *c = p;
        while (n > 0) {
                ssize_t w = write(fd, c, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return negerrno();
                }
                c += w;
                n -= (size_t)w;
        }
        return 0;
}

int read_all(int fd, struct buf *b, size_t max)
{
        char tmp[65536];
        for (;;) {
                ssize_t r = read(fd, tmp, sizeof(tmp));
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negerrno();
                }
                if (r == 0)
                        return 0;
                if (b->len + (size_t)r > max)
                        return -EFBIG;
                int e = buf_append(b, tmp, (size_t)r);
                if (e < 0)
                        return e;
        }
}

int write_file_at(int dirfd, const char *path, const void *p, size_t n, mode_t mode)
{
        _cleanup_close_ int fd =
            openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return negerrno();
        int r = write_all(fd, p, n);
        if (r < 0)
                return r;
        return close(TAKE_FD(fd)) < 0 ? negerrno() : 0;
}

int write_file_atomic_at(int dirfd, const char *path, const void *p, size_t n, mode_t mode)
{
        char tmp[4096];
        int k = snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
        if (k < 0 || (size_t)k >= sizeof(tmp))
                return -ENAMETOOLONG;
        (void)unlinkat(dirfd, tmp, 0);
        int r = write_file_at(dirfd, tmp, p, n, mode);
        if (r < 0)
                return r;
        if (renameat(dirfd, tmp, dirfd, path) < 0) {
                r = negerrno();
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        return 0;
}

int read_file_at(int dirfd, const char *path, struct buf *b, size_t max)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        return read_all(fd, b, max);
}

int64_t now_realtime_sec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec;
}

int64_t now_realtime_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t now_monotonic_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* /proc/PID/stat into b; *ret: the space before field 3 (state). 0 or -errno. */
static int proc_stat(pid_t pid, struct buf *b, const char **ret)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int r = read_file_at(AT_FDCWD, path, b, 4096);
        if (r < 0)
                return r;
        /* comm may contain spaces and ')': fields start after the last ')' */
        const char *p = b->data ? strrchr(b->data, ')') : NULL;
        if (!p || p[1] != ' ' || !p[2])
                return -EINVAL;
        *ret = p + 1;
        return 0;
}

int64_t proc_start_time(pid_t pid)
{
        _cleanup_buf_ struct buf b = {0};
        const char *p;
        int r = proc_stat(pid, &b, &p);
        if (r < 0)
                return r;
        /* each step moves to the space before the next field, up to the one before field 22
         * (start time) */
        for (int field = 3; field < 22 && p; field++)
                p = strchr(p + 1, ' ');
        if (!p)
                return -EINVAL;
        return (int64_t)strtoll(p + 1, NULL, 10);
}

int proc_state(pid_t pid)
{
        _cleanup_buf_ struct buf b = {0};
        const char *p;
        int r = proc_stat(pid, &b, &p);
        return r < 0 ? r : (unsigned char)p[1];
}

int fd_set_nonblock(int fd, bool on)
{
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0)
                return negerrno();
        int nfl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
        if (nfl != fl && fcntl(fd, F_SETFL, nfl) < 0)
                return negerrno();
        return 0;
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

void close_all_except(const int *keep, size_t n_keep)
{
        int sorted[32];
        size_t n = 0;
        for (size_t i = 0; i < n_keep && n < ARRAY_SIZE(sorted); i++)
                if (keep[i] >= 3)
                        sorted[n++] = keep[i];
        qsort(sorted, n, sizeof(int), cmp_int);
        unsigned int from = 3;
        for (size_t i = 0; i < n; i++) {
                if ((unsigned)sorted[i] > from)
                        (void)sys_close_range(from, (unsigned)sorted[i] - 1, 0);
                from = (unsigned)sorted[i] + 1;
        }
        (void)sys_close_range(from, ~0U, 0);
}

void signalfd_drain(int sigfd)
{
        struct signalfd_siginfo si;
        while (read(sigfd, &si, sizeof(si)) > 0)
                ;
}

/* The headroom kept below this function's frame: its own locals and the madvise call. The
 * idle loops that follow touch one or two pages below their frame (libc's poll, accept), so a
 * larger headroom only keeps pages that nothing uses: each page kept costs 4 KiB per idle
 * process. */
#define STACK_KEEP 4096

/* noinline (also in the header): its own frame is the reference, never a caller's, whose
 * locals may reach further down than STACK_KEEP. */
__attribute__((noinline)) void stack_release_below(void)
{
        /* first, as it runs on the stack below this frame: the heap's free pages (what setting
         * up freed: config, paths, messages) */
        (void)malloc_trim(0);
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        /* the frame itself, never a local: a sanitizer may keep locals on a heap "fake stack" */
        uintptr_t top = ((uintptr_t)__builtin_frame_address(0) - STACK_KEEP) & ~(page - 1);
        /* the lowest page of the stack's mapping: mincore fails (ENOMEM) on the first page
         * below it, which is never part of the stack (the kernel keeps a guard gap there) */
        unsigned char v;
        uintptr_t low = top;
        while (low >= page && mincore((void *)(low - page), page, &v) == 0)
                low -= page;
        /* the raw system call: no wrapper or sanitizer interceptor frame below this one may
         * use a page while it goes */
        if (low < top)
                (void)syscall(SYS_madvise, (void *)low, top - low, MADV_DONTNEED);
}
