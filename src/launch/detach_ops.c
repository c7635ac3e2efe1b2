/* SPDX-License-Identifier: MIT */
/* ps, logs, wait and kill of detached commands (detach.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "../session/audit.h"
#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "detach-internal.h"

int detach_list(const char *session, struct detach_info **ret, size_t *ret_n, struct sbx_error *e)
{
        *ret = NULL;
        *ret_n = 0;
        struct detach_session s = DETACH_SESSION_INIT;
        int r = detach_session_open(session, false, &s, e);
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;
        if (r == 0 && s.cmdsfd >= 0 && (r = cmd_list_nums(s.cmdsfd, &v, &n)) < 0)
                r = sbx_internal(e, -r, "failed to list the commands of session '%s'", session);
        struct detach_info *d = r == 0 && n ? calloc(n, sizeof(*d)) : NULL;
        if (r == 0 && n && !d)
                r = sbx_internal(e, ENOMEM, "out of memory");
        size_t k = 0;
        for (size_t i = 0; r == 0 && i < n; i++) {
                char id[DETACH_ID_MAX];
                snprintf(id, sizeof(id), "c%u", v[i]);
                _cleanup_close_ int fd = cmd_dir_open(s.cmdsfd, id);
                /* one removed meanwhile (pruned) is not listed */
                if (fd >= 0 && detach_info_fill(fd, id, &d[k]) == 0)
                        k++;
        }
        detach_session_close(&s);
        if (r < 0) {
                detach_info_list_free(d, k);
                return r;
        }
        *ret = d;
        *ret_n = k;
        return 0;
}

int detach_status(const char *session, const char *cmd, struct detach_info *ret,
                  struct sbx_error *e)
{
        struct detach_session s = DETACH_SESSION_INIT;
        _cleanup_close_ int fd = -1;
        int r = detach_session_open(session, false, &s, e);
        if (r == 0)
                r = detach_cmd_open(&s, session, cmd, &fd, e);
        if (r == 0 && (r = detach_info_fill(fd, cmd, ret)) < 0)
                r = sbx_internal(e, -r, "failed to read the state of command '%s'", cmd);
        detach_session_close(&s);
        return r;
}

/* A watch on the command's directory, made before its state is looked at, so that no change
 * between the look and the wait is missed. */
static int watch_open(int cmdfd)
{
        int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", cmdfd);
        if (in >= 0 &&
            inotify_add_watch(in, path,
                              IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_ATTRIB) < 0)
                closep(&in);
        return in;
}

/* Wait for a change in the command's directory, the session's end (its supervisor closes
 * ctl), or up to wait_ms. 0, or -ESRCH when the session ended. A keeper killed without a
 * word changes nothing, so the wait is cut into seconds. */
static int watch_wait(int in, int ctl, int64_t deadline_ms)
{
        int64_t left = deadline_ms < 0 ? 1000 : deadline_ms - (int64_t)now_monotonic_ms();
        if (left <= 0)
                return 0;
        struct pollfd p[2] = {{.fd = in, .events = POLLIN}, {.fd = ctl, .events = POLLIN}};
        int n = RETRY_EINTR(poll(p, 2, left > 1000 ? 1000 : (int)left));
        if (n > 0 && p[1].revents)
                return -ESRCH;
        if (n > 0 && p[0].revents) {
                char b[4096];
                while (read(in, b, sizeof(b)) > 0)
                        ;
        }
        return 0;
}

static int session_ended(struct sbx_error *e, const char *session)
{
        return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                        "session '%s' ended while waiting", session);
}

/* Read [pos, end) of the kept output into out, at most max bytes. 1: a segment went away
 * meanwhile (the caller looks again). */
