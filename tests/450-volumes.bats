#!/usr/bin/env bats
# Read-write volumes behave as the caller expects: the sandbox's root writes them, and what it
# writes belongs on the host to the owner of the volume's directory (root-run sessions: an
# idmapped mount that maps that owner alone to the session's uid 0), never to the session's
# own host uid, and never to host root (a directory of root's stays a plain bind: the session
# could otherwise make setuid-root files); a read-only volume stays read-only; an unprivileged
# caller's files are its own.
# The positive control shows that the owner check sees the old behaviour's files (owned by
# the session's host uid), so a file of the wrong owner would be caught.

load helpers
setup_file() { setup_users; }
teardown_file() { teardown_users; }
setup() {
        setup_sbx && setup_sbx_user
        public_dir
}
teardown() {
        [ -z "${pid:-}" ] || kill "$pid" 2>/dev/null || true
        teardown_sbx
}

# owners DIR: "uid:gid name" of every entry below DIR, sorted.
owners() {
        find "$1" -mindepth 1 -printf '%U:%G %P\n' | sort
}

@test "root: a root-owned volume is never mapped to host root (no setuid-root files)" {
        # The sandbox's root may set the setuid bit of a file it owns: on a volume mapped to
        # host root that file would be setuid root on the host. A directory of root's is a
        # plain bind: writable only through its bits, files of the session's own host uid.
        local vol=$pubdir/root-owned open=$pubdir/root-world
        mkdir "$vol" "$open"
        chmod 0755 "$vol"
        chmod 0777 "$open"
        new_session --mount "$vol:/data" --mount "$open:/open"
        local base
        base=$(awk '$1 == 0 { print $2 }' "/proc/$(state_key init_pid)/uid_map")
        sbx_try exec "$sid" touch /data/f
        [ "$status" -ne 0 ] || fail "the session wrote a root-owned 0755 directory"
        in_sbx 'printf "#!/bin/sh\nid\n" >/open/s && chmod 6755 /open/s'
        [ "$(stat -c %u:%g "$open/s")" = "$base:$base" ] || fail "s: $(stat -c %u:%g "$open/s")"
        [ -z "$(find "$vol" "$open" -uid 0 -mindepth 1)" ] || fail "host-root files made"
        # the same for a directory of a user's with group root
        local grp=$pubdir/group-root
        mkdir "$grp"
        chown 1234:0 "$grp"
        chmod 0777 "$grp"
        new_session --mount "$grp:/g"
        # a session of its own: its own host uid range
        base=$(awk '$1 == 0 { print $2 }' "/proc/$(state_key init_pid)/uid_map")
        in_sbx 'touch /g/x'
        [ "$(stat -c %u:%g "$grp/x")" = "$base:$base" ] || fail "x: $(stat -c %u:%g "$grp/x")"
}

@test "root: a volume owned by a regular user: files belong to that user" {
        local vol=$pubdir/user-owned
        mkdir "$vol"
        chown 1234:2345 "$vol"
        chmod 0700 "$vol" # only its owner may write (or even enter) it
        new_session --mount "$vol:/data"
        in_sbx 'id -u; echo x >/data/f && mkdir /data/d && echo y >/data/d/g'
        [ "$(owners "$vol")" = "$(printf '1234:2345 d\n1234:2345 d/g\n1234:2345 f')" ] ||
                fail "on the host: $(owners "$vol")"
        # an exec of the exec server's path too (no limits: the init serves it)
        new_session --memory unlimited --cpus unlimited --pids unlimited --mount "$vol:/data"
        in_sbx 'echo z >/data/h'
        [ "$(stat -c %u:%g "$vol/h")" = 1234:2345 ] || fail "h: $(stat -c %u:%g "$vol/h")"
        # and the file commands
        sbx_ok write "$sid" /data/w <<<"written"
        [ "$(stat -c %u:%g "$vol/w")" = 1234:2345 ] || fail "w: $(stat -c %u:%g "$vol/w")"
}

