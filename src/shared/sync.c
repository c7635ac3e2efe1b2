/* SPDX-License-Identifier: MIT */
#include "sync.h"

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "macros.h"

struct sync_msg {
        int32_t ok;
        int32_t exit_code;
        char code[32];
        char message[sizeof(((struct sbx_error *)0)->message)];
};

int sync_send_ok(int fd)
{
        struct sync_msg m = {.ok = 1};
        return RETRY_EINTR(send(fd, &m, sizeof(m), MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

int sync_send_error(int fd, const struct sbx_error *e)
{
        struct sync_msg m = {.ok = 0, .exit_code = e->exit_code ? e->exit_code : EXIT_SBX_FAILED};
        snprintf(m.code, sizeof(m.code), "%s", e->code ? e->code : "internal");
        snprintf(m.message, sizeof(m.message), "%s", e->message);
        return RETRY_EINTR(send(fd, &m, sizeof(m), MSG_NOSIGNAL)) < 0 ? negerrno() : 0;
}

/* The machine codes of SPEC.md; a received code is mapped back to one of these literals. */
static const char *known_code(const char *c)
{
        static const char *const codes[] = {"usage",     "session_not_found", "exists",
                                            "not_found", "ambiguous",         "not_text",
                                            "unsupported", "limit",           "internal"};
        for (size_t i = 0; i < ARRAY_SIZE(codes); i++)
                if (strcmp(c, codes[i]) == 0)
                        return codes[i];
        return "internal";
}

int sync_wait(int fd, const char *what, struct sbx_error *e)
{
        struct sync_msg m;
        ssize_t n = RETRY_EINTR(recv(fd, &m, sizeof(m), 0));
        if (n < 0)
                return sbx_internal(e, errno, "failed to hear from %s", what);
        if (n != (ssize_t)sizeof(m))
                return sbx_internal(e, 0, "%s ended before reporting", what);
        if (m.ok)
                return 0;
        m.code[sizeof(m.code) - 1] = '\0';
        m.message[sizeof(m.message) - 1] = '\0';
        return sbx_fail(e, m.exit_code, known_code(m.code), 0, "%s", m.message);
}
