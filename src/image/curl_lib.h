/* SPDX-License-Identifier: MIT */
/*
 * libcurl, loaded only when an image is pulled: like libarchive (archive_lib.h), a linked
 * libcurl would be mapped and relocated by every sbx call (it brings OpenSSL, nghttp2, ssh2,
 * ldap and GSSAPI), and only `image pull` speaks HTTP. curl is used for what it does well and
 * sbx should not redo: TLS with the system's CA store, proxies from the environment, redirects,
 * chunked and compressed transfer coding.
 */
#pragma once

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "shared/error.h"

/* The soname sbx is built against (libcurl's ABI has been 4 since 7.16, 2006). */
#define CURL_LIB_SONAME "libcurl.so.4"

struct curl_lib {
        typeof(curl_easy_init) *easy_init;
        typeof(curl_easy_cleanup) *easy_cleanup;
        typeof(curl_easy_reset) *easy_reset;
        typeof(curl_easy_setopt) *easy_setopt;
        typeof(curl_easy_perform) *easy_perform;
        typeof(curl_easy_getinfo) *easy_getinfo;
        typeof(curl_easy_strerror) *easy_strerror;
        typeof(curl_easy_escape) *easy_escape;
        typeof(curl_free) *free;
        typeof(curl_slist_append) *slist_append;
        typeof(curl_slist_free_all) *slist_free_all;
};

/* The loaded library (loaded on the first call, kept for the life of the process), or NULL
 * with *e set: "image pull needs libcurl.so.4: <dlerror>" (exit 4). */
const struct curl_lib *curl_lib_load(struct sbx_error *e);
