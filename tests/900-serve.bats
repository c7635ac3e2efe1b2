#!/usr/bin/env bats
# sbx serve: the OpenSandbox lifecycle and execd HTTP API, driven with curl against the real
# binary on an ephemeral loopback port (never 8083). Sessions made through it are ordinary
# sessions (sbx list sees them) that outlive a restart of serve.

load helpers

setup() {
        setup_sbx
        serve_pid=
        key=k-$RANDOM$RANDOM
        printf '[serve]\nhost_images = *\n' >"$BATS_TEST_TMPDIR/serve.ini"
}

teardown() {
        stop_serve
        teardown_sbx
}

# start_serve [ARGS...]: sbx serve on 127.0.0.1:0 with $key; its URL in $base.
start_serve() {
        local out=$BATS_TEST_TMPDIR/serve.out
        : >"$out"
        SBX_SERVE_API_KEY=$key "$SBX" serve --config "$BATS_TEST_TMPDIR/serve.ini" \
                --listen 127.0.0.1:0 "$@" >"$out" 2>"$BATS_TEST_TMPDIR/serve.err" 3>&- &
        serve_pid=$!
        wait_until 10 grep -q '^listening on http://' "$out" ||
                fail "serve did not start:" "$(cat "$out" "$BATS_TEST_TMPDIR/serve.err")"
        base=$(sed -n 's|^listening on ||p' "$out")
        [[ $base == http://127.0.0.1:* && $base != *:8083 ]] || fail "serve listens on '$base'"
}

# stop_serve: SIGTERM, and serve must exit 0 having printed nothing (a sanitizer's report
# under ASan included).
stop_serve() {
        [ -n "$serve_pid" ] || return 0
        local rc=0
        kill "$serve_pid" 2>/dev/null || true
        wait "$serve_pid" 2>/dev/null || rc=$?
        serve_pid=
        [ "$rc" -eq 0 ] || fail "serve exited with $rc: $(cat "$BATS_TEST_TMPDIR/serve.err")"
        [ ! -s "$BATS_TEST_TMPDIR/serve.err" ] ||
                fail "serve printed on stderr: $(cat "$BATS_TEST_TMPDIR/serve.err")"
}

# api METHOD PATH [BODY [CURL-ARGS...]]: a request with the API key; $code, $body and the
# response headers in $hdrs.
api() {
        local method=$1 path=$2 data=${3-} bodyf=$BATS_TEST_TMPDIR/body hf=$BATS_TEST_TMPDIR/hdrs
        shift 2
        [ $# -gt 0 ] && shift
        local args=(-s -X "$method" -o "$bodyf" -D "$hf" -w '%{http_code}' --max-time 30
                -H "OPEN-SANDBOX-API-KEY: $key")
        [ -n "$data" ] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
        code=$(curl "${args[@]}" "$@" "$base$path") || true
        body=$(cat "$bodyf")
        hdrs=$(tr -d '\r' <"$hf")
}

# expect_code N: $code is N, else fail with the body.
expect_code() {
        [ "$code" = "$1" ] || fail "HTTP $code, expected $1: $body"
}

# error_is STATUS CODE: an error answer with exactly {"code","message"}.
error_is() {
        expect_code "$1"
        jq -e --arg c "$2" '(keys == ["code","message"]) and .code == $c' <<<"$body" >/dev/null ||
                fail "error body: $body (expected code $2)"
}

# new_sandbox [JSON]: POST /v1/sandboxes; the id in $sid.
new_sandbox() {
        local def='{"image":{"uri":"python:3.11"},"timeout":600,"entrypoint":["tail","-f","/dev/null"]}'
        api POST /v1/sandboxes "${1:-$def}"
        expect_code 202
        sid=$(jq -r .id <<<"$body")
        is_id "$sid" || fail "create answered: $body"
}

# endpoint: the execd endpoint of $sid; its base URL in $ep and the token in $tok.
endpoint() {
        api GET "/v1/sandboxes/$sid/endpoints/44772?use_server_proxy=true"
        expect_code 200
        ep=http://$(jq -r .endpoint <<<"$body")
        tok=$(jq -r '.headers["X-EXECD-ACCESS-TOKEN"]' <<<"$body")
        [[ $tok =~ ^[0-9a-f]{64}$ ]] || fail "endpoint: $body"
}

# execd METHOD PATH [BODY]: a request to $sid's execd with its token.
execd() {
        local args=(-s -X "$1" -o "$BATS_TEST_TMPDIR/body" -D "$BATS_TEST_TMPDIR/hdrs"
                -w '%{http_code}' --max-time 30 -H "X-EXECD-ACCESS-TOKEN: $tok")
        [ -n "${3-}" ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
        code=$(curl "${args[@]}" "$ep$2") || true
        body=$(cat "$BATS_TEST_TMPDIR/body")
        hdrs=$(tr -d '\r' <"$BATS_TEST_TMPDIR/hdrs")
}

@test "serve: a non-loopback address without a key, a bad --listen, an empty key file" {
        sbx_expect 2 serve --listen 0.0.0.0:0
        [[ $stderr == *"without an API key"* ]] || fail "stderr: $stderr"
        sbx_expect 2 serve --listen nonsense
        [[ $stderr == *"invalid --listen"* ]] || fail "stderr: $stderr"
        : >"$BATS_TEST_TMPDIR/empty"
        sbx_expect 2 serve --api-key-file "$BATS_TEST_TMPDIR/empty"
        [[ $stderr == *"is empty"* ]] || fail "stderr: $stderr"
}

@test "serve: given no key it makes one only its user can read; without it nobody gets in" {
        local out=$BATS_TEST_TMPDIR/serve.out err=$BATS_TEST_TMPDIR/serve.err kf
        kf=$SBX_RUNTIME_DIR/serve.key
        env -u SBX_SERVE_API_KEY "$SBX" serve --config "$BATS_TEST_TMPDIR/serve.ini" \
                --listen 127.0.0.1:0 >"$out" 2>"$err" 3>&- &
        serve_pid=$!
        wait_until 10 grep -q '^listening on http://' "$out" || fail "no start: $(cat "$out" "$err")"
        base=$(sed -n 's|^listening on ||p' "$out")
        grep -qF "clients send the one in $kf as OPEN-SANDBOX-API-KEY" "$err" || fail "$(cat "$err")"
        [ "$(stat -c '%a %u' "$kf")" = "600 $(id -u)" ] || fail "key file: $(stat -c '%a %u' "$kf")"
        [[ $(cat "$kf") =~ ^[0-9a-f]{64}$ ]] || fail "key: $(cat "$kf")"
        # another user of the host, without the key (the attack): 401, nothing listed
        local resp
        resp=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
                curl -s -w '\n%{http_code}' "$base/v1/sandboxes")
        [ "${resp##*$'\n'}" = 401 ] || fail "without the key: $resp"
        [[ $resp == *MISSING_API_KEY* ]] || fail "$resp"
        setpriv --reuid=65534 --regid=65534 --clear-groups cat "$kf" 2>/dev/null &&
                fail "another user reads the key file"
        # a page's request with a plausible key: refused
        code=$(curl -s -o /dev/null -w '%{http_code}' -H 'OPEN-SANDBOX-API-KEY: 0' \
                -H 'Origin: http://evil.example' "$base/v1/sandboxes")
        [ "$code" = 401 ] || fail "wrong key: $code"
        # positive control: the key from the file opens the API
        code=$(curl -s -o "$BATS_TEST_TMPDIR/b" -w '%{http_code}' \
                -H "OPEN-SANDBOX-API-KEY: $(cat "$kf")" "$base/v1/sandboxes")
        [ "$code" = 200 ] || fail "with the key: $code $(cat "$BATS_TEST_TMPDIR/b")"
        kill "$serve_pid"
        wait "$serve_pid" || fail "serve exited with $?"
        serve_pid=
}

@test "serve: the API key is required, compared exactly; /health needs none" {
        start_serve
        code=$(curl -s -o "$BATS_TEST_TMPDIR/b" -w '%{http_code}' "$base/v1/sandboxes")
        body=$(cat "$BATS_TEST_TMPDIR/b")
        error_is 401 MISSING_API_KEY
        code=$(curl -s -o "$BATS_TEST_TMPDIR/b" -w '%{http_code}' -H "OPEN-SANDBOX-API-KEY: ${key}x" \
                "$base/v1/sandboxes")
        body=$(cat "$BATS_TEST_TMPDIR/b")
        error_is 401 INVALID_API_KEY
        code=$(curl -s -o "$BATS_TEST_TMPDIR/b" -w '%{http_code}' \
                -H "OPEN-SANDBOX-API-KEY: ${key:0:5}" "$base/v1/sandboxes")
        body=$(cat "$BATS_TEST_TMPDIR/b")
        error_is 401 INVALID_API_KEY
        # positive control: the right key lists (an empty list), under /v1 and under /
        api GET /v1/sandboxes
        expect_code 200
        jq -e '.items == [] and .pagination.totalItems == 0' <<<"$body" >/dev/null || fail "$body"
        api GET /sandboxes
        expect_code 200
        code=$(curl -s -o /dev/null -w '%{http_code}' "$base/health")
        [ "$code" = 200 ] || fail "/health: $code"
}

@test "serve: create, get, list, renew, pause, resume, delete; the session is an sbx session" {
        start_serve
        new_sandbox '{"image":{"uri":"python:3.11"},"timeout":600,"metadata":{"team":"a"},
                "resourceLimits":{"cpu":"500m","memory":"256Mi"},"env":{"GREETING":"hi"},
                "entrypoint":["tail","-f","/dev/null"]}'
        jq -e '.status.state == "Running" and .metadata.team == "a" and (.expiresAt|length) > 0
                and (.createdAt|length) > 0 and .entrypoint[0] == "tail"' <<<"$body" >/dev/null ||
                fail "$body"
        sbx_ok list --json
        json ".[] | select(.id == \"$sid\") | .limits.cpus_milli.value == 500 and
                .limits.memory_bytes.value == 268435456 and .ttl_seconds == 600" >/dev/null ||
                fail "sbx list: $output"
        sbx_ok exec "$sid" sh -c 'echo $GREETING'
        [ "$output" = hi ] || fail "env: $output"
        api GET "/v1/sandboxes/$sid"
        expect_code 200
        jq -e '.image.uri == "python:3.11" and .metadata.team == "a"' <<<"$body" >/dev/null ||
                fail "$body"
        api POST "/v1/sandboxes/$sid/renew-expiration" '{"expiresAt":"2099-01-01T00:00:00Z"}'
        expect_code 200
        jq -e '.expiresAt == "2099-01-01T00:00:00Z"' <<<"$body" >/dev/null || fail "$body"
        sbx_ok list --json
        json ".[] | select(.id == \"$sid\") | .expires_at == \"2099-01-01T00:00:00Z\"" >/dev/null ||
                fail "sbx list: $output"
        api POST "/v1/sandboxes/$sid/renew-expiration" '{"expiresAt":"2001-01-01T00:00:00Z"}'
        error_is 400 SANDBOX::INVALID_EXPIRATION
        # an offset is four digits ("+ab:cd" was once read as +00:00), and is applied
        api POST "/v1/sandboxes/$sid/renew-expiration" '{"expiresAt":"2099-01-01T00:00:00+ab:cd"}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        api POST "/v1/sandboxes/$sid/renew-expiration" '{"expiresAt":"2099-01-01T02:30:00+02:30"}'
        expect_code 200
        jq -e '.expiresAt == "2099-01-01T00:00:00Z"' <<<"$body" >/dev/null || fail "$body"
        api POST "/v1/sandboxes/$sid/pause"
        if [ "$code" = 501 ]; then
                skip "this host cannot pause: $body"
        fi
        expect_code 202
        grep -qix 'content-length: 0' <<<"$hdrs" || fail "no Content-Length: 0: $hdrs"
        api GET "/v1/sandboxes/$sid"
        jq -e '.status.state == "Paused"' <<<"$body" >/dev/null || fail "$body"
        api POST "/v1/sandboxes/$sid/pause"
        error_is 409 SBX::CONFLICT
        api POST "/v1/sandboxes/$sid/resume"
        expect_code 202
        api GET "/v1/sandboxes/$sid"
        jq -e '.status.state == "Running"' <<<"$body" >/dev/null || fail "after resume: $body"
        # paused and resumed with the CLI: serve reports the freezer's state, not its own mark
        sbx_ok pause "$sid"
        api GET "/v1/sandboxes/$sid"
        jq -e '.status.state == "Paused"' <<<"$body" >/dev/null || fail "after sbx pause: $body"
        sbx_ok resume "$sid"
        api GET "/v1/sandboxes/$sid"
        jq -e '.status.state == "Running"' <<<"$body" >/dev/null || fail "after sbx resume: $body"
        api DELETE "/v1/sandboxes/$sid"
        expect_code 204
        grep -qix 'content-length: 0' <<<"$hdrs" || fail "204 without Content-Length: 0: $hdrs"
        sbx_expect 3 connect "$sid"
        api GET "/v1/sandboxes/$sid"
        error_is 404 SBX::SANDBOX_NOT_FOUND
        api DELETE "/v1/sandboxes/$sid"
        error_is 404 SBX::SANDBOX_NOT_FOUND
}

@test "serve: list pages and filters" {
        start_serve
        local i
        for i in 1 2 3; do
                new_sandbox "{\"image\":{\"uri\":\"x\"},\"timeout\":600,\"metadata\":{\"n\":\"$i\"}}"
        done
        api GET '/v1/sandboxes?page=1&pageSize=2'
        expect_code 200
        jq -e '(.items|length) == 2 and .pagination.totalItems == 3 and .pagination.totalPages == 2
                and .pagination.hasNextPage == true' <<<"$body" >/dev/null || fail "$body"
        api GET '/v1/sandboxes?page=2&pageSize=2'
        jq -e '(.items|length) == 1 and .pagination.hasNextPage == false' <<<"$body" >/dev/null ||
                fail "$body"
        api GET '/v1/sandboxes?metadata=n%3D2'
        jq -e '(.items|length) == 1 and .items[0].metadata.n == "2"' <<<"$body" >/dev/null ||
                fail "$body"
        api GET '/v1/sandboxes?state=Paused'
        jq -e '(.items|length) == 0' <<<"$body" >/dev/null || fail "$body"
        api GET '/v1/sandboxes?pageSize=0'
        error_is 400 SANDBOX::INVALID_PARAMETER
}

@test "serve: what sbx cannot honour is refused with the reason, and nothing is created" {
        start_serve
        api POST /v1/sandboxes '{"image":{"uri":"x"},"resourceLimits":{"gpu":"1"}}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        api POST /v1/sandboxes '{"image":{"uri":"x"},"resourceLimits":{"cpu":"lots"}}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        api POST /v1/sandboxes '{"image":{"uri":"x"},"networkPolicy":{"defaultAction":"allow"}}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        [[ $body == *"[serve] network = host"* ]] || fail "$body"
        api POST /v1/sandboxes '{"image":{"uri":"x"},"networkPolicy":{"defaultAction":"allow",
                "egress":[{"action":"deny","target":"a.example"}]}}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        api POST /v1/sandboxes '{"snapshotId":"snap_1"}'
        error_is 400 SANDBOX::INVALID_PARAMETER
        mkdir -p "$BATS_TEST_TMPDIR/outside"
        api POST /v1/sandboxes "{\"image\":{\"uri\":\"x\"},\"volumes\":[{\"name\":\"v\",
                \"host\":{\"path\":\"$BATS_TEST_TMPDIR/outside\"},\"mountPath\":\"/mnt/v\"}]}"
        error_is 400 SANDBOX::INVALID_PARAMETER
        [[ $body == *volume_roots* ]] || fail "$body"
        # an image the store does not have, with pulling off: 400 naming it
        printf '[images]\npull = never\n' >"$BATS_TEST_TMPDIR/serve.ini"
        stop_serve
        start_serve
        api POST /v1/sandboxes '{"image":{"uri":"nope:1"},"timeout":60}'
        error_is 400 SBX::IMAGE_UNAVAILABLE
        [[ $body == *"nope:1"* ]] || fail "$body"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a refused create left sessions: $output"
}

