/* SPDX-License-Identifier: MIT */
/*
 * `sbx mcp`: the server loop (see mcp.h). Messages are read from stdin one line at a time,
 * each at most MCP_MAX_LINE bytes: a longer one is skipped up to its newline and answered
 * with -32600, so no input can make the server grow without bound or hang. The loop ends at
 * the client's EOF, or at SIGTERM, SIGINT or SIGHUP (taken through a signalfd, also while a
 * command runs); then every session created through the server is destroyed.
 */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>

#include "shared/util.h"
#include "args.h"
#include "mcp/mcp.h"

enum { OPT_ANY_SESSION = 0x200 };

static const struct option mcp_options[] = {
    {"any-session", no_argument, NULL, OPT_ANY_SESSION},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

#define TOO_LONG "invalid request: message longer than 4 MiB"

/* Handle every complete line in the reader; returns -errno when the client is gone. */
static int handle_lines(struct mcp_server *s)
{
        struct mcp_reader *lr = &s->in;
        size_t start = 0;
        int r = 0;
        while (r >= 0 && !s->stopping && start < lr->pending.len) {
                char *p = lr->pending.data + start;
                size_t avail = lr->pending.len - start;
                char *nl = memchr(p, '\n', avail);
                if (!nl && !lr->eof)
                        break;
                size_t len = nl ? (size_t)(nl - p) : avail;
                start += len + (nl ? 1 : 0);
                lr->handled = start;
                while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '))
                        len--;
                if (len > MCP_MAX_LINE)
                        r = mcp_send_error(s, NULL, -32600, TOO_LONG);
                else if (len > 0)
                        r = mcp_handle_line(s, p, len);
        }
        if (start > 0) {
                memmove(lr->pending.data, lr->pending.data + start, lr->pending.len - start);
                lr->pending.len -= start;
        }
        lr->handled = 0;
        if (r >= 0 && lr->pending.len > MCP_MAX_LINE) {
                /* no newline within the limit: refuse the message, drop the rest of it */
                lr->pending.len = 0;
                lr->skipping = true;
                r = mcp_send_error(s, NULL, -32600, TOO_LONG);
        }
        if (lr->pending.data)
                lr->pending.data[lr->pending.len] = '\0';
        return r;
}

int mcp_read_input(struct mcp_server *s)
{
        struct mcp_reader *lr = &s->in;
        char chunk[65536];
        ssize_t n = read(s->in_fd, chunk, sizeof(chunk));
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        if (n == 0) {
                lr->eof = true;
                return 0;
        }
        if (lr->skipping) {
                char *nl = memchr(chunk, '\n', (size_t)n);
                if (!nl)
                        return 0;
                lr->skipping = false;
                return buf_append(&lr->pending, nl + 1, (size_t)(chunk + n - nl - 1));
        }
        return buf_append(&lr->pending, chunk, (size_t)n);
}

static int serve(struct mcp_server *s)
{
        int r = 0;
        while (r >= 0 && !s->stopping && !s->in.eof) {
                struct pollfd p[2] = {{s->in_fd, POLLIN, 0}, {s->sigfd, POLLIN, 0}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (p[1].revents & POLLIN) {
                        s->stopping = true;
                        break;
                }
                if (p[0].revents && (r = mcp_read_input(s)) >= 0)
                        r = handle_lines(s);
        }
        buf_freep(&s->in.pending);
        return r;
}

static int parse_options(struct cli *cli, int argc, char **argv, bool *any_session)
{
        int opt;
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", mcp_options, NULL)) != -1) {
                if (opt == OPT_ANY_SESSION) {
                        *any_session = true;
                        continue;
                }
                int k = args_common(cli, "mcp", opt);
                if (k == -1)
                        return 1;
                if (k == 0)
                        sbx_usage(&cli->err, "unknown option '%s'", argv[optind - 1]);
                if (k <= 0)
                        return -1;
        }
        if (optind < argc)
                return sbx_usage(&cli->err, "unexpected argument '%s'", argv[optind]);
        return 0;
}

/* Serve, then destroy the server's sessions; the exit status, or -1 with cli->err set. */
static int serve_until_done(struct cli *cli, struct mcp_server *s)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        _cleanup_close_ int sigfd = -1;
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                return sbx_internal(&cli->err, errno,
                                    "failed to set up the signal handling of mcp");
        /* a client that closes its end makes writes fail with EPIPE, not kill us */
        (void)signal(SIGPIPE, SIG_IGN);
        s->sigfd = sigfd;
        int r = serve(s);
        mcp_destroy_sessions(s);
        if (r < 0 && r != -EPIPE && !s->stopping) {
                fprintf(stderr, "sbx: mcp: %s\n", strerror(-r));
                return EXIT_SBX_FAILED;
        }
        return 0;
}

int cmd_mcp(struct cli *cli, int argc, char **argv)
{
        struct mcp_server s = {.sigfd = -1, .in_fd = STDIN_FILENO, .out_fd = STDOUT_FILENO};
        int r = parse_options(cli, argc, argv, &s.any_session);
        if (r)
                return r > 0 ? 0 : cli_finish_error(cli, "mcp");
        s.config_file = cli->config_file;
        /* the operator's config, the ceiling of every limit a model asks for; a bad one is
         * refused before serving (exit 2), as every command would refuse it */
        config_init_defaults(&s.limits);
        r = config_load(&s.limits, cli->config_file, &cli->err);
        if (r == 0)
                r = serve_until_done(cli, &s);
        config_free(&s.limits);
        return r < 0 ? cli_finish_error(cli, "mcp") : r;
}
