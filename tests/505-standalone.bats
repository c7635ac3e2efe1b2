#!/usr/bin/env bats
# The repository stands on its own: a clone has everything its code, tests, CI, scripts and
# docs need or cite.
#  - no file refers to a path beside the checkout (the parent directory's "shared" notes, a
#    VM runner there) or to notes that are not in the repository;
#  - README.md holds exactly the two set-up commands (build and run a sandboxed command; build
#    and run every test);
#  - docs/DESIGN.md stays readable in ten minutes (at most 300 lines);
#  - every relative link of the Markdown pages names a file of the repository;
#  - tests/vm/run-in-vm answers a bad option with 125 and one line, without booting a VM.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# The repository's files (tracked or new, not ignored); without git (an unpacked tarball),
# every file but the build directories.
repo_files() {
        if git -C "$SBX_SRC" rev-parse --git-dir >/dev/null 2>&1; then
                git -C "$SBX_SRC" ls-files --cached --others --exclude-standard |
                        while read -r f; do [ ! -f "$SBX_SRC/$f" ] || echo "$f"; done
        else
                (cd "$SBX_SRC" && find . -path './build*' -prune -o -path './.git' -prune -o \
                        -path '*/node_modules' -prune -o -type f -print | sed 's|^\./||')
        fi
}

@test "no file needs or cites anything outside the repository" {
        # built from pieces, so that this file does not match itself
        local outside='\.\./shared/|shared/(SPEC|HARDENING|STYLE|MEASURED)\.md|vmtest/run-in-''vm'
        local notes='(^|[^A-Za-z/_])(SPEC|HARDENING|MEASURED|STYLE)\.md'
        local hits
        hits=$(cd "$SBX_SRC" && repo_files | grep -v -e '\.png$' -e '\.json$' |
                xargs -d '\n' grep -l -E -e "$outside" -e "$notes" -- 2>/dev/null || true)
        [ -z "$hits" ] || fail "these files refer to something outside the repository:
$hits"
        # the positive control: the same search finds such a reference when there is one
        printf '%s\n' '#include "..''/shared/x.h"' 'see SP''EC.md' >"$BATS_TEST_TMPDIR/probe.c"
        [ "$(grep -c -E -e "$outside" -e "$notes" "$BATS_TEST_TMPDIR/probe.c")" = 2 ] ||
                fail "the search does not see what it looks for"
}

@test "README.md holds exactly the two set-up commands" {
        local cmds
        cmds=$(grep -E '^ +scripts/bootstrap\b' "$SBX_SRC/README.md" | sed 's/^ *//')
        [ "$(grep -c . <<<"$cmds")" = 2 ] || fail "set-up commands in README.md:
$cmds"
        grep -qx "scripts/bootstrap && build/sbx run -- .*" <<<"$cmds" ||
                fail "no 'scripts/bootstrap && build/sbx run -- ...': $cmds"
        grep -qx "scripts/bootstrap && meson test -C build" <<<"$cmds" ||
                fail "no 'scripts/bootstrap && meson test -C build': $cmds"
}

@test "the README's first set-up command runs a sandboxed command with the built binary" {
        local cmd
        cmd=$(grep -E '^ +scripts/bootstrap && build/sbx run -- ' "$SBX_SRC/README.md" |
                sed 's/^ *scripts\/bootstrap && build\/sbx //')
        # (the bootstrap half is what the whole suite was built with)
        eval "set -- $cmd"
        sbx_ok "$@"
        [[ $output == "hello from sandbox"* ]] || fail "output: $output"
}

@test "docs/DESIGN.md has at most 300 lines" {
        local n
        n=$(wc -l <"$SBX_SRC/docs/DESIGN.md")
        [ "$n" -le 300 ] || fail "docs/DESIGN.md has $n lines"
}

@test "every relative link of the Markdown pages names a file of the repository" {
        local md link target bad= n=0
        while read -r md; do
                while read -r link; do
                        case $link in http://* | https://* | mailto:* | '#'*) continue ;; esac
                        target=${link%%#*}
                        n=$((n + 1))
                        [ -e "$(dirname "$SBX_SRC/$md")/$target" ] || bad+="$md: $link"$'\n'
                done < <(grep -o -E '\]\([^) ]+\)' "$SBX_SRC/$md" | sed 's/^](//; s/)$//')
        done < <(cd "$SBX_SRC" && repo_files | grep -E '\.md$' | grep -v node_modules)
        [ -z "$bad" ] || fail "links to nothing:
$bad"
        [ "$n" -ge 10 ] || fail "only $n links found: the search is broken"
}

@test "tests/vm/run-in-vm: a bad option is exit 125 and one line, no VM booted" {
        run timeout 20 "$SBX_SRC/tests/vm/run-in-vm" --timeout soon -- true
        [ "$status" = 125 ] || fail "status $status: $output"
        [ "$output" = "run-in-vm: --timeout wants seconds, not 'soon'" ] || fail "output: $output"
        run timeout 20 "$SBX_SRC/tests/vm/run-in-vm" --help
        [ "$status" = 0 ] && [[ $output == *"--init PROGRAM"* ]] || fail "--help: $status $output"
}
