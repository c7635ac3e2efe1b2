#!/usr/bin/env bats
# sbx cp: files and trees in and out, byte for byte; the session's side has a session
# process's rights (symlinks it planted resolve inside it, or are copied as links, never read
# on the host), races that swap a file for a link never reach a host file, the disk limit
# bounds a copy in, nothing is replaced, a copy that fails or is interrupted leaves nothing
# behind, and bad input has its exit code.

load helpers
setup() {
        setup_sbx
        host=$BATS_TEST_TMPDIR/host
        mkdir -p "$host"
}
teardown() { teardown_sbx; }

@test "a tree in and out again, byte for byte, links as links" {
        new_session
        mkdir -p "$host/src/sub/deeper"
        head -c 100000 /dev/urandom >"$host/src/bin"
        echo hello >"$host/src/sub/a"
        printf 'no newline' >"$host/src/sub/deeper/b"
        : >"$host/src/empty"
        ln -s sub/a "$host/src/rel-link"
        chmod 0750 "$host/src/sub"
        sbx_ok cp "$host/src" "$sid:/workspace/"
        in_sbx 'cat /workspace/src/sub/a && test -L /workspace/src/rel-link && stat -c %a /workspace/src/sub'
        [ "$output" = "$(printf 'hello\n750')" ]
        sbx_ok cp --json "$sid:/workspace/src" "$host/back"
        [ "$(json .bytes)" = $((100000 + 6 + 10)) ]
        diff -r --no-dereference "$host/src" "$host/back" || fail "the round trip changed the tree"
        [ "$(readlink "$host/back/rel-link")" = sub/a ]
        # a single file, into an existing directory and to a new name
        sbx_ok cp "$sid:/workspace/src/sub/a" "$host/"
        sbx_ok cp "$sid:src/sub/a" "$host/renamed" # relative to the workdir
        cmp "$host/a" "$host/src/sub/a" && cmp "$host/renamed" "$host/src/sub/a"
        sbx_ok cp "$host/src/sub/a" "$sid:/tmp/in-tmp"
        in_sbx 'cat /tmp/in-tmp'
        [ "$output" = hello ]
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "cp_in" or .event == "cp_out")] | length == 5'
}

@test "hostile: links out of the session are copied as links, never as the host's files" {
        new_session
        canary "$BATS_TEST_TMPDIR/canary/secret"
        in_sbx 'ln -s /etc/shadow /workspace/shadow && ln -s ../../../../../.. /workspace/up &&
                ln -s "$1" /workspace/canary && mkdir /workspace/d && ln -s / /workspace/d/root' \
                "$BATS_TEST_TMPDIR/canary/secret"
        local l
        for l in shadow up canary d; do
                sbx_ok cp "$sid:/workspace/$l" "$host/$l"
        done
        [ -L "$host/shadow" ] && [ -L "$host/up" ] && [ -L "$host/canary" ] && [ -L "$host/d/root" ]
        # positive control: the canary is readable on the host, yet no copy holds its content
        grep -q "sbx canary" "$BATS_TEST_TMPDIR/canary/secret"
        ! grep -rq --no-dereference "sbx canary" "$host" || fail "a host file was copied out"
        [ -z "$(find "$host" -type f)" ] || fail "regular files made: $(find "$host" -type f)"
}

@test "hostile: a copy in through a session symlink to / stays inside the session" {
        new_session
        canary "$BATS_TEST_TMPDIR/canary/secret"
        in_sbx 'ln -s / /workspace/rootlink && ln -s "$1" /workspace/hostdir' "$BATS_TEST_TMPDIR/canary"
        echo payload >"$host/dropped"
        sbx_ok cp "$host/dropped" "$sid:/workspace/rootlink"
        in_sbx 'cat /dropped'
        [ "$output" = payload ]
        # a link to a host directory leads nowhere inside: the host directory is untouched
        sbx_expect 1 cp "$host/dropped" "$sid:/workspace/hostdir/x"
        [ ! -e "$BATS_TEST_TMPDIR/canary/x" ] && [ ! -e "$BATS_TEST_TMPDIR/canary/dropped" ]
        [ ! -e /dropped ] || fail "/dropped was written on the host"
}

