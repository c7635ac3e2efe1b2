#!/usr/bin/env bats
# sbx commit of a --rootfs session: the image records the directory as its base (a reference,
# never a copy) plus the committed layer; create --image stacks that layer over the directory
# as --rootfs does; the directory itself is never written; a vanished directory is a clear
# error at create; a read-only session is refused (exit 4).

BATS_TEST_TIMEOUT=300
load helpers

setup_file() {
        [ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/bootstrap)"
        fx=$(mktemp -d /tmp/sbx-commit-rootfs.XXXXXX)
        chmod 0755 "$fx"
        export fx
        local d=$fx/rootfs
        mkdir -p "$d/bin" "$d/etc" "$d/data"
        busybox_root "$d" sh ls cat echo rm mkdir chmod stat cp xargs test true
        echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
        echo hello >"$d/data/a"
        echo bee >"$d/data/b"
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
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        store=$SBX_IMAGE_STORE
        root=$BATS_TEST_TMPDIR/base
        cp -a "$fx/rootfs" "$root"
}

# A session on the directory $root. As root a --rootfs directory is used as it is (no
# idmapping) and a copy-up keeps the owner, which must be mapped in the session: the session's
# root owns it (as in 810-diff).
rootfs_session() {
        new_session --rootfs "$root"
        chown -R "$(state_key uid_start):$(state_key uid_start)" "$root"
        sbx_cleanup_dirs+=("$root")
}
teardown() { teardown_sbx; }

