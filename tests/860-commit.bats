#!/usr/bin/env bats
# sbx commit: an --image session's writable layer becomes a new image on the session's image:
# additions, changes, deletions (whiteouts) and replaced directories (opaque) carried over;
# what a hostile session plants (setuid bits, fifos, names that read as whiteouts, symlinks
# out, hard links, a huge sparse file) neutralised or refused; refused while commands run
# unless --pause; bad input; nothing left in the store on failure.

BATS_TEST_TIMEOUT=300
load helpers

setup_file() {
        [ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/bootstrap)"
        fx=$(mktemp -d /tmp/sbx-commit.XXXXXX)
        chmod 0755 "$fx"
        export fx
        local d=$fx/rootfs
        mkdir -p "$d/bin" "$d/etc" "$d/data" "$d/opq" "$d/gone"
        busybox_root "$d" sh ls cat echo rm mkdir chmod stat ln mkfifo cp sleep test truncate touch head
        echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
        echo hello >"$d/data/a"
        echo bee >"$d/data/b"
        echo old >"$d/opq/old"
        echo x >"$d/gone/x"
        tar -C "$d" -cf "$fx/rootfs.tar" .
        chmod -R a+rX "$fx"
        setup_users
}

teardown_file() {
        [ -n "${fx:-}" ] && rm -rf "$fx"
        teardown_users
        return 0
}

setup() {
        setup_sbx
        setup_sbx_user
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        store=$SBX_IMAGE_STORE
        sbx_ok image import bb:1 "$fx/rootfs.tar"
}
teardown() { teardown_sbx; }

# The store holds only what it held before a failed commit: no tag, record or layer more,
# nothing in tmp/.
@test "commit, then create from it: additions, changes, deletions, replaced directories" {
        new_session --image bb:1
        in_sbx 'echo new >/data/new && echo more >>/data/a && rm /data/b && rm -r /gone &&
                rm -r /opq && mkdir /opq && echo fresh >/opq/fresh && mkdir -p /opt/x &&
                echo y >/opt/x/y'
        sbx_ok commit "$sid" bb:2
        [[ $output =~ ^sha256:[0-9a-f]{64}$ ]] || fail "commit printed '$output'"
        local img=$output
        sbx_ok image list --json
        [ "$(json '.[] | select(.tag == "2") | "\(.name) \(.layers)"')" = "bb 2" ] ||
                fail "image list: $output"
        [ "$(json '.[] | select(.tag == "2") | .id' | sed 's/^sha256://')" = "${img#sha256:}" ]
        sbx_ok run --image bb:2 -- sh -c 'cat /data/new /data/a /opq/fresh /opt/x/y;
                ls /opq | xargs; test -e /data/b && echo b-present; test -e /gone && echo gone-present; true'
        [ "$output" = "$(printf 'new\nhello\nmore\nfresh\ny\nfresh')" ] || fail "got: $output"
        # the base is unchanged
        sbx_ok run --image bb:1 -- sh -c 'cat /data/b /opq/old; test -e /data/new && echo new-present; true'
        [ "$output" = "$(printf 'bee\nold')" ] || fail "base changed: $output"
}

@test "--json, the same layer twice is the same image, and the audit log records it" {
        new_session --image bb:1
        in_sbx 'echo z >/data/z'
        sbx_ok commit --json "$sid" bb:j
        json_doc
        json '.image == "bb" and .tag == "j" and (.id | test("^sha256:[0-9a-f]{64}$")) and
              (.layer | test("^sha256:[0-9a-f]{64}$")) and (.base | startswith("image:")) and
              .layer_bytes > 0 and .entries >= 2' >/dev/null || fail "json: $output"
        local id
        id=$(json .id)
        sbx_ok commit --json "$sid" bb:k
        [ "$(json .id)" = "$id" ] || fail "the same layer made another image: $output"
        sbx_ok log "$sid"
        [ "$(grep -c '"event":"commit"' <<<"$output")" = 2 ] || fail "audit: $output"
        grep '"event":"commit"' <<<"$output" | head -1 | jq -e '.ref == "bb:j" and (.image | length) == 64' >/dev/null
}

@test "the committed image survives the removal of its base's tag" {
        new_session --image bb:1
        in_sbx 'echo keep >/data/keep'
        sbx_ok commit "$sid" bb:2
        sbx_ok destroy "$sid"
        sbx_ok image rm bb:1
        sbx_ok run --image bb:2 -- cat /data/keep /data/a
        [ "$output" = "$(printf 'keep\nhello')" ]
}

@test "hostile: setuid bits stripped, fifos dropped, .wh. names not read as whiteouts" {
        new_session --image bb:1
        in_sbx 'cp /bin/busybox /bin/sush && chmod 6755 /bin/sush && mkfifo /data/fifo &&
                echo trap >/data/.wh.a && mkdir /data/d && chmod 2775 /data/d'
        # positive control: the session has them
        in_sbx 'stat -c "%a %F" /bin/sush /data/fifo /data/d; cat /data/.wh.a'
        [ "$output" = "$(printf '6755 regular file\n644 fifo\n2775 directory\ntrap')" ] ||
                fail "control: $output"
        sbx_ok commit "$sid" bb:h
        sbx_ok run --image bb:h -- sh -c 'stat -c "%a" /bin/sush /data/d; cat /data/a;
                ls -a /data | xargs'
        [ "$output" = "$(printf '755\n775\nhello\n. .. a b d')" ] || fail "got: $output"
}

