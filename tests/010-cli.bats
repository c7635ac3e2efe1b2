#!/usr/bin/env bats
# The command line as sbx(1) fixes it: help, version, usage errors (exit 2, one line
# "sbx: ..." plus "Try 'sbx --help'"), every command's --help, and the --json error document.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# The commands of issue 2 (the others come with their own issues and suites).
core_commands=(create connect exec destroy run list check help)

# assert_usage_error: exit 2 already checked; nothing on stdout, and stderr is exactly the
# one-line reason ("sbx: ...") followed by the Try line.
assert_usage_error() {
        [ -z "$output" ] || fail "a usage error printed on stdout: $output"
        local n
        n=$(printf '%s\n' "$stderr" | wc -l)
        [ "$n" -eq 2 ] || fail "expected 2 lines on stderr, got $n:" "$stderr"
        [[ $(head -n 1 <<<"$stderr") == "sbx: "* ]] || fail "first line is not 'sbx: ...':" "$stderr"
        [[ $(tail -n 1 <<<"$stderr") =~ Try\ \'sbx(\ [a-z]+)?\ --help\' ]] ||
                fail "second line is not \"Try 'sbx --help'\":" "$stderr"
}

# assert_json_error CODE: stdout is exactly one {"error":{"code":CODE,"message":"..."}}
assert_json_error() {
        json_doc
        json ".error.code == \"$1\"" >/dev/null || fail "error code is not $1: $output"
        json '.error.message | type == "string" and length > 0' >/dev/null ||
                fail "error.message missing or empty: $output"
        json '(keys == ["error"]) and (.error | keys == ["code", "message"])' >/dev/null ||
                fail "unexpected keys in the error document: $output"
}

@test "sbx --help lists the commands and exits 0" {
        sbx_ok --help
        local c
        for c in "${core_commands[@]}"; do
                grep -Eq "(^|[[:space:]])$c([[:space:]]|$)" <<<"$output" ||
                        fail "--help does not mention '$c':" "$output"
        done
        [ -z "$stderr" ] || fail "--help wrote to stderr: $stderr"
}

@test "sbx help is sbx --help" {
        sbx_ok --help
        local a=$output
        sbx_ok help
        [ "$output" = "$a" ] || fail "'sbx help' differs from 'sbx --help'"
}

@test "sbx --version: the first line is 'sbx VERSION' with the project's version" {
        sbx_ok --version
        local v
        v=$(sed -n "s/^ *version : '\(.*\)',$/\1/p" "$SBX_SRC/meson.build" | head -n 1)
        [ -n "$v" ] || fail "cannot read the version from meson.build"
        [ "${lines[0]}" = "sbx $v" ] || fail "--version starts with '${lines[0]}', expected 'sbx $v'"
        [ -z "$stderr" ] || fail "--version wrote to stderr: $stderr"
}

@test "an unknown command: exit 2, one line, Try 'sbx --help'" {
        sbx_expect 2 frobnicate
        assert_usage_error
        [[ $stderr == *frobnicate* ]] || fail "the message does not name the command: $stderr"
}

@test "an unknown global flag: exit 2" {
        sbx_expect 2 --frobnicate
        assert_usage_error
        [[ $stderr == *--frobnicate* ]] || fail "the message does not name the flag: $stderr"
}

@test "an unknown flag of each command: exit 2, one line naming it" {
        local c
        for c in create connect exec destroy run list check; do
                sbx_expect 2 "$c" --frobnicate
                assert_usage_error
                [[ $stderr == *--frobnicate* ]] || fail "$c: the message does not name the flag: $stderr"
        done
}

@test "a missing argument is a usage error (exec without ID or CMD, connect without ID)" {
        sbx_expect 2 exec
        assert_usage_error
        sbx_expect 2 exec sb_0123456789abcdef
        assert_usage_error
        sbx_expect 2 connect
        assert_usage_error
        sbx_expect 2 destroy
        assert_usage_error
}

@test "a flag value that does not parse: exit 2" {
        sbx_expect 2 create --ttl forever
        assert_usage_error
        sbx_expect 2 create --memory 12Q
        assert_usage_error
        sbx_expect 2 create --net carrier-pigeon
        assert_usage_error
        sbx_expect 2 create --seccomp bogus
        assert_usage_error
        sbx_expect 2 exec --timeout soon sb_0123456789abcdef true
        assert_usage_error
        sbx_expect 2 exec --max-output lots sb_0123456789abcdef true
        assert_usage_error
}

@test "every command's --help exits 0 and shows its usage" {
        local c
        for c in "${core_commands[@]}"; do
                [ "$c" = help ] && continue
                sbx_ok "$c" --help
                [[ $output == *"sbx $c"* ]] || fail "'sbx $c --help' does not show 'sbx $c':" "$output"
                [ -z "$stderr" ] || fail "'sbx $c --help' wrote to stderr: $stderr"
                sbx_ok help "$c"
                [[ $output == *"sbx $c"* ]] || fail "'sbx help $c' does not show 'sbx $c':" "$output"
        done
}

@test "sbx help of an unknown command: exit 2" {
        sbx_expect 2 help frobnicate
        assert_usage_error
}

@test "create --help documents every create option of sbx(1)" {
        sbx_ok create --help
        local f
        for f in --name --ttl --timeout --rootfs --image --package --read-only --workdir \
                --hostname --env --mount --memory --cpus --pids --disk --nofile --net \
                --allow-host --seccomp --json --config; do
                grep -q -- "$f" <<<"$output" || fail "create --help does not mention $f"
        done
}

@test "exec --help documents every exec option of sbx(1)" {
        sbx_ok exec --help
        local f
        for f in -t --timeout -w --workdir -e --env -i --interactive -T --tty --max-output --json; do
                grep -Eq -- "(^|[^a-z-])$f([^a-z-]|$)" <<<"$output" || fail "exec --help does not mention $f"
        done
}

@test "--json: a missing session is {\"error\":{\"code\":\"session_not_found\"}} and exit 3" {
        sbx_expect 3 exec --json sb_0123456789abcdef true
        assert_json_error session_not_found
        sbx_expect 3 connect --json sb_0123456789abcdef
        assert_json_error session_not_found
        sbx_expect 3 destroy --json sb_0123456789abcdef
        assert_json_error session_not_found
        sbx_expect 3 exec --json no-such-name true
        assert_json_error session_not_found
}

@test "--json: a usage error is one JSON document with code usage, exit 2" {
        sbx_expect 2 create --json --frobnicate
        assert_json_error usage
        sbx_expect 2 create --json --ttl forever
        assert_json_error usage
        sbx_expect 2 exec --json
        assert_json_error usage
}

@test "--json: list of no sessions is one JSON document without ids" {
        sbx_ok list --json
        json_doc
        json '[.. | objects | .id? // empty] | length == 0' >/dev/null ||
                fail "an empty runtime dir lists sessions: $output"
}

@test "--json: check prints one JSON document" {
        sbx_ok check --json
        json_doc
}

@test "check without --json reports in human form on stdout" {
        sbx_ok check
        [ -n "$output" ] || fail "check printed nothing"
}

@test "every command takes --config FILE: a missing file is exit 2" {
        local c
        for c in list check; do
                sbx_expect 2 "$c" --config "$BATS_TEST_TMPDIR/nonexistent.ini"
                [[ $stderr == *nonexistent.ini* ]] || fail "$c: the message does not name the file: $stderr"
        done
        sbx_expect 2 create --config "$BATS_TEST_TMPDIR/nonexistent.ini"
        sbx_expect 2 run --config "$BATS_TEST_TMPDIR/nonexistent.ini" -- true
}

@test "stdout write errors are reported, not ignored (sbx --help >/dev/full)" {
        local rc=0
        timeout 10 "$SBX" --help >/dev/full 2>"$BATS_TEST_TMPDIR/err" || rc=$?
        [ "$rc" -ne 0 ] || fail "writing --help to /dev/full exited 0"
        [ "$rc" -ne 124 ] || fail "timed out"
        [ -s "$BATS_TEST_TMPDIR/err" ] || fail "no message on stderr"
}

@test "create prints its error once, as 'sbx: ...', without --json" {
        sbx_expect 2 create --ttl forever
        [[ $stderr == "sbx: "* ]] || fail "stderr does not start with 'sbx: ': $stderr"
        [ "$(grep -c '^sbx: ' <<<"$stderr")" -eq 1 ] || fail "the error is printed more than once: $stderr"
}

@test "an option that takes a value, given last without one: 'requires a value', exit 2" {
        local a
        for a in "create --ttl" "run --memory" "exec -t" "connect --ttl" "logs --cursor" \
                "image --bogus-but-last" "--config"; do
                # shellcheck disable=SC2086
                sbx_expect 2 $a
                case $a in
                *bogus*) [[ $stderr == *"unknown option"* ]] || fail "$a: $stderr" ;;
                *) [[ $stderr == *"requires a value"* ]] || fail "$a: $stderr" ;;
                esac
        done
}
