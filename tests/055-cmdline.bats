#!/usr/bin/env bats
# What sbx's own processes inside a session show of the host side: sbx never execs inside (the
# init, the per-exec reaper and its spare, the set-up helper are forks of the caller's sbx),
# so /proc/PID/cmdline and /proc/PID/environ would show the caller's `sbx create --env K=V
# --mount HOST:...` or `sbx exec -e K=V` to every process of the session. They must show a
# fixed name and an empty environment; `exec -e` values reach the command's environment only.
# Each test scans every /proc entry from inside (positive controls: a command started with a
# known argv and a -e value is found, so the scan sees what it looks for) and, as root, every
# process of the session's pid namespace from the host.

load helpers

setup() {
        setup_sbx
        secret=create-secret-$RANDOM$RANDOM
        token=exec-token-$RANDOM$RANDOM
        public_dir
        vol=$pubdir/host-volume-marker-$RANDOM
        mkdir -p "$vol"
}
teardown() {
        [ -z "${bg:-}" ] || kill "$bg" 2>/dev/null || true
        [ -z "${bg:-}" ] || wait "$bg" 2>/dev/null || true
        teardown_sbx
}

# scan: from a new exec in $sid, one line per process: pid|comm|cmdline|environ ("-" when
# it cannot be read), NULs shown as spaces.
scan() {
        in_sbx 'for p in /proc/[0-9]*; do
                pid=${p#/proc/}
                [ "$pid" = "$$" ] && continue
                c=$(tr "\0" " " 2>/dev/null <"$p/cmdline") || continue
                e=$(tr "\0" " " <"$p/environ" 2>/dev/null) || e=-
                n=$(cat "$p/comm" 2>/dev/null) || continue
                printf "%s|%s|%s|%s\n" "$pid" "$n" "$c" "$e"
        done'
}

# A long command with a -e value, in the background; waits until the session runs it.
start_marked_command() {
        "$SBX" exec -e "TOKEN=$token" "$sid" sh -c 'sleep 300; : marker-argv' >/dev/null 2>&1 &
        bg=$!
        wait_until 15 in_sbx 'pgrep -x sleep >/dev/null' ||
                fail "the marked command never ran"
}

# check_scan: the lines of `scan` in $output, as the tests expect them.
check_scan() {
        local line pid comm cmd env sbx_seen=0 marked=0
        while IFS='|' read -r pid comm cmd env; do
                case $comm in
                sbx-*)
                        sbx_seen=$((sbx_seen + 1))
                        # the fixed name alone, whatever the caller's command line was
                        [ "${cmd% }" = "$comm" ] ||
                                fail "pid $pid ($comm) shows the command line '$cmd'" || return 1
                        [ "$env" = - ] || [ "${env// /}" = "SBX_PROCESS=$comm" ] ||
                                fail "pid $pid ($comm) shows an environment: '$env'" || return 1
                        ;;
                esac
                if [[ $cmd == "sh -c sleep 300; : marker-argv"* ]]; then
                        marked=$((marked + 1))
                        [[ $env == *"TOKEN=$token"* ]] ||
                                fail "the command's own environment lacks TOKEN: '$env'" ||
                                return 1
                        [[ $env == *"SECRET=$secret"* ]] ||
                                fail "the command's environment lacks the session's --env" ||
                                return 1
                fi
                # the -e value: in the environment of the command's own tree (sh, its sleep)
                [[ $env != *"$token"* ]] || [ "$comm" = sh ] || [ "$comm" = sleep ] ||
                        fail "pid $pid ($comm) has the -e value: '$env'" || return 1
                # no command line shows the values, the host paths or the binary's host path
                for word in "$token" "$secret" "$vol" "$SBX" "${SBX%/*}"; do
                        [[ $cmd != *"$word"* ]] ||
                                fail "pid $pid ($comm) shows '$word': '$cmd'" || return 1
                done
        done <<<"$output"
        # positive controls: the scan saw sbx's own processes and the marked command
        [ "$sbx_seen" -ge 2 ] || fail "the scan saw $sbx_seen sbx processes:" "$output" || return 1
        [ "$marked" -eq 1 ] || fail "the scan saw the marked command $marked times:" "$output"
}

