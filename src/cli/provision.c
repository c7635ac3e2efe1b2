/* SPDX-License-Identifier: MIT */
#include "provision.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"

#define PROVISION_MAX_OUTPUT (1u << 20)

/* The installer's own environment on top of the session's: a disposable sandbox may install
 * over a distribution's "externally managed" Python (PEP 668), as root, without prompts. */
static char *pip_env[] = {"PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_ROOT_USER_ACTION=ignore",
                          "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", NULL};

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
static int exec_forked(provision_exec_fn run, void *ctx, const struct exec_request *rq,
                       struct exec_result *res, struct sbx_error *e)
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
                 * takes its session down (the #4 handshake, a copy of which we hold, must close). */
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
        int r = read_all(rd, &b, sizeof(struct step_report) + PROVISION_MAX_OUTPUT);
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

static int run_step(const char *what, char **argv, char **env, provision_exec_fn run, void *ctx,
                    struct buf *ret_output, struct sbx_error *e)
{
        struct exec_request rq = {
            .argv = argv, .env_add = env, .capture = true, .max_output = PROVISION_MAX_OUTPUT};
        struct exec_result res = {0};
        int r = exec_forked(run, ctx, &rq, &res, e);
        if (r < 0 && !res.timed_out) {
                buf_freep(&res.output);
                return r;
        }
        if (res.exit_code == 0 && !res.timed_out) {
                buf_freep(&res.output);
                return 0;
        }
        const char *out = res.output.data ? res.output.data : "";
        size_t len = res.output.len, tail = len > 600 ? len - 600 : 0;
        if (res.timed_out)
                r = sbx_fail(e, EXIT_FAILED, "limit", 0,
                             "%s timed out (the session's exec timeout, --timeout)%s%.*s", what,
                             len ? ": " : "", (int)(len - tail), out + tail);
        else if (res.exec_error.exit_code)
                r = sbx_fail(e, EXIT_FAILED, "not_found", 0, "%s could not start: %s", what,
                             res.exec_error.message);
        else
                r = sbx_fail(e, EXIT_FAILED, "internal", 0, "%s failed (exit %d)%s%s%.*s", what,
                             res.exit_code, len ? ": " : "", tail ? "..." : "", (int)(len - tail),
                             out + tail);
        if (ret_output)
                *ret_output = res.output;
        else
                buf_freep(&res.output);
        return r;
}

int provision_session(const struct sbx_config *c, provision_exec_fn run, void *ctx,
                      struct buf *ret_output, struct sbx_error *e)
{
        size_t n = 0;
        while (c->packages && c->packages[n])
                n++;
        if (n) {
                _cleanup_free_ char **argv = calloc(n + 8, sizeof(char *));
                if (!argv)
                        return sbx_internal(e, ENOMEM, "out of memory");
                size_t k = 0;
                static char *const head[] = {"python3", "-m", "pip", "install", "--no-input"};
                for (size_t i = 0; i < ARRAY_SIZE(head); i++)
                        argv[k++] = head[i];
                for (size_t i = 0; i < n; i++)
                        argv[k++] = c->packages[i]; /* never an option: config/validate.c */
                int r = run_step("installing the packages (pip install)", argv, pip_env, run, ctx,
                                 ret_output, e);
                if (r < 0)
                        return r;
        }
        if (c->setup) {
                char *argv[] = {"sh", "-c", c->setup, NULL};
                return run_step("the setup command", argv, NULL, run, ctx, ret_output, e);
        }
        return 0;
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
