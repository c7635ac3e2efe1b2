/* SPDX-License-Identifier: MIT */
/*
 * Delegation from systemd (docs/design/cgroups.md): an unprivileged sbx whose own cgroup v2 is
 * not writable (a login shell's session scope, a service) asks the systemd user manager, over
 * the user bus, for a transient scope with Delegate=yes holding this process, as podman and
 * crun do. The scope's cgroup then belongs to the user, and cgroup_prepare makes the sessions'
 * cgroups in it as in any delegated cgroup. systemd stops and removes the scope when its last
 * process is gone (CollectMode=inactive-or-failed also when one failed): sbx never removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../session/id.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup-internal.h"
#include "sdbus_lib.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define CALL_TIMEOUT_USEC (10ULL * 1000 * 1000)
#define JOB_TIMEOUT_MS 10000

/* The library, once loaded (sdbus_lib_load keeps it for the life of the process). */
static const struct sdbus_lib *L;

static void bus_closep(sd_bus **b)
{
        if (*b)
                (void)L->flush_close_unref(*b);
}

static void msg_unrefp(sd_bus_message **m)
{
        if (*m)
                (void)L->message_unref(*m);
}

/* Which bus sd_bus_open_user tries, for the reason of a failure. */
static void bus_address(char *out, size_t n)
{
        const char *a = getenv("DBUS_SESSION_BUS_ADDRESS");
        const char *rt = getenv("XDG_RUNTIME_DIR");
        if (a && a[0])
                snprintf(out, n, "'%s' ($DBUS_SESSION_BUS_ADDRESS)", a);
        else if (rt && rt[0])
                snprintf(out, n, "'%s/bus'", rt);
        else
                snprintf(out, n, "none ($DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR unset)");
}

/* The user manager's own socket, without a bus daemon, as systemctl --user and systemd-run
 * --user use it: a host without dbus-user-session has no user bus, but has this. */
static int private_open(sd_bus **ret)
{
        const char *rt = getenv("XDG_RUNTIME_DIR");
        char addr[PATH_MAX + 16];
        if (!rt || rt[0] != '/')
                return -ENXIO;
        snprintf(addr, sizeof(addr), "unix:path=%s/systemd/private", rt);
        sd_bus *b = NULL;
        int r = L->new_bus(&b);
        if (r >= 0)
                r = L->set_address(b, addr);
        if (r >= 0)
                r = L->start(b);
        if (r < 0) {
                if (b)
                        (void)L->flush_close_unref(b);
                return r;
        }
        *ret = b;
        return 0;
}

/* The user bus, else the user manager's private socket. */
static int bus_open(sd_bus **ret, char *why, size_t n)
{
        char lib_why[200];
        if (!L && !(L = sdbus_lib_load(lib_why, sizeof(lib_why)))) {
                snprintf(why, n, "no libsystemd to speak D-Bus with (%s)", lib_why);
                return -ENOSYS;
        }
        int r = L->open_user(ret);
        if (r < 0 && private_open(ret) == 0)
                return 0;
        if (r < 0) {
                char addr[160];
                bus_address(addr, sizeof(addr));
                snprintf(why, n, "no systemd user bus: %s: %s; no user manager socket either", addr,
                         strerror(-r));
        }
        return r;
}

/* A call to the manager; on failure why holds the manager's error (or the errno). */
static int manager_call(sd_bus *bus, sd_bus_message *m, sd_bus_message **reply, const char *what,
                        char *why, size_t n)
{
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r = L->call(bus, m, CALL_TIMEOUT_USEC, &err, reply);
        if (r < 0)
                snprintf(why, n, "the systemd user manager refused %s: %s", what,
                         err.message ? err.message : strerror(-r));
        L->error_free(&err);
        return r;
}

struct job_wait {
        char path[256]; /* the job's object path; "" until the call returned */
        char result[32];
        bool done;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        struct job_wait *w = userdata;
        uint32_t id;
        const char *path, *unit, *result;
        (void)ret_error;
        if (L->message_read(m, "uoss", &id, &path, &unit, &result) >= 0 && w->path[0] &&
            strcmp(path, w->path) == 0) {
                snprintf(w->result, sizeof(w->result), "%s", result);
                w->done = true;
        }
        return 0;
}

/* Dispatch the bus until the job of w is removed, for at most JOB_TIMEOUT_MS. */
static int job_wait(sd_bus *bus, struct job_wait *w)
{
        uint64_t end = now_monotonic_ms() + JOB_TIMEOUT_MS;
        while (!w->done) {
                int r = L->process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                uint64_t now = now_monotonic_ms();
                if (now >= end)
                        return -ETIMEDOUT;
                if ((r = L->wait(bus, (end - now) * 1000)) < 0)
                        return r;
        }
        return 0;
}

/* The StartTransientUnit call for a scope of this process. */
static int scope_message(sd_bus *bus, const char *unit, sd_bus_message **ret)
{
        char desc[96];
        snprintf(desc, sizeof(desc), "sbx sessions of process %d", (int)getpid());
        sd_bus_message *m = NULL;
        int r =
            L->message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = L->message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = L->message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = L->message_append(m, "(sv)", "Description", "s", desc);
        if (r >= 0)
                r = L->message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t)getpid());
        if (r >= 0)
                r = L->message_append(m, "(sv)", "Delegate", "b", 1);
        if (r >= 0)
                r = L->message_append(m, "(sv)", "CollectMode", "s", "inactive-or-failed");
        if (r >= 0)
                r = L->message_close_container(m);
        if (r >= 0)
                r = L->message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                if (m)
                        (void)L->message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* Whether /proc/self/cgroup's v2 path has the component (a unit name): this process is in it. */
