/* SPDX-License-Identifier: MIT */
#include "provision.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "../net/proxy.h"
#include "../session/runtime.h"
#include "../session/state.h"
#include "shared/macros.h"
#include "shared/util.h"

#define PROVISION_MAX_OUTPUT (1u << 20)

/* What the forked exec client sends back, followed by the captured output. */
struct step_report {
        int r;
        int exit_code;
        bool timed_out;
        struct sbx_error exec_error; /* .code points at a static literal: same binary */
        struct sbx_error error;
};

/*
 * Joining a session moves the calling process into its namespaces for good, and this process
 * still has to run the command itself (run) or destroy the session on failure (create): each
 * step joins from a forked child, which reports back over a pipe.
 */
/* Read everything from fd up to max bytes; meanwhile what is shown as running on pr. */
static int read_with_progress(int fd, struct buf *b, size_t max, struct cli_progress *pr,
                              const char *what)
{
        uint64_t start = now_monotonic_ms();
        char chunk[16384];
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int k = pr ? poll(&p, 1, 250) : 1;
                if (k < 0 && errno != EINTR)
                        return negerrno();
                if (k <= 0) {
                        cli_progress_tick(pr, what, now_monotonic_ms() - start);
                        continue;
                }
                ssize_t n = RETRY_EINTR(read(fd, chunk, sizeof(chunk)));
                if (n < 0)
                        return negerrno();
                if (n == 0)
                        return 0;
                if (b->len + (size_t)n > max)
                        return -EFBIG;
                if (buf_append(b, chunk, (size_t)n) < 0)
                        return -ENOMEM;
                if (pr)
                        cli_progress_tick(pr, what, now_monotonic_ms() - start);
        }
}

static int exec_forked(provision_exec_fn run, void *ctx, const struct exec_request *rq,
                       struct exec_result *res, struct cli_progress *pr, const char *what,
                       struct sbx_error *e)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return sbx_internal(e, errno, "failed to create a pipe");
        _cleanup_close_ int rd = p[0];
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                close(p[1]);
                return sbx_internal(e, errno, "failed to fork");
        }
        if (pid == 0) {
                closep(&rd);
                /* A step never outlives the create (or run) it works for: killed, that one
                 * takes its session down (the #4 handshake, a copy of which we hold, must close).
                 */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(1);
                struct step_report rep = {0};
                struct exec_result cr = {0};
                rep.r = run(ctx, rq, &cr, &rep.error);
                rep.exit_code = cr.exit_code;
                rep.timed_out = cr.timed_out;
                rep.exec_error = cr.exec_error;
                if (write_all(p[1], &rep, sizeof(rep)) < 0 ||
                    (cr.output.len && write_all(p[1], cr.output.data, cr.output.len) < 0))
                        _exit(1);
                _exit(0);
        }
        close(p[1]);
        _cleanup_buf_ struct buf b = {0};
        int r =
            read_with_progress(rd, &b, sizeof(struct step_report) + PROVISION_MAX_OUTPUT, pr, what);
        int status;
        (void)RETRY_EINTR(waitpid(pid, &status, 0));
        struct step_report rep;
        if (r < 0 || b.len < sizeof(rep))
                return sbx_internal(e, r < 0 ? -r : EPIPE, "the provisioning exec failed");
        memcpy(&rep, b.data, sizeof(rep));
        res->exit_code = rep.exit_code;
        res->timed_out = rep.timed_out;
        res->exec_error = rep.exec_error;
        if (buf_append(&res->output, b.data + sizeof(rep), b.len - sizeof(rep)) < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        if (rep.r < 0)
                *e = rep.error;
        return rep.r;
}

/* The line of out that says what went wrong: the last one starting "ERROR", else the last
 * non-blank one; at most 300 bytes, cut at a blank. */
