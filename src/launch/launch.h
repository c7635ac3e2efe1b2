/* SPDX-License-Identifier: MIT */
/* The host side of a session: spawning it, supervising it, joining it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "../net/proxy.h"
#include "../session/state.h"
#include "shared/buf.h"
#include "shared/error.h"
#include "uidrange.h"
#include "cgroup.h"

/*
 * The namespaces of a session, opened from /proc/<init>/ns/ while the init is still dumpable
 * (before sync point #1): a non-dumpable process's namespaces cannot be joined through its
 * pidfd by an unprivileged caller. Order: user first, so the others can be joined with the
 * capabilities it grants. -1 where the session shares the host's (net with --net host).
 */
enum { NS_USER, NS_MNT, NS_PID, NS_NET, NS_IPC, NS_UTS, NS_CGROUP, SESSION_NS_COUNT };
extern const char *const session_ns_names[SESSION_NS_COUNT];

/* The session init as seen from the host. */
struct session_proc {
        pid_t pid;
        int pidfd;
        int ns[SESSION_NS_COUNT];
        struct proxy_handle proxy; /* the egress proxy in proxy mode (net/proxy.h) */
        struct uid_slot uids;      /* its host uid/gid range, held until it is reaped */
        int layer_fd;              /* the writable layer's root (O_PATH), for `sbx diff` */
        int sync;                  /* the handshake with the init, between #1 and #2 */
};
#define SESSION_PROC_INIT                                                                          \
        {                                                                                          \
                .pidfd = -1, .ns = {-1, -1, -1, -1, -1, -1, -1}, .proxy = PROXY_HANDLE_INIT,       \
                .uids = UID_SLOT_INIT, .layer_fd = -1, .sync = -1                                  \
        }

void session_ns_close(int ns[SESSION_NS_COUNT]);
/* setns() into every namespace in ns (user first). */
int session_ns_join(const int ns[SESSION_NS_COUNT], struct sbx_error *e);
/* The same but the cgroup namespace, which the children then join themselves
 * (session_ns_join_cgroup) after fork_into_cgroup placed them: see docs/DESIGN.md, "Cgroups". */
int session_ns_join_except_cgroup(const int ns[SESSION_NS_COUNT], struct sbx_error *e);
/* setns() into the session's cgroup namespace (ns[NS_CGROUP]; nothing when -1): 0 or -errno. */
int session_ns_join_cgroup(const int ns[SESSION_NS_COUNT]);
/*
 * fork() straight into the v2 cgroup whose directory is open as cgroup_fd (clone3
 * CLONE_INTO_CGROUP), so that the child needs no cgroup.procs write. *placed says whether that
 * worked; if not (cgroup_fd -1, a kernel before 5.7, the cgroup's pids.max reached), a raw
 * clone into the caller's own cgroup, and the caller moves the child. Raw clones both: the
 * caller may be a vfork child (B0), which must not run glibc's fork handlers.
 */
pid_t fork_into_cgroup(int cgroup_fd, bool *placed);

struct cgroup_session;
/*
 * Clone the session init with every namespace, into the session's v2 cgroup when cg has one
 * (before it runs anything of its own), write its uid/gid maps and hand it what it builds its
 * root from (sync point #1). The init builds its root from here on: meanwhile the caller makes
 * what it needs only at #2 (the v1 cgroups: cgroup_session_create_v1), then calls
 * session_spawn_finish, which hands the init its v1 cgroups and waits until its root is built
 * (#2). On failure of either nothing is left: the init is killed and reaped. Between the two,
 * the caller's own failure ends the init with session_kill. The init dies with the calling
 * process (PDEATHSIG).
 */
int session_spawn_start(const struct sbx_config *c, const struct cgroup_session *cg, int exec_fd,
                        struct session_proc *out, struct sbx_error *e);
int session_spawn_finish(const struct sbx_config *c, const struct cgroup_session *cg,
                         struct session_proc *p, struct sbx_error *e);
