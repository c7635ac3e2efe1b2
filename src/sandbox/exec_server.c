/* SPDX-License-Identifier: MIT */
/*
 * The session init as exec server (docs/DESIGN.md, "exec"). Once the root is built the init
 * has everything a command needs: the session's namespaces and cgroups, no_new_privs, the
 * session's seccomp filter, an empty bounding set, and only CAP_KILL and CAP_SETUID under a
 * helper uid of its own (creds_set_helper_uid). A reaper B forked from it inherits all of
 * that, and so does the command C that B forks, which only becomes uid 0 and clears those two
 * capabilities: neither joins, moves or loads anything. That is most of what an exec cost when
 * the client joined the session itself (launch/join.c, still the path when this one cannot
 * serve): three forks of the client, a cgroup migration on v1 hosts, and the seccomp programs
 * loaded per exec.
 *
 * Only the host side can reach the server: its listening socket is bound in the session's
 * runtime directory, which nothing inside sees, and only the init and its spare reaper hold
 * it. The init never reads a request of a session from `create` itself: each connection goes
 * to a fresh B, so a malformed one can only end that B. In `run` the one request comes over a
 * socketpair from the process that made the session (and kills it after), and the init serves
 * it as B.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/util.h"
#include "exec_wire.h"
#include "reaper.h"
#include "sandbox.h"

int pty_open_in_session(int *master, int *slave, struct sbx_error *e)
{
        *master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (*master < 0)
                return sbx_internal(e, errno, "failed to allocate a pty in the session");
        int unlock = 0;
        if (ioctl(*master, TIOCSPTLCK, &unlock) < 0)
                return sbx_internal(e, errno, "failed to unlock the pty");
        *slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (*slave < 0)
                return sbx_internal(e, errno, "failed to open the pty's terminal side");
        return 0;
}

/* The pty belongs to uid 0, the command's uid, not to ours (see creds_set_helper_uid). */
static int open_pty_as_root(int *master, int *slave, struct sbx_error *e)
{
        uid_t me = geteuid();
        if (me != 0 && setresuid(-1, 0, -1) < 0)
                return sbx_internal(e, errno, "failed to allocate a pty in the session");
        int r = pty_open_in_session(master, slave, e);
        if (me != 0 && setresuid(-1, me, -1) < 0)
                _exit(EXIT_SBX_FAILED);
        return r;
}

/* The command's v1 cgroups (exec_server_run), for every C. */
static const int *cmd_cgroups;

/*
 * Start C: a plain fork. B must not wait for it (a vfork-style start would leave B blocked
 * until C's execve, and a process of the session can stop C once it has the command's uid),
 * so the client always gets B's pidfd and its timeout always applies.
 */
static pid_t fork_command(void *ctx)
{
        (void)ctx;
        return fork();
}

_noreturn_ static void run_command(void *ctx, int errw)
{
        struct exec_spec *spec = ctx;
        spec->errfd = errw;
        exec_child_run(spec);
}

/* The request's strings and host fds, when the client is to go its own way after all. */
static void wire_release(struct exec_wire *w)
{
        for (int i = 0; i < WIRE_NFDS; i++)
                closep(&w->fds[i]);
        free(w->argv);
        free(w->envp);
        free(w->buf);
}

/*
 * Serve the request on conn as its reaper: B, forked by the init for it, or in `run` the init
 * itself (init_sigfd >= 0: its SIGCHLD signalfd). Returns only where the client is to take its
 * own path (it sent no request, or no pid was left for C) and the server goes on: B then
 * leaves, the init serves no more.
 */
