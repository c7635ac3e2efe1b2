#!/usr/bin/env bats
# Default limits an unprivileged user's host cannot enforce: create goes without them, says so
# in one warning line, and the audit log, `list --json` and `check` agree on what holds. A
# limit that was asked for (flag, ini, SBX_*) or --strict-limits / [limits] strict still fails
# with exit 4. Root's sessions keep every limit.
#
# The user cases need a user with no writable cgroup: an unprivileged user on a hybrid or v1
# host (like CI's) without delegation. Where the user has one, they are skipped with that
# reason (the root cases and 320-limits.bats cover enforcement).

load helpers
setup_file() { setup_users; }
teardown_file() { teardown_users; }
setup() { setup_sbx && setup_sbx_user; }
teardown() { teardown_sbx; }

# u_expect CODE [VAR=VALUE...] -- ARGS...: sbx ARGS as $test_user with the built-in default
# limits (none of the "unlimited" variables the other user tests set), VARs added.
u_expect() {
        local want=$1 vars=()
        shift
        while [ "$1" != -- ]; do
                vars+=("$1")
                shift
        done
        shift
        _expect "$want" runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                LANG=C.UTF-8 HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "${vars[@]}" "$user_sbx" "$@"
}

# Skip unless the test user has no writable cgroup for any of the three limits.
need_no_user_cgroup() {
        u_expect any -- check --json
        local n
        n=$(jq '[.features[] | select((.name | startswith("cgroup-")) and .name != "cgroup-kill"
                and .available)] | length' <<<"$output") || fail "check --json: $output"
        [ "$n" -eq 0 ] || skip "$test_user has a writable cgroup here: its defaults are enforced"
}

no_user_session_left() {
        [ -z "$(ls -A "$(user_rt "$test_user")" 2>/dev/null | grep '^sb_')" ] ||
                fail "a failed create left a session dir: $(ls -A "$(user_rt "$test_user")")"
}

# The warning: exactly one line, naming each default limit and one command to enforce it.
one_warning_line() {
        local n
        n=$(printf '%s\n' "$stderr" | grep -c .)
        [ "$n" -eq 1 ] || fail "want one line on stderr, got $n: $stderr"
        [[ $stderr == "sbx: warning: default limits not enforced: memory 512M, pids 256, cpus 1 "* ]] ||
                fail "warning: $stderr"
        [[ $stderr == *"to enforce them: "?* ]] || fail "no fix in: $stderr"
}

# jq over $output: the three cgroup limits not enforced (no controller named), the two
# others enforced, with the default values.
limits_unenforced() {
        jq -e "$1"' | (.memory_bytes == {"value":536870912,"enforced":false,"enforced_by":null})
                and (.pids == {"value":256,"enforced":false,"enforced_by":null})
                and (.cpus_milli == {"value":1000,"enforced":false,"enforced_by":null})
                and (.disk_bytes.enforced and .nofile.enforced)' <<<"$output" >/dev/null ||
                fail "limits ($1): $(jq -c "$1" <<<"$output")"
}

@test "user: a default create succeeds with exactly one warning line; the session works" {
        need_no_user_cgroup
        u_expect 0 -- create
        is_id "$output" || fail "create printed '$output'"
        local sid=$output
        one_warning_line
        u_expect 0 -- exec "$sid" sh -c 'id -u; echo ok'
        [ "$output" = "$(printf '0\nok')" ] || fail "$output"
        [ -z "$stderr" ] || fail "exec warned: $stderr"
        u_expect 0 -- destroy "$sid"
        # --json keeps stdout one document; the warning still goes to stderr
        u_expect 0 -- create --json
        json_doc
        sid=$(jq -r .id <<<"$output")
        one_warning_line
        u_expect 0 -- destroy "$sid"
}

@test "user: a limit asked for stays enforced or exit 4 (flag, SBX_*, ini), nothing left" {
        need_no_user_cgroup
        u_expect 4 -- create --memory 256M
        [[ $stderr == *"cannot enforce the memory limit 256M:"* ]] || fail "$stderr"
        [[ $stderr != *"(the default)"* ]] || fail "$stderr"
        no_user_session_left
        u_expect 4 -- create --pids 100
        [[ $stderr == *"cannot enforce the pids limit 100"* ]] || fail "$stderr"
        # the same value as the default, asked for: enforced or nothing
        u_expect 4 SBX_MEMORY=512M -- create
        [[ $stderr == *"cannot enforce the memory limit 512M:"* ]] || fail "$stderr"
        local ini=$users_base/$test_user/$BATS_TEST_NUMBER/home/limits.ini
        printf '[limits]\ncpus = 0.5\n' >"$ini"
        chmod 0644 "$ini"
        u_expect 4 -- create --config "$ini"
        [[ $stderr == *"cannot enforce the cpus limit 0.500"* ]] || fail "$stderr"
        u_expect 4 -- run --memory 256M -- true
        no_user_session_left
}

