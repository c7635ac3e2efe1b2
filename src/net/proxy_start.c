/* SPDX-License-Identifier: MIT */
/*
 * Starting a session's proxy: its listening socket is made inside the session's network
 * namespace by a short-lived child that joins it (a socket keeps the namespace it was made
 * in, whoever holds it later), and the proxy process serving it is forked on the host side.
 */
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "../sandbox/seccomp.h"
#include "shared/macros.h"
#include "shared/sync.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "proxy.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int listen_loopback(void)
{
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons(PROXY_PORT),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0)
                return negerrno();
        return TAKE_FD(fd);
}

/* In a child: join the session's user namespace (for the capabilities its network namespace
 * asks for) and network namespace, and send the listening socket back. */
_noreturn_ static void listener_child(int userns_fd, int netns_fd, int chan)
{
        struct sbx_error e = {0};
        int fd;
        if (userns_fd >= 0 && setns(userns_fd, CLONE_NEWUSER) < 0)
                sbx_internal(&e, errno, "failed to join the session's user namespace");
        else if (setns(netns_fd, CLONE_NEWNET) < 0)
                sbx_internal(&e, errno, "failed to join the session's network namespace");
        else if ((fd = listen_loopback()) < 0)
                sbx_internal(&e, -fd, "failed to listen on 127.0.0.1:%d in the session",
                             PROXY_PORT);
        else {
                (void)sync_send_ok_fd(chan, fd);
                _exit(0);
        }
        (void)sync_send_error(chan, &e);
        _exit(1);
}

static int make_listener(int userns_fd, int netns_fd, int *ret_fd, struct sbx_error *e)
{
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return sbx_internal(e, errno, "failed to create the proxy's socket pair");
        _cleanup_close_ int parent_end = sp[0], child_end = sp[1];
        pid_t pid = fork();
        if (pid < 0)
                return sbx_internal(e, errno, "failed to start the proxy");
        if (pid == 0)
                listener_child(userns_fd, netns_fd, child_end);
        closep(&child_end);
        int r = sync_wait_fd(parent_end, "the proxy's listener", ret_fd, e);
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        if (r == 0 && *ret_fd < 0)
                r = sbx_internal(e, EPROTO, "the proxy's listener sent no socket");
        return r;
}

/* The proxy parses what the sandbox sends: as root it gives up root first, for the session's
 * own helper uid and gid (no other process has them, so no other can signal it), and it runs
 * under the default seccomp filter. It keeps only what it needs: the listening socket, the
 * audit log, the stop pipe, and /dev/null as stdio. */
static void proxy_child_setup(const struct proxy_params *pp, pid_t parent, uid_t run_as)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; null >= 0 && i < 3; i++)
                dup2(null, i);
        int keep[] = {pp->listen_fd, pp->audit_fd, pp->stop_fd};
        close_all_except(keep, ARRAY_SIZE(keep));
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (geteuid() == 0 && (run_as == 0 || setgroups(0, NULL) < 0 ||
                               setresgid((gid_t)run_as, (gid_t)run_as, (gid_t)run_as) < 0 ||
                               setresuid(run_as, run_as, run_as) < 0))
                _exit(1);
        /* after the credential change: the kernel clears PDEATHSIG on every one */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(1);
        (void)prctl(PR_SET_NAME, "sbx-proxy");
        /* The sandboxes' own default filter: no ptrace, bpf, mount, namespaces, keyrings,
         * io_uring... for the one host process that reads what a sandbox sends. */
        struct sbx_error e = {0};
        if (seccomp_apply(SBX_SECCOMP_DEFAULT, &e) < 0)
                _exit(1);
}

/* c's allow list with the window's entries after it. */
static char **allow_with_window(char *const *allow, char *const *window)
{
        size_t n = 0, k = 0;
        for (size_t i = 0; allow && allow[i]; i++)
                n++;
        for (size_t i = 0; window && window[i]; i++)
                n++;
        char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return NULL;
        for (size_t i = 0; allow && allow[i]; i++)
                v[k++] = allow[i];
        for (size_t i = 0; window && window[i]; i++)
                v[k++] = window[i];
        return v; /* borrows the strings */
}

