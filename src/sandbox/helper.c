/* SPDX-License-Identifier: MIT */
/*
 * H, the init's helper (docs/DESIGN.md, "create"): work of the session's set-up that does not
 * have to happen in the init, done on another CPU while the init builds the root. First the
 * network namespace, the one namespace that costs (~0.5 ms here: every pernet subsystem
 * registers its devices and sysctls); then the files of the generated /etc, once the init
 * hands it the directory. H is a child of the init in the session's pid namespace, runs only
 * this code, and is gone before the session is ready.
 *
 * Its answers come in order on one SOCK_SEQPACKET socket: the network namespace (an fd, none
 * with --net host, or an error), then /etc (done, or an error) when it was asked for.
 */
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macros.h"
#include "shared/proctitle.h"
#include "shared/sync.h"
#include "shared/util.h"
#include "rootfs.h"
#include "sandbox.h"

/* H's /etc step: the init's /etc and host root come as two fds; none: nothing to do. */
static void helper_etc(const struct sbx_config *c, int sock)
{
        struct sbx_error e = {0};
        _cleanup_close_ int etcfd = -1, hostfd = -1;
        if (sync_wait_fd(sock, "the session init", &etcfd, &e) < 0 || etcfd < 0 ||
            sync_wait_fd(sock, "the session init", &hostfd, &e) < 0 || hostfd < 0)
                return; /* the init asks for no /etc (or is gone) */
        /* the init has had its maps written by now (it sends the job after #1): the files
         * belong to the session's uid 0, as the init's own */
        int r = creds_become_sandbox_user(&e);
        if (r == 0)
                r = rootfs_fill_etc(c, etcfd, hostfd, &e);
        (void)(r < 0 ? sync_send_error(sock, &e) : sync_send_ok(sock));
}

_noreturn_ static void helper_main(const struct sbx_config *c, int sock)
{
        close_all_except(&sock, 1);
        proctitle_hide("sbx-helper");
        struct sbx_error e = {0};
        _cleanup_close_ int nsfd = -1;
        if (c->net != SBX_NET_HOST && netns_make(&nsfd, &e) < 0) {
                (void)sync_send_error(sock, &e);
                _exit(1);
        }
        if (sync_send_ok_fd(sock, nsfd) < 0)
                _exit(1);
        closep(&nsfd);
        helper_etc(c, sock);
        _exit(0);
}

void helper_start(const struct sbx_config *c, struct helper *h)
{
        *h = (struct helper)HELPER_INIT;
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return;
        pid_t pid = fork();
        if (pid == 0)
                helper_main(c, sp[1]);
        close(sp[1]);
        if (pid < 0) {
                close(sp[0]);
                return;
        }
        *h = (struct helper){.sock = sp[0], .pid = pid, .nsfd = -1};
}

bool helper_fill_etc(struct helper *h, int etcfd, int hostfd)
{
        if (h->pid < 0 || h->etc_asked)
                return false;
        h->etc_asked =
            sync_send_ok_fd(h->sock, etcfd) == 0 && sync_send_ok_fd(h->sock, hostfd) == 0;
        /* half a request would leave H waiting: close, and the init does it all itself */
        if (!h->etc_asked)
                (void)shutdown(h->sock, SHUT_WR);
        return h->etc_asked;
}

int helper_wait(struct helper *h, struct sbx_error *e)
{
        if (h->pid < 0 || h->answered)
                return 0;
        h->answered = true;
        int r = sync_wait_fd(h->sock, "the session's set-up helper", &h->nsfd, e);
        if (r == 0 && h->etc_asked)
                r = sync_wait(h->sock, "the session's set-up helper", e);
        (void)shutdown(h->sock, SHUT_WR); /* no job (any more): H leaves */
        closep(&h->sock);
        (void)RETRY_EINTR(waitpid(h->pid, NULL, 0));
        h->pid = -1;
        return r;
}

int helper_finish(const struct sbx_config *c, struct helper *h, int *ret_nsfd, struct sbx_error *e)
{
        int r = helper_wait(h, e);
        _cleanup_close_ int nsfd = TAKE_FD(h->nsfd);
        if (r < 0 || c->net == SBX_NET_HOST)
                return r;
        if (!h->answered) /* no H (no pid left?): the init makes the namespace itself */
                return netns_make(ret_nsfd, e);
        if (nsfd < 0)
                return sbx_internal(e, EPROTO, "the set-up helper sent no network namespace");
        /* Until this setns the init is in the namespace it was cloned in, the host's: H's must
         * be another one. Checked here, before #2, since `run` may have sent its command
         * ahead and the init starts it right after #2 (the spawning process checks it again). */
        struct stat ours, theirs;
        if (fstat(nsfd, &theirs) < 0 || stat("/proc/self/ns/net", &ours) < 0 ||
            (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino))
                return sbx_internal(e, EPROTO,
                                    "the set-up helper sent no network namespace of its own");
        if (setns(nsfd, CLONE_NEWNET) < 0)
                return sbx_internal(e, errno, "failed to enter the session's network namespace");
        *ret_nsfd = TAKE_FD(nsfd);
        return 0;
}
