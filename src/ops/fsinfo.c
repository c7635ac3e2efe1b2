/* SPDX-License-Identifier: MIT */
/*
 * FileInfo objects for sbx serve's file endpoints. Owner and group names come from the
 * session's /etc/passwd and /etc/group, parsed by glibc's fgetpwent/fgetgrent: getpwuid()
 * would go through NSS, which loads the modules the session's nsswitch.conf names.
 */
#include "fsinfo.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/util.h"
#include "common.h"

#define FS_NAMES_MAX 4096u /* entries kept from the two files */

void fs_names_free(struct fs_names *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].name);
        free(t->v);
        *t = (struct fs_names){0};
}

static int names_add(struct fs_names *t, bool group, unsigned id, const char *name)
{
        if (t->n >= FS_NAMES_MAX)
                return 0;
        struct fs_name *v = realloc(t->v, (t->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        t->v = v;
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        t->v[t->n++] = (struct fs_name){.group = group, .id = id, .name = copy};
        return 0;
}

/* A missing or unreadable file leaves the ids numeric. */
static int names_load(struct fs_names *t)
{
        int r = 0;
        t->loaded = true;
        _cleanup_fclose_ FILE *pw = fopen("/etc/passwd", "re");
        for (struct passwd *p; r == 0 && pw && (p = fgetpwent(pw));)
                r = names_add(t, false, p->pw_uid, p->pw_name);
        _cleanup_fclose_ FILE *gr = fopen("/etc/group", "re");
        for (struct group *g; r == 0 && gr && (g = fgetgrent(gr));)
                r = names_add(t, true, g->gr_gid, g->gr_name);
        return r;
}

const char *fs_names_get(struct fs_names *t, bool group, unsigned id)
{
        if (!t->loaded && names_load(t) < 0)
                return NULL;
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].group == group && t->v[i].id == id)
                        return t->v[i].name;
        return NULL;
}

int fs_names_id(struct fs_names *t, bool group, const char *name, unsigned *ret)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(name, &end, 10);
        if (name[0] >= '0' && name[0] <= '9' && !*end && errno == 0 && v < (1ul << 32) - 1) {
                *ret = (unsigned)v;
                return 0;
        }
        if (!t->loaded && names_load(t) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].group == group && strcmp(t->v[i].name, name) == 0) {
                        *ret = t->v[i].id;
                        return 0;
                }
        return -ENOENT;
}

unsigned fs_mode_digits(unsigned mode)
{
        unsigned out = 0, scale = 1;
        for (mode &= 07777; mode; mode >>= 3, scale *= 10)
                out += (mode & 7) * scale;
        return out;
}

static const char *type_name(mode_t m)
{
        return S_ISREG(m) ? "file" : S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : "other";
}

static int id_json(struct buf *out, struct fs_names *names, bool group, unsigned id)
{
        const char *n = fs_names_get(names, group, id);
        return n ? json_cstr(out, n) : buf_printf(out, "\"%u\"", id);
}

int fs_info_json(struct buf *out, struct fs_names *names, int dirfd, const char *name,
                 const char *abs)
{
        struct statx sx;
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT,
                  STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
                return negerrno();
        char mt[21], ct[21];
        int64_t born = (sx.stx_mask & STATX_BTIME) ? sx.stx_btime.tv_sec : sx.stx_ctime.tv_sec;
        ops_format_time(sx.stx_mtime.tv_sec, mt);
        ops_format_time(born, ct);
        size_t mark = out->len;
        int r = buf_puts(out, "{\"path\":");
        if (r == 0)
                r = json_cstr(out, abs);
        if (r == 0)
                r = buf_printf(out,
                               ",\"type\":\"%s\",\"size\":%llu,\"modified_at\":\"%s\","
                               "\"created_at\":\"%s\",\"owner\":",
                               type_name(sx.stx_mode), (unsigned long long)sx.stx_size, mt, ct);
        if (r == 0)
                r = id_json(out, names, false, sx.stx_uid);
        if (r == 0)
                r = buf_puts(out, ",\"group\":");
        if (r == 0)
                r = id_json(out, names, true, sx.stx_gid);
        if (r == 0)
                r = buf_printf(out, ",\"mode\":%u}", fs_mode_digits(sx.stx_mode));
        if (r < 0 && out->data) /* nothing half-written stays */
                out->data[out->len = mark] = '\0';
        return r;
}
