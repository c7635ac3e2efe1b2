#!/usr/bin/env bats
# The core cases again as an unprivileged user ($test_user, created once by setup_users):
# the session is mapped to the caller's own uid, and a second user ($other_user) can neither
# list, exec in, nor destroy it.

load helpers
setup_file() { setup_users; }
teardown_file() { teardown_users; }
setup() { setup_sbx && setup_sbx_user; }
teardown() { teardown_sbx; }

marker() {
        echo $((500000 + RANDOM * 7 + BATS_TEST_NUMBER))
}

user_session() {
        user_sbx_expect 0 create "$@" || return 1
        is_id "$output" || fail "create printed '$output', not a session id"
        sid=$output
}

@test "user: create, exec, destroy" {
        user_session
        user_sbx_expect 0 exec "$sid" sh -c 'echo "$(id -u) $(hostname) $(pwd)"'
        [ "$output" = "0 sandbox /workspace" ] || fail "got '$output'"
        user_sbx_expect 0 list
        [[ $output == *"$sid"* ]] || fail "list does not show $sid"
        user_sbx_expect 0 destroy "$sid"
        user_sbx_expect 3 exec "$sid" true
        [ ! -e "$(user_rt "$test_user")/$sid" ] || fail "the session dir is left"
}

@test "user: the runtime dir is made 0700 and owned by the user" {
        user_session
        local rt
        rt=$(user_rt "$test_user")
        [ "$(stat -c '%a %U' "$rt")" = "700 $test_user" ] || fail "runtime dir: $(stat -c '%a %U' "$rt")"
}

@test "user: uid 0 inside maps to the caller's own uid" {
        local uid gid
        uid=$(id -u "$test_user")
        gid=$(id -g "$test_user")
        user_session
        user_sbx_expect 0 exec "$sid" cat /proc/self/uid_map /proc/self/gid_map
        [ "$(echo $output)" = "0 $uid 1 0 $gid 1" ] || fail "maps: $output"
        local m pid
        m=$(marker)
        user_sbx_expect 0 exec "$sid" sh -c "sleep $m >/dev/null 2>&1 &"
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "no sleep on the host"
        pid=$(pgrep -f "^sleep $m\$")
        [ "$(ps -o uid= -p "$pid" | xargs)" = "$uid" ] || fail "host uid $(ps -o uid= -p "$pid")"
}

@test "user: empty capability sets, no_new_privs, clean environment, only lo" {
        user_session
        user_sbx_expect 0 exec "$sid" cat /proc/self/status
        local f
        for f in CapInh CapPrm CapEff CapBnd CapAmb; do
                grep -Eq "^$f:[[:space:]]+0+\$" <<<"$output" || fail "$(grep "^$f:" <<<"$output")"
        done
        grep -Eq '^NoNewPrivs:[[:space:]]+1$' <<<"$output" || fail "no NoNewPrivs"
        user_sbx_expect 0 exec "$sid" env
        [ "$(cut -d= -f1 <<<"$output" | sort | xargs)" = "HOME LANG PATH" ] || fail "env: $output"
        user_sbx_expect 0 exec "$sid" sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
        [ "$output" = lo ] || fail "interfaces: $output"
}

@test "user: /workspace, /tmp and the /usr overlay are writable; the host /usr is not touched" {
        local name=sbx-user-overlay-$$-$BATS_TEST_NUMBER
        user_session
        user_sbx_expect 0 exec "$sid" sh -c "echo a > /workspace/f && echo b > /tmp/f && echo c > /usr/$name && cat /workspace/f /tmp/f /usr/$name"
        [ "$output" = "$(printf 'a\nb\nc')" ] || fail "got '$output'"
        [ ! -e "/usr/$name" ] || { rm -f "/usr/$name"; fail "the write landed in the host /usr"; }
}

@test "user: host files of other users stay out of reach" {
        canary "/root/.sbx-user-canary-$$"
        user_session
        user_sbx_expect 0 exec "$sid" sh -c "test ! -e /root/.sbx-user-canary-$$ && test ! -e /etc/shadow && echo hidden"
        [ "$output" = hidden ] || fail "got '$output'"
}

@test "user: exit codes, timeout kills the background grandchild" {
        user_session
        user_sbx_expect 42 exec "$sid" sh -c 'exit 42'
        user_sbx_expect 127 exec "$sid" no-such-command-sbx
        local m
        m=$(marker)
        user_sbx_expect 124 exec -t 1s "$sid" sh -c "sleep $m & sleep $m"
        ! pgrep -f "^sleep $m\$" >/dev/null || fail "sleep $m survived the timeout"
}