int proxy_start(const struct sbx_config *c, char *const *window, int userns_fd, int netns_fd,
                const char *session_id, int audit_fd, uid_t run_as, struct proxy_handle *ret,
                struct sbx_error *e)
{
        *ret = (struct proxy_handle)PROXY_HANDLE_INIT;
        if (c->net != SBX_NET_PROXY && !(window && window[0]))
                return 0;
        struct proxy_params pp = {.audit_fd = audit_fd, .session_id = session_id};
        _cleanup_free_ char **entries = allow_with_window(c->allow_hosts, window);
        if (!entries)
                return sbx_internal(e, ENOMEM, "failed to read the allow list");
        int r = allow_list_parse(entries, &pp.allow);
        if (r < 0)
                return sbx_internal(e, -r, "failed to read the allow list");
        _cleanup_close_ int listen_fd = -1, stop_rd = -1, stop_wr = -1;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                allow_list_free(&pp.allow);
                return sbx_internal(e, errno, "failed to create the proxy's stop pipe");
        }
        stop_rd = p[0];
        stop_wr = p[1];
        if ((r = make_listener(userns_fd, netns_fd, &listen_fd, e)) < 0) {
                allow_list_free(&pp.allow);
                return r;
        }
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0) {
                closep(&stop_wr);
                pp.listen_fd = listen_fd;
                pp.stop_fd = stop_rd;
                proxy_child_setup(&pp, parent, run_as);
                proxy_serve(&pp);
        }
        allow_list_free(&pp.allow);
        if (pid < 0)
                return sbx_internal(e, errno, "failed to start the proxy");
        int pidfd = sys_pidfd_open(pid, 0);
        if (pidfd < 0) {
                r = sbx_internal(e, errno, "failed to open the proxy's pidfd");
                closep(&stop_wr);
                (void)RETRY_EINTR(waitpid(pid, NULL, 0));
                return r;
        }
        ret->pid = pid;
        ret->pidfd = pidfd;
        ret->stop_fd = TAKE_FD(stop_wr);
        return 0;
}

int proxy_window_close(struct proxy_handle *h, enum sbx_net_mode mode, char *const *allow)
{
        if (h->stop_fd < 0)
                return 0;
        if (mode != SBX_NET_PROXY) {
                proxy_stop(h);
                return 0;
        }
        static char *const none[] = {NULL};
        return proxy_policy_send(h->stop_fd, allow ? allow : none);
}

int proxy_reap(struct proxy_handle *h, siginfo_t *ret)
{
        *ret = (siginfo_t){0};
        if (h->pidfd < 0 ||
            RETRY_EINTR(waitid(P_PIDFD, (id_t)h->pidfd, ret, WEXITED | WNOHANG)) < 0)
                return -ECHILD;
        if (ret->si_pid == 0)
                return 0; /* still running */
        closep(&h->pidfd);
        closep(&h->stop_fd);
        return 1;
}

void proxy_stop(struct proxy_handle *h)
{
        closep(&h->stop_fd); /* the proxy exits when it sees the pipe close */
        if (h->pidfd < 0)
                return;
        (void)sys_pidfd_send_signal(h->pidfd, SIGKILL); /* sooner, where we still may */
        siginfo_t si;
        (void)RETRY_EINTR(waitid(P_PIDFD, (id_t)h->pidfd, &si, WEXITED));
        closep(&h->pidfd);
}

int proxy_check(char *why, size_t n)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                snprintf(why, n, "pipe: %s", strerror(errno));
                return negerrno();
        }
        _cleanup_close_ int rd = p[0], wr = p[1];
        pid_t pid = fork();
        if (pid < 0) {
                snprintf(why, n, "fork: %s", strerror(errno));
                return negerrno();
        }
        if (pid == 0) {
                struct sbx_error e = {0};
                int err = 0, fd;
                if (unshare((geteuid() == 0 ? 0 : CLONE_NEWUSER) | CLONE_NEWNET) < 0)
                        err = errno;
                else if (netif_loopback_up(&e) < 0)
                        err = EPERM;
                else if ((fd = listen_loopback()) < 0)
                        err = -fd;
                (void)!write(wr, &err, sizeof(err));
                _exit(0);
        }
        closep(&wr);
        int err = EPROTO;
        if (read(rd, &err, sizeof(err)) != sizeof(err))
                err = EPROTO;
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        if (err) {
                snprintf(why, n, "cannot listen on 127.0.0.1:%d in a new network namespace: %s",
                         PROXY_PORT, strerror(err));
                return -err;
        }
        return 0;
}
