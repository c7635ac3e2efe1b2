#!/usr/bin/env bats
# sbx commit of a host-base session: the image records base "host" plus one layer holding what
# the session put in its root (/opt, /root, /home, new top-level dirs) and its /usr overlay's
# upper (whiteouts for what it deleted there); sbx's own files (the generated /etc, the /bin
# links, /run, /var/tmp, /tmp, /workspace) are never committed. A session of such an image is
# built as a host-base session with the layers' usr/ over the host's /usr and their root over
# the generated one; commits of it chain. The host's /usr is never written. Hostile entries
# are neutralised; failures leave nothing in the store.

BATS_TEST_TIMEOUT=300
load helpers

setup_file() { setup_users; }
teardown_file() {
        teardown_users
        return 0
}

setup() {
        setup_sbx
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        store=$SBX_IMAGE_STORE
}
teardown() { teardown_sbx; }

# A host-base session's work, committed as hb:1 (the session is left in $sid).
host_commit() {
        new_session "$@"
        in_sbx 'mkdir -p /opt/app /root/.config /home/u /usr/local/bin &&
                echo x >/opt/app/x && echo y >/root/.config/y && echo h >/home/u/f &&
                printf "#!/bin/sh\necho tool-ran\n" >/usr/local/bin/tool &&
                chmod 755 /usr/local/bin/tool && echo mine >/usr/bin/env &&
                echo gone >/opt/app/gone && rm /opt/app/gone &&
                echo e >/etc/added && echo r >/run/r && echo v >/var/tmp/v &&
                echo w >/workspace/w && echo t >/tmp/t'
        sbx_ok commit --json "$sid" hb:1
        json_doc
}

@test "commit a host-base session, create from it: its files, its deletion, not sbx's; the host's /usr untouched" {
        local before
        before=$(sha256sum /usr/bin/env)
        host_commit
        [ "$(json .base)" = host ] || fail "commit: $output"
        sbx_ok destroy "$sid"
        [ "$(sha256sum /usr/bin/env)" = "$before" ] || fail "the host's /usr/bin/env changed"
        sbx_ok image list --json
        [ "$(json '.[] | select(.name == "hb") | "\(.layers) \(.base)"')" = "1 host" ] ||
                fail "image list: $output"
        sbx_ok image list
        [[ $output == *"hb "*"(on the host base)"* ]] || fail "image list: $output"
        new_session --image hb:1
        in_sbx 'cat /opt/app/x /root/.config/y /home/u/f /usr/bin/env; /usr/local/bin/tool
                for f in /opt/app/gone /etc/added /run/r /var/tmp/v /workspace/w /tmp/t; do
                        test -e $f && echo "present: $f"; done; true'
        [ "$output" = "$(printf 'x\ny\nh\nmine\ntool-ran')" ] || fail "got: $output"
        # the rest of /usr is the host's; the generated /etc is there as in any session
        in_sbx 'cmp /usr/bin/sha256sum /usr/bin/sha256sum && grep -c "^root:" /etc/passwd &&
                test -L /bin && test -d /run && test -d /var/tmp'
        # what the image's sessions write stays theirs, the host's /usr is not written
        in_sbx 'echo again >/usr/bin/env && echo n >/opt/app/n'
        sbx_ok destroy "$sid"
        [ "$(sha256sum /usr/bin/env)" = "$before" ] || fail "the host's /usr/bin/env changed"
        sbx_ok run --image hb:1 -- sh -c 'cat /usr/bin/env; test -e /opt/app/n && echo n; true'
        [ "$output" = mine ] || fail "got: $output"
}

@test "a commit of a session of such an image chains: deletions in / and /usr honoured, diff sees both" {
        host_commit
        sbx_ok destroy "$sid"
        new_session --image hb:1
        in_sbx 'rm /opt/app/x /usr/local/bin/tool && echo z >/opt/app/z && echo more >>/root/.config/y'
        sbx_ok diff "$sid"
        # (the directories above a change are copied up: changed)
        [ "$output" = "$(printf 'C /opt\nC /opt/app\nD /opt/app/x\nA /opt/app/z\nC /root\nC /root/.config\nC /root/.config/y\nC /usr/local\nC /usr/local/bin\nD /usr/local/bin/tool')" ] ||
                fail "diff: $output"
        sbx_ok commit --json "$sid" hb:2
        [[ $(json .base) == image:* ]] || fail "commit: $output"
        sbx_ok destroy "$sid"
        sbx_ok image list --json
        [ "$(json '.[] | select(.tag == "2") | "\(.layers) \(.base)"')" = "2 host" ] ||
                fail "image list: $output"
        sbx_ok run --image hb:2 -- sh -c 'ls /opt/app | xargs; cat /root/.config/y /usr/bin/env;
                test -e /usr/local/bin/tool && echo tool; true'
        [ "$output" = "$(printf 'z\ny\nmore\nmine')" ] || fail "got: $output"
        # the first image is unchanged
        sbx_ok run --image hb:1 -- sh -c 'cat /opt/app/x; /usr/local/bin/tool'
        [ "$output" = "$(printf 'x\ntool-ran')" ] || fail "got: $output"
}

