#!/usr/bin/env bats
# Detached commands: exec -d, ps, logs, wait, kill. Their output and state outlive the client
# that started them, are bounded, and go with the session (destroy, TTL); every bad input has
# its exit code; hostile commands (a flood, an escape from the process group, a closed stdout)
# change none of that.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# start [EXEC-OPTIONS...] -- CMD [ARG...]: exec -d in $sid; the command id in $cmd.
start() {
        local opts=()
        while [ "$1" != -- ]; do
                opts+=("$1")
                shift
        done
        sbx_ok exec -d "${opts[@]}" "$sid" "$@"
        [[ $output =~ ^c[1-9][0-9]*$ ]] || fail "exec -d printed '$output', not a command id"
        cmd=$output
}

# host_count PATTERN: processes on the host whose command line is exactly PATTERN.
host_count() {
        local n=0 p
        for p in /proc/[0-9]*; do
                [ "$( (tr '\0' ' ' <"$p/cmdline") 2>/dev/null)" = "$1 " ] && n=$((n + 1))
        done
        echo "$n"
}

# keepers: the live keepers recorded for session $sid.
keepers() {
        local f pid
        for f in "$SBX_RUNTIME_DIR/$sid"/cmds/c*/state; do
                [ -e "$f" ] || continue
                pid=$(sed -n 's/^keeper \([0-9]*\) .*/\1/p' "$f")
                [ "$pid" -gt 0 ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sbx-keeper ] &&
                        echo "$pid"
        done
        return 0
}

@test "exec -d prints a command id at once; ps, logs and wait show the command" {
        new_session
        local t0=$SECONDS
        start -- sh -c 'echo out; echo err >&2; sleep 2; echo late; exit 3'
        [ "$cmd" = c1 ]
        [ $((SECONDS - t0)) -lt 2 ] || fail "exec -d waited for the command"
        sbx_ok ps "$sid"
        [[ ${lines[0]} == "ID "*STATE*EXIT*COMMAND ]]
        [[ ${lines[1]} =~ ^c1\ +running\ +-\ .*sh\ -c\ echo\ out ]] || fail "ps: ${lines[1]}"
        sbx_ok ps --json "$sid"
        json_doc
        json '.[0] | .id == "c1" and .state == "running" and .exit_code == null and
                .argv[0] == "sh" and (.started_at | test("^20[0-9-]+T")) and .error == null' >/dev/null
        wait_until 5 sh -c "'$SBX' logs '$sid' c1 | grep -q err"
        sbx_expect 3 wait "$sid" c1
        sbx_ok logs "$sid" c1
        [ "$output" = "$(printf 'out\nerr\nlate')" ]
        sbx_ok ps --json "$sid"
        json '.[0] | .state == "exited" and .exit_code == 3 and .duration_ms >= 2000 and
                .output_bytes == 13 and .dropped_bytes == 0' >/dev/null
        sbx_expect 3 wait --json "$sid" c1
        json '.exit_code == 3 and .state == "exited"' >/dev/null
        sbx_ok exec -d --json "$sid" -- true
        json '.id == "c2"' >/dev/null
        # the audit log has its start and end
        sbx_ok log "$sid"
        grep -q '"event":"detach","command":"c1","argv":\["sh"' <<<"$output"
        grep -q '"event":"detach_end","command":"c1","exit_code":3' <<<"$output"
}

@test "exec -d keeps exec's options: env, workdir, and the session's environment" {
        new_session --env FROM_SESSION=s1
        start -e FOO=bar -w /tmp -- sh -c 'echo "$FOO $FROM_SESSION $(pwd)"'
        sbx_ok wait "$sid" "$cmd"
        sbx_ok logs "$sid" "$cmd"
        [ "$output" = "bar s1 /tmp" ]
}

@test "wait exits with exec's codes: 0, 124, 126, 127, 128+N" {
        new_session
        start -- true
        sbx_ok wait "$sid" "$cmd"
        start -t 1 -- sleep 30
        sbx_expect 124 wait "$sid" "$cmd"
        sbx_ok ps --json "$sid"
        json '.[1].timed_out == true and .[1].exit_code == 124' >/dev/null
        start -- /no/such/program
        sbx_expect 127 wait "$sid" "$cmd"
        start -- /etc/hostname
        sbx_expect 126 wait "$sid" "$cmd"
        start -- sh -c 'kill -USR1 $$'
        sbx_expect 138 wait "$sid" "$cmd"
}

