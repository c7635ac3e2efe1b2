/* SPDX-License-Identifier: MIT */
/* Finding a live session and getting its init's pidfd from the supervisor. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../session/runtime.h"
#include "../shared/macros.h"
#include "launch.h"
#include "session_ref.h"

void session_ref_close(struct session_ref *s)
{
        closep(&s->ctl);
        closep(&s->pidfd);
        closep(&s->auditfd);
        session_ns_close(s->ns);
        session_state_free(&s->st);
}

int session_ref_open(const char *id_or_name, struct session_ref *s, struct sbx_error *e)
{
        _cleanup_close_ int rtfd = -1;
        int r = runtime_open(&rtfd, e);
        if (r < 0)
                return r;
        char id[SESSION_ID_LEN + 1];
        if ((r = runtime_resolve(rtfd, id_or_name, id, e)) < 0)
                return r;
        _cleanup_close_ int sessfd = runtime_open_session(rtfd, id);
        if (sessfd < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0, "no such session '%s'",
                                id_or_name);
        /* The supervisor's answer is the liveness proof and hands over the init's pidfd, so
         * no pid read from a file is ever trusted. */
        s->ctl = control_connect(sessfd, e);
        if (s->ctl < 0) {
                e->exit_code = 0;
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it has ended)", id_or_name);
        }
        char reply[64];
        int fds[1 + SESSION_NS_COUNT];
        unsigned mask = 0;
        r = control_call(s->ctl, "EXEC", reply, sizeof(reply), fds, ARRAY_SIZE(fds));
        s->pidfd = fds[0];
        if (r == 0 && sscanf(reply, "OK %u", &mask) == 1)
                for (int i = 0, k = 1; i < SESSION_NS_COUNT; i++)
                        if (mask & (1u << i))
                                s->ns[i] = fds[k++];
        if (r < 0 || mask == 0 || s->pidfd < 0 || s->ns[NS_USER] < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it is ending)", id_or_name);
        r = session_state_read(sessfd, &s->st);
        if (r < 0)
                return sbx_internal(e, -r, "failed to read the state of session '%s'", id);
        s->auditfd = audit_open(sessfd, &s->st);
        return 0;
}

int exec_in_session(const char *id_or_name, const struct exec_request *rq, struct exec_result *res,
                    struct sbx_error *e)
{
        struct session_ref s = SESSION_REF_INIT;
        int r = session_ref_open(id_or_name, &s, e);
        if (r == 0) {
                int64_t start = audit_now_ms();
                r = exec_join(s.ns, &s.st, rq, res, e);
                audit_write_exec(s.auditfd, &s.st, rq, res, start, r, e);
        }
        session_ref_close(&s);
        return r;
}
