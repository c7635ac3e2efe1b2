#!/usr/bin/env bats
# Agent integration: `sbx tools` (tool definitions for a model) and `sbx mcp` (a Model
# Context Protocol server on stdio).
#  - sbx tools --json is valid JSON Schema for each of the eighteen tools, and every option of a
#    command is a property of its tool, except those a model is never offered;
#  - the raw protocol: JSON lines piped into `sbx mcp` get the JSON-RPC errors of the spec
#    (-32700, -32600, -32601, -32602), notifications get no answer, the protocol version is
#    negotiated, an oversized or endless line is refused with bounded memory, nothing hangs,
#    notifications/cancelled stops the running command;
#  - what a model may not do: lift a limit (unlimited, ttl 0) or ask for more than the
#    operator's config, or reach a session the server did not create (an operator's session
#    with a host directory mounted survives every tool); --any-session opens them;
#  - a real MCP client, the official TypeScript SDK (tests/mcp, installed by
#    scripts/bootstrap with npm ci), lists the tools and runs create, exec, write, read, edit,
#    grep, glob, ls, connect and destroy end to end; failures come back as isError results;
#    an aborted request stops its command; the sessions made through MCP outlive the
#    connection (a new one reaches them), unless --destroy-on-close. More SDK cases (progress,
#    concurrency, types, output cap, images) are in 515-mcp-sdk.bats.

load helpers
setup() { setup_sbx; }
# a server a failed test left running in the background is killed before the leak check
teardown() {
        [ -z "${mcp_pid:-}" ] || kill -KILL "$mcp_pid" 2>/dev/null || true
        teardown_sbx
}

# mcp LINE...: pipe the lines into `sbx mcp --destroy-on-close` (the sessions it made end with
# it); its answers (one JSON a line) in $output. Calls run concurrently: answers come in the
# order the calls end, found by id.
mcp() {
        local in=$BATS_TEST_TMPDIR/mcp.in
        printf '%s\n' "$@" >"$in"
        _expect 0 "$SBX" mcp --destroy-on-close <"$in"
}

# answer ID: the response with this id among the lines of $output.
answer() {
        jq -c --argjson id "$1" 'select(.id == $id)' <<<"$output"
}

# error_code ID: the JSON-RPC error code of the response with this id ("null" for id null).
error_code() {
        jq -r --argjson id "$1" 'select(.id == $id) | .error.code' <<<"$output" | head -n 1
}

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}'

# ---- sbx tools ------------------------------------------------------------------------------

@test "sbx tools --json: eighteen tools with valid draft 2020-12 object schemas" {
        sbx_ok tools --json
        json_doc
        json 'length == 18' >/dev/null || fail "not eighteen tools: $(json '[.[].name]')"
        [ "$(json '[.[].name] | join(" ")')" = \
                "create connect exec ls read write edit glob grep destroy stats ps logs kill pause resume diff commit" ] ||
                fail "tool names: $(json '[.[].name] | join(" ")')"
        # each: name, a description for a model, an object schema that closes its properties
        json 'all(.[]; (keys == ["description","input_schema","name"])
                and (.description | length > 100)
                and .input_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
                and .input_schema.type == "object"
                and .input_schema.additionalProperties == false
                and (.input_schema.required - (.input_schema.properties | keys) == [])
                and all(.input_schema.properties[];
                        (.type | IN("string","integer","number","boolean","array",
                                ["integer","string"]))
                        and (.description | length > 10)
                        and (if .type == "array" then .items.type == "string" else true end)))' \
                >/dev/null || fail "a schema is malformed:" "$output"
        # what the descriptions must tell a model
        json '.[] | select(.name == "read") | .description | test("500 KiB") and test("cat -n")' \
                >/dev/null || fail "read's description lacks the 500 KiB cap or the numbering"
        json '.[] | select(.name == "exec") | .input_schema |
                .properties.command.type == "array" and (.required | index("command"))' \
                >/dev/null || fail "exec does not take command as a required array"
        [ "$(json '.[] | select(.name == "grep") | .input_schema.properties.mode.enum | join(" ")')" = \
                "files_with_matches content count" ] || fail "grep mode has the wrong enum"
        # the human list names every tool and its arguments
        sbx_ok tools
        local t
        for t in create connect exec ls read write edit glob grep destroy; do
                grep -qx "$t" <<<"$output" || fail "sbx tools does not list $t"
        done
        grep -q '^  session (string, required)$' <<<"$output" || fail "no session argument listed"
}

