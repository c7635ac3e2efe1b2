/* SPDX-License-Identifier: MIT */
/* `run`: create + exec + destroy in this one process (docs/DESIGN.md, "run"). */
#include <stdio.h>
#include <string.h>

#include <sys/socket.h>
#include <unistd.h>

#include "../launch/audit_create.h"
#include "../launch/cgroup.h"
#include "../launch/launch.h"
#include "../launch/limits.h"
#include "../net/proxy.h"
#include "../session/audit.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "args.h"
#include "provision.h"

struct run_target {
        const int *ns;
        const struct session_state *st;
        const struct cgroup_session *cg;
};

static int run_target_exec(void *ctx, const struct exec_request *rq, struct exec_result *res,
                           struct sbx_error *e)
{
        const struct run_target *t = ctx;
        return exec_join(t->ns, t->st, t->cg, rq, res, e);
}

/* With an [audit] dir, a `run` leaves a log like a session's (create, exec, end). */
static int run_audit_open(const struct sbx_config *c, const struct cgroup_plan *plan,
                          struct session_state *st, pid_t init, int *ret_fd, struct sbx_error *e)
{
        int fd = audit_create(-1, c->audit_dir, st->id, &st->audit_path);
        if (fd < 0)
                return audit_create_failed(e, c->audit_dir, -fd);
        st->supervisor_pid = getpid();
        st->init_pid = init;
        *ret_fd = fd;
        (void)audit_write_create(fd, st, c, plan);
        audit_write_warnings(fd, st->id, c);
        return 0;
}

/* One line naming every default limit the session goes without, and the fix. */
static void warn_unenforced(const struct sbx_config *c, const struct cgroup_plan *plan)
{
        struct limits_report lr;
        char w[1024];
        limits_from_plan(c, plan, &lr);
        if (plan->unenforced && limits_warning(&lr, w, sizeof(w)))
                cli_warn("%s", w);
}

static int run_in_new_session(const struct sbx_config *c, const struct exec_request *rq,
                              struct exec_result *res, struct sbx_error *e)
{
        struct session_state st = {
            .timeout_sec = c->timeout_sec,
            .workdir = c->workdir,
            .hostname = c->hostname,
            .seccomp = c->seccomp,
            .net = c->net,
            .nofile = c->nofile,
            .disk_bytes = c->disk_bytes,
            .read_only = c->read_only,
            .env = session_env_build(c),
        };
        if (!st.env)
                return sbx_internal(e, ENOMEM, "out of memory");
        struct session_proc p = SESSION_PROC_INIT;
        _cleanup_(cgroup_plan_free) struct cgroup_plan plan = CGROUP_PLAN_INIT;
        _cleanup_(cgroup_session_free) struct cgroup_session cg = CGROUP_SESSION_INIT;
        /* No runtime entry: the id only names the session's cgroups. */
        int r = session_id_generate(st.id);
        if (r < 0)
                r = sbx_internal(e, -r, "failed to generate a session id");
        /* `run` makes only the cgroups that enforce a limit (none without limits): its session
         * ends with its one command, and the pid namespace alone takes every process with the
         * init (a kill-only v2 cgroup cost ~1.4 ms of mkdir, rmdir and waiting on a hybrid
         * host). A session from `create` keeps one for cgroup.kill, pause and for execs that
         * outlive their client. */
        if (r == 0 && cgroup_limits_wanted(c))
                r = cgroup_prepare(c, true, &plan, e);
        if (r == 0)
                r = cgroup_session_create_v2(&plan, c, st.id, &cg, e);
        /* The init's exec channel: the init itself serves the command that comes over it. */
        _cleanup_close_ int chan = -1, init_chan = -1;
        int pair[2];
        if (r == 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0) {
                chan = pair[0];
                init_chan = pair[1];
        }
        if (r == 0)
                r = session_spawn_start(c, &cg, init_chan, &p, e);
        /* while the init builds its root */
        if (r == 0 && (r = cgroup_session_create_v1(&plan, c, st.id, &cg, e)) == 0)
                cgroup_session_to_state(&cg, &st);
        else if (r < 0) /* by path: nothing has joined the session yet */
                cgroup_plan_release(&plan);
        bool provision = (c->packages && c->packages[0]) || c->setup, served = false;
        struct cgroup_exec cx = CGROUP_EXEC_INIT;
        /* The request goes ahead, before the session is ready: the init finds it as soon as it
         * is, where it would otherwise wait for this process to wake up on #2 and send it (two
         * wake-ups). Not when something must happen before the command, or can still
         * fail after #2 (a failure must mean that the command never ran): set-up commands and
         * packages, the egress proxy, the audit log's create record; nor with -T, whose pty
         * gets the caller's window size before the command starts. The init itself checks its
         * network namespace before #2 (helper_finish). */
        _cleanup_(exec_pending_freep) struct exec_pending *ahead = NULL;
        bool early = r == 0 && chan >= 0 && !provision && c->net != SBX_NET_PROXY &&
                     !c->audit_dir && !rq->tty;
        if (early && cgroup_server_ok(&cg)) {
                r = cgroup_server_prepare(&st, &cg, &cx, e);
                served = r == 0;
                if (served) {
                        r = exec_handoff_send(TAKE_FD(chan), &st, rq, &ahead, e);
                        served = r == 0;
                        if (r == EXEC_NOT_STARTED)
                                r = 0; /* too big for one message: the command joins */
                }
        }
        if (r == 0)
                r = session_spawn_finish(c, &cg, &p, e);
        if (r == 0) /* once the session is up: a failed one gets its own error only */
                warn_unenforced(c, &plan);
        uint64_t ready_ms = now_monotonic_ms(); /* #2: the init starts a command sent ahead */
        st.uid_start = p.uids.start;
        st.uid_count = p.uids.count;
        st.helper_uid = p.uids.helper;
        closep(&init_chan);
        _cleanup_close_ int auditfd = -1;
        if (r == 0 && c->audit_dir)
                r = run_audit_open(c, &plan, &st, p.pid, &auditfd, e);
        _cleanup_strv_ char **window = NULL;
        if (r == 0 && provision_window(c, &window) < 0)
                r = sbx_internal(e, ENOMEM, "failed to build the package index's allow list");
        if (r == 0)
                r = proxy_start(c, window, p.ns[NS_USER], p.ns[NS_NET], st.id, auditfd,
                                p.uids.helper, &p.proxy, e);
        bool window_open = r == 0 && window && window[0];
        if (window_open)
                provision_window_audit(auditfd, st.id, "provision_open", window);
        struct run_target t = {.ns = p.ns, .st = &st, .cg = &cg};
        if (r == 0 && provision)
                r = provision_session(c, run_target_exec, &t, NULL, e);
        if (window_open) /* the command itself gets the session's own network only */
                provision_window_close(&p.proxy, c->net, c->allow_hosts, auditfd, st.id);
        if (r == 0 && chan >= 0 && !early && cgroup_server_ok(&cg)) {
                r = cgroup_server_prepare(&st, &cg, &cx, e);
                served = r == 0;
        }
        if (r == 0) {
                int64_t start = audit_now_ms();
                r = ahead    ? exec_handoff_finish(TAKE_PTR(ahead), ready_ms, &st, &cx, rq, res, e)
                    : served ? exec_handoff(TAKE_FD(chan), &st, &cx, rq, res, e)
                             : EXEC_NOT_STARTED;
                if (r == EXEC_NOT_STARTED)
                        r = exec_join(p.ns, &st, &cg, rq, res, e);
                audit_write_exec(auditfd, &st, rq, res, start, r, e);
                /* the proxy's end during the command, before session_kill ends it */
                (void)audit_proxy_exited(auditfd, st.id, &p.proxy);
                audit_end(auditfd, st.id, "destroyed", "sbx run finished");
        }
        (void)cgroup_exec_finish(&cx); /* prepared, but no exec ran (or finished already) */
        free(st.audit_path);
        /* The command ran: its result goes out while the kernel tears the session down. Not
         * with host paths mounted in: the caller may act on them once we return (unmount one,
         * detach its device), which the session's mounts must no longer hold. A failed run
         * leaves nothing by the time it reports. */
        session_end(&p, &cg, r == 0 && c->n_mounts == 0);
        strv_freep(&st.env);
        return r;
}

