/* SPDX-License-Identifier: MIT */
/*
 * Name resolution off the proxy's event loop: getaddrinfo(3) blocks (seconds, on a slow or
 * dead resolver), so each lookup runs in a short-lived detached thread that hands its result
 * back through a pipe the loop polls. The proxy process never forks, so threads are safe in
 * it; the supervisor itself stays single-threaded.
 */
#pragma once

#include <netdb.h>
#include <stdint.h>

struct resolve_job {
        uint64_t cookie;      /* the caller's: which connection asked */
        int err;              /* getaddrinfo's result (0 or EAI_*) */
        struct addrinfo *res; /* freed with resolve_job_free */
        char host[256];
};

/* Start resolving job->host; the job comes back (the same pointer) on notify_fd when done. */
int resolve_start(struct resolve_job *job, int notify_fd);
/* Read one finished job from the pipe's read end; NULL when none is ready. */
struct resolve_job *resolve_finished(int pipe_rd);
void resolve_job_free(struct resolve_job *job);
