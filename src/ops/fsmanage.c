/* SPDX-License-Identifier: MIT */
/*
 * The batch file operations of sbx serve (ops.h, ops_fs): info, mkdir, chmod, delete, move,
 * replace. They run in the confined helper like every op, so paths resolve in the session with
 * a session process's rights; the recursive delete also never follows a symlink itself (each
 * directory is opened O_NOFOLLOW from its parent's fd), so it removes a link, not its target.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/util.h"
#include "common.h"
#include "fsinfo.h"
#include "ops.h"

static void fs_names_freep(struct fs_names *t)
{
        fs_names_free(t);
}

/* mkdir -p: every missing component of path, 0755 (the last one's mode is set after). */
static int mkdir_p(const char *path)
{
        int r = ops_mkdirs(path, NULL);
        if (r < 0)
                return r;
        struct stat st;
        if (stat(path, &st) < 0)
                return negerrno();
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int set_perm(struct fs_names *names, const struct ops_fs_item *it, struct sbx_error *e)
{
        unsigned uid = (unsigned)-1, gid = (unsigned)-1;
        if (it->owner && it->owner[0] && fs_names_id(names, false, it->owner, &uid) < 0)
                return sbx_usage(e, "unknown owner '%s'", it->owner);
        if (it->group && it->group[0] && fs_names_id(names, true, it->group, &gid) < 0)
                return sbx_usage(e, "unknown group '%s'", it->group);
        if (it->mode && chmod(it->path, it->mode) < 0)
                return ops_fail_errno(e, errno, "failed to change the mode of '%s'", it->path);
        struct stat st;
        if (uid == (unsigned)-1 && gid == (unsigned)-1)
                return 0;
        if (lstat(it->path, &st) < 0)
                return ops_fail_errno(e, errno, "failed to change the owner of '%s'", it->path);
        /* asking for what is already there is not a change the session must be allowed */
        if ((uid == (unsigned)-1 || uid == st.st_uid) && (gid == (unsigned)-1 || gid == st.st_gid))
                return 0;
        if (lchown(it->path, uid, gid) < 0)
                return ops_fail_errno(e, errno, "failed to change the owner of '%s'", it->path);
        return 0;
}

static int remove_item(const struct ops_fs_item *it, bool dir, struct sbx_error *e)
{
        struct stat st;
        if (lstat(it->path, &st) < 0)
                return errno == ENOENT
                           ? 0
                           : ops_fail_errno(e, errno, "failed to delete '%s'", it->path);
        if (!dir) {
                if (S_ISDIR(st.st_mode))
                        return ops_fail_errno(e, EISDIR, "failed to delete '%s'", it->path);
                if (unlink(it->path) < 0 && errno != ENOENT)
                        return ops_fail_errno(e, errno, "failed to delete '%s'", it->path);
                return 0;
        }
        int r = ops_remove_at(AT_FDCWD, it->path, OPS_WALK_MAX_DEPTH);
        return r < 0 ? ops_fail_errno(e, r, "failed to delete '%s'", it->path) : 0;
}

static int move_item(const struct ops_fs_item *it, struct sbx_error *e)
{
        struct stat st;
        if (!it->dest || !it->dest[0])
                return sbx_usage(e, "move '%s': no destination", it->path);
        if (lstat(it->path, &st) < 0)
                return ops_fail_errno(e, errno, "failed to move '%s'", it->path);
        _cleanup_free_ char *parent = strdup(it->dest);
        if (!parent)
                return ops_oom(e);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = '\0';
                int r = mkdir_p(parent);
                if (r < 0)
                        return ops_fail_errno(e, r, "failed to create the parents of '%s'",
                                              it->dest);
        }
        /* RENAME_NOREPLACE: an existing destination is refused, also one made meanwhile */
        if (renameat2(AT_FDCWD, it->path, AT_FDCWD, it->dest, RENAME_NOREPLACE) < 0)
                return ops_fail_errno(e, errno, "failed to move '%s' to '%s'", it->path, it->dest);
        return 0;
}