@test "user: --strict-limits, SBX_STRICT_LIMITS and [limits] strict restore exit 4 for defaults" {
        need_no_user_cgroup
        u_expect 4 -- create --strict-limits
        [[ $stderr == *"cannot enforce the memory limit 512M (the default)"* ]] || fail "$stderr"
        [[ $stderr != *warning* ]] || fail "$stderr"
        u_expect 4 SBX_STRICT_LIMITS=true -- create
        local ini=$users_base/$test_user/$BATS_TEST_NUMBER/home/strict.ini
        printf '[limits]\nstrict = true\n' >"$ini"
        chmod 0644 "$ini"
        u_expect 4 -- create --config "$ini"
        u_expect 4 -- run --strict-limits -- true
        no_user_session_left
        # strict with no limit asked for at all: nothing to enforce, create works
        u_expect 0 -- create --strict-limits --memory unlimited --pids unlimited --cpus unlimited
        [ -z "$stderr" ] || fail "warned: $stderr"
        u_expect 0 -- destroy "$output"
        # a bad value is a usage error
        u_expect 2 SBX_STRICT_LIMITS=maybe -- create
}

@test "user: the audit log, list --json and check agree on which limits hold" {
        need_no_user_cgroup
        u_expect 0 -- create
        local sid=$output
        u_expect 0 -- log --json "$sid"
        limits_unenforced '.[] | select(.event == "create") | .limits'
        u_expect 0 -- list --json
        limits_unenforced ".[] | select(.id == \"$sid\") | .limits"
        u_expect 0 -- check --json
        limits_unenforced '.limits'
        # a default create goes without them: not required, check passes
        jq -e '.ok and ([.features[] | select(.name | test("^cgroup-(memory|pids|cpu)$"))
                | select(.required or .available)] | length == 0)' <<<"$output" >/dev/null ||
                fail "check: $output"
        jq -e '.verdict | startswith("sessions work for uid ") and
                contains("default limits not enforced: memory 512M, pids 256, cpus 1")' \
                <<<"$output" >/dev/null || fail "verdict: $(jq .verdict <<<"$output")"
        # the table ends with the same verdict line
        u_expect 0 -- check
        [[ ${lines[-1]} == "verdict: sessions work for uid $(id -u "$test_user") here, but default limits not enforced: "* ]] ||
                fail "last line: ${lines[-1]}"
        # strict: now a default create needs the cgroups, and check says it cannot
        u_expect 4 SBX_STRICT_LIMITS=1 -- check --json
        jq -e '(.ok | not) and (.verdict | startswith("no sessions for uid ")) and
                ([.features[] | select(.name == "cgroup-memory")][0].required)' <<<"$output" \
                >/dev/null || fail "strict check: $output"
        u_expect 0 -- destroy "$sid"
}

@test "user: a limit reported as not enforced is really not in force (300 tasks with pids 256)" {
        need_no_user_cgroup
        u_expect 0 -- create
        local sid=$output
        # positive control of the counting: the shell sees its own sleeps
        u_expect 0 -- exec "$sid" sh -c 'p=; for i in $(seq 300); do sleep 30 & p="$p $!"; done; ls /proc | grep -c "^[0-9]"; kill $p'
        [ "$output" -gt 256 ] || fail "only $output tasks: the pids default would be in force"
        u_expect 0 -- destroy "$sid"
}

@test "user: run with the defaults warns once and runs the command" {
        need_no_user_cgroup
        u_expect 0 -- run -- echo ran
        [ "$output" = ran ] || fail "$output"
        one_warning_line
}

@test "root: default sessions keep every limit, with no warning; check says so" {
        [ "$(id -u)" -eq 0 ] || skip "root only"
        sbx_ok check --json
        jq -e '[.limits.memory_bytes, .limits.pids, .limits.cpus_milli] | all(.enforced)' \
                <<<"$output" >/dev/null || skip "root has no cgroup controllers here: $output"
        jq -e '.verdict | startswith("sessions work for uid 0 here, with every limit enforced")' \
                <<<"$output" >/dev/null || fail "verdict: $(jq .verdict <<<"$output")"
        new_session
        [ -z "$stderr" ] || fail "create warned: $stderr"
        sbx_ok list --json
        jq -e ".[] | select(.id == \"$sid\") | .limits | [.memory_bytes, .pids, .cpus_milli]
                | all(.enforced and (.enforced_by | test(\"^cgroup v[12]$\")))" <<<"$output" \
                >/dev/null || fail "list: $output"
        sbx_ok log --json "$sid"
        jq -e '.[0].limits | [.memory_bytes, .pids, .cpus_milli] | all(.enforced)' \
                <<<"$output" >/dev/null || fail "log: $output"
        # the memory limit is the default one, in the session's cgroup
        local v1 v2
        v1=$(sed -n 's/^cgroup_v1_memory=//p' "$SBX_RUNTIME_DIR/$sid/state")
        v2=$(sed -n 's/^cgroup=//p' "$SBX_RUNTIME_DIR/$sid/state")
        if [ -n "$v1" ]; then
                [ "$(cat "$v1/memory.limit_in_bytes")" = 536870912 ] || fail "v1 limit"
        else
                [ "$(cat "$v2/memory.max")" = 536870912 ] || fail "v2 limit"
        fi
        # --strict-limits changes nothing where every limit holds
        sbx_ok create --strict-limits
        [ -z "$stderr" ] || fail "strict create warned: $stderr"
}
