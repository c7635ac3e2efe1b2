/* SPDX-License-Identifier: MIT */
/* proctitle.h */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "proctitle.h"

extern char **environ;

/* The kernel's argument and environment area: [start, end), argv's strings then environ's. */
static char *area_start, *area_end;
static char *arg_end; /* where the environment's strings begin */

/* Extend [area_start, *end) over the strings of v that follow it without a gap. */
static void take_strings(char **v, char **end)
{
        for (size_t i = 0; v && v[i]; i++)
                if (v[i] == *end)
                        *end = v[i] + strlen(v[i]) + 1;
}

/* A heap copy of each string of v, in place; false when memory ran out (v stays as it was). */
static bool move_to_heap(char **v)
{
        for (size_t i = 0; v && v[i]; i++) {
                char *copy = strdup(v[i]);
                if (!copy)
                        return false;
                v[i] = copy;
        }
        return true;
}

void proctitle_init(int argc, char **argv)
{
        if (argc < 1 || !argv[0])
                return;
        char *start = argv[0], *end = argv[0];
        take_strings(argv, &end);
        char *env_start = end;
        take_strings(environ, &end);

        /* environ's array itself is the kernel's too (on the stack): copy it as well */
        size_t n = 0;
        while (environ && environ[n])
                n++;
        char **env = calloc(n + 1, sizeof(*env));
        if (!env)
                return;
        if (n > 0) /* environ may be NULL (clearenv): memcpy from NULL is undefined */
                memcpy(env, environ, n * sizeof(*env));
        if (!move_to_heap(argv) || !move_to_heap(env)) {
                free(env); /* environ still points to the original array */
                return;    /* no area then: hiding would cut strings still in use */
        }
        environ = env;
        area_start = start;
        arg_end = env_start;
        area_end = end;
}

void proctitle_hide(const char *name)
{
        (void)prctl(PR_SET_NAME, name);
        if (!area_start)
                return;
        size_t size = (size_t)(area_end - area_start);
        memset(area_start, 0, size);
        size_t args = (size_t)(arg_end - area_start);
        if (args < 2)
                return;
        /* The name, then a NUL; the last byte of the argument area non-NUL: the kernel then
         * shows the area only up to its first NUL (the setproctitle convention), so not even
         * the length of the caller's command line shows through. */
        size_t len = strlen(name);
        if (len > args - 2)
                len = args - 2;
        /* the area was zeroed above: the NUL after the name is there already */
        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
        memcpy(area_start, name, len);
        area_start[args - 1] = ' ';
        /* The environment: one fixed entry naming the process, so that a host-side reader
         * (an administrator, a test's leak check) tells an sbx process from one whose
         * environment is empty; never anything of the caller's. */
        char entry[64];
        int n = snprintf(entry, sizeof(entry), "SBX_PROCESS=%s", name);
        if (n > 0 && (size_t)n < sizeof(entry) && (size_t)n < size - args)
                memcpy(arg_end, entry, (size_t)n + 1);
}

void *proctitle_save(void)
{
        if (!area_start)
                return NULL;
        size_t size = (size_t)(area_end - area_start);
        void *copy = malloc(size);
        if (copy)
                memcpy(copy, area_start, size);
        return copy;
}

void proctitle_restore(void *saved)
{
        if (!saved || !area_start)
                return;
        memcpy(area_start, saved, (size_t)(area_end - area_start));
        free(saved);
}
