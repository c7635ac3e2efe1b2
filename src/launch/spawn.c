/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "../net/proxy.h"
#include "../sandbox/sandbox.h"
#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "cgroup.h"
#include "launch.h"
#include "refusal.h"

static int write_proc_file(pid_t pid, const char *name, const char *text, struct sbx_error *e)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
                return sbx_unsupported(e, errno, "failed to write %s of the session", name);
        return 0;
}

/*
 * uid 0 inside is never host root: as root it maps to the session's own range (uidrange.h), as
 * a user to the caller's own uid (which is all an unprivileged user may map).
 */
static int write_id_maps(const struct uid_slot *u, pid_t pid, struct sbx_error *e)
{
        char uid_map[64], gid_map[64];
        if (geteuid() == 0) {
                snprintf(uid_map, sizeof(uid_map), "0 %u %u\n", u->start, u->count);
                snprintf(gid_map, sizeof(gid_map), "0 %u %u\n", u->start, u->count);
        } else {
                snprintf(uid_map, sizeof(uid_map), "0 %u 1\n", (unsigned)geteuid());
                snprintf(gid_map, sizeof(gid_map), "0 %u 1\n", (unsigned)getegid());
        }
        int r = write_proc_file(pid, "setgroups", "deny", e);
        if (r == 0)
                r = write_proc_file(pid, "uid_map", uid_map, e);
        if (r == 0)
                r = write_proc_file(pid, "gid_map", gid_map, e);
        return r;
}

const char *const session_ns_names[SESSION_NS_COUNT] = {"user", "mnt", "pid",   "net",
                                                        "ipc",  "uts", "cgroup"};

void session_ns_close(int ns[SESSION_NS_COUNT])
{
        for (int i = 0; i < SESSION_NS_COUNT; i++)
                closep(&ns[i]);
}

/* This process setns()ed into a session's namespaces (the join path of `run`): its children are
 * born in that pid namespace, which dies with the init (may_detach). */
static bool joined_a_session;

int session_ns_join(const int ns[SESSION_NS_COUNT], struct sbx_error *e)
{
        joined_a_session = true;
        for (int i = 0; i < SESSION_NS_COUNT; i++)
                if (ns[i] >= 0 && setns(ns[i], 0) < 0)
                        return sbx_internal(e, errno, "failed to join the session's %s namespace",
                                            session_ns_names[i]);
        return 0;
}

int session_ns_join_except_cgroup(const int ns[SESSION_NS_COUNT], struct sbx_error *e)
{
        int but_cgroup[SESSION_NS_COUNT];
        memcpy(but_cgroup, ns, sizeof(but_cgroup));
        but_cgroup[NS_CGROUP] = -1;
        return session_ns_join(but_cgroup, e);
}

/*
 * With nsdelegate, a process inside the session's cgroup namespace could not place a child in
 * an exec's leaf, which is outside the namespace's root (the init's cgroup): the children join
 * it after they are born.
 */
int session_ns_join_cgroup(const int ns[SESSION_NS_COUNT])
{
        return ns[NS_CGROUP] < 0 || setns(ns[NS_CGROUP], CLONE_NEWCGROUP) == 0 ? 0 : -errno;
}

/*
 * Every cgroup.procs write takes the kernel's global cgroup_threadgroup_rwsem for writing,
 * which waits for an RCU grace period unless another migration happened just before: 8-18 ms on
 * this kind of machine after a pause. A clone into the cgroup takes it only for reading. The
 * child of the raw clone3 keeps its parent's tid in glibc's thread struct: our children never
 * use it (no threads, no raise()), and they end in execve or _exit.
 */
pid_t fork_into_cgroup(int cgroup_fd, bool *placed)
{
        *placed = false;
        if (cgroup_fd >= 0) {
                pid_t pid = sys_clone3_into_cgroup(0, cgroup_fd);
                if (pid >= 0) {
                        *placed = true;
                        return pid;
                }
        }
        /* A raw clone as well, not fork(): B0 is a vfork child, which must not run glibc's
         * fork handlers on the memory it shares with the client. */
        return sys_clone_flags(0);
}

static int open_namespaces(struct session_proc *p, struct sbx_error *e)
{
        for (int i = 0; i < SESSION_NS_COUNT; i++) {
                /* the init enters its network namespace at the end of its set-up, and sends
                 * it with #2 */
                if (i == NS_NET)
                        continue;
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)p->pid, session_ns_names[i]);
                p->ns[i] = open(path, O_RDONLY | O_CLOEXEC);
                if (p->ns[i] < 0)
                        return sbx_internal(e, errno, "failed to open the session's %s namespace",
                                            session_ns_names[i]);
        }
        return 0;
}

