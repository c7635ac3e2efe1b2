/* SPDX-License-Identifier: MIT */
/*
 * `sbx check`: what this host supports, tried for real rather than guessed from versions: one
 * row per feature (user namespaces, a whole default session, seccomp and every syscall ABI,
 * overlayfs in a user namespace, openat2, pidfd, idmapped mounts, each cgroup controller with
 * its hierarchy). Exit 0 when a default create would work, 4 when a feature it needs is missing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../launch/cgroup.h"
#include "../launch/kernel_check.h"
#include "../launch/launch.h"
#include "../launch/limits.h"
#include "../net/proxy.h"
#include "../sandbox/seccomp.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "args.h"

struct feature {
        const char *name;
        bool available;
        bool required;     /* a default create needs it */
        bool goes_without; /* a default limit that a default create goes without (and warns) */
        int cg_version;    /* cgroup rows: the hierarchy (1 or 2), 0 when none; -1 other rows */
        char path[4096];   /* cgroup rows: the cgroup sessions are made below */
        char detail[1100];
};

/* A default session, started and killed in a child so nothing of it stays with us. */
static void check_session(struct feature *f)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return;
        pid_t pid = fork();
        if (pid == 0) {
                struct sbx_config c;
                struct sbx_error e = {0};
                struct session_proc sp = SESSION_PROC_INIT;
                config_init_defaults(&c);
                int r = session_spawn(&c, NULL, -1, &sp, &e);
                session_kill(&sp);
                (void)write_all(p[1], r == 0 ? "" : e.message, r == 0 ? 0 : strlen(e.message));
                _exit(r == 0 ? 0 : 1);
        }
        close(p[1]);
        _cleanup_buf_ struct buf b = {0};
        (void)read_all(p[0], &b, 4096);
        close(p[0]);
        int st = 0;
        (void)waitpid(pid, &st, 0);
        f->available = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        snprintf(f->detail, sizeof(f->detail), "%s",
                 f->available ? "user, mount, pid, net, ipc, uts, cgroup namespaces; overlayfs "
                                "/usr; tmpfs layer; /proc; devpts; pivot_root"
                              : (b.data ? b.data : "failed"));
}

/* --net proxy: the proxy's socket can be made in a new network namespace (net/proxy.h). */
static void check_proxy(struct feature *f)
{
        f->available = proxy_check(f->detail, sizeof(f->detail)) == 0;
        if (f->available)
                snprintf(f->detail, sizeof(f->detail),
                         "--net proxy: HTTP(S) proxy on 127.0.0.1:%d inside the session, served "
                         "from the host",
                         PROXY_PORT);
}

static void check_seccomp(struct feature *f, enum sbx_seccomp_profile p)
{
        struct sbx_error e = {0};
        f->available = seccomp_check(p, &e) == 0;
        snprintf(f->detail, sizeof(f->detail), "%s", f->available ? "filter builds" : e.message);
}

/* A kernel_check probe into feature f. */
static void from_kernel(struct feature *f, void (*probe)(struct kernel_check *))
{
        struct kernel_check k;
        probe(&k);
        f->available = k.available;
        snprintf(f->detail, sizeof(f->detail), "%s", k.detail);
}

/*
 * One row per limit: which cgroup hierarchy enforces it here. Required when a default create
 * (built-in defaults, config files, SBX_* variables) asks for the limit itself, or is strict:
 * a built-in default that cannot be enforced only makes create warn and go without it.
 */