/* Both at once, for a session whose cgroups are all made (or that has none). */
int session_spawn(const struct sbx_config *c, const struct cgroup_session *cg, int exec_fd,
                  struct session_proc *out, struct sbx_error *e);
/*
 * After #1: one message per configured volume, with its idmapped clone (root-run sessions,
 * volumes.c) or without an fd (a plain bind made by the init). A writable volume that cannot
 * be idmapped fails the session (exit 4) rather than give the sandbox's root a volume it cannot
 * write, or files owned by the session's host uid.
 */
int volumes_send(const struct sbx_config *c, pid_t init, int sync_fd, struct sbx_error *e);
/* SIGKILL the proxy and the init (its whole pid namespace dies), reap them, and give their
 * uid range back. */
void session_kill(struct session_proc *p);
/*
 * The end of a `run`: session_kill and the removal of cg's cgroups. With may_return, and where
 * nothing of the session would run on or die with the caller (the init has no child, the
 * caller never joined the session, it is not pid 1), without waiting for the kernel's teardown
 * (the mounts, the pid namespace): the init (and cg's v2 cgroup) is killed here, then a forked
 * cleaner, sbx-teardown (its own session, stdio on /dev/null), waits until the init has
 * exited, gives the uid range back and removes the cgroups, as bwrap's monitor returns when
 * the command ends, not when pid 1 is gone. Otherwise, or when fork fails, it all happens here.
 * cg is closed either way.
 */
void session_end(struct session_proc *p, struct cgroup_session *cg, bool may_return);

/*
 * Create a detached session: runtime entries, supervisor, init. Fills *st on success, and
 * *ret_ack with this end of the handshake with the supervisor (sync point #4): once the caller
 * has handed the id on (printed it), session_create_ack(). A session whose creator closes it
 * without that, or dies first, is destroyed by its supervisor: nobody would have its id.
 */
int session_create(const struct sbx_config *c, struct session_state *st, int *ret_ack,
                   struct sbx_error *e);
/* #4: the id has reached whoever asked for the session; closes ack. */
void session_create_ack(int ack);

/*
 * Pause (freeze every process of the session) or resume it, through its supervisor. Errors:
 * exit 3 no such session; exit 1 "paused" when it is already paused, "not_paused" when resuming
 * one that is not paused; exit 4 when the host has no freezer (cgroup v2 or v1) for it.
 */
int session_pause(const char *id_or_name, bool pause, struct sbx_error *e);
/* The same over an open control connection: req is PAUSE or RESUME, or PAUSE_HOLD, a pause
 * that ends when ctl closes (whatever ends its holder), and RELEASE, its end now. 1: a
 * supervisor of an older sbx made PAUSE_HOLD a plain PAUSE, to be ended with RESUME. */
int control_pause(int ctl, const char *id_or_name, const char *req, struct sbx_error *e);

/* A session's resource use (stats.c). */
struct session_stats {
        char id[SESSION_ID_LEN + 1];
        bool paused;
        uint64_t sampled_ms;    /* monotonic */
        struct cgroup_usage cg; /* launch/cgroup.h */
        bool has_disk;          /* the writable layer could be measured */
        uint64_t disk_used, disk_total, inodes_used, inodes_total;
        uint64_t disk_limit;                             /* --disk */
        bool net_proxy;                                  /* proxy mode: the net_* fields count */
        uint64_t net_bytes_out, net_bytes_in, net_conns; /* closed connections */
        bool net_records_dropped; /* the proxy's log budget dropped records: a lower bound */
        uint64_t net_log_offset;  /* how far the audit log was read: keep it between samples */
};
/* Fill *out (whose net_* and net_log_offset carry over from an earlier sample, or zero). */
int session_stats_read(const char *id_or_name, struct session_stats *out, struct sbx_error *e);