static bool self_in(const char *component)
{
        _cleanup_buf_ struct buf b = {0};
        if (read_file_at(AT_FDCWD, "/proc/self/cgroup", &b, 65536) < 0 || !b.data)
                return false;
        const char *v2 = strstr(b.data, "0::");
        if (!v2 || (v2 != b.data && v2[-1] != '\n'))
                return false;
        size_t len = strlen(component);
        for (const char *p = v2 + 3; (p = strstr(p, component)); p += len)
                if (p[-1] == '/' && (p[len] == '/' || p[len] == '\n' || p[len] == '\0'))
                        return true;
        return false;
}

int cg_delegate_scope(char *unit, size_t unit_n, char *why, size_t n)
{
        char id[SESSION_ID_LEN + 1];
        int r = session_id_generate(id);
        if (r < 0) {
                snprintf(why, n, "no random scope name: %s", strerror(-r));
                return r;
        }
        snprintf(unit, unit_n, "sbx-%s.scope", id + 3); /* "sb_" + hex: the hex */
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        if ((r = bus_open(&bus, why, n)) < 0)
                return r;
        struct job_wait w = {0};
        r = L->match_signal(bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed,
                            &w);
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        if (r >= 0)
                r = scope_message(bus, unit, &m);
        if (r < 0) {
                snprintf(why, n, "cannot build the D-Bus call: %s", strerror(-r));
                return r;
        }
        if ((r = manager_call(bus, m, &reply, "StartTransientUnit", why, n)) < 0)
                return r;
        const char *job = NULL;
        if ((r = L->message_read(reply, "o", &job)) < 0) {
                snprintf(why, n, "StartTransientUnit's reply: %s", strerror(-r));
                return r;
        }
        snprintf(w.path, sizeof(w.path), "%s", job);
        if ((r = job_wait(bus, &w)) < 0) {
                snprintf(why, n, "waiting for the job of scope '%s': %s", unit, strerror(-r));
                return r;
        }
        if (strcmp(w.result, "done") != 0) {
                snprintf(why, n, "the job that starts scope '%s' ended '%s'", unit, w.result);
                return -EIO;
        }
        if (!self_in(unit)) {
                snprintf(why, n, "scope '%s' started, but sbx is not in it", unit);
                return -ESRCH;
        }
        return 0;
}

int cg_delegate_join(const char *unit, const char *subcgroup, char *why, size_t n)
{
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        int r = bus_open(&bus, why, n);
        if (r < 0)
                return r;
        _cleanup_(msg_unrefp) sd_bus_message *m = NULL;
        r = L->message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
                                       "AttachProcessesToUnit");
        if (r >= 0)
                r = L->message_append(m, "ssau", unit, subcgroup, 1, (uint32_t)getpid());
        if (r < 0) {
                snprintf(why, n, "cannot build the D-Bus call: %s", strerror(-r));
                return r;
        }
        if ((r = manager_call(bus, m, NULL, "AttachProcessesToUnit", why, n)) < 0)
                return r;
        if (!self_in(unit)) {
                snprintf(why, n, "moved into scope '%s', but sbx is not in it", unit);
                return -ESRCH;
        }
        return 0;
}

/* Whether a create with c, here, would ask for a scope: see cgroup.h. */
static bool wants_scope(const struct sbx_config *c, const struct cg_host *h, bool even_writable)
{
        const bool asked[CG_NCTRL] = {c->memory_bytes != 0, c->pids != 0, c->cpus_milli != 0};
        bool v1_for_all = true;
        for (int k = 0; k < CG_NCTRL; k++)
                if (asked[k] && !h->v1_own[k][0])
                        v1_for_all = false;
        return geteuid() != 0 && cgroup_limits_wanted(c) && h->v2_own[0] && !h->v2_is_root &&
               !v1_for_all && (even_writable || access(h->v2_own, W_OK) != 0);
}

int cgroup_delegate(const struct sbx_config *c, bool even_writable, char *why, size_t n)
{
        struct cg_host h;
        char unit[64];
        why[0] = '\0';
        /* wants_scope's cheap answers first: a create as root reads no mountinfo here */
        if (geteuid() == 0 || !cgroup_limits_wanted(c) || cg_host_probe(&h) < 0 ||
            !wants_scope(c, &h, even_writable))
                return 0;
        int r = cg_delegate_scope(unit, sizeof(unit), why, n);
        return r < 0 ? r : 1;
}

int cg_delegate_enter_session(const char *session_cgroup, char *why, size_t n)
{
        /* <mount>/.../sbx-<hex>.scope/sbx/<id>: the scope is two levels up */
        char scope[PATH_MAX];
        snprintf(scope, sizeof(scope), "%s", session_cgroup);
        for (int up = 0; up < 2; up++) {
                char *s = strrchr(scope, '/');
                if (!s)
                        return 0;
                *s = '\0';
        }
        const char *unit = strrchr(scope, '/');
        unit = unit ? unit + 1 : scope;
        size_t len = strlen(unit);
        if (geteuid() == 0 || strncmp(unit, "sbx-", 4) != 0 || len < 10 ||
            strcmp(unit + len - 6, ".scope") != 0 || self_in(unit))
                return 0;
        return cg_delegate_join(unit, "/" SUPERVISOR_LEAF, why, n);
}
