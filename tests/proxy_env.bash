# The test hosts of the proxy tests (tests/600-proxy.bats) and bench (bench/proxy.sh): a
# network namespace joined to the host by a veth pair, with the servers of
# tests/proxy_servers.py at its address, and host names for them in a private hosts file
# that only processes started through in_test_hosts see (the host's /etc/hosts is never
# edited). Needs root, iproute2, openssl, python3.
#
#   proxy_env_up DIR     make everything, files under DIR; sets and exports the names below
#   proxy_env_down       remove it all again
#   in_test_hosts CMD... run CMD in a new mount namespace where /etc/hosts is the test's
#
# Exports: px_ns (namespace), px_host_ip (the host's end), px_ip (the servers' address),
# px_hosts (the hosts file), px_root (the servers' files), px_cert (their certificate).

px_subnet=${px_subnet:-10.231.7}

proxy_env_up() {
        local dir=$1
        px_ns=sbxpx-$$
        px_host_ip=$px_subnet.1
        px_ip=$px_subnet.2
        px_root=$dir/www
        px_cert=$dir/cert.pem
        px_hosts=$dir/hosts
        px_veth=vsbxpx$$
        local veth=$px_veth
        mkdir -p "$px_root"
        # a killed run's network (its shell is gone) goes first: its veth dies with its namespace
        local stale
        for stale in $(ip netns list | awk '$1 ~ /^sbxpx-[0-9]+$/ { print $1 }'); do
                kill -0 "${stale#sbxpx-}" 2>/dev/null || ip netns del "$stale" 2>/dev/null || true
        done
        # another test network on the same subnet would take the traffic meant for this one
        if ip -o addr show | grep -qF " $px_host_ip/"; then
                echo "proxy_env_up: $px_host_ip is already in use here (a stale test network?)" >&2
                return 1
        fi
        # a fresh namespace: a stale one of a killed run is removed first
        ip netns del "$px_ns" 2>/dev/null || true
        ip netns add "$px_ns" &&
                ip link add "${veth}h" type veth peer name "${veth}n" &&
                ip link set "${veth}n" netns "$px_ns" &&
                ip addr add "$px_host_ip/24" dev "${veth}h" &&
                ip link set "${veth}h" up &&
                ip -n "$px_ns" addr add "$px_ip/24" dev "${veth}n" &&
                ip -n "$px_ns" link set "${veth}n" up &&
                ip -n "$px_ns" link set lo up || return 1
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=web.sbx.test \
                -addext "subjectAltName=DNS:web.sbx.test,DNS:pypi.sbx.test" \
                -keyout "$dir/key.pem" -out "$px_cert" >/dev/null 2>&1 || return 1
        echo "hello from the test host" >"$px_root/hello.txt"
        head -c 1048576 /dev/urandom >"$px_root/1m.bin"
        cat >"$px_hosts" <<EOF
127.0.0.1 localhost
$px_ip web.sbx.test pypi.sbx.test other.sbx.test cdn.sbx.test a.cdn.sbx.test b.a.cdn.sbx.test
127.0.0.1 loop.sbx.test
169.254.169.254 meta.sbx.test
127.0.0.1 dual.sbx.test
$px_ip dual.sbx.test
EOF
        chmod 0644 "$px_hosts"
        ip netns exec "$px_ns" python3 "$SBX_SRC/tests/proxy_servers.py" "$px_root" "$px_cert" \
                "$dir/key.pem" >"$dir/servers.log" 2>&1 &
        px_servers_pid=$!
        local i
        for i in $(seq 100); do
                grep -q ready "$dir/servers.log" && break
                sleep 0.1
        done
        grep -q ready "$dir/servers.log" || {
                cat "$dir/servers.log" >&2
                return 1
        }
        export px_ns px_veth px_host_ip px_ip px_root px_cert px_hosts px_servers_pid
}

proxy_env_down() {
        [ -n "${px_servers_pid:-}" ] && kill "$px_servers_pid" 2>/dev/null
        [ -n "${px_ns:-}" ] && ip netns del "$px_ns" 2>/dev/null
        [ -n "${px_veth:-}" ] && ip link del "${px_veth}h" 2>/dev/null
        return 0
}

in_test_hosts() {
        unshare -m --propagation private -- sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
                "$px_hosts" "$@"
}
