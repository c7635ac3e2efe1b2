/* SPDX-License-Identifier: MIT */
/*
 * The layer tar of a host-base session (layertar_write_host) over a writable layer laid out
 * in a temp dir as the init lays it out: newroot/ with sbx's own entries, snapshotted as the
 * supervisor does, then the session's changes; upper/usr/ as the /usr overlay's upper. The
 * tar is read back header by header: what is in it, what is left out, modes.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ops/layerdiff.h"
#include "ops/layertar.h"
#include "unit.h"

static void put(const char *path, const char *data)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
                printf("# cannot write %s\n", path);
        close(fd);
}

static void dirs(const char *const *v)
{
        for (; *v; v++)
                if (mkdir(*v, 0755) < 0)
                        printf("# cannot mkdir %s\n", *v);
}

/* "T NAME MODE\n" per header of the tar in fd (PAX headers included as 'x'). */
static void list_tar(int fd, struct buf *out)
{
        char h[512];
        off_t off = 0;
        while (pread(fd, h, sizeof(h), off) == (ssize_t)sizeof(h) && h[0]) {
                unsigned long long size = strtoull(h + 124, NULL, 8);
                unsigned long mode = strtoul(h + 100, NULL, 8);
                buf_printf(out, "%c %.100s %lo\n", h[156], h, mode);
                off += 512 + (off_t)((size + 511) / 512 * 512);
        }
}

static int run(int layer, const char *snap, size_t len, struct buf *out, struct sbx_error *e)
{
        int fd = open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        struct layertar_opts o = {
            .uid_start = 0, .uid_count = 65536, .max_bytes = 1 << 20, .max_entries = 1000};
        struct layertar_stats st = {0};
        int r = layertar_write_host(layer, snap, len, fd, &o, &st, e);
        if (r == 0)
                list_tar(fd, out);
        close(fd);
        return r;
}

/* A session of an image committed from a host base: its root is an overlay whose upper is
 * upper/root/; there whiteouts and opaque directories are the session's deletions. */
static void test_overlay_root(void)
{
        static const char *const base[] = {"l2",
                                           "l2/upper",
                                           "l2/upper/root",
                                           "l2/upper/usr",
                                           "l2/upper/root/etc",
                                           "l2/newroot",
                                           "l2/workspace",
                                           "l2/tmp",
                                           NULL};
        dirs(base);
        put("l2/upper/root/etc/hosts", "127.0.0.1 localhost\n");
        int layer = open("l2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct buf snap = {0}, out = {0};
        CHECK(layerdiff_snapshot(layer, &snap) == 0);
        static const char *const mine[] = {"l2/upper/root/opt", "l2/upper/root/srv", NULL};
        dirs(mine);
        /* deletes a file of the image's layer below, and sbx's generated /etc/hosts */
        CHECK(mknod("l2/upper/root/opt/x", S_IFCHR | 0600, makedev(0, 0)) == 0);
        CHECK(unlink("l2/upper/root/etc/hosts") == 0 &&
              mknod("l2/upper/root/etc/hosts", S_IFCHR | 0600, makedev(0, 0)) == 0);
        put("l2/upper/root/opt/new", "n\n");
        CHECK(setxattr("l2/upper/root/srv", "user.overlay.opaque", "y", 1, 0) == 0);
        struct sbx_error e = {0};
        CHECK(run(layer, snap.data, snap.len, &out, &e) == 0);
        CHECK_STR(out.data, "5 opt/ 755\n"
                            "0 opt/new 644\n"
                            "0 opt/.wh.x 644\n"
                            "5 srv/ 755\n"
                            "0 srv/.wh..wh..opq 644\n"
                            "5 usr/ 755\n");
        buf_freep(&out);
        buf_freep(&snap);
        close(layer);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path) < 0 ? -1 : 0;
}