@test "user: a command that stops its reaper cannot hold exec past its timeout" {
        user_session
        # B has the sandbox's host uid here: the command can SIGSTOP it, once or over and over
        local t0=$SECONDS
        user_sbx_expect 124 exec --timeout 2 "$sid" sh -c 'kill -STOP $PPID; sleep 1000'
        [ $((SECONDS - t0)) -lt 15 ] || fail "exec returned after $((SECONDS - t0)) s"
        t0=$SECONDS
        user_sbx_expect 124 exec --timeout 2 "$sid" sh -c \
                'trap "" TERM; while :; do kill -STOP $PPID; sleep 0.1; done'
        [ $((SECONDS - t0)) -lt 25 ] || fail "exec returned after $((SECONDS - t0)) s"
        user_sbx_expect 0 exec "$sid" echo alive
        [ "$output" = alive ] || fail "the session: '$output'"
}

@test "user: another exec's reaper killed from inside: that exec says so, not that the session ended" {
        user_session
        # the reapers share the session's one uid: a command can kill another exec's reaper
        local m
        m=$(marker)
        as_user "$user_sbx" exec "$sid" sh -c "sleep $m; echo done" >"$BATS_TEST_TMPDIR/out" \
                2>"$BATS_TEST_TMPDIR/err" &
        local pid=$!
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "the first exec never started"
        user_sbx_expect 0 exec "$sid" sh -c "for d in /proc/[0-9]*; do
                grep -qx sleep \$d/comm 2>/dev/null || continue
                sh=\$(sed -n 's/^PPid:\t*//p' \$d/status)
                b=\$(sed -n 's/^PPid:\t*//p' /proc/\$sh/status)
                grep -qx sbx-reaper /proc/\$b/comm && kill -KILL \$b && echo killed; done"
        [ "$output" = killed ] || fail "the control: no reaper killed ('$output')"
        local rc=0
        wait "$pid" || rc=$?
        [ "$rc" = 125 ] || fail "exec: $rc $(cat "$BATS_TEST_TMPDIR/err")"
        grep -q "reaper .* ended without reporting" "$BATS_TEST_TMPDIR/err" ||
                fail "stderr: $(cat "$BATS_TEST_TMPDIR/err")"
        ! grep -q "session ended" "$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
        user_sbx_expect 0 exec "$sid" echo alive
        [ "$output" = alive ] || fail "the session: '$output'"
        # a destroyed session's exec still says the session ended
        m=$((m + 1))
        as_user "$user_sbx" exec "$sid" sleep "$m" >/dev/null 2>"$BATS_TEST_TMPDIR/err" &
        pid=$!
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "no sleep"
        user_sbx_expect 0 destroy "$sid"
        rc=0
        wait "$pid" || rc=$?
        [ "$rc" = 125 ] || fail "exec after destroy: $rc"
        grep -q "session ended" "$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
}

@test "user: run" {
        user_sbx_expect 0 run -- sh -c 'id -u; hostname'
        [ "$output" = "$(printf '0\nsandbox')" ] || fail "got '$output'"
}

@test "user: TTL expiry and a killed supervisor leave nothing" {
        user_session --ttl 2s
        local rt
        rt=$(user_rt "$test_user")
        sleep 3
        wait_until 5 test ! -e "$rt/$sid" || fail "$rt/$sid still there after the TTL"
        user_sbx_expect 3 exec "$sid" true

        user_session
        local sup
        sup=$(sbx_new_procs | awk '$2 == "sbx-supervisor" { print $1 }')
        [ "$(wc -w <<<"$sup")" -eq 1 ] || fail "expected one supervisor, found '$sup'"
        [ "$(ps -o user= -p "$sup" | xargs)" = "$test_user" ] || fail "the supervisor does not run as the user"
        kill -9 "$sup"
        no_leaked_procs || fail "left: $(sbx_leaked_procs)"
        user_sbx_expect 0 list
        [ ! -e "$rt/$sid" ] || fail "list did not clean up $rt/$sid"
}

@test "another user cannot see, exec in, or destroy the session (own runtime dir)" {
        user_session --name mine
        other_sbx_expect 0 list
        [[ $output != *"$sid"* ]] || fail "the other user lists it: $output"
        other_sbx_expect 3 exec "$sid" touch /workspace/pwned
        other_sbx_expect 3 exec mine touch /workspace/pwned
        other_sbx_expect 3 connect "$sid"
        other_sbx_expect 3 destroy "$sid"
        user_sbx_expect 0 exec "$sid" sh -c 'test ! -e /workspace/pwned && echo untouched'
        [ "$output" = untouched ] || fail "the other user ran a command in the session"
}