# The options come from the command table: a new flag becomes a property by itself. What a
# model may not have is exactly the list below (host files, weaker isolation, terminals).
@test "sbx tools: every option of a command is a property of its tool, except the listed ones" {
        local never="--json --config --help --mount --rootfs --old-file --new-file --env-file --net"
        never+=" --allow-host --interactive --tty"
        sbx_ok tools --json
        local tools=$output c f prop props
        for c in create connect exec ls read write edit glob grep destroy; do
                props=$(jq -r --arg c "$c" '.[] | select(.name == $c) | .input_schema.properties |
                        keys[]' <<<"$tools")
                for f in $("$SBX" help "$c" | sed -n '/^Options:$/,/^Examples:$/p' |
                        grep -o -- '--[a-z][a-z-]*' | sort -u); do
                        prop=${f#--}
                        prop=${prop//-/_}
                        if [[ " $never " == *" $f "* ]]; then
                                ! grep -qx -- "$prop" <<<"$props" ||
                                        fail "$c offers $f to a model"
                        else
                                grep -qx -- "$prop" <<<"$props" ||
                                        fail "the option $f of $c is not a property of its tool"
                        fi
                done
        done
        # and the values that would weaken the sandbox are not in the enums
        [ "$(jq -r '.[] | select(.name == "create") | .input_schema.properties.seccomp.enum |
                join(" ")' <<<"$tools")" = "default strict" ] || fail "create offers unconfined"
}

# ---- the raw protocol -----------------------------------------------------------------------

@test "mcp: initialize negotiates the version; ping; notifications get no answer" {
        mcp "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
                '{"jsonrpc":"2.0","id":"p","method":"ping"}' \
                '{"jsonrpc":"2.0","method":"no/such/notification","params":[1]}' \
                '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}' \
                '{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}'
        [ "${#lines[@]}" -eq 4 ] || fail "expected 4 answers (none to notifications):" "$output"
        answer 1 | jq -e '.jsonrpc == "2.0" and .result.protocolVersion == "2025-06-18"
                and .result.capabilities.tools != null and .result.serverInfo.name == "sbx"' \
                >/dev/null || fail "bad initialize answer: $(answer 1)"
        [ "$(answer '"p"')" = '{"jsonrpc":"2.0","id":"p","result":{}}' ] ||
                fail "bad ping answer: $(answer '"p"')"
        [ "$(answer 3 | jq -r .result.protocolVersion)" = 2025-03-26 ] ||
                fail "a supported older version is not kept"
        [ "$(answer 4 | jq -r .result.protocolVersion)" = 2025-06-18 ] ||
                fail "an unknown version is not answered with the latest"
}

@test "mcp: tools/list has the tools of sbx tools --json (inputSchema)" {
        sbx_ok tools --json
        local want=$output
        mcp "$init" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
        [ "$(answer 2 | jq -S '[.result.tools[] | {name, description, s: .inputSchema}]')" = \
                "$(jq -S '[.[] | {name, description, s: .input_schema}]' <<<"$want")" ] ||
                fail "tools/list differs from sbx tools --json"
}

@test "mcp: protocol errors are JSON-RPC errors with the spec's codes" {
        mcp '{"jsonrpc":"2.0","id":1,"method":"ping"' \
                'not json at all' \
                '{"jsonrpc":"2.0","id":2,"method":"ping"} trailing' \
                '[{"jsonrpc":"2.0","id":3,"method":"ping"}]' \
                '{"id":4,"method":"ping"}' \
                '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}' \
                '{"jsonrpc":"2.0","id":6,"method":7}' \
                '{"jsonrpc":"2.0","id":7,"method":"resources/list"}' \
                '{"jsonrpc":"2.0","id":8,"method":"tools/call"}' \
                '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}' \
                '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ls","arguments":[]}}' \
                '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read","arguments":{"session":"x"}}}' \
                '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"exec","arguments":{"session":"x","command":[]}}}' \
                '{"jsonrpc":"2.0","id":13,"method":"ping","params":"x"}' \
                '{"jsonrpc":"2.0","id":14,"method":"ping"}'
        [ "${#lines[@]}" -eq 15 ] || fail "expected one answer per message:" "$output"
        local codes
        codes=$(jq -r '.error.code // "ok"' <<<"$output" | xargs)
        [ "$codes" = "-32700 -32700 -32700 -32600 -32600 -32600 -32600 -32601 -32602 -32602 -32602 -32602 -32602 -32602 ok" ] ||
                fail "codes: $codes" "$output"
        # parse errors and requests without a usable id are answered with id null
        [ "$(jq -r 'select(.error.code == -32700) | .id' <<<"$output" | sort -u)" = null ] ||
                fail "a parse error is not answered with id null"
        [ "$(error_code 7)" = -32601 ] && [ "$(error_code 9)" = -32602 ] ||
                fail "errors are not answered with the request's id"
        answer 9 | jq -e '.error.message | test("nope")' >/dev/null ||
                fail "the unknown tool is not named: $(answer 9)"
        answer 11 | jq -e '.error.message | test("path")' >/dev/null ||
                fail "the missing argument is not named: $(answer 11)"
}

@test "mcp: an oversized line is refused (-32600) with bounded memory, then serving goes on" {
        local fifo=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/out pid hwm
        mkfifo "$fifo"
        timeout 60 "$SBX" mcp --destroy-on-close <"$fifo" >"$out" &
        pid=$! mcp_pid=$!
        exec 7>"$fifo"
        # 5 MiB in one message, then 40 MiB without any newline, then a ping
        {
                printf '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
                head -c 5242880 /dev/zero | tr '\0' a
                printf '"}}\n'
                printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"ping"}'
                head -c 41943040 /dev/zero | tr '\0' b
                printf '\n%s\n' '{"jsonrpc":"2.0","id":3,"method":"ping"}'
        } >&7
        wait_until 20 grep -q '"id":3' "$out" || fail "no answer after the long lines:" "$(cat "$out")"
        # the sbx process itself (timeout is its parent)
        local spid
        spid=$(pgrep -P "$pid" -x sbx || echo "$pid")
        hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$spid/status")
        exec 7>&-
        wait "$pid" || fail "sbx mcp did not exit 0 at EOF"
        output=$(cat "$out")
        [ "$(jq -r '.id' <<<"$output" | xargs)" = "null 2 null 3" ] ||
                fail "answers:" "$(cut -c1-200 <<<"$output")"
        [ "$(jq -r 'select(.id == null) | .error.code' <<<"$output" | xargs)" = "-32600 -32600" ] ||
                fail "the long lines are not refused with -32600"
        echo "# peak RSS of sbx mcp after 45 MiB of oversized input: ${hwm} KiB" >&3
        # unbounded, it would hold the 40 MiB line (64 MiB after doubling); ASan builds need ~24
        [ "$hwm" -lt 40960 ] || fail "sbx mcp used ${hwm} KiB for oversized input"
}

@test "mcp: EOF ends the server at once; a last line without newline is still served" {
        local t0=$SECONDS
        printf '%s' '{"jsonrpc":"2.0","id":5,"method":"ping"}' >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp <"$BATS_TEST_TMPDIR/in"
        [ "$output" = '{"jsonrpc":"2.0","id":5,"result":{}}' ] || fail "answer: $output"
        _expect 0 "$SBX" mcp </dev/null
        [ -z "$output" ] || fail "output without input: $output"
        [ $((SECONDS - t0)) -lt 5 ] || fail "EOF took $((SECONDS - t0))s"
        # deep nesting and NUL bytes are parse errors, not crashes
        {
                head -c 100000 /dev/zero | tr '\0' '['
                printf '\n{"jsonrpc":"2.0","id":1,\0"method":"ping"}\n'
        } >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp <"$BATS_TEST_TMPDIR/in"
        [ "$(jq -r '.error.code' <<<"$output" | xargs)" = "-32700 -32700" ] ||
                fail "answers: $output"
}

@test "mcp: tools/call over raw JSON lines: a result, an isError result, sessions live on after EOF" {
        printf '%s\n' "$init" \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"name":"raw"}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"session":"raw","command":["sh","-c","echo $0","--"]}}}' \
                '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"session":"raw","path":"/nope"}}}' \
                >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp <"$BATS_TEST_TMPDIR/in"
        local id
        id=$(answer 2 | jq -r .result.structuredContent.id)
        is_id "$id" || fail "create: $(answer 2)"
        answer 3 | jq -e '.result.isError == false and .result.structuredContent.output == "--\n"
                and .result.content[0].type == "text"' >/dev/null ||
                fail "exec: $(answer 3)"
        answer 4 | jq -e '.result.isError == true and .result.structuredContent.error.code ==
                "not_found"' >/dev/null || fail "read of a missing file: $(answer 4)"
        # the commands' stderr is theirs, not the client's: the server stays quiet
        [ -z "$stderr" ] || fail "sbx mcp wrote to stderr: $stderr"
        # the session outlives the connection (its TTL ends it), marked as made through MCP
        sbx_ok list --json
        [ "$(json '[.[].id] | join(" ")')" = "$id" ] || fail "sessions after EOF: $output"
        [ "$(cat "$SBX_RUNTIME_DIR/$id/origin")" = mcp ] || fail "the session is not marked"
        # a new connection reaches it by id and by name
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"session":"raw","command":["echo","again"]}}}' \
                '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"destroy","arguments":{"session":"'"$id"'"}}}' \
                >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp <"$BATS_TEST_TMPDIR/in"
        [ "$(answer 5 | jq -r .result.structuredContent.output)" = again ] ||
                fail "a new connection cannot use the session by name: $(answer 5)"
        answer 6 | jq -e '.result.isError == false' >/dev/null || fail "destroy: $(answer 6)"
        sbx_ok list --json
        [ "$(json 'length')" = 0 ] || fail "sessions left: $output"
}

