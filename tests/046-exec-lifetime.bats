#!/usr/bin/env bats
# How long an exec lasts (issue 17): it returns, and closes its output, when the command's
# main process exits, whatever that process left in the background; what the background
# writes later is discarded and never turns into SIGPIPE; and a `sbx exec` killed with
# SIGKILL at any moment takes its command with it. Every check runs on both exec paths: the
# client joining the session (forced here by tests/race_inject.c's SBXT_NO_EXEC_SERVER, as for
# an init that serves no more) and the init's exec server, in text, --json, -T and -i modes.

BATS_TEST_TIMEOUT=300
load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

paths=(join server)

# path_session PATH: a session whose execs take PATH; checks it (as root: a reaper from
# outside has the overflow uid, the server's has the init's helper uid).
path_session() {
        case $1 in
        join)
                export LD_PRELOAD=$SBX_RACE_INJECT SBXT_NO_EXEC_SERVER=1 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
                new_session
                ;;
        server)
                unset LD_PRELOAD SBXT_NO_EXEC_SERVER
                new_session
                ;;
        esac
        [ "$(id -u)" -eq 0 ] || return 0
        sbx_ok exec "$sid" sh -c 'awk "/^Uid:/ { print \$2 }" /proc/$PPID/status'
        case $1 in
        join) [ "$output" = 65534 ] || fail "not the join path: reaper uid $output" ;;
        server) [ "$output" != 65534 ] || fail "not the server path: reaper uid $output" ;;
        esac
}

# captured ARGS...: `out=$(sbx ARGS...)` as a script would write it, under the helper's
# timeout: a process that keeps the pipe open makes it time out (status 124).
captured() {
        _expect 0 sh -c 'out=$("$@" </dev/null); printf "%s\n" "$out"' sh "$SBX" "$@"
}

@test "the check is real: a background process that holds a captured pipe hangs \$(...)" {
        sbx_call_timeout=3
        local pidf=$BATS_TEST_TMPDIR/bg.pid
        _expect 124 sh -c 'out=$(sh -c "sleep 30 3>&- & echo \$! >$1; echo started"); echo "$out"' \
                sh "$pidf"
        kill "$(cat "$pidf")"
}

@test "exec returns and closes its output when the main process exits (every path and mode)" {
        sbx_call_timeout=15
        local p m
        for p in "${paths[@]}"; do
                path_session "$p"
                for m in text --json -T -i; do
                        local args=()
                        [ "$m" = text ] || args=("$m")
                        # a silent server, and a writer that never stops
                        captured exec "${args[@]}" "$sid" sh -c \
                                'trap "" HUP; echo started; sleep 300 & yes >&2 & yes &'
                        case $m in
                        --json) json '.exit_code == 0 and (.output | startswith("started"))' >/dev/null ||
                                fail "$p $m: ${output:0:200}" ;;
                        *) [[ ${output:0:7} == started ]] || fail "$p $m: ${output:0:200}" ;;
                        esac
                        # the background processes live on, unharmed
                        sbx_ok exec "$sid" sh -c 'pgrep -x yes | wc -l; pgrep -x sleep | wc -l'
                        [ "${lines[0]}" = 2 ] && [ "${lines[1]}" = 1 ] ||
                                fail "$p $m: background processes: ${lines[*]}"
                        sbx_ok exec "$sid" sh -c 'pkill -x yes; pkill -x sleep; true'
                done
                sbx_ok destroy "$sid"
        done
}

@test "later output of a background process is discarded, never SIGPIPE" {
        local p m
        for p in "${paths[@]}"; do
                path_session "$p"
                for m in text --json -T -i; do
                        local args=()
                        [ "$m" = text ] || args=("$m")
                        sbx_ok exec "$sid" rm -f /tmp/alive /tmp/status
                        captured exec "${args[@]}" "$sid" sh -c '
                                trap "" HUP
                                ( sleep 0.5; i=0
                                  while [ $i -lt 2000 ]; do echo late; echo late >&2; i=$((i+1)); done
                                  echo alive >/tmp/alive ) &
                                echo started'
                        [[ $output != *late* ]] || fail "$p $m: later output reached the caller"
                        wait_until 10 sbx_try exec "$sid" test -e /tmp/alive ||
                                fail "$p $m: the background writer did not live on (SIGPIPE?)"
                done
                sbx_ok destroy "$sid"
        done
}

