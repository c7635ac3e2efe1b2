#!/usr/bin/env bats
# clang-tidy finds nothing in sbx's C: every src/**/*.c is checked as .clang-tidy says, with the
# compile flags of the build under test (its compile_commands.json). About 3 minutes on 2
# cores, so it runs in the plain build only (tests/meson.build): the sanitized build compiles
# the same sources.

# the whole run takes about 2m45s on 2 cores (helpers.bash's default is 120s; meson's 600s)
BATS_TEST_TIMEOUT=420
load helpers

setup() {
        setup_sbx
}

teardown() {
        teardown_sbx
}

# tidy_one BUILD SRC LOGS FILE: clang-tidy on FILE, its output into LOGS; FILE's path (from
# SRC) on stdout when it warns. Run by xargs, in a shell of its own.
# shellcheck disable=SC2016
tidy_one='
        rel=${4#"$2"/}
        clang-tidy -p "$1" --quiet "$4" >"$3/$(printf %s "$rel" | tr / _).log" 2>&1 ||
                printf "%s\n" "$rel"
'

@test "clang-tidy finds nothing in src/ (.clang-tidy, the build's compile_commands.json)" {
        command -v clang-tidy >/dev/null ||
                fail "clang-tidy is not installed (scripts/bootstrap installs it)"
        [ -f "$SBX_SRC/.clang-tidy" ] || fail "no .clang-tidy in $SBX_SRC"
        [ -f "$SBX_BUILD/compile_commands.json" ] ||
                fail "no compile_commands.json in $SBX_BUILD (meson setup writes it)"

        # The positive control: with the project's config, an uninitialised read and a null
        # dereference on a reachable path are errors.
        local ctl=$BATS_TEST_TMPDIR/control.c
        cat >"$ctl" <<'EOF'
#include <stddef.h>
int control(int c);
int control(int c)
{
        int x;
        int *p = NULL;
        if (c > 1)
                x = 1;
        if (c > 2)
                return *p;
        return x;
}
EOF
        run clang-tidy --config-file="$SBX_SRC/.clang-tidy" --quiet "$ctl" -- -std=gnu11
        [ "$status" -ne 0 ] || fail "clang-tidy did not flag the control's bugs: $output"
        [[ $output == *clang-analyzer-core.NullDereference* ]] ||
                fail "clang-tidy missed the control's null dereference: $output"
        [[ $output == *clang-analyzer-core.uninitialized.UndefReturn* ]] ||
                fail "clang-tidy missed the control's uninitialised read: $output"

        local logs=$BATS_TEST_TMPDIR/tidy n bad
        mkdir -p "$logs"
        n=$(find "$SBX_SRC/src" -name '*.c' | wc -l)
        [ "$n" -gt 100 ] || fail "only $n C files found under $SBX_SRC/src"
        bad=$(find "$SBX_SRC/src" -name '*.c' -print0 | LC_ALL=C sort -z |
                xargs -0 -P 2 -n 1 bash -c "$tidy_one" tidy_one "$SBX_BUILD" "$SBX_SRC" "$logs" |
                LC_ALL=C sort)
        if [ -n "$bad" ]; then
                cat "$logs"/*.log | grep -E '(warning|error):' | head -n 50 >&2
                fail "clang-tidy warns in (run clang-tidy -p $SBX_BUILD FILE): $(xargs <<<"$bad")"
        fi
}
