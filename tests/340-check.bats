#!/usr/bin/env bats
# `sbx check`: one row per feature, in the table and in --json, each answer tried for real and
# compared here with what other tools (unshare, mount, /proc/self/cgroup) find on this host;
# exit 0 exactly when every feature a default create needs is there, else 4.

load helpers
setup_file() { [ "$(id -u)" -ne 0 ] || setup_users; }
teardown_file() { teardown_users; }
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# The rows every host has (seccomp-arch-* follow, one per syscall ABI of the architecture).
rows=(userns session seccomp-default seccomp-strict overlayfs-userns openat2 pidfd
        idmapped-mounts cgroup-memory cgroup-pids cgroup-cpu cgroup-kill)

# The ABI rows for this machine's architecture.
arch_rows() {
        case $(uname -m) in
        x86_64) echo seccomp-arch-x86_64 seccomp-arch-x86 seccomp-arch-x32 ;;
        aarch64) echo seccomp-arch-aarch64 ;;
        *) echo seccomp-arch-native ;;
        esac
}

# row NAME: the JSON object of row NAME in $output.
row() {
        jq -e -c --arg n "$1" '.features[] | select(.name == $n)' <<<"$output"
}

# avail NAME: "true"/"false" of row NAME in $output.
avail() {
        jq -e -r --arg n "$1" '.features[] | select(.name == $n) | .available' <<<"$output"
}

