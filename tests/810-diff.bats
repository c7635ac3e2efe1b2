#!/usr/bin/env bats
# sbx diff: additions, changes and deletions in each part of a host-base session's writable
# layer (/, /etc, /workspace, /tmp, and the /usr overlay with its whiteouts), names that are
# hostile to a line format, symlinks planted to lure the walk out of the layer, a paused
# session, sessions on an image (several layers, whiteouts, opaque directories) and on a
# --rootfs directory, and bad input.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

@test "a fresh session has no changes" {
        new_session
        sbx_ok diff "$sid"
        [ -z "$output" ]
        sbx_ok diff --json "$sid"
        [ "$output" = "[]" ]
}

@test "A, C and D in every part of the layer, sorted by path" {
        new_session
        in_sbx 'echo x >/workspace/a && mkdir -p /workspace/d/e && echo >>/etc/hosts &&
                rm /etc/hostname && touch /usr/share/sbx-new && mkdir /opt2 && echo y >/tmp/t &&
                rm /usr/share/doc/bash/README.gz'
        sbx_ok diff "$sid"
        local want
        want=$(printf '%s\n' 'C /etc' 'D /etc/hostname' 'C /etc/hosts' 'A /opt2' 'C /tmp' \
                'A /tmp/t' 'C /usr/share' 'C /usr/share/doc' 'C /usr/share/doc/bash' \
                'D /usr/share/doc/bash/README.gz' 'A /usr/share/sbx-new' 'C /workspace' \
                'A /workspace/a' 'A /workspace/d' 'A /workspace/d/e')
        [ "$output" = "$want" ] || fail "diff:" "$output" "want:" "$want"
        sbx_ok diff --json "$sid"
        [ "$(json '[.[] | .kind + " " + .path] | join("\n")')" = "$want" ]
}

@test "a changed /usr file is C, not A; a file written back unchanged in content is still C" {
        new_session
        in_sbx 'touch /usr/share/doc/bash/copyright'
        sbx_ok diff "$sid"
        [[ $output == *"C /usr/share/doc/bash/copyright"* ]] || fail "$output"
}

