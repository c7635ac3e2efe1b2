#!/usr/bin/env bats
# Packages at create on the default network (sbx(1) "PACKAGES"): the package index is reached
# through the session's egress proxy while the packages install, and never afterwards unless
# the allow list names it. The index is a PyPI-style "simple" directory served on the host's
# loopback by python3 -m http.server, holding a tiny wheel built here with zipfile; inside a
# session the host's 127.0.0.1 is not reachable except through the proxy.

load helpers
load wheel

setup_file() {
        /usr/bin/python3 -m pip --version >/dev/null 2>&1 ||
                skip "python3-pip is not installed (scripts/bootstrap installs it)"
        command -v curl >/dev/null || skip "curl is not installed (scripts/bootstrap installs it)"
        ix=$(mktemp -d /tmp/sbx-index.XXXXXX)
        export ix
        mkdir -p "$ix/www/simple/sbxtiny" "$ix/www/simple/sbxother"
        mk_wheel "$ix/www/simple/sbxtiny" sbxtiny 1.0
        mk_wheel "$ix/www/simple/sbxother" sbxother 2.0
        idx_port=$(free_port)
        export idx_port
        python3 -m http.server --bind 127.0.0.1 --directory "$ix/www" "$idx_port" \
                >"$ix/http.log" 2>&1 3>&- &
        echo $! >"$ix/pid"
        local i
        for i in $(seq 100); do
                curl -fsS --noproxy '*' "http://127.0.0.1:$idx_port/simple/" >/dev/null 2>&1 && break
                sleep 0.1
        done
        export index=http://127.0.0.1:$idx_port/simple
}

teardown_file() {
        if [ -n "${ix:-}" ]; then
                [ -f "$ix/pid" ] && kill "$(cat "$ix/pid")" 2>/dev/null
                rm -rf "$ix"
        fi
        return 0
}

setup() {
        setup_sbx
        ini=$BATS_TEST_TMPDIR/p.ini
        printf '[packages]\nindex_url = %s\n' "$index" >"$ini"
}
teardown() { teardown_sbx; }

# The index's root page through the session's proxy: prints the HTTP status (000 when the
# proxy is not there at all). Bypassing the proxy cannot reach the host's loopback anyway.
through_proxy='curl -s -o /dev/null -w "%{http_code}" --max-time 5 --noproxy "" -x http://127.0.0.1:3128 "$1/"; true'

@test "packages: the default network reaches the index while packages install, never afterwards" {
        printf '[sandbox]\nsetup = sh -c %s sh %s > /workspace/during\n' \
                "'$through_proxy'" "$index" >>"$ini"
        new_session --config "$ini" --package sbxtiny
        sbx_ok exec "$sid" python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
        [ "$output" = 42 ] || fail "got '$output'"
        grep -q 'GET /simple/sbxtiny/sbxtiny-1.0-py3-none-any.whl' "$ix/http.log" ||
                fail "the index served no wheel:" "$(cat "$ix/http.log")"
        # positive control: during provisioning the index answered through the proxy
        sbx_ok exec "$sid" cat /workspace/during
        [ "$output" = 200 ] || fail "during provisioning: '$output'"
        # afterwards the session is back to loopback only: no proxy is listening
        sbx_ok exec "$sid" sh -c "$through_proxy" sh "$index"
        [ "$output" = 000 ] || fail "after provisioning: '$output'"
        sbx_ok exec "$sid" sh -c 'env | grep -c PROXY || true'
        [ "$output" = 0 ] || fail "proxy variables in a none-mode session: $output"
        # and the agent's pip cannot fetch from it either
        sbx_expect 1 exec "$sid" python3 -m pip install --retries 0 --timeout 5 \
                --index-url "$index" sbxother
        sbx_ok net --json "$sid" show
        [ "$(json .mode)" = none ] || fail "net show: $output"
        sbx_ok log "$sid"
        [[ $output == *'"action":"provision_open","host":null,"allow":["127.0.0.1:'$idx_port'"]'* ]] ||
                fail "no provision_open record: $output"
        [[ $output == *'"action":"provision_close","host":null,"allow":[]'* ]] ||
                fail "no provision_close record: $output"
}