# (a 0/0 device, which the kernel would let anybody make, is refused by the session's seccomp
# filter; the writer drops one in the root all the same: tests/unit/test_layertar.c)
@test "hostile entries: setuid cleared, fifos and whiteout names dropped, nothing hidden" {
        new_session
        in_sbx 'mkdir -p /opt/h /usr/local/bin && cp /usr/bin/true /opt/h/su && chmod 4755 /opt/h/su &&
                cp /usr/bin/true /usr/local/bin/su2 && chmod 6755 /usr/local/bin/su2 &&
                mkfifo /opt/h/fifo && : >/opt/h/.wh.keep &&
                : >/usr/bin/.wh.sh && mkdir /opt/h/.wh..wh..opq &&
                stat -c "%a %n" /opt/h/su /usr/local/bin/su2'
        # positive control: the session itself has the bits
        [ "$output" = "$(printf '4755 /opt/h/su\n6755 /usr/local/bin/su2')" ] || fail "got: $output"
        sbx_ok commit "$sid" hb:h
        sbx_ok destroy "$sid"
        sbx_ok run --image hb:h -- sh -c 'stat -c "%a %n" /opt/h/su /usr/local/bin/su2; ls -A /opt/h | xargs;
                test -x /usr/bin/sh && echo sh-kept; test -e /usr/bin/.wh.sh && echo wh; true'
        [ "$output" = "$(printf '755 /opt/h/su\n755 /usr/local/bin/su2\nsu\nsh-kept')" ] ||
                fail "got: $output"
}

@test "bad cases: read-only host session, a layer past the disk limit; nothing left in the store" {
        sbx_ok create --read-only
        sid=$output
        sbx_expect 4 commit --json "$sid" hb:ro
        [ "$(json .error.code)" = unsupported ] || fail "$output"
        sbx_ok destroy "$sid"
        new_session --disk 64M
        # each under the file size limit, together past the disk limit, using no disk at all
        in_sbx 'mkdir -p /opt/s && truncate -s 40M /opt/s/1 /opt/s/2'
        sbx_expect 1 commit --json "$sid" hb:big
        [ "$(json .error.code)" = limit ] || fail "$output"
        sbx_expect 2 commit "$sid" 'Bad:Name'
        # without the record of what sbx generated (a session of an older sbx) it cannot tell
        # sbx's files from the session's: refused
        mv "$SBX_RUNTIME_DIR/$sid/base" "$BATS_TEST_TMPDIR/base"
        sbx_expect 4 commit --json "$sid" hb:nobase
        [[ $(json .error.message) == *"no record of its generated base"* ]] || fail "$output"
        mv "$BATS_TEST_TMPDIR/base" "$SBX_RUNTIME_DIR/$sid/base"
        [ -z "$(store_snapshot)" ] || fail "left in the store:" "$(store_snapshot)"
        # positive control: the same session commits once under the limit
        in_sbx 'rm /opt/s/2'
        sbx_ok commit "$sid" hb:ok
        [ -n "$(store_snapshot)" ]
}

@test "read-only sessions of such an image: its files read, nothing written, the host's /usr below" {
        host_commit
        sbx_ok destroy "$sid"
        sbx_expect 2 run --read-only --image hb:1 -- sh -c 'cat /opt/app/x /usr/bin/env;
                test -x /usr/bin/sha256sum && echo host-usr; echo z >/usr/z'
        [ "$output" = "$(printf 'x\nmine\nhost-usr')" ] || fail "got: $output"
        [[ $stderr == *"Read-only file system"* ]] || fail "$stderr"
}

@test "unprivileged: a user's host session into the user's own store" {
        setup_sbx_user
        local home=$users_base/$test_user/$BATS_TEST_NUMBER/home
        user_sbx_expect 0 create
        local usid=$output
        # (the host's /usr is the user's to read only: its files are root's)
        user_sbx_expect 0 exec "$usid" sh -c 'mkdir -p /opt/u /home/h && echo u >/opt/u/f &&
                echo h >/home/h/f'
        other_sbx_expect 3 commit "$usid" hb:stolen
        user_sbx_expect 0 commit --json "$usid" hb:u
        [ "$(json .base)" = host ] || fail "$output"
        user_sbx_expect 0 destroy "$usid"
        user_sbx_expect 0 run --image hb:u -- sh -c 'cat /opt/u/f /home/h/f; test -x /usr/bin/env && echo usr'
        [ "$output" = "$(printf 'u\nh\nusr')" ] || fail "got: $output"
        [ -d "$home/.local/share/sbx/layers" ]
}
