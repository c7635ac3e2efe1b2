/* SPDX-License-Identifier: MIT */
/* sha256 digests of blobs (nettle), as OCI writes them: "sha256:" + 64 lowercase hex digits. */
#include <errno.h>
#include <nettle/sha2.h>
#include <string.h>

#include "image-internal.h"

static void to_hex(const uint8_t *d, char out[static DIGEST_HEX_LEN + 1])
{
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
                out[2 * i] = hex[d[i] >> 4];
                out[2 * i + 1] = hex[d[i] & 15];
        }
        out[DIGEST_HEX_LEN] = '\0';
}

int digest_mem(const void *p, size_t n, char out[static DIGEST_HEX_LEN + 1])
{
        struct sha256_ctx ctx;
        sha256_init(&ctx);
        sha256_update(&ctx, n, p);
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_digest(&ctx, sizeof(d), d);
        to_hex(d, out);
        return 0;
}

bool digest_hex_valid(const char *s)
{
        if (strlen(s) != DIGEST_HEX_LEN)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

int digest_parse(const char *s, char out[static DIGEST_HEX_LEN + 1])
{
        if (!s || strncmp(s, "sha256:", 7) != 0 || !digest_hex_valid(s + 7))
                return -EINVAL;
        memcpy(out, s + 7, DIGEST_HEX_LEN + 1);
        return 0;
}
