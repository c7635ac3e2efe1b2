/* SPDX-License-Identifier: MIT */
/* libsystemd's sd-bus through dlopen (sdbus_lib.h says why). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shared/macros.h"
#include "sdbus_lib.h"

static const struct {
        const char *name;
        size_t offset;
} sdbus_symbols[] = {
#define SYM(field, symbol)                                                                         \
        {                                                                                          \
#symbol, offsetof(struct sdbus_lib, field)                                         \
        }
    SYM(open_user, sd_bus_open_user),
    SYM(new_bus, sd_bus_new),
    SYM(set_address, sd_bus_set_address),
    SYM(start, sd_bus_start),
    SYM(flush_close_unref, sd_bus_flush_close_unref),
    SYM(message_new_method_call, sd_bus_message_new_method_call),
    SYM(message_append, sd_bus_message_append),
    SYM(message_open_container, sd_bus_message_open_container),
    SYM(message_close_container, sd_bus_message_close_container),
    SYM(message_read, sd_bus_message_read),
    SYM(message_unref, sd_bus_message_unref),
    SYM(call, sd_bus_call),
    SYM(match_signal, sd_bus_match_signal),
    SYM(process, sd_bus_process),
    SYM(wait, sd_bus_wait),
    SYM(error_free, sd_bus_error_free),
#undef SYM
};

_Static_assert(ARRAY_SIZE(sdbus_symbols) == sizeof(struct sdbus_lib) / sizeof(void (*)(void)),
               "every member of struct sdbus_lib has its symbol");

/* Written once, on the first use in the process, and only read after. */
static struct sdbus_lib lib;
static bool loaded;

const struct sdbus_lib *sdbus_lib_load(char *why, size_t n)
{
        if (loaded)
                return &lib;
        void *handle = dlopen(SDBUS_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                snprintf(why, n, "%s", dlerror());
                return NULL;
        }
        struct sdbus_lib found;
        for (size_t i = 0; i < ARRAY_SIZE(sdbus_symbols); i++) {
                void *sym = dlsym(handle, sdbus_symbols[i].name);
                if (!sym) {
                        snprintf(why, n, "%s: %s", SDBUS_LIB_SONAME, dlerror());
                        dlclose(handle);
                        return NULL;
                }
                memcpy((char *)&found + sdbus_symbols[i].offset, &sym, sizeof(sym));
        }
        lib = found;
        loaded = true;
        return &lib;
}
