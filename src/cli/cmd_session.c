/* SPDX-License-Identifier: MIT */
/* connect, destroy, list: short clients of a session's supervisor. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "../launch/launch.h"
#include "../session/runtime.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "args.h"
#include "session_json.h"

static const struct option common_options[] = {
    {"ttl", 1, NULL, 'L'},
    {"force", 0, NULL, 'f'},
    {"quiet", 0, NULL, 'q'},
    {"json", 0, NULL, OPT_JSON},
    {"config", 1, NULL, OPT_CONFIG},
    {"help", 0, NULL, OPT_HELP},
    {0},
};

/* Parse options; `allowed` lists the short ids this command takes. 1 = help printed. */
static int parse(struct cli *cli, const char *cmd, const char *allowed, int argc, char **argv,
                 const char **ttl, bool *flag)
{
        int opt;
        optind = 1;
        opterr = 0;
        /* options may follow the operands (`destroy --force ID --json`): no "+" */
        while ((opt = getopt_long(argc, argv, ":hqf", common_options, NULL)) != -1) {
                int k = args_common(cli, cmd, opt);
                if (k == -1)
                        return 1;
                if (k == 0 && opt > 0 && opt < 0x100 && strchr(allowed, opt)) {
                        if (opt == 'L')
                                *ttl = optarg;
                        else
                                *flag = true;
                } else if (k == 0)
                        sbx_usage(&cli->err, "invalid option '%s'", argv[optind - 1]);
                if (cli->err.exit_code)
                        return -1;
        }
        return args_check_config(cli) < 0 ? -1 : 0;
}

/* Ask the supervisor; a timeout guards against one that hangs. */
static int ask(int sessfd, const char *req, char *reply, size_t n, struct sbx_error *e)
{
        _cleanup_close_ int fd = control_connect(sessfd, e);
        if (fd < 0)
                return fd;
        struct timeval tv = {.tv_sec = 10};
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        int r = control_call(fd, req, reply, n, NULL, 0);
        if (r < 0)
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", -r,
                                "the session's supervisor did not answer");
        return 0;
}

int cmd_connect(struct cli *cli, int argc, char **argv)
{
        const char *ttl_arg = NULL;
        bool unused = false;
        int r = parse(cli, "connect", "L", argc, argv, &ttl_arg, &unused);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "connect");
        if (optind + 1 != argc) {
                if (optind >= argc)
                        sbx_usage(&cli->err, "missing session ID");
                else
                        sbx_usage(&cli->err, "unexpected argument '%s': connect takes one ID",
                                  argv[optind + 1]);
                return cli_finish_error(cli, "connect");
        }
        uint64_t ttl = 0, at = 0;
        /* "@EPOCH": until that second, sent as such (serve's expiresAt): a duration counted
         * here would move by the second that may pass before the supervisor counts it */
        bool absolute = ttl_arg && ttl_arg[0] == '@';
        /* no further than --ttl's own maximum from now: the expiry stays a
         * representable time (the supervisor adds it to now; RFC 3339 has 4-digit years) */
        int64_t now = now_realtime_sec();
        if (absolute && (parse_uint(ttl_arg + 1, &at) < 0 ||
                         at > (uint64_t)now + DURATION_MAX_SEC || (int64_t)at <= now)) {
                sbx_usage(&cli->err,
                          "invalid --ttl '%s': expected @SECONDS of a future time, at most "
                          "%llu s from now",
                          ttl_arg, (unsigned long long)DURATION_MAX_SEC);
                return cli_finish_error(cli, "connect");
        }
        if (ttl_arg && !absolute && parse_duration(ttl_arg, &ttl) < 0) {
                sbx_usage(&cli->err, "invalid --ttl '%s': expected a duration like 30m", ttl_arg);
                return cli_finish_error(cli, "connect");
        }
        _cleanup_close_ int rtfd = -1, sessfd = -1;
        char id[SESSION_ID_LEN + 1], req[64], reply[128];
        _cleanup_state_ struct session_state st = {0};
        if (runtime_check_ref(argv[optind], &cli->err) < 0 || runtime_open(&rtfd, &cli->err) < 0 ||
            runtime_resolve(rtfd, argv[optind], id, &cli->err) < 0)
                return cli_finish_error(cli, "connect");
        sessfd = runtime_open_session(rtfd, id);
        if (sessfd < 0 || session_state_read(sessfd, &st) < 0) {
                sbx_fail(&cli->err, EXIT_NO_SESSION, "session_not_found", 0, "no such session '%s'",
                         argv[optind]);
                return cli_finish_error(cli, "connect");
        }
        if (absolute)
                snprintf(req, sizeof(req), "RENEW_AT %llu", (unsigned long long)at);
        else
                snprintf(req, sizeof(req), "RENEW %llu",
                         (unsigned long long)(ttl_arg ? ttl : st.ttl_sec));
        if (ask(sessfd, req, reply, sizeof(reply), &cli->err) < 0) {
                if (cli->err.exit_code == EXIT_NO_SESSION)
                        cgroup_reap_stale(rtfd, 0);
                return cli_finish_error(cli, "connect");
        }
        long long expires;
        unsigned long long new_ttl;
        if (sscanf(reply, "OK %lld %llu", &expires, &new_ttl) != 2) {
                sbx_internal(&cli->err, 0, "unexpected answer from the supervisor");
                return cli_finish_error(cli, "connect");
        }
        st.expires_at = expires;
        st.ttl_sec = new_ttl;
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                session_json(&b, &st, false);
                buf_puts(&b, "\n");
        } else {
                char t[21];
                format_rfc3339(expires, t);
                buf_printf(&b, "%s %s\n", st.id, expires ? t : "never");
        }
        return cli_print(cli, &b) ? cli_finish_error(cli, "connect") : 0;
}

