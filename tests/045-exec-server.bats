#!/usr/bin/env bats
# exec through the session init's own exec server (docs/DESIGN.md, "exec"): what the command
# inherits from the init instead of having it set up per exec, the boundary that keeps the
# command away from its reaper and the init, a malformed request, and the client-side path
# that takes over when the server cannot serve.

load helpers
setup() {
        setup_sbx
}
teardown() {
        teardown_sbx
}

# A python3 client of the session's exec socket: sends $1 (bytes, as a Python literal) and
# prints what comes back first, or "eof".
raw_request() {
        python3 - "$SBX_RUNTIME_DIR/$sid/exec" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(eval(sys.argv[2]))  # a bytes expression of the test
s.settimeout(10)
try:
    got = s.recv(4096)
    print(got[40:].split(b"\0")[0].decode() if got else "eof")
except ConnectionResetError:
    print("reset")
EOF
}

@test "the command's reaper runs with a uid of its own: the command cannot kill or stop it" {
        new_session
        # real and saved uid of the reaper (the command's parent) and of the init: not 0
        in_sbx 'grep ^Uid: /proc/$PPID/status /proc/1/status; grep ^Uid: /proc/self/status'
        [[ ${lines[0]} =~ Uid:[[:space:]]+([0-9]+)[[:space:]]+0[[:space:]]+([0-9]+) ]] ||
                fail "reaper: ${lines[0]}"
        [ "${BASH_REMATCH[1]}" -ne 0 ] && [ "${BASH_REMATCH[2]}" -ne 0 ] || fail "${lines[0]}"
        [[ ${lines[2]} =~ Uid:[[:space:]]+0[[:space:]]+0[[:space:]]+0[[:space:]]+0 ]] ||
                fail "the command is not plain uid 0: ${lines[2]}"
        # the attacks: each signal is refused, and the exec still reports the command's status
        sbx_expect 7 exec "$sid" sh -c '
                for s in KILL STOP TERM; do kill -$s $PPID 2>/dev/null && echo "$s delivered"; done
                kill -9 -1 2>/dev/null
                exit 7'
        [ -z "$output" ] || fail "$output"
}

@test "the timeout still kills a command that tried to kill its reaper" {
        new_session
        local m=$((400000 + RANDOM))
        sbx_expect 124 exec -t 1 "$sid" sh -c "kill -9 \$PPID; sleep $m"
        wait_until 5 eval "! pgrep -f '^sleep $m\$' >/dev/null" || fail "sleep $m survived"
}

@test "the command starts with no signal blocked or ignored (exec and run)" {
        new_session
        sbx_ok exec "$sid" grep -E '^Sig(Blk|Ign):' /proc/self/status
        [ "$output" = $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000' ] || fail "$output"
        sbx_ok run -- grep -E '^Sig(Blk|Ign):' /proc/self/status
        [ "$output" = $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000' ] || fail "$output"
        sbx_expect 143 exec "$sid" sh -c 'kill -TERM $$'
        sbx_expect 143 run -- sh -c 'kill -TERM $$'
}

@test "the command is the OOM killer's first choice, the init is not (exec and run)" {
        new_session
        in_sbx 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] || fail "$output"
        sbx_ok run -- sh -c 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] || fail "$output"
}

@test "a malformed request ends only its own reaper; the session keeps serving" {
        new_session
        run raw_request 'b"garbage"'
        [ "$status" -eq 0 ] && [[ $output == "malformed exec request"* ]] || fail "$output"
        # a well-formed header that promises fds it does not send
        run raw_request 'b"1xbs" + b"\0" * 20 + b"\1\0\0\0" + b"\0\0\0\0" + b"/\0true\0"'
        [ "$status" -eq 0 ] && [[ $output == "malformed exec request"* ]] || fail "$output"
        run raw_request 'b""'
        [ "$status" -eq 0 ] && [ "$output" = eof ] || fail "$output"
        sbx_ok exec "$sid" echo still
        [ "$output" = still ]
        no_leaked_procs || true
        [ "$(sbx_new_procs | grep -c sbx-reaper)" -eq 0 ] || fail "$(sbx_new_procs)"
}

@test "without the exec socket (a session of an older sbx) exec joins from outside" {
        new_session
        rm "$SBX_RUNTIME_DIR/$sid/exec"
        in_sbx 'echo ok; grep ^Uid: /proc/$PPID/status'
        [ "${lines[0]}" = ok ] || fail "$output"
        sbx_expect 3 exec "$sid" sh -c 'exit 3'
}

@test "an argv too big for one request goes the client-side way" {
        new_session
        local big
        big=$(head -c 50000 /dev/zero | tr '\0' a)
        sbx_ok exec "$sid" sh -c 'echo $((${#1} + ${#2} + ${#3} + ${#4}))' sh "$big" "$big" "$big" "$big"
        [ "$output" = 200000 ] || fail "${output:0:200}"
}

@test "only the init listens on the exec socket" {
        new_session
        local holders init
        [ -S "$SBX_RUNTIME_DIR/$sid/exec" ] || fail "no exec socket"
        # every process of this test's runtime dir that holds a listening exec socket
        holders=$(ss -xlpn | grep -F "/exec " | grep -o 'pid=[0-9]*' | sort -u |
                while IFS== read -r _ p; do
                        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                                grep -qxF "SBX_RUNTIME_DIR=$SBX_RUNTIME_DIR" && echo "$p" || true
                done)
        init=$(pgrep -x sbx-init | while read -r p; do
                tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                        grep -qxF "SBX_RUNTIME_DIR=$SBX_RUNTIME_DIR" && echo "$p" || true; done)
        [ -n "$init" ] || fail "no init found"
        [ "$holders" = "$init" ] || fail "holders '$holders', init '$init'"
}
