/* SPDX-License-Identifier: MIT */
/*
 * The supervisor: one small host process per session. It owns the session's lifetime (TTL,
 * destroy, the init's death) and answers the control socket (the requests: supervisor_ctl.c).
 * It never runs anything from the sandbox and never reads a file the sandbox can write.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../net/proxy.h"
#include "../ops/layerdiff.h"
#include "../session/audit.h"
#include "../session/hold.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "audit_create.h"
#include "cgroup.h"
#include "launch.h"
#include "supervisor-internal.h"

static void detach_stdio(void)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                for (int i = 0; i < 3; i++)
                        dup2(null, i);
                if (null > 2)
                        close(null);
        }
}

int supervisor_arm_ttl(struct supervisor *s, uint64_t ttl_sec)
{
        s->ttl_armed++;
        s->look_ms = 0;
        s->st.ttl_sec = ttl_sec;
        s->st.expires_at = ttl_sec ? now_realtime_sec() + (int64_t)ttl_sec : 0;
        struct itimerspec its = {.it_value = {.tv_sec = (time_t)ttl_sec}};
        if (timerfd_settime(s->timerfd, 0, &its, NULL) < 0)
                return negerrno();
        return 0;
}

static int listen_ctl(struct supervisor *s, struct sbx_error *e)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/ctl", s->sessfd);
        s->listenfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->listenfd < 0 || bind(s->listenfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            listen(s->listenfd, 128) < 0)
                return sbx_internal(e, errno, "failed to create the control socket");
        return 0;
}

/*
 * The session init's exec socket (sandbox/exec_server.c), bound in the session directory next
 * to ctl. Only the init keeps it: were the supervisor to hold it too, a client could connect
 * after the init died and wait for an accept that never comes.
 */
static int listen_exec(struct supervisor *s, int *ret, struct sbx_error *e)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/exec", s->sessfd);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0)
                return sbx_internal(e, errno, "failed to create the exec socket");
        *ret = TAKE_FD(fd);
        return 0;
}

/* An audit dir that cannot take the log fails the create: a session is never unaudited. */
static int open_audit(struct supervisor *s, struct sbx_error *e)
{
        s->auditfd = audit_create(s->sessfd, s->cfg->audit_dir, s->st.id, &s->audit_path);
        if (s->auditfd < 0)
                return audit_create_failed(e, s->cfg->audit_dir, -s->auditfd);
        s->st.audit_path = s->audit_path;
        return 0;
}

/*
 * The base that `sbx diff` compares with: the entries of the layer's views right after the
 * init built it, before anything of the sandbox ran (only stat and readdir, by fd, no
 * content read), kept in the session dir as BASE_FILE. Best effort: without it, diff says
 * it cannot.
 */
static void snapshot_base(struct supervisor *s)
{
        _cleanup_buf_ struct buf b = {0};
        if (s->init.layer_fd < 0 ||
            !(layerdiff_host_base(s->init.layer_fd) || layerdiff_overlay_root(s->init.layer_fd)) ||
            layerdiff_snapshot(s->init.layer_fd, &b) < 0)
                return;
        _cleanup_close_ int fd = openat(s->sessfd, BASE_FILE,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 && write_all(fd, b.data ? b.data : "", b.len) < 0)
                (void)unlinkat(s->sessfd, BASE_FILE, 0);
}