/* lead + "error":{"code":..,"message":..} */
static void error_json(struct buf *b, const char *lead, const struct sbx_error *e)
{
        buf_puts(b, lead);
        buf_puts(b, "\"error\":{\"code\":");
        json_cstr(b, e->code ? e->code : "internal");
        buf_puts(b, ",\"message\":");
        json_cstr(b, e->message);
        buf_puts(b, "}");
}

/* A supervisor that holds its lock but does not answer: kill it, pid checked by start time. */
static void force_kill(int sessfd)
{
        _cleanup_state_ struct session_state st = {0};
        if (session_state_read(sessfd, &st) < 0)
                return;
        _cleanup_close_ int pfd = sys_pidfd_open(st.supervisor_pid, 0);
        if (pfd >= 0 && proc_start_time(st.supervisor_pid) == st.supervisor_start)
                (void)sys_pidfd_send_signal(pfd, SIGKILL);
}

/*
 * After a DESTROY without an answer: the session's lock once its supervisor is gone (>= 0),
 * -ENOENT when the session itself is gone (its supervisor removed it: another destroy or its
 * TTL ended it meanwhile), -EWOULDBLOCK while the supervisor lives. A supervisor that closed
 * our connection is exiting, having removed the session first: wait (bounded) for it, so a
 * destroy that lost a race with another sees the session gone, not a supervisor that "does
 * not answer".
 */
static int lock_when_gone(int sessfd, bool closed)
{
        uint64_t end = now_monotonic_ms() + (closed ? 10000 : 0);
        for (;;) {
                struct stat st;
                if (fstat(sessfd, &st) == 0 && st.st_nlink == 0)
                        return -ENOENT;
                /* No lock file (-ENOENT): the removal has begun, or a create died before its
                 * lock; either way no session is left to destroy (the sweep takes the rest). */
                int lk = runtime_try_lock(sessfd);
                if (lk != -EWOULDBLOCK || now_monotonic_ms() >= end)
                        return lk;
                struct timespec ts = {.tv_nsec = 5 * 1000 * 1000};
                (void)nanosleep(&ts, NULL);
        }
}

/* *rtfd is opened on the first valid argument: a bad one creates nothing. */
static int destroy_one(int *rtfd, const char *arg, bool force, struct sbx_error *e)
{
        char id[SESSION_ID_LEN + 1], reply[64];
        struct sbx_error sub = {0};
        /* not an id or a name: an error also with --force, which only forgives absence */
        if (runtime_check_ref(arg, e) < 0)
                return -EINVAL;
        if (*rtfd < 0 && runtime_open(rtfd, e) < 0)
                return -EIO;
        if (runtime_resolve(*rtfd, arg, id, &sub) < 0)
                return force ? 0 : sbx_fail(e, sub.exit_code, sub.code, 0, "%s", sub.message);
        _cleanup_close_ int sessfd = runtime_open_session(*rtfd, id);
        if (sessfd < 0)
                return force ? 0
                             : sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                        "no such session '%s'", arg);
        int r = ask(sessfd, "DESTROY", reply, sizeof(reply), &sub);
        if (r == 0 && strcmp(reply, "OK") == 0)
                return 0;
        /* No answer. A dead supervisor is stale state: clean it. A live one that hangs (the
         * answer timed out) is killed only with --force. */
        _cleanup_close_ int lk = lock_when_gone(sessfd, r != -EAGAIN && r != -EWOULDBLOCK);
        if (lk == -ENOENT)
                return force ? 0
                             : sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                        "no such session '%s' (it ended meanwhile)", arg);
        if (lk < 0 && force) {
                force_kill(sessfd);
        } else if (lk < 0) {
                return sbx_fail(e, EXIT_SBX_FAILED, "internal", 0,
                                "session '%s' does not answer: use --force", arg);
        }
        /* The reap takes the lock itself, on a file of its own: ours would make the dead
         * session look alive to it (flock locks of two opens conflict, even in one process),
         * and destroy would leave it all to the next command's sweep. */
        closep(&lk);
        cgroup_reap_stale(*rtfd, 0);
        return force ? 0
                     : sbx_fail(e, EXIT_NO_SESSION, "session_not_found", 0,
                                "no such session '%s' (it had already ended)", arg);
}

