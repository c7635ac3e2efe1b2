/* SPDX-License-Identifier: MIT */
/*
 * Small timing helpers for bench/run, where hyperfine cannot do it without a shell in the
 * measured path (a shell would add ~1 ms to every figure):
 *
 *   harness cycle N OUT -- CREATE... ';' CMD... ';' CMD...
 *       N times: run CREATE, take its stdout (trimmed) as the id, then each later command with
 *       every argument "{}" replaced by that id; write one line per iteration to OUT: the
 *       seconds the whole cycle took. Any failing command stops the run (exit 1).
 *
 *   harness startbg PIDFILE -- CMD...
 *       start CMD in its own session with stdout on a pipe, return as soon as CMD writes its
 *       first byte (it is up), leaving it running; its pid is appended to PIDFILE (it leads
 *       its own process group: kill -KILL -- -PID ends it all). This is
 *       "a sandbox started in the background" for peers that have no `create`.
 *
 *   harness burst N OUT -- CMD...
 *       start N copies of CMD at once (argument "{}" replaced by the copy's number, or by the
 *       N lines of the file named by $HARNESS_IDS when set), wait for all; write to OUT the
 *       wall time of the whole burst and then one line per copy with its own latency.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
        fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
        exit(1);
}

/* Copy argv with "{}" replaced by id. */
static char **subst(char **argv, int argc, const char *id)
{
        char **out = calloc((size_t)argc + 1, sizeof(char *));
        if (!out)
                die("calloc");
        for (int i = 0; i < argc; i++)
                out[i] = strcmp(argv[i], "{}") == 0 ? (char *)id : argv[i];
        return out;
}

/* Start argv with stdout on *outfd (a pipe) when outfd is not NULL, else /dev/null. */
static pid_t start(char **argv, int *outfd, int devnull)
{
        int p[2] = {-1, -1};
        if (outfd && pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        pid_t pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                dup2(outfd ? p[1] : devnull, 1);
                execvp(argv[0], argv);
                _exit(127);
        }
        if (outfd) {
                close(p[1]);
                *outfd = p[0];
        }
        return pid;
}

static int wait_ok(pid_t pid, const char *name)
{
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        die("waitpid");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "harness: %s failed (status 0x%x)\n", name, st);
                return -1;
        }
        return 0;
}

/* Split argv at ";" into at most 8 commands. */
static int split(char **argv, int argc, char **cmds[8], int lens[8])
{
        int n = 0, start_i = 0;
        for (int i = 0; i <= argc; i++) {
                if (i == argc || strcmp(argv[i], ";") == 0) {
                        if (n == 8 || i == start_i)
                                return -1;
                        cmds[n] = argv + start_i;
                        lens[n++] = i - start_i;
                        start_i = i + 1;
                }
        }
        return n;
}

static int cycle(int n, const char *out, char **argv, int argc)
{
        char **cmds[8];
        int lens[8];
        int ncmd = split(argv, argc, cmds, lens);
        if (ncmd < 1) {
                fprintf(stderr, "harness: cycle: bad command list\n");
                return 2;
        }
        FILE *f = fopen(out, "w");
        if (!f)
                die(out);
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        for (int it = 0; it < n; it++) {
                double t0 = now();
                int fd;
                char **c0 = subst(cmds[0], lens[0], "");
                pid_t pid = start(c0, &fd, devnull);
                char id[256];
                size_t got = 0;
                ssize_t k;
                while (got < sizeof(id) - 1 && (k = read(fd, id + got, sizeof(id) - 1 - got)) > 0)
                        got += (size_t)k;
                close(fd);
                id[got] = '\0';
                id[strcspn(id, "\r\n")] = '\0';
                free(c0);
                if (wait_ok(pid, cmds[0][0]) < 0 || !id[0])
                        return 1;
                for (int c = 1; c < ncmd; c++) {
                        char **ci = subst(cmds[c], lens[c], id);
                        pid = start(ci, NULL, devnull);
                        free(ci);
                        if (wait_ok(pid, cmds[c][0]) < 0)
                                return 1;
                }
                fprintf(f, "%.9f\n", now() - t0);
        }
        return fclose(f) == 0 ? 0 : 1;
}

static int startbg(const char *pidfile, char **argv)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        pid_t pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                setsid();
                dup2(p[1], 1);
                /* The command keeps a reader of its own stdout: once we are gone its writes
                 * neither fail nor end it (GNU tail -f exits when its output has no reader). */
                if (dup(p[0]) < 0) /* a new fd, without O_CLOEXEC */
                        _exit(127);
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                execvp(argv[0], argv);
                _exit(127);
        }
        close(p[1]);
        char c;
        if (read(p[0], &c, 1) != 1) {
                fprintf(stderr, "harness: %s did not start\n", argv[0]);
                return 1;
        }
        FILE *f = fopen(pidfile, "a");
        if (!f)
                die(pidfile);
        fprintf(f, "%d\n", (int)pid);
        return fclose(f) == 0 ? 0 : 1;
}

static int burst(int n, const char *out, char **argv, int argc)
{
        char **ids = calloc((size_t)n, sizeof(char *));
        const char *idfile = getenv("HARNESS_IDS");
        FILE *in = idfile ? fopen(idfile, "r") : NULL;
        if (idfile && !in)
                die(idfile);
        for (int i = 0; i < n; i++) {
                char line[256];
                if (in && !fgets(line, sizeof(line), in)) {
                        fprintf(stderr, "harness: %s has fewer than %d lines\n", idfile, n);
                        return 1;
                }
                if (!in)
                        snprintf(line, sizeof(line), "%d", i);
                line[strcspn(line, "\r\n")] = '\0';
                ids[i] = strdup(line);
        }
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        pid_t *pids = calloc((size_t)n, sizeof(pid_t));
        double *t = calloc((size_t)n, sizeof(double));
        double t0 = now();
        for (int i = 0; i < n; i++) {
                char **ci = subst(argv, argc, ids[i]);
                pids[i] = start(ci, NULL, devnull);
                free(ci);
        }
        int failed = 0;
        for (int left = n; left > 0; left--) {
                int st;
                pid_t w = wait(&st);
                if (w < 0)
                        die("wait");
                double tw = now();
                for (int i = 0; i < n; i++)
                        if (pids[i] == w)
                                t[i] = tw - t0;
                failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        }
        double total = now() - t0;
        FILE *f = fopen(out, "w");
        if (!f)
                die(out);
        fprintf(f, "%.9f\n", total);
        for (int i = 0; i < n; i++)
                fprintf(f, "%.9f\n", t[i]);
        if (failed)
                fprintf(stderr, "harness: %d of %d failed\n", failed, n);
        return fclose(f) == 0 && !failed ? 0 : 1;
}

int main(int argc, char **argv)
{
        if (argc >= 5 && strcmp(argv[1], "cycle") == 0 && strcmp(argv[4], "--") == 0)
                return cycle(atoi(argv[2]), argv[3], argv + 5, argc - 5);
        if (argc >= 5 && strcmp(argv[1], "startbg") == 0 && strcmp(argv[3], "--") == 0)
                return startbg(argv[2], argv + 4);
        if (argc >= 6 && strcmp(argv[1], "burst") == 0 && strcmp(argv[4], "--") == 0)
                return burst(atoi(argv[2]), argv[3], argv + 5, argc - 5);
        fprintf(stderr, "usage: harness cycle N OUT -- CMD... ';' CMD...\n"
                        "       harness startbg PIDFILE -- CMD...\n"
                        "       harness burst N OUT -- CMD...\n");
        return 2;
}
