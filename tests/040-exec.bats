#!/usr/bin/env bats
# exec as sbx(1) says: argv, exit codes, streams, --json, -w -e -i -T --max-output, the
# timeout that kills everything the command started, background processes, a killed client,
# concurrent execs, and run.

load helpers
setup() {
        setup_sbx
        bg_pids=()
}
teardown() {
        local p
        for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
        for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null || true; done
        teardown_sbx
}

# A number no other process on the host has in its command line.
marker() {
        echo $((300000 + RANDOM * 7 + BATS_TEST_NUMBER))
}

host_has_sleep() {
        pgrep -f "^sleep $1\$" >/dev/null
}

host_has_no_sleep() {
        ! pgrep -f "^sleep $1\$" >/dev/null
}

@test "argv passes through unchanged: spaces, quotes, empty args, globs, dashes" {
        new_session
        sbx_ok exec "$sid" printf '[%s]\n' 'a b' '' "it's" 'x"y' '$HOME' '*' '-t' '--' $'tab\there' 'é'
        local want
        want=$(printf '[%s]\n' 'a b' '' "it's" 'x"y' '$HOME' '*' '-t' '--' $'tab\there' 'é')
        [ "$output" = "$want" ] || fail "got:" "$output" "want:" "$want"
}

@test "options after CMD belong to CMD; -- separates" {
        new_session
        sbx_ok exec "$sid" echo -n hi
        [ "$output" = hi ] || fail "got '$output'"
        sbx_ok exec "$sid" -- sh -c 'echo "$0 $1"' -t --json
        [ "$output" = "-t --json" ] || fail "got '$output'"
}

@test "exit codes: 0, 1, 42 are the command's own" {
        new_session
        sbx_expect 0 exec "$sid" true
        sbx_expect 1 exec "$sid" false
        sbx_expect 42 exec "$sid" sh -c 'exit 42'
}

@test "126: a file that is not executable, a directory" {
        new_session
        in_sbx 'printf "echo hi\n" > /workspace/noexec; chmod 644 /workspace/noexec'
        sbx_expect 126 exec "$sid" /workspace/noexec
        [ -n "$stderr" ] || fail "no message on stderr"
        sbx_expect 126 exec "$sid" /tmp
}

@test "127: a command that does not exist" {
        new_session
        sbx_expect 127 exec "$sid" no-such-command-sbx
        [[ $stderr == *no-such-command-sbx* ]] || fail "the message does not name the command: $stderr"
        sbx_expect 127 exec "$sid" /no/such/path
}

@test "128+N: killed by a signal" {
        new_session
        sbx_expect 143 exec "$sid" sh -c 'kill -TERM $$'
        sbx_expect 137 exec "$sid" sh -c 'kill -KILL $$'
        sbx_expect 130 exec "$sid" sh -c 'kill -INT $$'
}

@test "124: the timeout kills the command and the background grandchild it started" {
        new_session
        local m t0
        m=$(marker)
        t0=$SECONDS
        sbx_expect 124 exec -t 1s "$sid" sh -c "sleep $m & sleep $m"
        [ $((SECONDS - t0)) -lt 10 ] || fail "the 1s timeout took $((SECONDS - t0))s"
        # everything the command started is dead when exec returns
        host_has_no_sleep "$m" || fail "sleep $m survived the timeout: $(pgrep -af "sleep $m")"
        # and the session itself is fine
        sbx_ok exec "$sid" true
}

@test "124: a daemon that double-forked and left the session is killed too" {
        new_session
        local m
        m=$(marker)
        sbx_expect 124 exec -t 1s "$sid" sh -c "setsid sh -c 'sleep $m >/dev/null 2>&1 &' ; sleep 100"
        host_has_no_sleep "$m" || fail "the setsid'd sleep $m survived the timeout"
}

@test "124: output produced before the timeout is kept" {
        new_session
        sbx_expect 124 exec -t 1s "$sid" sh -c 'echo partial; echo err-partial >&2; sleep 100'
        [ "$output" = partial ] || fail "stdout '$output'"
        [[ $stderr == *err-partial* ]] || fail "stderr '$stderr'"
        sbx_expect 124 exec --json -t 1s "$sid" sh -c 'echo partial; sleep 100'
        json_doc
        json '.exit_code == 124 and .timed_out == true and .output == "partial\n"' >/dev/null ||
                fail "unexpected: $output"
}