static void serve(int conn, int init_sigfd)
{
        struct sbx_error e = {0};
        struct exec_wire w;
        int r = exec_wire_recv(conn, &w);
        if (r == -ECONNRESET)
                return; /* the client left without asking (run took its own path) */
        if (r < 0) {
                sbx_internal(&e, -r, "malformed exec request");
                (void)sync_send_error(conn, &e);
                _exit(EXIT_SBX_FAILED);
        }
        int null = open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (null < 0) {
                sbx_internal(&e, errno, "failed to open the session's /dev/null");
                (void)sync_send_error(conn, &e);
                _exit(EXIT_SBX_FAILED);
        }
        for (int i = 0; i < 3; i++)
                (void)dup2(null, i);
        int master = -1, slave = -1;
        if ((w.flags & EXEC_WIRE_TTY) &&
            (open_pty_as_root(&master, &slave, &e) < 0 || sync_send_ok_fd(conn, master) < 0)) {
                (void)sync_send_error(conn, &e);
                _exit(EXIT_SBX_FAILED);
        }
        /* pid 1 reaps every orphan already, and keeps its name */
        struct exec_spec spec;
        exec_spec_from_wire(&w, null, slave, &spec);
        spec.confined = true; /* uid, capabilities and the filter: the init's own */
        spec.enter_cgroups = cmd_cgroups;
        struct reaper_plan p = {.status = conn,
                                .sigfd = init_sigfd >= 0 ? init_sigfd : reaper_become(),
                                .out = w.fds[WIRE_OUT_R],
                                .err = w.fds[WIRE_ERR_R],
                                .pty = master,
                                .retry_on_eagain = true,
                                .is_init = init_sigfd >= 0,
                                .fork_command = fork_command,
                                .run_command = run_command,
                                .ctx = &spec};
        reaper_start(&p);
        /* no pid was left for C: the client goes its own way */
        if (init_sigfd < 0)
                _exit(EXIT_SBX_FAILED);
        wire_release(&w);
        int fds[] = {null, master, slave};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                closep(&fds[i]);
}

/* The init's server state: all its fds, which B closes first. */
struct server {
        int listen, sigfd;
        int taken[2]; /* a spare B writes a byte here once it has its connection; -1: no spares */
        pid_t spare;  /* the B waiting in accept(), or 0 */
};

static void close_server_fds(const struct server *s)
{
        int fds[] = {s->listen, s->sigfd, s->taken[0]};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

/*
 * Fork B for conn; on failure (the session's pids are all taken?) the client goes around.
 * Nothing here may end the init.
 */
static void start_reaper(int conn, const struct server *s)
{
        pid_t b = fork();
        if (b == 0) {
                close_server_fds(s);
                if (s->taken[1] >= 0)
                        close(s->taken[1]);
                serve(conn, -1);
                _exit(0);
        }
        /* Without a B, closing conn with the request unread is the answer: the client sees
         * ECONNRESET, which tells it nothing was started. */
        close(conn);
}

/* accept() failed with err: false for what passes (nothing pending, a signal, a connection
 * aborted before it was taken), true for what stays (EMFILE, ENFILE, ENOMEM...). */
static bool accept_error_lasts(int err)
{
        return err != EAGAIN && err != EINTR && err != ECONNABORTED;
}

/* The next connection on the (non-blocking) listening socket, or -1. */
static int wait_connection(int listen_fd)
{
        for (;;) {
                struct pollfd p = {.fd = listen_fd, .events = POLLIN};
                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        return -1;
                int conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (conn >= 0)
                        return conn;
                if (accept_error_lasts(errno))
                        return -1;
        }
}

/*
 * A spare B, forked before its connection comes: the next exec finds its reaper waiting in
 * accept(), and the init forks the next spare while that one serves, off the exec's path. A
 * session keeps one more process for it (and one more pid of its pids limit).
 */
static void start_spare(struct server *s)
{
        pid_t b = fork();
        if (b == 0) {
                close(s->sigfd);
                close(s->taken[0]);
                proctitle_hide("sbx-spare");
                int conn = wait_connection(s->listen);
                /* Without a connection the spare leaves with nothing written: the init then
                 * forks no more of them (never a loop of failing spares). */
                if (conn < 0)
                        _exit(EXIT_SBX_FAILED);
                (void)RETRY_EINTR(write(s->taken[1], "", 1));
                close(s->taken[1]);
                close(s->listen);
                serve(conn, -1);
                _exit(0);
        }
        s->spare = b > 0 ? b : 0;
}

static void stop_spares(struct server *s)
{
        closep(&s->taken[0]);
        closep(&s->taken[1]);
}

/* `run`'s init before its request: reap until fd has data or a hang-up. */
static void reap_until_readable(int fd, int sigfd)
{
        for (;;) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                struct pollfd p[2] = {{.fd = sigfd, .events = POLLIN},
                                      {.fd = fd, .events = POLLIN}};
                if (poll(p, ARRAY_SIZE(p), -1) < 0 && errno != EINTR)
                        return;
                if (p[0].revents)
                        signalfd_drain(sigfd);
                if (p[1].revents)
                        return;
        }
}