@test "the output the command wrote before it exited is all there (also with a busy background)" {
        local p m
        for p in "${paths[@]}"; do
                path_session "$p"
                for m in text --json; do
                        local args=()
                        [ "$m" = text ] || args=("$m" --max-output 64M)
                        # a background writer shares the command's stdout, busy when it ends
                        captured exec "${args[@]}" "$sid" sh -c '
                                seq 1 100000
                                sh -c "while :; do echo bg; done" bgwriter &
                                sleep 0.3; echo the-end'
                        [ "$m" = text ] || output=$(jq -r .output <<<"$output")
                        local nums
                        nums=$(grep -Ex '[0-9]+' <<<"$output")
                        [ "$(wc -l <<<"$nums")" = 100000 ] && [ "$(tail -n1 <<<"$nums")" = 100000 ] ||
                                fail "$p $m: $(wc -l <<<"$nums") lines of the command's"
                        grep -qx the-end <<<"$output" || fail "$p $m: the last line is missing"
                        grep -qx bg <<<"$output" || fail "$p $m: the background did not write"
                        sbx_ok exec "$sid" pkill -f bgwriter
                done
                sbx_ok destroy "$sid"
        done
}

# kill_trials N: N times, start `sbx exec $sid ...` and SIGKILL it after 0-5.9 ms; prints
# how many of the commands are still running in the session afterwards.
kill_trials() {
        local i pid
        for ((i = 0; i < $1; i++)); do
                "$SBX" exec "$sid" sh -c 'sleep 1000 & exec sleep 1001' >/dev/null 2>&1 &
                pid=$!
                sleep "0.00$((RANDOM % 6))$((RANDOM % 10))"
                kill -9 "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
        done
        sleep 0.5
        sbx_ok exec "$sid" sh -c 'pgrep -c -x sleep || true'
}

@test "the check is real: a command that runs is counted, and dies when its client is killed" {
        local p pid
        for p in "${paths[@]}"; do
                path_session "$p"
                "$SBX" exec "$sid" sh -c 'sleep 1000 & exec sleep 1001' >/dev/null 2>&1 &
                pid=$!
                wait_until 10 sbx_try exec "$sid" sh -c '[ "$(pgrep -c -x sleep)" = 2 ]' ||
                        fail "$p: the command is not seen running"
                kill -9 "$pid"
                wait "$pid" 2>/dev/null || true
                wait_until 10 sbx_try exec "$sid" sh -c '! pgrep -x sleep' ||
                        fail "$p: the command outlived its client"
                sbx_ok destroy "$sid"
        done
}

@test "sbx exec killed 0-6 ms after it starts never leaves its command running (both paths)" {
        local p
        for p in "${paths[@]}"; do
                path_session "$p"
                kill_trials 150
                [ "$output" = 0 ] || fail "$p: $output command processes outlived their killed client"
                sbx_ok destroy "$sid"
        done
}

# piped ARGS... | head -1 under a 20 s timeout: prints the status of sbx (141: SIGPIPE's).
piped_head() {
        bash -c 'timeout 20 "$@" | head -1 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$SBX" "$@"
}