# The directory's content, to show it unchanged.
tree_sum() { (cd "$1" && find . -printf '%p %m %s\n' | sort && cat data/*) | sha256sum; }

@test "commit a --rootfs session, create from it: additions, changes, deletions; the dir is untouched" {
        local before
        before=$(tree_sum "$root")
        rootfs_session
        in_sbx 'echo new >/data/new && echo more >>/data/a && rm /data/b && mkdir /opt &&
                echo y >/opt/y && cp /bin/busybox /bin/sush && chmod 4755 /bin/sush'
        sbx_ok commit --json "$sid" rb:1
        json_doc
        [ "$(json .base)" = "rootfs:$root" ] || fail "commit: $output"
        sbx_ok destroy "$sid"
        # the image is the layer only: the directory is referenced, not copied
        sbx_ok image list --json
        [ "$(json '.[] | select(.name == "rb") | "\(.layers) \(.base)"')" = "1 rootfs:$root" ] ||
                fail "image list: $output"
        [ "$(json '.[] | select(.name == "rb") | .size')" -lt 4000000 ] || fail "copied: $output"
        sbx_ok image list
        [[ $output == *"rb "*"(on $root)"* ]] || fail "image list: $output"
        sbx_ok run --image rb:1 -- sh -c 'cat /data/new /data/a /opt/y; ls /data | xargs;
                stat -c %a /bin/sush; test -e /data/b && echo b-present; true'
        [ "$output" = "$(printf 'new\nhello\nmore\ny\na new\n755')" ] || fail "got: $output"
        # what the image's sessions write stays theirs; the directory never changes
        new_session --image rb:1
        in_sbx 'echo again >/data/a && rm /data/new && echo z >/bin/cat2'
        sbx_ok diff "$sid"
        [ "$output" = "$(printf 'C /bin\nA /bin/cat2\nC /data\nC /data/a\nD /data/new')" ] || fail "diff: $output"
        sbx_ok destroy "$sid"
        [ "$(tree_sum "$root")" = "$before" ] || fail "the --rootfs directory changed"
        [ ! -e "$root/data/new" ] && [ -e "$root/data/b" ]
}

@test "a commit of a session of such an image keeps the directory as its base" {
        rootfs_session
        in_sbx 'echo one >/data/one'
        sbx_ok commit "$sid" rb:1
        sbx_ok destroy "$sid"
        new_session --image rb:1
        in_sbx 'echo two >/data/two && rm /data/a'
        sbx_ok commit --json "$sid" rb:2
        [[ $(json .base) == image:* ]] || fail "commit: $output"
        sbx_ok image list --json
        [ "$(json '.[] | select(.tag == "2") | "\(.layers) \(.base)"')" = "2 rootfs:$root" ] ||
                fail "image list: $output"
        sbx_ok run --image rb:2 -- sh -c 'cat /data/one /data/two /data/b; test -e /data/a && echo a; true'
        [ "$output" = "$(printf 'one\ntwo\nbee')" ] || fail "got: $output"
}

@test "the directory gone or replaced by a file: a clear error at create, nothing left" {
        local d=$root
        rootfs_session
        in_sbx 'echo k >/data/k'
        sbx_ok commit "$sid" rb:gone
        sbx_ok destroy "$sid"
        mv "$d" "$d.moved"
        sbx_expect 1 create --json --image rb:gone
        [ "$(json .error.code)" = not_found ] || fail "$output"
        sbx_expect 1 create --image rb:gone
        [[ $stderr == *"based on the directory '$d'"* ]] || fail "$stderr"
        [ "$(echo "$stderr" | wc -l)" = 1 ] || fail "$stderr"
        touch "$d"
        sbx_expect 1 run --image rb:gone -- true
        [[ $stderr == *"no longer a directory"* ]] || fail "$stderr"
        sbx_ok list --json
        [ "$(json length)" = 0 ] || fail "left a session: $output"
        # back in place: it works again
        rm "$d" && mv "$d.moved" "$d"
        sbx_ok run --image rb:gone -- cat /data/k /data/a
        [ "$output" = "$(printf 'k\nhello')" ]
}

@test "a record naming a relative or '..' base is damaged, never used" {
        rootfs_session
        in_sbx 'echo x >/data/x'
        sbx_ok commit "$sid" rb:t
        local rec
        rec=$(grep -l '"base"' "$store"/images/*.json)
        [ -n "$rec" ] || fail "no record with a base"
        # positive control: the record as written is used
        sbx_ok run --image rb:t -- cat /data/x
        for bad in 'rootfs:etc' "rootfs:$root/../base" "rootfs:$root/" 'rootfs:/' 'host:' 'HOST' "$root"; do
                jq -c --arg b "$bad" '.base = $b' "$rec" >"$rec.new" && mv "$rec.new" "$rec"
                sbx_expect 125 run --image rb:t -- true
                [[ $stderr == *"damaged"* ]] || fail "$bad: $stderr"
        done
}

@test "a read-only session is refused, nothing left in the store" {
        sbx_ok create --read-only
        sid=$output
        sbx_expect 4 commit --json "$sid" rb:ro
        [ "$(json .error.code)" = unsupported ] || fail "$output"
        [[ $(json .error.message) == *"read-only"* ]] || fail "$output"
        [ -z "$(store_snapshot)" ] || fail "left in the store:" "$(store_snapshot)"
}

@test "read-only sessions of such an image: the layer and the directory read, nothing written" {
        rootfs_session
        in_sbx 'echo new >/data/new && rm /data/b'
        sbx_ok commit "$sid" rb:1
        sbx_expect 1 run --read-only --image rb:1 -- sh -c 'cat /data/new /data/a; ls /data | xargs;
                echo x >/data/x'
        [ "$output" = "$(printf 'new\nhello\na new')" ] || fail "got: $output"
        [[ $stderr == *"Read-only file system"* ]] || fail "$stderr"
        [ ! -e "$root/data/x" ]
}

@test "unprivileged: the user's own directory as the base, in the user's own store" {
        setup_sbx_user
        local home=$users_base/$test_user/$BATS_TEST_NUMBER/home
        as_user cp -r "$fx/rootfs" "$home/r"
        user_sbx_expect 0 create --rootfs "$home/r"
        local usid=$output
        user_sbx_expect 0 exec "$usid" sh -c 'echo u >/data/u && rm /data/b &&
                cp /bin/busybox /bin/s && chmod 4755 /bin/s'
        other_sbx_expect 3 commit "$usid" rb:stolen
        user_sbx_expect 0 commit --json "$usid" rb:u
        [ "$(json .base)" = "rootfs:$home/r" ] || fail "$output"
        user_sbx_expect 0 run --image rb:u -- sh -c 'cat /data/u /data/a; test -e /data/b && echo b;
                stat -c %a /bin/s'
        [ "$output" = "$(printf 'u\nhello\n755')" ] || fail "got: $output"
        [ -e "$home/r/data/b" ] && [ ! -e "$home/r/data/u" ]
        [ -d "$home/.local/share/sbx/layers" ]
        user_sbx_expect 0 destroy "$usid"
}
