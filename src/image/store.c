/* SPDX-License-Identifier: MIT */
/*
 * The image store (docs/DESIGN.md, "Images"):
 *
 *   $STORE/lock                  flock(LOCK_EX) around import and rm
 *   $STORE/layers/<hex>/         one unpacked layer, named by the sha256 of its blob
 *   $STORE/images/<id>.json      one image: its layers (lowest first), Env, WorkingDir, size;
 *                                a session holds flock(LOCK_SH) on it for its whole life
 *   $STORE/tags/<name>:<tag>     symlink -> <id> ('/' of the name stored as '+'); never followed
 *   $STORE/tmp/                  imports in progress; emptied under the lock
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../config/config-internal.h"
#include "shared/macros.h"
#include "shared/util.h"
#include "image-internal.h"

int strv_add(char ***v, char *s)
{
        size_t n = strv_len(*v);
        char **nv = realloc(*v, (n + 2) * sizeof(char *));
        if (!nv)
                return -ENOMEM;
        nv[n] = s;
        nv[n + 1] = NULL;
        *v = nv;
        return 0;
}

size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

void image_info_free(struct image_info *i)
{
        free(i->name);
        free(i->tag);
        strv_freep(&i->layers);
        strv_freep(&i->env);
        free(i->workdir);
        free(i->base);
        *i = (struct image_info){0};
}

int image_store_path(char **ret)
{
        const char *s = getenv("SBX_IMAGE_STORE");
        char *p = NULL;
        if (s && s[0]) {
                if (s[0] != '/')
                        return -EINVAL;
                p = strdup(s);
        } else if (geteuid() == 0)
                p = strdup("/var/lib/sbx");
        else if ((s = getenv("XDG_DATA_HOME")) && s[0] == '/') {
                if (asprintf(&p, "%s/sbx", s) < 0)
                        p = NULL;
        } else {
                const char *home = getenv("HOME");
                struct passwd *pw = (!home || home[0] != '/') ? getpwuid(geteuid()) : NULL;
                if (pw)
                        home = pw->pw_dir;
                if (!home || home[0] != '/')
                        return -ENOENT;
                if (asprintf(&p, "%s/.local/share/sbx", home) < 0)
                        p = NULL;
        }
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* mkdir -p: parents 0755, the store itself 0700. */
static int mkdir_parents(const char *path)
{
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(copy, 0700) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int image_store_open(bool create, int *ret_fd, struct sbx_error *e)
{
        _cleanup_free_ char *path = NULL;
        int r = image_store_path(&path);
        if (r == -EINVAL)
                return sbx_usage(e, "SBX_IMAGE_STORE must be an absolute path");
        if (r < 0)
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", -r,
                                "cannot find the image store (set SBX_IMAGE_STORE)");
        if (create && (r = mkdir_parents(path)) < 0)
                return sbx_unsupported(e, -r, "failed to create the image store '%s'", path);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT
                           ? sbx_fail(e, EXIT_FAILED, "not_found", 0,
                                      "no image store at '%s': import an image "
                                      "first ('sbx image import')",
                                      path)
                           : sbx_unsupported(e, errno, "failed to open the image store '%s'", path);
        /* Like the runtime dir: the caller's own, not writable by anybody else. */
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))
                return sbx_unsupported(e, 0,
                                       "refusing the image store '%s': it must be a directory "
                                       "owned by uid %u and writable only by it",
                                       path, (unsigned)geteuid());
        static const char *const dirs[] = {"layers", "images", "tags", "tmp"};
        for (size_t i = 0; create && i < ARRAY_SIZE(dirs); i++)
                if (mkdirat(fd, dirs[i], 0700) < 0 && errno != EEXIST)
                        return sbx_unsupported(e, errno, "failed to create '%s/%s'", path, dirs[i]);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int store_lock(int storefd, int *ret_lockfd, struct sbx_error *e)
{
        _cleanup_close_ int fd =
            openat(storefd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || RETRY_EINTR(flock(fd, LOCK_EX)) < 0)
                return sbx_internal(e, errno, "failed to lock the image store");
        *ret_lockfd = TAKE_FD(fd);
        return 0;
}

int store_tag_file(const char *name, const char *tag, char *out, size_t n)
{
        int len = snprintf(out, n, "%s:%s", name, tag);
        if (len < 0 || (size_t)len >= n)
                return -ENAMETOOLONG;
        for (char *p = out; *p; p++)
                if (*p == '/')
                        *p = '+';
        return 0;
}