@test "logs: from a byte cursor, --json with the next cursor, --follow until the end" {
        new_session
        start -- printf abcdef
        sbx_ok wait "$sid" "$cmd"
        sbx_ok logs --cursor 2 "$sid" "$cmd"
        [ "$output" = cdef ]
        sbx_ok logs --json --cursor 2 "$sid" "$cmd"
        json_doc
        json '.data == "cdef" and .cursor == 6 and .dropped == 0 and .ended == true' >/dev/null
        sbx_ok logs --cursor 6 "$sid" "$cmd"
        [ -z "$output" ]
        sbx_expect 2 logs --cursor 7 "$sid" "$cmd"
        [[ $stderr == *"past the end"* ]]
        # a running command: --json says it has not ended; --follow prints until it ends
        start -- sh -c 'for i in 1 2 3; do echo line$i; sleep 0.5; done'
        sbx_ok logs --json "$sid" "$cmd"
        json '.ended == false' >/dev/null
        sbx_ok logs --follow "$sid" "$cmd"
        [ "$output" = "$(printf 'line1\nline2\nline3')" ]
        sbx_ok logs --follow --json --cursor 6 "$sid" "$cmd"
        [ "$(jq -rs 'map(.data) | join("")' <<<"$output")" = "$(printf 'line2\nline3\n')" ]
        jq -es 'last | .ended == true and .cursor == 18' <<<"$output" >/dev/null
}

@test "bad input: ids, command ids, ../, cursors, signals, options" {
        new_session
        start -- sleep 30
        sbx_expect 2 ps
        sbx_expect 2 logs "$sid"
        sbx_expect 2 wait "$sid"
        sbx_expect 2 kill "$sid"
        sbx_expect 2 ps "$sid" extra
        sbx_expect 3 ps sb_0123456789abcdef
        sbx_expect 3 logs no-such-name c1
        sbx_expect 3 logs "../$sid" c1
        local bad
        for bad in ../c1 c1/.. ../state c0 c01 C1 x "" c1234567890 "c1 "; do
                sbx_expect 2 logs "$sid" "$bad"
                [[ $stderr == *"invalid command id"* ]] || fail "'$bad': $stderr"
        done
        sbx_expect 2 logs --json "$sid" ../c1
        json '.error.code == "usage"' >/dev/null
        sbx_expect 1 logs "$sid" c99
        sbx_expect 1 wait --json "$sid" c99
        json '.error.code == "not_found"' >/dev/null
        sbx_expect 1 kill "$sid" c99
        for bad in -1 abc 1x ""; do
                sbx_expect 2 logs --cursor "$bad" "$sid" c1
        done
        for bad in BOGUS SIGBOGUS 0 65 -9 9x ""; do
                sbx_expect 2 kill "$sid" c1 "$bad"
        done
        sbx_expect 2 kill "$sid" c1 TERM extra
        sbx_expect 2 exec -d -T "$sid" true
        sbx_expect 2 exec -d -i "$sid" true
        sbx_expect 2 exec -d "$sid"
        sbx_expect 2 ps --cursor 1 "$sid"
        sbx_expect 2 wait --follow "$sid" c1
        # nothing of it touched the command
        sbx_ok ps --json "$sid"
        json 'length == 1 and .[0].state == "running"' >/dev/null
        sbx_ok kill "$sid" c1 KILL
}