static void check_cgroups(const struct sbx_config *c, struct feature *f,
                          struct cgroup_check chk[CG_NCTRL], char *why, size_t why_n)
{
        const bool asked[CG_NCTRL] = {c->memory_bytes != 0, c->pids != 0, c->cpus_milli != 0};
        const enum sbx_origin origin[CG_NCTRL] = {c->memory_origin, c->pids_origin, c->cpus_origin};
        /* The scope a create would ask systemd for, asked for here too (this process moves into
         * it; systemd removes it when check ends): the rows then say what a create gets. */
        int d = cgroup_delegate(c, false, why, why_n);
        if (d >= 0)
                why[0] = '\0';
        for (int k = 0; k < CG_NCTRL; k++) {
                struct cgroup_check *r = &chk[k];
                cgroup_check_controller((enum cg_ctrl)k, r);
                bool dflt = origin[k] == SBX_ORIGIN_DEFAULT && !c->strict_limits;
                f[k].available = r->available;
                f[k].required = asked[k] && !dflt;
                f[k].goes_without = asked[k] && dflt && !r->available;
                f[k].cg_version = r->version;
                snprintf(f[k].path, sizeof(f[k].path), "%s", r->path);
                snprintf(f[k].detail, sizeof(f[k].detail), "%s%s%s%s", r->detail,
                         d > 0 ? "; a transient systemd scope with Delegate=yes, which sbx asks "
                                 "the user manager for (as create and run do)"
                               : "",
                         d < 0 && !r->available ? "; no delegated systemd scope: " : "",
                         d < 0 && !r->available ? why : "");
                if (asked[k] && !r->available && dflt)
                        snprintf(f[k].detail + strlen(f[k].detail),
                                 sizeof(f[k].detail) - strlen(f[k].detail), "%s",
                                 "; a default create goes without this default limit, and warns");
                else if (!asked[k])
                        snprintf(f[k].detail + strlen(f[k].detail),
                                 sizeof(f[k].detail) - strlen(f[k].detail), "%s",
                                 " (not needed: the limit is 'unlimited')");
        }
        struct cgroup_check kill;
        cgroup_check_kill(&kill);
        f[CG_NCTRL].available = kill.available;
        f[CG_NCTRL].cg_version = kill.version;
        snprintf(f[CG_NCTRL].path, sizeof(f[CG_NCTRL].path), "%s", kill.path);
        snprintf(f[CG_NCTRL].detail, sizeof(f[CG_NCTRL].detail), "%s", kill.detail);
}

/* The last line: what works for this user here, and the first fix. */
static void verdict(const struct feature *fs, size_t n, const struct limits_report *lr, char *out,
                    size_t len)
{
        unsigned uid = (unsigned)getuid();
        /* a failed session row carries the host's refusal: its cause and its fix */
        for (size_t i = 0; i < n; i++)
                if (!fs[i].available && !strcmp(fs[i].name, "session")) {
                        snprintf(out, len, "no sessions for uid %u here: %s", uid, fs[i].detail);
                        return;
                }
        for (size_t i = 0; i < n; i++)
                if (fs[i].required && !fs[i].available) {
                        snprintf(out, len, "no sessions for uid %u here: %s: %s", uid, fs[i].name,
                                 fs[i].detail);
                        return;
                }
        char w[1024];
        if (limits_warning(lr, w, sizeof(w)))
                snprintf(out, len, "sessions work for uid %u here, but %s", uid, w);
        else
                snprintf(out, len, "sessions work for uid %u here, with every limit enforced", uid);
}

static void print_json(struct buf *b, const struct feature *fs, size_t n, bool ok,
                       const struct limits_report *lr, const char *verdict_text)
{
        buf_puts(b, "{\"features\":[");
        for (size_t i = 0; i < n; i++) {
                buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
                json_cstr(b, fs[i].name);
                buf_printf(b, ",\"available\":%s,\"required\":%s,\"detail\":",
                           fs[i].available ? "true" : "false", fs[i].required ? "true" : "false");
                json_cstr(b, fs[i].detail);
                if (fs[i].cg_version >= 0) {
                        if (fs[i].cg_version > 0)
                                buf_printf(b, ",\"hierarchy\":\"v%d\",\"path\":", fs[i].cg_version);
                        else
                                buf_puts(b, ",\"hierarchy\":null,\"path\":");
                        if (fs[i].path[0])
                                json_cstr(b, fs[i].path);
                        else
                                buf_puts(b, "null");
                }
                buf_puts(b, "}");
        }
        buf_printf(b, "],\"ok\":%s", ok ? "true" : "false");
        limits_json(b, lr);
        buf_puts(b, ",\"verdict\":");
        json_cstr(b, verdict_text);
        buf_puts(b, "}\n");
}

/* Names of the seccomp ABI rows ("seccomp-arch-<abi>"), kept alive for the rows. */
struct arch_names {
        char name[4][32];
};

