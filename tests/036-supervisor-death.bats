#!/usr/bin/env bats
# A session never outlives its supervisor: SIGKILL of the supervisor, of the session init, of
# `sbx create` half-way and of `sbx destroy` half-way, each with a hostile workload running
# (a setsid loop that ignores TERM and HUP, a double-forked daemon, an exec in progress). After
# each, the host is checked for what the session could leave: a process in its pid namespace,
# any process holding its mount, user or network namespace, a mount of the runtime dir, its
# cgroups, its runtime files.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# The hostile workload: ignores TERM/HUP, leaves its session, double-forks.
hostile='setsid sh -c '\''trap "" TERM HUP; while :; do sleep 1; done'\'' </dev/null >/dev/null 2>&1 &
(setsid sh -c '\''trap "" TERM HUP; exec sleep 100000'\'' </dev/null >/dev/null 2>&1 &) &
echo started'

# note_session: remember what session $sid consists of on the host, for leftovers().
note_session() {
        init=$(state_key init_pid)
        sup=$(state_key supervisor_pid)
        [ -n "$init" ] && [ -n "$sup" ] || fail "no pids in the state of $sid" || return 1
        local n
        ns_ids=()
        for n in pid mnt user net; do
                ns_ids+=("$(readlink "/proc/$init/ns/$n")") || return 1
        done
        cgroups=$(find /sys/fs/cgroup -maxdepth 7 -type d -name "$sid" 2>/dev/null || true)
        [ -n "$cgroups" ] || fail "no cgroup of $sid found (the check would see nothing)"
}

# now_ticks: the current time in the clock ticks of /proc/PID/stat's start time (field 22).
now_ticks() {
        awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' /proc/self/stat
}

