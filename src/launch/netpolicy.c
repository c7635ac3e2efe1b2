/* SPDX-License-Identifier: MIT */
/*
 * `sbx net`: a live session's allow list. The supervisor holds the list in force and is the
 * only one to change it: it checks the entry again, sends the whole new list to the proxy
 * (net/policy.c), which judges every later request by it, and writes a "net_policy" audit
 * record. "deny HOST" removes an entry that "allow" (or --allow-host) added; anything not in
 * the list is refused already.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "../net/proxy.h"
#include "../session/audit.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "launch.h"

#define NET_MAX_ENTRIES 256
#define NET_REPLY_MAX (PROXY_POLICY_MAX + 4096)

static size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

static ssize_t strv_find(char *const *v, const char *s)
{
        for (size_t i = 0; v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return (ssize_t)i;
        return -1;
}

/* A copy of v with s added (add) or entry i removed; NULL on ENOMEM. */
static char **strv_edit(char *const *v, const char *add, ssize_t remove)
{
        size_t n = strv_len(v);
        char **out = calloc(n + 2, sizeof(char *));
        if (!out)
                return NULL;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if ((ssize_t)i != remove && !(out[k++] = strdup(v[i])))
                        goto fail;
        if (add && !(out[k] = strdup(add)))
                goto fail;
        return out;
fail:
        strv_freep(&out);
        return NULL;
}

static void audit_policy(int auditfd, const char *id, const char *action, const char *host,
                         char *const *allow)
{
        _cleanup_buf_ struct buf b = {0};
        audit_begin(&b, id, "net_policy");
        audit_str(&b, "action", action);
        audit_str(&b, "host", host);
        audit_strv(&b, "allow", allow);
        (void)audit_commit(auditfd, &b);
}

int provision_window(const struct sbx_config *c, char ***ret)
{
        *ret = NULL;
        if (!c->packages || !c->packages[0] || c->net == SBX_NET_HOST)
                return 0;
        return package_window(c, ret);
}

void provision_window_audit(int auditfd, const char *id, const char *action, char *const *allow)
{
        audit_policy(auditfd, id, action, NULL, allow);
}

void provision_window_close(struct proxy_handle *h, enum sbx_net_mode mode, char *const *allow,
                            int auditfd, const char *id)
{
        if (h->stop_fd < 0)
                return;
        /* a proxy that cannot take the narrower list goes: egress fails closed */
        if (proxy_window_close(h, mode, allow) < 0)
                proxy_stop(h);
        audit_policy(auditfd, id, "provision_close", NULL,
                     mode == SBX_NET_PROXY && h->stop_fd >= 0 ? allow : NULL);
}

static void reply_list(char *const *allow, const char *mode, struct buf *reply)
{
        buf_printf(reply, "OK %s", mode);
        for (size_t i = 0; allow && allow[i]; i++)
                buf_printf(reply, "\n%s", allow[i]);
}

int netpolicy_init(struct netpolicy *np, char *const *allow)
{
        np->allow = strv_edit(allow, NULL, -1);
        return np->allow ? 0 : -ENOMEM;
}

void netpolicy_handle(struct netpolicy *np, const char *req, struct buf *reply)
{
        if (strcmp(req, "NET SHOW") == 0) {
                reply_list(np->allow, np->mode, reply);
                return;
        }
        bool allow = strncmp(req, "NET ALLOW ", 10) == 0;
        if (!allow && strncmp(req, "NET DENY ", 9) != 0) {
                buf_puts(reply, "ERR unknown request");
                return;
        }
        if (np->proxy_fd < 0) {
                buf_puts(reply, "ERR mode");
                return;
        }
        _cleanup_free_ char *host = NULL;
        if (allow_entry_check(req + (allow ? 10 : 9), &host)) {
                buf_puts(reply, "ERR invalid");
                return;
        }
        ssize_t at = strv_find(np->allow, host);
        if (allow && at >= 0) {
                buf_puts(reply, "ERR exists");
                return;
        }
        if (!allow && at < 0) {
                buf_puts(reply, "ERR missing");
                return;
        }
        if (allow && strv_len(np->allow) >= NET_MAX_ENTRIES) {
                buf_puts(reply, "ERR limit");
                return;
        }
        _cleanup_strv_ char **next = strv_edit(np->allow, allow ? host : NULL, allow ? -1 : at);
        int r = next ? proxy_policy_send(np->proxy_fd, next) : -ENOMEM;
        if (r < 0) {
                buf_printf(reply, "ERR %s", r == -E2BIG ? "limit" : "failed");
                return;
        }
        strv_freep(&np->allow);
        np->allow = TAKE_PTR(next);
        audit_policy(np->auditfd, np->id, allow ? "allow" : "deny", host, np->allow);
        reply_list(np->allow, np->mode, reply);
}