@test "mcp: env values reach the commands through fd 3, never a command line; env_file is not offered" {
        local s1=mcp-create-$RANDOM$RANDOM s2=mcp-exec-$RANDOM$RANDOM
        printf '%s\n' "$init" \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"name":"envs","env":["S1='"$s1"'","NL=a\nb=c"]}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"session":"envs","env":["S2='"$s2"'"],"command":["sh","-c","sleep 2; printf %s \"$S1|$S2|$NL\""]}}}' \
                '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"session":"envs","env":["NOEQUALS"],"command":["true"]}}}' \
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"session":"envs","env_file":"/etc/os-release","command":["true"]}}}' \
                >"$BATS_TEST_TMPDIR/in"
        "$SBX" mcp <"$BATS_TEST_TMPDIR/in" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
        local bg=$! p seen=0 i
        for i in $(seq 1 30); do
                for p in /proc/[0-9]*; do
                        ! tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qE "$s1|$s2" ||
                                fail "pid ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline")"
                        # positive control: the scan sees the running exec's command line
                        tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q "sleep 2; printf" && seen=1
                done
                sleep 0.1
        done
        wait "$bg"
        [ "$seen" = 1 ] || fail "the scan never saw the exec's command line"
        output=$(cat "$BATS_TEST_TMPDIR/out")
        [ "$(answer 3 | jq -r .result.structuredContent.output)" = "$s1|$s2|$(printf 'a\nb=c')" ] ||
                fail "exec: $(answer 3)"
        answer 4 | jq -e '.error.code == -32602 and (.error.message | test("KEY=VALUE"))' >/dev/null ||
                fail "env without '=': $(answer 4)"
        answer 5 | jq -e '.error.code == -32602 and (.error.message | test("env_file"))' >/dev/null ||
                fail "env_file: $(answer 5)"
        sbx_ok destroy envs
}