@test "hostile: a file swapped for a link during copies out never yields a host file" {
        new_session
        canary "$BATS_TEST_TMPDIR/canary/secret"
        in_sbx 'mkdir /workspace/r; (while :; do echo inside >/workspace/r/f.new; mv -f /workspace/r/f.new /workspace/r/f;
                ln -sfn "$1" /workspace/r/f; done) >/dev/null 2>&1 &' "$BATS_TEST_TMPDIR/canary/secret"
        local i got=0
        for i in $(seq 1 30); do
                rm -rf "$host/r"
                sbx_try cp "$sid:/workspace/r" "$host/r"
                [ "$status" -eq 0 ] || [ "$status" -eq 1 ] || fail "cp exited $status: $stderr"
                [ "$status" -ne 0 ] || got=$((got + 1))
                ! grep -rq --no-dereference "sbx canary" "$host" 2>/dev/null || fail "the canary was copied"
        done
        [ "$got" -gt 0 ] || fail "no copy succeeded in 30 tries"
        sbx_ok exec "$sid" sh -c 'pkill -f "ln -sfn" ; kill -9 -1' || true
}

@test "hostile: a link the session plants in its writable volume never steers a host-side copy" {
        local vol=$BATS_TEST_TMPDIR/vol victim=$BATS_TEST_TMPDIR/victim
        mkdir -p "$vol" "$victim"
        # as root, a directory of a user's (a volume of root's own is a plain bind)
        [ "$(id -u)" != 0 ] || chown 12345:12345 "$vol"
        new_session --mount "$vol:/vol"
        echo secret >"$victim/secret"
        in_sbx 'mkdir /workspace/dist && echo payload >/workspace/dist/payload &&
                ln -s "$1" /vol/dist && ln -s "$1" /vol/lnk && ln -s ../.. /vol/up && mkdir /vol/real' \
                "$victim"
        # the destination itself, a directory on the way, a relative path from inside the
        # volume, a copy in through one, and a relative link up out of the volume
        sbx_expect 1 cp "$sid:/workspace/dist" "$vol/dist"
        [[ $stderr == *"'$vol/dist' is a symbolic link in one of the session's volumes"* ]]
        sbx_expect 1 cp "$sid:/workspace/dist" "$vol/lnk/x"
        (cd "$vol" && sbx_expect 1 cp "$sid:/workspace/dist" lnk)
        sbx_expect 1 cp "$vol/lnk/secret" "$sid:/workspace/"
        sbx_expect 1 cp "$vol/up/${victim#/}/secret" "$sid:/workspace/"
        sbx_expect 1 exec "$sid" test -e /workspace/secret
        [ "$(ls -A "$victim")" = secret ] || fail "written through the link: $(ls -A "$victim")"
        # positive controls: a real directory of the volume takes a copy, and the same link made
        # by the caller outside the volume is followed (the write the refusals above prevent)
        sbx_ok cp "$sid:/workspace/dist" "$vol/real"
        [ -f "$vol/real/dist/payload" ]
        ln -s "$victim" "$BATS_TEST_TMPDIR/own-link"
        sbx_ok cp "$sid:/workspace/dist" "$BATS_TEST_TMPDIR/own-link"
        [ -f "$victim/dist/payload" ]
        sbx_ok cp "$BATS_TEST_TMPDIR/own-link/secret" "$sid:/workspace/"
        # the volume is the directory mounted, not whatever its path names later
        mv "$vol" "$vol.moved"
        ln -s "$victim" "$vol"
        sbx_expect 1 cp "$sid:/workspace/dist" "$vol.moved/lnk/y"
        sbx_expect 1 cp "$vol.moved/lnk/secret" "$sid:/workspace/"
        [ ! -e "$victim/y" ] || fail "written through the link after the volume moved"
        # a state without the volumes' record (an older sbx's): cp refuses the session
        sed -i '/^volume/d' "$SBX_RUNTIME_DIR/$sid/state"
        sbx_expect 4 cp "$sid:/workspace/dist" "$BATS_TEST_TMPDIR/later"
        [[ $stderr == *"did not record its volumes"* ]] || fail "stderr: $stderr"
}

