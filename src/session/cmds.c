/* SPDX-License-Identifier: MIT */
/* The records of a session's detached commands (cmds.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "cmds.h"

#define CMD_STATE_VERSION 1
#define CMD_STATE_MAX 4096

bool cmd_id_valid(const char *s)
{
        if (!s || s[0] != 'c' || s[1] < '1' || s[1] > '9')
                return false;
        size_t n = strlen(s + 1);
        if (n > 9)
                return false;
        for (size_t i = 1; i <= n; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

int cmds_dir_open(int sessfd, bool create)
{
        if (create && mkdirat(sessfd, CMDS_DIR, 0700) < 0 && errno != EEXIST)
                return negerrno();
        int fd = openat(sessfd, CMDS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negerrno() : fd;
}

int cmd_dir_open(int cmdsfd, const char *id)
{
        if (!cmd_id_valid(id))
                return -EINVAL;
        int fd = openat(cmdsfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negerrno() : fd;
}

static int cmp_unsigned(const void *a, const void *b)
{
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

int cmd_list_nums(int cmdsfd, unsigned **ret, size_t *ret_n)
{
        *ret = NULL;
        *ret_n = 0;
        int fd = fcntl(cmdsfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negerrno();
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return negerrno();
        }
        rewinddir(d);
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!cmd_id_valid(de->d_name))
                        continue;
                if (n == cap) {
                        unsigned *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
                        if (!nv)
                                return -ENOMEM;
                        v = nv;
                }
                v[n++] = (unsigned)strtoul(de->d_name + 1, NULL, 10);
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_unsigned);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int cmd_dir_make(int cmdsfd, unsigned *ret_num, int *ret_fd)
{
        _cleanup_free_ unsigned *v = NULL;
        size_t n;
        int r = cmd_list_nums(cmdsfd, &v, &n);
        if (r < 0)
                return r;
        /* Numbers only grow: the newest command is never removed to make room. */
        for (unsigned num = n ? v[n - 1] + 1 : 1; num < 1000000000u; num++) {
                char id[16];
                snprintf(id, sizeof(id), "c%u", num);
                if (mkdirat(cmdsfd, id, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return negerrno();
                }
                int fd = cmd_dir_open(cmdsfd, id);
                if (fd < 0)
                        return fd;
                *ret_num = num;
                *ret_fd = fd;
                return 0;
        }
        return -ENOSPC;
}

int cmd_dir_remove(int cmdsfd, const char *id)
{
        _cleanup_close_ int fd = cmd_dir_open(cmdsfd, id);
        if (fd < 0)
                return fd;
        _cleanup_closedir_ DIR *d = fdopendir(TAKE_FD(fd));
        if (!d)
                return negerrno();
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        return unlinkat(cmdsfd, id, AT_REMOVEDIR) < 0 ? negerrno() : 0;
}