@test "the session's --timeout is the default of exec -t" {
        new_session --timeout 1s
        sbx_expect 124 exec "$sid" sleep 30
        sbx_ok exec -t 5s "$sid" sleep 2
}

@test "stdout and stderr stay separate" {
        new_session
        sbx_ok exec "$sid" sh -c 'echo out; echo err >&2; echo out2'
        [ "$output" = "$(printf 'out\nout2')" ] || fail "stdout: '$output'"
        [ "$stderr" = err ] || fail "stderr: '$stderr'"
        local o
        timeout 30 "$SBX" exec "$sid" sh -c 'echo out; echo err >&2' >"$BATS_TEST_TMPDIR/o" 2>/dev/null
        o=$(cat "$BATS_TEST_TMPDIR/o")
        [ "$o" = out ] || fail "with 2>/dev/null: '$o'"
}

@test "output is streamed as it is produced, not buffered until the end" {
        new_session
        local f=$BATS_TEST_TMPDIR/stream
        timeout 30 "$SBX" exec "$sid" sh -c 'echo first; sleep 4; echo second' >"$f" 3>&- &
        bg_pids+=($!)
        wait_until 3 grep -q first "$f" || fail "nothing arrived within 3s"
        ! grep -q second "$f" || fail "second arrived too early"
        wait "${bg_pids[0]}"
        [ "$(cat "$f")" = "$(printf 'first\nsecond')" ] || fail "got '$(cat "$f")'"
}

@test "binary output and input pass through byte for byte" {
        new_session
        head -c 300000 /dev/urandom >"$BATS_TEST_TMPDIR/data"
        timeout 30 "$SBX" exec -i "$sid" cat <"$BATS_TEST_TMPDIR/data" >"$BATS_TEST_TMPDIR/back"
        cmp "$BATS_TEST_TMPDIR/data" "$BATS_TEST_TMPDIR/back"
}

@test "large output without --json is not capped" {
        new_session
        local n
        timeout 30 "$SBX" exec "$sid" head -c 3000000 /dev/zero >"$BATS_TEST_TMPDIR/o"
        n=$(wc -c <"$BATS_TEST_TMPDIR/o")
        [ "$n" -eq 3000000 ] || fail "got $n bytes"
}

@test "--json: one document with exit_code, output, timed_out, truncated, duration_ms, oom_killed" {
        new_session
        sbx_expect 3 exec --json "$sid" sh -c 'echo hello; exit 3'
        json_doc
        # SPEC's five keys, plus oom_killed (issue 3: "exec --json reports oom_killed")
        json '(keys | sort) == ["duration_ms","exit_code","oom_killed","output","timed_out","truncated"]' >/dev/null ||
                fail "keys: $output"
        json '.exit_code == 3 and .output == "hello\n" and .timed_out == false and .truncated == false and .oom_killed == false' >/dev/null ||
                fail "values: $output"
        json '.duration_ms | type == "number" and . >= 0' >/dev/null || fail "duration_ms: $output"
}

@test "--json: stdout and stderr interleaved in arrival order" {
        new_session
        sbx_ok exec --json "$sid" sh -c 'i=0; while [ $i -lt 50 ]; do echo o$i; echo e$i >&2; i=$((i+1)); done'
        local want
        want=$(for i in $(seq 0 49); do echo "o$i"; echo "e$i"; done)
        [ "$(json .output)" = "$want" ] || fail "order differs: $(json .output | head -n 6)..."
}

@test "--json: the exit status of sbx is the command's" {
        new_session
        sbx_expect 127 exec --json "$sid" no-such-command-sbx
        json_doc
        json '.exit_code == 127' >/dev/null || fail "$output"
        sbx_expect 143 exec --json "$sid" sh -c 'kill -TERM $$'
        json '.exit_code == 143' >/dev/null || fail "$output"
}

@test "--json: output that is not UTF-8 still gives valid JSON" {
        new_session
        sbx_ok exec --json "$sid" printf 'a\377\376b\000c'
        json_doc
        json '.output | startswith("a") and endswith("c")' >/dev/null || fail "$output"
}

@test "--max-output with --json: cut at the size, truncated set, the command not killed" {
        new_session
        sbx_ok exec --json --max-output 10 "$sid" sh -c 'printf 0123456789abcdef; echo more >&2; exit 0'
        json '.output == "0123456789" and .truncated == true and .exit_code == 0' >/dev/null ||
                fail "$output"
}

