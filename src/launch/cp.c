/* SPDX-License-Identifier: MIT */
/*
 * `sbx cp`: the session's side runs in the confined helper (confined.c: the session's
 * namespaces, uid, no capabilities, its seccomp filter), so whatever symlinks, "..", or races
 * the session set up resolve inside the session as they would for its own processes. The
 * host's side runs with the caller's rights and unpacks only what ops/cpstream.c accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../ops/cpstream.h"
#include "confined.h"
#include "launch.h"
#include "../session/state.h"

/* The session's writable volumes, as the host sees them (none in a state of an older sbx). */
static int session_volumes(const char *id_or_name, struct hostpath_vols *v, struct sbx_error *e)
{
        _cleanup_close_ int sessfd = control_session_dir(id_or_name, e);
        if (sessfd < 0)
                return sessfd;
        _cleanup_(session_state_freep) struct session_state st;
        int r = session_state_read(sessfd, &st);
        if (r == 0 && !st.volumes_known) /* its links in volumes could not be told */
                return sbx_fail(e, EXIT_UNSUPPORTED, "unsupported", 0,
                                "session '%s' was made by an older sbx that did not record its "
                                "volumes: cp refuses it; make a new session",
                                id_or_name);
        if (r == 0)
                r = hostpath_vols_open(st.volumes, v);
        return r < 0 ? sbx_internal(e, -r, "failed to read the state of session '%s'", id_or_name)
                     : 0;
}

int session_cp(const char *id_or_name, const char *session_path, const char *host_path, bool in,
               uint64_t *ret_bytes, struct sbx_error *e)
{
        _cleanup_buf_ struct buf stream = {0}, out = {0};
        struct cp_req req = {.path = session_path, .max = CP_MAX_BYTES};
        struct confined_audit audit = {
            .event = in ? "cp_in" : "cp_out", .path = session_path, .bytes = -1, .replace_all = -1};
        _cleanup_(hostpath_vols_free) struct hostpath_vols vols = {0};
        int r = session_volumes(id_or_name, &vols, e);
        if (r < 0)
                return r;
        if (in) {
                r = cp_pack(host_path, &vols, CP_MAX_BYTES, &stream, e);
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
        r = session_run_confined(id_or_name, cp_confined, &req, &audit, &stream, e);
        if (r < 0 || e->exit_code)
                return r < 0 ? r : -EIO;
        return cp_unpack(stream.data ? stream.data : "", stream.len, host_path, &vols, ret_bytes,
                         e);
}