# leftovers ID [TICKS]: print what is left of session ID (noted by note_session) on the host.
# A process counts when it is in one of the session's namespaces and started before TICKS
# (default: now): the kernel gives a freed namespace's number to the next new one at once, so
# a process of a session made later (another test's) may show the same number; a leftover of
# ours, or whatever forked it, is older than the kill.
leftovers() {
        local id=$1 c ticks=${2:-$(now_ticks)}
        # one find: a fork per process would take seconds on a busy host
        find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/*' -printf '%p %l\n' \
                2>/dev/null | awk -v ids="${ns_ids[*]}" -v ticks="$ticks" '
                BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
                ($2 in want) {
                        split($1, p, "/")
                        line = ""
                        if ((getline line <("/proc/" p[3] "/stat")) <= 0) next
                        close("/proc/" p[3] "/stat")
                        sub(/.*\) /, "", line)
                        split(line, f, " ")
                        if (f[20] + 0 <= ticks + 0) print "process " $1 " in " $2
                }'
        for c in $cgroups; do
                if [ -d "$c" ]; then echo "cgroup $c"; fi
        done
        find /sys/fs/cgroup -maxdepth 7 -type d -name "$id" 2>/dev/null | sed 's/^/cgroup /'
        grep -F -e "$id" -e "$SBX_RUNTIME_DIR" /proc/self/mountinfo | sed 's/^/mount /' || true
        if [ -e "$SBX_RUNTIME_DIR/$id" ]; then echo "runtime entry $SBX_RUNTIME_DIR/$id"; fi
}

nothing_left() {
        [ -z "$(leftovers "$1" "${kill_ticks:-}")" ]
}

# hostile_session [CREATE-OPTIONS]: a session running the hostile workload and, in the
# background, an exec in progress (its client on the host holds the session's namespaces).
hostile_session() {
        new_session "$@"
        in_sbx "$hostile"
        [ "$output" = started ] || fail "the workload did not start: $output"
        "$SBX" exec "$sid" sleep 100000 </dev/null >/dev/null 2>&1 &
        client=$!
        wait_until 10 in_sbx '[ "$(pgrep -c -x sleep)" -ge 2 ]' || fail "the workload is not running"
        note_session
        # positive control: the check sees the live session
        [ -n "$(leftovers "$sid")" ] || fail "leftovers sees nothing of a live session"
}

# after_kill: the session must be gone entirely once `list` ran; the exec client has ended.
after_kill() {
        kill_ticks=$(now_ticks)
        wait_until 10 eval '! kill -0 '"$client"' 2>/dev/null' || fail "the exec client still runs"
        wait "$client" || true
        sbx_ok list
        [[ $output != *"$sid"* ]] || fail "list shows the dead session: $output"
        wait_until 10 nothing_left "$sid" || fail "left of $sid:" "$(leftovers "$sid" "$kill_ticks")"
}

@test "SIGKILL of the supervisor ends every process of the session (join path)" {
        # every exec joins from outside (tests/race_inject.c: the exec socket is refused)
        export LD_PRELOAD=$SBX_RACE_INJECT SBXT_NO_EXEC_SERVER=1
        export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
        hostile_session
        kill -9 "$sup"
        after_kill
}

@test "SIGKILL of the supervisor ends every process of the session (exec server)" {
        hostile_session --memory unlimited --cpus unlimited --pids unlimited
        kill -9 "$sup"
        after_kill
}

@test "SIGKILL of the supervisor of a --net proxy session: its egress proxy ends too" {
        hostile_session --net proxy --allow-host example.com
        # the proxy holds a socket of the session's network namespace, from the host's
        local proxy
        proxy=$(ps -o pid=,comm= --ppid "$sup" | awk '$2 == "sbx-proxy" { print $1 }')
        [ -n "$proxy" ] || fail "no sbx-proxy child of the supervisor"
        kill -9 "$sup"
        after_kill
        wait_until 10 eval '! kill -0 '"$proxy"' 2>/dev/null' || fail "sbx-proxy $proxy lives on"
}

@test "destroy of a session whose supervisor was killed removes all of it itself (paused too)" {
        local how
        for how in plain force paused; do
                hostile_session
                [ "$how" != paused ] || sbx_ok pause "$sid"
                kill -9 "$sup"
                kill_ticks=$(now_ticks)
                wait_until 10 eval '! kill -0 '"$sup"' 2>/dev/null' || fail "the supervisor lives"
                # positive control: nothing else removes it meanwhile
                sleep 0.5
                [ -e "$SBX_RUNTIME_DIR/$sid" ] || fail "gone before the destroy"
                if [ "$how" = plain ]; then
                        sbx_expect 3 destroy "$sid"
                        [[ $stderr == *"had already ended"* ]] || fail "$stderr"
                else
                        sbx_ok destroy --force "$sid"
                fi
                # no other sbx command runs from here on: destroy itself did it all
                wait_until 10 nothing_left "$sid" ||
                        fail "$how: left of $sid:" "$(leftovers "$sid" "$kill_ticks")"
                wait "$client" || true
        done
}

@test "SIGKILL of the session init ends the session and its supervisor" {
        hostile_session
        kill -9 "$init"
        wait_until 10 eval '! kill -0 '"$sup"' 2>/dev/null' || fail "the supervisor lives on"
        after_kill
}

@test "SIGKILL of the supervisor and the init together" {
        hostile_session
        kill -9 "$sup" "$init"
        after_kill
}

@test "SIGKILL of sbx create at any point leaves nothing once list ran" {
        local d pid rc name
        for d in 0 0.001 0.002 0.004 0.006 0.008 0.01 0.012 0.015 0.02 0.03 0.05 0.08; do
                name=k${d#0.}
                "$SBX" create --name "$name" </dev/null >"$BATS_TEST_TMPDIR/id.$name" 2>/dev/null &
                pid=$!
                sleep "$d"
                kill -9 "$pid" 2>/dev/null || true
                # the sessions seen, for the cgroup check at the end
                ls "$SBX_RUNTIME_DIR" | grep '^sb_' >>"$BATS_TEST_TMPDIR/ids" || true
                rc=0
                wait "$pid" 2>/dev/null || rc=$?
                # a create whose id reached its caller made a session like any other (the
                # session lives on from #4, when the id is out; a kill between that and the
                # exit, wide under ASan's exit-time leak check, still ends with 137):
                # destroyed here. Without the id, nothing of it may stay (checked below).
                [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ] || fail "create ended with $rc"
                if grep -q '^sb_[0-9a-f]\{16\}$' "$BATS_TEST_TMPDIR/id.$name"; then
                        # killed after it printed the id but before #4 (the supervisor then
                        # ends the session: it cannot know the id got out): gone already
                        if [ "$rc" -eq 137 ]; then
                                sbx_expect any destroy "$name"
                                [ "$status" -eq 0 ] || [ "$status" -eq 3 ] ||
                                        fail "destroy of a killed create's session: $status"
                        else
                                sbx_ok destroy "$name"
                        fi
                else
                        [ "$rc" -eq 137 ] || fail "create exited 0 without printing an id"
                fi
        done
        # a supervisor whose create died before the id was out ends its session by itself
        wait_until 10 eval '[ -z "$(sbx_new_procs)" ]' ||
                fail "sessions of killed creates live on: $(sbx_new_procs)"
        sbx_ok list
        [ -z "$(sed 1d <<<"$output")" ] || fail "list shows sessions: $output"
        # A create killed between its mkdir and its lock file leaves an empty entry: nothing
        # tells it from a create making its lock right now, so it goes when a minute old.
        for d in "$SBX_RUNTIME_DIR"/sb_*; do
                [ -e "$d" ] || continue
                [ -z "$(ls -A "$d")" ] || fail "left with files: $d: $(ls -A "$d")"
                touch -d '2 minutes ago' "$d"
        done
        sbx_ok list
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" | grep -v '^names$')" ] ||
                fail "left in the runtime dir: $(ls -A "$SBX_RUNTIME_DIR")"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR/names" 2>/dev/null)" ] ||
                fail "name links left: $(ls -A "$SBX_RUNTIME_DIR/names")"
        # no cgroup of any of those sessions is left
        local id
        for id in $(sort -u "$BATS_TEST_TMPDIR/ids"); do
                [ -z "$(find /sys/fs/cgroup -maxdepth 7 -type d -name "$id" 2>/dev/null)" ] ||
                        fail "cgroups of $id left:" "$(find /sys/fs/cgroup -maxdepth 7 -type d -name "$id")"
        done
}

@test "SIGKILL of sbx create once the session is ready, before the id is out" {
        # positive control: the checks see a live session
        new_session
        note_session
        [ -n "$(leftovers "$sid")" ] || fail "the check sees nothing of a live session"
        sbx_ok destroy "$sid"
        kill_ticks=$(now_ticks)
        wait_until 10 nothing_left "$sid" || fail "left of $sid:" "$(leftovers "$sid" "$kill_ticks")"
        # The create runs its set-up command in the ready session, its id not yet printed.
        local ini=$BATS_TEST_TMPDIR/setup.ini out=$BATS_TEST_TMPDIR/create.out
        cat >"$ini" <<'INI'
[sandbox]
setup = setsid sh -c 'trap "" TERM HUP; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 & sleep 100
INI
        "$SBX" --config "$ini" create --name late </dev/null >"$out" 2>&1 &
        local pid=$!
        wait_until 15 test -L "$SBX_RUNTIME_DIR/names/late" || fail "the session never appeared"
        sid=$(readlink "$SBX_RUNTIME_DIR/names/late")
        sid=${sid##*/}
        wait_until 15 test -e "$SBX_RUNTIME_DIR/$sid/state" || fail "no state for $sid"
        note_session
        wait_until 15 eval '[ "$(leftovers "$sid" | grep -c "/ns/pid in ")" -ge 3 ]' ||
                fail "the set-up command did not start: $(cat "$out")"
        kill -9 "$pid"
        kill_ticks=$(now_ticks)
        wait "$pid" 2>/dev/null || true
        [ -z "$(cat "$out")" ] || fail "create printed: $(cat "$out")"
        sbx_ok list
        wait_until 10 nothing_left "$sid" || fail "left of $sid:" "$(leftovers "$sid" "$kill_ticks")"
}

@test "SIGKILL of sbx destroy at any point: the session is whole or gone" {
        local d pid
        for d in 0 0.002 0.005 0.01 0.02; do
                hostile_session
                "$SBX" destroy "$sid" </dev/null >/dev/null 2>&1 &
                pid=$!
                sleep "$d"
                kill -9 "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                # either the destroy got through (the supervisor finishes it alone) or the
                # session is untouched and a second destroy ends it
                if kill -0 "$sup" 2>/dev/null && [ -e "$SBX_RUNTIME_DIR/$sid/state" ]; then
                        sbx_try exec "$sid" true
                        [ "$status" -eq 0 ] || [ "$status" -eq 3 ] ||
                                fail "a half-destroyed session answers $status: $stderr"
                        sbx_try destroy "$sid"
                fi
                after_kill
        done
}

@test "SIGKILL of sbx destroy --force half-way: the next list removes the rest" {
        hostile_session
        # a supervisor that does not answer (stopped) makes destroy --force kill it
        kill -STOP "$sup"
        "$SBX" destroy --force "$sid" </dev/null >/dev/null 2>&1 &
        local pid=$!
        sleep 0.05
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        kill -9 "$sup" 2>/dev/null || true
        after_kill
}