/*
 * One document for all the IDs: {"destroyed":[ids...],"results":[{"id":..,"destroyed":bool
 * (,"error":{..})}...]}, and when any failed also "error", the first failure (its exit
 * status is destroy's). One ID that failed is the plain {"error":..} of every command.
 */
static int destroy_json(struct cli *cli, char **ids, const struct sbx_error *errs, int n)
{
        if (n == 1 && cli->err.exit_code) {
                _cleanup_buf_ struct buf e = {0};
                error_json(&e, "{", &cli->err);
                buf_puts(&e, "}\n");
                (void)cli_print(cli, &e);
                return cli->err.exit_code;
        }
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"destroyed\":[");
        for (int i = 0, k = 0; i < n; i++)
                if (!errs[i].exit_code) {
                        buf_puts(&b, k++ ? "," : "");
                        json_cstr(&b, ids[i]);
                }
        buf_puts(&b, "],\"results\":[");
        for (int i = 0; i < n; i++) {
                buf_puts(&b, i ? ",{\"id\":" : "{\"id\":");
                json_cstr(&b, ids[i]);
                buf_printf(&b, ",\"destroyed\":%s", errs[i].exit_code ? "false" : "true");
                if (errs[i].exit_code)
                        error_json(&b, ",", &errs[i]);
                buf_puts(&b, "}");
        }
        buf_puts(&b, "]");
        if (cli->err.exit_code)
                error_json(&b, ",", &cli->err);
        buf_puts(&b, "}\n");
        int r = cli_print(cli, &b);
        return cli->err.exit_code ? cli->err.exit_code : r;
}

int cmd_destroy(struct cli *cli, int argc, char **argv)
{
        const char *unused_ttl = NULL;
        bool force = false;
        int r = parse(cli, "destroy", "f", argc, argv, &unused_ttl, &force);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "destroy");
        if (optind >= argc) {
                sbx_usage(&cli->err, "missing session ID");
                return cli_finish_error(cli, "destroy");
        }
        _cleanup_close_ int rtfd = -1;
        int n = argc - optind;
        _cleanup_free_ struct sbx_error *errs = calloc((size_t)n, sizeof(*errs));
        if (!errs) {
                sbx_internal(&cli->err, ENOMEM, "out of memory");
                return cli_finish_error(cli, "destroy");
        }
        /* Every ID is attempted; each failure is told on stderr, the first one decides the
         * exit status */
        for (int i = 0; i < n; i++) {
                (void)destroy_one(&rtfd, argv[optind + i], force, &errs[i]);
                if (!errs[i].exit_code)
                        continue;
                if (!cli->err.exit_code)
                        cli->err = errs[i];
                cli_message("sbx: ", errs[i].message);
        }
        if (cli->json)
                return destroy_json(cli, argv + optind, errs, n);
        return cli->err.exit_code;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
        const char *unused_ttl = NULL;
        bool quiet = false;
        int r = parse(cli, "list", "q", argc, argv, &unused_ttl, &quiet);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "list");
        if (optind < argc) {
                sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind]);
                return cli_finish_error(cli, "list");
        }
        _cleanup_close_ int rtfd = -1;
        if (runtime_open(&rtfd, &cli->err) < 0)
                return cli_finish_error(cli, "list");
        cgroup_reap_stale(rtfd, 0);

        _cleanup_buf_ struct buf b = {0};
        /* a fresh open: a dup would share the offset the stale reaper left at the end */
        _cleanup_close_ int dfd = openat(rtfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *d = dfd >= 0 ? fdopendir(TAKE_FD(dfd)) : NULL;
        if (!d) {
                sbx_internal(&cli->err, errno, "failed to read the runtime directory");
                return cli_finish_error(cli, "list");
        }
        if (cli->json)
                buf_puts(&b, "[");
        else if (!quiet)
                buf_printf(&b, "%-20s %-24s %s\n", "ID", "NAME", "EXPIRES");
        bool first = true;
        struct dirent *de;
        while ((de = readdir(d))) {
                _cleanup_close_ int sfd = runtime_open_session(rtfd, de->d_name);
                _cleanup_state_ struct session_state st = {0};
                if (sfd < 0 || session_state_read(sfd, &st) < 0)
                        continue; /* not a session, or one still being created */
                if (cli->json) {
                        buf_puts(&b, first ? "" : ",");
                        session_json(&b, &st, true);
                } else if (quiet) {
                        buf_printf(&b, "%s\n", st.id);
                } else {
                        char t[21] = "never";
                        if (st.expires_at)
                                format_rfc3339(st.expires_at, t);
                        buf_printf(&b, "%-20s %-24s %s\n", st.id, st.name ? st.name : "-", t);
                }
                first = false;
        }
        if (cli->json)
                buf_puts(&b, "]\n");
        return cli_print(cli, &b) ? cli_finish_error(cli, "list") : 0;
}
