/* SPDX-License-Identifier: MIT */
/* libcurl through dlopen (curl_lib.h says why). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "shared/macros.h"
#include "curl_lib.h"

static const struct {
        const char *name;
        size_t offset;
} curl_symbols[] = {
#define SYM(field, symbol)                                                                         \
        {                                                                                          \
#symbol, offsetof(struct curl_lib, field)                                          \
        }
    SYM(easy_init, curl_easy_init),
    SYM(easy_cleanup, curl_easy_cleanup),
    SYM(easy_reset, curl_easy_reset),
    SYM(easy_setopt, curl_easy_setopt),
    SYM(easy_perform, curl_easy_perform),
    SYM(easy_getinfo, curl_easy_getinfo),
    SYM(easy_strerror, curl_easy_strerror),
    SYM(easy_escape, curl_easy_escape),
    SYM(free, curl_free),
    SYM(slist_append, curl_slist_append),
    SYM(slist_free_all, curl_slist_free_all),
#undef SYM
};

_Static_assert(ARRAY_SIZE(curl_symbols) == sizeof(struct curl_lib) / sizeof(void (*)(void)),
               "every member of struct curl_lib has its symbol");

/* Written once, on the first pull of the process, and only read after. */
static struct curl_lib lib;
static bool loaded;

const struct curl_lib *curl_lib_load(struct sbx_error *e)
{
        if (loaded)
                return &lib;
        void *handle = dlopen(CURL_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0, "image pull needs %s: %s",
                         CURL_LIB_SONAME, dlerror());
                return NULL;
        }
        struct curl_lib found;
        for (size_t i = 0; i < ARRAY_SIZE(curl_symbols); i++) {
                void *sym = dlsym(handle, curl_symbols[i].name);
                if (!sym) {
                        sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0, "image pull needs %s: %s",
                                 CURL_LIB_SONAME, dlerror());
                        dlclose(handle);
                        return NULL;
                }
                memcpy((char *)&found + curl_symbols[i].offset, &sym, sizeof(sym));
        }
        lib = found;
        loaded = true;
        return &lib;
}
