#!/usr/bin/env bats
# sbx stats: each number moves with what the session does (memory and disk with a file
# written to the layer, pids with background sleepers, CPU time with a busy loop, the proxy's
# connections with a refused request), the limits are the ones asked for, --watch prints a
# sample a second, a paused session is measured too, and bad input has its exit code.

load helpers
setup() { setup_sbx; }
teardown() {
        [ -z "${server_pid:-}" ] || kill "$server_pid" 2>/dev/null || true
        teardown_sbx
}

stats() {
        sbx_ok stats --json "$sid" && json_doc
}

@test "the limits reported are the ones the session was created with" {
        new_session --memory 256M --pids 100 --cpus 0.5 --disk 64M
        stats
        [ "$(json .id)" = "$sid" ]
        [ "$(json .paused)" = false ]
        [ "$(json .memory.limit)" = 268435456 ]
        [ "$(json .pids.limit)" = 100 ]
        [ "$(json .cpu.limit_cpus)" = 0.5 ]
        [ "$(json .disk.limit_bytes)" = 67108864 ]
        [ "$(json .disk.total_bytes)" = 67108864 ]
        json '.memory.source | test("^cgroup v[12]$")'
        json '.pids.source | test("^cgroup v[12]$")'
        [ "$(json .network)" = null ] # --net none: no proxy, nothing to count
}

@test "memory, disk and inodes grow with a file written in the session" {
        new_session --memory 256M --disk 128M
        stats
        local mem0 disk0 ino0
        mem0=$(json .memory.current)
        disk0=$(json .disk.used_bytes)
        ino0=$(json .disk.inodes_used)
        in_sbx 'head -c 33554432 /dev/zero >/tmp/big && mkdir /workspace/d && touch /workspace/d/a /workspace/d/b /workspace/d/c'
        stats
        [ $(($(json .disk.used_bytes) - disk0)) -ge 33554432 ] ||
                fail "disk used went from $disk0 to $(json .disk.used_bytes)"
        # the layer's tmpfs pages are charged to the session's memory
        [ $(($(json .memory.current) - mem0)) -ge 16777216 ] ||
                fail "memory went from $mem0 to $(json .memory.current)"
        [ $(($(json .disk.inodes_used) - ino0)) -ge 5 ] ||
                fail "inodes went from $ino0 to $(json .disk.inodes_used)"
        [ "$(json .memory.peak)" -ge "$(json .memory.current)" ]
}

@test "pids count the session's processes, CPU time grows with a busy loop" {
        new_session
        stats
        local pids0 cpu0
        pids0=$(json .pids.current)
        cpu0=$(json .cpu.usage_usec)
        in_sbx 'for i in 1 2 3 4 5; do sleep 600 & done; (while :; do :; done) & true' >/dev/null
        sleep 1
        stats
        [ $(($(json .pids.current) - pids0)) -ge 6 ] ||
                fail "pids went from $pids0 to $(json .pids.current)"
        [ $(($(json .cpu.usage_usec) - cpu0)) -ge 100000 ] ||
                fail "CPU time went from $cpu0 to $(json .cpu.usage_usec) usec"
        json '.cpu.percent > 0'
        sbx_ok stats "$sid"
        [ "${#lines[@]}" -eq 2 ]
        [[ ${lines[0]} == SESSION* ]]
        [[ ${lines[1]} == "$sid "*running* ]]
}

@test "a session without limits: limits are null, use is still measured" {
        new_session --memory unlimited --cpus unlimited --pids unlimited
        stats
        [ "$(json .cpu.limit_cpus)" = null ]
        if [ "$(json .memory)" != null ]; then
                [ "$(json .memory.limit)" = null ]
        fi
        json '.disk.used_bytes >= 0'
}

@test "--watch prints a sample every second until interrupted" {
        new_session
        _expect 124 timeout 3.6 "$SBX" stats --watch --json "$sid"
        [ "${#lines[@]}" -ge 2 ] && [ "${#lines[@]}" -le 4 ] ||
                fail "${#lines[@]} samples in 3.6 s: $output"
        local l
        for l in "${lines[@]}"; do
                jq -e --arg id "$sid" '.id == $id and (.cpu.percent | type == "number")' <<<"$l" >/dev/null ||
                        fail "not a sample: $l"
        done
        _expect 124 timeout 2.5 "$SBX" stats --watch "$sid"
        [[ ${lines[0]} == SESSION* ]]
        [ "${#lines[@]}" -ge 2 ]
}