static int replace_item(const struct ops_fs_item *it, struct buf *out, size_t i,
                        struct sbx_error *e)
{
        if (it->old_len == 0)
                return sbx_usage(e, "replace in '%s': the old text must not be empty", it->path);
        struct ops_edit_req req = {.path = it->path,
                                   .old_str = it->old_str,
                                   .old_len = it->old_len,
                                   .new_str = it->new_str ? it->new_str : "",
                                   .new_len = it->new_len,
                                   .replace_all = true,
                                   .json = true};
        _cleanup_buf_ struct buf res = {0};
        int r = ops_edit(&req, &res, e);
        unsigned long long n = 0;
        if (r < 0 && e->code && strcmp(e->code, "not_found") == 0 &&
            strncmp(e->message, "String not found in file", 24) == 0) {
                /* no occurrence is a count of 0, not a failure */
                *e = (struct sbx_error){0};
        } else if (r < 0)
                return r;
        else {
                const char *p = res.data ? strstr(res.data, "\"replacements\":") : NULL;
                n = p ? strtoull(p + 15, NULL, 10) : 0;
        }
        if ((r = buf_puts(out, i ? "," : "{")) == 0 && (r = json_cstr(out, it->path)) == 0)
                r = buf_printf(out, ":{\"replacedCount\":%llu}", n);
        return r < 0 ? ops_oom(e) : 0;
}

static int info_item(struct fs_names *names, const struct ops_fs_item *it, struct buf *out,
                     size_t i, struct sbx_error *e)
{
        _cleanup_buf_ struct buf abs = {0};
        int r = ops_path_abs(it->path, &abs);
        if (r < 0)
                return ops_fail_errno(e, r, "failed to resolve '%s'", it->path);
        if (buf_puts(out, i ? "," : "{") < 0 || json_cstr(out, it->path) < 0 ||
            buf_append(out, ":", 1) < 0)
                return ops_oom(e);
        r = fs_info_json(out, names, AT_FDCWD, it->path, abs.data);
        return r < 0 ? ops_fail_errno(e, r, "failed to read the metadata of '%s'", it->path) : 0;
}

int ops_fs(void *arg, struct buf *out, struct sbx_error *e)
{
        const struct ops_fs_req *req = arg;
        _cleanup_(fs_names_freep) struct fs_names names = {0};
        int r = 0;
        for (size_t i = 0; r == 0 && i < req->n; i++) {
                const struct ops_fs_item *it = &req->items[i];
                if (!it->path || !it->path[0])
                        return sbx_usage(e, "an empty path");
                switch (req->kind) {
                case OPS_FS_INFO:
                        r = info_item(&names, it, out, i, e);
                        break;
                case OPS_FS_MKDIR:
                        if ((r = mkdir_p(it->path)) < 0)
                                r = ops_fail_errno(e, r, "failed to create the directory '%s'",
                                                   it->path);
                        else {
                                struct ops_fs_item p = *it;
                                p.mode = it->mode ? it->mode : 0755;
                                r = set_perm(&names, &p, e);
                        }
                        break;
                case OPS_FS_CHMOD:
                        r = set_perm(&names, it, e);
                        break;
                case OPS_FS_RM_FILE:
                case OPS_FS_RM_DIR:
                        r = remove_item(it, req->kind == OPS_FS_RM_DIR, e);
                        break;
                case OPS_FS_MOVE:
                        r = move_item(it, e);
                        break;
                case OPS_FS_REPLACE:
                        r = replace_item(it, out, i, e);
                        break;
                }
        }
        if (r == 0 && (req->kind == OPS_FS_INFO || req->kind == OPS_FS_REPLACE))
                r = buf_puts(out, req->n ? "}\n" : "{}\n") < 0 ? ops_oom(e) : 0;
        return r;
}