static int net_error(const char *reply, const char *id_or_name, const char *host,
                     struct sbx_error *e)
{
        const char *w = reply + 4;
        if (strcmp(w, "mode") == 0)
                return sbx_unsupported(e, 0,
                                       "session '%s' has no egress proxy (it was created without "
                                       "--net proxy or --allow-host): its network cannot be "
                                       "opened later",
                                       id_or_name);
        if (strcmp(w, "invalid") == 0)
                return sbx_usage(e, "invalid host '%s'", host);
        if (strcmp(w, "exists") == 0)
                return sbx_fail(e, EXIT_FAILED, "exists", 0,
                                "'%s' is already in the allow list of '%s'", host, id_or_name);
        if (strcmp(w, "missing") == 0)
                return sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                "'%s' is not in the allow list of '%s' (see 'sbx net %s show')",
                                host, id_or_name, id_or_name);
        if (strcmp(w, "limit") == 0)
                return sbx_fail(e, EXIT_FAILED, "limit", 0,
                                "the allow list of '%s' is full (%d entries)", id_or_name,
                                NET_MAX_ENTRIES);
        return sbx_internal(e, 0, "failed to change the allow list of '%s'", id_or_name);
}

int session_net(const char *id_or_name, const char *action, const char *host, char **ret_mode,
                char ***ret_allow, struct sbx_error *e)
{
        char req[1024];
        _cleanup_free_ char *norm = NULL;
        if (host) {
                const char *why = allow_entry_check(host, &norm);
                if (why)
                        return sbx_usage(e, "invalid host '%s': %s", host, why);
        }
        snprintf(req, sizeof(req), "NET %s%s%s", action, host ? " " : "", host ? norm : "");
        _cleanup_close_ int sessfd = -1, ctl = -1;
        int r = control_open(id_or_name, 10, &sessfd, &ctl, e);
        if (r < 0)
                return r;
        _cleanup_free_ char *reply = malloc(NET_REPLY_MAX);
        if (!reply)
                return -ENOMEM;
        if ((r = control_call(ctl, req, reply, NET_REPLY_MAX, NULL, 0)) < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", -r,
                                "no such session '%s' (it has ended)", id_or_name);
        if (strncmp(reply, "ERR ", 4) == 0)
                return net_error(reply, id_or_name, norm ? norm : "", e);
        if (strncmp(reply, "OK ", 3) != 0)
                return sbx_internal(e, 0, "unexpected answer from the supervisor");
        /* "OK <mode>\nentry\nentry..." */
        size_t n = 0;
        for (char *p = reply; *p; p++)
                n += *p == '\n';
        _cleanup_strv_ char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        char *save = NULL, *line = strtok_r(reply, "\n", &save);
        _cleanup_free_ char *mode = strdup(line + 3);
        if (!mode)
                return -ENOMEM;
        for (size_t k = 0; (line = strtok_r(NULL, "\n", &save)) && k < n; k++)
                if (!(v[k] = strdup(line)))
                        return -ENOMEM;
        *ret_allow = TAKE_PTR(v);
        *ret_mode = TAKE_PTR(mode);
        return 0;
}