int main(void)
{
        char tmpl[] = "/tmp/sbx-test-layertar-XXXXXX";
        if (!mkdtemp(tmpl) || chdir(tmpl) < 0)
                return 1;
        /* the layer right after create: sbx's own */
        static const char *const base[] = {"newroot",
                                           "newroot/etc",
                                           "newroot/usr",
                                           "newroot/proc",
                                           "newroot/dev",
                                           "newroot/run",
                                           "newroot/home",
                                           "newroot/var",
                                           "newroot/var/tmp",
                                           "newroot/tmp",
                                           "newroot/workspace",
                                           "upper",
                                           "upper/usr",
                                           "work",
                                           "workspace",
                                           "tmp",
                                           NULL};
        dirs(base);
        put("newroot/etc/hosts", "127.0.0.1 localhost\n");
        put("newroot/etc/hostname", "sbx\n");
        if (symlink("usr/bin", "newroot/bin") < 0)
                printf("# cannot link\n");
        int layer = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct buf snap = {0};
        CHECK(layerdiff_snapshot(layer, &snap) == 0);

        /* the session's work */
        static const char *const mine[] = {
            "newroot/opt",     "newroot/root",        "newroot/root/.config", "newroot/var/lib",
            "upper/usr/local", "upper/usr/local/bin", "newroot/run/app",      NULL};
        dirs(mine);
        put("newroot/opt/x", "x\n");
        put("newroot/root/.config/y", "y\n");
        put("newroot/var/lib/z", "z\n");
        put("newroot/etc/myapp.conf", "mine\n");     /* /etc is generated per session: out */
        put("newroot/etc/hosts", "10.0.0.1 evil\n"); /* sbx's file, changed: left out */
        /* sbx's name made a directory (a new inode: the layer is a tmpfs, which never reuses
         * one; this temp dir may, so the directory is made before the file goes) */
        CHECK(mkdir("newroot/etc/hn", 0755) == 0 && unlink("newroot/etc/hostname") == 0 &&
              rename("newroot/etc/hn", "newroot/etc/hostname") == 0);
        put("newroot/etc/hostname/f", "f\n"); /* left out with it */
        put("newroot/run/app/pid", "1\n");
        put("newroot/var/tmp/t", "t\n");
        put("newroot/tmp/t", "t\n");
        put("newroot/usr/hidden", "under the mount\n");
        put("newroot/.wh.opt", "");
        put("newroot/opt/suid", "s\n");
        CHECK(chmod("newroot/opt/suid", 04755) == 0);
        put("newroot/opt/gone", "g\n");
        CHECK(unlink("newroot/opt/gone") == 0); /* its own file, deleted: simply absent */
        /* a 0/0 device is a whiteout only in an overlay upper (anybody may make one) */
        CHECK(mknod("newroot/opt/wo", S_IFCHR | 0600, makedev(0, 0)) == 0);
        (void)setxattr("newroot/var/lib", "user.overlay.opaque", "y", 1, 0);
        put("upper/usr/local/bin/tool", "#!/bin/sh\n");
        CHECK(chmod("upper/usr/local/bin/tool", 0755) == 0);
        CHECK(mknod("upper/usr/gone", S_IFCHR | 0600, makedev(0, 0)) == 0);

        struct buf out = {0};
        struct sbx_error e = {0};
        CHECK(run(layer, snap.data, snap.len, &out, &e) == 0);
        CHECK_STR(out.data, "5 opt/ 755\n"
                            "0 opt/suid 755\n"
                            "0 opt/x 644\n"
                            "5 root/ 755\n"
                            "5 root/.config/ 755\n"
                            "0 root/.config/y 644\n"
                            "5 var/lib/ 755\n"
                            "0 var/lib/z 644\n"
                            "5 usr/ 755\n"
                            "0 usr/.wh.gone 644\n"
                            "5 usr/local/ 755\n"
                            "5 usr/local/bin/ 755\n"
                            "0 usr/local/bin/tool 755\n");

        /* without a snapshot sbx's files would read as the session's: refused */
        e = (struct sbx_error){0};
        out.len = 0;
        CHECK(run(layer, "", 0, &out, &e) < 0);
        CHECK(e.exit_code == EXIT_UNSUPPORTED);
        /* a layer whose newroot/ is a symlink is not walked through */
        CHECK(rename("newroot", "nr") == 0 && symlink("nr", "newroot") == 0);
        e = (struct sbx_error){0};
        CHECK(run(layer, snap.data, snap.len, &out, &e) < 0);
        CHECK(e.exit_code != 0);
        buf_freep(&out);
        buf_freep(&snap);
        close(layer);
        test_overlay_root();
        CHECK(chdir("/") == 0 && nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
        return unit_done();
}