/* The rows, in the order they print. Returns how many were filled. */
static size_t run_checks(const struct sbx_config *c, struct feature *fs, size_t max,
                         struct arch_names *an, struct cgroup_check chk[CG_NCTRL], char *why,
                         size_t why_n)
{
        size_t n = 0;
#define ROW(nm, req)                                                                               \
        (fs[n] = (struct feature){.name = (nm), .required = (req), .cg_version = -1}, &fs[n++])
        from_kernel(ROW("userns", true), kernel_check_userns);
        check_session(ROW("session", true));
        check_seccomp(ROW("seccomp-default", c->seccomp == SBX_SECCOMP_DEFAULT),
                      SBX_SECCOMP_DEFAULT);
        check_seccomp(ROW("seccomp-strict", c->seccomp == SBX_SECCOMP_STRICT), SBX_SECCOMP_STRICT);
        /* every ABI the kernel runs is covered by the filter a default create loads */
        const char *abi[4];
        struct kernel_check k[4];
        size_t na = kernel_check_seccomp_arches(abi, k, ARRAY_SIZE(k));
        for (size_t i = 0; i < na && n < max; i++) {
                snprintf(an->name[i], sizeof(an->name[i]), "seccomp-arch-%s", abi[i]);
                struct feature *f = ROW(an->name[i], c->seccomp != SBX_SECCOMP_UNCONFINED);
                f->available = k[i].available;
                snprintf(f->detail, sizeof(f->detail), "%s", k[i].detail);
        }
        from_kernel(ROW("overlayfs-userns", !c->read_only), kernel_check_overlay_userns);
        from_kernel(ROW("openat2", false), kernel_check_openat2);
        from_kernel(ROW("pidfd", true), kernel_check_pidfd);
        from_kernel(ROW("idmapped-mounts", false), kernel_check_idmap);
        struct feature *cg = ROW("cgroup-memory", true);
        ROW("cgroup-pids", true);
        ROW("cgroup-cpu", true);
        ROW("cgroup-kill", false);
        for (size_t i = 0; i <= CG_NCTRL; i++)
                cg[i].cg_version = 0;
        check_cgroups(c, cg, chk, why, why_n);
        check_proxy(ROW("proxy", c->net == SBX_NET_PROXY));
#undef ROW
        return n;
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--json"))
                        cli->json = true;
                else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                        return args_print_help(cli, "check");
                else if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        cli->config_file = argv[++i];
                else {
                        sbx_usage(&cli->err, "unexpected argument '%s'", argv[i]);
                        return cli_finish_error(cli, "check");
                }
        }
        /* The configuration a default create would use decides what is required; a bad
         * one is the same usage error (exit 2) that create would give. */
        struct sbx_config c;
        config_init_defaults(&c);
        if (config_load(&c, cli->config_file, &cli->err) < 0) {
                config_free(&c);
                return cli_finish_error(cli, "check");
        }
        struct feature fs[17]; /* 13 rows + one per syscall ABI (at most 4) */
        struct arch_names an;
        struct cgroup_check chk[CG_NCTRL];
        struct limits_report lr;
        char why[sizeof(lr.delegation)];
        size_t n = run_checks(&c, fs, ARRAY_SIZE(fs), &an, chk, why, sizeof(why));
        limits_from_check(&c, chk, &lr);
        snprintf(lr.delegation, sizeof(lr.delegation), "%s", why);
        config_free(&c);

        bool ok = true;
        for (size_t i = 0; i < n; i++)
                if (fs[i].required && !fs[i].available)
                        ok = false;
        char v[1600];
        verdict(fs, n, &lr, v, sizeof(v));
        _cleanup_buf_ struct buf b = {0};
        if (cli->json)
                print_json(&b, fs, n, ok, &lr, v);
        else
                for (size_t i = 0; i < n; i++)
                        buf_printf(&b, "%-20s %-7s %s%s\n", fs[i].name,
                                   fs[i].available ? "yes" : "MISSING", fs[i].detail,
                                   fs[i].available || fs[i].required || fs[i].goes_without
                                       ? ""
                                       : " (optional: a default create does not need it)");
        if (!cli->json)
                buf_printf(&b, "verdict: %s\n", v);
        if (cli_print(cli, &b))
                return cli_finish_error(cli, "check");
        return ok ? 0 : EXIT_UNSUPPORTED;
}
