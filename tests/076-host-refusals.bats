#!/usr/bin/env bats
# Each way a host refuses a session, provoked for real where this host can: create and run
# exit 4 with one line naming the cause and the fix, and `sbx check` says the same in its
# session row and its verdict. Each case has its positive control: the same setting without
# the refusal makes a session.

load helpers

# setup_sbx unsets the SBX_* variables: keep the test program's path.
outer_seccomp=${SBX_OUTER_SECCOMP:-}
no_clone3=${SBX_NO_CLONE3:-}

setup_file() { [ "$(id -u)" -ne 0 ] || setup_users; }
teardown_file() { teardown_users; }
setup() {
        [ "$(id -u)" -eq 0 ] || skip "needs root to make the refusing namespaces"
        setup_sbx
}
teardown() { teardown_sbx; }

# in_userns CODE CMD...: CMD as root of a new user namespace that maps host ids 0-199999 and
# the pool root-run sessions take their uid ranges from (0x40000000-0x6fffffff) to themselves
# ($userns_map, when set, instead), exit status asserted. The maps are written from outside,
# as a container runtime does, so setgroups stays allowed.
in_userns() {
        local want=$1
        shift
        export USERNS_MAP=${userns_map:-$'0 0 200000\n1073741824 1073741824 805306368'}
        _expect "$want" bash -c '
                unshare -U sh -c "while [ -z \"\$(cat /proc/self/uid_map)\" ]; do sleep 0.02; done; exec \"\$@\"" _ "$@" &
                pid=$!
                me=$(readlink /proc/self/ns/user)
                for i in $(seq 250); do
                        [ "$(readlink /proc/$pid/ns/user)" != "$me" ] && break
                        sleep 0.02
                done
                # one write() each (a map takes one; bash writes a line at a time)
                cat <<<"$USERNS_MAP" >/proc/$pid/uid_map &&
                        cat <<<"$USERNS_MAP" >/proc/$pid/gid_map
                wait $pid' _ "$@"
}

# one_line_refusal CAUSE-GLOB FIX-GLOB: stderr is exactly one line naming both.
one_line_refusal() {
        [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || fail "not one line: $stderr"
        [[ $stderr == "sbx: cannot create a session here: "$1"; fix: "$2 ]] || fail "stderr: $stderr"
}

@test "positive control: nested in a user namespace, sbx run and create work" {
        in_userns 0 sh -c '"$0" run -- echo nested && id=$("$0" create) && "$0" exec "$id" echo inner && "$0" destroy "$id"' "$SBX"
        [ "$output" = "$(printf 'nested\ninner')" ] || fail "$output $stderr"
}

@test "a user namespace without the ids of the uid range pool: exit 4 naming it, nothing left" {
        userns_map='0 0 200000' in_userns 4 sh -c '"$0" create' "$SBX"
        [ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ] || fail "not one line: $stderr"
        [[ $stderr == "sbx: no host uid range for the session: this user namespace does not map the ids 1073741824 to 1879048191 "* ]] ||
                fail "stderr: $stderr"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" 2>/dev/null | grep '^sb_')" ] || fail "a session dir is left"
}

@test "user.max_user_namespaces = 0: create, run and check name it and the sysctl that fixes it" {
        local zero='echo 0 >/proc/sys/user/max_user_namespaces &&'
        in_userns 4 sh -c "$zero \"\$0\" create" "$SBX"
        one_line_refusal "user namespaces are disabled: user.max_user_namespaces is 0" \
                "sysctl -w user.max_user_namespaces=15000 *"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" 2>/dev/null | grep '^sb_')" ] || fail "a session dir is left"
        in_userns 4 sh -c "$zero \"\$0\" run -- true" "$SBX"
        one_line_refusal "user namespaces are disabled: user.max_user_namespaces is 0" "sysctl -w *"
        in_userns 4 sh -c "$zero \"\$0\" check --json" "$SBX"
        jq -e '(.ok | not) and (.verdict | contains("user.max_user_namespaces is 0; fix: sysctl -w"))
                and ([.features[] | select(.name == "session")][0].detail
                | startswith("cannot create a session here: user namespaces are disabled"))' \
                <<<"$output" >/dev/null || fail "check: $output"
        # the table's last line is the same verdict
        in_userns 4 sh -c "$zero \"\$0\" check" "$SBX"
        [[ ${lines[-1]} == "verdict: no sessions for uid 0 here: cannot create a session here: user namespaces are disabled"* ]] ||
                fail "verdict line: ${lines[-1]}"
}