int cmd_state_write(int cmdfd, const struct cmd_state *s)
{
        _cleanup_buf_ struct buf b = {0};
        /* the error text is the last line: it may hold anything but a newline */
        char err[sizeof(s->error)];
        snprintf(err, sizeof(err), "%s", s->error);
        for (char *p = err; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        if (buf_printf(&b,
                       "version %d\nrunning %d\nexit %d\ntimed_out %d\nstarted %" PRId64
                       "\nended %" PRId64 "\ncap %" PRIu64 "\nkeeper %d %" PRId64
                       "\nrunner %d %" PRId64 "\nreaper %d %" PRId64 "\nerror %s\n",
                       CMD_STATE_VERSION, s->running, s->exit_code, s->timed_out, s->started_ms,
                       s->ended_ms, s->cap, (int)s->keeper.pid, s->keeper.start, (int)s->runner.pid,
                       s->runner.start, (int)s->reaper.pid, s->reaper.start, err) < 0)
                return -ENOMEM;
        return write_file_atomic_at(cmdfd, CMD_STATE_FILE, b.data, b.len, 0600);
}

int cmd_state_read(int cmdfd, struct cmd_state *s)
{
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(cmdfd, CMD_STATE_FILE, &b, CMD_STATE_MAX);
        if (r < 0)
                return r;
        if (buf_append(&b, "", 1) < 0)
                return -ENOMEM;
        *s = (struct cmd_state){0};
        int version = 0, running = 0, timed_out = 0, kp = 0, rp = 0, bp = 0;
        int n = sscanf(
            b.data,
            "version %d running %d exit %d timed_out %d started %" SCNd64 " ended %" SCNd64
            " cap %" SCNu64 " keeper %d %" SCNd64 " runner %d %" SCNd64 " reaper %d %" SCNd64,
            &version, &running, &s->exit_code, &timed_out, &s->started_ms, &s->ended_ms, &s->cap,
            &kp, &s->keeper.start, &rp, &s->runner.start, &bp, &s->reaper.start);
        if (n != 13 || version != CMD_STATE_VERSION)
                return -EBADMSG;
        s->running = running;
        s->timed_out = timed_out;
        s->keeper.pid = kp;
        s->runner.pid = rp;
        s->reaper.pid = bp;
        const char *e = strstr(b.data, "\nerror ");
        if (e) {
                snprintf(s->error, sizeof(s->error), "%s", e + 7);
                s->error[strcspn(s->error, "\n")] = '\0';
        }
        return 0;
}

bool cmd_proc_alive(const struct cmd_proc *p)
{
        return p->pid > 0 && proc_start_time(p->pid) == p->start;
}

struct cmd_proc cmd_proc_self(void)
{
        pid_t pid = getpid();
        return (struct cmd_proc){.pid = pid, .start = proc_start_time(pid)};
}

static int cmp_segment(const void *a, const void *b)
{
        const struct cmd_segment *x = a, *y = b;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int cmd_segments(int cmdfd, struct cmd_segment **ret, size_t *ret_n)
{
        *ret = NULL;
        *ret_n = 0;
        int fd = openat(cmdfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negerrno();
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return negerrno();
        }
        _cleanup_free_ struct cmd_segment *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                if (strncmp(de->d_name, "out.", 4) != 0 || !de->d_name[4])
                        continue;
                unsigned long long off = strtoull(de->d_name + 4, &end, 10);
                struct stat st;
                if (*end || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (n == cap) {
                        struct cmd_segment *nv = realloc(v, (cap = cap ? cap * 2 : 4) * sizeof(*v));
                        if (!nv)
                                return -ENOMEM;
                        v = nv;
                }
                v[n++] = (struct cmd_segment){.offset = off, .size = (uint64_t)st.st_size};
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_segment);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* SIGKILL a recorded process that is still the one recorded, and wait up to 2 s for its end. */
static void kill_recorded(const struct cmd_proc *p)
{
        if (p->pid <= 0)
                return;
        _cleanup_close_ int pidfd = sys_pidfd_open(p->pid, 0);
        /* checked after the pidfd is open: from here the pid cannot name another process */
        if (pidfd < 0 || proc_start_time(p->pid) != p->start)
                return;
        if (sys_pidfd_send_signal(pidfd, SIGKILL) < 0)
                return;
        struct pollfd pf = {.fd = pidfd, .events = POLLIN};
        (void)RETRY_EINTR(poll(&pf, 1, 2000));
}

void cmds_remove_all(int sessfd)
{
        _cleanup_close_ int cmdsfd = cmds_dir_open(sessfd, false);
        if (cmdsfd < 0)
                return;
        _cleanup_free_ unsigned *v = NULL;
        size_t n;
        if (cmd_list_nums(cmdsfd, &v, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                char id[16];
                snprintf(id, sizeof(id), "c%u", v[i]);
                _cleanup_close_ int fd = cmd_dir_open(cmdsfd, id);
                struct cmd_state s;
                if (fd >= 0 && cmd_state_read(fd, &s) == 0) {
                        kill_recorded(&s.keeper);
                        kill_recorded(&s.runner);
                }
                (void)cmd_dir_remove(cmdsfd, id);
        }
        (void)unlinkat(sessfd, CMDS_DIR, AT_REMOVEDIR);
}