static void last_line(const char *out, size_t len, char *line, size_t n)
{
        const char *best = NULL, *last = NULL;
        size_t best_len = 0, last_len = 0;
        for (size_t i = 0; i < len;) {
                size_t j = i;
                while (j < len && out[j] != '\n' && out[j] != '\r')
                        j++;
                size_t k = i;
                while (k < j && (out[k] == ' ' || out[k] == '\t'))
                        k++;
                if (k < j) {
                        last = out + k;
                        last_len = j - k;
                        if (j - k >= 5 && strncmp(out + k, "ERROR", 5) == 0) {
                                best = last;
                                best_len = last_len;
                        }
                }
                i = j + 1;
        }
        if (!best) {
                best = last;
                best_len = last_len;
        }
        size_t max = n > 300 ? 300 : n - 1;
        if (best_len > max) {
                size_t cut = max - 3;
                while (cut > max / 2 && best[cut] != ' ')
                        cut--;
                snprintf(line, n, "%.*s...", (int)cut, best);
                return;
        }
        snprintf(line, n, "%.*s", (int)best_len, best ? best : "");
}

static int run_step(const char *what, const char *code, char **argv, char **env,
                    provision_exec_fn run, void *ctx, struct cli_progress *pr,
                    struct buf *ret_output, struct sbx_error *e)
{
        struct exec_request rq = {
            .argv = argv, .env_add = env, .capture = true, .max_output = PROVISION_MAX_OUTPUT};
        struct exec_result res = {0};
        int r = exec_forked(run, ctx, &rq, &res, pr, what, e);
        cli_progress_end(pr);
        if (r < 0 && !res.timed_out) {
                buf_freep(&res.output);
                return r;
        }
        if (res.exit_code == 0 && !res.timed_out) {
                buf_freep(&res.output);
                return 0;
        }
        char line[320];
        last_line(res.output.data, res.output.len, line, sizeof(line));
        if (res.timed_out)
                r = sbx_fail(e, EXIT_FAILED, "limit", 0,
                             "%s timed out (the session's exec timeout, --timeout)%s%s", what,
                             line[0] ? ": " : "", line);
        else if (res.exec_error.exit_code)
                r = sbx_fail(e, EXIT_FAILED, "not_found", 0, "%s could not start: %s", what,
                             res.exec_error.message);
        else
                r = sbx_fail(e, EXIT_FAILED, code, 0, "%s failed (exit %d)%s%s", what,
                             res.exit_code, line[0] ? ": " : "", line);
        if (ret_output)
                *ret_output = res.output;
        else
                buf_freep(&res.output);
        return r;
}

/* Asks the index for its root page, through the session's proxy, with a short timeout: the
 * one line it prints on failure is the reason. Any answer of the index itself counts as
 * reached; so does a TLS handshake that got as far as the certificate. */
static const char probe_py[] =
    "import ssl, sys, urllib.error as ue, urllib.request as u\n"
    "try:\n"
    "    u.urlopen(sys.argv[1], timeout=10).read(1)\n"
    "except ue.HTTPError as x:\n"
    "    if x.code in (403, 502, 503, 504):\n" /* the proxy's refusals and failures */
    "        print(x.code, x.reason)\n"
    "        sys.exit(3)\n"
    "except Exception as x:\n"
    "    r = getattr(x, 'reason', None) or x\n"
    "    if isinstance(r, ssl.SSLError):\n" /* reached: pip judges the certificate itself */
    "        sys.exit(0)\n"
    "    print(r)\n"
    "    sys.exit(3)\n";

static bool env_has(char *const *env, const char *key)
{
        size_t n = strlen(key);
        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], key, n) == 0 && env[i][n] == '=')
                        return true;
        return false;
}

/* An index that cannot be reached fails create in seconds, with its own code, before pip
 * would spend minutes on its retries. Not when the caller's pip uses no index. */
static int probe_index(const struct sbx_config *c, char **env, provision_exec_fn run, void *ctx,
                       struct cli_progress *pr, struct sbx_error *e)
{
        if (env_has(c->env, "PIP_NO_INDEX") || env_has(c->env, "PIP_INDEX_URL"))
                return 0;
        const char *url = package_index_url(c);
        _cleanup_free_ char *page = NULL;
        if (asprintf(&page, "%s%s", url, url[strlen(url) - 1] == '/' ? "" : "/") < 0)
                return sbx_internal(e, ENOMEM, "out of memory");
        char *argv[] = {"python3", "-c", (char *)probe_py, page, NULL};
        struct exec_request rq = {
            .argv = argv, .env_add = env, .capture = true, .max_output = 4096};
        struct exec_result res = {0};
        int r = exec_forked(run, ctx, &rq, &res, pr, "reaching the package index", e);
        cli_progress_end(pr);
        _cleanup_buf_ struct buf out = res.output;
        if (r < 0 || res.exec_error.exit_code || (res.exit_code == 0 && !res.timed_out))
                return r < 0 ? r : 0; /* no python3: pip's own step says so */
        char line[320];
        last_line(out.data, out.len, line, sizeof(line));
        return sbx_fail(e, EXIT_FAILED, "package_index_unreachable", 0,
                        "the package index '%s' cannot be reached from the session: %s", url,
                        res.timed_out ? "timed out"
                        : line[0]     ? line
                                      : "no answer");
}

