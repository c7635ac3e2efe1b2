/* SPDX-License-Identifier: MIT */
/*
 * Foreground commands: `sbx exec` run for the request, its stdout and stderr turned into
 * execd's events as they come (one event a line, a ping every 3 s while it is quiet), and its
 * exit code into the last event. The command lives as long as its client: when the client
 * goes away (its socket hangs up, or a write fails), the sbx exec client is killed, and with
 * it the command (sbx exec's own guarantee).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "session/id.h"
#include "shared/syscalls.h"
#include "shared/util.h"
#include "command.h"
#include "serve-internal.h"

#define PING_MS 3000
#define MAX_LINE (64u << 10)

struct fg_entry {
        char id[32];
        char session[SESSION_ID_LEN + 1];
        struct fg_status st;
        int pidfd; /* the sbx exec client's, while it runs; the stream owns it */
        bool used;
};

static pthread_mutex_t fg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fg_entry fg_table[FG_KEPT];

int sse_event(struct buf *b, const char *type, const char *text, size_t text_len)
{
        int r = buf_printf(b, "{\"type\":\"%s\"", type);
        if (r >= 0 && text) {
                r = buf_puts(b, ",\"text\":");
                if (r >= 0)
                        r = json_string(b, text, text_len);
        }
        if (r >= 0)
                r = buf_printf(b, ",\"timestamp\":%lld}\n\n", (long long)now_realtime_ms());
        return r;
}

/* A slot for a new command: a free one, else the oldest that has ended. -EAGAIN when all
 * FG_KEPT run. Called locked. */
static int fg_slot(void)
{
        int best = -1;
        for (int i = 0; i < FG_KEPT; i++) {
                if (!fg_table[i].used)
                        return i;
                if (!fg_table[i].st.running &&
                    (best < 0 || fg_table[i].st.finished_ms < fg_table[best].st.finished_ms))
                        best = i;
        }
        return best < 0 ? -EAGAIN : best;
}

static struct fg_entry *fg_find(const char *session, const char *id)
{
        for (int i = 0; i < FG_KEPT; i++)
                if (fg_table[i].used && strcmp(fg_table[i].id, id) == 0 &&
                    strcmp(fg_table[i].session, session) == 0)
                        return &fg_table[i];
        return NULL;
}

int command_fg_status(const char *session, const char *id, struct fg_status *ret)
{
        pthread_mutex_lock(&fg_lock);
        struct fg_entry *e = fg_find(session, id);
        if (e)
                *ret = e->st;
        pthread_mutex_unlock(&fg_lock);
        return e ? 0 : -ENOENT;
}

int command_fg_kill(const char *session, const char *id)
{
        pthread_mutex_lock(&fg_lock);
        struct fg_entry *e = fg_find(session, id);
        int r = !e ? -ENOENT : !e->st.running || e->pidfd < 0 ? -ESRCH : 0;
        if (r == 0 && sys_pidfd_send_signal(e->pidfd, SIGKILL) < 0)
                r = -errno;
        pthread_mutex_unlock(&fg_lock);
        return r;
}

void command_fg_kill_all(void)
{
        pthread_mutex_lock(&fg_lock);
        for (int i = 0; i < FG_KEPT; i++)
                if (fg_table[i].used && fg_table[i].st.running && fg_table[i].pidfd >= 0)
                        (void)sys_pidfd_send_signal(fg_table[i].pidfd, SIGKILL);
        pthread_mutex_unlock(&fg_lock);
}

struct fg_stream {
        struct serve_child child;
        int sock; /* the client's socket, watched for a hang-up; -1 when unknown */
        int slot;
        struct buf pending; /* events not yet handed on */
        size_t sent;
        struct buf line[2]; /* the unfinished line of stdout, of stderr */
        bool cr[2];
        int64_t start_ms, last_ms;
        bool done;
};

static int emit_line(struct fg_stream *s, int which)
{
        struct buf *l = &s->line[which];
        int r = l->len ? sse_event(&s->pending, which ? "stderr" : "stdout", l->data, l->len)
                       : sse_event(&s->pending, which ? "stderr" : "stdout", "\n", 1);
        l->len = 0;
        s->last_ms = now_realtime_ms();
        return r;
}

/* Split bytes into lines as execd does: \n, \r and \r\n each end one; a blank line is "\n". */
static int take_output(struct fg_stream *s, int which, const char *p, size_t n)
{
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char c = p[i];
                if (c == '\n' || c == '\r') {
                        if (!(c == '\n' && s->cr[which] && s->line[which].len == 0))
                                r = emit_line(s, which);
                        s->cr[which] = c == '\r';
                        continue;
                }
                s->cr[which] = false;
                r = buf_append(&s->line[which], &c, 1);
                if (r >= 0 && s->line[which].len >= MAX_LINE)
                        r = emit_line(s, which);
        }
        return r;
}

static void fg_mark_ended(struct fg_stream *s, int code)
{
        pthread_mutex_lock(&fg_lock);
        struct fg_entry *e = &fg_table[s->slot];
        e->pidfd = -1;
        e->st.running = false;
        e->st.exit_code = code;
        e->st.finished_ms = now_realtime_ms();
        pthread_mutex_unlock(&fg_lock);
}