@test "serve: volumes come only from [serve] volume_roots; the default network is none" {
        public_dir
        mkdir -p "$pubdir/allowed/data" "$pubdir/other"
        echo inside-root >"$pubdir/allowed/data/f"
        echo secret >"$pubdir/other/f"
        ln -s "$pubdir/other" "$pubdir/allowed/escape"
        printf '[serve]\nhost_images = *\nvolume_roots = %s\n' "$pubdir/allowed" \
                >"$BATS_TEST_TMPDIR/serve.ini"
        start_serve
        # a symlink under the root that leads out of it is refused
        api POST /v1/sandboxes "{\"image\":{\"uri\":\"x\"},\"volumes\":[{\"name\":\"v\",
                \"host\":{\"path\":\"$pubdir/allowed\"},\"subPath\":\"escape\",\"mountPath\":\"/mnt/v\"}]}"
        error_is 400 SANDBOX::INVALID_PARAMETER
        new_sandbox "{\"image\":{\"uri\":\"x\"},\"timeout\":600,\"volumes\":[{\"name\":\"v\",
                \"host\":{\"path\":\"$pubdir/allowed\"},\"subPath\":\"data\",\"mountPath\":\"/mnt/v\",
                \"readOnly\":true}]}"
        sbx_ok exec "$sid" cat /mnt/v/f
        [ "$output" = inside-root ] || fail "volume: $output"
        sbx_expect 2 exec "$sid" sh -c 'echo x >/mnt/v/g'
        [[ $stderr == *Read-only* ]] || fail "a readOnly volume was writable: $stderr"
        # no networkPolicy and [serve] network unset: no network but loopback
        sbx_ok exec "$sid" sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
        [ "$output" = lo ] || fail "interfaces: $output"
        # a directory another user owns (as a sandbox's writable volume is) on the way: its
        # owner could swap an entry for a symlink between serve's check and the mount. The
        # attack runs (that user swaps a directory and a symlink to "other" in a loop) and
        # every request is refused; the same name under a directory of root's is taken above.
        mkdir -p "$pubdir/allowed/theirs/x" "$pubdir/allowed/theirs/y"
        rm -rf "$pubdir/allowed/theirs/y" && ln -s "$pubdir/other" "$pubdir/allowed/theirs/y"
        chown -R 1000:1000 "$pubdir/allowed/theirs"
        setpriv --reuid=1000 --regid=1000 --clear-groups /usr/bin/python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1].encode()
