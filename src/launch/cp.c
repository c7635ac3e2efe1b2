/* SPDX-License-Identifier: MIT */
/*
 * `sbx cp`: the session's side runs in the confined helper (confined.c: the session's
 * namespaces, uid, no capabilities, its seccomp filter), so whatever symlinks, "..", or races
 * the session set up resolve inside the session as they would for its own processes. The
 * host's side runs with the caller's rights and unpacks only what ops/cpstream.c accepts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../ops/cpstream.h"
#include "confined.h"
#include "launch.h"

int session_cp(const char *id_or_name, const char *session_path, const char *host_path, bool in,
               uint64_t *ret_bytes, struct sbx_error *e)
{
        _cleanup_buf_ struct buf stream = {0}, out = {0};
        struct cp_req req = {.path = session_path, .max = CP_MAX_BYTES};
        struct confined_audit audit = {
            .event = in ? "cp_in" : "cp_out", .path = session_path, .bytes = -1, .replace_all = -1};
        if (in) {
                int r = cp_pack(host_path, CP_MAX_BYTES, &stream, e);
                if (r < 0)
                        return r;
                req.data = stream.data ? stream.data : "";
                req.len = stream.len;
                audit.bytes = (int64_t)stream.len;
                r = session_run_confined(id_or_name, cp_confined, &req, &audit, &out, e);
                if (r < 0 || e->exit_code)
                        return r < 0 ? r : -EIO;
                *ret_bytes = out.data ? strtoull(out.data, NULL, 10) : 0;
                return 0;
        }
        int r = session_run_confined(id_or_name, cp_confined, &req, &audit, &stream, e);
        if (r < 0 || e->exit_code)
                return r < 0 ? r : -EIO;
        return cp_unpack(stream.data ? stream.data : "", stream.len, host_path, ret_bytes, e);
}
