/* SPDX-License-Identifier: MIT */
/*
 * What /proc/PID/cmdline and /proc/PID/environ show of sbx's own processes inside a session.
 * Those are forks of the host's sbx that never exec, so the kernel would show the caller's
 * command line (every --env value, host paths) and environment to every process of the
 * session. The strings live where the kernel reads them (the start of the stack); they are
 * moved to the heap at start, so the original area can be blanked at any time.
 */
#pragma once

#include <stddef.h>

/* First thing in main: copy argv's strings and the environment to the heap and point argv and
 * environ at the copies. Nothing later may use the original area. */
void proctitle_init(int argc, char **argv);

/* Blank the original area: cmdline shows only name (at most the area's size), environ only
 * "SBX_PROCESS=name". Done in a process that the session can see before it can see it. */
void proctitle_hide(const char *name);

/* The area's bytes as they are now (to put back with proctitle_restore after a child was
 * forked from the hidden state); NULL without an area or memory. */
void *proctitle_save(void);
void proctitle_restore(void *saved);