# other_in_first_rt CODE? ARGS...: the other user, pointed at the first user's runtime dir.
other_in_first_rt() {
        _try runuser -u "$other_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "${user_no_limits[@]}" \
                HOME="$users_base/$other_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" "$@"
}

@test "another user pointed at the first user's runtime dir is refused" {
        user_session --name mine
        local rt
        rt=$(user_rt "$test_user")
        other_in_first_rt list
        [[ "$output$stderr" != *"$sid"* ]] || fail "the other user saw the id: $output $stderr"
        other_in_first_rt exec "$sid" touch /workspace/pwned
        [ "$status" -ne 0 ] || fail "the other user ran a command: $output"
        other_in_first_rt destroy "$sid"
        [ "$status" -ne 0 ] || fail "the other user destroyed it: $output"
        # even with the directories opened up, the session answers only its owner
        chmod 0755 "$rt" "$rt/$sid"
        other_in_first_rt exec "$sid" touch /workspace/pwned
        [ "$status" -ne 0 ] || fail "with a 0755 runtime dir the other user ran a command: $output"
        other_in_first_rt destroy "$sid"
        [ "$status" -ne 0 ] || fail "with a 0755 runtime dir the other user destroyed it: $output"
        chmod 0700 "$rt" "$rt/$sid"
        user_sbx_expect 0 exec "$sid" sh -c 'test ! -e /workspace/pwned && echo untouched'
        [ "$output" = untouched ] || fail "the other user ran a command in the session"
}

@test "user: a /tmp/sbx-\$UID made by someone else is refused" {
        local uid dir
        uid=$(id -u "$test_user")
        dir=/tmp/sbx-$uid
        if [ -e "$dir" ]; then
                skip "$dir exists already on this host"
        fi
        mkdir -m 0777 "$dir"
        chown "$other_user:" "$dir"
        sbx_cleanup_dirs+=("$dir")
        # no SBX_RUNTIME_DIR, no XDG_RUNTIME_DIR: the fallback is /tmp/sbx-$UID
        _try runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "${user_no_limits[@]}" \
                HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" "$user_sbx" create
        [ "$status" -ne 0 ] || {
                runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin HOME=/ "$user_sbx" destroy "$output" || true
                fail "create used a /tmp/sbx-$uid owned by $other_user"
        }
        [ -z "$(ls -A "$dir")" ] || fail "it wrote into $dir: $(ls -A "$dir")"
}

@test "user: default limits are enforced, or create warns that it goes without them" {
        # No "unlimited" here: the default 512M/1 CPU/256 pids (072-honest-defaults.bats has
        # the details of going without them).
        _try runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
                HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" check --json
        local have_memory
        have_memory=$(printf '%s' "$output" | jq -r '.features[] | select(.name == "cgroup-memory") | .available')
        _try runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
                HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" create
        [ "$status" -eq 0 ] || fail "create with the default limits failed: $stderr"
        if [ "$have_memory" = true ]; then
                [[ $stderr != *memory* ]] || fail "memory is enforced, yet: $stderr"
        else
                [[ $stderr == "sbx: warning: default limits not enforced: memory 512M"* ]] ||
                        fail "no warning naming the memory limit: $stderr"
        fi
        user_sbx_expect 0 destroy "$output"
}

@test "user: a command that lowers the init's limits cannot stall later execs" {
        user_session
        # same uid as the init here: lowering its RLIMIT_NOFILE works, and its accept() fails
        user_sbx_expect 0 exec "$sid" sh -c 'prlimit --pid 1 --nofile=5:5 && echo lowered'
        [ "$output" = lowered ] || fail "$output"
        local init t0 t1
        init=$(sed -n 's/^init_pid=//p' "$(user_rt "$test_user")/$sid/state")
        # the init stops serving (no spinning on a readable socket) and the exec joins from
        # outside, within its timeout
        user_sbx_expect 0 exec -t 5 "$sid" echo served
        [ "$output" = served ] || fail "$output"
        t0=$(awk '{ print $14 + $15 }' "/proc/$init/stat")
        sleep 1
        t1=$(awk '{ print $14 + $15 }' "/proc/$init/stat")
        [ $((t1 - t0)) -lt 10 ] || fail "the init used $((t1 - t0)) ticks in 1 s"
        user_sbx_expect 0 exec -t 5 "$sid" echo again
        [ "$output" = again ] || fail "$output"
}
