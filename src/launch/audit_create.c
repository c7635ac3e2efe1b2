/* SPDX-License-Identifier: MIT */
/*
 * The "create" record of the audit log: the boundaries the session really got (namespaces,
 * uid mapping, capabilities, seccomp, limits and the cgroup hierarchy enforcing each, network,
 * mounts), written by the supervisor once the session init is ready. Also the "warning"
 * records for choices that open a boundary (--seccomp unconfined, --net host) or that were
 * not honoured as written (skipped volumes).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../session/audit.h"
#include "audit_create.h"
#include "launch.h"
#include "limits.h"

static void namespaces(struct buf *b, const struct sbx_config *c)
{
        (void)buf_puts(b, ",\"namespaces\":[");
        for (int i = 0; i < SESSION_NS_COUNT; i++) {
                if (i == NS_NET && c->net == SBX_NET_HOST)
                        continue; /* shared with the host */
                (void)buf_printf(b, "%s\"%s\"", i ? "," : "", session_ns_names[i]);
        }
        (void)buf_puts(b, "]");
}

/* The host ids of the session: its range (picked for it, or [security] uid_range), the uid of
 * sbx's own helper inside it (the init between commands: the range's last id), and that of its
 * host-side helpers (the proxy), which no namespace maps. null where there is none. */
static void uid_map(struct buf *b, const struct session_state *st)
{
        (void)buf_printf(b, ",\"uid_map\":{\"inside\":0,\"outside\":%u,\"count\":%u,",
                         st->uid_start, st->uid_count);
        if (st->uid_count > 1)
                (void)buf_printf(b, "\"helper_uid\":%u,",
                                 (unsigned)(st->uid_start + st->uid_count - 1));
        else
                (void)buf_puts(b, "\"helper_uid\":null,");
        if (st->helper_uid)
                (void)buf_printf(b, "\"host_helper_uid\":%u}", st->helper_uid);
        else
                (void)buf_puts(b, "\"host_helper_uid\":null}");
}

static void mounts(struct buf *b, const struct sbx_config *c)
{
        (void)buf_puts(b, ",\"mounts\":[");
        for (size_t i = 0; i < c->n_mounts; i++) {
                (void)buf_puts(b, i ? ",{\"host\":" : "{\"host\":");
                (void)json_cstr(b, c->mounts[i].host);
                (void)buf_puts(b, ",\"sandbox\":");
                (void)json_cstr(b, c->mounts[i].sandbox);
                (void)buf_printf(b, ",\"read_only\":%s}",
                                 c->mounts[i].read_only ? "true" : "false");
        }
        (void)buf_puts(b, "]");
}

int audit_write_create(int fd, const struct session_state *st, const struct sbx_config *c,
                       const struct cgroup_plan *plan)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, st->id, "create");
        audit_str(&b, "name", st->name);
        audit_int(&b, "caller_uid", (int64_t)getuid());
        audit_int(&b, "supervisor_pid", st->supervisor_pid);
        audit_int(&b, "init_pid", st->init_pid);
        namespaces(&b, c);
        uid_map(&b, st);
        /* every set (effective, permitted, inheritable, bounding, ambient) is emptied */
        (void)buf_puts(&b, ",\"capabilities\":[]");
        audit_bool(&b, "no_new_privs", true);
        audit_str(&b, "seccomp", seccomp_profile_name(c->seccomp));
        struct limits_report lr;
        limits_from_plan(c, plan, &lr);
        limits_json(&b, &lr);
        (void)buf_puts(&b, ",\"network\":{\"mode\":");
        (void)json_cstr(&b, net_mode_name(c->net));
        audit_strv(&b, "allow", c->allow_hosts);
        (void)buf_puts(&b, "}");
        audit_str(&b, "rootfs", c->image ? NULL : c->rootfs);
        audit_str(&b, "image", c->image);
        audit_bool(&b, "read_only", c->read_only);
        mounts(&b, c);
        audit_str(&b, "workdir", st->workdir);
        audit_str(&b, "hostname", st->hostname);
        audit_int(&b, "ttl_seconds", (int64_t)st->ttl_sec);
        audit_int(&b, "timeout_seconds", (int64_t)st->timeout_sec);
        return audit_commit(fd, &b);
}

