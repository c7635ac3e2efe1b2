/* SPDX-License-Identifier: MIT */
/*
 * Pause and resume, the client half: the session's supervisor owns its cgroups and does the
 * freezing (supervisor_ctl.c, PAUSE / RESUME), so two clients never race on cgroup.freeze and the
 * audit record is written where the change is made.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "../session/runtime.h"
#include "shared/macros.h"
#include "launch.h"

int control_pause(int ctl, const char *id_or_name, const char *req, struct sbx_error *e)
{
        bool pause = req[0] == 'P';
        char reply[64];
        int r = control_call(ctl, req, reply, sizeof(reply), NULL, 0);
        if (r < 0)
                return sbx_fail(e, EXIT_NO_SESSION, "session_not_found", -r,
                                "no such session '%s' (it has ended)", id_or_name);
        int err = 0;
        if (strcmp(reply, "OK") == 0)
                return 0;
        if (strcmp(reply, "ERR paused") == 0)
                return sbx_fail(e, EXIT_FAILED, "paused", 0, "session '%s' is already paused",
                                id_or_name);
        if (strcmp(reply, "ERR running") == 0)
                return sbx_fail(e, EXIT_FAILED, "not_paused", 0,
                                "session '%s' is not paused: nothing to resume", id_or_name);
        if (strcmp(reply, "ERR unsupported") == 0)
                return sbx_unsupported(e, 0,
                                       "cannot %s session '%s': it has no cgroup with a "
                                       "freezer (a cgroup2 hierarchy mounted and writable by "
                                       "you, Linux 5.2+, or a cgroup v1 freezer hierarchy "
                                       "writable by you)",
                                       pause ? "pause" : "resume", id_or_name);
        if (strcmp(reply, "ERR timeout") == 0)
                return sbx_internal(e, 0,
                                    "failed to %s session '%s': its processes did not all %s "
                                    "within 5 s (it keeps running)",
                                    pause ? "pause" : "resume", id_or_name,
                                    pause ? "stop" : "restart");
        /* a supervisor of an older sbx: a plain pause, which the caller must end itself */
        if (strcmp(reply, "ERR unknown request") == 0 && strcmp(req, "PAUSE_HOLD") == 0) {
                r = control_pause(ctl, id_or_name, "PAUSE", e);
                return r < 0 ? r : 1;
        }
        if (sscanf(reply, "ERR %d", &err) == 1 && err > 0)
                return sbx_internal(e, err, "failed to %s session '%s'", pause ? "pause" : "resume",
                                    id_or_name);
        return sbx_internal(e, 0, "unexpected answer from the supervisor of '%s'", id_or_name);
}

int session_pause(const char *id_or_name, bool pause, struct sbx_error *e)
{
        /* the freeze itself is bounded (5 s); the 15 s bound a supervisor that hangs */
        _cleanup_close_ int sessfd = -1, ctl = -1;
        int r = control_open(id_or_name, 15, &sessfd, &ctl, e);
        if (r < 0)
                return r;
        return control_pause(ctl, id_or_name, pause ? "PAUSE" : "RESUME", e);
}