@test "root: a file of another host user in the volume is not the sandbox's" {
        local vol=$pubdir/mixed
        mkdir "$vol"
        echo secret >"$vol/other"
        chown 4321:4321 "$vol/other"
        chmod 0600 "$vol/other"
        new_session --mount "$vol:/data"
        sbx_try exec "$sid" cat /data/other
        [ "$status" -ne 0 ] || fail "the sandbox read another user's 0600 file: $output"
        in_sbx 'stat -c %u /data/other'
        [ "$output" = 65534 ] || fail "another user's file shows as uid $output inside"
}

@test "root: a :ro volume stays read-only" {
        local vol=$pubdir/ro
        mkdir "$vol"
        echo keep >"$vol/f"
        new_session --mount "$vol:/data:ro"
        in_sbx 'cat /data/f'
        [ "$output" = keep ]
        sbx_try exec "$sid" sh -c 'echo changed >/data/f'
        [ "$status" -ne 0 ] || fail "wrote a read-only volume"
        sbx_try exec "$sid" touch /data/new
        [ "$status" -ne 0 ] || fail "created a file in a read-only volume"
        sbx_try exec "$sid" mount -o remount,rw /data
        [ "$status" -ne 0 ] || fail "remounted the volume read-write"
        [ "$(cat "$vol/f")" = keep ] && [ ! -e "$vol/new" ]
}

@test "root: a writable volume that cannot be idmapped is refused with exit 4" {
        # procfs has no idmapped mounts; /proc/PID of a process of uid 1234 is that user's
        setpriv --reuid 1234 --regid 1234 --clear-groups sleep 30 </dev/null >/dev/null 2>&1 &
        pid=$!
        wait_until 5 eval '[ "$(stat -c %u "/proc/$pid")" = 1234 ]' || fail "no process of uid 1234"
        sbx_expect 4 run --mount "/proc/$pid:/x" -- true
        [[ $stderr == *"/proc/$pid"*"idmapped"*":ro"* ]] || fail "message: $stderr"
        [ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "more than one line: $stderr"
        # read-only, the same directory is a plain bind
        sbx_ok run --mount "/proc/$pid:/x:ro" -- cat /x/comm
        [ "$output" = sleep ] || fail "got '$output'"
}

@test "positive control: the owner check sees files of the session's host uid" {
        # Without the idmapped mount, what the sandbox's root writes belongs to the session's
        # host uid (its map's base): a plain bind of a world-writable directory shows it. The
        # check the other tests use reports it as such, so a file of the wrong owner fails them.
        local vol=$pubdir/world
        mkdir "$vol"
        chown 1234:2345 "$vol"
        chmod 0777 "$vol"
        new_session --mount "$vol:/data:ro"
        local base
        base=$(awk '$1 == 0 { print $2 }' "/proc/$(state_key init_pid)/uid_map")
        [ -n "$base" ] && [ "$base" -ne 0 ] || fail "no base uid: '$base'"
        setpriv --reuid "$base" --regid "$base" --clear-groups touch "$vol/old"
        [ "$(owners "$vol")" = "$base:$base old" ] || fail "saw: $(owners "$vol")"
        # and the idmapped volume of the same directory stores its owner's files
        rm "$vol/old"
        new_session --mount "$vol:/data"
        in_sbx 'touch /data/new'
        [ "$(owners "$vol")" = "1234:2345 new" ] || fail "saw: $(owners "$vol")"
}

@test "user: a volume of the caller's own directory: files belong to the caller" {
        local vol=$pubdir/mine uid gid
        uid=$(id -u "$test_user")
        gid=$(id -g "$test_user")
        mkdir "$vol"
        chown "$uid:$gid" "$vol"
        chmod 0700 "$vol"
        user_sbx_expect 0 create --mount "$vol:/data"
        sid=$output
        user_sbx_expect 0 exec "$sid" sh -c 'echo x >/data/f && mkdir /data/d && touch /data/d/g && stat -c %u /data'
        [ "$output" = 0 ] || fail "inside, /data is owned by $output"
        [ "$(owners "$vol")" = "$(printf '%s d\n%s d/g\n%s f' "$uid:$gid" "$uid:$gid" "$uid:$gid")" ] ||
                fail "on the host: $(owners "$vol")"
        user_sbx_expect 0 destroy "$sid"
}
