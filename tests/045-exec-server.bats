#!/usr/bin/env bats
# exec through the session init's own exec server (docs/DESIGN.md, "exec"): what the command
# inherits from the init instead of having it set up per exec, the boundary that keeps the
# command away from its reaper and the init, a malformed request, and the client-side path
# that takes over when the server cannot serve. Sessions here have no memory limit: with one,
# every exec takes the client's path (server_session; the last test checks that split).

load helpers

# A session whose execs the init serves: no memory limit.
server_session() {
        new_session --memory unlimited "$@"
}

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
        server_session
        in_sbx 'grep ^Uid: /proc/$PPID/status /proc/1/status; grep -E "^(Uid|CapPrm|CapEff|CapBnd):" /proc/self/status'
        local re='Uid:[[:space:]]+([1-9][0-9]*)[[:space:]]+([0-9]+)[[:space:]]+([0-9]+)'
        [[ ${lines[0]} =~ $re ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[1]}" ] &&
                [ "${BASH_REMATCH[3]}" = "${BASH_REMATCH[1]}" ] || fail "reaper: ${lines[0]}"
        local reaper_uid=${BASH_REMATCH[1]}
        [[ ${lines[1]} =~ $re ]] || fail "init: ${lines[1]}"
        # the init's own uid: forked by the init (a reaper from outside shows the overflow uid)
        [ "${BASH_REMATCH[1]}" = "$reaper_uid" ] && [ "$reaper_uid" != 65534 ] ||
                fail "not the server's reaper: ${lines[0]} / ${lines[1]}"
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
        server_session
        local m=$((400000 + RANDOM))
        sbx_expect 124 exec -t 1 "$sid" sh -c "kill -9 \$PPID; sleep $m"
        wait_until 5 eval "! pgrep -f '^sleep $m\$' >/dev/null" || fail "sleep $m survived"
}

