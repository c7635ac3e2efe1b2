/* SPDX-License-Identifier: MIT */
/*
 * src/sandbox/exec_wire.c: the exec request the session's server parses. Its bytes are not
 * trusted, so besides a round trip the parser is fuzzed: valid requests mutated (bytes
 * overwritten, cut, extended, fd counts changed), a fixed seed and a bounded number of rounds
 * so it runs in about a second (also under ASan, which turns a read past the message or a
 * leak into a failure). Every accepted message must satisfy what the server relies on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/exec_wire.h"
#include "unit.h"

#define ROUNDS 60000

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* A valid request's bytes, as exec_wire_send puts them on the wire. */
static size_t valid_message(uint32_t flags, char *out, size_t cap, int *nfds)
{
        int sp[2], p[2], q[2], in[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
            pipe2(p, O_CLOEXEC) < 0 || pipe2(q, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0)
                return 0;
        char *argv[] = {"sh", "-c", "echo hi", NULL}, *envp[] = {"A=1", "PATH=/bin", NULL};
        struct exec_wire w = {.flags = flags,
                              .nofile = 1024,
                              .fsize = 4096,
                              .workdir = "/w",
                              .argv = argv,
                              .envp = envp,
                              .fds = {-1, -1, -1, -1, -1}};
        if (!(flags & EXEC_WIRE_TTY)) {
                w.fds[WIRE_OUT_W] = p[1], w.fds[WIRE_OUT_R] = p[0];
                if (flags & EXEC_WIRE_STDERR)
                        w.fds[WIRE_ERR_W] = q[1], w.fds[WIRE_ERR_R] = q[0];
                if (flags & EXEC_WIRE_STDIN)
                        w.fds[WIRE_IN_R] = in[0];
        }
        ssize_t n = -1;
        if (exec_wire_send(sp[0], &w) == 0) {
                char cbuf[CMSG_SPACE(sizeof(int) * 8)];
                struct iovec iov = {.iov_base = out, .iov_len = cap};
                struct msghdr mh = {.msg_iov = &iov,
                                    .msg_iovlen = 1,
                                    .msg_control = cbuf,
                                    .msg_controllen = sizeof(cbuf)};
                n = recvmsg(sp[1], &mh, MSG_CMSG_CLOEXEC);
                *nfds = 0;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n > 0 && c; c = CMSG_NXTHDR(&mh, c)) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                close(fd);
                                (*nfds)++;
                        }
                }
        }
        int all[] = {sp[0], sp[1], p[0], p[1], q[0], q[1], in[0], in[1]};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                close(all[i]);
        return n > 0 ? (size_t)n : 0;
}

/* What the server relies on in an accepted request. */
static bool sound(const char *buf, size_t len, const struct exec_wire *w, size_t nfds)
{
        const char *end = buf + len;
        if (!w->argv || !w->envp || !w->argv[0] || !w->workdir)
                return false;
        if (w->workdir < buf || w->workdir >= end || !memchr(w->workdir, 0, end - w->workdir))
                return false;
        size_t seen = 0;
        for (char **v = w->argv; *v; v++)
                if (*v < buf || *v >= end || !memchr(*v, 0, end - *v))
                        return false;
        for (char **v = w->envp; *v; v++)
                if (*v < buf || *v >= end || !memchr(*v, 0, end - *v))
                        return false;
        for (int i = 0; i < WIRE_NFDS; i++)
                seen += w->fds[i] >= 0;
        bool tty = w->flags & EXEC_WIRE_TTY;
        return seen == nfds &&
               (tty ? seen == 0 : w->fds[WIRE_OUT_W] >= 0 && w->fds[WIRE_OUT_R] >= 0);
}

static void free_wire(struct exec_wire *w)
{
        free(w->argv);
        free(w->envp);
}