static bool is_listening(int fd)
{
        int on = 0;
        socklen_t len = sizeof(on);
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

/*
 * If the spare took its connection (its byte on the pipe): fork the next, or, where none can
 * be forked, let the init accept itself again. false: it has none (yet).
 */
static bool spare_taken(struct server *s)
{
        char buf[8];
        if (read(s->taken[0], buf, sizeof(buf)) <= 0)
                return false;
        start_spare(s);
        if (s->spare == 0)
                stop_spares(s);
        return true;
}

/* Reap; a spare that ended without a connection (killed?) gets no successor. */
static void reap(struct server *s)
{
        pid_t w;
        while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
                if (w == s->spare && !spare_taken(s)) {
                        s->spare = 0;
                        stop_spares(s);
                }
}

_noreturn_ void exec_server_run(int exec_fd, bool spares, const int *cgroups)
{
        cmd_cgroups = cgroups;
        struct server s = {.listen = -1, .sigfd = -1, .taken = {-1, -1}};
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigprocmask(SIG_BLOCK, &set, NULL);
        int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0 && exec_fd >= 0) {
                /* Serve nobody rather than leave clients waiting: they take their own path. */
                close(exec_fd);
                exec_fd = -1;
        }
        s.sigfd = sigfd;
        if (exec_fd >= 0 && !is_listening(exec_fd)) {
                /* `run`: its one exec comes from the process that made the session, and the
                 * session ends with it. The init is its reaper: one fork fewer, and pid 1 takes
                 * no signal from inside. It returns if the client takes its own path. The
                 * request may come late (provisioning joins first) or never (a memory limit):
                 * pid 1 reaps meanwhile. */
                reap_until_readable(exec_fd, sigfd);
                serve(exec_fd, sigfd);
                close(exec_fd);
                exec_fd = -1;
        }
        s.listen = exec_fd;
        /* before the first spare is forked: it inherits the trimmed stack */
        stack_release_below();
        if (exec_fd >= 0 && spares && pipe2(s.taken, O_CLOEXEC | O_NONBLOCK) == 0) {
                start_spare(&s);
                if (s.spare == 0)
                        stop_spares(&s);
        }
        for (;;) {
                reap(&s);
                if (sigfd < 0) { /* no signalfd: reap the old way */
                        int sig;
                        (void)sigwait(&set, &sig);
                        continue;
                }
                /* With a spare waiting, the connections are its own. */
                struct pollfd p[3] = {{.fd = sigfd, .events = POLLIN},
                                      {.fd = s.spare ? -1 : exec_fd, .events = POLLIN},
                                      {.fd = s.taken[0], .events = POLLIN}};
                if (poll(p, ARRAY_SIZE(p), -1) < 0)
                        continue;
                if (p[0].revents)
                        signalfd_drain(sigfd);
                if (p[2].revents && s.spare)
                        (void)spare_taken(&s);
                if (p[1].revents & POLLIN) {
                        int conn = accept4(exec_fd, NULL, NULL, SOCK_CLOEXEC);
                        if (conn >= 0)
                                start_reaper(conn, &s);
                        else if (accept_error_lasts(errno)) {
                                /* Lasting (EMFILE: in an unprivileged session the command
                                 * has our uid and may lower our RLIMIT_NOFILE): stop
                                 * serving, rather than spin on a readable socket. Clients
                                 * then get a refused connect and join from outside. */
                                close(exec_fd);
                                exec_fd = s.listen = -1;
                        }
                }
        }
}