while os.path.exists(sys.argv[1]):
    libc.renameat2(-100, d + b"/x", -100, d + b"/y", 2)  # RENAME_EXCHANGE
' "$pubdir/allowed/theirs" &
        local swapper=$! i
        sleep 0.3
        kill -0 "$swapper" || fail "the swapping loop does not run"
        for i in 1 2 3 4 5; do
                api POST /v1/sandboxes "{\"image\":{\"uri\":\"x\"},\"volumes\":[{\"name\":\"v\",
                        \"host\":{\"path\":\"$pubdir/allowed/theirs\"},\"subPath\":\"x\",\"mountPath\":\"/mnt/w\"}]}"
                [ "$code" = 400 ] || { kill "$swapper"; fail "try $i: $code $body"; }
                [[ $body == *"another user"* || $body == *volume_roots* ]] ||
                        { kill "$swapper"; fail "try $i: $body"; }
        done
        kill -0 "$swapper" || fail "the swapping loop stopped: the attack did not run throughout"
        kill "$swapper"
        wait "$swapper" 2>/dev/null || true
        sbx_ok list --json
        [ "$(jq length <<<"$output")" = 1 ] || fail "sessions made: $output"
}

@test "serve: bad JSON, unknown ids and routes, oversized bodies" {
        start_serve
        api POST /v1/sandboxes '{"image":'
        error_is 400 INVALID_REQUEST
        api POST /v1/sandboxes '[1,2]'
        error_is 400 SANDBOX::INVALID_PARAMETER
        api GET /v1/sandboxes/sb_0123456789abcdef
        error_is 404 SBX::SANDBOX_NOT_FOUND
        api GET /v1/sandboxes/--help
        error_is 404 SBX::SANDBOX_NOT_FOUND
        api DELETE /v1/sandboxes/sb_0123456789abcdef
        error_is 404 SBX::SANDBOX_NOT_FOUND
        api GET /v1/sandboxes/sb_0123456789abcdef/endpoints/44772
        error_is 404 SBX::SANDBOX_NOT_FOUND
        api GET /v1/nothing
        error_is 404 NOT_FOUND
        api PUT /v1/sandboxes
        error_is 405 METHOD_NOT_ALLOWED
        head -c $((2 << 20)) /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big"
        api POST /v1/sandboxes x --data-binary "@$BATS_TEST_TMPDIR/big"
        error_is 413 PAYLOAD_TOO_LARGE
        # chunked, so without a Content-Length to refuse up front
        api POST /v1/sandboxes x -H 'Transfer-Encoding: chunked' \
                --data-binary "@$BATS_TEST_TMPDIR/big"
        error_is 413 PAYLOAD_TOO_LARGE
        sbx_ok list --quiet
        [ -z "$output" ] || fail "sessions: $output"
}