int store_tag_get(int storefd, const char *name, const char *tag, char id[DIGEST_HEX_LEN + 1])
{
        char file[512], path[520];
        if (store_tag_file(name, tag, file, sizeof(file)) < 0)
                return -ENAMETOOLONG;
        snprintf(path, sizeof(path), "tags/%s", file);
        ssize_t n = readlinkat(storefd, path, id, DIGEST_HEX_LEN + 1);
        if (n < 0)
                return -errno;
        if (n != DIGEST_HEX_LEN)
                return -EINVAL;
        id[n] = '\0';
        return digest_hex_valid(id) ? 0 : -EINVAL;
}

int store_tag_set(int storefd, const char *name, const char *tag, const char *id)
{
        char file[512], path[520], tmp[540];
        if (store_tag_file(name, tag, file, sizeof(file)) < 0)
                return -ENAMETOOLONG;
        snprintf(path, sizeof(path), "tags/%s", file);
        snprintf(tmp, sizeof(tmp), "tmp/tag.%d", (int)getpid());
        (void)unlinkat(storefd, tmp, 0);
        if (symlinkat(id, storefd, tmp) < 0 || renameat(storefd, tmp, storefd, path) < 0) {
                int r = -errno;
                (void)unlinkat(storefd, tmp, 0);
                return r;
        }
        return 0;
}

static int json_strv(struct json_object *o, const char *key, char ***ret)
{
        struct json_object *a;
        if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
                return -EINVAL;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(a, i));
                char *copy = s ? strdup(s) : NULL;
                if (!copy || strv_add(ret, copy) < 0) {
                        free(copy);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* The only bases a record may name: "host" (a commit of a host-base session), "rootfs:" and a
 * directory as --rootfs takes it (absolute, normal, no "..", not "/"). */
static bool base_valid(const char *b)
{
        _cleanup_free_ char *norm = NULL;
        if (strcmp(b, "host") == 0)
                return true;
        return strncmp(b, "rootfs:", 7) == 0 && path_normalize(b + 7, &norm) == 0 &&
               strcmp(norm, b + 7) == 0 && strcmp(norm, "/") != 0;
}

int store_record_read(int storefd, const char *id, struct image_info *ret)
{
        char path[128];
        snprintf(path, sizeof(path), "images/%s.json", id);
        _cleanup_buf_ struct buf b = {0};
        int r = read_file_at(storefd, path, &b, IMAGE_MAX_JSON);
        if (r < 0)
                return r;
        struct json_object *o = json_tokener_parse(b.data ? b.data : "");
        if (!o)
                return -EINVAL;
        struct image_info i = {0};
        memcpy(i.id, id, DIGEST_HEX_LEN + 1);
        struct json_object *v;
        r = json_strv(o, "layers", &i.layers);
        if (r == 0)
                r = json_strv(o, "env", &i.env);
        if (r == 0 && json_object_object_get_ex(o, "workdir", &v) &&
            json_object_is_type(v, json_type_string) &&
            !(i.workdir = strdup(json_object_get_string(v))))
                r = -ENOMEM;
        if (r == 0 && json_object_object_get_ex(o, "base", &v) &&
            json_object_is_type(v, json_type_string) &&
            !(i.base = strdup(json_object_get_string(v))))
                r = -ENOMEM;
        if (json_object_object_get_ex(o, "size", &v))
                i.size = (uint64_t)json_object_get_int64(v);
        if (json_object_object_get_ex(o, "created", &v))
                i.created_at = json_object_get_int64(v);
        json_object_put(o);
        for (size_t k = 0; r == 0 && i.layers && i.layers[k]; k++)
                if (!digest_hex_valid(i.layers[k]))
                        r = -EINVAL;
        if (r == 0 && (!i.layers || !i.layers[0]))
                r = -EINVAL;
        if (r == 0 && i.base && !base_valid(i.base))
                r = -EINVAL;
        if (r < 0) {
                image_info_free(&i);
                return r;
        }
        *ret = i;
        return 0;
}

int store_record_write(int storefd, const struct image_info *i)
{
        _cleanup_buf_ struct buf b = {0};
        buf_puts(&b, "{\"version\":1,\"layers\":[");
        for (size_t k = 0; i->layers[k]; k++) {
                buf_puts(&b, k ? "," : "");
                json_cstr(&b, i->layers[k]);
        }
        buf_puts(&b, "],\"env\":[");
        for (size_t k = 0; i->env && i->env[k]; k++) {
                buf_puts(&b, k ? "," : "");
                json_cstr(&b, i->env[k]);
        }
        buf_puts(&b, "],\"workdir\":");
        if (i->workdir)
                json_cstr(&b, i->workdir);
        else
                buf_puts(&b, "null");
        if (i->base) {
                buf_puts(&b, ",\"base\":");
                json_cstr(&b, i->base);
        }
        buf_printf(&b, ",\"size\":%llu,\"created\":%lld}\n", (unsigned long long)i->size,
                   (long long)i->created_at);
        if (!b.data)
                return -ENOMEM;
        char path[128];
        snprintf(path, sizeof(path), "images/%s.json", i->id);
        return write_file_atomic_at(storefd, path, b.data, b.len, 0600);
}

/* Open a directory of a tree being removed and make it ours to empty: as a user, an image's
 * directory may be 0555 (we own it; root needs no write bit). */
static int open_to_empty(int parentfd, const char *name)
{
        bool user = geteuid() != 0;
        int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES && user) {
                struct stat st;
                if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                if (fchmodat(parentfd, name, 0700, 0) < 0)
                        return -errno;
                fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return -errno;
        if (user)
                (void)fchmod(fd, 0700); /* not ours: the unlinks below say so */
        return fd;
}

/*
 * One pass over directory fd: remove every entry that can go now. Returns 0 when the
 * directory is empty, 1 with the first subdirectory that is not empty open in *ret_child
 * (everything read before it is gone), or -errno.
 */
static int empty_dir_pass(int fd, int *ret_child)
{
        int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return -errno;
        _cleanup_closedir_ DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -errno;
        }
        rewinddir(d); /* the dup shares fd's offset: read from the start */
        for (;;) {
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de)
                        return errno ? -errno : 0;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
                        continue;
                int unlink_err = errno;
                if (unlink_err != EISDIR && unlink_err != EPERM)
                        return -unlink_err;
                if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        continue;
                if (errno == ENOTDIR)
                        return -unlink_err;
                if (errno != ENOTEMPTY && errno != EEXIST)
                        return -errno;
                int child = open_to_empty(fd, de->d_name);
                if (child < 0)
                        return child;
                *ret_child = child;
                return 1;
        }
}

