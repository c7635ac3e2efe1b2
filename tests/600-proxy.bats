#!/usr/bin/env bats
# Network egress (docs/DESIGN.md, "Network egress"): --net none|host|proxy and --allow-host,
# with real traffic to test hosts this file makes itself (tests/proxy_env.bash): a network
# namespace behind a veth pair with HTTP, HTTPS and TCP echo servers at a 10.x address, and
# names for them in a private /etc/hosts bind-mounted in a mount namespace of the test. The
# proxy resolves names in its supervisor's mount namespace, so the sessions that need the
# names are created inside that mount namespace ($in_hosts).

BATS_TEST_TIMEOUT=240
load helpers
load proxy_env

setup_file() {
        [ "$(id -u)" -eq 0 ] || return 0
        setup_users
        proxy_env_up "$BATS_FILE_TMPDIR/env"
}
teardown_file() {
        proxy_env_down
        teardown_users
}

setup() {
        [ "$(id -u)" -eq 0 ] || skip "the test hosts need root (ip netns, veth, mount --bind)"
        [ -n "${px_hosts:-}" ] || fail "the test hosts were not set up (setup_file)"
        setup_sbx
        in_hosts=(unshare -m --propagation private -- sh -c
                'mount --bind "$0" /etc/hosts && exec "$@"' "$px_hosts")
}
teardown() {
        [ -z "${listener_pid:-}" ] || kill "$listener_pid" 2>/dev/null || true
        [ -z "${dummy_if:-}" ] || ip link del "$dummy_if" 2>/dev/null || true
        [ -z "${local_route:-}" ] || ip route del local "$local_route/32" dev lo 2>/dev/null || true
        teardown_sbx
}

# put_script NAME <<EOF: a file /tmp/NAME inside $sid with what stdin holds.
put_script() {
        sbx_ok exec -i "$sid" sh -c 'cat >"/tmp/$1"' sh "$1"
}

# px_session ARGS...: create a session inside the test-hosts mount namespace; id in $sid.
px_session() {
        _expect 0 "${in_hosts[@]}" "$SBX" create "$@" || return 1
        is_id "$output" || fail "create printed '$output', not a session id"
        sid=$output
}

# sbx_succeeds ARGS...: sbx ARGS... exits 0 (for wait_until; sbx_try itself always returns 0).
sbx_succeeds() {
        sbx_try "$@"
        [ "$status" -eq 0 ]
}

# session_gone ID: `sbx list` no longer shows session ID.
session_gone() {
        sbx_try list
        ! grep -q "$1" <<<"$output"
}

# http_code URL [CURL-ARGS...] (inside $sid): the status the proxy or the server answered,
# and the body in /tmp/body.
http_code() {
        in_sbx 'curl -sS -o /tmp/body -w "%{http_code}" "$@"; echo; cat /tmp/body' "$@"
}

# connect_code HOST:PORT (inside $sid): the proxy's answer to a CONNECT.
connect_code() {
        sbx_try exec "$sid" curl -sS -o /dev/null -w '%{http_connect}' "https://$1/"
        [ "$status" -ne 0 ] || fail "curl succeeded through a refused CONNECT"
}

@test "an allowed name via curl: HTTP forwarded, HTTPS tunnelled with the server's own certificate" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        in_sbx 'env | grep -i _proxy= | sort'
        [ "$output" = "HTTPS_PROXY=http://127.0.0.1:3128
HTTP_PROXY=http://127.0.0.1:3128
NO_PROXY=localhost,127.0.0.1
http_proxy=http://127.0.0.1:3128
https_proxy=http://127.0.0.1:3128
no_proxy=localhost,127.0.0.1" ]
        in_sbx 'curl -sS --fail http://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
        sbx_ok exec -i "$sid" sh -c 'cat >/tmp/ca.pem' <"$px_cert"
        in_sbx 'curl -sS --fail --cacert /tmp/ca.pem https://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
        # no interception: the certificate seen inside is the server's, byte for byte
        local want
        want=$(openssl x509 -in "$px_cert" -noout -fingerprint -sha256)
        in_sbx 'openssl s_client -proxy 127.0.0.1:3128 -connect web.sbx.test:443 \
                -servername web.sbx.test </dev/null 2>/dev/null |
                openssl x509 -noout -fingerprint -sha256'
        [ "$output" = "$want" ]
}