@test "a caller's reader that is gone (| head) gives the command SIGPIPE, as in a shell pipeline" {
        # Before, the client and B read and dropped the output until the command ended by
        # itself: 'yes' ran until the timeout (status 124 here). 141 can only be SIGPIPE's.
        local p
        for p in "${paths[@]}"; do
                path_session "$p"
                [ "$(piped_head exec "$sid" yes)" = 141 ] || fail "$p: stdout"
                [ "$(bash -c 'timeout 20 "$@" 2>&1 >/dev/null | head -1 >/dev/null
                              echo "${PIPESTATUS[0]}"' _ "$SBX" exec "$sid" sh -c 'yes >&2')" = 141 ] ||
                        fail "$p: stderr"
                # a command that ignores SIGPIPE sees EPIPE instead (yes then exits 1)
                sbx_ok exec "$sid" rm -f /tmp/rc
                piped_head exec "$sid" sh -c 'trap "" PIPE; yes 2>/dev/null; echo $? >/tmp/rc' >/dev/null
                sbx_ok exec "$sid" cat /tmp/rc
                [ "$output" = 1 ] || fail "$p: with SIGPIPE ignored, yes ended with '$output'"
                # What was written and never read still counts in the audit log: 130000 bytes
                # fit in the two 64 KiB pipes and the client's hands, so the command ends (3)
                # and part of it is still queued when the reader goes.
                [ "$(bash -c '"$@" | (sleep 0.5; exit 0); echo "${PIPESTATUS[0]}"' _ "$SBX" \
                        exec "$sid" sh -c 'head -c 130000 /dev/zero; exit 3')" = 3 ] ||
                        fail "$p: the writer did not finish"
                sbx_ok log --json "$sid"
                json '[.[] | select(.event == "exec")][-1] | .output_bytes == 130000' >/dev/null ||
                        fail "$p: output_bytes: $(json '[.[] | select(.event == "exec")][-1]')"
                sbx_ok destroy "$sid"
        done
        [ "$(piped_head run -- yes)" = 141 ] || fail "run"
        no_leaked_procs || fail "processes left: $(sbx_leaked_procs)"
}

@test "a caller's stdout that cannot take the output (a full disk) stops the command; exec fails" {
        # Before, the output was dropped and exec passed for a success: 'echo hi >/dev/full'
        # exited 0, and 'yes' ran until the timeout (124 here).
        local p rc out
        for p in "${paths[@]}"; do
                path_session "$p"
                rc=0
                timeout 20 "$SBX" exec "$sid" yes >/dev/full 2>"$BATS_TEST_TMPDIR/err" || rc=$?
                [ "$rc" = 125 ] || fail "$p: yes: $rc"
                grep -q "failed to write the command's output: No space left on device" \
                        "$BATS_TEST_TMPDIR/err" || fail "$p: $(cat "$BATS_TEST_TMPDIR/err")"
                rc=0
                "$SBX" exec "$sid" echo hi >/dev/full 2>/dev/null || rc=$?
                [ "$rc" = 125 ] || fail "$p: echo: $rc"
                sbx_ok log --json "$sid"
                [ "$(json '[.[] | select(.event == "exec")][-1] | .exit_code')" = 125 ] ||
                        fail "$p: audit: $(json '[.[] | select(.event == "exec")][-1]')"
                # a stderr that fails is only dropped: the command goes on, stdout is whole
                rc=0
                out=$("$SBX" exec "$sid" sh -c 'echo err >&2; echo out' 2>/dev/full) || rc=$?
                [ "$rc:$out" = 0:out ] || fail "$p: stderr full: $rc '$out'"
                # a non-blocking stdout that is full for a while is waited for, not a failure
                run python3 -c '
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen(sys.argv[1:], stdout=w)
os.close(w)
time.sleep(0.5)
n = 0
while (b := os.read(r, 65536)):
    n += len(b)
print(n, p.wait())' "$SBX" exec "$sid" head -c 1000000 /dev/zero
                [ "$output" = "1000000 0" ] || fail "$p: non-blocking stdout: $output"
                # the control: the same commands with a stdout that takes them
                sbx_ok exec "$sid" echo hi
                sbx_ok destroy "$sid"
        done
        rc=0
        timeout 20 "$SBX" run -- yes >/dev/full 2>/dev/null || rc=$?
        [ "$rc" = 125 ] || fail "run: $rc"
        no_leaked_procs || fail "processes left: $(sbx_leaked_procs)"
}
