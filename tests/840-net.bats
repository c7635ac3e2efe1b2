#!/usr/bin/env bats
# sbx net: a live session's allow list changes at once (a host server on loopback, which the
# proxy reaches only when allowed literally, is refused, then served, then refused again), the
# change is audited, the session itself cannot change it, and bad input has its exit code.

load helpers
setup() {
        setup_sbx
        mkdir -p "$BATS_TEST_TMPDIR/www"
        echo "served by the test" >"$BATS_TEST_TMPDIR/www/hello.txt"
        port=$((20000 + RANDOM % 20000))
        (cd "$BATS_TEST_TMPDIR/www" && exec timeout 100 python3 -m http.server "$port" \
                --bind 127.0.0.1 >/dev/null 2>&1) &
        server_pid=$!
        wait_until 10 curl -s -o /dev/null "http://127.0.0.1:$port/" || fail "no test server"
}
teardown() {
        kill "$server_pid" 2>/dev/null || true
        teardown_sbx
}

# fetch: GET the test server's file through the session's proxy; $output is "CODE BODY".
# (NO_PROXY names 127.0.0.1, so the proxy is asked for by hand.)
fetch() {
        sbx_ok exec "$sid" sh -c 'curl -sS --noproxy "" -x "$HTTP_PROXY" -o /tmp/body \
                -w "%{http_code}" "$1"; echo " $(cat /tmp/body 2>/dev/null | head -n 1)"' \
                sh "http://127.0.0.1:$port/hello.txt"
}

@test "allow opens a host at once, deny closes it again; show lists what is in force" {
        new_session --allow-host other.sbx.invalid
        fetch
        [[ $output == "403 "* ]] || fail "not refused before the change: $output"
        sbx_ok net "$sid" allow "127.0.0.1:$port"
        [ -z "$output" ]
        fetch
        [ "$output" = "200 served by the test" ]
        sbx_ok net "$sid" show
        [ "$output" = "$(printf 'other.sbx.invalid\n127.0.0.1:%s' "$port")" ]
        sbx_ok net --json "$sid" deny "127.0.0.1:$port"
        [ "$(json '.allow | join(",")')" = other.sbx.invalid ]
        [ "$(json .mode)" = proxy ]
        fetch
        [[ $output == "403 "* ]] || fail "still served after deny: $output"
        sbx_ok net --json "$sid" show
        [ "$(json '.allow | length')" = 1 ]
}

@test "the changes are in the audit log, with the list in force after each" {
        new_session --allow-host other.sbx.invalid
        sbx_ok net "$sid" allow "127.0.0.1:$port"
        sbx_ok net "$sid" deny other.sbx.invalid
        sbx_ok log --json "$sid"
        [ "$(json '[.[] | select(.event == "net_policy") | .action + " " + .host] | join(",")')" = \
                "allow 127.0.0.1:$port,deny other.sbx.invalid" ]
        [ "$(json '[.[] | select(.event == "net_policy")][-1].allow | join(",")')" = "127.0.0.1:$port" ]
}

@test "names are checked and lowercased like --allow-host; * suffixes work" {
        new_session --allow-host other.sbx.invalid
        sbx_ok net "$sid" allow 'API.Example.COM'
        sbx_ok net "$sid" allow '*.cdn.example.com:443'
        sbx_ok net --json "$sid" show
        [ "$(json '.allow | join(",")')" = "other.sbx.invalid,api.example.com,*.cdn.example.com:443" ]
        sbx_expect 1 net --json "$sid" allow api.example.com
        [ "$(json .error.code)" = exists ]
}

@test "bad input: arguments, hosts, sessions, and a session without a proxy" {
        new_session --allow-host other.sbx.invalid
        sbx_expect 2 net
        sbx_expect 2 net "$sid"
        sbx_expect 2 net "$sid" open example.com
        sbx_expect 2 net "$sid" allow
        sbx_expect 2 net "$sid" allow a.com b.com
        sbx_expect 2 net "$sid" show extra
        sbx_expect 2 net --json "$sid" allow 'bad host!'
        [ "$(json .error.code)" = usage ]
        sbx_expect 2 net "$sid" allow 'example.com:99999'
        sbx_expect 2 net "$sid" allow ''
        sbx_expect 1 net --json "$sid" deny never.added.invalid
        [ "$(json .error.code)" = not_found ]
        sbx_expect 3 net sb_0000000000000000 show
        sbx_expect 3 net 'x/../y' show
        sbx_ok net --json "$sid" show
        [ "$(json '.allow | join(",")')" = other.sbx.invalid ] # nothing above changed it
        local plain=$sid
        new_session
        sbx_expect 4 net --json "$sid" allow example.com
        [ "$(json .error.code)" = unsupported ]
        sbx_ok net --json "$sid" show
        [ "$(json .mode)" = none ] && [ "$(json '.allow | length')" = 0 ]
        sbx_ok destroy "$plain"
        sbx_expect 3 net "$plain" show
}

@test "the list has a bound: the 257th entry is refused" {
        new_session --allow-host other.sbx.invalid
        local i
        for i in $(seq 1 255); do
                timeout 10 "$SBX" net "$sid" allow "h$i.sbx.invalid" || fail "entry $i refused"
        done
        sbx_expect 1 net --json "$sid" allow one-more.sbx.invalid
        [ "$(json .error.code)" = limit ]
        sbx_ok net "$sid" deny h1.sbx.invalid
        sbx_ok net "$sid" allow one-more.sbx.invalid
}

@test "hostile: the session cannot change its own list through the proxy or the runtime dir" {
        new_session --allow-host other.sbx.invalid
        # the proxy's port takes HTTP only: a control-looking request is just a bad request
        sbx_try exec "$sid" sh -c 'printf "NET ALLOW 127.0.0.1:%s\r\n\r\n" "$1" |
                timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/3128; cat >&3; timeout 2 cat <&3"' \
                sh "$port"
        # the supervisor's control socket is nowhere in the session
        sbx_try exec "$sid" sh -c 'ls -d "$1" 2>&1; find / -xdev -name ctl -type s 2>/dev/null' \
                sh "$SBX_RUNTIME_DIR"
        [[ $output != *"/ctl"* ]] || fail "a control socket is visible inside: $output"
        fetch
        [[ $output == "403 "* ]] || fail "the session opened its own network: $output"
        sbx_ok net --json "$sid" show
        [ "$(json '.allow | join(",")')" = other.sbx.invalid ]
        # positive control: the same server is reachable once the owner allows it
        sbx_ok net "$sid" allow "127.0.0.1:$port"
        fetch
        [ "$output" = "200 served by the test" ]
}