@test "forwarding sends the URL's host, never the client's Host, and drops proxy headers" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        in_sbx 'curl -sS --fail -H "Host: other.sbx.test" -H "Proxy-Authorization: Basic c2VjcmV0" \
                -H "X-Kept: yes" http://web.sbx.test:8080/headers'
        grep -qx $'Host: web.sbx.test:8080\r\\?' <<<"$output" || grep -qx 'Host: web.sbx.test:8080' <<<"$output" ||
                fail "Host not rewritten: $output"
        ! grep -qi 'other.sbx.test\|Proxy-Authorization' <<<"$output" || fail "leaked: $output"
        grep -q '^X-Kept: yes' <<<"$output"
        grep -q '^GET /headers HTTP/1.1' <<<"$output"
}

@test "a name outside the allow list gets 403 naming the host and the flag, over HTTP and CONNECT" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        http_code http://other.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
        grep -qF "'other.sbx.test' port 80 is not in this session's allow list" <<<"$output"
        grep -qF -- "--allow-host other.sbx.test" <<<"$output"
        connect_code other.sbx.test:443
        [ "$output" = 403 ]
        # never resolved either: a name outside the list does not reach a resolver
        http_code http://no-such-name.invalid/
        [ "${lines[0]}" = 403 ]
}

@test "a literal IP is refused unless allowed literally; 0.0.0.0/0 does not open private ranges" {
        px_session --allow-host web.sbx.test
        http_code "http://$px_ip/hello.txt"
        [ "${lines[0]}" = 403 ]
        grep -qF -- "--allow-host $px_ip" <<<"$output"
        # the name is allowed, but it resolves to a private address that is not
        http_code http://web.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
        grep -qF "resolves to $px_ip, a private (10.0.0.0/8) address" <<<"$output"
        grep -qF -- "--allow-host $px_ip" <<<"$output"
        sbx_ok destroy "$sid"

        px_session --allow-host "${px_ip%.*}.0/24"
        http_code "http://$px_ip/hello.txt"
        [ "${lines[0]}" = 200 ]
        [ "${lines[1]}" = "hello from the test host" ]
        sbx_ok destroy "$sid"

        px_session --allow-host 0.0.0.0/0 --allow-host web.sbx.test
        http_code "http://$px_ip/hello.txt"
        [ "${lines[0]}" = 403 ]
        http_code http://web.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
}

@test "names resolving to loopback or the metadata address are refused, and so are such literals" {
        px_session --allow-host loop.sbx.test --allow-host meta.sbx.test --allow-host example.invalid
        http_code http://loop.sbx.test:22/
        [ "${lines[0]}" = 403 ]
        grep -qF "'loop.sbx.test' resolves to 127.0.0.1, a loopback address" <<<"$output"
        http_code http://meta.sbx.test/latest/meta-data/
        [ "${lines[0]}" = 403 ]
        grep -qF "resolves to 169.254.169.254, a link-local" <<<"$output"
        connect_code meta.sbx.test:443
        [ "$output" = 403 ]
        # literal forms of the host's loopback and the metadata service, through the proxy
        local u
        for u in http://127.0.0.1:22/ 'http://[::1]:22/' 'http://[::ffff:127.0.0.1]:22/' \
                http://169.254.169.254/ 'http://[::ffff:a9fe:a9fe]/' http://0.0.0.0:22/; do
                http_code "$u" --noproxy '' -x http://127.0.0.1:3128 -g
                [ "${lines[0]}" = 403 ] || fail "$u: $output"
        done
}

@test "of a name's addresses only the checked ones are used: loopback among them is skipped" {
        # dual.sbx.test resolves to 127.0.0.1 and to the test host
        _expect 0 "${in_hosts[@]}" getent ahostsv4 dual.sbx.test
        grep -q '^127.0.0.1 ' <<<"$output" && grep -q "^$px_ip " <<<"$output" ||
                fail "the host's resolver does not give both addresses: $output"
        px_session --allow-host dual.sbx.test --allow-host "$px_ip"
        http_code http://dual.sbx.test/hello.txt
        [ "${lines[0]}" = 200 ] || fail "$output"
        wait_until 10 net_records_at_least 1 || fail "no net record: $output"
        json 'select(.host == "dual.sbx.test") | .address == "'"$px_ip"'" and .verdict == "allowed"'
        sbx_ok destroy "$sid"
        # without the test host's address allowed, neither address is used
        px_session --allow-host dual.sbx.test
        http_code http://dual.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
        grep -qF "'dual.sbx.test' resolves to" <<<"$output"
}