@test "--json caps output at 1M by default" {
        new_session
        sbx_ok exec --json "$sid" sh -c 'head -c 2000000 /dev/zero | tr "\0" a'
        json '(.output | length) == 1048576 and .truncated == true and .exit_code == 0' >/dev/null ||
                fail "length $(json '.output | length'), truncated $(json .truncated)"
}

@test "--max-output without --json caps what is printed" {
        new_session
        local n
        timeout 30 "$SBX" exec --max-output 10 "$sid" head -c 100000 /dev/zero >"$BATS_TEST_TMPDIR/o"
        n=$(wc -c <"$BATS_TEST_TMPDIR/o")
        [ "$n" -eq 10 ] || fail "printed $n bytes"
}

@test "-w sets the directory; a missing one is exit 125" {
        new_session
        sbx_ok exec -w /tmp "$sid" pwd
        [ "$output" = /tmp ] || fail "got '$output'"
        sbx_ok exec --workdir /usr "$sid" pwd
        [ "$output" = /usr ] || fail "got '$output'"
        # sbx cannot start the command where it was asked to: "sbx failed before the command"
        sbx_expect 125 exec -w /no/such/dir "$sid" pwd
        [ -n "$stderr" ] || fail "no message"
}

@test "-e adds to the session's environment and overrides it; a bad one is exit 2" {
        new_session --env FOO=session --env KEEP=yes
        sbx_ok exec -e FOO=exec -e 'SP=a b' --env 'EQ=x=y' "$sid" sh -c 'echo "$FOO|$KEEP|$SP|$EQ"'
        [ "$output" = "exec|yes|a b|x=y" ] || fail "got '$output'"
        sbx_ok exec "$sid" sh -c 'echo "$FOO"'
        [ "$output" = session ] || fail "-e leaked into the next exec: '$output'"
        sbx_expect 2 exec -e NOEQUALS "$sid" true
        sbx_expect 2 exec -e =v "$sid" true
}

@test "without -i stdin is /dev/null; with -i it is forwarded" {
        new_session
        sbx_ok exec "$sid" cat <<<"should-not-arrive"
        [ -z "$output" ] || fail "stdin arrived without -i: '$output'"
        sbx_ok exec "$sid" readlink /proc/self/fd/0
        [ "$output" = /dev/null ] || fail "stdin is '$output'"
        sbx_ok exec -i "$sid" cat <<<"hello stdin"
        [ "$output" = "hello stdin" ] || fail "got '$output'"
        sbx_ok exec --interactive "$sid" wc -l < <(seq 1000)
        [ "$output" = 1000 ] || fail "got '$output'"
}

@test "-T: the command runs on a pty from the sandbox's own devpts" {
        new_session
        pty_expect 0 "$SBX" exec -T "$sid" sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-ttys; echo "TERM=$TERM"'
        [[ $output =~ /dev/pts/[0-9]+ ]] || fail "tty printed: $output"
        [[ $output == *all-ttys* ]] || fail "stdio are not all terminals: $output"
        [[ $output =~ TERM=[a-z] ]] || fail "TERM not set with -T: $output"
}

@test "-iT: an interactive shell" {
        new_session
        pty_expect 7 -i $'echo $((6*7))\nexit 7\n' "$SBX" exec -iT "$sid" sh
        [[ $output == *42* ]] || fail "the shell did not answer: $output"
}

@test "a background process survives the exec and a later exec sees it" {
        new_session
        local m t0=$SECONDS
        m=$(marker)
        sbx_ok exec "$sid" sh -c "sleep $m >/dev/null 2>&1 &"
        [ $((SECONDS - t0)) -lt 5 ] || fail "exec waited for its background process"
        sbx_ok exec "$sid" pgrep -f "sleep $m"
        [ -n "$output" ] || fail "the later exec does not see sleep $m"
}

@test "a server started by one exec answers the next one" {
        new_session
        sbx_ok exec "$sid" sh -c 'cd /tmp && echo served > index.txt && python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &'
        sbx_ok exec "$sid" python3 -c '
import time, urllib.request
for i in range(100):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:8765/index.txt", timeout=2).read().decode().strip())
        break
    except OSError:
        time.sleep(0.1)
'
        [ "$output" = served ] || fail "got '$output'"
}

