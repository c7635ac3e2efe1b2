#!/usr/bin/env bats
# Which path each kind of session's exec takes (docs/design/exec.md): the init's exec server,
# or the client joining the session from outside. Seen from inside: a reaper forked by the init
# has the init's helper uid; one from outside shows the overflow uid (the host's root is no uid
# of the session); and in `run` the init serves its one command itself (the command's parent is
# pid 1). Each row pins one case; when a case moves to the server, its row changes with it.

load helpers

setup() {
        setup_sbx
}
teardown() {
        teardown_sbx
}

# path_of_exec: "server" or "join", from the uid of the exec's reaper; anything else fails.
path_of_exec() {
        sbx_ok exec "$sid" "$@" || return 1
        local reaper=${lines[0]} init=${lines[1]}
        if [ "$reaper" = 65534 ]; then
                echo join
        elif [ -n "$reaper" ] && [ "$reaper" = "$init" ] && [ "$reaper" != 0 ]; then
                echo server
        else
                echo "unknown: reaper uid '$reaper', init uid '$init'"
        fi
}

uids='awk "/^Uid:/ { print \$2 }" /proc/$PPID/status /proc/1/status'

@test "no memory limit (pids and cpu limited, or nothing): the init's server" {
        new_session --memory unlimited
        [ "$(path_of_exec sh -c "$uids")" = server ]
        new_session --memory unlimited --cpus unlimited --pids unlimited
        [ "$(path_of_exec sh -c "$uids")" = server ]
}

@test "a memory limit (the default 512M): the server on cgroup v1, the client joins on v2" {
        local want=join
        grep -q ':memory:' /proc/self/cgroup && want=server
        new_session
        [ "$(path_of_exec sh -c "$uids")" = $want ]
        new_session --memory 64M --pids unlimited --cpus unlimited
        [ "$(path_of_exec sh -c "$uids")" = $want ]
}

@test "a session at its memory limit still answers exec, ls and destroy (the server's reaper is not charged)" {
        grep -q ':memory:' /proc/self/cgroup || skip "no v1 memory controller: a v2 memory limit takes the client's path"
        new_session --memory 64M
        local init
        init=$(state_key init_pid)
        # tmpfs pages belong to no process: the file keeps the cgroup full after the writer dies
        sbx_expect 137 exec --json "$sid" sh -c 'head -c 100M /dev/zero > /tmp/fill'
        [ "$(json .oom_killed)" = true ] || fail "not reported as an OOM kill: $output"
        # a command in the full cgroup may itself be killed (137): what matters is that the
        # session answers, at once, and that the init (outside the cgroup) lives on
        local i
        for i in 1 2 3; do
                _expect_any exec "$sid" echo still
        done
        kill -0 "$init" || fail "the session init died"
        _expect_any ls "$sid" /tmp
        kill -0 "$init" || fail "the session init died"
        # the control: a small file leaves room, and the command runs, served by the init
        sbx_ok exec "$sid" rm /tmp/fill
        [ "$(path_of_exec sh -c "$uids")" = server ]
        sbx_ok destroy "$sid"
}

# _expect_any ARGS: sbx ARGS answers within the helpers' timeout with 0 or the memory limit's
# 137 (exec) / 1 (a file command whose helper was killed); never a hang or another failure.
_expect_any() {
        local t0=$SECONDS rc=0
        timeout 20 "$SBX" "$@" >/dev/null 2>&1 || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 137 ] || [ "$rc" = 1 ] || fail "sbx $*: exit $rc"
        [ $((SECONDS - t0)) -lt 10 ] || fail "sbx $*: took $((SECONDS - t0)) s"
}

@test "a request over one message (128 KiB of argv and environment): the client joins" {
        new_session --memory unlimited
        local big
        big=$(head -c 70000 /dev/zero | tr '\0' a)
        [ "$(path_of_exec sh -c "$uids" sh "$big" "$big")" = join ]
        # and the positive control: the same session's small request is served
        [ "$(path_of_exec sh -c "$uids")" = server ]
}

@test "run: the init serves the command (parent pid 1), unless something ran before it" {
        sbx_ok run --memory unlimited -- sh -c 'echo $PPID'
        [ "$output" = 1 ] || fail "unlimited: parent $output"
        # the defaults: on v1 the init is outside the memory cgroup, so it serves
        if grep -q ':memory:' /proc/self/cgroup; then
                sbx_ok run -- sh -c 'echo $PPID'
                [ "$output" = 1 ] || fail "defaults: parent $output"
        fi
        # a setup step first (it joins from outside): on v1 the command is still served,
        # the init being outside the memory cgroup the step may have filled; on v2 it joins
        SBX_SETUP='true' sbx_ok run --memory 256M -- sh -c 'echo $PPID'
        if grep -q ':memory:' /proc/self/cgroup; then
                [ "$output" = 1 ] || fail "v1, a setup step: parent $output"
        else
                [ "$output" != 1 ] || fail "v2 memory limit, and still served by the init"
        fi
}
