/* SPDX-License-Identifier: MIT */
/*
 * Running this binary's own commands for a request. serve is multi-threaded, and a session's
 * create or exec forks, joins namespaces and changes credentials, which must happen in a
 * single-threaded process: so every session operation is `sbx COMMAND --json ...` in a child
 * (posix_spawn, which is safe in a threaded process), exactly as the CLI runs it. Every fd
 * serve holds is CLOEXEC, so the child gets its three standard fds and nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/syscalls.h"
#include "shared/util.h"
#include "serve-internal.h"

static void close_fd(int *fd)
{
        if (*fd >= 0)
                (void)close(*fd);
        *fd = -1;
}

/* "sbx" COMMAND [--config FILE] ARGS...: the config goes after the command name. */
static char **full_argv(const struct serve *srv, char *const *argv)
{
        size_t n = 0;
        while (argv[n])
                n++;
        char **v = calloc(n + 4, sizeof(*v));
        if (!v || n == 0) {
                free(v);
                return NULL;
        }
        size_t j = 0;
        v[j++] = (char *)"sbx";
        v[j++] = argv[0];
        if (srv->opt.config_file) {
                v[j++] = (char *)"--config";
                v[j++] = (char *)srv->opt.config_file;
        }
        for (size_t i = 1; i < n; i++)
                v[j++] = argv[i];
        return v;
}

int serve_text_fd(const char *text)
{
        int fd = memfd_create("sbx-serve-stdin", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = strlen(text);
        if (write_all(fd, text, n) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int serve_sbx_spawn(const struct serve *srv, char *const *argv, int in_fd, bool merge_stderr,
                    struct serve_child *ret)
{
        _cleanup_free_ char **v = full_argv(srv, argv);
        if (!v)
                return -ENOMEM;
        int out[2] = {-1, -1}, err[2] = {-1, -1};
        if (pipe2(out, O_CLOEXEC) < 0 || (!merge_stderr && pipe2(err, O_CLOEXEC) < 0)) {
                int r = -errno;
                close_fd(&out[0]), close_fd(&out[1]);
                return r;
        }
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&at);
        if (in_fd >= 0)
                posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
        else
                posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, merge_stderr ? out[1] : err[1], 2);
        /* serve blocks its stop signals and ignores SIGPIPE: the child starts clean */
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setsigdefault(&at, &all);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        pid_t pid;
        int r = -posix_spawn(&pid, "/proc/self/exe", &fa, &at, v, srv->child_env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        close_fd(&out[1]);
        close_fd(&err[1]);
        if (r < 0) {
                close_fd(&out[0]);
                close_fd(&err[0]);
                return r;
        }
        *ret = (struct serve_child){
            .pid = pid, .pidfd = sys_pidfd_open(pid, 0), .out_fd = out[0], .err_fd = err[0]};
        return 0;
}

int serve_child_finish(struct serve_child *c, bool kill)
{
        if (c->pid < 0)
                return -ECHILD;
        if (kill) {
                /* the sbx client's own death kills its command (sbx exec) */
                if (c->pidfd >= 0)
                        (void)sys_pidfd_send_signal(c->pidfd, SIGKILL);
        }
        close_fd(&c->out_fd);
        close_fd(&c->err_fd);
        int status;
        pid_t w;
        while ((w = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR)
                ;
        close_fd(&c->pidfd);
        c->pid = -1;
        if (w < 0)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Read whatever is ready on fd into b; 0 at EOF (fd closed), 1 for more, or -errno.
 * Past max: -EFBIG, or (!max_is_error) the rest is dropped. */
static int drain(int *fd, struct buf *b, size_t max, bool max_is_error)
{
        char chunk[16384];
        ssize_t n = read(*fd, chunk, sizeof(chunk));
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        if (n == 0) {
                close_fd(fd);
                return 0;
        }
        if (!b)
                return 1;
        if (b->len + n > max)
                return max_is_error ? -EFBIG : 1;
        int r = buf_append(b, chunk, n);
        return r < 0 ? r : 1;
}

int serve_sbx_run(const struct serve *srv, char *const *argv, int in_fd, struct buf *out,
                  size_t max_out, struct buf *err, int *ret_exit)
{
        struct serve_child c = SERVE_CHILD_INIT;
        int r = serve_sbx_spawn(srv, argv, in_fd, false, &c);
        if (r < 0)
                return r;
        while (r >= 0 && (c.out_fd >= 0 || c.err_fd >= 0)) {
                struct pollfd p[2] = {{.fd = c.out_fd, .events = POLLIN},
                                      {.fd = c.err_fd, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        r = errno == EINTR ? 0 : -errno;
                        continue;
                }
                if (p[0].revents)
                        r = drain(&c.out_fd, out, max_out, true);
                if (r >= 0 && p[1].revents)
                        r = drain(&c.err_fd, err, 64 << 10, false);
        }
        int code = serve_child_finish(&c, r < 0);
        if (r < 0)
                return r;
        if (code < 0)
                return code;
        *ret_exit = code;
        return 0;
}