/* The installer's environment on top of the session's: the proxy (a session without proxy
 * mode has one only while it is provisioned), the index, no prompts, few retries. */
static char **install_env(const struct sbx_config *c)
{
        _cleanup_strv_ char **pip = NULL;
        if (package_pip_env(c, &pip) < 0)
                return NULL;
        static char *const fixed[] = {"PIP_NO_INPUT=1", "PIP_RETRIES=1", "PIP_TIMEOUT=30",
                                      "PIP_NO_CACHE_DIR=1", NULL};
        static char *const proxied[] = {"HTTP_PROXY=" PROXY_URL, "HTTPS_PROXY=" PROXY_URL,
                                        "http_proxy=" PROXY_URL, "https_proxy=" PROXY_URL,
                                        /* an index on the host's loopback (a local mirror)
                                         * is reached through the proxy too */
                                        "NO_PROXY=", "no_proxy=", NULL};
        _cleanup_strv_ char **a = env_merge(fixed, pip);
        if (!a)
                return NULL;
        return env_merge(c->net == SBX_NET_HOST ? NULL : proxied, a);
}

int provision_packages(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                       struct cli_progress *pr, struct buf *ret_output, struct sbx_error *e)
{
        size_t n = 0;
        while (c->packages && c->packages[n])
                n++;
        if (!n)
                return 0;
        _cleanup_strv_ char **env = install_env(c);
        _cleanup_free_ char **argv = calloc(n + 8, sizeof(char *));
        if (!env || !argv)
                return sbx_internal(e, ENOMEM, "out of memory");
        int r = probe_index(c, env, run, ctx, pr, e);
        if (r < 0)
                return r;
        size_t k = 0;
        static char *const head[] = {"python3", "-m", "pip", "install", "--no-input"};
        for (size_t i = 0; i < ARRAY_SIZE(head); i++)
                argv[k++] = head[i];
        for (size_t i = 0; i < n; i++)
                argv[k++] = c->packages[i]; /* never an option: config/validate.c */
        return run_step("installing the packages (pip install)", "package_install_failed", argv,
                        env, run, ctx, pr, ret_output, e);
}

int provision_setup(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                    struct buf *ret_output, struct sbx_error *e)
{
        if (!c->setup)
                return 0;
        char *argv[] = {"sh", "-c", c->setup, NULL};
        return run_step("the setup command", "internal", argv, NULL, run, ctx, NULL, ret_output, e);
}

int provision_session(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                      struct buf *ret_output, struct sbx_error *e)
{
        int r = provision_packages(c, run, ctx, NULL, ret_output, e);
        return r < 0 ? r : provision_setup(c, run, ctx, ret_output, e);
}

int provision_exec_by_id(void *id, const struct exec_request *rq, struct exec_result *res,
                         struct sbx_error *e)
{
        return exec_in_session(id, rq, res, e);
}

void provision_destroy(const char *id)
{
        struct sbx_error ignored = {0};
        _cleanup_close_ int rtfd = -1;
        if (runtime_open(&rtfd, &ignored) < 0)
                return;
        _cleanup_close_ int sessfd = runtime_open_session(rtfd, id);
        if (sessfd < 0)
                return;
        _cleanup_close_ int fd = control_connect(sessfd, &ignored);
        if (fd < 0)
                return;
        struct timeval tv = {.tv_sec = 10};
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        char reply[64];
        (void)control_call(fd, "DESTROY", reply, sizeof(reply), NULL, 0);
}