static int setup(struct supervisor *s, struct sbx_error *e)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGPIPE);
        sigprocmask(SIG_BLOCK, &set, NULL);
        s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        s->timerfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
        s->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (s->sigfd < 0 || s->timerfd < 0 || s->epfd < 0)
                return sbx_internal(e, errno, "failed to set up the supervisor");

        int r = cgroup_session_create_v2(s->plan, s->cfg, s->st.id, &s->cg, e);
        if (r < 0)
                return r;
        _cleanup_close_ int execfd = -1;
        if ((r = listen_exec(s, &execfd, e)) < 0)
                return r;
        if ((r = session_spawn_start(s->cfg, &s->cg, execfd, &s->init, e)) < 0)
                return r;
        closep(&execfd);
        /* while the init builds its root (on failure, the caller's cleanup ends it) */
        if ((r = cgroup_session_create_v1(s->plan, s->cfg, s->st.id, &s->cg, e)) < 0)
                return r;
        cgroup_session_to_state(&s->cg, &s->st);
        if ((r = session_spawn_finish(s->cfg, &s->cg, &s->init, e)) < 0)
                return r;
        s->st.uid_start = s->init.uids.start;
        s->st.uid_count = s->init.uids.count;
        s->st.helper_uid = s->init.uids.helper;
        snapshot_base(s);
        if ((r = listen_ctl(s, e)) < 0)
                return r;
        if ((s->holdfd = session_holds_create(s->sessfd)) < 0)
                return sbx_internal(e, -s->holdfd, "failed to create the session's hold file");
        if ((r = open_audit(s, e)) < 0)
                return r;
        s->st.init_pid = s->init.pid;
        s->st.supervisor_pid = getpid();
        s->st.supervisor_start = proc_start_time(getpid());
        s->st.created_at = now_realtime_sec();
        if (supervisor_arm_ttl(s, s->cfg->ttl_sec) < 0 ||
            session_state_write(s->sessfd, &s->st) < 0)
                return sbx_internal(e, errno, "failed to write the session state");
        if (epoll_add(s->epfd, s->listenfd) < 0 || epoll_add(s->epfd, s->timerfd) < 0 ||
            epoll_add(s->epfd, s->sigfd) < 0 || epoll_add(s->epfd, s->init.pidfd) < 0)
                return sbx_internal(e, errno, "failed to set up the supervisor's event loop");
        if (audit_write_create(s->auditfd, &s->st, s->cfg, s->plan) < 0)
                return sbx_internal(e, errno, "failed to write the audit log");
        audit_write_warnings(s->auditfd, s->st.id, s->cfg);
        /* packages at create reach their index through the proxy until #4 ends the window */
        _cleanup_strv_ char **window = NULL;
        if (provision_window(s->cfg, &window) < 0)
                return sbx_internal(e, ENOMEM, "failed to build the package index's allow list");
        /* the proxy writes one "net" record per connection into the same log */
        r = proxy_start(s->cfg, window, s->init.ns[NS_USER], s->init.ns[NS_NET], s->st.id,
                        s->auditfd, s->init.uids.helper, &s->init.proxy, e);
        if (r == 0 && s->init.proxy.pidfd >= 0 && epoll_add(s->epfd, s->init.proxy.pidfd) < 0)
                r = sbx_internal(e, errno, "failed to watch the proxy");
        if (r == 0 && window && window[0]) {
                s->window_open = true;
                provision_window_audit(s->auditfd, s->st.id, "provision_open", window);
        }
        return r;
}

/*
 * The proxy ended while the session lives (a crash, or a signal from a process with its uid or
 * from root): the session keeps running without egress, and its log says so.
 */