@test "kill: TERM by default to the process group; names and numbers; an ended command" {
        new_session
        start -- sh -c 'trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 0.1; done'
        wait_until 5 sh -c "'$SBX' logs '$sid' '$cmd' | grep -q ready"
        sbx_ok kill "$sid" "$cmd"
        sbx_expect 7 wait "$sid" "$cmd"
        sbx_ok logs "$sid" "$cmd"
        [[ $output == *"got TERM"* ]]
        sbx_ok ps --json "$sid"
        json '.[0].state == "killed" and .[0].exit_code == 7' >/dev/null
        sbx_expect 1 kill --json "$sid" "$cmd"
        json '.error.code == "not_running"' >/dev/null
        # the group: a child in the same group gets the signal too
        # (HUP: a non-interactive sh starts its background children with SIGINT ignored)
        start -- sh -c 'sleep 3173 & wait'
        wait_until 5 test "$(host_count 'sleep 3173')" -eq 1
        sbx_ok kill --json "$sid" "$cmd" sighup
        json '.signal == 1' >/dev/null
        sbx_expect 129 wait "$sid" "$cmd"
        wait_until 5 test "$(host_count 'sleep 3173')" -eq 0
        start -- sleep 3174
        sbx_ok kill "$sid" "$cmd" 9
        sbx_expect 137 wait "$sid" "$cmd"
        sbx_ok log "$sid"
        grep -q '"event":"detach_kill","command":"c1","signal":15' <<<"$output"
}

# The group is named by the command's pidfd where the kernel can (Linux 6.9,
# PIDFD_SIGNAL_PROCESS_GROUP), so no pid number that may be freed and reused is signalled.
@test "kill: the group is signalled through the command's pidfd, not by number (Linux 6.9+)" {
        local major minor log=$BATS_TEST_TMPDIR/kill.strace
        IFS=. read -r major minor _ <<<"$(uname -r)"
        [ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 9 ]; } ||
                skip "kernel $(uname -r) has no PIDFD_SIGNAL_PROCESS_GROUP"
        new_session
        start -- sh -c 'sleep 3177 & wait'
        wait_until 5 test "$(host_count 'sleep 3177')" -eq 1
        LSAN_OPTIONS=detect_leaks=0 _expect 0 strace -f -qq -e trace=kill,pidfd_send_signal \
                -o "$log" "$SBX" kill "$sid" "$cmd" HUP
        # positive control: the trace saw the signal sent at all
        grep -Eq '(kill|pidfd_send_signal)\(.*SIGHUP' "$log" || fail "no signal in the trace: $(cat "$log")"
        grep -Eq 'pidfd_send_signal\([0-9]+, SIGHUP, NULL, (0x4|PIDFD_SIGNAL_PROCESS_GROUP)\) = 0' "$log" ||
                fail "not through the pidfd's group: $(cat "$log")"
        ! grep -q '^[0-9]* *kill(' "$log" || fail "signalled by number: $(cat "$log")"
        sbx_expect 129 wait "$sid" "$cmd"
        wait_until 5 test "$(host_count 'sleep 3177')" -eq 0
}

@test "hostile: a flood past the cap keeps the last bytes, with monotonic cursors" {
        new_session
        start --max-output 64K -- sh -c 'head -c 1000000 /dev/zero | tr "\0" a; echo END'
        sbx_ok wait "$sid" "$cmd"
        sbx_ok ps --json "$sid"
        # positive control: it did write more than the cap
        json '.[0].output_bytes == 1000004 and .[0].dropped_bytes > 0' >/dev/null ||
                fail "$output"
        local kept
        kept=$(cat "$SBX_RUNTIME_DIR/$sid/cmds/$cmd"/out.* | wc -c)
        [ "$kept" -le 65536 ] && [ "$kept" -ge 32768 ] || fail "kept $kept bytes for a 64K cap"
        sbx_ok logs --json "$sid" "$cmd"
        json '.dropped > 900000 and .cursor == 1000004 and (.data | endswith("aEND\n")) and
                (.data | length) + .dropped == 1000004' >/dev/null
        sbx_ok logs "$sid" "$cmd"
        [[ ${lines[0]} =~ ^\[sbx:\ [0-9]+\ bytes\ of\ output\ dropped\]$ ]]
        # a cursor inside what is kept reads from there, without a marker
        sbx_ok logs --json --cursor 999990 "$sid" "$cmd"
        json '.dropped == 0 and .data == "aaaaaaaaaaEND\n"' >/dev/null
        # the default cap: 8M
        start -- sh -c 'head -c 20000000 /dev/zero'
        sbx_ok wait "$sid" "$cmd"
        kept=$(cat "$SBX_RUNTIME_DIR/$sid/cmds/$cmd"/out.* | wc -c)
        [ "$kept" -le $((8 << 20)) ] || fail "kept $kept bytes for the 8M cap"
}