static void warning(int fd, const char *id, const char *message)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, id, "warning");
        audit_str(&b, "message", message);
        (void)audit_commit(fd, &b);
}

void audit_write_warnings(int fd, const char *id, const struct sbx_config *c)
{
        for (char **w = c->warnings; w && *w; w++)
                warning(fd, id, *w);
        if (c->net == SBX_NET_HOST)
                warning(fd, id, SBX_WARN_NET_HOST);
        if (c->seccomp == SBX_SECCOMP_UNCONFINED)
                warning(fd, id, SBX_WARN_UNCONFINED);
}

void audit_write_exec(int fd, const struct session_state *st, const struct exec_request *rq,
                      const struct exec_result *res, int64_t start_ms, int r,
                      const struct sbx_error *e)
{
        if (fd < 0)
                return;
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, st->id, "exec");
        audit_strv(&b, "argv", rq->argv);
        audit_str(&b, "workdir", rq->workdir ? rq->workdir : st->workdir);
        /* only the names: values given with -e may be secrets */
        (void)buf_puts(&b, ",\"env_set\":[");
        for (size_t i = 0; rq->env_add && rq->env_add[i]; i++) {
                const char *eq = strchr(rq->env_add[i], '=');
                (void)buf_puts(&b, i ? "," : "");
                (void)json_string(&b, rq->env_add[i],
                                  eq ? (size_t)(eq - rq->env_add[i]) : strlen(rq->env_add[i]));
        }
        (void)buf_puts(&b, "]");
        audit_bool(&b, "interactive", rq->interactive);
        audit_bool(&b, "tty", rq->tty);
        audit_time(&b, "start", start_ms);
        audit_int(&b, "duration_ms", audit_now_ms() - start_ms);
        audit_int(&b, "timeout_ms",
                  (int64_t)(rq->timeout_ms ? rq->timeout_ms : st->timeout_sec * 1000));
        if (r < 0 || !res) {
                audit_int(&b, "exit_code", e && e->exit_code ? e->exit_code : 125);
                audit_str(&b, "error", e ? e->code : "internal");
                audit_str(&b, "message", e ? e->message : NULL);
        } else {
                audit_int(&b, "exit_code", res->exit_code);
                audit_bool(&b, "timed_out", res->timed_out);
                audit_bool(&b, "oom_killed", res->oom_killed);
                audit_int(&b, "output_bytes", (int64_t)res->output_bytes);
                audit_bool(&b, "output_truncated", res->truncated);
                if (res->exec_error.exit_code)
                        audit_str(&b, "message", res->exec_error.message);
        }
        (void)audit_commit(fd, &b);
}

int audit_create_failed(struct sbx_error *e, const char *audit_dir, int err)
{
        return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", err,
                        "cannot create the audit log in '%s' ([audit] dir): make it a directory "
                        "of yours, not writable by others, with no symbolic link in its path",
                        audit_dir ? audit_dir : "the runtime dir");
}

int audit_proxy_exited(int fd, const char *id, struct proxy_handle *h)
{
        pid_t pid = h->pid;
        siginfo_t si;
        if (h->pidfd < 0 || proxy_reap(h, &si) != 1)
                return 0;
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, id, "helper_exited");
        audit_str(&b, "helper", "proxy");
        audit_int(&b, "pid", pid);
        if (si.si_code == CLD_EXITED) {
                audit_int(&b, "exit_code", si.si_status);
                audit_str(&b, "signal", NULL);
        } else {
                (void)buf_puts(&b, ",\"exit_code\":null");
                audit_str(&b, "signal", sigabbrev_np(si.si_status));
        }
        audit_str(&b, "effect", "the session has no network egress from now on");
        (void)audit_commit(fd, &b);
        return 1;
}