@test "serve: execd needs the session's own token; a foreground command streams its events" {
        start_serve
        new_sandbox
        local other=$sid
        new_sandbox
        endpoint
        [[ $ep == "$base/sandboxes/$sid/proxy/44772" ]] || fail "endpoint $ep"
        execd GET /ping
        expect_code 200
        grep -qix 'content-length: 0' <<<"$hdrs" || fail "an empty 200 without Content-Length: 0"
        local mine=$tok
        tok=0000000000000000000000000000000000000000000000000000000000000000
        execd GET /ping
        error_is 401 INVALID_ACCESS_TOKEN
        # the token of one sandbox does not open another
        sid=$other endpoint
        tok=$mine
        ep=${ep/$other/$sid}
        execd GET /ping
        expect_code 200
        ep=${ep/$sid/$other}
        execd GET /ping
        error_is 401 INVALID_ACCESS_TOKEN
        ep=${ep/$other/$sid}
        execd POST /command '{"command":"echo one; echo two >&2; printf \"a\\n\\nb\"; exit 3"}'
        expect_code 200
        grep -qi '^content-type: text/event-stream' <<<"$hdrs" || fail "$hdrs"
        local events
        events=$(jq -c -s 'map(if .type == "error" then [.type, .error.evalue]
                else [.type, .text] end)' <<<"$body") || fail "not JSON events: $body"
        [[ $events == '[["init","fg-'*'"],'* ]] || fail "$events"
        [[ $events == *'["stdout","one"]'* && $events == *'["stderr","two"]'* ]] || fail "$events"
        [[ $events == *'["error","3"]]' ]] || fail "$events"
        # stdout's own lines in order, a blank one as "\n" (stderr may come between them)
        [[ $(jq -c -s 'map(select(.type == "stdout") | .text)' <<<"$body") == \
                '["one","a","\n","b"]' ]] || fail "$events"
        execd POST /command '{"command":"pwd","cwd":"/tmp","envs":{"A":"b"}}'
        [[ $(jq -c -s 'map(.type)' <<<"$body") == '["init","stdout","execution_complete"]' ]] ||
                fail "$body"
        jq -s -e '.[1].text == "/tmp"' <<<"$body" >/dev/null || fail "$body"
        local id
        id=$(jq -r -s '.[0].text' <<<"$body")
        execd GET "/command/status/$id"
        expect_code 200
        jq -e '.running == false and .exit_code == 0 and .content == "pwd"' <<<"$body" >/dev/null ||
                fail "$body"
        execd POST /command '{"command":"sleep 1"}' # no bound than the one of the test
        execd POST /command '{"command":"x","uid":1000}'
        error_is 400 INVALID_REQUEST
        execd POST /command '{"command":'
        error_is 400 INVALID_REQUEST
}