/* The supervisor's share of `sbx net` (netpolicy.c): the allow list in force. */
struct netpolicy {
        char **allow; /* owned, NULL-terminated (may be NULL) */
        int proxy_fd; /* the proxy's stop pipe; -1 when the session has no proxy */
        int auditfd;
        const char *id;
        const char *mode; /* the session's network mode: none, host, proxy */
};
/* Start with a copy of the created session's list. 0 or -ENOMEM. */
int netpolicy_init(struct netpolicy *np, char *const *allow);
/* Answer one "NET SHOW|ALLOW H|DENY H" request into reply ("OK mode\nentry..." or "ERR w"). */
void netpolicy_handle(struct netpolicy *np, const char *req, struct buf *reply);
/*
 * `sbx net`: action "SHOW", "ALLOW" or "DENY" (host NULL for SHOW). On success *ret_mode
 * is its network mode (none, host, proxy; caller frees) and *ret_allow is the list in force
 * (NULL-terminated, caller frees). Errors: 2 bad host, 3 no session, 4 no proxy, 1 exists /
 * not_found / limit.
 */
int session_net(const char *id_or_name, const char *action, const char *host, char **ret_mode,
                char ***ret_allow, struct sbx_error *e);
/*
 * The provisioning window (netpolicy.c): while `--package` installs run, the proxy admits the
 * package index on top of the session's own list. *ret: its allow entries, NULL when no window
 * is needed (no packages, or the host's network). 0 or -ENOMEM.
 */
int provision_window(const struct sbx_config *c, char ***ret);
/* Its "net_policy" audit records: action "provision_open" with the list in force. */
void provision_window_audit(int auditfd, const char *id, const char *action, char *const *allow);
/* End it: a session without proxy mode loses the proxy, one with it keeps its own list. */
void provision_window_close(struct proxy_handle *h, enum sbx_net_mode mode, char *const *allow,
                            int auditfd, const char *id);

/* The snapshot of a host base that `sbx diff` compares with, in the session dir. */
#define BASE_FILE "base"
/*
 * `sbx diff`: the session's changes against its base as "K /path" strings, each
 * NUL-terminated (K: A, C or D), sorted by path; *truncated when cut. Exit 4 for a session
 * without a writable layer (--read-only) or without the base snapshot.
 */
int session_diff(const char *id_or_name, struct buf *out, bool *truncated, struct sbx_error *e);

/*
 * `sbx cp`: copy session_path of the session out to host_path (in false), or host_path into
 * session_path (in true). The session's side has exactly a session process's rights. Nothing
 * that exists is replaced. *ret_bytes: file bytes written.
 */
int session_cp(const char *id_or_name, const char *session_path, const char *host_path, bool in,
               uint64_t *ret_bytes, struct sbx_error *e);

/* Control requests to a session's supervisor (docs/DESIGN.md, "The supervisor"). */
int control_connect(int sessfd, struct sbx_error *e);
/*
 * The session that id_or_name names, for a request to its supervisor: its directory in
 * *ret_sessfd and a connection in *ret_ctl whose answers wait at most timeout_sec. A bad id
 * or name is refused before anything is opened or made, as are no such session and one whose
 * supervisor has gone: exit 3. timeout_sec 0: answers are awaited without a bound.
 */
int control_open(const char *id_or_name, int timeout_sec, int *ret_sessfd, int *ret_ctl,
                 struct sbx_error *e);
/* control_open's two halves: the session's directory (an fd), and its supervisor (exit 3 when
 * it has gone). */
int control_session_dir(const char *id_or_name, struct sbx_error *e);
int control_connect_live(int sessfd, const char *id_or_name, struct sbx_error *e);
/* Send req, receive the reply text (NUL-terminated) and up to max_fds passed fds (the rest -1). */
int control_call(int fd, const char *req, char *reply, size_t n, int *ret_fds, size_t max_fds);