int main(void)
{
        static char orig[EXEC_WIRE_MAX_BYTES], buf[EXEC_WIRE_MAX_BYTES];
        int fds[8] = {10, 11, 12, 13, 14, 15, 16, 17};
        struct exec_wire w;

        /* the round trip: what send puts on the wire, parse gives back */
        int nfds = 0;
        size_t len = valid_message(EXEC_WIRE_STDERR | EXEC_WIRE_STDIN, orig, sizeof(orig), &nfds);
        CHECK(len > 0 && nfds == 5);
        memcpy(buf, orig, len);
        CHECK(exec_wire_parse(buf, len, fds, (size_t)nfds, &w) == 0);
        CHECK(w.argv && strcmp(w.argv[0], "sh") == 0 && strcmp(w.argv[2], "echo hi") == 0 &&
              !w.argv[3]);
        CHECK(w.envp && strcmp(w.envp[1], "PATH=/bin") == 0 && !w.envp[2]);
        CHECK(strcmp(w.workdir, "/w") == 0 && w.nofile == 1024 && w.fsize == 4096);
        CHECK(w.fds[WIRE_OUT_W] == 10 && w.fds[WIRE_IN_R] == 14);
        free_wire(&w);

        /* malformed: each refused, with nothing left allocated */
        CHECK(exec_wire_parse(buf, len, fds, 4, &w) == -EBADMSG && !w.argv); /* an fd short */
        CHECK(exec_wire_parse(buf, len, fds, 6, &w) == -EBADMSG && !w.argv); /* one too many */
        CHECK(exec_wire_parse(buf, len - 1, fds, 5, &w) == -EBADMSG);        /* no last NUL */
        buf[len] = 'x';
        CHECK(exec_wire_parse(buf, len + 1, fds, 5, &w) == -EBADMSG); /* trailing bytes */
        CHECK(exec_wire_parse(buf, 3, fds, 5, &w) == -EBADMSG);       /* shorter than a head */
        CHECK(exec_wire_parse(buf, 0, fds, 0, &w) == -EBADMSG);
        memcpy(buf, orig, len);
        buf[0] ^= 1; /* the magic */
        CHECK(exec_wire_parse(buf, len, fds, 5, &w) == -EBADMSG);
        memcpy(buf, orig, len);
        memset(buf + 24, 0xff, 8); /* argc and envc near 2^32 */
        CHECK(exec_wire_parse(buf, len, fds, 5, &w) == -EBADMSG);

        /* the fuzz: mutations of valid requests of each kind */
        const uint32_t kinds[] = {0, EXEC_WIRE_TTY, EXEC_WIRE_STDERR, EXEC_WIRE_STDIN,
                                  EXEC_WIRE_STDERR | EXEC_WIRE_STDIN};
        size_t lens[5];
        int kfds[5];
        static char origs[5][4096];
        for (int k = 0; k < 5; k++)
                lens[k] = valid_message(kinds[k], origs[k], sizeof(origs[k]), &kfds[k]);
        int accepted = 0, unsound = 0, refused_dirty = 0;
        for (int round = 0; round < ROUNDS; round++) {
                int k = (int)(next() % 5);
                size_t n = lens[k];
                memcpy(buf, origs[k], n);
                int muts = 1 + (int)(next() % 4);
                for (int m = 0; m < muts; m++) {
                        uint64_t x = next();
                        switch (x % 5) {
                        case 0: /* a byte anywhere, often in the head */
                                if (n)
                                        buf[(x >> 8) % ((x >> 40) % 2 && n > 32 ? 32 : n)] =
                                            (char)(x >> 16);
                                break;
                        case 1: /* a count */
                                buf[24 + (x >> 8) % 8] = (char)(x >> 16);
                                break;
                        case 2: /* cut */
                                n = (x >> 8) % (n + 1);
                                break;
                        case 3: /* extend with bytes, NULs among them */
                                for (size_t j = (x >> 8) % 64; j && n < 4000; j--)
                                        buf[n++] = (next() % 3) ? (char)next() : '\0';
                                break;
                        default: /* a NUL removed or added */
                                if (n)
                                        buf[(x >> 8) % n] = buf[(x >> 8) % n] ? '\0' : 'a';
                        }
                }
                size_t nf = next() % 4 ? (size_t)kfds[k] : (size_t)(next() % 7);
                if (exec_wire_parse(buf, n, fds, nf, &w) == 0) {
                        accepted++;
                        unsound += !sound(buf, n, &w, nf);
                        free_wire(&w);
                } else
                        refused_dirty += w.argv != NULL || w.envp != NULL || w.fds[0] != -1;
        }
        printf("# fuzz: %d rounds, %d accepted\n", ROUNDS, accepted);
        CHECK(unsound == 0);
        CHECK(refused_dirty == 0);
        CHECK(accepted > 0 && accepted < ROUNDS); /* both sides were reached */
        printf("1..%d\n", unit_n);
        return unit_failed ? 1 : 0;
}