@test "serve: env and envs values never appear in a host command line" {
        start_serve
        local s1=create-secret-$RANDOM$RANDOM s2=exec-secret-$RANDOM$RANDOM s3=bg-secret-$RANDOM$RANDOM
        new_sandbox '{"image":{"uri":"python:3.11"},"timeout":600,"env":{"S1":"'"$s1"'","N":"a\nb"},
                "entrypoint":["tail","-f","/dev/null"]}'
        endpoint
        # a foreground command that runs a while, and a background one, each with a secret
        printf '%s' '{"command":"sleep 3; echo $S1 $S2","envs":{"S2":"'"$s2"'"}}' >"$BATS_TEST_TMPDIR/fg.json"
        curl -s -N --max-time 20 -H "X-EXECD-ACCESS-TOKEN: $tok" -H 'Content-Type: application/json' \
                --data-binary "@$BATS_TEST_TMPDIR/fg.json" "$ep/command" >"$BATS_TEST_TMPDIR/fg.out" &
        local fg=$!
        execd POST /command '{"command":"echo $S3; sleep 3","background":true,"envs":{"S3":"'"$s3"'"}}'
        expect_code 200
        # every host process's command line, while both run (and the supervisor all along)
        local seen=0 i p
        for i in $(seq 1 20); do
                for p in /proc/[0-9]*; do
                        tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qE "$s1|$s2|$s3" &&
                                fail "pid ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline")"
                        # positive control: the scan reads command lines (the foreground exec)
                        tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q "sleep 3; echo" && seen=1
                done
                sleep 0.1
        done
        [ "$seen" = 1 ] || fail "the scan never saw the running command's command line"
        wait "$fg"
        # the values did reach the commands, a newline included
        grep -q "$s1 $s2" "$BATS_TEST_TMPDIR/fg.out" || fail "fg: $(cat "$BATS_TEST_TMPDIR/fg.out")"
        sbx_ok exec "$sid" sh -c 'printf %s "$N"'
        [ "$output" = "$(printf 'a\nb')" ] || fail "N: $output"
}

