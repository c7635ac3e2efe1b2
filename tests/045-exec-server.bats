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

@test "the command's reaper and the init run with a uid of their own: the command cannot touch them" {
        new_session
        in_sbx 'grep ^Uid: /proc/$PPID/status /proc/1/status; grep -E "^(Uid|CapPrm|CapEff|CapBnd):" /proc/self/status'
        local re='Uid:[[:space:]]+([1-9][0-9]*)[[:space:]]+([0-9]+)[[:space:]]+([0-9]+)'
        [[ ${lines[0]} =~ $re ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[1]}" ] &&
                [ "${BASH_REMATCH[3]}" = "${BASH_REMATCH[1]}" ] || fail "reaper: ${lines[0]}"
        [[ ${lines[1]} =~ $re ]] || fail "init: ${lines[1]}"
        [[ ${lines[2]} =~ Uid:[[:space:]]+0[[:space:]]+0[[:space:]]+0[[:space:]]+0 ]] ||
                fail "the command is not plain uid 0: ${lines[2]}"
        local caps
        caps=$(printf '%s\n' "${lines[@]:3}" | tr -s '\t' ' ')
        [ "$caps" = $'CapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapBnd: 0000000000000000' ] ||
                fail "$caps"
        # the attacks: signals, priority, scheduling policy, affinity, on the reaper and on
        # the init; each one is refused, and the exec still reports the command's status
        sbx_expect 7 exec "$sid" sh -c '
                for p in $PPID 1; do
                        for s in KILL STOP TERM; do kill -$s $p 2>/dev/null && echo "$s $p"; done
                        renice -n 19 -p $p >/dev/null 2>&1 && echo "renice $p"
                        chrt -i -p 0 $p 2>/dev/null && echo "chrt $p"
                        taskset -p 1 $p >/dev/null 2>&1 && echo "taskset $p"
                done
                kill -9 -1 2>/dev/null
                exit 7'
        [ -z "$output" ] || fail "allowed: $output"
}

@test "in run the init is the command's reaper: the command can neither stop nor kill it" {
        # pid 1 takes no signal from inside its pid namespace; with the helper uid, nor a
        # renice, chrt or taskset; the exit status still comes back. (A memory limit sends
        # run the client's way, where the reaper is forked from outside: not this test.)
        sbx_expect 7 run --memory unlimited -- sh -c '
                [ $PPID = 1 ] || echo "parent $PPID"
                for s in KILL STOP TERM; do kill -$s 1 2>/dev/null; done
                grep -q "^State:.*[Tt]" /proc/1/status && echo "stopped"
                renice -n 19 -p 1 >/dev/null 2>&1 && echo renice
                chrt -i -p 0 1 2>/dev/null && echo chrt
                taskset -p 1 1 >/dev/null 2>&1 && echo taskset
                kill -9 -1 2>/dev/null
                exit 7'
        [ -z "$output" ] || fail "allowed: $output"
        # and the timeout still ends it all
        local m=$((400000 + RANDOM))
        sbx_expect 124 run --memory unlimited -t 1 -- sh -c "kill -9 1; kill -STOP 1; sleep $m & sleep $m"
        wait_until 5 eval "! pgrep -f '^sleep $m\$' >/dev/null" || fail "sleep $m survived"
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

@test "the command is the OOM killer's first choice, its reaper and the init are not (exec and run)" {
        new_session
        in_sbx 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj /proc/$PPID/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] && [ "${lines[2]}" -lt 1000 ] ||
                fail "$output"
        sbx_ok run -- sh -c 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] || fail "$output"
}

@test "a command stopped before its execve cannot hold the exec past its timeout" {
        new_session
        # A background process of one exec stops every newer process it can, over and over;
        # the next exec must still end by its timeout (0 if it slipped through), not hang.
        in_sbx 'printf "%s\n" "for i in \$(seq 3000); do for p in /proc/[0-9]*; do" \
                "p=\${p#/proc/}; [ \$p -gt \$1 ] && [ \$p != \$\$ ] && kill -STOP \$p 2>/dev/null" \
                "done; done" >/tmp/stopper; sh /tmp/stopper $$ >/dev/null 2>&1 &'
        local start=$SECONDS
        sbx_try exec -t 2 "$sid" true
        [ "$status" -eq 0 ] || [ "$status" -eq 124 ] || fail "status $status: $stderr"
        [ $((SECONDS - start)) -le 20 ] || fail "the exec took $((SECONDS - start)) s"
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
