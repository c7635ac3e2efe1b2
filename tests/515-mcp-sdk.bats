#!/usr/bin/env bats
# `sbx mcp` for long agent work, driven by the official MCP TypeScript SDK (tests/mcp) and by
# raw JSON lines:
#  - a call longer than the client's request timeout survives on progress notifications (and,
#    as the control, times out without them);
#  - calls run concurrently: a long exec blocks neither ls nor another exec; cancelling one
#    call stops its command and no other; many concurrent calls with large outputs never
#    interleave on stdout;
#  - numbers are numbers in the schemas, strings of digits are taken too, wrong types are
#    -32602 errors;
#  - the text of a result is capped (head and tail kept, the cut said); images read as MCP
#    image content.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

@test "MCP SDK client: a 7 s exec survives a 3 s request timeout on progress notifications" {
        client progress
}

@test "MCP SDK client: a long exec blocks neither ls nor other execs; cancel stops one command" {
        client concurrent
}

@test "MCP SDK client: numbers typed as numbers (pids, cpus, ttl, timeouts), strings taken too" {
        client types
}

@test "MCP SDK client: a large output is capped to its head and tail with the cut said" {
        client cap
}

@test "MCP SDK client: read of a PNG, JPEG, GIF or WebP file is MCP image content" {
        client image
}

# answer ID: the response with this id among the lines of $output.
answer() {
        jq -c --argjson id "$1" 'select(.id == $id)' <<<"$output"
}

@test "mcp: 12 concurrent calls with 200 KiB outputs: one whole JSON message a line, none mixed" {
        local in=$BATS_TEST_TMPDIR/in i
        {
                echo '{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"create","arguments":{"name":"many"}}}'
                for i in $(seq 1 12); do
                        # each prints its own letter 200 KiB long, after a sleep so that they overlap
                        echo '{"jsonrpc":"2.0","id":'"$i"',"method":"tools/call","params":{"_meta":{"progressToken":"t'"$i"'"},"name":"exec","arguments":{"session":"many","command":["sh","-c","sleep 1.5; head -c 204800 /dev/zero | tr \\\\0 '"$(printf "\\x$(printf %x $((96 + i)))")"'"]}}}'
                done
                echo '{"jsonrpc":"2.0","id":99,"method":"ping"}'
        } >"$in"
        _expect 0 "$SBX" mcp --destroy-on-close --max-output 1M <"$in"
        # every line is one JSON message (jq fails on a mixed line)
        local n
        n=$(jq -c . <<<"$output" | wc -l) || fail "a line of stdout is not JSON"
        [ "$n" = "${#lines[@]}" ] || fail "$n messages in ${#lines[@]} lines"
        for i in $(seq 1 12); do
                local letter
                letter=$(printf "\\x$(printf %x $((96 + i)))")
                answer "$i" | jq -e --arg l "$letter" '.result.structuredContent.output ==
                        ($l * 204800) and .result.isError == false' >/dev/null ||
                        fail "call $i has not exactly its own 200 KiB of '$letter'"
        done
        # progress notifications for the tokens given, between the answers
        jq -e -s '[.[] | select(.method == "notifications/progress")] | length >= 12' \
                <<<"$output" >/dev/null || fail "too few progress notifications"
        [ "$(answer 99 | jq -c .result)" = '{}' ] || fail "no answer to the ping"
}

@test "mcp: bad input never crashes the server: a JSON-RPC error each, then it serves on" {
        local in=$BATS_TEST_TMPDIR/in
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"pids":{"a":1}}}}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"cpus":"1e3"}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create","arguments":{"ttl":-5}}}' \
                '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create","arguments":{"nofile":99999999999999999999}}}' \
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"session":"x","command":["true"],"timeout":true}}}' \
                '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}' \
                '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ls","arguments":{"session":"x"},"_meta":{"progressToken":{"bad":1}}}}' \
                '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}' \
                '{"jsonrpc":"2.0","method":"notifications/cancelled"}' \
                '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"exec","arguments":{"session":"x","command":["true"]}},"extra":[1,2]}' \
                '{"jsonrpc":"2.0","id":9,"method":"ping"}' >"$in"
        _expect 0 "$SBX" mcp <"$in"
        local i
        for i in 1 2 3 5 6; do
                [ "$(answer "$i" | jq -r .error.code)" = -32602 ] || fail "call $i: $(answer "$i")"
        done
        # a number too large for any limit: refused, by the schema or by the operator's ceiling
        answer 4 | jq -e '.error.code == -32602 or .result.isError == true' >/dev/null ||
                fail "call 4: $(answer 4)"
        # a session the server does not know is a tool error, not a crash
        for i in 7 8; do
                answer "$i" | jq -e '.result.isError == true' >/dev/null || fail "call $i: $(answer "$i")"
        done
        [ "$(answer 9 | jq -c .result)" = '{}' ] || fail "no answer to the ping:" "$output"
        # the operator's --max-output is checked before serving: exit 2, one line
        sbx_expect 2 mcp --max-output 10 </dev/null
        [[ "$stderr" == *"invalid --max-output '10': a size from 1K to 16M"* ]] || fail "$stderr"
        sbx_expect 2 mcp --max-output 1G </dev/null
}

@test "mcp: SIGTERM with 16 commands running and more queued: all stopped, the server exits" {
        local fifo=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/out pid i
        mkfifo "$fifo"
        "$SBX" mcp <"$fifo" >"$out" &
        pid=$!
        exec 7>"$fifo"
        echo '{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"create","arguments":{"name":"busy"}}}' >&7
        for i in $(seq 1 20); do
                echo '{"jsonrpc":"2.0","id":'"$i"',"method":"tools/call","params":{"name":"exec","arguments":{"session":"busy","command":["sleep","300"]}}}' >&7
        done
        local id
        wait_until 20 grep -q '"id":0' "$out" || fail "no create answer: $(cat "$out")"
        id=$(jq -r 'select(.id == 0) | .result.structuredContent.id' "$out")
        # 16 run at once (the rest wait their turn)
        wait_until 20 _sleeps_are "$id" 16 || fail "not 16 sleeps: $(_sleeps "$id")"
        sleep 1
        [ "$(_sleeps "$id")" = 16 ] || fail "more than 16 ran at once: $(_sleeps "$id")"
        kill -TERM "$pid"
        wait_until 5 _gone "$pid" || fail "sbx mcp did not exit within 5 s of SIGTERM"
        wait "$pid" || fail "sbx mcp exited $? after SIGTERM"
        exec 7>&-
        wait_until 5 _sleeps_are "$id" 0 || fail "sleeps left: $(_sleeps "$id")"
        # no answer to the stopped calls; the session lives on
        [ "$(jq -r .id "$out" | xargs)" = 0 ] || fail "answers: $(cat "$out")"
        sbx_ok destroy "$id"
}

_sleeps() {
        "$SBX" exec "$1" -- sh -c 'ps -eo args | grep -cx "sleep 300" || true'
}

_sleeps_are() {
        [ "$(_sleeps "$1")" = "$2" ]
}

_gone() {
        [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"
}