static void proxy_ended(struct supervisor *s)
{
        int fd = s->init.proxy.pidfd;
        (void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
        if (audit_proxy_exited(s->auditfd, s->st.id, &s->init.proxy) == 0)
                (void)epoll_add(s->epfd, fd); /* a spurious wake-up: it still runs */
}

static void leave_runtime_dir(struct supervisor *s)
{
        runtime_name_release(s->rtfd, s->st.name, s->st.id);
        runtime_remove_session(s->rtfd, s->st.id);
}

/* The session holds host things its caller may want back at once: a volume (as `run`), an
 * image's layers (`image rm`), a --rootfs directory, or, with --net host, sockets of the host's
 * network (a port is free only once its process has passed exit_files, after freeing its
 * memory: with 600 MB, a bind right after an early answer failed 6 times in 6). */
static bool holds_host_things(const struct sbx_config *c)
{
        return c->n_mounts > 0 || c->image || c->net == SBX_NET_HOST ||
               (c->rootfs && strcmp(c->rootfs, "host") != 0);
}

/*
 * destroy's first half (supervisor_ctl.c): true when, on return, no process of the session runs
 * code any more (cgroup_session_end) and nothing names it in the runtime dir (its name is
 * free), so the caller may be answered before the kernel's teardown. false (and nothing done),
 * and the answer waits for supervisor_teardown: while an exec or file command joins the session
 * (its first process starts outside the session's cgroup and clones the next into it); while
 * the session holds host things (holds_host_things); without cgroup v2's freeze and kill (only
 * the init's death then takes its pid namespace with it).
 */
bool supervisor_stop(struct supervisor *s)
{
        if (s->busy > 0 || holds_host_things(s->cfg) || !cgroup_session_end(&s->cg))
                return false;
        s->ended_frozen = true;
        proxy_stop(&s->init.proxy);
        leave_runtime_dir(s);
        return true;
}

/* Everything of the session goes: its processes (cgroup.kill, then the init with its pid
 * namespace), its cgroups, its uid range, and last its runtime entries: once they are gone,
 * so is everything else (the TTL's and a dead init's end). */
void supervisor_teardown(struct supervisor *s)
{
        /* Thawed after the kill, as a session that still has its entry must not look paused
         * (exec's "session is paused") while it ends; frozen by supervisor_stop, it stays so
         * until the init's death (cgroup_session_end says why). */
        if (!s->ended_frozen) {
                (void)cgroup_session_kill(&s->cg);
                cgroup_session_thaw(&s->cg); /* a paused session ends like any other */
        }
        session_kill(&s->init);
        cgroup_session_remove(&s->cg);
        /* the image's shared lock, before any answer: `image rm` right after `destroy` */
        if (s->cfg->image_lock_fd >= 0)
                (void)close(s->cfg->image_lock_fd);
        leave_runtime_dir(s);
}

/* The end of a session, whatever the reason: nothing of it is left afterwards. */
_noreturn_ void supervisor_end_session(struct supervisor *s, const char *reason, const char *detail)
{
        audit_end(s->auditfd, s->st.id, reason, detail);
        supervisor_teardown(s);
        _exit(0);
}

/*
 * Once the TTL ran out: whether execs still run, through ctl (the join path) or holding
 * HOLDS_FILE (the server path). When neither, no exec can hold the session any more.
 */
bool supervisor_execs_running(struct supervisor *s)
{
        /* busy first: while joined execs run, the server's may still start */
        return s->busy > 0 || session_holds_end(s->holdfd);
}

/*
 * #4: the creator has handed the id on. Anything else (it closed the handshake or died: its
 * EOF) means nobody has the id, so nobody could use or destroy the session until its TTL.
 */
static void creator_answer(struct supervisor *s)
{
        struct sbx_error ignored = {0};
        int r = sync_wait(s->creator, "the session's creator", &ignored);
        (void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->creator, NULL);
        closep(&s->creator);
        if (r < 0)
                supervisor_end_session(s, "destroyed",
                                       "its creator ended before it had the session's id");
        if (s->window_open) {
                s->window_open = false;
                provision_window_close(&s->init.proxy, s->st.net, s->net.allow, s->auditfd,
                                       s->st.id);
        }
}

/*
 * The TTL ran out while execs run: those holding HOLDS_FILE end without a word to us, so look
 * again after 50 ms, then twice as long each time up to a second (a detached command may run
 * for hours). The connections of the others wake us when they close.
 */
static void look_again_soon(struct supervisor *s)
{
        s->look_ms = s->look_ms ? (s->look_ms >= 500 ? 1000 : s->look_ms * 2) : 50;
        struct itimerspec its = {.it_value = {.tv_sec = s->look_ms / 1000,
                                              .tv_nsec = (s->look_ms % 1000) * 1000 * 1000}};
        (void)timerfd_settime(s->timerfd, 0, &its, NULL);
}

_noreturn_ static void event_loop(struct supervisor *s)
{
        stack_release_below(); /* what setting the session up dirtied: idle from here */
        for (;;) {
                struct epoll_event ev[32];
                int n = epoll_wait(s->epfd, ev, ARRAY_SIZE(ev), -1);
                if (n < 0 && errno != EINTR)
                        supervisor_end_session(s, "crashed", "the supervisor's event loop failed");
                for (int i = 0; i < n; i++) {
                        int fd = ev[i].data.fd;
                        if (fd == s->init.pidfd) {
                                supervisor_end_session(s, "crashed", "the session init exited");
                        } else if (fd == s->init.proxy.pidfd) {
                                proxy_ended(s);
                        } else if (fd == s->sigfd) {
                                supervisor_end_session(s, "destroyed",
                                                       "the supervisor was signalled");
                        } else if (fd == s->timerfd) {
                                uint64_t ticks;
                                if (read(s->timerfd, &ticks, sizeof(ticks)) < 0)
                                        continue;
                                if (s->st.ttl_sec == 0)
                                        continue;
                                unsigned armed = s->ttl_armed;
                                supervisor_take_waiting_requests(s);
                                if (s->ttl_armed != armed)
                                        continue; /* renewed meanwhile: the TTL runs anew */
                                if (!supervisor_execs_running(s))
                                        supervisor_end_session(s, "expired", NULL);
                                s->expiry_pending = true;
                                look_again_soon(s);
                        } else if (fd == s->creator) {
                                creator_answer(s);
                        } else if (fd == s->listenfd) {
                                (void)supervisor_accept_client(s);
                        } else {
                                supervisor_handle_request(s, fd);
                        }
                }
        }
}

/*
 * The stale sessions and cgroups of others (dead supervisors) go once this session is ready,
 * while the caller already has its id: a look at up to RUNTIME_CREATE_CHECKS sessions and
 * cgroups from a random one on, which reads each cgroup directory only that far (read whole,
 * 1,000 sessions cost the looks ~3.5 ms of getdents per create). The looks are done here, off the
 * create's path (ctl requests queue meanwhile), but on a loop of creates they share the CPUs;
 * removing a dead session may wait seconds for its cgroups to empty, so when there is one a
 * grandchild (sbx-sweep) does every removal, with a look at all sessions, and nothing of this
 * session waits (a joining exec, destroy, the TTL): it keeps only the runtime dir, never this
 * session's lock, and no process waits for it. Best effort: without a fork the next create or
 * list does it. The cgroups: below the creator's own, as it saw them before it may have moved
 * (and this process with it) into <own>/sbx-supervisor.
 */
static void reap_stale(int rtfd, const struct cgroup_owns *owns)
{
        bool stale = runtime_stale_present(rtfd, RUNTIME_CREATE_CHECKS);
        if (cgroup_sweep_owns(owns, RUNTIME_CREATE_CHECKS, true) > 0)
                stale = true;
        if (!stale)
                return;
        pid_t child = fork();
        if (child < 0)
                return;
        if (child == 0) {
                int keep[] = {rtfd};
                close_all_except(keep, ARRAY_SIZE(keep));
                (void)prctl(PR_SET_NAME, "sbx-sweep");
                if (fork() == 0) {
                        runtime_reap_stale_sessions(rtfd, 0, cgroup_remove_recorded);
                        (void)cgroup_sweep_owns(owns, 0, false);
                }
                _exit(0);
        }
        (void)RETRY_EINTR(waitpid(child, NULL, 0));
}

_noreturn_ void supervisor_main(const struct sbx_config *c, const struct cgroup_plan *plan,
                                int rtfd, int sessfd, int lockfd, const char *id, int report_fd)
{
        struct supervisor s = {.cfg = c,
                               .plan = plan,
                               .cg = CGROUP_SESSION_INIT,
                               .rtfd = rtfd,
                               .sessfd = sessfd,
                               .init = SESSION_PROC_INIT,
                               .listenfd = -1,
                               .holdfd = -1,
                               .creator = -1,
                               .auditfd = -1};
        struct sbx_error e = {0};

        setsid();
        /* The caller's command line (--env values, host paths) would stay in /proc/PID/cmdline,
         * world-readable, for the session's life. */
        proctitle_hide("sbx-supervisor");
        detach_stdio();
        /* Whatever the caller leaked stays with the caller (a pipe held open here would make
         * `$(sbx create)` or a test harness wait forever). */
        int keep[] = {rtfd, sessfd, lockfd, report_fd, c->image_lock_fd /* image in use */};
        close_all_except(keep, ARRAY_SIZE(keep));
        (void)prctl(PR_SET_NAME, "sbx-supervisor");
        (void)lockfd; /* held open (and locked) for the whole life of this process */

        memcpy(s.st.id, id, SESSION_ID_LEN + 1);
        s.st.name = c->name;
        s.st.timeout_sec = c->timeout_sec;
        s.st.workdir = c->workdir;
        s.st.hostname = c->hostname;
        s.st.seccomp = c->seccomp;
        s.st.net = c->net;
        s.st.nofile = c->nofile;
        s.st.disk_bytes = c->disk_bytes;
        s.st.read_only = c->read_only;
        /* for `sbx diff` and `sbx commit`: what the root is made of */
        bool custom = !c->image_id && c->rootfs && strcmp(c->rootfs, "host") != 0;
        char *base = NULL;
        if (asprintf(&base, "%s%s",
                     c->image_id ? "image:"
                     : custom    ? "rootfs:"
                                 : "host",
                     c->image_id ? c->image_id
                     : custom    ? c->rootfs
                                 : "") < 0)
                base = NULL; /* diff and commit then say they cannot */
        s.st.base = base;    /* for the supervisor's life */
        s.st.memory_bytes = c->memory_bytes;
        s.st.cpus_milli = c->cpus_milli;
        s.st.pids = c->pids;
        s.st.limits_unenforced = plan->unenforced;
        s.st.env = session_env_build(c);
        s.st.volumes = session_volumes_build(c);
        if (!s.st.env || !s.st.volumes) {
                sbx_internal(&e, ENOMEM, "failed to build the session environment");
                goto fail;
        }
        if (setup(&s, &e) < 0)
                goto fail;
        if (netpolicy_init(&s.net, c->allow_hosts) < 0) {
                sbx_internal(&e, ENOMEM, "failed to copy the allow list");
                goto fail;
        }
        /* #3: the session is ready; #4 (or the creator's end) comes to the event loop */
        if (sync_send_ok(report_fd) < 0 || epoll_add(s.epfd, report_fd) < 0)
                supervisor_end_session(&s, "destroyed",
                                       "its creator ended before it had the session's id");
        s.creator = report_fd;
        reap_stale(rtfd, &plan->owns);
        event_loop(&s);
fail:
        if (s.audit_path)
                (void)unlink(s.audit_path); /* a session that never was leaves no log */
        cgroup_session_kill(&s.cg);
        session_kill(&s.init);
        cgroup_session_remove(&s.cg);
        runtime_name_release(rtfd, c->name, id);
        runtime_remove_session(rtfd, id);
        (void)sync_send_error(report_fd, &e);
        _exit(1);
}
