# A `sbx serve` for one bats test (tests/905-serve-files.bats, tests/910-serve-sdk.bats): on
# an ephemeral loopback port, with an API key, and [serve] host_images = * so that any image
# uri the SDK sends makes a session on the host's base (the tests need no registry).
#
#   serve_start [INI-LINES...]   start it; $serve_url, $serve_key, $serve_pid set
#   serve_stop                   SIGTERM it and wait (teardown calls it too)
#   serve_sandbox                create a sandbox through the API: $sb_id, and its execd
#                                base URL and token header in $sb_base and $sb_token

serve_start() {
        local ini=$BATS_TEST_TMPDIR/serve.ini out=$BATS_TEST_TMPDIR/serve.out
        printf '[serve]\nhost_images = *\n' >"$ini"
        local line
        for line in "$@"; do
                printf '%s\n' "$line" >>"$ini"
        done
        serve_key=key-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
        SBX_SERVE_API_KEY=$serve_key "$SBX" serve --config "$ini" --listen 127.0.0.1:0 \
                >"$out" 2>"$BATS_TEST_TMPDIR/serve.err" &
        serve_pid=$!
        wait_until 10 grep -q '^listening on http://' "$out" ||
                fail "sbx serve did not start:" "$(cat "$out" "$BATS_TEST_TMPDIR/serve.err")"
        serve_url=$(sed -n 's/^listening on //p' "$out")
}

# SIGTERM ends it with status 0; a sanitizer report on its stderr (an ASan build) fails.
serve_stop() {
        [ -n "${serve_pid:-}" ] || return 0
        local rc=0
        kill -TERM "$serve_pid" 2>/dev/null || true
        wait "$serve_pid" 2>/dev/null || rc=$?
        serve_pid=
        ! grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$BATS_TEST_TMPDIR/serve.err" ||
                fail "sbx serve reported memory errors"
        [ "$rc" -eq 0 ] || fail "sbx serve exited with $rc on SIGTERM:" "$(cat "$BATS_TEST_TMPDIR/serve.err")"
}

# api METHOD PATH [CURL-ARGS...]: a lifecycle request with the key; body in $output, the
# status in $code.
api() {
        local method=$1 path=$2
        shift 2
        _expect 0 curl -sS -o "$BATS_TEST_TMPDIR/api.body" -w '%{http_code}' -X "$method" \
                -H "OPEN-SANDBOX-API-KEY: $serve_key" "$@" "$serve_url$path" || return 1
        code=$output
        output=$(cat "$BATS_TEST_TMPDIR/api.body")
}

serve_sandbox() {
        api POST /v1/sandboxes -H 'Content-Type: application/json' \
                -d '{"image":{"uri":"python:3.11"},"timeout":600,"resourceLimits":{}}'
        [ "$code" = 202 ] || fail "create: $code $output"
        sb_id=$(jq -r .id <<<"$output")
        is_id "$sb_id" || fail "create answered no id: $output"
        api GET "/v1/sandboxes/$sb_id/endpoints/44772?use_server_proxy=true"
        [ "$code" = 200 ] || fail "endpoint: $code $output"
        sb_base=http://$(jq -r .endpoint <<<"$output")
        sb_token="X-EXECD-ACCESS-TOKEN: $(jq -r '.headers["X-EXECD-ACCESS-TOKEN"]' <<<"$output")"
}
