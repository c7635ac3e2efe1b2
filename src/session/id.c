/* SPDX-License-Identifier: MIT */
#include "id.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "../shared/macros.h"

int session_id_generate(char out[static SESSION_ID_LEN + 1])
{
        unsigned char rnd[8];
        size_t got = 0;
        while (got < sizeof(rnd)) {
                ssize_t r = getrandom(rnd + got, sizeof(rnd) - got, 0);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negerrno();
                }
                got += (size_t)r;
        }
        memcpy(out, "sb_", 3);
        for (size_t i = 0; i < sizeof(rnd); i++)
                snprintf(out + 3 + 2 * i, 3, "%02x", rnd[i]);
        return 0;
}

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool session_id_valid(const char *s)
{
        if (!s || strncmp(s, "sb_", 3) != 0 || strlen(s) != SESSION_ID_LEN)
                return false;
        for (const char *p = s + 3; *p; p++)
                if (!is_lower_alnum(*p))
                        return false;
        return true;
}

bool session_name_valid(const char *s)
{
        if (!s || !is_lower_alnum(s[0]) || strlen(s) > 63)
                return false;
        for (const char *p = s + 1; *p; p++)
                if (!is_lower_alnum(*p) && *p != '_' && *p != '.' && *p != '-')
                        return false;
        /* a name must never be mistaken for an id when resolving "ID or name" */
        return !session_id_valid(s);
}
