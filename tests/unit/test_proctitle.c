/* SPDX-License-Identifier: MIT */
/*
 * src/shared/proctitle.c: what /proc/PID/cmdline and /proc/PID/environ show of a process that
 * hid the caller's command line, read by its parent as the kernel shows it; and that nothing
 * the program still uses (argv, getenv) changes.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/proctitle.h"
#include "unit.h"

/* The bytes of /proc/PID/FILE, NULs as '|'. */
static void proc_text(pid_t pid, const char *file, char *out, size_t n)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd < 0 ? -1 : read(fd, out, n - 1);
        if (fd >= 0)
                close(fd);
        if (got < 0)
                got = 0;
        for (ssize_t i = 0; i < got; i++)
                if (out[i] == '\0')
                        out[i] = '|';
        out[got] = '\0';
}

int main(int argc, char **argv)
{
        char *args[] = {argv[0], "--env", "SECRET=hunter2", NULL};
        /* run again with a known command line and environment */
        if (!getenv("PROCTITLE_CHILD")) {
                char *env[] = {"PROCTITLE_CHILD=1", "TOKEN=tok123", NULL};
                execve("/proc/self/exe", args, env);
                return 1;
        }
        char before[4096];
        proc_text(getpid(), "cmdline", before, sizeof(before));
        proctitle_init(argc, argv);
        CHECK_STR(argv[1], "--env");
        CHECK_STR(argv[2], "SECRET=hunter2");
        CHECK_STR(getenv("TOKEN"), "tok123");

        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        if (pid == 0) {
                char c;
                proctitle_hide("sbx-test");
                /* what the program uses is untouched */
                int ok = strcmp(argv[2], "SECRET=hunter2") == 0 &&
                         strcmp(getenv("TOKEN"), "tok123") == 0;
                close(p[1]);
                (void)!read(p[0], &c, 1);
                _exit(ok ? 0 : 1);
        }
        close(p[0]);
        usleep(200 * 1000);
        char text[4096];
        proc_text(pid, "cmdline", text, sizeof(text));
        CHECK_STR(text, "sbx-test|");
        proc_text(pid, "environ", text, sizeof(text));
        CHECK(strstr(text, "tok123") == NULL);
        CHECK(strncmp(text, "SBX_PROCESS=sbx-test|", 21) == 0);
        CHECK(strspn(text + 21, "|") == strlen(text + 21)); /* nothing after it */
        close(p[1]);
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

        /* hide, then put back: our own command line is what it was */
        void *saved = proctitle_save();
        proctitle_hide("sbx-test");
        proc_text(getpid(), "cmdline", text, sizeof(text));
        CHECK_STR(text, "sbx-test|");
        proctitle_restore(saved);
        proc_text(getpid(), "cmdline", text, sizeof(text));
        CHECK_STR(text, before);
        CHECK(strstr(before, "hunter2") != NULL); /* the check could see the secret */

        return unit_done();
}
