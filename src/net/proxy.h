/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy of a proxy-mode session (docs/DESIGN.md, "Network egress"). Its listening
 * socket lives on 127.0.0.1:PROXY_PORT (config.h) inside the session's network namespace (which has
 * nothing but loopback); the process that serves it lives on the host's network.
 */
#pragma once

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/config.h"
#include "shared/error.h"
#include "allow.h"

/* Connections served at once; more are answered 503 at once and closed. */
#define PROXY_MAX_CONNS 256

/* The proxy process as its starter holds it. */
struct proxy_handle {
        pid_t pid;
        int pidfd;
        int stop_fd; /* write end of a pipe: the proxy exits when it closes */
};
#define PROXY_HANDLE_INIT                                                                          \
        {                                                                                          \
                .pidfd = -1, .stop_fd = -1                                                         \
        }

/*
 * In proxy mode, or when window names hosts (else a no-op): create the listening socket inside the
 * network namespace netns_fd (joining userns_fd first, in a short-lived child) and fork the proxy
 * process that serves it. It writes one "net" record per connection to audit_fd (-1: none). It
 * exits when the stop pipe closes (proxy_stop, or the caller's death): a signal would not do, since
 * a caller that joined the session's user namespace (`run`) may no longer signal it, and PDEATHSIG
 * is subject to the same permission check. As root it runs as host uid and gid run_as (the
 * session's helper id, never 0). window (may be NULL): allow entries admitted on top of c's until
 * the starter ends the provisioning window (proxy_window_close).
 */
int proxy_start(const struct sbx_config *c, char *const *window, int userns_fd, int netns_fd,
                const char *session_id, int audit_fd, uid_t run_as, struct proxy_handle *ret,
                struct sbx_error *e);
/*
 * The provisioning window ends: a session without proxy mode loses its proxy (h is stopped),
 * one with it keeps the proxy with allow alone in force. 0 or -errno.
 */
int proxy_window_close(struct proxy_handle *h, enum sbx_net_mode mode, char *const *allow);
/* When the proxy has ended: reap it (its status in *ret) and return 1; 0 while it runs. */
int proxy_reap(struct proxy_handle *h, siginfo_t *ret);
/* End the proxy process and reap it. */
void proxy_stop(struct proxy_handle *h);

/* The most bytes of allow entries a live change may send (net/policy.c). */
#define PROXY_POLICY_MAX (60u * 1024)
/* Supervisor side: send the whole new allow list down the proxy's stop pipe (already
 * checked entries, NULL-terminated). 0 or -errno. */
int proxy_policy_send(int stop_fd, char *const *entries);
/* Proxy side, when its stop pipe is readable: 0 when it closed (the session ends), 1 when
 * *allow was replaced by a new list, -errno on a bad message (*allow unchanged). */
int proxy_policy_read(int fd, struct allow_list *allow);

/* For `sbx check`: can this host create the proxy's socket in a new network namespace?
 * 0, or -errno with what failed in why. */
int proxy_check(char *why, size_t n);

struct proxy_params {
        int listen_fd, audit_fd, stop_fd; /* stop_fd: the read end of the stop pipe */
        const char *session_id;
        struct allow_list allow;
};
/* The proxy process's event loop (net/proxy.c). Never returns. */
_noreturn_ void proxy_serve(struct proxy_params *pp);