@test "the command starts with no signal blocked or ignored (exec and run)" {
        server_session
        sbx_ok exec "$sid" grep -E '^Sig(Blk|Ign):' /proc/self/status
        [ "$output" = $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000' ] || fail "$output"
        sbx_ok run -- grep -E '^Sig(Blk|Ign):' /proc/self/status
        [ "$output" = $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000' ] || fail "$output"
        sbx_expect 143 exec "$sid" sh -c 'kill -TERM $$'
        sbx_expect 143 run -- sh -c 'kill -TERM $$'
}

@test "the command is the OOM killer's first choice, its reaper and the init are not (exec and run)" {
        server_session
        in_sbx 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj /proc/$PPID/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] && [ "${lines[2]}" -lt 1000 ] ||
                fail "$output"
        sbx_ok run -- sh -c 'cat /proc/self/oom_score_adj /proc/1/oom_score_adj'
        [ "${lines[0]}" = 1000 ] && [ "${lines[1]}" -lt 1000 ] || fail "$output"
}

@test "a command stopped before its execve cannot hold the exec past its timeout" {
        server_session
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
        server_session
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
        server_session
        rm "$SBX_RUNTIME_DIR/$sid/exec"
        in_sbx 'echo ok; grep ^Uid: /proc/$PPID/status'
        [ "${lines[0]}" = ok ] || fail "$output"
        sbx_expect 3 exec "$sid" sh -c 'exit 3'
}

@test "an argv too big for one request goes the client-side way" {
        server_session
        local big
        big=$(head -c 50000 /dev/zero | tr '\0' a)
        sbx_ok exec "$sid" sh -c 'echo $((${#1} + ${#2} + ${#3} + ${#4}))' sh "$big" "$big" "$big" "$big"
        [ "$output" = 200000 ] || fail "${output:0:200}"
}

# spare_of INIT: the init's spare reaper(s), one pid a line.
spare_of() {
        pgrep -P "$1" -x sbx-spare || true
}

@test "only the init and its spare reaper listen on the exec socket" {
        server_session
        local holders init spare
        [ -S "$SBX_RUNTIME_DIR/$sid/exec" ] || fail "no exec socket"
        init=$(state_key init_pid)
        wait_until 5 eval '[ -n "$(spare_of "$init")" ]' || fail "no spare reaper"
        spare=$(spare_of "$init")
        # every process that holds the listening socket the init holds (it is bound by a
        # /proc/self/fd path: ss cannot name the runtime dir)
        holders=$(ss -xlpn | grep -F "/exec " | grep -F "pid=$init," | grep -o 'pid=[0-9]*' |
                cut -d= -f2 | sort -un | tr '\n' ' ')
        [ "$holders" = "$(printf '%s\n' "$init" "$spare" | sort -n | tr '\n' ' ')" ] ||
                fail "holders '$holders', init $init, spare $spare"
        # the spare has the init's uid (the helper's, out of the command's reach)
        [ "$(awk '/^Uid:/ { print $2 }' "/proc/$spare/status")" = \
                "$(awk '/^Uid:/ { print $2 }' "/proc/$init/status")" ] || fail "uids differ"
}

@test "the spare serves the next exec and the init forks the one after; killed, it is not replaced" {
        server_session
        local init first second
        init=$(state_key init_pid)
        wait_until 5 eval '[ -n "$(spare_of "$init")" ]' || fail "no spare reaper"
        first=$(spare_of "$init")
        # the exec's reaper is the spare that waited (its pid inside: NSpid on the host)
        local inside
        inside=$(awk '/^NSpid:/ { print $3 }' "/proc/$first/status")
        sbx_ok exec "$sid" sh -c 'echo $PPID'
        [ -n "$inside" ] && [ "$output" = "$inside" ] || fail "reaper $output, spare $inside"
        wait_until 5 eval '[ -n "$(spare_of "$init")" ]' || fail "no second spare"
        second=$(spare_of "$init")
        [ "$second" != "$first" ] && [ "$(wc -l <<<"$second")" = 1 ] || fail "spares: $second"
        # a spare that dies without a connection (here: killed from the host) gets no
        # successor, and the init accepts and forks reapers itself again
        kill -9 "$second"
        sleep 0.3
        [ -z "$(spare_of "$init")" ] || fail "replaced: $(spare_of "$init")"
        sbx_ok exec "$sid" echo served
        [ "$output" = served ]
        [ -z "$(spare_of "$init")" ] || fail "a spare came back"
        [ "$(pgrep -c -P "$init")" -le 1 ] || fail "the init's children: $(pgrep -a -P "$init")"
}

@test "a session with a memory limit: v1 served by the init (with a spare), v2 the client's path" {
        new_session --memory 256M
        local init
        init=$(state_key init_pid)
        sbx_ok exec "$sid" sh -c 'awk "/^Uid:/ { print \$2 }" /proc/$PPID/status'
        if [ -n "$(state_key cgroup_v1_memory)" ]; then
                wait_until 5 eval '[ -n "$(spare_of "$init")" ]' || fail "no spare reaper"
                [ "$output" != 65534 ] || fail "a reaper from outside under a v1 memory limit"
        else
                [ -z "$(spare_of "$init")" ] || fail "a spare in a v2 memory-limited session"
                # a reaper from outside: the host's root is no uid of the session (overflow)
                [ "$output" = 65534 ] || fail "reaper uid $output"
        fi
}

@test "in run the init reaps while the command takes the client's path (setup step, memory limit)" {
        # the setup step joins from outside and leaves a background child behind; with a
        # memory limit the command joins too: the init, waiting for a request that never
        # comes, must still reap
        SBX_SETUP='sleep 0.2 & exit 0' sbx_ok run --memory 256M -- sh -c 'sleep 0.6; ps -eo stat=,comm='
        ! grep -q '^Z' <<<"$output" || fail "zombies: $output"
}
