#!/usr/bin/env bats
# sbx pause / resume: every process of the session stops (a counter and a forking loop are
# the witnesses, each seen moving before the pause and after the resume), exec and the file
# commands fail fast on a paused session, destroy and the TTL end it while frozen, and every
# bad input has its exit code.

load helpers
setup_file() { setup_users; }
teardown_file() { teardown_users; }
setup() { setup_sbx && setup_sbx_user; }
teardown() { teardown_sbx; }

# frozen: the kernel's own word on the session's cgroup ("frozen 1" in cgroup.events).
frozen() {
        local cg
        cg=$(state_key cgroup)
        [ -n "$cg" ] || fail "session $sid has no cgroup v2 cgroup"
        grep -qx 'frozen 1' "$cg/cgroup.events"
}

# counter_value: the number the session's counter loop last wrote, read from the host
# (through the init's root: an exec cannot run while the session is paused).
counter_value() {
        cat "/proc/$(state_key init_pid)/root/tmp/count"
}

start_counter() {
        in_sbx 'i=0; while :; do i=$((i+1)); echo $i >/tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.05; done >/dev/null 2>&1 &'
        wait_until 5 test -s "/proc/$(state_key init_pid)/root/tmp/count"
}

@test "pause stops every process; resume starts them again" {
        new_session
        start_counter
        local a b c
        a=$(counter_value)
        sleep 0.5
        b=$(counter_value)
        [ "$b" -gt "$a" ] || fail "the counter does not move before the pause ($a, $b)"
        sbx_ok pause "$sid"
        [ -z "$output" ]
        frozen
        a=$(counter_value)
        sleep 1
        b=$(counter_value)
        [ "$a" = "$b" ] || fail "the counter moved while paused ($a -> $b)"
        sbx_ok resume "$sid"
        ! frozen
        wait_until 5 sh -c "[ \$(cat /proc/$(state_key init_pid)/root/tmp/count) -gt $b ]"
        c=$(counter_value)
        [ "$c" -gt "$b" ]
        in_sbx 'true'
}