@test "mcp: --destroy-on-close destroys the connection's sessions at EOF, only those" {
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"name":"old"}}}' \
                >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp <"$BATS_TEST_TMPDIR/in"
        local old
        old=$(answer 1 | jq -r .result.structuredContent.id)
        is_id "$old" || fail "create: $output"
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"name":"new"}}}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"session":"old","command":["true"]}}}' \
                >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp --destroy-on-close <"$BATS_TEST_TMPDIR/in"
        is_id "$(answer 1 | jq -r .result.structuredContent.id)" || fail "create: $output"
        answer 2 | jq -e '.result.isError == false' >/dev/null || fail "exec in old: $(answer 2)"
        # new (made on this connection) is gone; old (an earlier connection's) is not
        sbx_ok list --json
        [ "$(json '[.[].id] | join(" ")')" = "$old" ] || fail "sessions: $output"
        sbx_ok destroy "$old"
}

@test "mcp: notifications/cancelled stops the running command and gets it no response" {
        local t0=$SECONDS
        mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"name":"c1"}}}' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"session":"c1","command":["sleep","60"]}}}' \
                '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"session":"c1","command":["sh","-c","ps -eo comm | grep -cx sleep"]}}}' \
                '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}' \
                '{"jsonrpc":"2.0","id":4,"method":"ping"}'
        [ $((SECONDS - t0)) -lt 20 ] || fail "the cancelled sleep 60 was waited for"
        [ "$(jq -r .id <<<"$output" | sort | xargs)" = "1 3 4" ] || fail "answers:" "$output"
        [ "$(answer 3 | jq -r .result.structuredContent.output)" = 0 ] ||
                fail "the cancelled command still runs: $(answer 3)"
}

