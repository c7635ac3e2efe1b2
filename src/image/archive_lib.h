/* SPDX-License-Identifier: MIT */
/*
 * libarchive, loaded only when an image is imported. Linked normally it costs every sbx call
 * about 1.7 ms before main() (it pulls in libxml2, ICU and libstdc++: 13 more objects to map
 * and relocate), which is most of what `sbx exec ID true` would spend; systemd loads it the
 * same way (dlopen_libarchive). The table's types come from <archive.h>, so a call through it
 * is checked like a direct one.
 */
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "shared/error.h"

/* The soname sbx is built against (libarchive's ABI has been 13 since 3.0, 2011). */
#define ARCHIVE_LIB_SONAME "libarchive.so.13"

struct archive_lib {
        typeof(archive_read_new) *read_new;
        typeof(archive_read_free) *read_free;
        typeof(archive_read_support_format_tar) *support_format_tar;
        typeof(archive_read_support_format_gnutar) *support_format_gnutar;
        typeof(archive_read_support_filter_gzip) *support_filter_gzip;
        typeof(archive_read_support_filter_zstd) *support_filter_zstd;
        typeof(archive_read_support_filter_xz) *support_filter_xz;
        typeof(archive_read_support_filter_bzip2) *support_filter_bzip2;
        typeof(archive_read_open) *read_open;
        typeof(archive_read_open_fd) *read_open_fd;
        typeof(archive_read_next_header) *read_next_header;
        typeof(archive_read_data_block) *read_data_block;
        typeof(archive_error_string) *error_string;
        typeof(archive_set_error) *set_error;
        typeof(archive_entry_pathname) *entry_pathname;
        typeof(archive_entry_filetype) *entry_filetype;
        typeof(archive_entry_size) *entry_size;
        typeof(archive_entry_perm) *entry_perm;
        typeof(archive_entry_uid) *entry_uid;
        typeof(archive_entry_gid) *entry_gid;
        typeof(archive_entry_mtime) *entry_mtime;
        typeof(archive_entry_symlink) *entry_symlink;
        typeof(archive_entry_hardlink) *entry_hardlink;
};

/*
 * The loaded library (loaded on the first call, kept for the life of the process), or NULL
 * with *e set: "image import needs libarchive.so.13: <dlerror>".
 */
const struct archive_lib *archive_lib_load(struct sbx_error *e);

/* The library (loaded on the first call) in *ret_la, and a new reader with the formats and
 * filters of what import reads: tar (ustar, pax, GNU) with gzip, zstd, xz or bzip2, each built
 * into libarchive, never a filter that runs a program. NULL with *e set when the library
 * cannot be loaded, lacks one of them, or memory is short. */
struct archive *archive_lib_reader(const struct archive_lib **ret_la, struct sbx_error *e);

/* For _cleanup_: free a reader of archive_lib_reader(). */
void archive_lib_freep(struct archive **a);