@test "serve: a quiet command gets pings; a client that disconnects has its command killed" {
        start_serve
        new_sandbox
        endpoint
        local out=$BATS_TEST_TMPDIR/stream
        curl -sN --max-time 4 -H "X-EXECD-ACCESS-TOKEN: $tok" -d '{"command":"exec sleep 4242"}' \
                "$ep/command" >"$out" 3>&- &
        local cpid=$!
        # positive control: while the client is connected the command runs
        wait_until 5 pgrep -f '^sleep 4242$' >/dev/null || fail "the command never ran"
        wait "$cpid" || true
        jq -e -s 'map(.type) | .[0] == "init" and index("ping") != null' <"$out" >/dev/null ||
                fail "stream: $(cat "$out")"
        wait_until 5 sh -c '! pgrep -f "^sleep 4242$"' ||
                fail "the command survived its client: $(pgrep -af 'sleep 4242')"
        execd GET "/command/status/$(jq -r -s '.[0].text' <"$out")"
        jq -e '.running == false' <<<"$body" >/dev/null || fail "$body"
}

@test "serve: background commands: status, logs from a cursor, interrupt; they outlive serve" {
        start_serve
        new_sandbox
        endpoint
        execd POST /command '{"command":"echo first; sleep 300","background":true}'
        expect_code 200
        local id
        id=$(jq -r -s '.[0].text' <<<"$body")
        jq -e -s 'map(.type) == ["init","execution_complete"]' <<<"$body" >/dev/null || fail "$body"
        sbx_ok ps --json "$sid"
        json ".[] | select(.id == \"$id\") | .state == \"running\"" >/dev/null ||
                fail "sbx ps: $output"
        wait_until 5 sh -c "curl -s -H 'X-EXECD-ACCESS-TOKEN: $tok' '$ep/command/$id/logs' | grep -q first"
        execd GET "/command/$id/logs?cursor=0"
        expect_code 200
        [ "$body" = first ] || fail "logs: $body"
        grep -qx 'execd-commands-tail-cursor: 6' <<<"${hdrs,,}" || fail "$hdrs"
        execd GET "/command/$id/logs?cursor=6"
        [ -z "$body" ] || fail "logs from 6: $body"
        execd GET "/command/status/$id"
        jq -e '.running == true and .content == "echo first; sleep 300"' <<<"$body" >/dev/null ||
                fail "$body"
        # a restarted serve reports the same command
        stop_serve
        start_serve
        ep=$base/sandboxes/$sid/proxy/44772
        execd GET "/command/status/$id"
        expect_code 200
        jq -e '.running == true' <<<"$body" >/dev/null || fail "$body"
        execd DELETE "/command?id=$id"
        expect_code 200
        wait_until 5 sh -c "curl -s -H 'X-EXECD-ACCESS-TOKEN: $tok' '$ep/command/status/$id' | jq -e '.running == false' >/dev/null" ||
                fail "still running: $body"
        execd GET "/command/status/c999"
        error_is 404 NOT_FOUND
}