@test "mcp: a client that stops reading cannot keep SIGTERM from cleaning up (--destroy-on-close)" {
        local fifo=$BATS_TEST_TMPDIR/out in=$BATS_TEST_TMPDIR/in pid i
        mkfifo "$fifo" "$in"
        exec 8<>"$fifo" # held open, never read: the server's writes fill the pipe
        exec 9<>"$in"   # held open: no EOF, the client is still there
        "$SBX" mcp --destroy-on-close <"$in" >"$fifo" &
        pid=$! mcp_pid=$!
        {
                echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"name":"stuck"}}}'
                for i in $(seq 2 40); do
                        echo '{"jsonrpc":"2.0","id":'"$i"',"method":"tools/list"}'
                done
        } >&9
        # the create happened, and the answers (12 KiB each) filled the pipe long ago
        wait_until 20 _session_listed stuck || fail "the session was never created"
        sleep 1
        grep -q '^State:.*S' "/proc/$pid/status" || fail "sbx mcp is not waiting"
        kill -TERM "$pid"
        wait_until 5 _gone "$pid" || fail "sbx mcp did not exit within 5 s of SIGTERM"
        wait "$pid" || fail "sbx mcp exited $? after SIGTERM"
        exec 8<&- 9>&-
        sbx_ok list --json
        [ "$(json 'length')" = 0 ] || fail "sessions left: $output"
}

_session_listed() {
        "$SBX" list --json | jq -e --arg n "$1" 'any(.[]; .name == $n)' >/dev/null
}

_gone() {
        [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"
}

@test "mcp: --config reaches the commands; their warnings reach the model" {
        printf '[sandbox]\nmounts = %s/missing:/mnt\n[sandbox]\nhostname = from-config\n' \
                "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/c.ini"
        printf '%s\n' \
                '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"name":"cfg"}}}' \
                '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"session":"cfg","command":["hostname"]}}}' \
                >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp --destroy-on-close --config "$BATS_TEST_TMPDIR/c.ini" <"$BATS_TEST_TMPDIR/in"
        answer 2 | jq -e '.result.isError == false and (.result.content[0].text |
                test("Warning: volume host path .*/missing. does not exist: skipped"))' \
                >/dev/null || fail "no warning in the create result: $(answer 2)"
        [ "$(answer 3 | jq -r .result.structuredContent.output)" = from-config ] ||
                fail "the config did not reach the session: $(answer 3)"
        sbx_ok list --json
        [ "$(json 'length')" = 0 ] || fail "sessions left after EOF: $output"
        # a bad --config is refused before serving (exit 2)
        sbx_expect 2 mcp --config "$BATS_TEST_TMPDIR/none.ini" </dev/null
}

# ---- what a model may not do ---------------------------------------------------------------

