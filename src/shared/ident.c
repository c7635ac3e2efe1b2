/* SPDX-License-Identifier: MIT */
#include "ident.h"

#include <string.h>

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