struct cgroup_plan;
/* Supervisor entry point, in the forked child of `create`. Never returns. */
_noreturn_ void supervisor_main(const struct sbx_config *c, const struct cgroup_plan *plan,
                                int rtfd, int sessfd, int lockfd, const char *id, int report_fd);

/* One command to run in a session. */
struct exec_request {
        char **argv;
        const char *workdir; /* NULL: the session's */
        char **env_add;      /* exec -e K=V */
        bool interactive;    /* -i */
        bool tty;            /* -T */
        uint64_t timeout_ms; /* 0: the session's */
        bool capture;        /* --json: capture combined output instead of streaming */
        uint64_t max_output; /* capture cap in bytes; 0 = unlimited */
        /* Called once the command's reaper B runs, with its pidfd (exec -d records B's pid:
         * `sbx kill` signals the command through it). NULL: nothing. */
        void (*on_reaper)(int reaper_pidfd, void *arg);
        void *on_reaper_arg;
};

struct exec_result {
        int exit_code;
        bool timed_out;
        bool truncated;
        uint64_t duration_ms;
        bool oom_killed;             /* the session's memory limit killed the command (exit 137) */
        uint64_t output_bytes;       /* everything the command wrote to stdout/stderr */
        struct buf output;           /* captured output (capture mode) */
        struct sbx_error exec_error; /* set when the command could not be started (126/127) */
};

/*
 * What the server path returns when nothing was started and the caller is to join the session
 * instead (exec_join): the request did not fit one message, the init could not fork a reaper
 * (the connection was reset with the request unread), or the reaper found the session's pids
 * all taken. The one value above 0 of these calls; errors stay negative.
 */
#define EXEC_NOT_STARTED 1

/*
 * Run rq through the session init's exec server, connected on chan (taken). EXEC_NOT_STARTED
 * when the server cannot take it (the caller joins the session instead: nothing was started), 0, or
 * an error. cx (NULL: none) is the cgroup state to read the OOM count from afterwards; it is
 * finished here either way.
 */
struct cgroup_exec;
int exec_handoff(int chan, const struct session_state *st, struct cgroup_exec *cx,
                 const struct exec_request *rq, struct exec_result *res, struct sbx_error *e);
/*
 * exec_handoff in two steps, for a request sent before the server reads it (`run` sends it
 * before its session is up). send: 0 with *ret set, EXEC_NOT_STARTED when it did not fit (nothing
 * was sent: the caller joins instead), or an error; chan is taken either way. finish: as
 * exec_handoff from there, the duration and the timeout counting from start_ms (monotonic; 0: from
 * the send); it frees p. exec_pending_free: for a request that is not finished (its session
 * failed).
 */
struct exec_pending;
int exec_handoff_send(int chan, const struct session_state *st, const struct exec_request *rq,
                      struct exec_pending **ret, struct sbx_error *e);
int exec_handoff_finish(struct exec_pending *p, uint64_t start_ms, const struct session_state *st,
                        struct cgroup_exec *cx, const struct exec_request *rq,
                        struct exec_result *res, struct sbx_error *e);
void exec_pending_free(struct exec_pending *p);
static inline void exec_pending_freep(struct exec_pending **p)
{
        exec_pending_free(*p);
}

/* Join the session with namespaces ns, state st and cgroups cs, and run rq in it. */
int exec_join(const int ns[SESSION_NS_COUNT], const struct session_state *st,
              const struct cgroup_session *cs, const struct exec_request *rq,
              struct exec_result *res, struct sbx_error *e);

/* The "exec" record of the audit log (fd < 0: none). r and e: exec_join's outcome. */
void audit_write_exec(int fd, const struct session_state *st, const struct exec_request *rq,
                      const struct exec_result *res, int64_t start_ms, int r,
                      const struct sbx_error *e);

/* exec by id or name: connect, get the init's pidfd, exec_join, write the audit record. */
int exec_in_session(const char *id_or_name, const struct exec_request *rq, struct exec_result *res,
                    struct sbx_error *e);