/* The init's network namespace (#2): one, and a new one, unless the session shares the host's. */
static int check_netns(const struct sbx_config *c, int fd, struct sbx_error *e)
{
        if (c->net == SBX_NET_HOST)
                return fd < 0 ? 0 : sbx_internal(e, EPROTO, "the session init sent a namespace");
        struct stat ours, theirs;
        if (fd < 0 || ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET || fstat(fd, &theirs) < 0 ||
            stat("/proc/self/ns/net", &ours) < 0 ||
            (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino))
                return sbx_internal(e, EPROTO,
                                    "the session init sent no network namespace of its own");
        return 0;
}

/*
 * As root, host-root-owned /usr would show up as "nobody" inside and the capability-less
 * sandbox root could not write through its overlay. An idmapped clone of /usr, keyed to the
 * session's user namespace, shows host uid N as the session's uid N (N < count): the overlay's
 * copy-up then works like on a container host. Needs CAP_SYS_ADMIN on the host, so an
 * unprivileged session keeps a /usr whose existing files are read-only to it. -1 if unavailable.
 */
static int idmapped_clone(const char *path, const struct session_proc *p)
{
        _cleanup_close_ int tree =
            open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NODEV,
                               .userns_fd = (uint64_t)p->ns[NS_USER]};
        if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return -1;
        return TAKE_FD(tree);
}

static int idmapped_usr(const struct sbx_config *c, const struct session_proc *p)
{
        /* With --image, the same for the image store's layers (root-owned files of images). */
        const char *path = c->image_layers_dir ? c->image_layers_dir : "/usr";
        if (geteuid() != 0 || (!c->image_layers_dir && c->rootfs && strcmp(c->rootfs, "host") != 0))
                return -1;
        return idmapped_clone(path, p);
}

/* An image committed from a host base has both: its layers' clone above, the host's /usr in a
 * message of its own after #1. */
static int send_host_usr(const struct sbx_config *c, const struct session_proc *p, int sync_fd,
                         struct sbx_error *e)
{
        if (!c->image_host_base)
                return 0;
        _cleanup_close_ int tree = geteuid() == 0 ? idmapped_clone("/usr", p) : -1;
        return sync_send_ok_fd(sync_fd, tree) < 0
                   ? sbx_internal(e, errno, "the session init died during setup")
                   : 0;
}

void session_kill(struct session_proc *p)
{
        proxy_stop(&p->proxy);
        closep(&p->sync);
        session_ns_close(p->ns);
        closep(&p->layer_fd);
        if (p->pidfd >= 0)
                (void)sys_pidfd_send_signal(p->pidfd, SIGKILL);
        /* The dying init waits until every process of its pid namespace is reaped; reapers
         * of our own execs in it are our children, so reap those too or both wait forever. */
        pid_t w;
        while (p->pid > 0 && (w = RETRY_EINTR(waitpid(-1, NULL, 0))) > 0 && w != p->pid)
                ;
        closep(&p->pidfd);
        p->pid = 0;
        /* Only now: every process that had one of its ids is gone (the proxy, the pid
         * namespace with the init). */
        uid_slot_release(&p->uids);
}

/* The cleaner of session_end: off the caller's terminal, pipes and process group, and
 * deaf to the signals a terminal, a caller's group or a service manager's stop send (its work
 * is bounded: the init is dead or dying). */
static _Noreturn void teardown(struct session_proc *p, struct cgroup_session *cg,
                               const sigset_t *mask)
{
        (void)setsid();
        proctitle_hide("sbx-teardown");
        const int deaf[] = {SIGINT, SIGHUP, SIGPIPE, SIGTERM, SIGQUIT};
        for (size_t i = 0; i < ARRAY_SIZE(deaf); i++)
                (void)signal(deaf[i], SIG_IGN);
        (void)sigprocmask(SIG_SETMASK, mask, NULL);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int fd = 0; fd <= 2; fd++)
                if (fd != null)
                        (void)(null >= 0 ? dup2(null, fd) : close(fd));
        /* the namespaces and the layer too: whoever lets go of them last pays for their
         * teardown (the mounts, the layer's pages), which must not be the caller */
        int keep[7 + CG_NCTRL + SESSION_NS_COUNT] = {
            p->pidfd,       p->uids.lock_fd,  p->uids.dir_fd,          p->layer_fd,
            cg->v2_init_fd, cg->v2_parent_fd, cg->v1_freezer_parent_fd};
        for (int k = 0; k < CG_NCTRL; k++)
                keep[7 + k] = cg->v1_parent_fd[k];
        for (int k = 0; k < SESSION_NS_COUNT; k++)
                keep[7 + CG_NCTRL + k] = p->ns[k];
        close_all_except(keep, ARRAY_SIZE(keep));
        /* Readable from the init's exit_notify on, which do_exit reaches after it let go of its
         * namespaces (exit_task_namespaces, and the mounts' task work) and after every other
         * process of its pid namespace was reaped (zap_pid_ns_processes). Nothing is given
         * back before. */
        struct pollfd pf = {.fd = p->pidfd, .events = POLLIN};
        while (poll(&pf, 1, -1) <= 0 || !pf.revents) {
                struct timespec ts = {.tv_nsec = 10 * 1000 * 1000};
                if (errno != EINTR)
                        (void)nanosleep(&ts, NULL);
        }
        closep(&p->pidfd);
        p->pid = 0;
        session_ns_close(p->ns);
        closep(&p->layer_fd);
        uid_slot_release(&p->uids);
        cgroup_session_remove(cg);
        _exit(0);
}

