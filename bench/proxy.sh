#!/bin/bash
# SPDX-License-Identifier: MIT
# The egress proxy (issue 7) against the same traffic without it, to the test hosts of
# tests/proxy_env.bash (a netns behind a veth pair, python servers):
#   throughput   a 100 MB download with curl: inside a --net proxy session (through the
#                proxy) vs on the host (direct), and vs a --net host session (the same
#                sandbox, no proxy); median of RUNS, the three interleaved (target: within
#                10% of the host)
#   latency      per request, new connection each time (connect, GET of a 25-byte file,
#                read the response), same python client in the three places, median of 500
#                (target: < 1 ms added)
#   tunnel RTT   one 64-byte echo over an open CONNECT tunnel vs over a direct connection,
#                median of 2000
#
#   bench/proxy.sh [RUNS]     (default 15; root: it makes a network namespace)
#   SBX_BENCH_MB=1000 bench/proxy.sh    a larger download (default 100 MB)
#   SBX_BENCH_RATE=1gbit bench/proxy.sh  shape the test link (tc tbf on the servers' side of
#                the veth) to a real network's rate; unshaped, the link is memory speed and
#                both ends are CPU-bound, which measures the second TCP connection's CPU cost
#
# Writes bench/results/proxy.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ "$(id -u)" -eq 0 ] || {
        echo "bench/proxy.sh: run as root (it makes a network namespace and a veth pair)" >&2
        exit 1
}
runs=${1:-15}
sbx=$PWD/build/sbx
out=bench/results
mkdir -p "$out"
export SBX_SRC=$PWD SBX_RUNTIME_DIR
SBX_RUNTIME_DIR=$(mktemp -d /tmp/sbx-bench-rt.XXXXXX)
work=$(mktemp -d /tmp/sbx-bench-proxy.XXXXXX)
# a subnet of its own: the test suite's (10.231.7) may be up at the same time
export px_subnet=10.231.9
# shellcheck source=tests/proxy_env.bash
source tests/proxy_env.bash
sid='' hsid=''
cleanup() {
        [ -z "$sid" ] || "$sbx" destroy "$sid" >/dev/null 2>&1 || true
        [ -z "$hsid" ] || "$sbx" destroy "$hsid" >/dev/null 2>&1 || true
        proxy_env_down
        rm -rf "$work" "$SBX_RUNTIME_DIR"
}
trap cleanup EXIT
proxy_env_up "$work"
if [ -n "${SBX_BENCH_RATE:-}" ]; then
        ip netns exec "$px_ns" tc qdisc add dev "${px_veth}n" root tbf rate "$SBX_BENCH_RATE" \
                burst 1mb latency 50ms
fi
mb=${SBX_BENCH_MB:-100}
head -c $((mb * 1000000)) /dev/zero >"$px_root/big.bin"

sid=$(in_test_hosts "$sbx" create --allow-host web.sbx.test --allow-host web.sbx.test:7 \
        --allow-host "$px_ip" --ttl 30m)
hsid=$("$sbx" create --net host --ttl 30m 2>/dev/null)
in_sbx() { "$sbx" exec "$sid" "$@"; }
in_host_sbx() { "$sbx" exec "$hsid" "$@"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# curl's speed_download is bytes/s; the three kinds take turns, so load on this (shared)
# machine that comes and goes hits each of them alike
dl() { "$@" curl -sS -o /dev/null -w '%{speed_download}\n' "$url"; }
# one untimed round first: page cache, the sessions' first exec, TCP buffer autotuning
url=http://web.sbx.test/big.bin dl in_sbx >/dev/null
url=http://$px_ip/big.bin dl in_host_sbx >/dev/null
: >"$work/proxied" && : >"$work/direct" && : >"$work/hostsbx"
for i in $(seq "$runs"); do
        url=http://web.sbx.test/big.bin dl in_sbx >>"$work/proxied"
        url=http://$px_ip/big.bin dl env -- >>"$work/direct"
        url=http://$px_ip/big.bin dl in_host_sbx >>"$work/hostsbx"
done
mbs() { awk '{ printf "%d ", $1 / 1e6 }' "$1"; }
echo "each run, MB/s: proxy session: $(mbs "$work/proxied")| host: $(mbs "$work/direct")|" \
        "--net host session: $(mbs "$work/hostsbx")" >&2
proxied=$(median <"$work/proxied")
direct=$(median <"$work/direct")
hostsbx=$(median <"$work/hostsbx")

# latency: a python client, the same inside (through the proxy) and on the host (direct)
client='
import socket, sys, time
mode, host, ip, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def get():
    if mode == "proxy":
        s = socket.create_connection(("127.0.0.1", 3128))
        s.sendall(f"GET http://{host}/hello.txt HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    else:
        s = socket.create_connection((ip, 80))
        s.sendall(f"GET /hello.txt HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while b"hello from the test host" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
def rtt(s):
    s.sendall(b"x" * 64)
    got = 0
    while got < 64:
        got += len(s.recv(64 - got))
ts = []
for _ in range(n):
    t = time.perf_counter(); get(); ts.append(time.perf_counter() - t)
ts.sort()
print("get", ts[len(ts) // 2] * 1e3)
if mode == "proxy":
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(f"CONNECT {host}:7 HTTP/1.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
else:
    s = socket.create_connection((ip, 7))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
ts = []
for _ in range(n * 4):
    t = time.perf_counter(); rtt(s); ts.append(time.perf_counter() - t)
ts.sort()
print("rtt", ts[len(ts) // 2] * 1e3)
'
p_lat=$(in_sbx python3 -c "$client" proxy web.sbx.test "$px_ip" 500)
d_lat=$(python3 -c "$client" direct web.sbx.test "$px_ip" 500)
h_lat=$(in_host_sbx python3 -c "$client" direct web.sbx.test "$px_ip" 500)

# Python here, not awk: awk's printf cannot be trusted with locales, python's can.
python3 - "$proxied" "$direct" "$hostsbx" "$p_lat" "$d_lat" "$h_lat" "$runs" "$mb" \
        "${SBX_BENCH_RATE:-}" \
        >"$out/proxy.md" <<'EOF'
import sys
proxied, direct, hostsbx = (float(v) for v in sys.argv[1:4])
p, d, h = (dict(l.split() for l in v.splitlines()) for v in sys.argv[4:7])
runs, size = sys.argv[7], sys.argv[8]
rate = sys.argv[9] if len(sys.argv) > 9 and sys.argv[9] else "unshaped (memory speed)"
mb = lambda v: v / 1e6
pct = lambda a, b: f"{(a / b - 1) * 100:+.1f}%"
print("# Egress proxy: throughput and latency (bench/proxy.sh)\n")
print(f"Test link: {rate}.\n")
print("| measure | proxy session | host, direct | --net host session | proxy vs host | "
      "proxy vs --net host session |")
print("|---|---|---|---|---|---|")
print(f"| {size} MB download, MB/s (median of {runs}) | {mb(proxied):.0f} | {mb(direct):.0f} | "
      f"{mb(hostsbx):.0f} | {pct(proxied, direct)} | {pct(proxied, hostsbx)} |")
for key, what in (("get", "HTTP GET, new connection, ms (median of 500)"),
                  ("rtt", "64-byte echo on an open connection, ms (median of 2000)")):
    a, b, c = float(p[key]), float(d[key]), float(h[key])
    print(f"| {what} | {a:.3f} | {b:.3f} | {c:.3f} | {a - b:+.3f} ms | {a - c:+.3f} ms |")
EOF
cat "$out/proxy.md"