@test "hostile names stay one line each, exact in JSON" {
        new_session
        in_sbx 'printf x >"/workspace/two
lines" && printf x >"/workspace/esc$(printf "\033")[31m" && printf x >/workspace/back\\slash'
        sbx_ok diff "$sid"
        [ "${#lines[@]}" -eq 4 ] || fail "not four lines: $output"
        [[ $output == *'A /workspace/two\x0alines'* ]]
        [[ $output == *'A /workspace/esc\x1b[31m'* ]]
        [[ $output == *'A /workspace/back\x5cslash'* ]]
        sbx_ok diff --json "$sid"
        json '[.[].path] | index("/workspace/two\nlines") != null'
}

@test "hostile: symlinks into the host and out of the layer are listed, never followed" {
        new_session
        canary "$BATS_TEST_TMPDIR/canary/secret"
        in_sbx 'ln -s / /workspace/root && ln -s ../../../../../../.. /workspace/up &&
                ln -s /etc/shadow /tmp/shadow && mkdir /workspace/real && ln -s "$1" /workspace/real/c' \
                "$BATS_TEST_TMPDIR/canary"
        sbx_ok diff "$sid"
        local want
        want=$(printf '%s\n' 'C /tmp' 'A /tmp/shadow' 'C /workspace' 'A /workspace/real' \
                'A /workspace/real/c' 'A /workspace/root' 'A /workspace/up')
        [ "$output" = "$want" ] || fail "diff:" "$output"
        # positive control: the walk does descend into real directories
        [[ $output == *"/workspace/real/c"* ]]
        [[ $output != *secret* ]] && [[ $output != *"/etc/passwd"* ]]
}

@test "hostile: a deep tree and many files are walked without a crash" {
        new_session
        in_sbx 'cd /workspace && for i in $(seq 1 300); do mkdir d && cd d; done; cd /workspace &&
                mkdir many && cd many && seq 1 3000 | xargs touch'
        sbx_ok diff "$sid"
        [ "$(grep -c '^A /workspace/many/' <<<"$output")" = 3000 ]
        grep -q '^A /workspace/d/d/d' <<<"$output"
        # 300 levels: the walk stops at 256 and says so
        [ "${lines[-1]}" = "[Results truncated at 100000 entries or 256 directory levels]" ]
        sbx_ok diff --json "$sid"
        [[ $stderr == *"warning"*"cut"* ]]
}

@test "a paused session can be diffed" {
        new_session
        in_sbx 'touch /workspace/f'
        sbx_ok pause "$sid"
        sbx_ok diff "$sid"
        [[ $output == *"A /workspace/f"* ]]
}

@test "bad input: arguments, sessions; --read-only sessions are refused with exit 4" {
        new_session
        sbx_expect 2 diff
        sbx_expect 2 diff "$sid" extra
        sbx_expect 2 diff --bogus "$sid"
        sbx_expect 3 diff sb_0000000000000000
        sbx_expect 3 diff --json '../x'
        [ "$(json .error.code)" = session_not_found ]
        new_session --read-only
        sbx_expect 4 diff --json "$sid"
        [ "$(json .error.code)" = unsupported ]
}

# A busybox root filesystem: /data (everyone may write) with a, b and sub/c; /opq/old.
mk_busybox_root() {
        local d=$1
        [ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/bootstrap)"
        mkdir -p "$d/bin" "$d/etc" "$d/data/sub" "$d/opq"
        busybox_root "$d" sh rm mkdir touch echo ln mkfifo
        echo hello >"$d/data/a"
        echo bee >"$d/data/b"
        echo c >"$d/data/sub/c"
        echo old >"$d/opq/old"
        chmod -R a+rwX "$d/data" "$d/opq"
        chmod 0755 "$d"
}

@test "an --image session: changes against the image's layers, whiteouts across layers" {
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        mk_busybox_root "$BATS_TEST_TMPDIR/r"
        tar -C "$BATS_TEST_TMPDIR/r" -cf "$BATS_TEST_TMPDIR/r.tar" .
        sbx_ok image import bb:1 "$BATS_TEST_TMPDIR/r.tar"
        new_session --image bb:1
        sbx_ok diff "$sid"
        [ -z "$output" ] || fail "a fresh image session has changes:" "$output"
        in_sbx 'echo more >>/data/a && rm /data/b && echo n >/data/new && rm -r /opq &&
                mkdir /opq && echo f >/opq/fresh && mkdir -p /opt/x && echo w >/workspace/w &&
                echo t >/tmp/t'
        sbx_ok diff "$sid"
        local want
        want=$(printf '%s\n' 'C /data' 'C /data/a' 'D /data/b' 'A /data/new' 'C /opq' \
                'A /opq/fresh' 'D /opq/old' 'A /opt' 'A /opt/x' 'C /tmp' 'A /tmp/t' \
                'C /workspace' 'A /workspace/w')
        [ "$output" = "$want" ] || fail "diff:" "$output" "want:" "$want"
        # a second layer (a commit) whose whiteout hides data/b: b made again is an addition
        sbx_ok commit "$sid" bb:2
        new_session --image bb:2
        sbx_ok diff "$sid"
        [ -z "$output" ] || fail "a fresh session of the commit has changes:" "$output"
        in_sbx 'echo again >/data/b && rm /data/new && rm /opq/fresh && echo x >>/data/sub/c'
        sbx_ok diff "$sid"
        want=$(printf '%s\n' 'C /data' 'A /data/b' 'D /data/new' 'C /data/sub' 'C /data/sub/c' \
                'C /opq' 'D /opq/fresh')
        [ "$output" = "$want" ] || fail "diff:" "$output" "want:" "$want"
}

@test "a --rootfs session: changes against the directory; a planted link is not followed" {
        local root=$BATS_TEST_TMPDIR/r
        mk_busybox_root "$root"
        new_session --rootfs "$root"
        sbx_ok diff "$sid"
        [ -z "$output" ] || fail "a fresh rootfs session has changes:" "$output"
        # the session's root owns the directory (a copy-up keeps the owner, which must be
        # mapped in the session)
        chown -R "$(state_key uid_start):$(state_key uid_start)" "$root/data"
        sbx_cleanup_dirs+=("$root")
        in_sbx 'echo more >>/data/a && rm /data/b && ln -s / /data/sub/up && mkdir /data/new'
        sbx_ok diff --json "$sid"
        [ "$(json '[.[] | .kind + " " + .path] | join(",")')" = \
                "C /data,C /data/a,D /data/b,A /data/new,C /data/sub,A /data/sub/up" ] ||
                fail "diff: $output"
        # the directory itself is unchanged
        [ "$(cat "$root/data/b")" = bee ]
}