/* Whether the init has a child (the command left something running, or a reaper is still on
 * its way out), by /proc/PID/task/PID/children; true when that cannot be read. */
static bool init_has_children(pid_t pid)
{
        char path[64], c = 0;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd < 0 || RETRY_EINTR(read(fd, &c, 1)) != 0;
}

/* Detach only where the caller goes on without anything of the session still running code of
 * its own, and where the cleaner outlives the caller. */
static bool may_detach(const struct session_proc *p)
{
        /* after a join our children are born in the session's pid namespace, to die with it;
         * as pid 1 (a container's entry point) the cleaner dies when we return */
        if (p->pid <= 0 || p->pidfd < 0 || joined_a_session || getpid() == 1)
                return false;
        /* What the command left would run on for as long as the init takes to kill it
         * (zap_pid_ns_processes, at the end of its exit, in a throttled cpu cgroup maybe):
         * then the wait happens here. Every process of the command descends from the init. */
        return !init_has_children(p->pid);
}

void session_end(struct session_proc *p, struct cgroup_session *cg, bool may_return)
{
        proxy_stop(&p->proxy);
        closep(&p->sync);
        cgroup_session_kill(cg);
        pid_t c = -1;
        sigset_t all, old;
        sigfillset(&all);
        if (may_return && may_detach(p)) {
                (void)sys_pidfd_send_signal(p->pidfd, SIGKILL);
                /* Signals wait until the cleaner has left the caller's process group. */
                (void)sigprocmask(SIG_SETMASK, &all, &old);
                c = fork();
                if (c == 0)
                        teardown(p, cg, &old);
                (void)sigprocmask(SIG_SETMASK, &old, NULL);
        }
        if (c < 0) { /* not detached, or no process for the wait: wait here */
                session_kill(p);
                cgroup_session_remove(cg);
                return;
        }
        /* The cleaner holds the same open files: let go of ours without undoing them. */
        session_ns_close(p->ns);
        closep(&p->layer_fd);
        closep(&p->pidfd);
        p->pid = 0;
        uid_slot_forget(&p->uids);
        cgroup_session_close(cg);
}

/*
 * The init is born in the session's v2 "init" cgroup (clone3 CLONE_INTO_CGROUP) when there is
 * one and the kernel can; otherwise it is moved there by pid before #1: until #1 it runs
 * nothing but sbx's own code waiting for it. Into the v1 cgroups it moves itself (init.c), once
 * its root is built (send_v1_tasks).
 */
static pid_t clone_init(unsigned long flags, const struct cgroup_session *cg, bool *ret_in_v2)
{
        *ret_in_v2 = false;
        if (cg && cg->v2_init_fd >= 0) {
                pid_t pid = sys_clone3_into_cgroup(flags, cg->v2_init_fd);
                if (pid >= 0) {
                        *ret_in_v2 = true;
                        return pid;
                }
                /* ENOSYS/E2BIG before 5.7; anything else shows up again below, with the
                 * error of the step that really fails. */
        }
        return sys_clone_flags(flags);
}

static int spawn_start(const struct sbx_config *c, const struct cgroup_session *cg, int exec_fd,
                       struct session_proc *out, struct sbx_error *e)
{
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return sbx_internal(e, errno, "failed to create the handshake socket");
        _cleanup_close_ int parent_end = sp[0], child_end = sp[1];

        /* Host root's supplementary groups must never reach the session. */
        if (geteuid() == 0 && setgroups(0, NULL) < 0)
                return sbx_internal(e, errno, "failed to drop supplementary groups");

        /* The v1 "tasks" files come after #1 (session_spawn_finish). */
        struct init_fds fds = {.sync = child_end, .exec = exec_fd, .cgroup_tasks = {-1, -1, -1}};
        /* No CLONE_NEWNET: the init's helper makes that one in parallel (sandbox/helper.c). */
        unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
                              CLONE_NEWUTS | CLONE_NEWCGROUP;
        bool in_v2;
        pid_t pid = clone_init(flags, cg, &in_v2);
        if (pid == 0) {
                closep(&parent_end);
                session_init_main(c, &fds);
        }
        if (pid < 0)
                return errno == EPERM || errno == EINVAL || errno == ENOSPC
                           ? sbx_unsupported(e, errno,
                                             "failed to create the session's namespaces "
                                             "(are user namespaces enabled? see 'sbx "
                                             "check')")
                           : sbx_internal(e, errno, "failed to create the session");
        closep(&child_end);