@test "an outer seccomp filter refusing unshare/clone: named, with the container flag that fixes it" {
        [ -x "$outer_seccomp" ] && [ -x "$no_clone3" ] || fail "the test programs are not built"
        _expect 4 "$outer_seccomp" "$SBX" run -- true
        one_line_refusal "a seccomp filter around sbx (a container's profile) refuses unshare(CLONE_NEWUSER)" \
                "run the container with --security-opt seccomp=unconfined *"
        _expect 4 "$outer_seccomp" "$SBX" create
        one_line_refusal "a seccomp filter around sbx*" "*seccomp=unconfined*"
        _expect 4 "$outer_seccomp" "$SBX" check
        [[ ${lines[-1]} == "verdict: no sessions for uid 0 here: cannot create a session here: a seccomp filter"* ]] ||
                fail "verdict: ${lines[-1]}"
        # positive control: a filter that only takes clone3 away (and sets no_new_privs) refuses
        # nothing
        _expect 0 "$no_clone3" "$SBX" run -- echo fine
        [ "$output" = fine ] || fail "$output"
}

@test "a masked /proc (a tmpfs over /proc/sys): the kernel mounts no new proc; named with the fix" {
        _expect 4 unshare -m sh -c 'mount -t tmpfs masked /proc/sys && exec "$0" run -- true' "$SBX"
        one_line_refusal "the kernel will not mount a new /proc here: this /proc is masked or read-only*" \
                "run the container with an unmasked /proc (podman run --security-opt unmask=ALL*"
        _expect 4 unshare -m sh -c 'mount -t tmpfs masked /proc/sys && exec "$0" create' "$SBX"
        one_line_refusal "the kernel will not mount a new /proc here*" "*unmask=ALL*"
        # positive control: the same mount namespace with a mount on an empty /proc directory
        # (what the kernel allows) makes sessions
        _expect 0 unshare -m sh -c 'exec "$0" run -- echo fine' "$SBX"
        [ "$output" = fine ] || fail "$output"
}

@test "a read-only /proc: named with the fix" {
        _expect 4 unshare -m sh -c 'mount -o remount,bind,ro /proc && exec "$0" run -- true' "$SBX"
        one_line_refusal "/proc is read-only here*" "a read-write /proc*"
}

@test "a user namespace that denies setgroups (unshare -r): named with the fix" {
        _expect 4 unshare -Ur "$SBX" run -- true
        one_line_refusal "this user namespace denies setgroups*" "run sbx as a non-root user here*"
}

@test "no_new_privs already set is no refusal: sessions work under setpriv --no-new-privs" {
        _expect 0 setpriv --no-new-privs "$SBX" run -- sh -c 'grep NoNewPrivs /proc/self/status'
        [[ $output == *"NoNewPrivs:"*1 ]] || fail "$output"
}

@test "an unprivileged user under the outer seccomp filter: the same one line, exit 4" {
        setup_sbx_user
        [ -x "$outer_seccomp" ] || fail "the test program is not built"
        cp "$outer_seccomp" "$users_base/bin/outer-seccomp"
        chmod 0755 "$users_base/bin/outer-seccomp"
        _expect 4 runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
                HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" \
                "$users_base/bin/outer-seccomp" "$user_sbx" run -- true
        one_line_refusal "a seccomp filter around sbx (a container's profile) refuses unshare(CLONE_NEWUSER)" \
                "run the container with --security-opt seccomp=unconfined *"
        # positive control: the same user without the filter makes a session
        user_sbx_expect 0 run -- echo fine
        [ "$output" = fine ] || fail "$output"
}
