/* SPDX-License-Identifier: MIT */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sbx_error_code_canonical(const char *c)
{
        static const char *const codes[] = {
            "usage",     "session_not_found", "exists",      "not_found",
            "ambiguous", "not_text",          "unsupported", "limit",
            "internal",  "unavailable",       "paused",      "not_paused"};
        for (size_t i = 0; c && i < ARRAY_SIZE(codes); i++)
                if (strcmp(c, codes[i]) == 0)
                        return codes[i];
        return "internal";
}

void sbx_error_pack(const struct sbx_error *e, struct sbx_wire_error *w)
{
        *w = (struct sbx_wire_error){.exit_code = e->exit_code};
        snprintf(w->code, sizeof(w->code), "%s", e->code ? e->code : "internal");
        snprintf(w->message, sizeof(w->message), "%s", e->message);
}

void sbx_error_unpack(struct sbx_wire_error *w, struct sbx_error *e)
{
        w->code[sizeof(w->code) - 1] = '\0';
        w->message[sizeof(w->message) - 1] = '\0';
        e->exit_code = w->exit_code;
        e->code = sbx_error_code_canonical(w->code);
        snprintf(e->message, sizeof(e->message), "%s", w->message);
}

/* in parentheses: error.h makes sbx_fail a macro for the analyzer */
int(sbx_fail)(struct sbx_error *e, int exit_code, const char *code, int errnum, const char *fmt,
              ...)
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
