/* SPDX-License-Identifier: MIT */
/*
 * A session's resource use (`sbx stats`): the cgroup counters (cgroup_stats.c), the writable
 * layer's blocks and inodes, and the bytes its proxy relayed. The layer is measured by a
 * short-lived child that joins only the session's user and mount namespaces and calls
 * statfs("/"): the session's root is the layer's tmpfs, or an overlay, whose statfs is its
 * upper's (the same tmpfs). It follows no path, enters no cgroup (a paused session is
 * measured too) and is not visible in the session's pid namespace.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../session/audit.h"
#include "../session/runtime.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "cgroup.h"
#include "launch.h"
#include "session_ref.h"

static int layer_statfs(const struct session_ref *s, struct statfs *ret)
{
        int only[SESSION_NS_COUNT];
        for (int i = 0; i < SESSION_NS_COUNT; i++)
                only[i] = i == NS_USER || i == NS_MNT ? s->ns[i] : -1;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negerrno();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negerrno();
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                struct sbx_error ignored = {0};
                struct statfs sf;
                close(p[0]);
                (void)prctl(PR_SET_DUMPABLE, 0);
                if (session_ns_join(only, &ignored) < 0 || statfs("/", &sf) < 0)
                        _exit(1);
                _exit(write_all(p[1], &sf, sizeof(sf)) < 0 ? 1 : 0);
        }
        close(p[1]);
        _cleanup_buf_ struct buf b = {0};
        int r = read_all(p[0], &b, sizeof(*ret) + 1);
        close(p[0]);
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        if (r < 0)
                return r;
        if (b.len != sizeof(*ret))
                return -EIO;
        memcpy(ret, b.data, sizeof(*ret));
        return 0;
}

/* A number after "key": in a JSON Lines record (the audit log's own output, not parsed). */
static uint64_t record_u64(const char *line, const char *key)
{
        const char *p = strstr(line, key);
        unsigned long long v = 0;
        return p && sscanf(p + strlen(key), "%llu", &v) == 1 ? v : 0;
}

/*
 * The proxy's bytes: the sum of the "net" records of the audit log from *offset on (one per
 * connection, written when it closes), so a connection still open is not counted yet.
 */
static void read_net(int sessfd, const struct session_state *st, struct session_stats *out)
{
        _cleanup_close_ int fd =
            st->audit_path ? audit_open_path(st->audit_path, O_RDONLY | O_NOFOLLOW, 0)
                           : openat(sessfd, AUDIT_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || lseek(fd, (off_t)out->net_log_offset, SEEK_SET) < 0)
                return;
        _cleanup_fclose_ FILE *f = fdopen(TAKE_FD(fd), "re");
        char line[AUDIT_RECORD_MAX];
        while (f && fgets(line, sizeof(line), f)) {
                size_t n = strlen(line);
                if (n == 0 || line[n - 1] != '\n')
                        break; /* a record being written: counted next time */
                out->net_log_offset += n;
                if (strstr(line, ",\"event\":\"net\",")) {
                        out->net_conns++;
                        out->net_bytes_out += record_u64(line, "\"bytes_out\":");
                        out->net_bytes_in += record_u64(line, "\"bytes_in\":");
                } else if (strstr(line, ",\"event\":\"net_dropped\",")) {
                        out->net_records_dropped = true;
                }
        }
}

int session_stats_read(const char *id_or_name, struct session_stats *out, struct sbx_error *e)
{
        _cleanup_close_ int sessfd = -1;
        struct session_ref s = SESSION_REF_INIT;
        int r = control_open(id_or_name, 0, &sessfd, &s.ctl, e);
        if (r < 0)
                return r;
        if ((r = session_state_read(sessfd, &s.st)) < 0) {
                session_ref_close(&s);
                return sbx_internal(e, -r, "failed to read the state of session '%s'", id_or_name);
        }
        /* the supervisor's answer proves the session alive and hands over its namespaces */
        if ((r = session_ref_join(&s, id_or_name, e)) < 0) {
                session_ref_close(&s);
                return r;
        }
        memcpy(out->id, s.st.id, sizeof(out->id));
        out->sampled_ms = now_monotonic_ms();
        cgroup_usage_read(&s.st, &out->cg);
        out->paused = cgroup_state_frozen(&s.st) == 1;
        out->disk_limit = s.st.disk_bytes;
        struct statfs sf;
        out->has_disk = layer_statfs(&s, &sf) == 0;
        if (out->has_disk) {
                out->disk_total = (uint64_t)sf.f_blocks * (uint64_t)sf.f_frsize;
                out->disk_used = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_frsize;
                out->inodes_total = sf.f_files;
                out->inodes_used = sf.f_files - sf.f_ffree;
        }
        out->net_proxy = s.st.net == SBX_NET_PROXY;
        if (out->net_proxy)
                read_net(sessfd, &s.st, out);
        session_ref_close(&s);
        return 0;
}
