/* SPDX-License-Identifier: MIT */
/* The execd file routes (files*.c): upload, download, info, search, replace, mkdir, delete, move. */
#include "serve-internal.h"

const struct serve_route serve_file_routes[] = {
    {0},
};