# call ID TOOL ARGS: a tools/call request line.
call() {
        printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' \
                "$1" "$2" "$3"
}

# refused ID PATTERN [CODE]: the call ID is an isError result (not a protocol error) whose
# text matches PATTERN, with error code CODE (usage).
refused() {
        answer "$1" | jq -e --arg p "$2" --arg c "${3:-usage}" '.result.isError == true and
                (.result.content[0].text | test($p)) and
                .result.structuredContent.error.code == $c' >/dev/null ||
                fail "call $1 is not refused with /$2/ (${3:-usage}): $(answer "$1")"
}

# The repro of the review: create with every limit lifted and no expiry made a session
# without cgroup limits that never expired. Each lift is refused, and so is a value above
# the operator's limits; a value under them is taken and applied.
@test "mcp: a model cannot lift the operator's limits or exceed them, only tighten them" {
        mcp "$init" \
                "$(call 2 create '{"memory":"unlimited","pids":"unlimited","cpus":"unlimited","ttl":"0"}')" \
                "$(call 3 create '{"pids":"unlimited"}')" \
                "$(call 4 create '{"cpus":"unlimited"}')" \
                "$(call 5 create '{"ttl":"0"}')" \
                "$(call 6 create '{"memory":"513M"}')" \
                "$(call 7 create '{"cpus":"1.5"}')" \
                "$(call 8 create '{"pids":"257"}')" \
                "$(call 9 create '{"disk":"2G"}')" \
                "$(call 10 create '{"nofile":4096}')" \
                "$(call 11 create '{"ttl":"31m"}')" \
                "$(call 12 create '{"timeout":"1h"}')" \
                "$(call 13 create '{"name":"small","memory":"64M","cpus":"0.5","pids":"32","disk":"256M","nofile":512,"ttl":"5m","timeout":"60s"}')" \
                "$(call 14 connect '{"session":"small","ttl":"0"}')" \
                "$(call 15 connect '{"session":"small","ttl":"2h"}')" \
                "$(call 16 exec '{"session":"small","command":["true"],"timeout":"31m"}')" \
                "$(call 17 exec '{"session":"small","command":["sh","-c","ulimit -n"],"timeout":"10s"}')" \
                "$(call 18 connect '{"session":"small","ttl":"10m"}')"
        refused 2 "'memory' cannot be unlimited.*operator's 512M"
        refused 3 "'pids' cannot be unlimited.*operator's 256"
        refused 4 "'cpus' cannot be unlimited.*operator's 1"
        refused 5 "'ttl' cannot be 0 .never expires.*operator's 30m"
        refused 6 "'memory' 513M is above the operator's limit of 512M"
        refused 7 "'cpus' 1.5 is above the operator's limit of 1"
        refused 8 "'pids' 257 is above the operator's limit of 256"
        refused 9 "'disk' 2G is above the operator's limit of 1G"
        refused 10 "'nofile' 4096 is above the operator's limit of 1024"
        refused 11 "'ttl' 31m is above the operator's limit of 30m"
        refused 12 "'timeout' 1h is above the operator's limit of 30m"
        refused 14 "'ttl' cannot be 0"
        refused 15 "'ttl' 2h is above the operator's limit of 30m"
        refused 16 "'timeout' 31m is above"
        # under the ceiling: taken, and applied
        answer 13 | jq -e '.result.isError == false and .result.structuredContent.ttl_seconds == 300
                and (.result.structuredContent.expires_at | type) == "string"' >/dev/null ||
                fail "a create under the limits failed: $(answer 13)"
        [ "$(answer 17 | jq -r .result.structuredContent.output)" = 512 ] ||
                fail "nofile 512 was not applied: $(answer 17)"
        answer 18 | jq -e '.result.isError == false and .result.structuredContent.ttl_seconds ==
                600' >/dev/null || fail "connect with a shorter ttl failed: $(answer 18)"
        # a refused create made nothing: only the accepted one existed, and it is gone at EOF
        sbx_ok list --json
        [ "$(json 'length')" = 0 ] || fail "sessions left after EOF: $output"
}