@test "packages: a proxy-mode session keeps only its own allow list after provisioning" {
        printf '[sandbox]\nsetup = sh -c %s sh %s > /workspace/during\n' \
                "'$through_proxy'" "$index" >>"$ini"
        new_session --config "$ini" --package sbxtiny --allow-host example.com
        sbx_ok exec "$sid" cat /workspace/during
        [ "$output" = 200 ] || fail "during provisioning: '$output'"
        # the same request, now judged by the session's own list: refused by the proxy
        sbx_ok exec "$sid" sh -c "$through_proxy" sh "$index"
        [ "$output" = 403 ] || fail "after provisioning: '$output'"
        sbx_ok net "$sid" show
        [[ $output == *example.com* && $output != *127.0.0.1* ]] || fail "net show: $output"
        # the agent's pip in the session is refused the index as well
        sbx_expect 1 exec "$sid" python3 -m pip install --retries 0 --timeout 5 sbxother
        sbx_ok exec "$sid" python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
        [ "$output" = 42 ] || fail "got '$output'"
}

@test "packages: run --package installs, then runs the command without the index" {
        sbx_ok run --config "$ini" --package sbxtiny -- sh -c \
                "python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'; $through_proxy" sh "$index"
        [ "$output" = "$(printf '42\n000')" ] || fail "got '$output'"
}

@test "pip in a session: works when the allow list names the index, with no other setting" {
        new_session --config "$ini" --allow-host "127.0.0.1:$idx_port"
        # the session's pip knows the index, the proxy and the externally-managed answer
        sbx_ok exec "$sid" sh -c 'env | grep ^PIP_ | sort'
        [[ $output == *"PIP_INDEX_URL=$index"* ]] || fail "env: $output"
        [[ $output == *"PIP_PROXY=http://127.0.0.1:3128"* ]] || fail "env: $output"
        [[ $output == *"PIP_BREAK_SYSTEM_PACKAGES=1"* ]] || fail "env: $output"
        sbx_ok exec "$sid" python3 -m pip install sbxother
        [[ $output == *"Successfully installed sbxother-2.0"* ]] || fail "pip: $output"
        sbx_ok exec "$sid" python3 -c 'import sbxother; print(sbxother.VALUE)'
        [ "$output" = 42 ] || fail "got '$output'"
        # the host's Python was not touched
        run /usr/bin/python3 -c 'import sbxother'
        [ "$status" -ne 0 ] || fail "sbxother is importable on the host"
        # the same session once the index leaves its list: pip is refused
        sbx_ok net "$sid" deny "127.0.0.1:$idx_port"
        sbx_expect 1 exec "$sid" python3 -m pip install --retries 0 --timeout 5 sbxtiny
}

@test "packages: an unreachable index fails create in seconds, one line, its own JSON code" {
        local dead
        dead=$(free_port)
        printf '[packages]\nindex_url = http://127.0.0.1:%s/simple\n' "$dead" >"$ini"
        local t0=$(date +%s%N)
        sbx_expect 1 create --config "$ini" --package sbxtiny
        local ms=$((($(date +%s%N) - t0) / 1000000))
        [ "$ms" -lt 5000 ] || fail "took ${ms} ms"
        [ "$(wc -l <<<"$stderr")" = 1 ] || fail "stderr: $stderr"
        [[ $stderr == "sbx: "*"package index 'http://127.0.0.1:$dead/simple' cannot be reached"*"502 Bad Gateway" ]] ||
                fail "stderr: $stderr"
        sbx_expect 1 create --json --config "$ini" --package sbxtiny
        json_doc
        [ "$(json .error.code)" = package_index_unreachable ] || fail "json: $output"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session is left: $output"
}

@test "packages: a package the index lacks fails create with pip's own line and its own code" {
        sbx_expect 1 create --json --config "$ini" --package sbx-no-such-package
        json_doc
        [ "$(json .error.code)" = package_install_failed ] || fail "json: $output"
        [[ $(json .error.message) == *"(pip install) failed (exit 1): ERROR: No matching distribution found for sbx-no-such-package" ]] ||
                fail "json: $output"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session is left: $output"
}