@test "hostile: symlinks stay links that resolve inside; a hard link is a copy" {
        new_session --image bb:1
        [ -r /etc/hostname ] || skip "the host has no /etc/hostname"
        in_sbx 'ln -s /etc/hostname /data/host && ln -s / /data/root && ln -s ../../../.. /data/up &&
                ln /data/a /data/hl && echo stamp >/etc/only-here'
        sbx_ok commit --json "$sid" bb:l
        # a link to / is not followed by the walk: the layer holds a few entries, not the host
        [ "$(json .entries)" -lt 20 ] || fail "the walk followed a link: $output"
        sbx_ok run --image bb:l -- sh -c 'ls /data/root/data | xargs; cat /data/host 2>&1;
                cat /data/up/etc/only-here; echo x >>/data/hl; cat /data/a'
        [[ $output == "a b hl host root up"* ]] || fail "got: $output"
        [[ $output != *"$(cat /etc/hostname)"* ]] || fail "the link read the host's file: $output"
        [[ $output == *"stamp"*"hello" ]] || fail "got: $output"
        [[ $output != *"hello"$'\n'"x" ]] || fail "the hard link still shares its inode"
}

@test "a layer past the session's disk limit is refused; nothing is left in the store" {
        new_session --image bb:1 --disk 64M
        # each under the file size limit, together past the disk limit, using no disk at all
        in_sbx 'truncate -s 40M /data/s1 /data/s2 && stat -c %s /data/s1 /data/s2'
        [ "$output" = "$(printf '41943040\n41943040')" ] || fail "control: $output"
        local before
        before=$(store_snapshot)
        sbx_expect 1 commit --json "$sid" bb:big
        json_doc
        [ "$(json .error.code)" = limit ] || fail "$output"
        [ "$(store_snapshot)" = "$before" ] || fail "left in the store:" "$(store_snapshot)"
        sbx_expect 1 run --image bb:big -- true
}

@test "refused while a command runs, unless --pause (which resumes after)" {
        new_session --image bb:1
        "$SBX" exec "$sid" -- sleep 3 >/dev/null 2>&1 &
        local pid=$!
        wait_until 5 sh -c "cat /proc/$(state_key init_pid)/task/*/children | grep -q ." || true
        sleep 0.5
        sbx_expect 1 commit --json "$sid" bb:busy
        [ "$(json .error.code)" = busy ] || fail "$output"
        sbx_expect 1 commit "$sid" bb:busy
        [[ $stderr == *"--pause"* ]] || fail "$stderr"
        [ "$(echo "$stderr" | wc -l)" = 1 ]
        sbx_ok commit --pause "$sid" bb:p
        # resumed: the exec finishes, a new one runs
        wait "$pid"
        in_sbx 'true'
        # a session the user paused stays paused
        sbx_ok pause "$sid"
        sbx_ok commit --pause "$sid" bb:p2
        sbx_expect 1 pause "$sid"
        sbx_ok resume "$sid"
}

paused_now() { "$SBX" stats --json "$sid" 2>/dev/null | grep -q '"paused":true'; }
running_now() { "$SBX" stats --json "$sid" 2>/dev/null | grep -q '"paused":false'; }

# A layer whose commit keeps the session frozen for a while (~0.5 s here), and a commit of it
# with --pause in the background, seen frozen: $pid.
commit_frozen() {
        in_sbx 'head -c 300000000 /dev/urandom >/data/big'
        "$SBX" commit --pause "$sid" "$1" >/dev/null 2>&1 &
        pid=$!
        wait_until 10 paused_now || fail "the commit never froze the session"
}

@test "a commit --pause killed half-way leaves the session running, not frozen" {
        new_session --image bb:1
        local pid
        commit_frozen bb:k
        kill -KILL "$pid"
        local rc=0
        wait "$pid" || rc=$?
        [ "$rc" = 137 ] || fail "the commit was not killed half-way (status $rc)"
        # its supervisor thaws what the dead commit held: no one has to resume it
        wait_until 5 running_now || fail "still frozen after the commit died"
        in_sbx 'echo alive'
        [ "$output" = alive ]
        # the next commit --pause freezes and resumes it as its own
        sbx_ok commit --pause "$sid" bb:k2
        sbx_expect 1 resume "$sid"
        [[ $stderr == *"not paused"* ]] || fail "$stderr"
        sbx_ok log "$sid"
        [ "$(grep -c '"event":"pause"' <<<"$output")" = 2 ] || fail "$output"
        [ "$(grep -c '"event":"resume"' <<<"$output")" = 2 ] || fail "$output"
}