@test "mcp: the operator's config is the ceiling; where it is unlimited, any finite value goes" {
        printf '[limits]\nmemory = unlimited\npids = 64\n[sandbox]\nttl = 0\n' \
                >"$BATS_TEST_TMPDIR/c.ini"
        printf '%s\n' \
                "$(call 2 create '{"memory":"2G","ttl":"100h","name":"big"}')" \
                "$(call 3 create '{"memory":"unlimited"}')" \
                "$(call 4 create '{"ttl":"0"}')" \
                "$(call 5 create '{"pids":"65"}')" \
                >"$BATS_TEST_TMPDIR/in"
        SBX_PIDS=48 _expect 0 "$SBX" mcp --destroy-on-close --config "$BATS_TEST_TMPDIR/c.ini" \
                <"$BATS_TEST_TMPDIR/in"
        answer 2 | jq -e '.result.isError == false and .result.structuredContent.ttl_seconds ==
                360000' >/dev/null || fail "finite values above nothing were refused: $(answer 2)"
        refused 3 "'memory' cannot be unlimited.*ask for a finite value"
        refused 4 "'ttl' cannot be 0.*ask for a finite value"
        # SBX_* is a layer of the operator's config too (above the file)
        refused 5 "'pids' 65 is above the operator's limit of 48"
}