@test "packages: bad [packages] values are usage errors" {
        printf '[packages]\nindex_url = ftp://127.0.0.1/simple\n' >"$ini"
        sbx_expect 2 create --config "$ini"
        [[ $stderr == *"index_url"*"http:// or https://"* ]] || fail "stderr: $stderr"
        printf '[packages]\nindex_url = https://user:pw@example.com/simple\n' >"$ini"
        sbx_expect 2 create --config "$ini"
        [[ $stderr == *credentials* ]] || fail "stderr: $stderr"
        printf '[packages]\nhosts = not a host\n' >"$ini"
        sbx_expect 2 create --config "$ini"
        SBX_PACKAGE_HOSTS='files.example.com, 10.0.0.5:3141' sbx_ok create
}

# ---- progress ----------------------------------------------------------------------------

# every line of $1 is one JSON object with .progress.what
all_progress_json() {
        local l
        [ -s "$1" ] || fail "no progress lines"
        while IFS= read -r l; do
                jq -e '.progress.what | type == "string"' <<<"$l" >/dev/null ||
                        fail "not a progress event: '$l'"
        done <"$1"
}

@test "progress: image import draws one line in place on a terminal, nothing elsewhere, JSON lines on request" {
        command -v script >/dev/null || skip "script (bsdutils) is not installed"
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        mkdir -p "$BATS_TEST_TMPDIR/root/bin"
        cp /bin/busybox "$BATS_TEST_TMPDIR/root/bin/"
        head -c 4M /dev/urandom >"$BATS_TEST_TMPDIR/root/blob"
        tar -C "$BATS_TEST_TMPDIR/root" -cf "$BATS_TEST_TMPDIR/root.tar" .
        script -qec "$SBX image import bb:1 $BATS_TEST_TMPDIR/root.tar" /dev/null \
                >"$BATS_TEST_TMPDIR/tty.out" </dev/null
        local tty
        tty=$(cat -v "$BATS_TEST_TMPDIR/tty.out")
        [[ $tty == *'^M^[[Kunpacking the root filesystem tarball  '*' / '*'M  '*'/s'* ]] ||
                fail "no progress line: $tty"
        [[ $tty == *'^M^[[Ksha256:'* ]] || fail "the line was not cleared before the id: $tty"
        [ "$(grep -ac $'\n' "$BATS_TEST_TMPDIR/tty.out")" -le 1 ] || fail "progress took several lines"
        # stderr not a terminal: nothing but the result
        sbx_ok image import bb:2 "$BATS_TEST_TMPDIR/root.tar"
        [ -z "$stderr" ] || fail "stderr: $stderr"
        # JSON lines on stderr, the one document on stdout
        sbx_ok image import --json --progress json bb:3 "$BATS_TEST_TMPDIR/root.tar"
        json_doc
        printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/events"
        all_progress_json "$BATS_TEST_TMPDIR/events"
        [ "$(tail -1 "$BATS_TEST_TMPDIR/events" | jq -r '.progress | .bytes == .total and .total > 4000000')" = true ] ||
                fail "last event: $(tail -1 "$BATS_TEST_TMPDIR/events")"
        sbx_expect 2 image import --progress sometimes bb:4 "$BATS_TEST_TMPDIR/root.tar"
        [[ $stderr == *"invalid --progress 'sometimes'"* ]] || fail "stderr: $stderr"
}

@test "progress: package installs show a line on a terminal and JSON lines on request" {
        command -v script >/dev/null || skip "script (bsdutils) is not installed"
        script -qec "$SBX create --config $ini --package sbxtiny" /dev/null \
                >"$BATS_TEST_TMPDIR/tty.out" </dev/null
        local tty
        tty=$(cat -v "$BATS_TEST_TMPDIR/tty.out")
        [[ $tty == *'^M^[[Kinstalling the packages (pip install)  '*s* ]] || fail "no progress line: $tty"
        [[ $tty =~ sb_[a-z0-9]{16} ]] || fail "no id: $tty"
        sbx_ok destroy "${BASH_REMATCH[0]}"
        sbx_ok create --json --progress json --config "$ini" --package sbxtiny
        json_doc
        sid=$(json .id)
        printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/events"
        all_progress_json "$BATS_TEST_TMPDIR/events"
        grep -q '"what":"installing the packages (pip install)","elapsed_ms":' "$BATS_TEST_TMPDIR/events" ||
                fail "events: $(cat "$BATS_TEST_TMPDIR/events")"
        # not a terminal, no --progress: nothing
        sbx_ok create --config "$ini" --package sbxtiny
        [ -z "$stderr" ] || fail "stderr: $stderr"
}