static int read_segments(int cmdfd, const struct cmd_segment *seg, size_t n, uint64_t *pos,
                         uint64_t *dropped, size_t max, struct buf *out)
{
        for (size_t i = 0; i < n; i++) {
                uint64_t end = seg[i].offset + seg[i].size;
                if (end <= *pos)
                        continue;
                if (*pos < seg[i].offset) {
                        *dropped += seg[i].offset - *pos;
                        *pos = seg[i].offset;
                }
                char name[40];
                snprintf(name, sizeof(name), "out.%" PRIu64, seg[i].offset);
                _cleanup_close_ int fd = openat(cmdfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return errno == ENOENT ? 1 : negerrno();
                while (*pos < end && (!max || out->len < max)) {
                        char b[65536];
                        uint64_t want = end - *pos;
                        if (max && want > max - out->len)
                                want = max - out->len;
                        if (want > sizeof(b))
                                want = sizeof(b);
                        ssize_t k = pread(fd, b, (size_t)want, (off_t)(*pos - seg[i].offset));
                        if (k <= 0)
                                return k < 0 ? negerrno() : 0;
                        if (buf_append(out, b, (size_t)k) < 0)
                                return -ENOMEM;
                        *pos += (uint64_t)k;
                }
                if (max && out->len >= max)
                        return 0;
        }
        return 0;
}

/* One look: whether it has ended, then what is there at cursor. 1: nothing yet. */
static int read_once(int cmdfd, const char *cmd, uint64_t cursor, size_t max, struct buf *out,
                     uint64_t *ret_next, uint64_t *ret_dropped, bool *ret_ended,
                     struct sbx_error *e)
{
        for (int attempt = 0; attempt < 8; attempt++) {
                struct detach_info d;
                int r = detach_info_fill(cmdfd, cmd, &d);
                if (r == -ENOENT) /* its records went with the session */
                        return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                        "the session of command '%s' has ended", cmd);
                if (r < 0)
                        return sbx_internal(e, -r, "failed to read the state of command '%s'", cmd);
                bool ended = d.state != DETACH_RUNNING;
                detach_info_free(&d);
                _cleanup_free_ struct cmd_segment *seg = NULL;
                size_t n;
                if ((r = cmd_segments(cmdfd, &seg, &n)) < 0)
                        return sbx_internal(e, -r, "failed to read the output of '%s'", cmd);
                uint64_t end = n ? seg[n - 1].offset + seg[n - 1].size : 0;
                if (cursor > end)
                        return sbx_usage(e,
                                         "cursor %" PRIu64
                                         " is past the end of the output of '%s' (%" PRIu64 ")",
                                         cursor, cmd, end);
                uint64_t pos = cursor, dropped = 0;
                size_t before = out->len;
                r = read_segments(cmdfd, seg, n, &pos, &dropped, max ? before + max : 0, out);
                if (r == 1) {
                        out->len = before;
                        continue;
                }
                if (r < 0)
                        return sbx_internal(e, -r, "failed to read the output of '%s'", cmd);
                *ret_next = pos;
                *ret_dropped = dropped;
                *ret_ended = ended && pos >= end;
                return pos == cursor && !ended ? 1 : 0;
        }
        return sbx_internal(e, EAGAIN, "the output of '%s' kept moving", cmd);
}

/* The session and command cmd's records, and (watch) an inotify watch on them for waiting. */
static int open_watched(const char *session, const char *cmd, bool watch, struct detach_session *s,
                        int *ret_fd, int *ret_in, struct sbx_error *e)
{
        int r = detach_session_open(session, false, s, e);
        if (r == 0)
                r = detach_cmd_open(s, session, cmd, ret_fd, e);
        if (r == 0 && watch)
                *ret_in = watch_open(*ret_fd);
        return r;
}

int detach_read(const char *session, const char *cmd, uint64_t cursor, size_t max, int wait_ms,
                struct buf *out, uint64_t *ret_next, uint64_t *ret_dropped, bool *ret_ended,
                struct sbx_error *e)
{
        struct detach_session s = DETACH_SESSION_INIT;
        _cleanup_close_ int fd = -1, in = -1;
        int64_t deadline = wait_ms < 0 ? -1 : (int64_t)now_monotonic_ms() + wait_ms;
        int r = open_watched(session, cmd, wait_ms != 0, &s, &fd, &in, e);
        while (r == 0) {
                r = read_once(fd, cmd, cursor, max, out, ret_next, ret_dropped, ret_ended, e);
                if (r != 1)
                        break;
                r = 0;
                if (wait_ms == 0 || (deadline >= 0 && (int64_t)now_monotonic_ms() >= deadline))
                        break;
                if (watch_wait(in, s.ctl, deadline) == -ESRCH)
                        r = session_ended(e, session);
        }
        detach_session_close(&s);
        return r;
}

int detach_wait(const char *session, const char *cmd, int wait_ms, struct detach_info *ret,
                struct sbx_error *e)
{
        struct detach_session s = DETACH_SESSION_INIT;
        _cleanup_close_ int fd = -1, in = -1;
        int64_t deadline = wait_ms < 0 ? -1 : (int64_t)now_monotonic_ms() + wait_ms;
        int r = open_watched(session, cmd, true, &s, &fd, &in, e);
        while (r == 0) {
                if ((r = detach_info_fill(fd, cmd, ret)) < 0) {
                        /* its records went: only the session's end removes a running one */
                        r = r == -ENOENT
                                ? session_ended(e, session)
                                : sbx_internal(e, -r, "failed to read the state of command '%s'",
                                               cmd);
                        break;
                }
                if (ret->state != DETACH_RUNNING)
                        break;
                if (deadline >= 0 && (int64_t)now_monotonic_ms() >= deadline) {
                        r = 1;
                        break;
                }
                detach_info_free(ret);
                if (watch_wait(in, s.ctl, deadline) == -ESRCH)
                        r = session_ended(e, session);
        }
        detach_session_close(&s);
        return r;
}