/* Both pipes at their end: the last lines, then the exit code as execd reports it. */
static int finish(struct fg_stream *s)
{
        int r = 0;
        for (int w = 0; w < 2 && r >= 0; w++)
                if (s->line[w].len)
                        r = emit_line(s, w);
        pthread_mutex_lock(&fg_lock);
        fg_table[s->slot].pidfd = -1;
        pthread_mutex_unlock(&fg_lock);
        int code = serve_child_finish(&s->child, false);
        fg_mark_ended(s, code < 0 ? 125 : code);
        s->done = true;
        if (r < 0)
                return r;
        if (code == 0)
                return buf_printf(&s->pending,
                                  "{\"type\":\"execution_complete\",\"execution_time\":%lld,"
                                  "\"timestamp\":%lld}\n\n",
                                  (long long)(now_realtime_ms() - s->start_ms),
                                  (long long)now_realtime_ms());
        return buf_printf(&s->pending,
                          "{\"type\":\"error\",\"error\":{\"ename\":\"CommandExecError\","
                          "\"evalue\":\"%d\",\"traceback\":[\"exit status %d\"]},"
                          "\"timestamp\":%lld}\n\n",
                          code < 0 ? 125 : code, code < 0 ? 125 : code,
                          (long long)now_realtime_ms());
}

/* Wait for output, the client's hang-up, or the next ping. -EPIPE when the client is gone. */
static int wait_more(struct fg_stream *s)
{
        int64_t idle = now_realtime_ms() - s->last_ms;
        int timeout = idle >= PING_MS ? 0 : (int)(PING_MS - idle);
        struct pollfd p[3] = {{.fd = s->child.out_fd, .events = POLLIN},
                              {.fd = s->child.err_fd, .events = POLLIN},
                              {.fd = s->sock, .events = POLLRDHUP}};
        int n = poll(p, 3, timeout);
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        if (p[2].revents & (POLLRDHUP | POLLHUP | POLLERR))
                return -EPIPE;
        if (n == 0) {
                s->last_ms = now_realtime_ms();
                return sse_event(&s->pending, "ping", "pong", 4);
        }
        int *fds[2] = {&s->child.out_fd, &s->child.err_fd};
        for (int w = 0; w < 2; w++) {
                if (!p[w].revents)
                        continue;
                char chunk[16384];
                ssize_t k = read(*fds[w], chunk, sizeof(chunk));
                if (k < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (k <= 0) {
                        (void)close(*fds[w]);
                        *fds[w] = -1;
                        continue;
                }
                int r = take_output(s, w, chunk, k);
                if (r < 0)
                        return r;
        }
        return 0;
}

static ssize_t fg_read(void *ctx, uint64_t pos, char *out, size_t max)
{
        (void)pos;
        struct fg_stream *s = ctx;
        for (;;) {
                if (s->pending.len > s->sent) {
                        size_t n = s->pending.len - s->sent;
                        if (n > max)
                                n = max;
                        memcpy(out, s->pending.data + s->sent, n);
                        s->sent += n;
                        if (s->sent == s->pending.len)
                                s->sent = s->pending.len = 0;
                        return (ssize_t)n;
                }
                if (s->done)
                        return SERVE_STREAM_END;
                int r = s->child.out_fd < 0 && s->child.err_fd < 0 ? finish(s) : wait_more(s);
                if (r < 0)
                        return SERVE_STREAM_ERROR;
        }
}

static void fg_free(void *ctx)
{
        struct fg_stream *s = ctx;
        if (!s->done) {
                /* the client went away: its command goes with it */
                pthread_mutex_lock(&fg_lock);
                fg_table[s->slot].pidfd = -1;
                pthread_mutex_unlock(&fg_lock);
                int code = serve_child_finish(&s->child, true);
                fg_mark_ended(s, code < 0 ? 137 : code);
        }
        buf_freep(&s->pending);
        buf_freep(&s->line[0]);
        buf_freep(&s->line[1]);
        free(s);
}

static int client_socket(const struct serve_request *rq)
{
        const union MHD_ConnectionInfo *ci =
            rq->srv->mhd->get_connection_info(rq->conn->c, MHD_CONNECTION_INFO_CONNECTION_FD);
        return ci ? ci->connect_fd : -1;
}

int command_fg_start(struct serve_request *rq, struct serve_response *rs, char **argv,
                     const char *content, int in_fd)
{
        struct fg_stream *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->child = (struct serve_child)SERVE_CHILD_INIT;
        s->sock = client_socket(rq);
        s->start_ms = s->last_ms = now_realtime_ms();
        unsigned char rnd[8];
        char id[32];
        if (getentropy(rnd, sizeof(rnd)) < 0) {
                free(s);
                return -EIO;
        }
        snprintf(id, sizeof(id), FG_ID_PREFIX "%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
                 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
        pthread_mutex_lock(&fg_lock);
        int slot = fg_slot();
        int r = slot;
        if (slot >= 0)
                r = serve_sbx_spawn(rq->srv, argv, in_fd, false, &s->child);
        if (r >= 0) {
                struct fg_entry *e = &fg_table[slot];
                *e = (struct fg_entry){.pidfd = s->child.pidfd, .used = true};
                snprintf(e->id, sizeof(e->id), "%s", id);
                snprintf(e->session, sizeof(e->session), "%s", rq->session_id);
                snprintf(e->st.content, sizeof(e->st.content), "%s", content);
                e->st.running = true;
                e->st.started_ms = s->start_ms;
                s->slot = slot;
        }
        pthread_mutex_unlock(&fg_lock);
        if (r == -EAGAIN) {
                free(s);
                return serve_reply_error(rs, 429, "TOO_MANY_COMMANDS",
                                         "%d foreground commands run already", FG_KEPT);
        }
        if (r < 0) {
                free(s);
                return r;
        }
        r = sse_event(&s->pending, "init", id, strlen(id));
        rs->status = 200;
        rs->content_type = "text/event-stream";
        rs->stream =
            (struct serve_stream){.read = fg_read, .free = fg_free, .ctx = s, .size = UINT64_MAX};
        (void)serve_add_header(rs, "Cache-Control", "no-cache");
        (void)serve_add_header(rs, "X-Accel-Buffering", "no");
        return r < 0 ? r : 0;
}