@test "hostile: a command that closes its output early, one that leaves its group" {
        new_session
        start -- sh -c 'exec >&- 2>&-; sleep 1; exit 5'
        sbx_expect 5 wait "$sid" "$cmd"
        sbx_ok logs "$sid" "$cmd"
        [ -z "$output" ]
        # kill reaches the group, not a process that made a session of its own...
        start -- sh -c 'setsid sleep 3175 & exec sleep 3176'
        wait_until 5 test "$(host_count 'sleep 3175')" -eq 1
        sbx_ok kill "$sid" "$cmd" || fail "$("$SBX" ps "$sid")" "$("$SBX" logs "$sid" "$cmd")"
        sbx_expect 143 wait "$sid" "$cmd"
        [ "$(host_count 'sleep 3176')" -eq 0 ]
        [ "$(host_count 'sleep 3175')" -eq 1 ] || fail "the escaped process is gone (kill reached it?)"
        # ...which destroy ends with the rest
        sbx_ok destroy "$sid"
        wait_until 5 test "$(host_count 'sleep 3175')" -eq 0
}

@test "hostile: the command cannot reach its own records" {
        new_session
        start -- sh -c "ls -d '$SBX_RUNTIME_DIR' '$SBX_RUNTIME_DIR/$sid/cmds' 2>&1; ls /proc/*/fd 2>/dev/null | wc -l >/dev/null; echo done"
        sbx_ok wait "$sid" "$cmd"
        # positive control: the records are there, seen from the host
        [ -e "$SBX_RUNTIME_DIR/$sid/cmds/$cmd/state" ]
        sbx_ok logs "$sid" "$cmd"
        [[ $output == *"No such file"* && $output == *done ]] || fail "$output"
}

@test "the command outlives its client, killed -9 with its process group" {
        new_session
        local idf=$BATS_TEST_TMPDIR/id
        setsid sh -c '"$1" exec -d "$2" -- sh -c "sleep 1; echo survived" >"$3"; sleep 60' \
                sh "$SBX" "$sid" "$idf" &
        local pid=$!
        wait_until 10 test -s "$idf"
        kill -9 -- -"$pid"
        wait "$pid" || true
        cmd=$(cat "$idf")
        sbx_ok wait "$sid" "$cmd"
        sbx_ok logs "$sid" "$cmd"
        [ "$output" = survived ]
}

@test "a client killed -9 while it starts leaves no command stuck running" {
        new_session
        local i pid
        for i in 1 2 3 4 5; do
                "$SBX" exec -d "$sid" -- true >/dev/null 2>&1 &
                pid=$!
                sleep "0.0$i"
                kill -9 "$pid" 2>/dev/null || true
                wait "$pid" || true
        done
        # each one either never got a record, or runs, or has ended
        wait_until 15 sh -c "'$SBX' ps --json '$sid' | jq -e 'all(.[]; .state != \"running\")' >/dev/null"
        sbx_ok destroy "$sid"
}

@test "destroy while commands run: no keeper, command or record is left" {
        new_session
        start -- sleep 3177
        start -- sh -c 'yes'
        start --max-output 16K -- sh -c 'while :; do echo x; done'
        wait_until 5 test "$(host_count 'sleep 3177')" -eq 1
        # positive control: three keepers run
        [ "$(keepers | wc -l)" -eq 3 ] || fail "keepers: $(keepers)"
        local k
        k=$(keepers)
        sbx_ok destroy "$sid"
        [ ! -e "$SBX_RUNTIME_DIR/$sid" ]
        for pid in $k; do
                wait_until 5 sh -c "! [ -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status"
        done
        [ "$(host_count 'sleep 3177')" -eq 0 ]
        sbx_expect 3 ps "$sid"
        sbx_expect 3 logs "$sid" c1
}

