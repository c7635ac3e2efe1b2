#!/usr/bin/env bats
# The suite checks itself: every tests/*.bats file is registered in tests/meson.build (an
# unregistered file would never run in CI), the list is sorted, and every suite uses the
# per-test isolation and leak check of helpers.bash, every C file is formatted as
# .clang-format says, and src/'s includes point down the layers of docs/DESIGN.md.

load helpers

registered() {
        sed -n "/^bats_files = \[/,/^\]/s/^ *'\([^']*\.bats\)',\{0,1\}$/\1/p" \
                "$SBX_SRC/tests/meson.build"
}

# body FUNCTION FILE: the text of a top-level function (one-line or up to its closing brace).
body() {
        awk -v f="$1" '
                $0 ~ "^" f "\\(\\) *\\{" { on = 1 }
                on { print }
                on && (/^}/ || /}[[:space:]]*$/) { exit }
        ' "$2"
}

@test "every tests/*.bats file is registered in tests/meson.build" {
        [ -n "${SBX_SRC:-}" ] || fail "SBX_SRC is not set (run with meson test)"
        local on_disk reg
        on_disk=$(cd "$SBX_SRC/tests" && ls -1 -- *.bats | LC_ALL=C sort)
        reg=$(registered | LC_ALL=C sort)
        [ -n "$reg" ] || fail "no bats_files list found in tests/meson.build"
        if [ "$on_disk" != "$reg" ]; then
                echo "on disk, not registered: $(comm -23 <(echo "$on_disk") <(echo "$reg") | xargs)" >&2
                echo "registered, not on disk: $(comm -13 <(echo "$on_disk") <(echo "$reg") | xargs)" >&2
                return 1
        fi
}

@test "the bats_files list in tests/meson.build is sorted" {
        diff <(registered) <(registered | LC_ALL=C sort)
}

@test "test files are named NNN-topic.bats" {
        local f
        for f in "$SBX_SRC"/tests/*.bats; do
                [[ ${f##*/} =~ ^[0-9]{3}-[a-z0-9-]+\.bats$ ]] || fail "badly named: $f"
        done
}

@test "every suite isolates its tests and checks for leaks (setup_sbx, teardown_sbx)" {
        local f
        for f in "$SBX_SRC"/tests/[0-9]*.bats; do
                [ "${f##*/}" = 000-meta.bats ] && continue
                grep -q '^load helpers' "$f" || fail "${f##*/}: does not load helpers"
                body setup "$f" | grep -q '\bsetup_sbx\b' || fail "${f##*/}: setup does not call setup_sbx"
                body teardown "$f" | grep -q '\bteardown_sbx\b' ||
                        fail "${f##*/}: teardown does not call teardown_sbx"
        done
}

# upward_includes SRC: "file -> layer" for each #include in SRC/<layer>/ of a higher layer
# (docs/DESIGN.md: cli, mcp, serve -> launch -> sandbox, ops, image, net -> session -> config
# -> shared).
upward_includes() {
        local f dir to
        declare -A rank=([cli]=5 [mcp]=5 [serve]=5 [launch]=4 [sandbox]=3 [ops]=3 [image]=3
                [net]=3 [session]=2 [config]=1 [shared]=0)
        for f in "$1"/*/*.[ch]; do
                dir=${f%/*}
                dir=${dir##*/}
                [ -n "${rank[$dir]:-}" ] || continue
                while IFS= read -r to; do
                        [ -n "${rank[$to]:-}" ] && [ "${rank[$to]}" -gt "${rank[$dir]}" ] &&
                                echo "${f#"$1"/} -> $to"
                done < <(sed -n 's|^#include "\(\.\./\)\{0,1\}\([a-z]*\)/.*|\2|p' "$f")
        done
        return 0
}

@test "src/ includes point down the layers only" {
        # the positive control: an upward include is seen
        local t="$BATS_TEST_TMPDIR/src"
        mkdir -p "$t/session" "$t/launch"
        printf '#include "../launch/cgroup.h"\n#include "shared/util.h"\n' >"$t/session/a.c"
        printf '#include "../session/id.h"\n' >"$t/launch/b.c"
        [ "$(upward_includes "$t")" = "session/a.c -> launch" ] ||
                fail "the check missed an upward include: '$(upward_includes "$t")'"
        local up
        up=$(upward_includes "$SBX_SRC/src")
        [ -z "$up" ] || fail "includes pointing up: $up"
}

@test "the suite's environment names a built sbx" {
        [ -x "$SBX" ] || fail "SBX='$SBX' is not executable"
        [ -d "$SBX_BUILD" ] || fail "SBX_BUILD='$SBX_BUILD' is not a directory"
}

@test "every C file is formatted as .clang-format says (clang-format --dry-run --Werror)" {
        command -v clang-format >/dev/null ||
                fail "clang-format is not installed (scripts/bootstrap installs it)"
        # the positive control: a badly formatted line is seen as one
        run clang-format --dry-run --Werror --assume-filename="$SBX_SRC/src/x.c" \
                <<<'int  f( void ){return 0;}'
        [ "$status" -ne 0 ] || fail "clang-format did not flag a badly formatted line"
        local f bad=() n=0
        while IFS= read -r f; do
                n=$((n + 1))
                clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("${f#"$SBX_SRC"/}")
        done < <(find "$SBX_SRC/src" "$SBX_SRC/tests" "$SBX_SRC/bench" -name '*.[ch]')
        [ "$n" -gt 100 ] || fail "only $n C files found under $SBX_SRC"
        [ ${#bad[@]} -eq 0 ] || fail "not clang-format clean (run clang-format -i): ${bad[*]}"
}