# An operator's own session (here with a host directory mounted) is out of a model's reach,
# by name and by id, for every tool; it survives the attempts. --any-session opens it.
@test "mcp: the tools act only on sessions the server created, unless --any-session" {
        mkdir "$BATS_TEST_TMPDIR/secrets"
        echo hunter2 >"$BATS_TEST_TMPDIR/secrets/key"
        sbx_ok create --name dev --mount "$BATS_TEST_TMPDIR/secrets:/mnt/secrets:ro"
        local dev=$output
        is_id "$dev" || fail "create: $dev"
        mcp "$init" \
                "$(call 2 read '{"session":"dev","path":"/mnt/secrets/key"}')" \
                "$(call 3 exec '{"session":"'"$dev"'","command":["cat","/mnt/secrets/key"]}')" \
                "$(call 4 exec '{"session":"dev","command":["true"]}')" \
                "$(call 5 write '{"session":"dev","path":"/workspace/x","content":"x"}')" \
                "$(call 6 edit '{"session":"dev","path":"/workspace/x","old_string":"x","new_string":"y"}')" \
                "$(call 7 ls '{"session":"'"$dev"'","path":"/mnt/secrets"}')" \
                "$(call 8 glob '{"session":"dev","pattern":"**/*"}')" \
                "$(call 9 grep '{"session":"dev","pattern":"hunter","path":"/mnt"}')" \
                "$(call 10 connect '{"session":"dev","ttl":"1m"}')" \
                "$(call 11 destroy '{"session":"dev"}')" \
                "$(call 12 destroy '{"session":"'"$dev"'","force":true}')" \
                "$(call 13 create '{"name":"mine"}')" \
                "$(call 14 exec '{"session":"mine","command":["echo","ok"]}')"
        local i
        for i in 2 3 4 5 6 7 8 9 10 11 12; do
                refused "$i" "^Error: session (dev|$dev) was not created by this MCP server" \
                        session_not_found
        done
        ! grep -q hunter2 <<<"$output" || fail "the secret reached the model:" "$output"
        # the server's own session works by the name it chose
        [ "$(answer 14 | jq -r .result.structuredContent.output)" = ok ] ||
                fail "exec in the server's own session: $(answer 14)"
        # the operator's session is untouched: alive, unchanged, its TTL not renewed to 1m
        sbx_ok list --json
        [ "$(json '[.[].id] | join(" ")')" = "$dev" ] || fail "sessions after the server: $output"
        json '.[0].ttl_seconds == 1800' >/dev/null || fail "dev's ttl was changed: $output"
        sbx_ok exec dev -- sh -c 'cat /mnt/secrets/key; ls /workspace'
        [ "$output" = hunter2 ] || fail "dev changed: $output"

        # the operator opts in: the same calls now reach it
        printf '%s\n' \
                "$(call 2 read '{"session":"dev","path":"/mnt/secrets/key"}')" \
                "$(call 3 destroy '{"session":"'"$dev"'"}')" >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp --any-session <"$BATS_TEST_TMPDIR/in"
        answer 2 | jq -e '.result.isError == false and (.result.content[0].text | test("hunter2"))' \
                >/dev/null || fail "--any-session: read failed: $(answer 2)"
        answer 3 | jq -e '.result.isError == false' >/dev/null ||
                fail "--any-session: destroy failed: $(answer 3)"
        sbx_ok list --json
        [ "$(json 'length')" = 0 ] || fail "dev still there after destroy: $output"
}

# A name is resolved in the server's table, never by sbx: after the server's "work" ended, an
# operator's new "work" is not the server's.
@test "mcp: a name the server used is not a way into a later session of the same name" {
        local fifo=$BATS_TEST_TMPDIR/in out=$BATS_TEST_TMPDIR/out pid
        mkfifo "$fifo"
        timeout 60 "$SBX" mcp --destroy-on-close <"$fifo" >"$out" &
        pid=$! mcp_pid=$!
        exec 7>"$fifo"
        call 1 create '{"name":"work"}' >&7
        echo >&7
        wait_until 20 grep -q '"id":1' "$out" || fail "no create answer: $(cat "$out")"
        local mine
        mine=$(jq -r 'select(.id == 1) | .result.structuredContent.id' "$out")
        # the session ends outside the server (as at its TTL); the operator makes a new "work"
        sbx_ok destroy "$mine"
        sbx_ok create --name work
        local theirs=$output
        printf '%s\n' "$(call 2 exec '{"session":"work","command":["true"]}')" \
                "$(call 3 destroy '{"session":"work"}')" >&7
        exec 7>&-
        wait "$pid" || fail "sbx mcp did not exit 0 at EOF"
        output=$(cat "$out")
        answer 2 | jq -e '.result.isError == true and .result.structuredContent.error.code ==
                "session_not_found"' >/dev/null || fail "exec reached the new work: $(answer 2)"
        answer 3 | jq -e '.result.isError == true' >/dev/null ||
                fail "destroy reached the new work: $(answer 3)"
        sbx_ok list --json
        [ "$(json '[.[].id] | join(" ")')" = "$theirs" ] || fail "sessions: $output"
        sbx_ok destroy "$theirs"
}

# ---- a real client --------------------------------------------------------------------------


@test "MCP SDK client: tools/list matches sbx tools --json" {
        client tools
}

@test "MCP SDK client: create, exec, write, read, edit, grep, glob, ls, connect, destroy" {
        client e2e
}

@test "MCP SDK client: failures are isError results, bad arguments -32602" {
        client errors
}

@test "MCP SDK client: sessions outlive the connection; a new one uses them; --destroy-on-close" {
        client disconnect
}

@test "MCP SDK client: an aborted request stops its command (notifications/cancelled)" {
        client cancel
}

@test "MCP SDK client: SIGTERM stops a running command; the session lives on" {
        client sigterm
}

# ---- sbx --version ----------------------------------------------------------------------------

@test "sbx --version names the features of this build, as text and as JSON" {
        sbx_ok --version
        [ "${lines[0]}" = "sbx $(sed -n "s/^ *version : '\(.*\)',\$/\1/p" "$SBX_SRC/meson.build")" ] ||
                fail "first line: ${lines[0]}"
        local f
        for f in seccomp namespaces cgroup-v2 cgroup-v1 pcre2 pcre2-jit mcp; do
                grep -qE "^features:.* [+-]$f( |$)" <<<"$output" || fail "no feature $f: $output"
        done
        # the details come from the libraries linked in, not from a fixed string
        local seccomp_ver
        seccomp_ver=$(dpkg-query -W -f='${Version}' 'libseccomp2' 2>/dev/null | sed 's/-.*//') ||
                true
        if [ -n "$seccomp_ver" ]; then
                grep -q "libseccomp $seccomp_ver" <<<"$output" ||
                        fail "the libseccomp version is not $seccomp_ver: $output"
        fi
        sbx_ok --json --version
        json_doc
        json '.features.seccomp.enabled == true and (.features["pcre2-jit"].enabled | type) ==
                "boolean" and (.version | length > 0)' >/dev/null || fail "JSON: $output"
}
