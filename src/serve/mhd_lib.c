/* SPDX-License-Identifier: MIT */
/* libmicrohttpd through dlopen (mhd_lib.h says why). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "shared/macros.h"
#include "mhd_lib.h"

static const struct {
        const char *name;
        size_t offset;
} mhd_symbols[] = {
#define SYM(field, symbol)                                                                         \
        {                                                                                          \
#symbol, offsetof(struct mhd_lib, field)                                           \
        }
    SYM(start_daemon, MHD_start_daemon),
    SYM(stop_daemon, MHD_stop_daemon),
    SYM(lookup_connection_value, MHD_lookup_connection_value),
    SYM(get_connection_values, MHD_get_connection_values),
    SYM(create_response_from_buffer, MHD_create_response_from_buffer),
    SYM(create_response_from_callback, MHD_create_response_from_callback),
    SYM(add_response_header, MHD_add_response_header),
    SYM(queue_response, MHD_queue_response),
    SYM(destroy_response, MHD_destroy_response),
    SYM(set_response_options, MHD_set_response_options),
    SYM(get_connection_info, MHD_get_connection_info),
    SYM(create_post_processor, MHD_create_post_processor),
    SYM(post_process, MHD_post_process),
    SYM(destroy_post_processor, MHD_destroy_post_processor),
#undef SYM
};

_Static_assert(ARRAY_SIZE(mhd_symbols) == sizeof(struct mhd_lib) / sizeof(void (*)(void)),
               "every member of struct mhd_lib has its symbol");

/* Written once, before the daemon starts its threads, and only read after. */
static struct mhd_lib lib;
static bool loaded;

const struct mhd_lib *mhd_lib(void)
{
        return loaded ? &lib : NULL;
}

const struct mhd_lib *mhd_lib_load(struct sbx_error *e)
{
        if (loaded)
                return &lib;
        void *handle = dlopen(MHD_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0, "sbx serve needs %s: %s",
                         MHD_LIB_SONAME, dlerror());
                return NULL;
        }
        struct mhd_lib found;
        for (size_t i = 0; i < ARRAY_SIZE(mhd_symbols); i++) {
                void *sym = dlsym(handle, mhd_symbols[i].name);
                if (!sym) {
                        sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0, "sbx serve needs %s: %s",
                                 MHD_LIB_SONAME, dlerror());
                        dlclose(handle);
                        return NULL;
                }
                memcpy((char *)&found + mhd_symbols[i].offset, &sym, sizeof(sym));
        }
        lib = found;
        loaded = true;
        return &lib;
}