/* C, the command's main process: the child of B that started first (what C started and
 * left becomes B's child too, later). 0 when there is none. */
static pid_t command_pid(pid_t reaper, int64_t *ret_start)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", reaper, reaper);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        pid_t best = 0;
        int64_t best_start = INT64_MAX;
        int pid;
        while (f && fscanf(f, "%d", &pid) == 1) {
                int64_t t = proc_start_time(pid);
                if (t >= 0 && t < best_start) {
                        best = pid;
                        best_start = t;
                }
        }
        *ret_start = best_start;
        return best;
}

/* Signal C's process group, C checked alive through a pidfd just before. */
static int signal_group(const struct cmd_state *st, int sig)
{
        if (!cmd_proc_alive(&st->reaper))
                return -ESRCH;
        int64_t start, again;
        pid_t c = command_pid(st->reaper.pid, &start);
        if (c <= 0)
                return -EAGAIN;
        _cleanup_close_ int pidfd = sys_pidfd_open(c, 0);
        /* The number may have changed hands between the look and the open: the same look once
         * more, then C alive through the pidfd. A pidfd whose process lives after the second
         * look named that process all along, so it is C (B's child, started at start). */
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        if (pidfd < 0 || command_pid(st->reaper.pid, &again) != c || again != start ||
            poll(&p, 1, 0) != 0)
                return -EAGAIN;
        /* C called setsid(): its pid is its group's id. Through C's pidfd (Linux 6.9) the
         * signal goes to that group whatever happens to C from here on. Before 6.9 (EINVAL),
         * by number: C was alive just above, so the number is C's group unless, in between, C
         * ended with its whole group and the number went to another group's leader. */
        if (sys_pidfd_signal_group(pidfd, sig) == 0)
                return 0;
        if (errno != EINVAL)
                return negerrno();
        return kill(-c, sig) < 0 ? negerrno() : 0;
}

int detach_kill(const char *session, const char *cmd, int sig, struct sbx_error *e)
{
        if (sig < 1 || sig > SIGRTMAX)
                return sbx_usage(e, "invalid signal %d", sig);
        struct detach_session s = DETACH_SESSION_INIT;
        _cleanup_close_ int fd = -1;
        int r = detach_session_open(session, false, &s, e);
        if (r == 0)
                r = detach_cmd_open(&s, session, cmd, &fd, e);
        /* a command that has only just started may not have its reaper or C yet */
        for (int tries = 0; r == 0 && tries < 100; tries++) {
                struct detach_info d;
                struct cmd_state st;
                if ((r = detach_info_fill(fd, cmd, &d)) < 0 || (r = cmd_state_read(fd, &st)) < 0) {
                        r = sbx_internal(e, -r, "failed to read the state of command '%s'", cmd);
                        break;
                }
                bool running = d.state == DETACH_RUNNING;
                detach_info_free(&d);
                if (!running) {
                        r = sbx_fail(e, EXIT_FAILED, "not_running", 0,
                                     "command '%s' is not running", cmd);
                        break;
                }
                if (st.reaper.pid == 0 || (r = signal_group(&st, sig)) == -EAGAIN) {
                        r = 0;
                        usleep(20000);
                        continue;
                }
                if (r < 0) {
                        r = r == -ESRCH ? sbx_fail(e, EXIT_FAILED, "not_running", 0,
                                                   "command '%s' is not running", cmd)
                                        : sbx_internal(e, -r, "failed to signal command '%s'", cmd);
                        break;
                }
                _cleanup_close_ int k =
                    openat(fd, CMD_KILLED_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                _cleanup_close_ int afd = audit_open(s.sessfd, &s.st);
                _cleanup_buf_ struct buf b = {0};
                audit_begin(&b, s.st.id, "detach_kill");
                audit_str(&b, "command", cmd);
                audit_int(&b, "signal", sig);
                (void)audit_commit(afd, &b);
                detach_session_close(&s);
                return 0;
        }
        if (r == 0)
                r = sbx_fail(e, EXIT_FAILED, "not_running", 0,
                             "command '%s' has no process to signal", cmd);
        detach_session_close(&s);
        return r;
}

int detach_signal_parse(const char *s, int *ret_sig)
{
        if (!s || !*s)
                return -EINVAL;
        if (isdigit((unsigned char)s[0])) {
                char *end;
                errno = 0;
                long v = strtol(s, &end, 10);
                if (errno || *end || v < 1 || v > SIGRTMAX)
                        return -EINVAL;
                *ret_sig = (int)v;
                return 0;
        }
        const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
        for (int i = 1; i < 32; i++) {
                const char *abbrev = sigabbrev_np(i);
                if (abbrev && strcasecmp(abbrev, name) == 0) {
                        *ret_sig = i;
                        return 0;
                }
        }
        return -EINVAL;
}