@test "hostile: a loop that forks all the time is frozen whole, children included" {
        new_session
        in_sbx 'while :; do sh -c "echo x >>/tmp/forks"; done >/dev/null 2>&1 &'
        local root
        root=/proc/$(state_key init_pid)/root
        wait_until 5 test -s "$root/tmp/forks"
        sbx_ok pause "$sid"
        frozen
        local a b
        a=$(wc -l <"$root/tmp/forks")
        sleep 1
        b=$(wc -l <"$root/tmp/forks")
        [ "$a" = "$b" ] || fail "processes forked while paused ($a -> $b lines)"
        # every task of the session's cgroups is in it (none escaped the freeze)
        local cg pid n=0
        cg=$(state_key cgroup)
        while read -r pid; do
                n=$((n + 1))
                grep -q '^State:' "/proc/$pid/status" || fail "no status for $pid"
        done < <(cat "$cg"/*/cgroup.procs)
        [ "$n" -ge 2 ] || fail "only $n processes in the session's cgroups"
        sbx_ok resume "$sid"
        wait_until 5 sh -c "[ \$(wc -l <$root/tmp/forks) -gt $b ]"
}

@test "exec and the file commands fail fast on a paused session, with code paused" {
        new_session
        in_sbx 'echo hi >/workspace/f'
        sbx_ok pause "$sid"
        local t0=$SECONDS
        sbx_expect 125 exec "$sid" true
        [[ $stderr == *"is paused"* ]]
        sbx_expect 125 exec --json "$sid" true
        [ "$(json .error.code)" = paused ]
        sbx_expect 1 read --json "$sid" /workspace/f
        [ "$(json .error.code)" = paused ]
        sbx_expect 1 ls "$sid"
        sbx_expect 1 write "$sid" /workspace/g content
        sbx_expect 1 edit "$sid" /workspace/f hi ho
        sbx_expect 1 glob "$sid" '*'
        sbx_expect 1 grep --json "$sid" hi
        [ "$(json .error.code)" = paused ]
        [ $((SECONDS - t0)) -lt 10 ] || fail "the refusals took $((SECONDS - t0)) s"
        # connect still works and renews the TTL
        sbx_ok connect "$sid"
        sbx_ok resume "$sid"
        sbx_ok read "$sid" /workspace/f
        [[ $output == *hi* ]]
        sbx_expect 1 read "$sid" /workspace/g # the refused write left nothing
}

@test "pause twice, resume a running session, bad ids and arguments" {
        new_session
        sbx_expect 1 resume --json "$sid"
        [ "$(json .error.code)" = not_paused ]
        sbx_ok pause --json "$sid"
        [ "$(json .paused)" = true ]
        sbx_expect 1 pause --json "$sid"
        [ "$(json .error.code)" = paused ]
        frozen
        sbx_ok list --json
        [ "$(jq -r --arg id "$sid" '.[] | select(.id == $id) | .paused' <<<"$output")" = true ] || fail "list: $output"
        sbx_ok resume --json "$sid"
        [ "$(json .paused)" = false ]
        sbx_ok list --json
        [ "$(jq -r --arg id "$sid" '.[] | select(.id == $id) | .paused' <<<"$output")" = false ] || fail "list: $output"
        sbx_expect 2 pause
        sbx_expect 2 resume
        sbx_expect 2 pause "$sid" extra
        sbx_expect 2 pause --bogus "$sid"
        sbx_expect 3 pause sb_0000000000000000
        sbx_expect 3 pause --json 'Not/An/Id'
        [ "$(json .error.code)" = session_not_found ]
        sbx_expect 3 resume nosuchname
        ! frozen
        in_sbx true
}

@test "destroy ends a paused session with everything in it" {
        new_session --name paused-one
        start_counter
        sbx_ok pause paused-one
        frozen
        local cg
        cg=$(state_key cgroup)
        sbx_ok destroy paused-one
        wait_until 5 eval '[ ! -e "$cg" ]' || fail "the session's cgroup is left: $cg"
        sbx_expect 3 pause paused-one
}

@test "the TTL keeps running while paused: the session expires" {
        new_session --ttl 2s
        sbx_ok pause "$sid"
        wait_until 15 sh -c "! [ -e '$SBX_RUNTIME_DIR/$sid' ]" ||
                fail "the paused session did not expire"
        sbx_expect 3 resume "$sid"
}

@test "pause and resume are in the audit log" {
        new_session
        sbx_ok pause "$sid"
        sbx_ok resume "$sid"
        sbx_ok log --json "$sid"
        [ "$(json '[.[] | select(.event == "pause" or .event == "resume") | .event] | join(",")')" = pause,resume ]
        json '.[] | select(.event == "pause") | .duration_ms | type == "number"'
}

@test "a session without limits is paused too, or refused with exit 4, never claimed" {
        new_session --memory unlimited --cpus unlimited --pids unlimited
        if [ -n "$(state_key cgroup)" ]; then
                start_counter
                sbx_ok pause "$sid"
                frozen
                local a
                a=$(counter_value)
                sleep 0.5
                [ "$a" = "$(counter_value)" ]
                sbx_ok resume "$sid"
        else
                sbx_expect 4 pause --json "$sid"
                [ "$(json .error.code)" = unsupported ]
                in_sbx true
        fi
}

@test "unprivileged without a cgroup of its own: pause is refused with exit 4, never claimed" {
        user_sbx_expect 0 create
        sid=$output
        # another user cannot pause it, nor read its stats (their runtime dirs are their own)
        other_sbx_expect 3 pause "$sid"
        other_sbx_expect 3 stats "$sid"
        user_sbx_expect any pause --json "$sid"
        if [ "$status" -eq 4 ]; then
                [ "$(json .error.code)" = unsupported ]
                user_sbx_expect 0 exec "$sid" true # still running, nothing half-frozen
        else
                [ "$status" -eq 0 ] || fail "pause exited $status: $output"
                user_sbx_expect 125 exec "$sid" true
                user_sbx_expect 0 resume "$sid"
        fi
        user_sbx_expect 0 destroy "$sid"
}

# ---- the cgroup v1 freezer ----------------------------------------------------------------
# A host without a usable cgroup2 pauses through the v1 freezer hierarchy. Here that host is
# made by creating the session in a mount namespace without the cgroup2 mount (the session's
# supervisor stays there; later sbx calls find the session's cgroups by the paths in its
# state). Hosts without a v1 freezer (pure cgroup v2) skip these.

# v1_session [CREATE-OPTIONS...]: such a session, id in $sid.
v1_session() {
        grep -qE '^[^ ]+ /sys/fs/cgroup/freezer cgroup .*freezer' /proc/mounts ||
                skip "no cgroup v1 freezer hierarchy on this host"
        _expect 0 unshare -m sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
                "$SBX" create "$@"
        is_id "$output" || fail "create printed '$output'"
        sid=$output
        [ -z "$(state_key cgroup)" ] || fail "the session has a cgroup v2 cgroup all the same"
        [ -n "$(state_key cgroup_v1_freezer)" ] || fail "no v1 freezer cgroup recorded"
}

v1_state() {
        cat "$(state_key cgroup_v1_freezer)/freezer.state"
}

@test "cgroup v1 freezer: every process stops, forks included, exec fails fast, resume restarts" {
        local opts
        for opts in "" "--memory unlimited"; do # exec by joining, and through the init's server
                # shellcheck disable=SC2086
                v1_session $opts
                start_counter
                in_sbx 'while :; do sh -c "echo x >>/tmp/forks"; done >/dev/null 2>&1 &'
                local root a b f1 f2
                root=/proc/$(state_key init_pid)/root
                wait_until 5 test -s "$root/tmp/forks"
                [ "$(v1_state)" = THAWED ]
                sbx_ok pause "$sid"
                [ "$(v1_state)" = FROZEN ] || fail "freezer.state: $(v1_state)"
                a=$(counter_value)
                f1=$(wc -l <"$root/tmp/forks")
                sleep 1
                b=$(counter_value)
                f2=$(wc -l <"$root/tmp/forks")
                [ "$a" = "$b" ] || fail "the counter moved while paused ($a -> $b; '$opts')"
                [ "$f1" = "$f2" ] || fail "processes forked while paused ($f1 -> $f2; '$opts')"
                sbx_expect 125 exec --json "$sid" true
                [ "$(json .error.code)" = paused ]
                sbx_expect 1 read --json "$sid" /tmp/count
                [ "$(json .error.code)" = paused ]
                sbx_expect 1 pause --json "$sid"
                [ "$(json .error.code)" = paused ]
                sbx_ok resume "$sid"
                [ "$(v1_state)" = THAWED ]
                wait_until 5 sh -c "[ \$(cat $root/tmp/count) -gt $b ]"
                in_sbx true
                sbx_ok destroy "$sid"
        done
}

@test "cgroup v1 freezer: destroy ends a paused session, the TTL expires one" {
        v1_session
        start_counter
        sbx_ok pause "$sid"
        local cg
        cg=$(state_key cgroup_v1_freezer)
        [ "$(v1_state)" = FROZEN ]
        sbx_ok destroy "$sid"
        wait_until 5 eval '[ ! -e "$cg" ]' || fail "the session's freezer cgroup is left: $cg"
        v1_session --ttl 2s
        cg=$(state_key cgroup_v1_freezer)
        sbx_ok pause "$sid"
        wait_until 15 sh -c "! [ -e '$SBX_RUNTIME_DIR/$sid' ]" ||
                fail "the paused session did not expire"
        wait_until 5 eval '[ ! -e "$cg" ]' || fail "the expired session's freezer cgroup is left: $cg"
        sbx_expect 3 resume "$sid"
}
