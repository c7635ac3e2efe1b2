/* SPDX-License-Identifier: MIT */
/* `sbx check`: what this host supports, tried for real rather than guessed from versions. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../launch/cgroup.h"
#include "../launch/launch.h"
#include "../net/proxy.h"
#include "../sandbox/seccomp.h"
#include "../shared/syscalls.h"
#include "../shared/util.h"
#include "args.h"

struct feature {
        const char *name;
        bool available;
        bool required; /* a default create needs it */
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
                int r = session_spawn(&c, NULL, &sp, &e);
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

static void check_syscalls(struct feature *pidfd, struct feature *openat2)
{
        int fd = sys_pidfd_open(getpid(), 0);
        pidfd->available = fd >= 0;
        snprintf(pidfd->detail, sizeof(pidfd->detail), "%s",
                 fd >= 0 ? "pidfd_open works" : "pidfd_open failed (Linux 5.3+ needed)");
        if (fd >= 0)
                close(fd);
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
        fd = sys_openat2(AT_FDCWD, "/", &how);
        openat2->available = fd >= 0;
        snprintf(openat2->detail, sizeof(openat2->detail), "%s",
                 fd >= 0 ? "openat2 works (not required: file commands run inside the session)"
                         : "openat2 missing (not required)");
        if (fd >= 0)
                close(fd);
}

/*
 * One row per limit: which cgroup hierarchy enforces it here. Required when a default create
 * (built-in defaults, config files, SBX_* variables) asks for the limit: it then needs it.
 */
static void check_cgroups(struct feature *f)
{
        struct sbx_config c;
        struct sbx_error e = {0};
        config_init_defaults(&c);
        if (config_load(&c, NULL, &e) < 0) {
                config_free(&c);
                config_init_defaults(&c);
        }
        const bool asked[CG_NCTRL] = {c.memory_bytes != 0, c.pids != 0, c.cpus_milli != 0};
        for (int k = 0; k < CG_NCTRL; k++) {
                struct cgroup_check r;
                cgroup_check_controller((enum cg_ctrl)k, &r);
                f[k].available = r.available;
                f[k].required = asked[k];
                snprintf(f[k].detail, sizeof(f[k].detail), "%s%s", r.detail,
                         asked[k] ? "" : " (not needed: the limit is 'unlimited')");
        }
        struct cgroup_check kill;
        cgroup_check_kill(&kill);
        f[CG_NCTRL].available = kill.available;
        snprintf(f[CG_NCTRL].detail, sizeof(f[CG_NCTRL].detail), "%s", kill.detail);
        config_free(&c);
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--json"))
                        cli->json = true;
                else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                        return args_print_help("check");
                else if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        cli->config_file = argv[++i];
                else {
                        sbx_usage(&cli->err, "unexpected argument '%s'", argv[i]);
                        return cli_finish_error(cli, "check");
                }
        }
        if (args_check_config(cli) < 0)
                return cli_finish_error(cli, "check");
        struct feature fs[] = {
                {"session", false, true, ""},       {"seccomp-default", false, true, ""},
                {"seccomp-strict", false, false, ""}, {"pidfd", false, true, ""},
                {"openat2", false, false, ""},      {"cgroup-memory", false, true, ""},
                {"cgroup-pids", false, true, ""},   {"cgroup-cpu", false, true, ""},
                {"cgroup-kill", false, false, ""},
                {"proxy", false, false, ""},
        };
        check_session(&fs[0]);
        check_seccomp(&fs[1], SBX_SECCOMP_DEFAULT);
        check_seccomp(&fs[2], SBX_SECCOMP_STRICT);
        check_syscalls(&fs[3], &fs[4]);
        check_cgroups(&fs[5]);
        check_proxy(&fs[ARRAY_SIZE(fs) - 1]);

        bool ok = true;
        _cleanup_buf_ struct buf b = {0};
        if (cli->json)
                buf_puts(&b, "{\"features\":[");
        for (size_t i = 0; i < ARRAY_SIZE(fs); i++) {
                if (fs[i].required && !fs[i].available)
                        ok = false;
                if (cli->json) {
                        buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
                        json_cstr(&b, fs[i].name);
                        buf_printf(&b, ",\"available\":%s,\"required\":%s,\"detail\":",
                                   fs[i].available ? "true" : "false",
                                   fs[i].required ? "true" : "false");
                        json_cstr(&b, fs[i].detail);
                        buf_puts(&b, "}");
                } else
                        buf_printf(&b, "%-16s %-9s %s\n", fs[i].name,
                                   fs[i].available ? "yes" : "MISSING", fs[i].detail);
        }
        if (cli->json)
                buf_printf(&b, "],\"ok\":%s}\n", ok ? "true" : "false");
        if (cli_print(cli, &b))
                return cli_finish_error(cli, "check");
        return ok ? 0 : EXIT_UNSUPPORTED;
}
