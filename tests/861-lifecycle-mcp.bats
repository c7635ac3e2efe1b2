#!/usr/bin/env bats
# The MCP tools pause, resume, diff and commit, through `sbx mcp` over raw JSON lines: each
# step is its own server (--any-session, on a session made here), so the order of the steps
# is the order of the calls. A model cannot move an existing tag (--replace is not offered),
# nor pause a session its server did not create.

load helpers

setup() {
        setup_sbx
        [ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/bootstrap)"
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        local d=$BATS_TEST_TMPDIR/r
        mkdir -p "$d/bin" "$d/data"
        busybox_root "$d" sh cat echo rm sleep true test
        echo hello >"$d/data/a"
        tar -C "$d" -cf "$BATS_TEST_TMPDIR/r.tar" .
        sbx_ok image import bb:1 "$BATS_TEST_TMPDIR/r.tar"
}
teardown() { teardown_sbx; }

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}'

# tool [--own] NAME ARGS: one tools/call in a server of its own; the answer in $answer.
tool() {
        local flags=(--any-session)
        if [ "$1" = --own ]; then
                flags=()
                shift
        fi
        printf '%s\n{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' \
                "$init" "$1" "$2" >"$BATS_TEST_TMPDIR/in"
        _expect 0 "$SBX" mcp "${flags[@]}" <"$BATS_TEST_TMPDIR/in"
        answer=$(jq -c 'select(.id == 2)' <<<"$output")
        [ -n "$answer" ] || fail "no answer: $output"
}

ok() {
        jq -e '.result.isError == false' <<<"$answer" >/dev/null || fail "not a result: $answer"
}

refused_with() {
        jq -e --arg c "$1" '.result.isError == true and .result.structuredContent.error.code == $c' \
                <<<"$answer" >/dev/null || fail "not refused with $1: $answer"
}

@test "mcp: the four tools are listed with their arguments" {
        sbx_ok tools --json
        json '[.[] | select(.name | IN("pause","resume","diff","commit")) | .name] | length == 4' \
                >/dev/null || fail "$output"
        json '.[] | select(.name == "commit") | .input_schema |
                (.required | sort) == ["image","session"] and (.properties | has("pause")) and
                (.properties | has("replace") | not)' >/dev/null || fail "commit: $output"
}

@test "mcp: pause stops the session's commands, resume lets them run, diff and commit" {
        new_session --image bb:1
        tool pause '{"session":"'"$sid"'"}'
        ok
        jq -e '.result.structuredContent.paused == true' <<<"$answer" >/dev/null || fail "$answer"
        tool exec '{"session":"'"$sid"'","command":["true"]}'
        refused_with paused
        tool pause '{"session":"'"$sid"'"}'
        refused_with paused
        tool resume '{"session":"'"$sid"'"}'
        ok
        tool resume '{"session":"'"$sid"'"}'
        refused_with not_paused
        tool exec '{"session":"'"$sid"'","command":["sh","-c","echo n >/data/new; rm /data/a"]}'
        ok
        tool diff '{"session":"'"$sid"'"}'
        ok
        [ "$(jq -r '[.result.structuredContent.changes[] | .kind + " " + .path] | join(",")' \
                <<<"$answer")" = "C /data,D /data/a,A /data/new" ] || fail "diff: $answer"
        tool commit '{"session":"'"$sid"'","image":"bb:m","pause":true}'
        ok
        jq -e '.result.structuredContent.id | test("^sha256:[0-9a-f]{64}$")' <<<"$answer" \
                >/dev/null || fail "commit: $answer"
        sbx_ok run --image bb:m -- sh -c 'cat /data/new; cat /data/a 2>/dev/null || echo gone'
        [ "$output" = "$(printf 'n\ngone')" ] || fail "the committed image: $output"
        # the session was resumed after the commit
        tool exec '{"session":"'"$sid"'","command":["true"]}'
        ok
        # bad input comes back as an error result, not a crash
        tool commit '{"session":"'"$sid"'","image":"Bad Name"}'
        refused_with usage
}

@test "mcp: a model does not move an existing tag, nor reach a session it did not create" {
        new_session --image bb:1
        tool exec '{"session":"'"$sid"'","command":["sh","-c","echo x >/data/x"]}'
        ok
        tool commit '{"session":"'"$sid"'","image":"bb:1"}'
        refused_with exists
        tool commit '{"session":"'"$sid"'","image":"bb:1","replace":true}'
        jq -e '.error.code == -32602 or .result.isError == true' <<<"$answer" >/dev/null ||
                fail "replace was taken: $answer"
        sbx_ok run --image bb:1 -- sh -c 'test -e /data/x && echo moved || echo kept'
        [ "$output" = kept ]
        # without --any-session the server's own sessions only
        tool --own pause '{"session":"'"$sid"'"}'
        jq -e '.result.isError == true or .error != null' <<<"$answer" >/dev/null ||
                fail "paused a session it did not create: $answer"
        sbx_expect 1 resume "$sid" # not paused
}
