/* SPDX-License-Identifier: MIT */
/* The audit log (audit.h): file handling and record building. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/buf.h"
#include "shared/macros.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "audit.h"

#define AUDIT_OPEN_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)

/* The audit dir is the administrator's: made 0700 when missing; an existing one must be a real
 * directory (not a symlink) that no one else can write, so no other user can swap a log. */
/* No symlink anywhere in the path: a user who can write a parent of a root-configured audit
 * dir must not redirect it to another directory. */
int audit_open_path(const char *path, int flags, mode_t mode)
{
        struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
                               .mode = (flags & O_CREAT) ? mode : 0,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = RETRY_EINTR(sys_openat2(AT_FDCWD, path, &how));
        return fd < 0 ? negerrno() : fd;
}

static int audit_dir_open(const char *dir)
{
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return negerrno();
        int fd = audit_open_path(dir, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        struct stat st;
        if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
            (st.st_mode & 0022)) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

int audit_create(int sessfd, const char *audit_dir, const char *id, char **ret_path)
{
        *ret_path = NULL;
        if (!audit_dir) {
                int fd = RETRY_EINTR(
                    openat(sessfd, AUDIT_FILE, AUDIT_OPEN_FLAGS | O_CREAT | O_EXCL, 0600));
                return fd < 0 ? negerrno() : fd;
        }
        _cleanup_close_ int dfd = audit_dir_open(audit_dir);
        if (dfd < 0)
                return dfd;
        char name[SESSION_ID_LEN + 8];
        snprintf(name, sizeof(name), "%s.jsonl", id);
        int fd = RETRY_EINTR(openat(dfd, name, AUDIT_OPEN_FLAGS | O_CREAT | O_EXCL, 0600));
        if (fd < 0)
                return negerrno();
        if (asprintf(ret_path, "%s/%s", audit_dir, name) < 0) {
                *ret_path = NULL;
                close(fd);
                return -ENOMEM;
        }
        return fd;
}

int audit_open(int sessfd, const struct session_state *st)
{
        if (st->audit_path)
                return audit_open_path(st->audit_path, AUDIT_OPEN_FLAGS, 0);
        int fd = openat(sessfd, AUDIT_FILE, AUDIT_OPEN_FLAGS);
        return fd < 0 ? negerrno() : fd;
}

int64_t audit_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void format_ms(int64_t unix_ms, char out[static 64])
{
        struct utc_time u;
        utc_from_unix(unix_ms / 1000, &u);
        snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)u.year, u.month, u.day,
                 u.hour, u.minute, u.second, (int)(unix_ms % 1000));
}

void audit_begin(struct buf *b, const char *session_id, const char *event)
{
        char ts[64];
        format_ms(audit_now_ms(), ts);
        b->len = 0;
        (void)buf_printf(b, "{\"ts\":\"%s\"", ts);
        audit_str(b, "session", session_id);
        audit_str(b, "event", event);
}

void audit_time(struct buf *b, const char *k, int64_t unix_ms)
{
        char ts[64];
        format_ms(unix_ms, ts);
        audit_str(b, k, ts);
}

static void key(struct buf *b, const char *k)
{
        (void)buf_puts(b, ",");
        (void)json_cstr(b, k);
        (void)buf_puts(b, ":");
}

void audit_str(struct buf *b, const char *k, const char *value)
{
        key(b, k);
        (void)json_cstr(b, value);
}

void audit_int(struct buf *b, const char *k, int64_t value)
{
        key(b, k);
        (void)buf_printf(b, "%lld", (long long)value);
}

void audit_bool(struct buf *b, const char *k, bool value)
{
        key(b, k);
        (void)buf_puts(b, value ? "true" : "false");
}

void audit_strv(struct buf *b, const char *k, char *const *v)
{
        key(b, k);
        (void)buf_puts(b, "[");
        bool cut = false;
        for (size_t i = 0; v && v[i]; i++) {
                if (b->len > AUDIT_RECORD_MAX / 2) {
                        cut = true;
                        break;
                }
                if (i)
                        (void)buf_puts(b, ",");
                /* one huge argument alone must not blow the record either */
                size_t n = strnlen(v[i], AUDIT_RECORD_MAX / 4);
                cut = cut || v[i][n] != '\0';
                (void)json_string(b, v[i], n);
        }
        (void)buf_puts(b, "]");
        if (cut) {
                char tk[64];
                snprintf(tk, sizeof(tk), "%s_truncated", k);
                audit_bool(b, tk, true);
        }
}

int audit_commit(int fd, struct buf *b)
{
        if (fd < 0 || !b->data)
                return 0;
        if (b->len + 2 > AUDIT_RECORD_MAX) {
                /* keep the prefix up to the event name: ts, session and event are short */
                const char *ev = strstr(b->data, ",\"event\":");
                const char *end = ev ? strchr(ev + 9, ',') : NULL;
                b->len = end ? (size_t)(end - b->data) : 0;
                b->data[b->len] = '\0';
                (void)buf_puts(b, ",\"record_truncated\":true");
        }
        if (buf_puts(b, "}\n") < 0)
                return -ENOMEM;
        /* One write: O_APPEND makes it land whole at the end of the file. */
        ssize_t n = RETRY_EINTR(write(fd, b->data, b->len));
        if (n < 0)
                return negerrno();
        return (size_t)n == b->len ? 0 : -EIO;
}

void audit_end(int fd, const char *session_id, const char *reason, const char *detail)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, session_id, "end");
        audit_str(&b, "reason", reason);
        if (detail)
                audit_str(&b, "detail", detail);
        (void)audit_commit(fd, &b);
}