@test "serve: a client that sends its headers slowly does not hold up others" {
        start_serve
        local port=${base##*:}
        # a client that sends half a request line, then nothing
        exec 5<>"/dev/tcp/127.0.0.1/$port"
        printf 'GET /v1/sandb' >&5
        local t0=$SECONDS
        api GET /v1/sandboxes
        expect_code 200
        [ $((SECONDS - t0)) -le 2 ] || fail "a request waited $((SECONDS - t0))s behind a slow client"
        exec 5>&-
}

@test "serve: 100 concurrent requests are all answered" {
        start_serve
        new_sandbox
        local i pids=()
        for i in $(seq 100); do
                curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 \
                        -H "OPEN-SANDBOX-API-KEY: $key" "$base/v1/sandboxes/$sid" \
                        >"$BATS_TEST_TMPDIR/c.$i" 3>&- &
                pids+=($!)
        done
        for i in "${pids[@]}"; do
                wait "$i" || true
        done
        local ok
        ok=$(cat "$BATS_TEST_TMPDIR"/c.* | grep -c '^200$')
        [ "$ok" -eq 100 ] || fail "$ok of 100 answered 200: $(sort "$BATS_TEST_TMPDIR"/c.* | uniq -c)"
}

@test "serve: a restart keeps sessions, their metadata and their tokens" {
        start_serve
        new_sandbox '{"image":{"uri":"x"},"timeout":600,"metadata":{"k":"v"}}'
        endpoint
        stop_serve
        sbx_ok list --quiet
        [ "$output" = "$sid" ] || fail "sbx list: $output"
        start_serve
        api GET "/v1/sandboxes/$sid"
        expect_code 200
        jq -e '.metadata.k == "v"' <<<"$body" >/dev/null || fail "$body"
        local old=$tok
        endpoint
        [ "$tok" = "$old" ] || fail "the token changed across the restart"
        execd GET /ping
        expect_code 200
        # a session made with the CLI is a sandbox too, by id or by name
        new_session --ttl 5m --name web
        api GET "/v1/sandboxes/$sid"
        expect_code 200
        api GET /v1/sandboxes/web/endpoints/44772
        expect_code 200
        [[ $(jq -r .endpoint <<<"$body") == */sandboxes/$sid/proxy/44772 ]] || fail "$body"
}

@test "serve: an entrypoint other than the idle default runs as a detached command" {
        start_serve
        new_sandbox '{"image":{"uri":"x"},"timeout":600,
                "entrypoint":["sh","-c","echo up >/tmp/ep; exec sleep 300"]}'
        sbx_ok ps --json "$sid"
        json '.[0].state == "running" and .[0].argv[0] == "sh"' >/dev/null || fail "ps: $output"
        wait_until 5 "$SBX" exec "$sid" test -s /tmp/ep || fail "the entrypoint did not run"
        # the default one is not run: nothing to keep a session alive for
        new_sandbox
        sbx_ok ps --json "$sid"
        [ "$output" = "[]" ] || fail "ps: $output"
}