@test "the disk limit bounds a copy in; a failed copy leaves no half file" {
        new_session --disk 8M
        head -c 12000000 /dev/zero >"$host/big"
        sbx_expect 1 cp --json "$host/big" "$sid:/workspace/big"
        [ "$(json .error.code)" = limit ]
        sbx_expect 1 exec "$sid" test -e /workspace/big
        # positive control: a file that fits goes in
        head -c 1000000 /dev/zero >"$host/small"
        sbx_ok cp "$host/small" "$sid:/workspace/small"
}

@test "a read-only directory is copied in with its content, its mode kept" {
        new_session
        mkdir -p "$host/ro/sub"
        echo x >"$host/ro/sub/f"
        chmod 0555 "$host/ro/sub"
        chmod 0711 "$host/ro"
        # the session's side has no capability to write into a directory that forbids it
        sbx_ok cp "$host/ro" "$sid:/tmp/"
        in_sbx 'cat /tmp/ro/sub/f && stat -c %a /tmp/ro /tmp/ro/sub'
        [ "$output" = $'x\n711\n555' ] || fail "$output"
        # a copy of it that fails at its very end (a name too long for the rename) leaves
        # nothing: its directories get their modes only once it is whole, so the removal of a
        # failed one never meets a 0555 directory it cannot empty
        sbx_expect 1 cp "$host/ro" "$sid:/workspace/$(printf 'x%.0s' $(seq 300))"
        in_sbx 'ls -A /workspace'
        [ -z "$output" ] || fail "left in the session: $output"
}

@test "a copy in that runs out of space mid-tree leaves nothing behind" {
        new_session --disk 8M
        mkdir -p "$host/tree/sub"
        local i
        for i in 1 2 3 4; do
                head -c 3000000 /dev/zero >"$host/tree/sub/f$i"
        done
        sbx_expect 1 cp --json "$host/tree" "$sid:/workspace/"
        [ "$(json .error.code)" = limit ]
        [[ "$(json .error.message)" == *"(the disk limit)"* ]] || fail "$output"
        sbx_expect 1 cp "$host/tree" "$sid:/workspace/named"
        in_sbx 'ls -A /workspace'
        [ -z "$output" ] || fail "left in the session after a failed copy: $output"
        # positive control: the same tree, smaller, goes in whole under either name
        for i in 1 2 3 4; do
                head -c 500000 /dev/zero >"$host/tree/sub/f$i"
        done
        sbx_ok cp "$host/tree" "$sid:/workspace/"
        sbx_ok cp "$host/tree" "$sid:/workspace/named"
        in_sbx 'ls -A /workspace; cat /workspace/tree/sub/* /workspace/named/sub/* | wc -c'
        [ "$output" = $'named\ntree\n4000000' ] || fail "$output"
}

@test "a copy out that fills the host's file system leaves nothing behind, blames no sbx limit" {
        [ "$(id -u)" -eq 0 ] || skip "mounting a small file system needs root"
        new_session
        in_sbx 'mkdir -p /workspace/t/sub && for i in 1 2 3; do head -c 400000 /dev/zero >/workspace/t/sub/f$i; done'
        local small=$BATS_TEST_TMPDIR/small
        mkdir -p "$small"
        mount -t tmpfs -o size=1m tmpfs "$small"
        sbx_cleanup_mounts+=("$small")
        sbx_expect 1 cp --json "$sid:/workspace/t" "$small/"
        [ -z "$(ls -A "$small")" ] || fail "left behind: $(ls -AR "$small")"
        [ "$(json .error.code)" = limit ]
        [[ "$(json .error.message)" == *"No space left on device"* ]] || fail "$output"
        [[ "$(json .error.message)" != *"disk limit"* ]] || fail "blames the disk limit: $output"
        sbx_expect 1 cp "$sid:/workspace/t" "$small/named"
        [ -z "$(ls -A "$small")" ] || fail "left behind: $(ls -A "$small")"
        # positive control: what fits comes out whole
        in_sbx 'rm /workspace/t/sub/f3'
        sbx_ok cp "$sid:/workspace/t" "$small/"
        [ "$(cat "$small"/t/sub/* | wc -c)" = 800000 ] && [ "$(ls -A "$small")" = t ] ||
                fail "$(ls -AR "$small")"
}

