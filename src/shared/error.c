/* SPDX-License-Identifier: MIT */
#include "error.h"

#include <stdarg.h>
#include <string.h>

const char *sbx_error_code_canonical(const char *c)
{
        static const char *const codes[] = {"usage",     "session_not_found", "exists",
                                            "not_found", "ambiguous",         "not_text",
                                            "unsupported", "limit",           "internal",
                                            "unavailable", "paused",       "not_paused"};
        for (size_t i = 0; c && i < ARRAY_SIZE(codes); i++)
                if (strcmp(c, codes[i]) == 0)
                        return codes[i];
        return "internal";
}

int sbx_fail(struct sbx_error *e, int exit_code, const char *code, int errnum, const char *fmt, ...)
{
        int ret = errnum > 0 ? -errnum : (errnum < 0 ? errnum : -EINVAL);

        if (!e || e->exit_code != 0)
                return ret;
        e->exit_code = exit_code;
        e->code = code;

        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        if (errnum != 0 && n >= 0 && (size_t)n < sizeof(e->message))
                snprintf(e->message + n, sizeof(e->message) - (size_t)n, ": %s",
                         strerror(errnum > 0 ? errnum : -errnum));
        return ret;
}
