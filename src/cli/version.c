/* SPDX-License-Identifier: MIT */
/*
 * `sbx --version`: the version and the features of this build, asked from the libraries it
 * is linked with (their versions, PCRE2's JIT) and from how it was compiled (sanitizers).
 * What this host's kernel and cgroups allow is `sbx check`'s business.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <json-c/json.h>
#include <pcre2.h>
#include <stdio.h>

#include "sbx-config.h"
#include "cli.h"

struct feature {
        const char *name;
        bool on;
        char detail[64];
};

#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN true
#else
#define SBX_ASAN false
#endif

static size_t collect(struct feature *f)
{
        size_t n = 0;
        f[n++] = (struct feature){
            "seccomp", true,
            "profiles default strict unconfined, BPF from libseccomp " SBX_LIBSECCOMP_VERSION};
        f[n++] = (struct feature){"namespaces", true, "user mount pid net ipc uts cgroup"};
        f[n++] = (struct feature){"capabilities", true, "every set emptied, securebits locked"};
        f[n++] = (struct feature){"cgroup-v2", true, "memory pids cpu, cgroup.kill"};
        f[n++] = (struct feature){"cgroup-v1", true, "memory pids cpu"};
        uint32_t jit = 0;
        char pv[32] = "";
        (void)pcre2_config(PCRE2_CONFIG_JIT, &jit);
        (void)pcre2_config(PCRE2_CONFIG_VERSION, pv);
        f[n] = (struct feature){"pcre2", true, ""};
        snprintf(f[n++].detail, sizeof(f[0].detail), "%s", pv);
        f[n++] = (struct feature){"pcre2-jit", jit != 0, ""};
        f[n] = (struct feature){"mcp", true, ""};
        snprintf(f[n++].detail, sizeof(f[0].detail), "json-c %s, protocol 2025-06-18",
                 json_c_version());
        f[n++] = (struct feature){"asan", SBX_ASAN, ""};
        return n;
}

int cli_print_version(struct cli *cli)
{
        struct feature f[16];
        size_t n = collect(f);
        _cleanup_buf_ struct buf b = {0};
        if (cli->json) {
                buf_puts(&b, "{\"version\":");
                json_cstr(&b, SBX_VERSION);
                buf_puts(&b, ",\"features\":{");
                for (size_t i = 0; i < n; i++) {
                        buf_puts(&b, i ? "," : "");
                        json_cstr(&b, f[i].name);
                        buf_printf(&b, ":{\"enabled\":%s,\"detail\":", f[i].on ? "true" : "false");
                        json_cstr(&b, f[i].detail);
                        buf_puts(&b, "}");
                }
                buf_puts(&b, "}}\n");
        } else {
                buf_printf(&b, "sbx %s\nfeatures:", SBX_VERSION);
                for (size_t i = 0; i < n; i++)
                        buf_printf(&b, " %c%s", f[i].on ? '+' : '-', f[i].name);
                buf_puts(&b, "\n");
                for (size_t i = 0; i < n; i++)
                        if (f[i].on && f[i].detail[0])
                                buf_printf(&b, "  %-13s %s\n", f[i].name, f[i].detail);
        }
        return cli_print(cli, &b);
}
