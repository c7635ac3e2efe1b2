/* SPDX-License-Identifier: MIT */
/* libarchive through dlopen (archive_lib.h says why). */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "shared/macros.h"
#include "archive_lib.h"

static const struct {
        const char *name;
        size_t offset;
} archive_symbols[] = {
#define SYM(field, symbol)                                                                         \
        {                                                                                          \
#symbol, offsetof(struct archive_lib, field)                                       \
        }
    SYM(read_new, archive_read_new),
    SYM(read_free, archive_read_free),
    SYM(support_format_tar, archive_read_support_format_tar),
    SYM(support_format_gnutar, archive_read_support_format_gnutar),
    SYM(support_filter_gzip, archive_read_support_filter_gzip),
    SYM(support_filter_zstd, archive_read_support_filter_zstd),
    SYM(support_filter_xz, archive_read_support_filter_xz),
    SYM(support_filter_bzip2, archive_read_support_filter_bzip2),
    SYM(read_open, archive_read_open),
    SYM(read_open_fd, archive_read_open_fd),
    SYM(read_next_header, archive_read_next_header),
    SYM(read_data_block, archive_read_data_block),
    SYM(error_string, archive_error_string),
    SYM(set_error, archive_set_error),
    SYM(entry_pathname, archive_entry_pathname),
    SYM(entry_filetype, archive_entry_filetype),
    SYM(entry_size, archive_entry_size),
    SYM(entry_perm, archive_entry_perm),
    SYM(entry_uid, archive_entry_uid),
    SYM(entry_gid, archive_entry_gid),
    SYM(entry_mtime, archive_entry_mtime),
    SYM(entry_symlink, archive_entry_symlink),
    SYM(entry_hardlink, archive_entry_hardlink),
#undef SYM
};

_Static_assert(ARRAY_SIZE(archive_symbols) == sizeof(struct archive_lib) / sizeof(void (*)(void)),
               "every member of struct archive_lib has its symbol");

/* Written once, on the first import of the process, and only read after: the library stays
 * mapped until exit, like a linked one. */
static struct archive_lib lib;
static bool loaded;

const struct archive_lib *archive_lib_load(struct sbx_error *e)
{
        if (loaded)
                return &lib;
        void *handle = dlopen(ARCHIVE_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                sbx_unsupported(e, 0, "image import needs %s: %s", ARCHIVE_LIB_SONAME, dlerror());
                return NULL;
        }
        struct archive_lib found;
        for (size_t i = 0; i < ARRAY_SIZE(archive_symbols); i++) {
                void *sym = dlsym(handle, archive_symbols[i].name);
                if (!sym) {
                        sbx_unsupported(e, 0, "image import needs %s: %s", ARCHIVE_LIB_SONAME,
                                        dlerror());
                        dlclose(handle);
                        return NULL;
                }
                memcpy((char *)&found + archive_symbols[i].offset, &sym, sizeof(sym));
        }
        lib = found;
        loaded = true;
        return &lib;
}

struct archive *archive_lib_reader(const struct archive_lib **ret_la, struct sbx_error *e)
{
        const struct archive_lib *la = *ret_la = archive_lib_load(e);
        if (!la)
                return NULL;
        struct archive *a = la->read_new();
        if (!a) {
                sbx_internal(e, ENOMEM, "out of memory");
                return NULL;
        }
        /* ARCHIVE_WARN from a filter: this libarchive lacks the codec and would run an external
         * program (zstd -d, xz -d...) on the archive instead. Never on hostile data. */
        const struct {
                const char *what;
                int got;
        } support[] = {
            {"gzip", la->support_filter_gzip(a)}, {"zstd", la->support_filter_zstd(a)},
            {"xz", la->support_filter_xz(a)},     {"bzip2", la->support_filter_bzip2(a)},
            {"tar", la->support_format_tar(a)},   {"GNU tar", la->support_format_gnutar(a)},
        };
        for (size_t i = 0; i < ARRAY_SIZE(support); i++)
                if (support[i].got != ARCHIVE_OK) {
                        sbx_unsupported(e, 0,
                                        "image import needs %s with built-in %s support (this one "
                                        "would run an external program or lacks it)",
                                        ARCHIVE_LIB_SONAME, support[i].what);
                        la->read_free(a);
                        return NULL;
                }
        return a;
}

void archive_lib_freep(struct archive **a)
{
        /* a reader exists only once the library is loaded */
        if (*a)
                lib.read_free(*a);
}