@test "every feature has one row, the same in the table and in --json" {
        sbx_ok check --json
        json_doc
        local json=$output want name
        local -a names
        mapfile -t names < <(jq -r '.features[].name' <<<"$json")
        for want in "${rows[@]}" $(arch_rows); do
                [ "$(printf '%s\n' "${names[@]}" | grep -cxF -- "$want")" = 1 ] ||
                        fail "row $want: not exactly once in ${names[*]}"
        done
        jq -e '.features | all(has("name") and (.available | type == "boolean") and
                (.required | type == "boolean") and (.detail | type == "string" and length > 0))' \
                <<<"$json" >/dev/null || fail "$json"
        # the table: NAME yes|MISSING DETAIL, one a line, the same rows in the same order,
        # then the verdict line
        sbx_ok check
        [ "${#lines[@]}" = $((${#names[@]} + 1)) ] || fail "${#lines[@]} lines for ${#names[@]} rows: $output"
        [ "${lines[-1]}" = "verdict: $(jq -r .verdict <<<"$json")" ] || fail "last line: ${lines[-1]}"
        local i word
        for i in "${!names[@]}"; do
                read -r name word _ <<<"${lines[$i]}"
                [ "$name" = "${names[$i]}" ] || fail "line $i is $name, JSON has ${names[$i]}"
                if jq -e --arg n "$name" '.features[] | select(.name == $n) | .available' \
                        <<<"$json" >/dev/null; then
                        [ "$word" = yes ] || fail "$name: '$word' in the table, available in JSON"
                else
                        [ "$word" = MISSING ] || fail "$name: '$word' in the table, missing in JSON"
                fi
        done
}

@test "the exit status and \"ok\" say whether every required feature is there" {
        sbx_try check --json
        local ok
        ok=$(jq -r '[.features[] | select(.required and (.available | not))] | length == 0' <<<"$output")
        [ "$(json .ok)" = "$ok" ] || fail "ok $(json .ok), computed $ok: $output"
        if [ "$ok" = true ]; then [ "$status" = 0 ]; else [ "$status" = 4 ]; fi ||
                fail "exit $status with ok $ok"
}

@test "as root here: every feature is available, and each agrees with the host's own tools" {
        [ "$(id -u)" -eq 0 ] || skip "root only (the unprivileged answers are tested below)"
        sbx_ok check --json
        local r
        for r in "${rows[@]}" $(arch_rows); do
                [ "$(avail "$r")" = true ] || fail "$r: $(row "$r")"
        done
        [ "$(json .ok)" = true ]
        # userns and overlayfs in one: what unshare(1) and mount(8) do
        _expect 0 unshare -Urm sh -c 'mount -t tmpfs x /tmp && mkdir /tmp/u /tmp/w /tmp/m &&
                mount -t overlay -o lowerdir=/usr,upperdir=/tmp/u,workdir=/tmp/w,userxattr o /tmp/m'
        # whatever the kernel does with the compat ABIs (here x86 runs, x32 is off as Debian
        # builds it), under the filter they are refused, and native calls are filtered
        if [ "$(uname -m)" = x86_64 ]; then
                sbx_ok check --json
                echo "# x86: $(row seccomp-arch-x86 | jq -r .detail)" >&3
                echo "# x32: $(row seccomp-arch-x32 | jq -r .detail)" >&3
                [[ $(row seccomp-arch-x86 | jq -r .detail) == *"the kernel "*"refused"* ]] ||
                        fail "$(row seccomp-arch-x86)"
                [[ $(row seccomp-arch-x32 | jq -r .detail) == *"refused"* ]] ||
                        fail "$(row seccomp-arch-x32)"
                [[ $(row seccomp-arch-x86_64 | jq -r .detail) == *"filtered"* ]] ||
                        fail "$(row seccomp-arch-x86_64)"
        fi
}

# mount_of TYPE OPTION: the first mount point of file system TYPE whose super options hold
# OPTION (any when empty), from /proc/self/mountinfo (the fields after the " - " separator).
mount_of() {
        awk -v t="$1" -v o="$2" '{
                for (i = 7; i <= NF && $i != "-"; i++) ;
                if ($(i + 1) == t && (o == "" || ("," $(i + 3) ",") ~ ("," o ","))) { print $5; exit }
        }' /proc/self/mountinfo
}

@test "cgroup rows: the hierarchy and path that /proc/self/cgroup and mountinfo give" {
        sbx_ok check --json
        local k line rel mnt want_path want_h
        for k in memory pids cpu; do
                line=$(grep -E "^[0-9]+:([^:]*,)?$k(,[^:]*)?:" /proc/self/cgroup || true)
                if [ -n "$line" ]; then
                        rel=${line##*:}
                        mnt=$(mount_of cgroup "$k")
                        want_h=v1 want_path=$mnt${rel%/}
                        [ "$rel" != / ] || want_path=$mnt
                else
                        rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
                        mnt=$(mount_of cgroup2 "")
                        want_h=v2 want_path=$mnt${rel%/}
                        [ "$rel" != / ] || want_path=$mnt
                fi
                row "cgroup-$k" | jq -e --arg h "$want_h" --arg p "$want_path" \
                        '.hierarchy == $h and .path == $p' >/dev/null ||
                        fail "cgroup-$k: want $want_h $want_path: $(row "cgroup-$k")"
                [ -d "$want_path" ] || fail "$want_path is not a directory"
        done
        # the cgroup.kill probe leaves no cgroup of its own behind
        [ -z "$(find /sys/fs/cgroup -maxdepth 3 -name 'sbx-check.*' 2>/dev/null)" ]
}

@test "required follows what a default create would ask: unlimited, read-only, unconfined" {
        _expect any env SBX_MEMORY=unlimited SBX_PIDS=unlimited SBX_CPUS=unlimited \
                SBX_READ_ONLY=true SBX_SECCOMP=unconfined "$SBX" check --json
        local r
        for r in cgroup-memory cgroup-pids cgroup-cpu overlayfs-userns seccomp-default $(arch_rows); do
                row "$r" | jq -e '.required == false' >/dev/null || fail "$r: $(row "$r")"
        done
        row userns | jq -e '.required' >/dev/null
        row pidfd | jq -e '.required' >/dev/null
        sbx_try check --json
        for r in overlayfs-userns seccomp-default $(arch_rows); do
                row "$r" | jq -e '.required' >/dev/null || fail "$r: $(row "$r")"
        done
        # a built-in default limit is one a default create may go without (it warns) ...
        for r in cgroup-memory cgroup-pids cgroup-cpu; do
                row "$r" | jq -e '.required == false' >/dev/null || fail "$r: $(row "$r")"
        done
        # ... unless it was asked for, or [limits] strict
        _expect any env SBX_MEMORY=512M "$SBX" check --json
        row cgroup-memory | jq -e '.required' >/dev/null || fail "$(row cgroup-memory)"
        row cgroup-pids | jq -e '.required == false' >/dev/null || fail "$(row cgroup-pids)"
        _expect any env SBX_STRICT_LIMITS=true "$SBX" check --json
        for r in cgroup-memory cgroup-pids cgroup-cpu; do
                row "$r" | jq -e '.required' >/dev/null || fail "strict: $r: $(row "$r")"
        done
}

@test "a user: userns and overlayfs yes, idmapped mounts missing (optional, says why)" {
        [ "$(id -u)" -eq 0 ] || skip "needs root to switch to the test user"
        setup_sbx_user
        as_user unshare -U true 2>/dev/null || skip "no unprivileged user namespaces here"
        _try runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/ \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" check --json
        json_doc
        [ "$(avail userns)" = true ] && [ "$(avail overlayfs-userns)" = true ] &&
                [ "$(avail pidfd)" = true ] || fail "$output"
        row idmapped-mounts | jq -e '.available == false and .required == false and
                (.detail | test("not permitted.*CAP_SYS_ADMIN"))' >/dev/null ||
                fail "$(row idmapped-mounts)"
        # the table shows it as optional
        _try runuser -u "$test_user" -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/ \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" check
        [[ $(grep '^idmapped-mounts ' <<<"$output") == *"MISSING"*"(optional"* ]] || fail "$output"
}

@test "check is quick: well under a second (about 20 ms here)" {
        local t0 t1
        t0=$(date +%s%N)
        sbx_try check
        t1=$(date +%s%N)
        echo "# sbx check took $(((t1 - t0) / 1000000)) ms" >&3
        [ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "took $(((t1 - t0) / 1000000)) ms"
}

@test "man/sbx.1.scd names every row" {
        local r
        for r in "${rows[@]}" seccomp-arch-; do
                grep -q -- "$r" "$SBX_SRC/man/sbx.1.scd" || fail "the man page does not name $r"
        done
}

@test "--config FILE decides what is required too; a bad config is exit 2" {
        printf '[limits]\nmemory = unlimited\n' >"$BATS_TEST_TMPDIR/sandbox.ini"
        sbx_try check --json --config "$BATS_TEST_TMPDIR/sandbox.ini"
        row cgroup-memory | jq -e '.required == false' >/dev/null || fail "$(row cgroup-memory)"
        printf '[limits]\npids = 256\n' >"$BATS_TEST_TMPDIR/pids.ini"
        sbx_try check --json --config "$BATS_TEST_TMPDIR/pids.ini"
        row cgroup-pids | jq -e '.required' >/dev/null || fail "$(row cgroup-pids)"
        printf '[limits]\nmemory = lots\n' >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 check --config "$BATS_TEST_TMPDIR/bad.ini"
        [[ $stderr == *bad.ini* ]] || fail "$stderr"
        sbx_expect 2 check --json --config "$BATS_TEST_TMPDIR/bad.ini"
        json '.error.code == "usage"' >/dev/null || fail "$output"
}
