/* SPDX-License-Identifier: MIT */
#include "resolve.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/macros.h"

struct resolve_arg {
        struct resolve_job *job;
        int notify_fd;
};

static void *resolve_thread(void *p)
{
        struct resolve_arg a = *(struct resolve_arg *)p;
        free(p);
        const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        a.job->err = getaddrinfo(a.job->host, NULL, &hints, &a.job->res);
        /* The job's pointer itself travels (sizeof names its type: the pointer is meant, not
         * the job). A pointer is far below PIPE_BUF: the write is atomic, never interleaved. */
        (void)RETRY_EINTR(write(a.notify_fd, &a.job, sizeof(struct resolve_job *)));
        return NULL;
}

int resolve_start(struct resolve_job *job, int notify_fd)
{
        struct resolve_arg *a = malloc(sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (struct resolve_arg){job, notify_fd};
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        int r = pthread_create(&t, &attr, resolve_thread, a);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                free(a);
                return -r;
        }
        return 0;
}

struct resolve_job *resolve_finished(int pipe_rd)
{
        struct resolve_job *job;
        ssize_t n = RETRY_EINTR(read(pipe_rd, &job, sizeof(struct resolve_job *)));
        return n == (ssize_t)sizeof(struct resolve_job *) ? job : NULL;
}

void resolve_job_free(struct resolve_job *job)
{
        if (!job)
                return;
        if (job->res)
                freeaddrinfo(job->res);
        free(job);
}
