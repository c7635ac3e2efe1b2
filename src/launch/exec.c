/* SPDX-License-Identifier: MIT */
/* Finding a live session and running a command in it: through its init's exec server, else
 * (a v2 memory limit, a request over one message, an init that cannot serve) by joining it
 * (join.c). */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <string.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../session/hold.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "cgroup.h"
#include "launch.h"
#include "session_ref.h"

void session_ref_close(struct session_ref *s)
{
        closep(&s->sessfd);
        closep(&s->hold);
        closep(&s->ctl);
        closep(&s->pidfd);
        closep(&s->auditfd);
        closep(&s->server);
        session_ns_close(s->ns);
        session_state_free(&s->st);
        cgroup_session_free(&s->cg);
}

/* The init's exec server, or -1 (an older session, or one that is ending). */
static int server_connect(int sessfd)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/exec", sessfd);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0 || RETRY_EINTR(connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0)
                return -1;
        return TAKE_FD(fd);
}

int session_ref_join(struct session_ref *s, const char *id_or_name, struct sbx_error *e)
{
        /* The supervisor's answer is the liveness proof and hands over the init's pidfd, so
         * no pid read from a file is ever trusted. */
        char reply[64];
        int fds[1 + SESSION_NS_COUNT];
        unsigned mask = 0;
        if (s->ctl < 0)
                s->ctl = control_connect_live(s->sessfd, id_or_name, e);
        /* a host directory: not to be inherited by what joins the session from here */
        closep(&s->sessfd);
        if (s->ctl < 0)
                return s->ctl;
        int r = control_call(s->ctl, "EXEC", reply, sizeof(reply), fds, ARRAY_SIZE(fds));
        s->pidfd = fds[0];
        if (r == 0 && sscanf(reply, "OK %u", &mask) == 1)
                for (int i = 0, k = 1; i < SESSION_NS_COUNT; i++)
                        if (mask & (1u << i))
                                s->ns[i] = fds[k++];
        if (r < 0 || mask == 0 || s->pidfd < 0 || s->ns[NS_USER] < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it is ending)", id_or_name);
        return 0;
}

/*
 * Hold the session for an exec through its server: HOLDS_FILE, or (a session made by an sbx
 * without it, a file system without locks) a HOLD on ctl, not waiting for an answer. Then the
 * init accepting is the liveness proof. < 0 when the session is ending.
 */
static int hold(struct session_ref *s, const char *id_or_name, struct sbx_error *e)
{
        s->hold = session_hold_take(s->sessfd);
        if (s->hold >= 0)
                return 0;
        if (s->hold == -EWOULDBLOCK)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it is ending)", id_or_name);
        if ((s->ctl = control_connect_live(s->sessfd, id_or_name, e)) < 0)
                return s->ctl;
        (void)RETRY_EINTR(send(s->ctl, "HOLD", 4, MSG_NOSIGNAL));
        return 0;
}

int session_ref_open(const char *id_or_name, struct session_ref *s, bool via_server,
                     struct sbx_error *e)
{
        int r = s->sessfd = control_session_dir(id_or_name, e);
        if (r < 0)
                return r;
        r = session_state_read(s->sessfd, &s->st);
        if (r == -ENOENT) /* still being made (its supervisor writes it before it answers) */
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0, "no such session '%s'",
                                id_or_name);
        if (r < 0)
                return sbx_internal(e, -r, "failed to read the state of session '%s'", id_or_name);
        if (cgroup_session_from_state(&s->st, &s->cg) < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        s->auditfd = audit_open(s->sessfd, &s->st);
        /* Fail fast: a command or helper would be born frozen and wait for the resume. Only
         * for a session that lives: a supervisor killed while it was paused leaves the cgroup
         * frozen, and that session has ended. */
        if (cgroup_session_frozen(&s->cg) == 1) {
                if ((s->ctl = control_connect_live(s->sessfd, id_or_name, e)) < 0)
                        return s->ctl;
                return sbx_fail(e, EXIT_FAILED, "paused", 0,
                                "session '%s' is paused: 'sbx resume %s' first", id_or_name,
                                id_or_name);
        }
        if (via_server && cgroup_server_ok(&s->cg)) {
                if ((r = hold(s, id_or_name, e)) < 0)
                        return r;
                s->server = server_connect(s->sessfd);
        }
        return s->server < 0 ? session_ref_join(s, id_or_name, e) : 0;
}

/* The session's init lives: from the supervisor's own pidfd of it (the join path has it, the
 * server path asks, as a join would), so that an init that died moments ago, whose death the
 * supervisor has not taken in yet, does not pass for alive as a bare answer would. */
static bool init_alive(struct session_ref *s)
{
        struct sbx_error scratch = {0};
        if (s->ctl < 0 && s->sessfd >= 0)
                s->ctl = control_connect(s->sessfd, &scratch);
        if (s->pidfd < 0 && s->ctl >= 0) {
                char reply[64];
                int fds[1 + SESSION_NS_COUNT];
                if (control_call(s->ctl, "EXEC", reply, sizeof(reply), fds, ARRAY_SIZE(fds)) < 0)
                        return false;
                s->pidfd = fds[0];
                for (size_t i = 1; i < ARRAY_SIZE(fds); i++)
                        closep(&fds[i]);
        }
        struct pollfd p = {.fd = s->pidfd, .events = POLLIN};
        return s->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

/*
 * The command's reaper ended without a word (relay_run's -EPIPE). A destroy or the TTL ends
 * it so; so can, in an unprivileged session whose one uid the reapers share, a process of the
 * session itself. Only a live init tells the two apart: then the session did not end, and
 * saying so would be false.
 */
static void word_lost_reaper(struct session_ref *s, const char *id_or_name, struct sbx_error *e)
{
        if (!init_alive(s))
                return;
        *e = (struct sbx_error){0};
        sbx_fail(e, EXIT_SBX_FAILED, "internal", 0,
                 "the command's reaper in session '%s' ended without reporting the command's "
                 "end (a process of the session killed it); the session runs on",
                 id_or_name);
}

int exec_in_session(const char *id_or_name, const struct exec_request *rq, struct exec_result *res,
                    struct sbx_error *e)
{
        struct session_ref s = SESSION_REF_INIT;
        int r = session_ref_open(id_or_name, &s, true, e);
        if (r == 0) {
                int64_t start = audit_now_ms();
                struct cgroup_exec cx = CGROUP_EXEC_INIT;
                r = s.server >= 0 ? cgroup_server_prepare(&s.st, &s.cg, &cx, e) : EXEC_NOT_STARTED;
                if (r == 0)
                        r = exec_handoff(TAKE_FD(s.server), &s.st, &cx, rq, res, e);
                if (r == EXEC_NOT_STARTED && (r = session_ref_join(&s, id_or_name, e)) == 0)
                        r = exec_join(s.ns, &s.st, &s.cg, rq, res, e);
                if (r == -EPIPE)
                        word_lost_reaper(&s, id_or_name, e);
                audit_write_exec(s.auditfd, &s.st, rq, res, start, r, e);
        }
        /* exec's own exit codes are the command's: sbx's refusals are 125 */
        if (r < 0 && e->code && strcmp(e->code, "paused") == 0)
                e->exit_code = EXIT_SBX_FAILED;
        session_ref_close(&s);
        return r;
}