        struct session_proc p = SESSION_PROC_INIT;
        p.pid = pid;
        p.pidfd = sys_pidfd_open(pid, 0);
        int r = p.pidfd < 0
                    ? sbx_unsupported(e, errno,
                                      "pidfd_open is not available (sbx needs Linux 5.3 or newer)")
                    : 0;
        if (r == 0 && cg && !in_v2)
                r = cgroup_session_attach_v2(cg, pid, e);
        /* After the clone: the init must not hold the range's lock (it would outlive us). */
        if (r == 0)
                r = uid_slot_take(c, &p.uids, e);
        if (r == 0)
                r = write_id_maps(&p.uids, pid, e);
        if (r == 0)
                r = open_namespaces(&p, e);
        _cleanup_close_ int usr_tree = r == 0 ? idmapped_usr(c, &p) : -1;
        /* #1: maps written (with the idmapped /usr when there is one) */
        if (r == 0 && sync_send_ok_fd(parent_end, usr_tree) < 0)
                r = sbx_internal(e, errno, "the session init died during setup");
        if (r == 0)
                r = send_host_usr(c, &p, parent_end, e);
        if (r == 0)
                r = volumes_send(c, pid, parent_end, e);
        p.sync = TAKE_FD(parent_end);
        if (r < 0) {
                session_kill(&p);
                return r;
        }
        *out = p;
        return 0;
}

/*
 * The init moves itself into the v1 cgroups (sandbox/init.c) once its root is built: one
 * message per controller (memory, pids, cpu), with its "tasks" file or none. The files are
 * opened here, since the kernel checks a move against the opener's credentials.
 */
static int send_v1_tasks(const struct cgroup_session *cg, const struct session_proc *p,
                         struct sbx_error *e)
{
        _Static_assert(CG_NCTRL == INIT_CGROUP_FDS && CG_MEMORY == 0 && CG_PIDS == 1 && CG_CPU == 2,
                       "init.c names the tasks fds memory, pids, cpu");
        int tasks[CG_NCTRL] = {-1, -1, -1};
        int r = cg ? cgroup_session_open_v1_tasks(cg, tasks, e) : 0;
        bool sent = true;
        for (int k = 0; k < CG_NCTRL; k++) {
                if (r == 0 && sent)
                        sent = sync_send_ok_fd(p->sync, tasks[k]) == 0;
                closep(&tasks[k]);
        }
        /* An init that failed early has sent its error and gone: that error, read at #2, is
         * the one to report. An init still waiting sees the end of the channel and fails. */
        if (!sent)
                (void)shutdown(p->sync, SHUT_WR);
        return r;
}

static int spawn_finish(const struct sbx_config *c, const struct cgroup_session *cg,
                        struct session_proc *p, struct sbx_error *e)
{
        int r = cg ? cgroup_session_attach_freezer(cg, p->pid, e) : 0;
        if (r == 0)
                r = send_v1_tasks(cg, p, e);
        /* #2: root built, or the init's own error */
        if (r == 0)
                r = sync_wait_fd(p->sync, "the session init", &p->ns[NS_NET], e);
        /* #2b: the layer's root */
        if (r == 0)
                r = sync_wait_fd(p->sync, "the session init", &p->layer_fd, e);
        if (r == 0)
                r = check_netns(c, p->ns[NS_NET], e);
        closep(&p->sync);
        if (r < 0)
                session_kill(p);
        return r;
}

/* A failure's error, with the host's own refusal when there is one: that is what the user must
 * fix. */
static int explained(const struct sbx_config *c, int r, struct sbx_error *e)
{
        if (r < 0)
                host_refusal_explain(!c->read_only, e);
        return r;
}

int session_spawn_start(const struct sbx_config *c, const struct cgroup_session *cg, int exec_fd,
                        struct session_proc *out, struct sbx_error *e)
{
        return explained(c, spawn_start(c, cg, exec_fd, out, e), e);
}

int session_spawn_finish(const struct sbx_config *c, const struct cgroup_session *cg,
                         struct session_proc *p, struct sbx_error *e)
{
        return explained(c, spawn_finish(c, cg, p, e), e);
}

int session_spawn(const struct sbx_config *c, const struct cgroup_session *cg, int exec_fd,
                  struct session_proc *out, struct sbx_error *e)
{
        int r = session_spawn_start(c, cg, exec_fd, out, e);
        return r < 0 ? r : session_spawn_finish(c, cg, out, e);
}
