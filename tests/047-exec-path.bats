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

@test "a memory limit (the default 512M): the client joins" {
        new_session
        [ "$(path_of_exec sh -c "$uids")" = join ]
        new_session --memory 64M --pids unlimited --cpus unlimited
        [ "$(path_of_exec sh -c "$uids")" = join ]
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
        # v1 memory limit with nothing before the command: the init's memory cgroup holds
        # only the init, so it still serves
        if grep -q ':memory:' /proc/self/cgroup; then
                sbx_ok run -- sh -c 'echo $PPID'
                [ "$output" = 1 ] || fail "defaults: parent $output"
        fi
        # a setup step first: the command joins from outside
        SBX_SETUP='true' sbx_ok run --memory 256M -- sh -c 'echo $PPID'
        [ "$output" != 1 ] || fail "a setup step, and still served by the init"
}
