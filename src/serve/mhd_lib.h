/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd, loaded by `sbx serve` alone: like libcurl (image/curl_lib.h), a linked
 * libmicrohttpd would be mapped and relocated by every sbx call, and it brings GnuTLS, nettle,
 * gmp, p11-kit and more; only serve speaks HTTP as a server.
 */
#pragma once

#include <microhttpd.h>

#include "shared/error.h"

/* The soname sbx is built against (ABI 12 since 0.9.x, the one Debian ships). */
#define MHD_LIB_SONAME "libmicrohttpd.so.12"

struct mhd_lib {
        typeof(MHD_start_daemon) *start_daemon;
        typeof(MHD_stop_daemon) *stop_daemon;
        typeof(MHD_lookup_connection_value) *lookup_connection_value;
        typeof(MHD_get_connection_values) *get_connection_values;
        typeof(MHD_create_response_from_buffer) *create_response_from_buffer;
        typeof(MHD_create_response_from_callback) *create_response_from_callback;
        typeof(MHD_add_response_header) *add_response_header;
        typeof(MHD_queue_response) *queue_response;
        typeof(MHD_destroy_response) *destroy_response;
        typeof(MHD_set_response_options) *set_response_options;
        typeof(MHD_get_connection_info) *get_connection_info;
        typeof(MHD_create_post_processor) *create_post_processor;
        typeof(MHD_post_process) *post_process;
        typeof(MHD_destroy_post_processor) *destroy_post_processor;
};

/* The loaded library (loaded once, kept), or NULL with *e set (exit 4). */
const struct mhd_lib *mhd_lib_load(struct sbx_error *e);
/* The library once loaded (serve loads it before anything else runs). */
const struct mhd_lib *mhd_lib(void);