@test "two commits --pause at once: the first one's end does not thaw the second one's snapshot" {
        new_session --image bb:1
        local pid a b
        commit_frozen bb:a
        a=$pid
        kill -STOP "$a"
        "$SBX" commit --pause "$sid" bb:b >/dev/null 2>&1 &
        b=$!
        # b reads the layer (its fds reach into /upper), so it has asked for its freeze, its
        # first step; stopped there, it holds the freeze while a ends
        local i=0
        until ls -l "/proc/$b/fd" 2>/dev/null | grep -q ' /upper/'; do
                [ $((i += 1)) -lt 2000 ] || break
                sleep 0.005
        done
        kill -STOP "$b"
        # stopped, not ended (a zombie takes the signal too): its freeze is still asked for
        grep -q '^State:.*stopped' "/proc/$b/status" ||
                fail "the second commit ended before it was stopped: $(grep State "/proc/$b/status")"
        kill -CONT "$a"
        local rc=0 frozen=yes
        wait "$a" || rc=$?
        paused_now || frozen=no
        kill -CONT "$b" # before any verdict: a stopped commit would hang the teardown
        wait "$b" || fail "the second commit failed"
        [ "$rc" = 0 ] || fail "the first commit failed ($rc)"
        [ "$frozen" = yes ] || fail "the first commit's end thawed the session under the second"
        running_now || fail "still frozen after both"
        sbx_ok log "$sid"
        [ "$(grep -c '"event":"pause"' <<<"$output")" = 1 ] || fail "$output"
        [ "$(grep -c '"event":"resume"' <<<"$output")" = 1 ] || fail "$output"
}

@test "the user's pause during a commit --pause is the user's: the session stays paused after" {
        new_session --image bb:1
        local pid
        commit_frozen bb:u
        sbx_ok pause "$sid" # frozen by the commit already: from now on by the user
        wait "$pid" || fail "the commit failed"
        paused_now || fail "the commit resumed what the user paused"
        sbx_ok resume "$sid"
        in_sbx 'echo alive'
        # and a resume during it thaws at once; the commit's end does not freeze it again
        commit_frozen bb:u2
        sbx_ok resume "$sid"
        running_now || fail "resume did not thaw it"
        wait "$pid" || fail "the commit failed"
        running_now || fail "frozen again after the commit"
}

@test "an existing tag is not moved unless --replace; the same image again is fine" {
        new_session --image bb:1
        in_sbx 'echo 1 >/data/v'
        sbx_ok commit "$sid" bb:v
        local first=$output
        sbx_ok commit "$sid" bb:v # the same layer: the same image, no error
        [ "$output" = "$first" ]
        in_sbx 'echo 2 >/data/v'
        sbx_expect 1 commit --json "$sid" bb:v
        [ "$(json .error.code)" = exists ] || fail "$output"
        sbx_expect 1 commit "$sid" bb:1 # the base's own tag
        sbx_ok run --image bb:v -- cat /data/v
        [ "$output" = 1 ]
        sbx_ok commit --replace "$sid" bb:v
        [ "$output" != "$first" ]
        sbx_ok run --image bb:v -- cat /data/v
        [ "$output" = 2 ]
}

@test "bad names, unknown sessions, other bases and arguments" {
        new_session --image bb:1
        local before
        before=$(store_snapshot)
        local bad
        for bad in 'Bad:Name' '' 'a b' '../x' 'x:' 'x:a/b'; do
                sbx_expect 2 commit "$sid" "$bad"
        done
        sbx_expect 2 commit --json "$sid" 'UP'
        [ "$(json .error.code)" = usage ]
        sbx_expect 3 commit sb_0123456789abcdef bb:x
        sbx_expect 3 commit --json no-such-name bb:x
        [ "$(json .error.code)" = session_not_found ]
        sbx_expect 2 commit "$sid"
        sbx_expect 2 commit
        sbx_expect 2 commit "$sid" bb:x extra
        sbx_expect 2 commit --bogus "$sid" bb:x
        # a read-only session has no layer to commit (host-base sessions: 863-commit-host)
        local ro
        sbx_ok create --read-only
        ro=$output
        sbx_expect 4 commit --json "$ro" bb:x
        [ "$(json .error.code)" = unsupported ]
        [ "$(store_snapshot)" = "$before" ] || fail "left in the store:" "$(store_snapshot)"
}

@test "unprivileged: commit into the user's own store; another user cannot commit the session" {
        user_sbx_expect 0 image import bb:1 "$fx/rootfs.tar"
        user_sbx_expect 0 create --image bb:1
        local usid=$output
        user_sbx_expect 0 exec "$usid" sh -c 'echo u >/data/u && rm /data/b &&
                cp /bin/busybox /bin/s && chmod 4755 /bin/s'
        other_sbx_expect 3 commit "$usid" bb:stolen
        user_sbx_expect 0 commit "$usid" bb:2
        user_sbx_expect 0 run --image bb:2 -- sh -c 'cat /data/u; test -e /data/b && echo b;
                stat -c %a /bin/s'
        [ "$output" = "$(printf 'u\n755')" ] || fail "got: $output"
        # it went to the user's store, not root's
        [ -d "$users_base/$test_user/$BATS_TEST_NUMBER/home/.local/share/sbx/layers" ]
        user_sbx_expect 0 destroy "$usid"
}
