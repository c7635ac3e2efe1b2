/* SPDX-License-Identifier: MIT */
/*
 * What it costs to start a process in another cgroup v2 (docs/design/exec.md says why a
 * memory-limited v2 session's exec joins from outside): a plain fork, clone3 with
 * CLONE_INTO_CGROUP, and a fork whose child writes "0" into the cgroup's cgroup.procs (a
 * migration, which takes the kernel's global cgroup_threadgroup_rwsem for writing and waits for
 * an RCU grace period unless another migration just happened). Each start is timed until the
 * child is reaped, back to back and after an idle pause. With a cgroup v1 "tasks" file, also a
 * fork whose child (one thread) moves itself through it: the kernel skips that lock there.
 *
 *   cc -O2 -o /tmp/cgmove bench/cgmove.c
 *   mkdir /sys/fs/cgroup/unified/cgmove        (any cgroup2 directory the caller may write)
 *   /tmp/cgmove /sys/fs/cgroup/unified/cgmove [RUNS [IDLE_MS [V1_TASKS]]]
 *   rmdir /sys/fs/cgroup/unified/cgmove
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct clone_args_v2 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
        uint64_t set_tid, set_tid_size, cgroup;
};

enum how { FORK, CLONE_INTO, FORK_AND_MOVE, FORK_AND_V1_TASKS };
static const char *const names[] = {"fork", "clone3 CLONE_INTO_CGROUP", "fork + cgroup.procs",
                                    "fork + v1 tasks"};

static double now_ms(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* One start: the child moves itself through movefd, if any, and exits. ms, or -1. */
static double start_one(enum how how, int dirfd, int movefd)
{
        double t0 = now_ms();
        pid_t c;
        if (how == CLONE_INTO) {
                struct clone_args_v2 a = {
                    .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)dirfd};
                c = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
        } else {
                c = fork();
        }
        if (c == 0)
                _exit(how >= FORK_AND_MOVE && write(movefd, "0", 1) != 1 ? 1 : 0);
        int st;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1;
        return now_ms() - t0;
}

int main(int argc, char **argv)
{
        if (argc < 2 || argc > 5) {
                fprintf(stderr, "usage: cgmove CGROUP2_DIR [RUNS [IDLE_MS [V1_TASKS]]]\n");
                return 2;
        }
        int runs = argc > 2 ? atoi(argv[2]) : 200, idle = argc > 3 ? atoi(argv[3]) : 50;
        char procs[4096];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[1]);
        int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int procsfd = open(procs, O_WRONLY | O_CLOEXEC);
        int tasksfd = argc > 4 ? open(argv[4], O_WRONLY | O_CLOEXEC) : -1;
        double *t = calloc(runs > 0 ? (size_t)runs : 1, sizeof(*t));
        if (dirfd < 0 || procsfd < 0 || (argc > 4 && tasksfd < 0) || !t || runs < 1) {
                perror("cgmove");
                return 1;
        }
        printf("%-26s %8s %10s %8s %8s\n", "start", "idle ms", "median ms", "p90 ms", "max ms");
        for (int pause = 0; pause <= idle; pause += idle > 0 ? idle : 1)
                for (enum how how = FORK; how <= (tasksfd < 0 ? FORK_AND_MOVE : FORK_AND_V1_TASKS);
                     how++) {
                        for (int i = 0; i < runs; i++) {
                                if (pause)
                                        usleep((useconds_t)pause * 1000);
                                int movefd = how == FORK_AND_V1_TASKS ? tasksfd : procsfd;
                                if ((t[i] = start_one(how, dirfd, movefd)) < 0) {
                                        fprintf(stderr, "cgmove: %s failed\n", names[how]);
                                        return 1;
                                }
                        }
                        qsort(t, (size_t)runs, sizeof(*t), by_value);
                        printf("%-26s %8d %10.3f %8.3f %8.3f\n", names[how], pause, t[runs / 2],
                               t[runs * 9 / 10], t[runs - 1]);
                }
        return 0;
}
