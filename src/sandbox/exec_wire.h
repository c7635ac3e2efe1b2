/* SPDX-License-Identifier: MIT */
/*
 * An exec request handed to the session's own exec server (exec_server.c): one SOCK_SEQPACKET
 * message from the client with the command, its environment and working directory, and the
 * host ends of its pipes (SCM_RIGHTS). The client builds it from the session's state, so the
 * reaper inside only checks that it is well formed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Bigger requests (a huge argv or environment) take the client-side path instead. */
#define EXEC_WIRE_MAX_BYTES (128 * 1024)

enum {
        EXEC_WIRE_TTY = 1u << 0,    /* a pty inside: no pipes */
        EXEC_WIRE_STDIN = 1u << 1,  /* an input pipe */
        EXEC_WIRE_STDERR = 1u << 2, /* a separate error pipe (else stderr shares stdout's) */
};

/* The pipes, in the order they travel: -1 when absent. */
enum { WIRE_OUT_W, WIRE_OUT_R, WIRE_ERR_W, WIRE_ERR_R, WIRE_IN_R, WIRE_NFDS };

struct exec_wire {
        uint32_t flags;
        uint64_t nofile, fsize;
        const char *workdir;
        char **argv, **envp;
        int fds[WIRE_NFDS];
        char *buf; /* exec_wire_recv: what the strings point into */
};

/* Send w on sock. 0, -EMSGSIZE when it is too big for one message, or -errno. */
int exec_wire_send(int sock, const struct exec_wire *w);

/*
 * Receive and check one request (malloc'd vectors; the process execs or exits soon after, so
 * nothing is freed). 0, -EBADMSG for a malformed request, or -errno (0 bytes: -ECONNRESET).
 */
int exec_wire_recv(int sock, struct exec_wire *w);

/*
 * The checks of exec_wire_recv on one message already received: buf[0, len) (the strings of w
 * point into it) and the nfds fds that came with it, in order. 0 (w->argv and w->envp
 * malloc'd, w->buf untouched), or -EBADMSG with nothing allocated.
 */
int exec_wire_parse(char *buf, size_t len, const int *fds, size_t nfds, struct exec_wire *w);