@test "a background writer: exec returns, its later output is discarded, no SIGPIPE" {
        new_session
        local t0=$SECONDS
        # The loop keeps writing to the exec's stdout after exec returned; it records each
        # round, and a failed write. SIGPIPE would kill it, so the count would stop.
        sbx_ok exec "$sid" sh -c '(i=0; while :; do echo tick || { echo write-failed > /tmp/bgfail; exit 1; }; i=$((i+1)); echo $i > /tmp/bgcount; sleep 0.1; done) &
        sleep 0.3'
        [ $((SECONDS - t0)) -lt 5 ] || fail "exec waited for its background writer"
        sleep 1
        sbx_ok exec "$sid" cat /tmp/bgcount
        local c1=$output
        sleep 1
        sbx_ok exec "$sid" sh -c 'cat /tmp/bgcount; cat /tmp/bgfail 2>/dev/null || true'
        local c2=${lines[0]}
        [ "${#lines[@]}" -eq 1 ] || fail "the writer saw a failed write: $output"
        [ "$c2" -gt "$c1" ] || fail "the writer stopped (count $c1 then $c2): killed by SIGPIPE?"
}

@test "killing the sbx exec client kills the command" {
        new_session
        local m
        m=$(marker)
        "$SBX" exec "$sid" sh -c "sleep $m & sleep $m" >/dev/null 2>&1 3>&- &
        local client=$!
        bg_pids+=("$client")
        wait_until 5 host_has_sleep "$m" || fail "the command never started"
        kill -9 "$client"
        wait_until 5 host_has_no_sleep "$m" || fail "sleep $m survived the killed client"
}

@test "concurrent execs in one session" {
        new_session
        local i t0=$SECONDS pids=()
        for i in 1 2 3 4 5; do
                timeout 30 "$SBX" exec "$sid" sh -c "sleep 2; echo n$i" >"$BATS_TEST_TMPDIR/c$i" 2>&1 3>&- &
                pids+=($!)
        done
        bg_pids+=("${pids[@]}")
        for i in 1 2 3 4 5; do
                wait "${pids[$((i - 1))]}" || fail "exec $i failed: $(cat "$BATS_TEST_TMPDIR/c$i")"
                [ "$(cat "$BATS_TEST_TMPDIR/c$i")" = "n$i" ] || fail "exec $i printed $(cat "$BATS_TEST_TMPDIR/c$i")"
        done
        [ $((SECONDS - t0)) -lt 8 ] || fail "5 execs of 2s took $((SECONDS - t0))s: not concurrent"
}

@test "exec in a missing session: exit 3, and no command run" {
        sbx_expect 3 exec sb_0123456789abcdef touch /tmp/x
}

@test "run: create + exec + destroy in one call" {
        sbx_ok run -- echo hi
        [ "$output" = hi ] || fail "got '$output'"
        sbx_ok run echo no-dashes
        [ "$output" = no-dashes ] || fail "got '$output'"
        sbx_expect 7 run -- sh -c 'exit 7'
        sbx_ok run --hostname box -- hostname
        [ "$output" = box ] || fail "got '$output'"
        sbx_ok run -i -- cat <<<"via run"
        [ "$output" = "via run" ] || fail "got '$output'"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" 2>/dev/null | grep -v '^names$')" ] ||
                fail "run left in the runtime dir: $(ls -A "$SBX_RUNTIME_DIR")"
}

@test "run: the timeout kills everything; --json has the exec shape" {
        local m
        m=$(marker)
        sbx_expect 124 run -t 1s -- sh -c "sleep $m & sleep $m"
        host_has_no_sleep "$m" || fail "sleep $m survived run"
        sbx_ok run --json -- echo hi
        json_doc
        json '.exit_code == 0 and .output == "hi\n" and .timed_out == false' >/dev/null || fail "$output"
}

@test "run: background processes die with the run" {
        local m
        m=$(marker)
        sbx_ok run -- sh -c "sleep $m >/dev/null 2>&1 &"
        host_has_no_sleep "$m" || fail "sleep $m survived run"
}

@test "killing the sbx run client kills its sandbox" {
        local m
        m=$(marker)
        "$SBX" run -- sh -c "sleep $m" >/dev/null 2>&1 3>&- &
        local client=$!
        bg_pids+=("$client")
        wait_until 5 host_has_sleep "$m" || fail "the command never started"
        kill -9 "$client"
        wait_until 5 host_has_no_sleep "$m" || fail "sleep $m survived the killed run client"
}
