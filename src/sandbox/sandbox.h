/* SPDX-License-Identifier: MIT */
/* The child side: what runs inside a session's namespaces. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/error.h"

/* Bring up lo in the current network namespace. */
int netif_loopback_up(struct sbx_error *e);

/* Make a network namespace (owned by the current user namespace), enter it, bring lo up;
 * *ret_nsfd (when not NULL) gets an fd of it. */
int netns_make(int *ret_nsfd, struct sbx_error *e);

/* H, the init's helper (helper.c): the network namespace, then /etc, in parallel. */
struct helper {
        int sock;       /* H's answers */
        pid_t pid;      /* -1: no H (any more) */
        bool etc_asked; /* /etc was handed to H */
        bool answered;  /* H's answers are in (helper_wait) */
        int nsfd;       /* its network namespace, once answered */
};
#define HELPER_INIT                                                                                \
        {                                                                                          \
                .sock = -1, .pid = -1, .nsfd = -1                                                  \
        }
/* Fork H, which starts on the network namespace at once; never fails (without H, see below). */
void helper_start(const struct sbx_config *c, struct helper *h);
/* Hand H the new root's /etc (etcfd) to fill from the host root (hostfd); false: fill it
 * yourself. */
bool helper_fill_etc(struct helper *h, int etcfd, int hostfd);
/* Wait until H is done (its files closed, before a read-only remount), and reap it. */
int helper_wait(struct helper *h, struct sbx_error *e);
/*
 * helper_wait(), or the namespace made here without H, and enter the network namespace;
 * *ret_nsfd gets an fd of it (for the supervisor: an unprivileged one cannot open the
 * non-dumpable init's ns/net). 0 or a negative errno with *e.
 */
int helper_finish(const struct sbx_config *c, struct helper *h, int *ret_nsfd, struct sbx_error *e);

/*
 * Become uid/gid 0 of the session (an unprivileged host id), without supplementary groups
 * where the kernel lets us drop them.
 */
int creds_become_sandbox_user(struct sbx_error *e);

/*
 * sbx's own processes inside (the init and the reapers it forks) run as uid helper, real,
 * effective and saved, so that nothing the command runs as (uid 0, no capabilities) can
 * signal, renice, reschedule, ptrace or open the /proc files of them: each of those needs a
 * matching uid. Needs CAP_SETUID; -EINVAL where the session maps uid 0 alone (an unprivileged
 * sbx), which keeps uid 0 throughout.
 */
int creds_set_helper_uid(uid_t helper);
/* In the command, forked from such a process: become uid 0 (real, effective, saved) and drop
 * the capabilities kept for the reaper. */
int creds_leave_helper_uid(struct sbx_error *e);

/*
 * Drop every capability (effective, permitted, inheritable, ambient, bounding), lock the
 * securebits so uid 0 never regains any on execve, and set no_new_privs.
 */
int creds_lock_down(struct sbx_error *e);
/* The same, keeping keep (a mask of 1 << CAP_*) in the permitted and effective sets. */
int creds_lock_down_keep(uint64_t keep, struct sbx_error *e);

/*
 * Empty the bounding, ambient and inheritable sets and keep only keep (a mask of 1 << CAP_*) in
 * the permitted and effective sets. Needs CAP_SETPCAP for the bounding set. 0 or -errno.
 */
int creds_drop_caps(uint64_t keep);

/* The session's cgroup v1 hierarchies, in launch/cgroup.h's order: memory, pids, cpu. */
#define INIT_CGROUP_FDS 3

/* What the supervisor hands the init at the clone. */
struct init_fds {
        int sync;                          /* SOCK_SEQPACKET, shared with the supervisor */
        int exec;                          /* the exec channel, or -1 */
        int cgroup_tasks[INIT_CGROUP_FDS]; /* v1 "tasks" files to move into, or -1 */
};

/*
 * The session init (pid 1), run in the child of clone() with all namespaces. fds->sync is the
 * SOCK_SEQPACKET end shared with the supervisor (sync points #1 and #2 of docs/DESIGN.md).
 * Never returns.
 */
_noreturn_ void session_init_main(const struct sbx_config *c, struct init_fds *fds);

/*
 * The init's life once ready (exec_server.c): reap, and serve the exec requests on exec_fd: a
 * listening socket (a session from `create`: one reaper B per connection, forked before its
 * connection comes when spares), a connected one (`run`: the init serves its one request
 * itself), or -1 (reap only).
 */
_noreturn_ void exec_server_run(int exec_fd, bool spares, const int *cmd_cgroups);

/* The v1 cgroups a command of the init's server moves itself into (memory, pids): the init
 * is in neither (init.c). */
#define EXEC_CGROUP_FDS 2

/*
 * A pty in the session's own devpts (the caller's terminal never enters), for -T: the master
 * goes to the client, the slave to the command. Called inside the session's mount namespace.
 */
int pty_open_in_session(int *master, int *slave, struct sbx_error *e);

/* What the last process before the payload needs (docs/DESIGN.md, exec). */
struct exec_spec {
        char **argv;
        char **envp;
        const char *workdir;
        int stdio[3]; /* fds to install as 0, 1, 2 */
        bool tty;     /* stdio[0] is a pty slave: make it the controlling terminal */
        int errfd;    /* CLOEXEC: receives the errno of a failed step */
        enum sbx_seccomp_profile seccomp;
        uint64_t nofile;
        uint64_t fsize; /* RLIMIT_FSIZE */
        bool confined;  /* a child of the session init: its uid, capabilities and filter */
        const int *enter_cgroups; /* EXEC_CGROUP_FDS "tasks" files to write "0" into first */
};

struct exec_wire;
/*
 * The one spec builder of both exec paths (the init's server and the client's join): C's
 * command, environment, workdir, limits and stdio from a request (exec_wire.h). stdio: the
 * pty's slave on all three for a tty; else stdin from the input pipe or the session's
 * /dev/null, stdout to the output pipe, stderr to the error pipe or with stdout. The caller
 * sets what differs between the paths: errfd, seccomp, confined, enter_cgroups.
 */
void exec_spec_from_wire(const struct exec_wire *w, int null, int pty_slave,
                         struct exec_spec *spec);

/* The exec checklist; runs in the final child and never returns (exit 125/126/127 on error). */
_noreturn_ void exec_child_run(const struct exec_spec *s);

/*
 * The lock-down every process that runs for the payload from outside the init ends with (the
 * command of a joined exec, the file commands' helper): the sandbox's uid 0, the workdir
 * (checked to be inside the root; workdir_exit_code when it cannot be entered), every
 * capability dropped, no_new_privs, non-dumpable, and the seccomp filter last.
 */
int exec_child_lock_down(const char *workdir, enum sbx_seccomp_profile seccomp,
                         int workdir_exit_code, struct sbx_error *e);

/* C's failed step: e to errfd in its wire form (sbx_error_pack), then _exit with its code. */
_noreturn_ void exec_child_fail(int errfd, const struct sbx_error *e);