@test "wildcard rules match subdomains at any depth, not the domain itself" {
        px_session --allow-host '*.cdn.sbx.test' --allow-host "$px_ip"
        http_code http://a.cdn.sbx.test/hello.txt
        [ "${lines[0]}" = 200 ]
        http_code http://b.a.cdn.sbx.test/hello.txt
        [ "${lines[0]}" = 200 ]
        http_code http://cdn.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
        http_code http://web.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
}

@test "port rules: a name or an address allowed on one port only" {
        px_session --allow-host web.sbx.test:8080 --allow-host "$px_ip"
        http_code http://web.sbx.test:8080/hello.txt
        [ "${lines[0]}" = 200 ]
        http_code http://web.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
        connect_code web.sbx.test:443
        [ "$output" = 403 ]
        sbx_ok destroy "$sid"

        px_session --allow-host web.sbx.test --allow-host "$px_ip:443"
        sbx_ok exec -i "$sid" sh -c 'cat >/tmp/ca.pem' <"$px_cert"
        in_sbx 'curl -sS --fail --cacert /tmp/ca.pem https://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
        http_code http://web.sbx.test/hello.txt
        [ "${lines[0]}" = 403 ]
}

@test "CONNECT carries any TCP protocol: a plain echo service" {
        px_session --allow-host web.sbx.test:7 --allow-host "$px_ip:7"
        in_sbx 'python3 -c "
import socket
s = socket.create_connection((\"127.0.0.1\", 3128), timeout=10)
s.sendall(b\"CONNECT web.sbx.test:7 HTTP/1.1\r\nHost: web.sbx.test:7\r\n\r\n\")
head = b\"\"
while b\"\r\n\r\n\" not in head:
    head += s.recv(1)
print(head.split(b\"\r\n\")[0].decode())
s.sendall(b\"ping through the tunnel\")
print(s.recv(100).decode())
"'
        [ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
        [ "${lines[1]}" = "ping through the tunnel" ]
        # 8 MiB both ways at once, then a half-close: every byte comes back, in order
        in_sbx 'python3 -c "
import hashlib, os, socket, threading
s = socket.create_connection((\"127.0.0.1\", 3128), timeout=30)
s.sendall(b\"CONNECT web.sbx.test:7 HTTP/1.1\r\n\r\n\")
head = b\"\"
while b\"\r\n\r\n\" not in head:
    head += s.recv(1)
data = os.urandom(8 << 20)
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=send).start()
got = bytearray()
while True:
    chunk = s.recv(1 << 16)
    if not chunk:
        break
    got += chunk
print(len(got), hashlib.sha256(got).digest() == hashlib.sha256(data).digest())
"'
        [ "$output" = "8388608 True" ]
}

@test "pip installs from a local package index through the proxy, and fails when it is not allowed" {
        # a tiny wheel and a PEP 503 simple index for it, served by the test host
        python3 - "$px_root" <<'EOF'
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
os.makedirs(f"{root}/simple/tinypkg", exist_ok=True)
os.makedirs(f"{root}/packages", exist_ok=True)
name = "tinypkg-1.0-py3-none-any.whl"
files = {
    "tinypkg/__init__.py": b"VALUE = 'installed through the sbx proxy'\n",
    "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{path},sha256={digest},{len(data)}\n"
record += "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(f"{root}/packages/{name}", "w") as z:
    for path, data in files.items():
        z.writestr(path, data)
    z.writestr("tinypkg-1.0.dist-info/RECORD", record)
with open(f"{root}/simple/tinypkg/index.html", "w") as f:
    f.write(f'<html><body><a href="../../packages/{name}">{name}</a></body></html>\n')
EOF
        local pip='python3 -m pip --disable-pip-version-check --no-cache-dir'
        px_session --allow-host pypi.sbx.test --allow-host "$px_ip"
        in_sbx "$pip install --index-url http://pypi.sbx.test/simple/ --trusted-host pypi.sbx.test \
                --target /tmp/site tinypkg &&
                PYTHONPATH=/tmp/site python3 -c 'import tinypkg; print(tinypkg.VALUE)'"
        [ "${lines[-1]}" = "installed through the sbx proxy" ]
        sbx_ok destroy "$sid"

        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        sbx_try exec "$sid" sh -c "$pip download --retries 0 --timeout 5 \
                --index-url http://pypi.sbx.test/simple/ --trusted-host pypi.sbx.test -d /tmp/dl tinypkg"
        [ "$status" -ne 0 ]
        grep -q "No matching distribution found for tinypkg" <<<"$stderr"
        # because the proxy refused the index
        http_code http://pypi.sbx.test/simple/tinypkg/
        [ "${lines[0]}" = 403 ]
}

@test "no DNS, UDP, ICMP or direct TCP from inside a proxy session, and each fails fast" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        in_sbx 'python3 -c "
import socket, time
def attempt(what, f):
    t = time.monotonic()
    try:
        f()
        print(what, \"WORKED\")
    except OSError as e:
        print(what, \"failed\", \"fast\" if time.monotonic() - t < 2 else \"SLOW\")
def icmp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.sendto(b\"\\x08\\0\\0\\0\\0\\0\\0\\0\", (\"'"$px_ip"'\", 0))
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"'"$px_ip"'\", 53))
attempt(\"dns\", lambda: socket.getaddrinfo(\"web.sbx.test\", 80))
attempt(\"dns-public\", lambda: socket.getaddrinfo(\"example.com\", 80))
attempt(\"udp\", udp)
attempt(\"icmp\", icmp)
attempt(\"tcp\", lambda: socket.create_connection((\"'"$px_ip"'\", 80), timeout=5))
"'
        [ "$output" = "dns failed fast
dns-public failed fast
udp failed fast
icmp failed fast
tcp failed fast" ]
        # the same TCP connection through the proxy works
        in_sbx 'curl -sS --fail http://web.sbx.test/hello.txt'
}

@test "--net none has no proxy: no variables, nothing listening, nothing reachable" {
        new_session
        in_sbx 'env | grep -ci _proxy= || true'
        [ "$output" = 0 ]
        # no listening TCP socket at all in the session (state 0A = LISTEN)
        in_sbx 'cat /proc/net/tcp /proc/net/tcp6 | awk "\$4 == \"0A\"" | wc -l'
        [ "$output" = 0 ]
        sbx_try exec "$sid" curl -sS -x http://127.0.0.1:3128 http://web.sbx.test/hello.txt
        [ "$status" -eq 7 ] # could not connect
}

@test "--net host reaches the test host directly, and warns" {
        new_session --net host
        grep -q -- "--net host" <<<"$stderr" || fail "no warning: $stderr"
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "warning" and (.message | contains("--net host")))] | length == 1'
        in_sbx 'env | grep -ci _proxy= || true'
        [ "$output" = 0 ]
        in_sbx "curl -sS --fail http://$px_ip/hello.txt"
        [ "$output" = "hello from the test host" ]
}

@test "[network] mode and allow in sandbox.ini, and run, work like the flags" {
        printf '[network]\nmode = proxy\nallow = web.sbx.test, %s\n' "$px_ip" >"$BATS_TEST_TMPDIR/s.ini"
        _expect 0 "${in_hosts[@]}" "$SBX" run --config "$BATS_TEST_TMPDIR/s.ini" -- \
                curl -sS --fail http://web.sbx.test/hello.txt
        [ "$output" = "hello from the test host" ]
        _expect 0 "${in_hosts[@]}" "$SBX" run --config "$BATS_TEST_TMPDIR/s.ini" -- \
                curl -sS -o /dev/null -w '%{http_code}' http://other.sbx.test/
        [ "$output" = 403 ]
}

@test "bad requests get an error and the proxy keeps serving" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        in_sbx 'python3 -c "
import socket
def ask(data):
    s = socket.create_connection((\"127.0.0.1\", 3128), timeout=10)
    s.sendall(data)
    print(s.recv(100).split(b\"\r\n\")[0].decode())
ask(b\"GET /hello.txt HTTP/1.1\r\nHost: web.sbx.test\r\n\r\n\")
ask(b\"GET https://web.sbx.test/ HTTP/1.1\r\n\r\n\")
ask(b\"CONNECT web.sbx.test HTTP/1.1\r\n\r\n\")
ask(b\"GET http://web.sbx.test/ HTTP/1.1\r\nX: \" + b\"a\" * 20000 + b\"\r\n\r\n\")
ask(b\"GET http://we\\x01b.sbx.test/ HTTP/1.1\r\n\r\n\")
"'
        [ "$output" = "HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 431 Request Header Fields Too Large
HTTP/1.1 400 Bad Request" ]
        in_sbx 'curl -sS --fail http://web.sbx.test/hello.txt'
}

@test "50 parallel downloads through one session" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        local want
        want=$(sha256sum <"$px_root/1m.bin" | cut -d' ' -f1)
        in_sbx 'seq 50 | xargs -P 50 -I{} curl -sS --fail -o /tmp/d{} http://web.sbx.test/1m.bin &&
                sha256sum /tmp/d* | cut -d" " -f1 | sort | uniq -c'
        [ "$(echo $output)" = "50 $want" ]
}

@test "1,000 idle connections to one session's proxy neither hurt another session nor its own TTL" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        local other=$sid
        px_session --allow-host web.sbx.test --allow-host "$px_ip" --ttl 12 --nofile 4096
        local flooded=$sid t0=$SECONDS
        # the flood runs in the background inside the session (an exec still running would
        # hold the session's TTL, by design; a background process does not)
        in_sbx 'python3 -c "
import socket, time
conns = [socket.create_connection((\"127.0.0.1\", 3128)) for _ in range(1000)]
print(\"holding\", len(conns), flush=True)
time.sleep(120)
" >/tmp/flood.log 2>&1 &'
        wait_until 20 sbx_succeeds exec "$flooded" grep -q "holding 1000" /tmp/flood.log ||
                fail "the flood did not start: $(sbx_try exec "$flooded" cat /tmp/flood.log; echo "$output")"
        # the flooded proxy is at its cap: one more request is refused at once, not queued
        sid=$flooded
        in_sbx 'curl -sS -m 5 -o /dev/null -w "%{http_code}" http://web.sbx.test/hello.txt || true'
        [ "$output" = 503 ]
        # the other session does not notice
        sid=$other
        local t1=$SECONDS
        in_sbx 'curl -sS -m 5 --fail http://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
        [ $((SECONDS - t1)) -le 2 ]
        # and the flooded session still ends on time
        wait_until 20 session_gone "$flooded" || fail "$flooded still listed: $output"
        [ $((SECONDS - t0)) -le 20 ] || fail "the TTL of 12s ended the session after $((SECONDS - t0))s"
}

# net_records: the "net" records of session $sid's audit log, one JSON object a line.
net_records() {
        sbx_ok log --json "$sid" || return 1
        output=$(jq -c '.[] | select(.event == "net")' <<<"$output")
}

net_records_at_least() {
        net_records && [ "$(grep -c . <<<"$output")" -ge "$1" ]
}

@test "every allowed and denied connection is an audit record with address, bytes, duration, verdict" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        in_sbx 'curl -sS --fail -o /dev/null http://web.sbx.test/1m.bin &&
                curl -sS --fail -k -o /dev/null https://web.sbx.test/hello.txt &&
                curl -sS -o /dev/null http://other.sbx.test/ &&
                curl -sS -o /dev/null --noproxy "" -x http://127.0.0.1:3128 http://169.254.169.254/'
        wait_until 10 net_records_at_least 4 || fail "net records: $output"
        local all=$output
        # the plain download: GET, every byte of the 1 MiB file came in, a little went out
        output=$(jq -c 'select(.host == "web.sbx.test" and .port == 80)' <<<"$all")
        json '.method == "GET" and .verdict == "allowed" and .address == "'"$px_ip"'"'
        json '.bytes_in > 1048576 and .bytes_in < 1050000 and .bytes_out > 50 and .bytes_out < 1000'
        json '.duration_ms >= 0 and .reason == null and .session == "'"$sid"'"'
        # the tunnel: CONNECT, TLS bytes both ways (the certificate alone is > 1 KiB)
        output=$(jq -c 'select(.host == "web.sbx.test" and .port == 443)' <<<"$all")
        json '.method == "CONNECT" and .verdict == "allowed" and .bytes_in > 1000 and .bytes_out > 100'
        # the refusals: no address for the name outside the list (it was never resolved)
        output=$(jq -c 'select(.host == "other.sbx.test")' <<<"$all")
        json '.verdict == "denied" and .address == null and .bytes_in == 0 and .bytes_out == 0'
        json '.reason | contains("not in this session'"'"'s allow list")'
        output=$(jq -c 'select(.host == "169.254.169.254")' <<<"$all")
        json '.verdict == "denied" and .port == 80'
}

@test "an unprivileged user's session gets the proxy too" {
        setup_sbx_user
        user_sbx_expect 0 run --allow-host "$px_ip" -- sh -c \
                "curl -sS --fail http://$px_ip/hello.txt; curl -sS -o /dev/null -w '%{http_code}' http://$px_host_ip/"
        [ "${lines[0]}" = "hello from the test host" ]
        [ "${lines[1]}" = 403 ]
        user_sbx_expect 0 create --allow-host "$px_ip:80"
        local usid=$output
        user_sbx_expect 0 exec "$usid" curl -sS --fail "http://$px_ip/hello.txt"
        [ "$output" = "hello from the test host" ]
        user_sbx_expect 0 destroy "$usid"
}

@test "sbx check reports the proxy" {
        sbx_try check --json
        json '.features[] | select(.name == "proxy") | .available and (.detail | contains("127.0.0.1:3128"))'
}

@test "idle and trickling connections are cut off after the head deadline, which frees their slots" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip" --nofile 4096
        # every slot taken: 255 silent connections and one that sends a byte every 2 s
        in_sbx 'python3 -c "
import socket, time
idle = [socket.create_connection((\"127.0.0.1\", 3128)) for _ in range(255)]
slow = socket.create_connection((\"127.0.0.1\", 3128))
print(\"holding\", flush=True)
start = time.monotonic()
try:
    for c in b\"GET http://web.sbx.test/hello.txt HTTP/1.1\r\n\" * 100:
        slow.send(bytes([c]))
        time.sleep(2)
        if time.monotonic() - start > 60:
            break
except OSError:
    pass
print(\"trickler cut off after\", round(time.monotonic() - start), flush=True)
time.sleep(60)
" >/tmp/hold.log 2>&1 &'
        wait_until 20 sbx_succeeds exec "$sid" grep -q holding /tmp/hold.log
        in_sbx 'curl -sS -m 5 -o /dev/null -w "%{http_code}" http://web.sbx.test/hello.txt || true'
        [ "$output" = 503 ]
        # 30 s after their accept, all of them are closed, the trickler too
        wait_until 45 sbx_succeeds exec "$sid" grep -q "trickler cut off" /tmp/hold.log
        sbx_ok exec "$sid" cat /tmp/hold.log
        local after
        after=$(sed -n 's/^trickler cut off after \([0-9]*\)$/\1/p' <<<"$output")
        [ -n "$after" ] && [ "$after" -ge 28 ] && [ "$after" -le 36 ] || fail "$output"
        in_sbx 'curl -sS -m 5 --fail http://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
}

@test "an address of the host itself is refused unless allowed literally, and nothing reaches it" {
        # a service of the host on 0.0.0.0, and an address of the host that is not loopback:
        # a documentation address on an interface of its own (a veth pair: the dummy module
        # is not everywhere), opened by the 192.0.2.0/24 rule below
        dummy_if=sbxd$$
        local ip=192.0.2.$(($$ % 200 + 20))
        ip link add "$dummy_if" type veth peer name "${dummy_if}p" &&
                ip addr add "$ip/32" dev "$dummy_if" && ip link set "$dummy_if" up ||
                fail "cannot add an interface with $ip"

        python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as log:
        log.write("accepted\n")
    c.settimeout(2)
    try:
        data = c.recv(100)
    except OSError:
        data = b""
    with open(sys.argv[2], "a") as log:
        log.write("got %d bytes\n" % len(data))
    c.sendall(b"host service: " + data)
    c.close()
' "$BATS_TEST_TMPDIR/port" "$BATS_TEST_TMPDIR/listener.log" &
        listener_pid=$!
        wait_until 5 test -s "$BATS_TEST_TMPDIR/port" || fail "the host listener did not start"
        local port
        port=$(cat "$BATS_TEST_TMPDIR/port")
        px_session --allow-host 192.0.2.0/24 --allow-host "$px_ip"
        cat >"$BATS_TEST_TMPDIR/ask.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % sys.argv[1].encode())
got = b""
try:
    while True:
        c = s.recv(4096)
        if not c:
            break
        got += c
        if b"\r\n\r\n" in got:
            s.sendall(b"ping")
except OSError:
    pass
print(got.decode(errors="replace").replace("\r", ""))
PY
        put_script ask.py <"$BATS_TEST_TMPDIR/ask.py"
        in_sbx 'python3 /tmp/ask.py "$1"' "$ip:$port"
        [ "${lines[0]}" = "HTTP/1.1 403 Forbidden" ] || fail "CONNECT to the host: $output"
        grep -qF "'$ip' is $ip, an address of this host" <<<"$output"
        grep -qF -- "--allow-host $ip." <<<"$output"
        # plain HTTP too
        http_code "http://$ip:$port/"
        [ "${lines[0]}" = 403 ]
        # the test network's own host end (10.x, opened by its /24 rule) is the host's too
        sbx_ok destroy "$sid"
        px_session --allow-host "${px_ip%.*}.0/24"
        connect_code "$px_host_ip:$port"
        [ "$output" = 403 ]
        sleep 0.5
        [ ! -s "$BATS_TEST_TMPDIR/listener.log" ] ||
                fail "the host's service was reached: $(cat "$BATS_TEST_TMPDIR/listener.log")"
        # an address the host answers for without having it on an interface (a local route):
        # the check after connecting sees the connection loop back and closes it unused
        local anyip=203.0.113.$(($$ % 200 + 20))
        ip route add local "$anyip/32" dev lo && local_route=$anyip ||
                fail "cannot add a local route for $anyip"
        sbx_ok destroy "$sid"
        px_session --allow-host 203.0.113.0/24
        put_script ask.py <"$BATS_TEST_TMPDIR/ask.py"
        in_sbx 'python3 /tmp/ask.py "$1"' "$anyip:$port"
        [ "${lines[0]}" = "HTTP/1.1 403 Forbidden" ] || fail "CONNECT to a local route: $output"
        grep -qF "'$anyip' is $anyip, an address of this host" <<<"$output"
        sleep 0.5
        ! grep -q 'got [1-9]' "$BATS_TEST_TMPDIR/listener.log" ||
                fail "bytes reached the host's service: $(cat "$BATS_TEST_TMPDIR/listener.log")"
        # (the connection was made, so it was the check after connecting that refused it)
        grep -qx accepted "$BATS_TEST_TMPDIR/listener.log"
        # allowed literally, the same address is reached: the refusals above were the proxy's
        : >"$BATS_TEST_TMPDIR/listener.log"
        sbx_ok destroy "$sid"
        px_session --allow-host "$ip:$port"
        put_script ask.py <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % sys.argv[1].encode())
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(1)
s.sendall(b"ping")
print(got.split(b"\r\n")[0].decode(), s.recv(100).decode())
PY
        in_sbx 'python3 /tmp/ask.py "$1"' "$ip:$port"
        [ "$output" = "HTTP/1.1 200 Connection established host service: ping" ]
        grep -qx accepted "$BATS_TEST_TMPDIR/listener.log"
}

@test "a flood of denied requests leaves a bounded audit log that counts what it left out" {
        px_session --allow-host web.sbx.test
        put_script flood.py <<'PY'
import socket, time
n, end = 0, time.time() + 3
while time.time() < end:
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(b"CONNECT other.sbx.test:443 HTTP/1.1\r\n\r\n")
    s.recv(100)
    s.close()
    n += 1
print(n)
PY
        in_sbx 'python3 /tmp/flood.py'
        sent=$output
        [ "$sent" -gt 1000 ] || skip "only $sent requests in 3 s: too slow a machine to flood"
        wait_until 5 net_logged_all || fail "net + net_dropped counts do not add up to $sent"
        local net
        net=$(jq '[.[] | select(.event == "net")] | length' <<<"$output")
        # 100 a second at most: the 3 s of the flood span at most 4 of the proxy's seconds
        [ "$net" -le 400 ] || fail "$net net records for a 3 s flood"
        [ "$net" -ge 100 ]
        output=$(jq -c '.[] | select(.event == "net_dropped")' <<<"$output")
        [ "$(grep -c . <<<"$output")" -le 6 ] || fail "too many net_dropped records: $output"
        output=$(head -n1 <<<"$output")
        json '.count > 0 and (.reason | contains("a second"))' >/dev/null
}

# net_logged_all: the session's net records and the counts of its net_dropped ones add up
# to $sent.
net_logged_all() {
        sbx_ok log --json "$sid" || return 1
        local net dropped
        net=$(jq '[.[] | select(.event == "net")] | length' <<<"$output")
        dropped=$(jq '[.[] | select(.event == "net_dropped") | .count] | add // 0' <<<"$output")
        [ $((net + dropped)) -eq "$sent" ]
}

@test "a forwarded request is exactly one request: pipelined bytes never reach the upstream" {
        # the echo service as the upstream: what comes back is what the proxy sent it
        px_session --allow-host web.sbx.test:7 --allow-host "$px_ip:7"
        put_script smuggle.py <<'PY'
import socket
def ask(data, timeout=2):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=timeout)
    s.sendall(data)
    got = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            got += c
    except socket.timeout:
        pass
    return got
print(repr(ask(b"POST http://web.sbx.test:7/first HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
               b"GET http://web.sbx.test:7/second HTTP/1.1\r\n\r\n")))
print(repr(ask(b"GET http://web.sbx.test:7/first HTTP/1.1\r\n\r\nGET /second HTTP/1.1\r\n\r\n")))
for head in [b"POST http://web.sbx.test:7/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             b"GET http://web.sbx.test:7/ HTTP/1.1\r\nX: a\nGET /second HTTP/1.1\r\n\r\n",
             b"GET http://web.sbx.test:7/ HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello",
             b"GET http://web.sbx.test:7/ HTTP/1.1\r\nX: a\r\n Content-Length: 5\r\n\r\nhello"]:
    print(ask(head).split(b"\r\n")[0].decode())
PY
        in_sbx 'python3 /tmp/smuggle.py'
        [ "${lines[0]}" = "b'POST /first HTTP/1.1\\r\\nHost: web.sbx.test:7\\r\\nContent-Length: 5\\r\\nConnection: close\\r\\n\\r\\nhello'" ] ||
                fail "the upstream got: ${lines[0]}"
        [ "${lines[1]}" = "b'GET /first HTTP/1.1\\r\\nHost: web.sbx.test:7\\r\\nConnection: close\\r\\n\\r\\n'" ] ||
                fail "the upstream got: ${lines[1]}"
        [ "${lines[2]}" = "HTTP/1.1 411 Length Required" ]
        [ "${lines[3]}" = "HTTP/1.1 400 Bad Request" ]
        [ "${lines[4]}" = "HTTP/1.1 400 Bad Request" ]
        [ "${lines[5]}" = "HTTP/1.1 400 Bad Request" ]
        ! grep -q second <<<"$output"
}

@test "a body sent together with its head is forwarded whole, not refused as a large head" {
        px_session --allow-host web.sbx.test:7 --allow-host "$px_ip:7"
        put_script post.py <<'PY'
import socket
body = b"x" * 200000
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"POST http://web.sbx.test:7/big HTTP/1.1\r\nContent-Length: 200000\r\n\r\n" + body)
got = b""
while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < len(body):
    c = s.recv(65536)
    if not c:
        break
    got += c
head, rest = got.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode(), rest == body)
PY
        in_sbx 'python3 /tmp/post.py'
        [ "$output" = "POST /big HTTP/1.1 True" ]
}

# proxy_pid: the sbx-proxy process of $sid (the one holding its audit log) in $output.
proxy_pid() {
        local p
        for p in $(pgrep -x sbx-proxy); do
                if ls -l "/proc/$p/fd" 2>/dev/null | grep -qF "/$sid/audit.jsonl"; then
                        output=$p
                        return 0
                fi
        done
        return 1
}

# cpu_ticks PID: user + system time of PID in clock ticks.
cpu_ticks() {
        awk '{ print $14 + $15 }' "/proc/$1/stat"
}

@test "out of file descriptors, the proxy waits instead of spinning, and serves again after" {
        px_session --allow-host web.sbx.test --allow-host "$px_ip"
        proxy_pid || fail "no sbx-proxy process holds $sid's audit log"
        local pid=$output
        # room for about 20 connections: the rest wait in the backlog, accept4 fails EMFILE
        local top
        top=$(ls "/proc/$pid/fd" | sort -n | tail -n1)
        # as the proxy's own user: root here may lack CAP_SYS_RESOURCE, which another
        # user's limits need
        local uid
        uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
        setpriv --reuid="$uid" --regid="$uid" --clear-groups \
                prlimit --pid "$pid" --nofile=$((top + 1)):$((top + 1)) ||
                fail "cannot lower the proxy's RLIMIT_NOFILE"
        put_script hold.py <<'PY'
import socket, time
conns = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(40)]
print("holding", len(conns), flush=True)
time.sleep(4)
PY
        "$SBX" exec "$sid" python3 /tmp/hold.py >"$BATS_TEST_TMPDIR/hold.out" 2>&1 &
        local holder=$!
        wait_until 10 grep -q holding "$BATS_TEST_TMPDIR/hold.out" || fail "holder: $(cat "$BATS_TEST_TMPDIR/hold.out")"
        sleep 0.5
        local t0 t1
        t0=$(cpu_ticks "$pid")
        sleep 2
        t1=$(cpu_ticks "$pid")
        # a spinning loop burns ~200 ticks in 2 s; resting 100 ms at a time, a few
        [ $((t1 - t0)) -le 20 ] || fail "the proxy used $((t1 - t0)) ticks in 2 s at EMFILE"
        wait "$holder"
        # the held connections closed: the proxy accepts and serves again
        in_sbx 'curl -sS --fail --max-time 10 http://web.sbx.test/hello.txt'
        [ "$output" = "hello from the test host" ]
}