@test "a paused session is measured, and reported paused" {
        new_session
        sbx_ok pause "$sid"
        stats
        [ "$(json .paused)" = true ]
        json '.disk.total_bytes > 0'
        sbx_ok stats "$sid"
        [[ ${lines[1]} == "$sid "*paused* ]]
}

@test "hostile: a session that fills its disk is seen at its limit" {
        new_session --disk 16M
        sbx_expect any exec "$sid" sh -c 'cat /dev/zero >/workspace/fill'
        stats
        [ $(($(json .disk.total_bytes) - $(json .disk.used_bytes))) -lt 1048576 ] ||
                fail "a full layer reported $(json .disk.used_bytes) of $(json .disk.total_bytes)"
        [ "$(json .disk.total_bytes)" = 16777216 ]
}

@test "proxy mode: the proxy's connections and bytes are counted" {
        # a host server on loopback, which the proxy reaches only when allowed literally
        mkdir -p "$BATS_TEST_TMPDIR/www"
        head -c 100000 /dev/urandom >"$BATS_TEST_TMPDIR/www/f.bin"
        local port=$((20000 + RANDOM % 20000))
        (cd "$BATS_TEST_TMPDIR/www" && exec timeout 60 python3 -m http.server "$port" \
                --bind 127.0.0.1 >/dev/null 2>&1) &
        server_pid=$!
        wait_until 10 curl -s -o /dev/null "http://127.0.0.1:$port/"
        new_session --allow-host "127.0.0.1:$port"
        stats
        [ "$(json .network.connections)" = 0 ]
        [ "$(json .network.bytes_in)" = 0 ]
        # a refused request is one connection, with no upstream bytes
        sbx_ok exec "$sid" curl -sS -o /dev/null -w '%{http_code}' http://refused.sbx.invalid/
        [ "$output" = 403 ]
        stats
        [ "$(json .network.connections)" = 1 ]
        [ "$(json .network.bytes_in)" = 0 ]
        # 100000 bytes through it (NO_PROXY names 127.0.0.1: the proxy is asked for by hand)
        sbx_ok exec "$sid" sh -c 'curl -sS --noproxy "" -x "$HTTP_PROXY" -o /dev/null \
                -w "%{http_code} %{size_download}" "$1"' sh "http://127.0.0.1:$port/f.bin"
        [ "$output" = "200 100000" ]
        stats
        [ "$(json .network.connections)" = 2 ]
        json '.network.bytes_in >= 100000 and .network.bytes_in < 110000' ||
                fail "bytes_in: $(json .network.bytes_in)"
        json '.network.bytes_out > 0'
        [ "$(json .network.complete)" = true ]
        kill "$server_pid" 2>/dev/null || true
}

@test "bad input: missing, extra or bad arguments, no such session" {
        new_session
        sbx_expect 2 stats
        sbx_expect 2 stats "$sid" extra
        sbx_expect 2 stats --bogus "$sid"
        sbx_expect 3 stats sb_0000000000000000
        sbx_expect 3 stats --json 'bad/../id'
        [ "$(json .error.code)" = session_not_found ]
        sbx_ok destroy "$sid"
        sbx_expect 3 stats "$sid"
}

@test "mcp: the stats tool answers for a session the server created, not for others" {
        # an idle session may count no process against its pids limit: on cgroup v1 the init
        # and its reapers stay outside the command's memory and pids cgroups
        new_session
        local other=$sid in=$BATS_TEST_TMPDIR/mcp.in
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}' \
                '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"name":"mcpstats"}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stats","arguments":{"session":"mcpstats"}}}' \
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"stats\",\"arguments\":{\"session\":\"$other\"}}}" \
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stats","arguments":{"session":"mcpstats","watch":true}}}' \
                >"$in"
        _expect 0 "$SBX" mcp <"$in"
        jq -s -e 'map(select(.id == 3))[0] | .result.isError == false and
                (.result.structuredContent.disk.total_bytes > 0) and
                (.result.structuredContent.pids.limit == 256) and
                (.result.structuredContent.pids.current >= 0)' <<<"$output" >/dev/null ||
                fail "no stats: $(jq -c 'select(.id == 3)' <<<"$output")"
        jq -s -e 'map(select(.id == 4))[0] | .result.isError == true' <<<"$output" >/dev/null ||
                fail "stats of a session the server did not make: $(jq -c 'select(.id == 4)' <<<"$output")"
        # --watch is not offered to a model (it never ends)
        jq -s -e 'map(select(.id == 5))[0] | (.error != null) or (.result.isError == true)' <<<"$output" >/dev/null ||
                fail "watch was taken: $(jq -c 'select(.id == 5)' <<<"$output")"
}
