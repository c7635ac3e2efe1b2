/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD=race-inject.so sbx ...: lose the races that concurrent sessions make possible,
 * every time instead of once in hundreds of runs (tests/032-races.bats). Each is what another
 * sbx process could do at that moment; nothing is faked:
 *
 *   SBXT_CGROUP_PARENT_RACES=N  right after a mkdir(2) of a cgroup named "sbx" (the parent of
 *       session cgroups, shared by the sessions of its owner) that made it or found it, remove
 *       it when it is empty, as a session ending elsewhere does when the parent empties. N
 *       times per process (a forked child counts anew).
 *   SBXT_FIRST_FLOCK_DELAY_MS=M  sleep M ms before the first flock(2) of the process (for
 *       `create`, the lock of its new session), so that other processes' stale sweeps run
 *       in the middle of making the session.
 *   SBXT_INJECT_LOG=FILE  append one line per injected race, so a test can show the races
 *       really happened.
 *   SBXT_NO_EXEC_SERVER=1  a connect(2) to a session's exec socket (a path ending in "/exec")
 *       is refused, as for a session whose init serves no more (it stops on lasting accept
 *       errors) or one made by an sbx without the server: the client joins the session
 *       itself (tests/046-exec-lifetime.bats runs every check on that path too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pid_t counted_pid;
static int races_done;
static int flocks_seen;

static void note(const char *what, const char *path)
{
        const char *log = getenv("SBXT_INJECT_LOG");
        if (!log)
                return;
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        char line[4200];
        int n = snprintf(line, sizeof(line), "%d %s %s\n", (int)getpid(), what, path);
        if (n > 0)
                (void)!write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        close(fd);
}

static int env_int(const char *name)
{
        const char *v = getenv(name);
        return v ? atoi(v) : 0;
}

int mkdir(const char *path, mode_t mode)
{
        static int (*real)(const char *, mode_t);
        if (!real)
                real = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
        int r = real(path, mode);
        int saved = errno;
        const char *base = strrchr(path, '/');
        /* made or found: either way it can be gone the next moment */
        if ((r != 0 && errno != EEXIST) || strncmp(path, "/sys/fs/cgroup/", 15) != 0 || !base ||
            strcmp(base, "/sbx") != 0)
                return r;
        if (counted_pid != getpid()) {
                counted_pid = getpid();
                races_done = 0;
        }
        if (races_done < env_int("SBXT_CGROUP_PARENT_RACES") && rmdir(path) == 0) {
                races_done++;
                note("removed", path);
        }
        errno = saved;
        return r;
}

int flock(int fd, int op)
{
        static int (*real)(int, int);
        if (!real)
                real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
        int ms = env_int("SBXT_FIRST_FLOCK_DELAY_MS");
        if (ms > 0 && flocks_seen++ == 0) {
                struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
                nanosleep(&ts, NULL);
                note("delayed", "flock");
        }
        return real(fd, op);
}

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
        static int (*real)(int, const struct sockaddr *, socklen_t);
        if (!real)
                real =
                    (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
        const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
        if (env_int("SBXT_NO_EXEC_SERVER") > 0 && sa && sa->sa_family == AF_UNIX &&
            len > offsetof(struct sockaddr_un, sun_path)) {
                size_t n = strnlen(un->sun_path, len - offsetof(struct sockaddr_un, sun_path));
                if (n >= 5 && memcmp(un->sun_path + n - 5, "/exec", 5) == 0) {
                        note("exec server refused", un->sun_path);
                        errno = ECONNREFUSED;
                        return -1;
                }
        }
        return real(fd, sa, len);
}