@test "a copy out interrupted by SIGINT or SIGTERM leaves nothing; a retry then succeeds" {
        new_session
        in_sbx 'head -c 48000000 /dev/zero >/workspace/big'
        local sig pid interrupted=0 entries rc
        shopt -s nullglob dotglob
        for sig in INT TERM INT TERM; do
                # a background job of a script ignores SIGINT: its default is restored
                env --default-signal="$sig" "$SBX" cp "$sid:/workspace/big" "$host/big" &
                pid=$!
                # the signal goes the moment the host side creates anything
                entries=()
                while kill -0 "$pid" 2>/dev/null && [ ${#entries[@]} -eq 0 ]; do
                        entries=("$host"/*)
                done
                kill -"$sig" "$pid" 2>/dev/null || true
                rc=0
                wait "$pid" || rc=$?
                entries=("$host"/*)
                if [ "$rc" -eq 0 ]; then # done before the signal came: whole
                        [ "$(stat -c %s "$host/big")" = 48000000 ] || fail "exit 0, yet partial"
                        rm "$host/big"
                        continue
                fi
                [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: exit $rc"
                [ ${#entries[@]} -eq 0 ] || fail "SIG$sig left: $(ls -la "$host")"
                interrupted=$((interrupted + 1))
        done
        [ "$interrupted" -gt 0 ] || fail "no copy was interrupted"
        sbx_ok cp "$sid:/workspace/big" "$host/big"
        [ "$(stat -c %s "$host/big")" = 48000000 ]
}

@test "bad input: sides, arguments, missing paths, existing targets, sessions, a paused one" {
        new_session
        echo x >"$host/f"
        sbx_expect 2 cp
        sbx_expect 2 cp "$host/f"
        sbx_expect 2 cp "$host/f" "$host/g"               # no session side
        sbx_expect 2 cp "$sid:/a" "$sid:/b"               # two session sides
        sbx_expect 2 cp "$host/f" "$sid:/x" extra
        sbx_expect 2 cp "$host/f" "$sid:"
        sbx_expect 1 cp --json "$sid:/workspace/missing" "$host/"
        [ "$(json .error.code)" = not_found ]
        sbx_expect 1 cp "$host/missing" "$sid:/workspace/"
        sbx_ok cp "$host/f" "$sid:/workspace/f"
        sbx_expect 1 cp --json "$host/f" "$sid:/workspace/f"
        [ "$(json .error.code)" = exists ]
        sbx_ok cp "$sid:/workspace/f" "$host/g"
        sbx_expect 1 cp "$sid:/workspace/f" "$host/g"     # never replaced
        mkdir "$host/d" "$host/d/f"
        sbx_expect 1 cp --json "$sid:/workspace/f" "$host/d"
        [ "$(json .error.code)" = exists ]
        [ "$(ls -A "$host")" = $'d\nf\ng' ] && [ "$(ls -A "$host/d")" = f ] || fail "$(ls -AR "$host")"
        sbx_expect 3 cp "$host/f" sb_0000000000000000:/x
        sbx_expect 3 cp "$host/f" nosuchname:/x
        sbx_ok pause "$sid"
        sbx_expect 1 cp --json "$host/f" "$sid:/workspace/h"
        [ "$(json .error.code)" = paused ]
        sbx_ok resume "$sid"
}