# wait: exit 3 (the session went first) or 125 (the command's end was seen first: sbx failed
# around it, as exec says when the session ends under it);
# logs --follow: exit 3, or 0 once it saw the command end. Never a hang.
@test "wait and logs --follow end when the session is destroyed under them" {
        new_session
        start -- sleep 3178
        local out=$BATS_TEST_TMPDIR/w
        local p1 p2
        (
                rc=0
                timeout 20 "$SBX" wait "$sid" "$cmd" >/dev/null 2>"$out.we" </dev/null || rc=$?
                echo "$rc" >"$out.w"
        ) &
        p1=$!
        (
                rc=0
                timeout 20 "$SBX" logs --follow "$sid" "$cmd" >/dev/null 2>"$out.le" </dev/null ||
                        rc=$?
                echo "$rc" >"$out.l"
        ) &
        p2=$!
        sleep 1
        sbx_ok destroy "$sid"
        wait "$p1" "$p2" || true
        [[ $(cat "$out.w") =~ ^(3|125)$ ]] && [[ $(cat "$out.l") =~ ^(0|3)$ ]] ||
                fail "wait: $(cat "$out.w") $(cat "$out.we"), logs: $(cat "$out.l") $(cat "$out.le")"
}

@test "TTL: the session ends once its running detached commands have ended, leaving nothing" {
        new_session --ttl 2s
        start -t 4 -- sleep 3179
        local k
        k=$(keepers)
        [ -n "$k" ]
        sleep 2.5
        # the TTL has run out, the command runs: the session waits for it (as for exec)
        sbx_ok ps "$sid"
        wait_until 10 test ! -e "$SBX_RUNTIME_DIR/$sid"
        sbx_expect 3 ps "$sid"
        [ "$(host_count 'sleep 3179')" -eq 0 ]
        for pid in $k; do
                wait_until 5 sh -c "! [ -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status"
        done
}

@test "a session keeps 32 commands: the oldest ended one goes, 32 running ones refuse more" {
        new_session
        local i
        for i in $(seq 1 33); do
                sbx_ok exec -d "$sid" -- true
        done
        [ "$output" = c33 ]
        sbx_ok wait "$sid" c33
        sbx_ok ps --json "$sid"
        json 'length <= 32 and (map(.id) | index("c33")) != null' >/dev/null || fail "$output"
        sbx_ok exec -d "$sid" -- true
        [ "$output" = c34 ]
}

@test "mcp: exec with detach, then ps and logs" {
        # MCP serves calls concurrently, so the reads go on a second connection, after the
        # command has ended (sessions made through MCP outlive their connection)
        local in=$BATS_TEST_TMPDIR/mcp.in init
        init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}'
        printf '%s\n' "$init" \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"name":"dt"}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"session":"dt","command":["sh","-c","echo hello"],"detach":true}}}' \
                >"$in"
        _expect 0 "$SBX" mcp <"$in"
        local a
        a() { jq -c --argjson id "$1" 'select(.id == $id)' <<<"$output"; }
        a 3 | jq -e '.result.isError == false and .result.structuredContent.id == "c1"' >/dev/null ||
                fail "exec detach: $(a 3)"
        sbx_ok wait dt c1
        printf '%s\n' "$init" \
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"logs","arguments":{"session":"dt","command_id":"c1"}}}' \
                '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ps","arguments":{"session":"dt"}}}' \
                '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"kill","arguments":{"session":"dt","command_id":"c1"}}}' \
                '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"logs","arguments":{"session":"dt","command_id":"../c1"}}}' \
                '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"destroy","arguments":{"session":"dt"}}}' \
                >"$in"
        _expect 0 "$SBX" mcp <"$in"
        a 5 | jq -e '.result.structuredContent.data == "hello\n" and
                .result.structuredContent.ended == true and
                (.result.content[0].text | test("hello"))' >/dev/null || fail "logs: $(a 5)"
        a 6 | jq -e '.result.structuredContent.commands[0].exit_code == 0' >/dev/null ||
                fail "ps: $(a 6)"
        a 7 | jq -e '.result.isError == true and
                .result.structuredContent.error.code == "not_running"' >/dev/null ||
                fail "kill: $(a 7)"
        a 8 | jq -e '.error != null or .result.isError == true' >/dev/null || fail "../c1: $(a 8)"
}
