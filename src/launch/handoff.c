/* SPDX-License-Identifier: MIT */
/*
 * An exec handed to the session init's own server (sandbox/exec_server.c): the client sends
 * the request with its pipes and relays, as after joining (join.c), but joins nothing itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../sandbox/exec_wire.h"
#include "shared/macros.h"
#include "shared/sync.h"
#include "shared/util.h"
#include "cgroup.h"
#include "join.h"
#include "launch.h"

void exec_wire_from_request(const struct exec_request *rq, const struct session_state *st,
                            char **env, const struct exec_fds *f, struct exec_wire *w)
{
        *w = (struct exec_wire){
            .flags = (rq->tty ? EXEC_WIRE_TTY : 0) |
                     (!rq->tty && rq->interactive ? EXEC_WIRE_STDIN : 0) |
                     (!rq->tty && !rq->capture ? EXEC_WIRE_STDERR : 0),
            .nofile = st->nofile,
            .fsize = exec_fsize_for_disk(st->disk_bytes),
            .workdir = rq->workdir ? rq->workdir : st->workdir,
            .argv = rq->argv,
            .envp = env,
            .fds = {f->out[1], f->out[0], f->err[1], f->err[0], f->in[0]},
        };
}

/*
 * B's first words: the pty's master with -T, then its pidfd. 0, EXEC_NOT_STARTED when the
 * client is to start the command itself (B asks so: the session's pids are all taken; or the
 * connection was reset, which only happens when it closed with the request unread: the init
 * could not fork B, or it ended), or an error.
 */
static int wait_reaper(struct exec_fds *f, bool tty, struct sbx_error *e)
{
        int r = 0;
        if (tty && (r = sync_wait_fd(f->status[0], "the command's reaper", &f->pty_master, e)) == 0)
                exec_pty_size_from_caller(f->pty_master);
        if (r == 0)
                r = sync_wait_fd(f->status[0], "the command's reaper", &f->reaper_pidfd, e);
        if (r == -ECONNRESET) {
                *e = (struct sbx_error){0};
                return EXEC_NOT_STARTED;
        }
        return r == 0 && f->reaper_pidfd < 0 ? EXEC_NOT_STARTED : r;
}

/* A request sent, its reaper not heard from yet: the client's ends of the command's fds. */
struct exec_pending {
        struct exec_fds f;
        uint64_t sent_ms;
};

void exec_pending_free(struct exec_pending *p)
{
        if (!p)
                return;
        exec_fds_close(&p->f);
        free(p);
}

int exec_handoff_send(int chan, const struct session_state *st, const struct exec_request *rq,
                      struct exec_pending **ret, struct sbx_error *e)
{
        _cleanup_close_ int ch = chan;
        *ret = NULL;
        struct exec_pending *p = calloc(1, sizeof(*p));
        if (!p)
                return sbx_internal(e, ENOMEM, "out of memory");
        p->f = (struct exec_fds)EXEC_FDS_INIT;
        p->f.status[0] = TAKE_FD(ch);
        p->sent_ms = now_monotonic_ms();
        _cleanup_strv_ char **env = exec_env(rq, st);
        int r = env ? 0 : sbx_internal(e, ENOMEM, "out of memory");
        if (r == 0)
                r = exec_host_pipes(rq, &p->f, e);
        /* Too big for one message, or the init is gone: the caller takes its own path. */
        struct exec_wire w;
        if (r == 0)
                exec_wire_from_request(rq, st, env, &p->f, &w);
        if (r == 0 && exec_wire_send(p->f.status[0], &w) < 0)
                r = EXEC_NOT_STARTED;
        if (r != 0) {
                exec_pending_free(p);
                return r;
        }
        /* B has its copies now; the client keeps the read ends and stdin's write end. */
        closep(&p->f.out[1]);
        closep(&p->f.err[1]);
        closep(&p->f.in[0]);
        *ret = p;
        return 0;
}

int exec_handoff_finish(struct exec_pending *p, uint64_t start_ms, const struct session_state *st,
                        struct cgroup_exec *cx, const struct exec_request *rq,
                        struct exec_result *res, struct sbx_error *e)
{
        struct exec_fds f = p->f;
        uint64_t start = start_ms ? start_ms : p->sent_ms;
        free(p);
        struct cgroup_exec none = CGROUP_EXEC_INIT;
        if (!cx)
                cx = &none;
        int r = wait_reaper(&f, rq->tty, e);
        if (r != 0) {
                (void)cgroup_exec_finish(cx);
                exec_fds_close(&f);
                return r;
        }
        return exec_relay_finish(&f, cx, st, rq, start, res, e);
}

int exec_handoff(int chan, const struct session_state *st, struct cgroup_exec *cx,
                 const struct exec_request *rq, struct exec_result *res, struct sbx_error *e)
{
        struct exec_pending *p;
        int r = exec_handoff_send(chan, st, rq, &p, e);
        if (r != 0) {
                if (cx)
                        (void)cgroup_exec_finish(cx);
                return r;
        }
        return exec_handoff_finish(p, 0, st, cx, rq, res, e);
}