/*
 * Depth first with a bounded number of open fds, whatever the depth (a layer may be 2,000
 * directories deep): only the current directory is open; its parent is left and found again
 * through "..", checked to be the directory it came from, and read again from its start
 * (what was read before the descent is gone). The tree never leaves its filesystem: a mount
 * point is not descended into.
 */
int store_rmtree(int dirfd, const char *name)
{
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        _cleanup_close_ int cur = open_to_empty(dirfd, name);
        if (cur < 0)
                return cur;
        struct stat top;
        if (fstat(cur, &top) < 0)
                return -errno;
        _cleanup_free_ ino_t *up = NULL; /* the inode of each directory above cur */
        size_t depth = 0, cap = 0;
        for (;;) {
                int child = -1;
                int r = empty_dir_pass(cur, &child);
                if (r < 0)
                        return r;
                if (r == 1) {
                        _cleanup_close_ int c = child;
                        struct stat st;
                        if (fstat(c, &st) < 0)
                                return -errno;
                        if (st.st_dev != top.st_dev)
                                return -EXDEV;
                        if (depth == cap) {
                                size_t ncap = cap ? 2 * cap : 64;
                                ino_t *n = realloc(up, ncap * sizeof(*up));
                                if (!n)
                                        return -ENOMEM;
                                up = n;
                                cap = ncap;
                        }
                        struct stat self;
                        if (fstat(cur, &self) < 0)
                                return -errno;
                        up[depth++] = self.st_ino;
                        closep(&cur);
                        cur = TAKE_FD(c);
                        continue;
                }
                if (depth == 0)
                        break;
                _cleanup_close_ int parent =
                    openat(cur, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (parent < 0 || fstat(parent, &st) < 0)
                        return -errno;
                if (st.st_dev != top.st_dev || st.st_ino != up[--depth])
                        return -ESTALE; /* moved while we were below it */
                closep(&cur);
                cur = TAKE_FD(parent);
        }
        closep(&cur);
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* Names in dir `sub` of the store, or NULL. */
static char **list_dir(int storefd, const char *sub)
{
        int fd = openat(storefd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return NULL;
        }
        char **v = NULL;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char *s = strdup(de->d_name);
                if (!s || strv_add(&v, s) < 0) {
                        free(s);
                        break;
                }
        }
        return v;
}

static bool strv_has(char *const *v, const char *s)
{
        for (size_t i = 0; v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

static void keep_first(int *r, int k)
{
        if (k < 0 && *r == 0)
                *r = k;
}

int store_gc(int storefd)
{
        int r = 0;
        _cleanup_strv_ char **tmp = list_dir(storefd, "tmp");
        _cleanup_close_ int tmpfd = openat(storefd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tmpfd < 0)
                return -errno;
        for (size_t i = 0; tmp && tmp[i]; i++)
                keep_first(&r, store_rmtree(tmpfd, tmp[i]));

        /* records that no tag names and no session holds */
        _cleanup_strv_ char **tags = list_dir(storefd, "tags"),
                            **records = list_dir(storefd, "images");
        _cleanup_strv_ char **named = NULL, **live_layers = NULL;
        for (size_t i = 0; tags && tags[i]; i++) {
                char path[600], id[DIGEST_HEX_LEN + 1];
                snprintf(path, sizeof(path), "tags/%s", tags[i]);
                ssize_t n = readlinkat(storefd, path, id, sizeof(id));
                if (n == DIGEST_HEX_LEN) {
                        id[n] = '\0';
                        char *s = strdup(id);
                        if (!s || strv_add(&named, s) < 0) {
                                free(s);
                                return -ENOMEM; /* remove nothing */
                        }
                }
        }
        for (size_t i = 0; records && records[i]; i++) {
                char id[DIGEST_HEX_LEN + 1], path[128];
                if (strlen(records[i]) != DIGEST_HEX_LEN + 5)
                        continue;
                snprintf(id, sizeof(id), "%.64s", records[i]);
                snprintf(path, sizeof(path), "images/%s", records[i]);
                if (!strv_has(named, id)) {
                        _cleanup_close_ int fd =
                            openat(storefd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
                                if (unlinkat(storefd, path, 0) < 0)
                                        keep_first(&r, -errno);
                                continue;
                        }
                }
                struct image_info info;
                int rr = store_record_read(storefd, id, &info);
                if (rr < 0)
                        return rr; /* unreadable: keep every layer */
                for (size_t k = 0; info.layers[k]; k++) {
                        char *s = strdup(info.layers[k]);
                        if (!s || strv_add(&live_layers, s) < 0) {
                                free(s);
                                image_info_free(&info);
                                return -ENOMEM;
                        }
                }
                image_info_free(&info);
        }
        _cleanup_strv_ char **layers = list_dir(storefd, "layers");
        _cleanup_close_ int layersfd =
            openat(storefd, "layers", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* moved out of layers/ first: a half-removed layer must never look complete */
        if (layersfd < 0)
                return -errno;
        for (size_t i = 0; layers && layers[i]; i++) {
                if (strv_has(live_layers, layers[i]))
                        continue;
                char gone[128];
                snprintf(gone, sizeof(gone), "gc-%.64s", layers[i]);
                if (renameat(layersfd, layers[i], tmpfd, gone) < 0)
                        keep_first(&r, -errno);
                else
                        keep_first(&r, store_rmtree(tmpfd, gone));
        }
        return r;
}

int store_space_check(int fd, uint64_t *ret_reserve)
{
        struct statvfs sv;
        if (fstatvfs(fd, &sv) < 0)
                return -errno;
        uint64_t unit = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
        uint64_t reserve = (uint64_t)sv.f_blocks * unit / 100;
        if (reserve < STORE_RESERVE_MIN)
                reserve = STORE_RESERVE_MIN;
        *ret_reserve = reserve;
        return (uint64_t)sv.f_bavail * unit >= reserve ? 0 : -ENOSPC;
}

bool store_all_zero(const void *p, size_t n)
{
        const char *c = p;
        return n == 0 || (c[0] == 0 && memcmp(c, c + 1, n - 1) == 0);
}