# check_host: as root, every process of the session's pid namespace seen from the host.
check_host() {
        local init ns p comm
        init=$(state_key init_pid)
        ns=$(readlink "/proc/$init/ns/pid") ||
                fail "no pid namespace for the init '$init': $(cat "$SBX_RUNTIME_DIR/$sid/state")" ||
                return 1
        local seen=0
        for p in /proc/[0-9]*; do
                [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
                comm=$(cat "$p/comm" 2>/dev/null) || continue
                [[ $comm == sbx-* ]] || continue
                seen=$((seen + 1))
                [ "$(tr '\0' ' ' <"$p/cmdline")" = "$comm " ] ||
                        fail "$p ($comm) cmdline: $(tr '\0' ' ' <"$p/cmdline")" || return 1
                [ "$(tr '\0' '\n' <"$p/environ")" = "SBX_PROCESS=$comm" ] ||
                        fail "$p ($comm) environ: $(tr '\0' ' ' <"$p/environ")" || return 1
        done
        [ "$seen" -ge 2 ] || fail "saw $seen sbx processes in the session's pid namespace $ns" \
                "of the init $init: $(ps -o pid=,comm= -p "$init")"
}

@test "join path: sbx's processes inside show a fixed name and no environment" {
        new_session --env "SECRET=$secret" --mount "$vol:/vol"
        start_marked_command
        scan
        check_scan
        [[ $output == *"|sbx-reaper|"* ]] || fail "no per-exec reaper seen:" "$output"
        [ "$(id -u)" -ne 0 ] || check_host
}

@test "exec server path: the init, its spare and reapers show nothing of the caller" {
        new_session --memory unlimited --cpus unlimited --pids unlimited \
                --env "SECRET=$secret" --mount "$vol:/vol"
        start_marked_command
        scan
        check_scan
        [[ $output == *"|sbx-init|"* ]] || fail "no init seen:" "$output"
        [ "$(id -u)" -ne 0 ] || check_host
}

@test "run: the init of a run shows a fixed name" {
        _expect 0 "$SBX" run --env "SECRET=$secret" --mount "$vol:/vol" -- \
                sh -c 'tr "\0" " " </proc/1/cmdline; echo; cat /proc/1/comm'
        [ "${lines[0]}" = "sbx-init " ] || fail "pid 1 shows '${lines[0]}'"
        [ "${lines[1]}" = "sbx-init" ]
}

@test "positive control: the scan reports a command line that names a host path" {
        new_session --env "SECRET=$secret" --mount "$vol:/vol"
        # a command whose argv carries the host path: check_scan must catch it
        "$SBX" exec "$sid" sh -c 'sleep 300' "$vol" >/dev/null 2>&1 &
        bg=$!
        wait_until 15 in_sbx 'pgrep -x sleep >/dev/null' || fail "the command never ran"
        scan
        run check_scan
        [ "$status" -ne 0 ]
        [[ $output == *"shows '$vol'"* ]] || fail "check_scan said: $output"
}

@test "host side: a session's supervisor shows no command line; --env-file values are in none" {
        local s1=flag-secret-$RANDOM$RANDOM s2=file-secret-$RANDOM$RANDOM s3=stdin-secret-$RANDOM$RANDOM
        printf '# comment\n\nS2=%s\r\n' "$s2" >"$BATS_TEST_TMPDIR/env"
        new_session --env "S1=$s1" --env-file "$BATS_TEST_TMPDIR/env"
        local sup
        sup=$(tr '\0' '\n' <"$SBX_RUNTIME_DIR/$sid/state" 2>/dev/null | sed -n 's/^supervisor_pid=//p')
        [ -n "$sup" ] || sup=$(sed -n 's/^supervisor_pid=//p' "$SBX_RUNTIME_DIR/$sid/state")
        # positive control: the supervisor is there, and the scan reads its command line
        [ "$(tr '\0' ' ' <"/proc/$sup/cmdline")" = "sbx-supervisor " ] ||
                fail "supervisor $sup: $(tr '\0' ' ' <"/proc/$sup/cmdline")"
        # a JSON object on stdin, a value with a newline
        printf '{"S3":"%s","NL":"a\\nb"}' "$s3" |
                "$SBX" exec --env-file - "$sid" sh -c 'sleep 2; printf "%s|%s|%s|%s" "$S1" "$S2" "$S3" "$NL"' \
                        >"$BATS_TEST_TMPDIR/out" &
        local bg_exec=$! p
        sleep 0.5
        for p in /proc/[0-9]*; do
                ! tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qE "$s2|$s3" ||
                        fail "pid ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline")"
        done
        # the flag's value was seen by `sbx create` alone, which has ended
        for p in /proc/[0-9]*; do
                ! tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q "$s1" ||
                        fail "pid ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline")"
        done
        wait "$bg_exec"
        [ "$(cat "$BATS_TEST_TMPDIR/out")" = "$s1|$s2|$s3|$(printf 'a\nb')" ] ||
                fail "values: $(cat "$BATS_TEST_TMPDIR/out")"
        # run takes it too; bad files are usage errors
        _expect 0 sh -c 'echo "X=1" | "$1" run --env-file - -- sh -c "echo \$X"' sh "$SBX"
        [ "$output" = 1 ] || fail "run: $output"
        printf 'no equals sign\n' >"$BATS_TEST_TMPDIR/bad"
        sbx_expect 2 exec --env-file "$BATS_TEST_TMPDIR/bad" "$sid" true
        [[ $stderr == *"line 1 is not KEY=VALUE"* ]] || fail "stderr: $stderr"
        printf '{"1X":"v"}' >"$BATS_TEST_TMPDIR/bad"
        sbx_expect 2 create --env-file "$BATS_TEST_TMPDIR/bad"
        printf '{"X":1}' >"$BATS_TEST_TMPDIR/bad"
        sbx_expect 2 exec --env-file "$BATS_TEST_TMPDIR/bad" "$sid" true
        sbx_expect 2 exec --env-file "$BATS_TEST_TMPDIR/missing" "$sid" true
        # what would be taken apart wrongly is refused: a name with "=", an escaped NUL, a
        # second object after the first, stdin twice or with -i
        local j
        for j in '{"A=B":"c"}' '{"K\u0000X":"v"}' '{"V":"x\u0000y"}' '{"A":"1"}{"B":"2"}'; do
                printf '%s' "$j" >"$BATS_TEST_TMPDIR/bad"
                sbx_expect 2 exec --env-file "$BATS_TEST_TMPDIR/bad" "$sid" true
        done
        _expect 2 sh -c 'echo A=1 | "$1" exec --env-file - --env-file - "$2" true' sh "$SBX" "$sid"
        _expect 2 sh -c 'echo A=1 | "$1" exec -i --env-file - "$2" cat' sh "$SBX" "$sid"
        [[ $stderr == *"not with --interactive"* ]] || fail "stderr: $stderr"
        # a bad line is named by its number, never quoted (it may be a line of a key)
        printf '%s\n' A=1 'MIIsec/ret+line==' >"$BATS_TEST_TMPDIR/bad"
        sbx_expect 2 exec --env-file "$BATS_TEST_TMPDIR/bad" "$sid" true
        [[ $stderr == *"line 2"* && $stderr != *MIIsecret* ]] || fail "stderr: $stderr"
}
