/* SPDX-License-Identifier: MIT */
/*
 * The generated /etc of the host base: only what programs need to run, nothing that could
 * carry a host secret (no shadow, no ssh, no ssl/private, no machine-id, no host users).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "shared/buf.h"
#include "shared/util.h"
#include "mounts.h"
#include "rootfs.h"
#include "sandbox.h"

static const char passwd[] = "root:x:0:0:sandbox user:/workspace:/bin/bash\n"
                             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group[] = "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n";
static const char nsswitch[] = "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
                               "networks: files\nprotocols: files\nservices: files\n"
                               "ethers: files\nrpc: files\n";

static int put(int etcfd, const char *name, const char *data, size_t n, struct sbx_error *e)
{
        int r = write_file_at(etcfd, name, data, n, 0644);
        return r < 0 ? sbx_internal(e, -r, "failed to write /etc/%s", name) : 0;
}

/* Copy a small public host file (absent on the host = absent in the sandbox). */
static int copy_host(int etcfd, int hostfd, const char *name, struct sbx_error *e)
{
        char path[64];
        snprintf(path, sizeof(path), "etc/%s", name);
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(hostfd, path, &b, 4 << 20);
        if (r == -ENOENT || r == -EACCES)
                return 0;
        if (r < 0)
                return sbx_internal(e, -r, "failed to read the host's /etc/%s", name);
        return put(etcfd, name, b.data ? b.data : "", b.len, e);
}

static int copy_link(int etcfd, int hostfd, const char *name, struct sbx_error *e)
{
        char path[64], target[512];
        snprintf(path, sizeof(path), "etc/%s", name);
        ssize_t n = readlinkat(hostfd, path, target, sizeof(target) - 1);
        if (n < 0)
                return errno == EINVAL ? copy_host(etcfd, hostfd, name, e) : 0;
        target[n] = '\0';
        return symlinkat(target, etcfd, name) < 0
                   ? sbx_internal(e, errno, "failed to link /etc/%s", name)
                   : 0;
}

/* Read-only bind of a public host directory (e.g. /etc/ssl/certs), when it exists. */
static int bind_host_dir(int rootfd, int hostfd, const char *path, struct sbx_error *e)
{
        _cleanup_close_ int src =
            openat(hostfd, path + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (src < 0)
                return 0;
        _cleanup_close_ int t = mnt_open_target(rootfd, path, true, e);
        if (t < 0)
                return t;
        return mnt_bind(src, t, MOUNT_ATTR_RDONLY | MNT_SECURE | MOUNT_ATTR_NOEXEC, path, e);
}

int rootfs_fill_etc(const struct sbx_config *c, int etcfd, int hostfd, struct sbx_error *e)
{
        char hosts[512];
        int n = snprintf(hosts, sizeof(hosts),
                         "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost "
                         "ip6-loopback\n",
                         c->hostname);
        int r;
        if ((r = put(etcfd, "passwd", passwd, sizeof(passwd) - 1, e)) < 0 ||
            (r = put(etcfd, "group", group, sizeof(group) - 1, e)) < 0 ||
            (r = put(etcfd, "nsswitch.conf", nsswitch, sizeof(nsswitch) - 1, e)) < 0 ||
            (r = put(etcfd, "hosts", hosts, (size_t)n, e)) < 0)
                return r;
        char hn[300];
        n = snprintf(hn, sizeof(hn), "%s\n", c->hostname);
        if ((r = put(etcfd, "hostname", hn, (size_t)n, e)) < 0)
                return r;
        /* resolv.conf only when the session has a network to resolve on */
        if (c->net == SBX_NET_HOST && (r = copy_host(etcfd, hostfd, "resolv.conf", e)) < 0)
                return r;
        static const char *const files[] = {"ld.so.cache", "services", "protocols",
                                            "timezone",    "shells",   "inputrc",
                                            "bash.bashrc", "profile",  "mime.types"};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                if ((r = copy_host(etcfd, hostfd, files[i], e)) < 0)
                        return r;
        if ((r = copy_link(etcfd, hostfd, "localtime", e)) < 0 ||
            (r = copy_link(etcfd, hostfd, "os-release", e)) < 0)
                return r;
        return copy_host(etcfd, hostfd, "ssl/openssl.cnf", e);
}

int rootfs_setup_etc(const struct sbx_config *c, int rootfd, int hostfd, struct helper *h,
                     struct sbx_error *e)
{
        _cleanup_close_ int t = mnt_open_target(rootfd, "/etc", true, e);
        if (t < 0)
                return t;
        _cleanup_close_ int etcfd =
            openat(rootfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (etcfd < 0)
                return sbx_internal(e, errno, "failed to open /etc");
        if (mkdirat(etcfd, "ssl", 0755) < 0)
                return sbx_internal(e, errno, "failed to create /etc/ssl");
        /* The files are H's work where there is an H, while we go on with the mounts. */
        int r;
        if (!helper_fill_etc(h, etcfd, hostfd) && (r = rootfs_fill_etc(c, etcfd, hostfd, e)) < 0)
                return r;
        if ((r = bind_host_dir(rootfd, hostfd, "/etc/ssl/certs", e)) < 0 ||
            (r = bind_host_dir(rootfd, hostfd, "/etc/alternatives", e)) < 0 ||
            (r = bind_host_dir(rootfd, hostfd, "/etc/ca-certificates", e)) < 0)
                return r;
        return 0;
}
