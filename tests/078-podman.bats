#!/usr/bin/env bats
# sbx inside a real container runtime (podman, as root): in a default container it refuses
# with one line naming the cause and the fix; in a container given what it needs
# (--security-opt unmask=/proc/* --security-opt seccomp=unconfined, nothing more: no added
# capability, no --privileged) its sessions work, nested in the container's namespaces.
#
# The container's root is a directory holding the host's /usr read-only (no registry is
# needed); the sbx binary under test is bind-mounted at /sbx. On a hybrid cgroup host crun
# refuses to start unless an empty tmpfs hides the cgroup2 mount (/sys/fs/cgroup/unified) in
# podman's mount namespace, and podman runs with --cgroups=disabled.

load helpers

setup() {
        [ "$(id -u)" -eq 0 ] || skip "podman runs as root here"
        command -v podman >/dev/null || fail "podman is not installed (scripts/bootstrap installs it)"
        setup_sbx
        rootfs=$BATS_TEST_TMPDIR/rootfs
        mkdir -p "$rootfs"/{usr,etc,tmp,proc,sys,dev,run,var,root}
        local l
        for l in bin lib lib64 sbin; do
                ln -s "usr/$l" "$rootfs/$l"
        done
        echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
        echo 'root:x:0:' >"$rootfs/etc/group"
        chmod 1777 "$rootfs/tmp"
        cname=sbx-test-$$-$BATS_TEST_NUMBER
}

teardown() {
        podman rm -f "$cname" >/dev/null 2>&1 || true
        teardown_sbx
}

# in_podman CODE [PODMAN-OPTION...] -- CMD...: CMD in a new container, exit status asserted.
in_podman() {
        local want=$1 opts=()
        shift
        while [ "$1" != -- ]; do
                opts+=("$1")
                shift
        done
        shift
        local hide=:
        if grep -q ' /sys/fs/cgroup/unified cgroup2 ' /proc/self/mounts; then
                hide='mount -t tmpfs hide-cgroup2 /sys/fs/cgroup/unified'
        fi
        # the runtime's own rlimits stay those of this shell (raising them needs
        # CAP_SYS_RESOURCE, which root here lacks)
        _expect "$want" unshare -m sh -c "$hide"' && exec "$@"' _ \
                podman run --rm --name "$cname" --cgroups=disabled \
                --ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=1024:1024" \
                -v /usr:/usr:ro -v "$SBX:/sbx:ro" -e SBX_RUNTIME_DIR=/tmp/rt \
                "${opts[@]}" --rootfs "$rootfs" "$@"
}

needs=(--security-opt 'unmask=/proc/*' --security-opt seccomp=unconfined)

@test "podman, a default container: exit 4 and one line naming its seccomp profile and masked /proc" {
        in_podman 0 -- /bin/sh -c '/sbx run -- true; echo "rc=$?"'
        [ "${lines[-1]}" = rc=4 ] || fail "$output $stderr"
        [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || fail "not one line: $stderr"
        # both refusals of a default container in the one line, each with its fix
        [[ $stderr == "sbx: cannot create a session here: a seccomp filter around sbx"*"; fix: run the container with --security-opt seccomp=unconfined"*"; also the kernel will not mount a new /proc here: this /proc is masked or read-only"*"; fix: run the container with an unmasked /proc (podman run --security-opt unmask=ALL"* ]] ||
                fail "stderr: $stderr"
        in_podman 0 -- /bin/sh -c '/sbx check; echo "rc=$?"'
        [ "${lines[-1]}" = rc=4 ] || fail "$output"
        [[ ${lines[-2]} == "verdict: no sessions for uid 0 here: cannot create a session here: a seccomp filter around sbx"*"; also the kernel will not mount a new /proc"* ]] ||
                fail "verdict: ${lines[-2]}"
}

@test "podman with an unmasked /proc only: the container's seccomp profile is named, with the flag" {
        in_podman 0 --security-opt 'unmask=/proc/*' -- /bin/sh -c '/sbx run -- true; echo "rc=$?"'
        [ "${lines[-1]}" = rc=4 ] || fail "$output $stderr"
        [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || fail "not one line: $stderr"
        [[ $stderr == "sbx: cannot create a session here: a seccomp filter around sbx"*"; fix: run the container with --security-opt seccomp=unconfined"* ]] ||
                fail "stderr: $stderr"
        [[ $stderr != *"/proc"* ]] || fail "the unmasked /proc is still named: $stderr"
}

@test "podman given unmask=/proc/* and seccomp=unconfined: sessions work, isolated, nested" {
        # positive control of the container itself: it runs and its /proc is its own
        in_podman 0 "${needs[@]}" -- /bin/sh -c 'echo in-container; ls /proc | grep -c "^[0-9]"'
        [ "${lines[0]}" = in-container ] || fail "$output $stderr"
        in_podman 0 "${needs[@]}" -- /bin/sh -c '
                set -e
                /sbx run -- sh -c "echo \$(id -u) \$(hostname)"
                id=$(/sbx create --name nested)
                /sbx exec nested sh -c "echo two > /workspace/f; cat /workspace/f"
                # the session sees only its own processes, and its own uid map
                /sbx exec nested sh -c "cat /proc/1/comm /proc/self/uid_map"
                /sbx list --json
                /sbx destroy nested
                /sbx list -q | wc -l'
        [ "${lines[0]}" = "0 sandbox" ] || fail "run: $output $stderr"
        [ "${lines[1]}" = two ] || fail "exec: $output"
        # its pid 1 is its own init, not the container's shell
        [ "${lines[2]}" = sbx-init ] || fail "the session's pid 1: ${lines[2]}"
        # root in the container maps the session to its own uid range (not 0 of the container)
        read -r inner outer _ <<<"${lines[3]}"
        [ "$inner" = 0 ] && [ "$outer" != 0 ] || fail "uid map: ${lines[3]}"
        # no writable cgroup in the container: the default limits are reported as not in force
        jq -e '.[0].limits.memory_bytes == {"value":536870912,"enforced":false,"enforced_by":null}' \
                <<<"${lines[4]}" >/dev/null || fail "list: ${lines[4]}"
        [ "${lines[5]}" = 0 ] || fail "sessions left: ${lines[5]}"
        [[ $stderr == *"sbx: warning: default limits not enforced: memory 512M, pids 256, cpus 1"* ]] ||
                fail "no warning: $stderr"
        # nothing of the container is left on the host
        ! podman container exists "$cname" || fail "the container is left"
}
