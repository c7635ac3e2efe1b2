#!/usr/bin/env bats
# Delegation from systemd, on the host: what must hold everywhere. sbx is not linked against
# libsystemd (it loads libsystemd.so.0 only to ask a user manager for a scope), and it never
# asks where it must not: root, and an unprivileged user on a host whose limits come from
# cgroup v1 (hybrid, like CI's). A fake user bus (a listening socket that records each
# connection) stands where $DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR point. The real
# delegation (a VM booting systemd with a user manager) is tests/vm/run-systemd.sh.

load helpers
setup_file() { setup_users; }
teardown_file() { teardown_users; }
setup() {
        setup_sbx && setup_sbx_user
        # the fake bus, reachable by the test user too
        bus_dir=$users_base/bus.$BATS_TEST_NUMBER
        mkdir -p "$bus_dir/systemd" && chmod -R 0777 "$bus_dir"
        bus_log=$bus_dir/connections
        python3 -c '
import os, socket, sys
d, log = sys.argv[1], sys.argv[2]
socks = []
for p in (d + "/bus", d + "/systemd/private"):
    s = socket.socket(socket.AF_UNIX)
    s.bind(p); os.chmod(p, 0o777); s.listen(8); socks.append(s)
open(log, "a").close(); os.chmod(log, 0o666)
import select
while True:
    for s in select.select(socks, [], [])[0]:
        c, _ = s.accept()
        with open(log, "a") as f:
            f.write(s.getsockname() + "\n")
        c.close()' "$bus_dir" "$bus_log" </dev/null >/dev/null 2>&1 &
        bus_pid=$!
        wait_until 5 test -S "$bus_dir/systemd/private" || fail "the fake bus did not start"
}
stop_bus() {
        [ -z "${bus_pid:-}" ] && return 0
        kill "$bus_pid" 2>/dev/null
        wait "$bus_pid" 2>/dev/null
        return 0
}
teardown() {
        stop_bus
        teardown_sbx
}
bus_env=()
set_bus_env() { bus_env=(DBUS_SESSION_BUS_ADDRESS="unix:path=$bus_dir/bus" XDG_RUNTIME_DIR="$bus_dir"); }

# The fake bus sees a client's connection (the positive control of "never asks").
@test "the fake bus records a connection (control)" {
        python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$bus_dir/bus"
        wait_until 5 grep -q "/bus$" "$bus_log" || fail "no connection recorded"
}

@test "sbx is not linked against libsystemd; it names libsystemd.so.0 for dlopen" {
        run readelf -d "$SBX"
        [ "$status" -eq 0 ] || fail "readelf: $output"
        [[ $output == *"(NEEDED)"* ]] || fail "no NEEDED entries: $output"
        [[ $output != *libsystemd* ]] || fail "linked: $(grep libsystemd <<<"$output")"
        grep -qa 'libsystemd\.so\.0' "$SBX" || fail "no libsystemd.so.0 in the binary"
}

@test "root never asks the user manager, also where the bus is reachable" {
        set_bus_env
        _expect 0 env "${bus_env[@]}" "$SBX" run -- true
        _expect 0 env "${bus_env[@]}" "$SBX" create
        local sid=$output
        _expect any env "${bus_env[@]}" "$SBX" check --json
        _expect 0 env "${bus_env[@]}" "$SBX" exec "$sid" true
        _expect 0 env "${bus_env[@]}" "$SBX" destroy "$sid"
        sleep 0.2
        [ ! -s "$bus_log" ] || fail "sbx as root connected to: $(cat "$bus_log")"
}

@test "user on a cgroup v1 host: the limits are v1's to give, the manager is not asked" {
        grep -q ' - cgroup .*\bmemory\b' /proc/self/mountinfo || skip "no cgroup v1 memory hierarchy here"
        set_bus_env
        # the built-in defaults, not the "unlimited" of the other user tests
        _expect any runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
                HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$users_base/$test_user/$BATS_TEST_NUMBER/rt" "${bus_env[@]}" \
                "$user_sbx" run --read-only -- true
        [ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "exit $status: $stderr"
        [[ $stderr != *"delegated systemd scope"* ]] || fail "asked: $stderr"
        sleep 0.2
        [ ! -s "$bus_log" ] || fail "sbx connected to: $(cat "$bus_log")"
}