int cmd_run(struct cli *cli, int argc, char **argv)
{
        struct option opts[40];
        memcpy(opts, create_long_options, n_create_long_options * sizeof(struct option));
        size_t n = n_create_long_options;
        opts[n++] = (struct option){"interactive", 0, NULL, 'i'};
        opts[n++] = (struct option){"tty", 0, NULL, 'T'};
        opts[n++] = (struct option){"max-output", 1, NULL, 'M'};
        opts[n++] = (struct option){"json", 0, NULL, OPT_JSON};
        opts[n++] = (struct option){"config", 1, NULL, OPT_CONFIG};
        opts[n++] = (struct option){"help", 0, NULL, OPT_HELP};
        opts[n++] = (struct option){"progress", 1, NULL, OPT_PROGRESS};
        opts[n] = (struct option){0};

        struct flag_list fl = {0}, no_env = {0};
        struct exec_request rq = {0};
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:t:w:e:iTh", opts, NULL)) != -1) {
                /* the short exec options are the create options of the same name here */
                int id = opt == 't'   ? OPT_CREATE_FIRST + 2
                         : opt == 'w' ? OPT_CREATE_FIRST + 7
                         : opt == 'e' ? OPT_CREATE_FIRST + 9
                                      : opt;
                /* after a bad option the rest is still read, for a --json that shapes the
                 * error */
                if (cli->err.exit_code) {
                        cli->json = cli->json || opt == OPT_JSON;
                        continue;
                }
                int k = args_common(cli, "run", id);
                if (k == -1)
                        return 0;
                if (k == 0 && args_record_create_flag(cli, &fl, id, optarg) == 0 &&
                    args_exec_option(cli, id, optarg, &rq, &no_env) == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
        }
        if (cli->err.exit_code)
                return cli_finish_error(cli, "run");
        if (optind < argc && strcmp(argv[optind], "--") == 0)
                optind++;
        if (optind >= argc) {
                sbx_usage(&cli->err, "missing command to run");
                return cli_finish_error(cli, "run");
        }
        rq.argv = argv + optind;
        if (exec_finish_request(cli, &rq) < 0)
                return cli_finish_error(cli, "run");

        struct sbx_config c;
        struct exec_result res = {0};
        int r = args_build_config(cli, &fl, &c);
        _cleanup_free_ char *unsaved = NULL; /* run saves nothing: its session has no supervisor */
        if (r == 0 && (r = pkgcache_use(&c, &unsaved, &cli->err)) > 0)
                r = 0;
        if (r == 0) {
                args_print_warnings(&c);
                r = run_in_new_session(&c, &rq, &res, &cli->err);
        } else
                res.exit_code = cli->err.exit_code;
        config_free(&c);
        int code = args_finish_exec(cli, "run", &res, r);
        buf_freep(&res.output);
        return code;
}
