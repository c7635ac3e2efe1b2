#!/usr/bin/env bats
# The file commands must never reach a host file the session cannot reach (sbx(1), "File
# commands", issue 4 item 2, docker cp CVE-2018-15664). Every escape shape is
# prepared from inside a real session (sbx exec) and then tried with ls/read/write/edit/glob/
# grep against host canaries the test makes OUTSIDE the session (in a world-readable,
# world-writable directory of /tmp and at the host's /, so that only the confinement, not
# host permissions, keeps the session out). Their content carries a random token, and the
# directories hold entries named with a second one that no argument ever names. After each
# test: neither token appeared in any output (nothing was read or listed), the canaries'
# content, metadata and directory are unchanged (nothing was written), and no file appeared
# next to them.

load helpers

rand_hex() {
        od -An -N12 -tx1 /dev/urandom | tr -d ' \n'
}

setup() {
        setup_sbx
        public_dir
        # Three random tokens: N is in the canaries' names (so it is in the paths the tests
        # pass, and sbx may echo it in its messages); C is the canaries' content and L the
        # name of host entries no argument ever names: neither may ever show in any output.
        ntok=N$(rand_hex)
        token=SBXCANARY$(rand_hex)
        ltok=SBXLISTED$(rand_hex)
        cdir=$pubdir/dir-$ntok
        mkdir -m 0777 "$cdir"
        chmod 0777 "$cdir"
        canary=$cdir/canary-$ntok.txt
        printf 'needle %s\nsecond line\n' "$token" >"$canary"
        printf 'needle %s\n' "$token" >"$cdir/listed-$ltok"
        chmod 0666 "$canary" "$cdir/listed-$ltok"
        # and at the host's root, for walks that would end at the host's /
        root_canary=/canary-$ntok
        printf 'needle %s\n' "$token" >"$root_canary"
        printf 'needle %s\n' "$token" >"/listed-$ltok"
        chmod 0666 "$root_canary" "/listed-$ltok"
        sbx_cleanup_files+=("$root_canary" "/listed-$ltok")
        canary_state=$(canary_snapshot)
        seen=$BATS_TEST_TMPDIR/seen
        : >"$seen"
        bad=()
}
teardown() {
        [ -z "${swapper_started:-}" ] || stop_swapper || true
        teardown_sbx
}

# Everything the host shows of the canaries: contents, modes, owners, times, entries.
canary_snapshot() {
        stat -c '%n %s %a %u %g %Y %i' "$canary" "$cdir" "$root_canary" "$cdir/listed-$ltok"
        sha256sum "$canary" "$root_canary" "$cdir/listed-$ltok" "/listed-$ltok"
        ls -lA --time-style=+%s "$cdir"
        find / /tmp "$pubdir" -maxdepth 1 \( -name "*$ntok*" -o -name "*$ltok*" \) | sort
}

# json_error CODE: $output is exactly one JSON document {"error":{"code":CODE,...}}.
json_error() {
        json_doc || return 1
        [ "$(jq -r '.error.code // empty' <<<"$output")" = "$1" ] ||
                fail "JSON error code is not $1: $output"
}

# fc ARGS...: run a file command (or any sbx call) with any exit status, its stdout and
# stderr recorded for the leak check; stdin is /dev/null. Sets status/output/stderr.
fc() {
        sbx_try "$@" </dev/null
        printf '%s\n%s\n' "$output" "$stderr" >>"$seen"
}

# fc_fails ARGS...: fc, and the command must exit 1 (refused as the user asked, not a crash).
fc_fails() {
        fc "$@"
        [ "$status" -eq 1 ] || bad+=("sbx $* -> exit $status (want 1): $output $stderr")
}

# fc_done ARGS...: fc, and the command must exit 0 or 1 (whatever it found, it ended normally).
fc_done() {
        fc "$@"
        [ "$status" -eq 0 ] || [ "$status" -eq 1 ] ||
                bad+=("sbx $* -> exit $status: $output $stderr")
}

# no_leak: the boundary held. The token was never printed, the canaries are as they were,
# and every attempt ended as asserted.
no_leak() {
        [ ${#bad[@]} -eq 0 ] || fail "unexpected results:" "${bad[@]}"
        if grep -qF -e "$token" -e "$ltok" "$seen"; then
                fail "the host canary leaked into sbx output:" \
                        "$(grep -F -e "$token" -e "$ltok" "$seen" | head -n 5)"
        fi
        local now
        now=$(canary_snapshot)
        [ "$now" = "$canary_state" ] || fail "the host canary changed:" "$(diff <(echo "$canary_state") <(echo "$now"))"
}

# ---- the detector itself ------------------------------------------------------------------

@test "control: when the session is given the canary (a volume), the checks do see it" {
        new_session --mount "$cdir:/vol"
        fc read "$sid" "/vol/canary-$ntok.txt"
        fc ls "$sid" /vol
        grep -qF "$token" "$seen" || fail "the read of a reachable canary was not seen: $(cat "$seen")"
        grep -qF "$ltok" "$seen" || fail "the listing of a reachable canary dir was not seen"
        sbx_ok edit "$sid" "/vol/canary-$ntok.txt" second SECOND
        [ "$(canary_snapshot)" != "$canary_state" ] || fail "an edit of a reachable canary was not seen"
}

# ---- symlinks, .., parents ----------------------------------------------------------------

@test "absolute symlinks planted in the session do not lead to the host" {
        new_session
        in_sbx 'cd /workspace; ln -s "$1" abs-file; ln -s "$2" abs-dir; ln -s / root
                ln -s /tmp tmp-link; ln -s "$3" abs-root-canary' "$canary" "$cdir" "$root_canary"
        fc_fails read "$sid" abs-file
        fc_fails read "$sid" abs-root-canary
        fc_fails read "$sid" "abs-dir/canary-$ntok.txt"
        fc_fails read "$sid" "$canary"
        fc_fails read "$sid" "$root_canary"
        fc_done ls "$sid" abs-dir # a dangling symlink may be listed as itself ...
        fc_fails ls "$sid" abs-dir/ # ... but never followed
        fc_fails ls "$sid" "$cdir"
        fc_done ls "$sid" root
        fc_done ls "$sid" root/
        fc_done ls "$sid" tmp-link/
        fc_done ls "$sid" /tmp
        [[ $output != *"${pubdir##*/}"* ]] || bad+=("ls /tmp shows the host's $pubdir")
        fc_fails glob --path abs-dir "$sid" '*'
        fc_done glob --path root "$sid" '*'
        fc_done glob "$sid" 'root/canary-*'
        fc_done glob "$sid" '/canary-*'
        fc_done glob --path tmp-link "$sid" '**/*.txt'
        fc_fails grep "$sid" needle abs-file
        fc_fails grep "$sid" needle abs-dir
        fc_done grep "$sid" needle root/tmp
        fc_fails edit "$sid" abs-file needle X
        fc_fails edit "$sid" abs-root-canary needle X
        fc_fails edit "$sid" "abs-dir/canary-$ntok.txt" needle X
        fc_fails edit "$sid" "$canary" needle X
        fc_fails write "$sid" abs-file x
        fc_fails write "$sid" "abs-dir/new-$ntok" x
        fc_done write "$sid" "$cdir/new-$ntok" x # the session's own /tmp gets it
        no_leak
}

@test "relative symlinks and '..' walks do not leave the session's root" {
        new_session
        local up=../../../../../../../../..
        in_sbx 'cd /workspace; mkdir -p a/b; ln -s "$1$2" a/b/rel-file; ln -s "$1$3" a/b/rel-dir
                ln -s "$1" a/b/up' "$up" "$canary" "$cdir"
        fc_fails read "$sid" a/b/rel-file
        fc_fails read "$sid" "$up$canary"
        fc_fails read "$sid" "a/b/up$canary"
        fc_fails read "$sid" "/workspace/$up$root_canary"
        fc_done ls "$sid" a/b/rel-dir
        fc_fails ls "$sid" a/b/rel-dir/
        fc_fails ls "$sid" "$up$cdir"
        fc_done ls "$sid" "$up"
        [[ $output != *canary-* ]] || bad+=("ls $up lists the host's root: $output")
        fc_done ls "$sid" a/b/up/
        fc_done ls "$sid" "$up/tmp"
        fc_done glob "$sid" "$up/*"
        fc_done glob "$sid" "$up/canary-*"
        fc_done glob "$sid" "$up$pubdir/*/*"
        fc_done glob --path "$up" "$sid" 'tmp/**'
        fc_fails glob --path "$up$cdir" "$sid" '*'
        fc_fails grep "$sid" needle "$up$cdir"
        fc_done grep "$sid" needle "$up/tmp"
        fc_fails grep "$sid" needle a/b/rel-file
        fc_fails edit "$sid" a/b/rel-file needle X
        fc_fails edit "$sid" "$up$canary" needle X
        fc_fails write "$sid" a/b/rel-file x
        fc_done write "$sid" "$up$cdir/new-$ntok" x
        fc_done write "$sid" "a/b/up$cdir/new2-$ntok" x
        # the same from a workdir deep down
        new_session --workdir /tmp
        fc_fails read "$sid" "$up$canary"
        fc_done ls "$sid" "$up$pubdir"
        no_leak
}

@test "symlinked parent directories do not lead to the host" {
        new_session
        in_sbx 'cd /workspace; ln -s "$1" parent; mkdir -p deep/a; ln -s / deep/a/b
                ln -s "/proc/1/root$1" proc-parent; ln -s /proc/self/root/ self-root' "$cdir"
        local p
        for p in parent "deep/a/b$cdir" proc-parent "self-root$cdir"; do
                fc_fails read "$sid" "$p/canary-$ntok.txt"
                fc_done ls "$sid" "$p"
                fc_fails ls "$sid" "$p/"
                fc_fails glob --path "$p" "$sid" '*'
                fc_fails grep "$sid" needle "$p"
                fc_fails edit "$sid" "$p/canary-$ntok.txt" needle X
        done
        # writes may create the path inside the session (through / it is the session's /tmp)
        for p in parent "deep/a/b$cdir" proc-parent "self-root$cdir"; do
                fc_done write "$sid" "$p/canary-$ntok.txt" x
                fc_done write "$sid" "$p/new-$ntok" x
        done
        no_leak
}

# ---- magic links --------------------------------------------------------------------------

@test "magic links /proc/self/root, /proc/self/cwd, /proc/1/root, /proc/1/cwd stay in the session" {
        new_session
        in_sbx 'cd /workspace; ln -s /proc/1/root init-root; ln -s /proc/self/root self-root
                ln -s /proc/self/cwd self-cwd; ln -s /proc/1/cwd init-cwd'
        local p
        for p in /proc/self/root /proc/self/cwd/../.. /proc/1/root /proc/1/cwd/../.. \
                init-root self-root self-cwd/../.. init-cwd/../..; do
                fc_fails read "$sid" "$p$canary"
                fc_fails read "$sid" "$p$root_canary"
                fc_fails ls "$sid" "$p$cdir"
                fc_done ls "$sid" "$p/"
                fc_done ls "$sid" "$p/tmp"
                fc_fails grep "$sid" needle "$p$cdir"
                fc_fails glob --path "$p$cdir" "$sid" '*'
                fc_done glob --path "$p/" "$sid" 'canary-*'
                fc_fails edit "$sid" "$p$canary" needle X
        done
        for p in /proc/self/root /proc/1/root init-root self-root self-cwd/../..; do
                fc_done write "$sid" "$p$canary" x
                fc_done write "$sid" "$p$cdir/new-$ntok" x
        done
        # the session init is not dumpable: its root, cwd and fds are closed to the session
        fc_fails ls "$sid" /proc/1/root/
        fc_fails ls "$sid" /proc/1/fd
        fc_fails read "$sid" /proc/1/environ
        no_leak
}

@test "/proc/self/fd/N: fds the caller leaks (7: the canary, 8: its directory) are not there" {
        new_session
        in_sbx 'cd /workspace; for n in 3 4 5 6 7 8 9; do ln -s /proc/self/fd/$n fd$n; done'
        exec 7<"$canary" 8<"$cdir"
        local n
        for n in 3 4 5 6 7 8 9; do
                fc_fails read "$sid" "/proc/self/fd/$n"
                fc_fails read "$sid" "fd$n"
                fc_fails read "$sid" "/proc/self/fd/$n/canary-$ntok.txt"
                fc_fails grep "$sid" needle "fd$n"
                fc_done ls "$sid" "/proc/self/fd/$n"
                fc_done glob --path "fd$n" "$sid" '*'
                fc_fails edit "$sid" "fd$n" needle X
        done
        fc_done ls "$sid" /proc/self/fd
        exec 7<&- 8<&-
        no_leak
}

# The caller's stdin, stdout and stderr are host files too (an agent redirects them to logs,
# or feeds a file): a file command run for the caller must not open them for the session.
@test "/proc/self/fd/0,1,2: the caller's stdin, stdout and stderr are not reachable" {
        new_session
        in_sbx 'cd /workspace; ln -s /proc/self/fd/0 in0; ln -s /proc/self/fd/1 out1
                ln -s /proc/self/fd/2 err2; ln -s /proc/self/fd readme-dir'
        local log=$pubdir/host-log-$RANDOM
        local p rc
        # stdin: the canary file; then its directory
        for p in in0 /proc/self/fd/0 readme-dir/0; do
                rc=0
                timeout 10 "$SBX" read "$sid" "$p" <"$canary" >>"$seen" 2>&1 || rc=$?
                [ "$rc" -eq 1 ] || bad+=("read $p <canary: exit $rc")
                rc=0
                timeout 10 "$SBX" grep --mode content "$sid" needle "$p" <"$canary" >>"$seen" 2>&1 || rc=$?
                [ "$rc" -eq 1 ] || bad+=("grep $p <canary: exit $rc")
                rc=0
                timeout 10 "$SBX" edit "$sid" "$p" needle X <"$canary" >>"$seen" 2>&1 || rc=$?
                [ "$rc" -eq 1 ] || bad+=("edit $p <canary: exit $rc")
                rc=0
                timeout 10 "$SBX" ls "$sid" "$p" <"$cdir" >>"$seen" 2>&1 || rc=$?
                [ "$rc" -le 1 ] || bad+=("ls $p <dir: exit $rc")
                rc=0
                timeout 10 "$SBX" glob --path "$p" "$sid" '*' <"$cdir" >>"$seen" 2>&1 || rc=$?
                [ "$rc" -le 1 ] || bad+=("glob --path $p <dir: exit $rc")
        done
        # stdout and stderr: a host log that already holds the token
        for p in out1 /proc/self/fd/1; do
                printf 'needle %s\n' "$token" >"$log"
                timeout 10 "$SBX" read "$sid" "$p" >>"$log" 2>>"$seen" || true
                [ "$(grep -cF "$token" "$log")" -eq 1 ] ||
                        bad+=("read $p >>log: the session's read returned the host log: $(cat "$log")")
                printf 'needle %s\n' "$token" >"$log"
                timeout 10 "$SBX" grep --mode content "$sid" needle "$p" >>"$log" 2>>"$seen" || true
                [ "$(grep -cF "$token" "$log")" -eq 1 ] || bad+=("grep $p >>log: read the host log")
        done
        for p in err2 /proc/self/fd/2; do
                printf 'needle %s\n' "$token" >"$log"
                timeout 10 "$SBX" read "$sid" "$p" >>"$seen" 2>>"$log" || true
                [ "$(grep -cF "$token" "$log")" -eq 1 ] ||
                        bad+=("read $p 2>>log: the session's read returned the host log")
                printf 'needle %s\n' "$token" >"$log"
                timeout 10 "$SBX" grep --mode content "$sid" needle "$p" >>"$seen" 2>>"$log" || true
                [ "$(grep -cF "$token" "$log")" -eq 1 ] || bad+=("grep $p 2>>log: read the host log")
        done
        rm -f "$log"
        no_leak
}

# ---- hard links ---------------------------------------------------------------------------

@test "hard links: host files cannot be linked in (they are not visible)" {
        new_session
        sbx_expect 1 exec "$sid" ln "$canary" /workspace/hl
        [[ $stderr == *"No such file or directory"* ]] || fail "ln of the host path: $stderr"
        sbx_try exec "$sid" ln "/proc/1/root$canary" /workspace/hl
        [ "$status" -ne 0 ] || fail "ln through /proc/1/root worked"
        # stdin forwarded with -i is a pipe, never the caller's file
        sbx_try exec -i "$sid" ln -L /proc/self/fd/0 /workspace/hl0 <"$canary"
        [ "$status" -ne 0 ] || fail "ln -L /proc/self/fd/0 linked the caller's stdin"
        fc_fails read "$sid" /workspace/hl
        fc_fails read "$sid" /workspace/hl0
        no_leak
}

@test "hard links: a file the session cannot write does not become writable through a link" {
        # A volume whose sticky, world-writable directory holds a host-root file 0644: the
        # session reads it but must never change it (its uid is not the owner).
        mkdir -m 1777 "$pubdir/vol"
        chmod 1777 "$pubdir/vol"
        printf 'needle protected\n' >"$pubdir/vol/protected"
        chmod 0644 "$pubdir/vol/protected"
        ln "$pubdir/vol/protected" "$pubdir/vol/host-made-link"
        local before
        before=$(stat -c '%i %s %Y %a %u' "$pubdir/vol/protected"; sha256sum <"$pubdir/vol/protected")
        new_session --mount "$pubdir/vol:/data"
        # protected_hardlinks: the session cannot link a file it neither owns nor can write
        sbx_try exec "$sid" ln /data/protected /data/session-link
        if [ "$(cat /proc/sys/fs/protected_hardlinks)" = 1 ]; then
                [ "$status" -ne 0 ] || fail "the session hard-linked a host-root file"
        fi
        local p
        for p in /data/protected /data/host-made-link; do
                fc_fails edit "$sid" "$p" needle CHANGED
                fc_fails edit --replace-all "$sid" "$p" protected CHANGED
                fc_fails write "$sid" "$p" CHANGED
        done
        if [ "$status" -eq 0 ]; then
                fc_fails edit "$sid" /data/session-link needle CHANGED
        fi
        sbx_try exec "$sid" sh -c 'echo CHANGED >> /data/protected'
        [ "$status" -ne 0 ] || fail "the session appended to a host-root 0644 file"
        local after
        after=$(stat -c '%i %s %Y %a %u' "$pubdir/vol/protected"; sha256sum <"$pubdir/vol/protected")
        [ "$after" = "$before" ] || fail "the protected file changed: $before -> $after"
        ! grep -rqs CHANGED "$pubdir/vol" || fail "a file in the volume holds the new content: $(grep -rl CHANGED "$pubdir/vol")"
        [ "$(stat -c %u "$pubdir/vol/host-made-link")" = 0 ] || fail "the host-made link was replaced"
        [ -z "$(find "$pubdir/vol" -name '.sbx-edit-*')" ] || fail "temp files left: $(ls -A "$pubdir/vol")"
        no_leak
}

# ---- FIFOs, devices, sockets --------------------------------------------------------------

@test "FIFOs, device nodes and sockets: every command returns at once with an error, never hangs" {
        local sbx_call_timeout=5 # a hang is exit 124, not the wanted 1
        new_session
        in_sbx 'set -e; cd /workspace; mkdir -p nodes
                mkfifo fifo nodes/fifo2 held-fifo; ln -s /dev/zero zero; ln -s /dev/urandom urandom
                ln -s /dev/tty tty; ln -s fifo fifo-link; cp /dev/null nodes/plain.txt
                python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"/workspace/nodes/sock\")"
                (exec 3<>held-fifo; sleep 60) >/dev/null 2>&1 &'
        local p t0=$SECONDS
        for p in fifo fifo-link held-fifo zero urandom tty /dev/zero /dev/full /dev/random \
                /dev/tty /dev/ptmx /dev/pts/ptmx nodes/sock /dev/null; do
                fc_fails read "$sid" "$p"
                fc_fails read --binary "$sid" "$p"
                fc_fails read --offset 5 "$sid" "$p"
                fc_fails edit "$sid" "$p" a b
                fc_fails write "$sid" "$p" x
                fc_fails grep "$sid" needle "$p"
                fc_done ls "$sid" "$p"
        done
        fc_fails grep "$sid" needle nodes
        fc_done grep "$sid" needle /dev
        fc_done glob --path nodes "$sid" '*'
        fc_done glob --path /dev "$sid" '**'
        fc_done ls "$sid" /dev
        [ $((SECONDS - t0)) -lt 60 ] || fail "the node checks took $((SECONDS - t0))s"
        no_leak
        # the session is still healthy
        sbx_ok exec "$sid" true
}

# ---- sparse and huge files ----------------------------------------------------------------

@test "sparse 10G files: read, grep, edit, ls, glob return quickly with bounded memory" {
        local sbx_call_timeout=10
        new_session --disk 12G
        in_sbx 'cd /workspace; truncate -s 10G zeros; seq 1 3000 > text; truncate -s 10G text
                printf "needle\n" > tail; truncate -s 10G tail; printf "needle at the end\n" >> tail'
        # the client and the confined op it forks may use at most 256 MiB of address space
        # (not under AddressSanitizer, whose shadow memory alone is terabytes of it)
        local t0=$SECONDS limit=262144
        if ldd "$SBX" 2>/dev/null | grep -q libasan; then
                limit=unlimited
        fi
        ulimit_sbx() { _expect any sh -c 'ulimit -v "$0" && exec "$@"' "$limit" "$SBX" "$@" </dev/null; }
        ulimit_sbx read --offset 100000 "$sid" text
        [ "$status" -eq 1 ] || fail "read --offset past the end: exit $status $stderr"
        [[ $stderr =~ ^"sbx: Line offset 100000 exceeds file length ("[0-9]+" lines)"$ ]] ||
                fail "read --offset past the end: $stderr"
        ulimit_sbx read --offset 2998 "$sid" text
        [ "$status" -eq 0 ] || fail "read of the text head: exit $status $stderr"
        [[ ${lines[0]} == "  2999"$'\t'2999 ]] || fail "read of the text head: ${lines[0]}"
        ulimit_sbx read "$sid" zeros
        [ "$status" -eq 1 ] || fail "read of 10G of NULs: exit $status"
        ulimit_sbx read --binary "$sid" zeros
        [ "$status" -eq 1 ] || fail "read --binary of 10G: exit $status"
        ulimit_sbx read --binary --json "$sid" text
        json_error limit
        ulimit_sbx grep "$sid" needle zeros
        [ "$status" -eq 1 ] || fail "grep over 10G of NULs: exit $status $stderr"
        ulimit_sbx grep "$sid" zzz text
        [ "$status" -eq 1 ] || fail "grep over a sparse text: exit $status $stderr"
        ulimit_sbx grep --mode count "$sid" needle /workspace
        [ "$status" -le 1 ] || fail "grep over the tree: exit $status $stderr"
        ulimit_sbx edit "$sid" text 2999 X
        [ "$status" -eq 1 ] || fail "edit of a 10G file: exit $status"
        ulimit_sbx edit --json "$sid" zeros a b
        json_error limit
        ulimit_sbx ls "$sid" /workspace
        [ "$status" -eq 0 ] || fail "ls: $status"
        [[ $output == *"- 10737418240 "*" zeros"* ]] || fail "ls: $output"
        ulimit_sbx glob "$sid" '*'
        [ "$status" -eq 0 ] || fail "glob: $status"
        [ $((SECONDS - t0)) -lt 30 ] || fail "the sparse-file commands took $((SECONDS - t0))s"
        # nothing was written: the layer holds (almost) no data
        sbx_ok exec "$sid" sh -c 'du -sk /workspace | cut -f1'
        [ "$output" -lt 1024 ] || fail "the layer holds $output KiB after the reads"
}

# ---- loops and deep trees -----------------------------------------------------------------

@test "symlink loops and long chains end with an error, walks do not follow them" {
        new_session
        in_sbx 'set -e; cd /workspace; ln -s loop-b loop-a; ln -s loop-a loop-b; mkdir d
                ln -s . d/self; ln -s .. d/up; ln -s ../d d/back; echo needle > d/f
                i=0; while [ $i -lt 300 ]; do ln -s "c$((i + 1))" "c$i"; i=$((i + 1)); done
                echo needle > c300'
        local p
        for p in loop-a loop-a/x c0 d/self/self/self/up/loop-b; do
                fc_fails read "$sid" "$p"
                fc_fails edit "$sid" "$p" needle X
                fc_fails grep "$sid" needle "$p"
                fc_fails write "$sid" "$p/new" x
                fc_done ls "$sid" "$p"
        done
        fc_fails write "$sid" loop-a x
        sbx_ok read "$sid" c270 # a chain shorter than the kernel's 40 hops works
        sbx_ok glob --path d "$sid" '**'
        [ "${#lines[@]}" -eq 4 ] || fail "glob '**' followed a loop: $output"
        sbx_ok grep --mode count "$sid" needle d
        [ "$output" = /workspace/d/f:1 ] || fail "grep followed a loop: $output"
        sbx_ok glob "$sid" '**/f'
        [ "$output" = /workspace/d/f ] || fail "$output"
        no_leak
}

@test "a 300-deep tree deeper than PATH_MAX: glob, grep, ls, read end cleanly" {
        new_session
        local name=dddddddddddddddddddd # 20 characters: 300 levels are 6300 bytes of path
        in_sbx 'cd /workspace; mkdir deep; cd deep; i=0
                while [ $i -lt 300 ]; do mkdir "$1"; cd "$1"; i=$((i + 1)); done
                echo "needle at the bottom" > bottom.txt' "$name"
        local t0=$SECONDS
        fc_done glob "$sid" '**/bottom.txt'
        [ "$status" -eq 0 ] || bad+=("glob: $status")
        fc_done glob --path deep "$sid" '**'
        fc_done grep "$sid" needle deep
        fc_done grep --mode content "$sid" needle
        local p=deep i
        for i in $(seq 300); do p+=/$name; done
        fc_fails read "$sid" "$p/bottom.txt"
        fc_fails ls "$sid" "$p"
        fc_fails write "$sid" "$p/new.txt" x
        fc_fails edit "$sid" "$p/bottom.txt" needle X
        [ $((SECONDS - t0)) -lt 30 ] || fail "took $((SECONDS - t0))s"
        no_leak
        sbx_ok exec "$sid" true
}

# ---- the symlink-swap race ----------------------------------------------------------------

# In the session, /workspace/race/t (a file name) and /workspace/race/d (a directory name) are
# swapped atomically (renameat2 RENAME_EXCHANGE) in a tight loop with entries of every kind:
# a regular file and a directory holding "needle", and symlinks to the host canary's paths,
# to /, to /proc/1/root/... and /proc/self/root/..., to /proc/self/fd/N.
swap_py='
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir("/workspace/race")
canary, cdir, token, root = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def mk(name, kind, target=None):
    if kind == "file":
        with open(name, "w") as f: f.write("needle benign\n")
    elif kind == "dir":
        os.mkdir(name)
        with open(name + "/f", "w") as f: f.write("needle benign\n")
        with open(name + "/canary-" + token + ".txt", "w") as f: f.write("needle decoy\n")
    else:
        os.symlink(target, name)
mk("t", "file"); mk("d", "dir")
alts_t = [("file", None), ("link", canary), ("link", "/proc/1/root" + canary),
          ("link", "/proc/self/root" + canary), ("link", root), ("link", "/proc/self/fd/0"),
          ("link", "/proc/self/fd/3"), ("link", "../../../../.." + canary), ("dir", None)]
alts_d = [("link", cdir), ("link", "/proc/1/root" + cdir), ("link", root), ("dir", None),
          ("link", "/proc/self/root" + cdir), ("link", "/proc/self/fd"), ("link", "/proc/1/cwd"),
          ("link", "../../../../.." + cdir)]
names = []
for i, (k, tg) in enumerate(alts_t): mk(".t%d" % i, k, tg); names.append((b"t", b".t%d" % i))
for i, (k, tg) in enumerate(alts_d): mk(".d%d" % i, k, tg); names.append((b"d", b".d%d" % i))
n = 0
open("/tmp/swapper.ready", "w").close()
while not os.path.exists("/tmp/swapper.stop"):
    for a, b in names:
        if libc.renameat2(-100, a, -100, b, 2) == 0:
            n += 1
with open("/tmp/swaps", "w") as f: f.write(str(n))
'

# start_swapper [ROOT]: ROOT is the directory the "/" links point to (default /; the walking
# commands use a smaller one so that 200 walks of the whole session root do not take minutes).
start_swapper() {
        sbx_ok exec -i "$sid" sh -c 'mkdir -p /workspace/race && cat > /tmp/swap.py' <<<"$swap_py"
        sbx_ok exec "$sid" sh -c 'python3 /tmp/swap.py "$@" >/tmp/swap.log 2>&1 &' sh \
                "$canary" "$cdir" "$ntok" "${1:-/}"
        swapper_started=1
        wait_until 10 timeout 10 "$SBX" exec "$sid" test -e /tmp/swapper.ready ||
                fail "the swapper did not start: $(timeout 10 "$SBX" exec "$sid" cat /tmp/swap.log)"
}

# stop_swapper: stop it; $swaps = the renames it made.
stop_swapper() {
        swapper_started=
        timeout 10 "$SBX" exec "$sid" touch /tmp/swapper.stop || return 1
        wait_until 10 timeout 10 "$SBX" exec "$sid" test -e /tmp/swaps || return 1
        swaps=$(timeout 10 "$SBX" exec "$sid" cat /tmp/swaps)
}

# race CMD-ARGS-TEMPLATE...: 200 iterations; each template is one sbx call (words split, "@I"
# replaced by the iteration number). Every call must end with exit 0 or 1 within 10 s.
race() {
        local i tpl rc
        local -
        set -f
        for i in $(seq 200); do
                for tpl in "$@"; do
                        tpl=${tpl//@I/$i}
                        rc=0
                        # shellcheck disable=SC2086 # the template is split into words
                        timeout 10 "$SBX" $tpl </dev/null >>"$seen" 2>&1 || rc=$?
                        case $rc in
                        0) ok_calls=$((ok_calls + 1)) ;;
                        1) ;;
                        *) bad+=("iteration $i: sbx $tpl -> exit $rc") ;;
                        esac
                done
        done
}

# race_end: the swapper really ran during the race, the session survived, nothing leaked,
# and no file named after the token appeared on the host.
race_end() {
        stop_swapper || fail "the swapper did not stop"
        [ "${swaps:-0}" -ge 1000 ] || fail "only ${swaps:-0} swaps happened during the race"
        sbx_ok exec "$sid" true
        no_leak
        local found
        found=$(find / -xdev -maxdepth 2 -name "new-$ntok*" 2>/dev/null
                find "$pubdir" /tmp -maxdepth 4 -name "new-$ntok*" 2>/dev/null) || true
        [ -z "$found" ] || fail "files written on the host: $found"
}

@test "race: read while t and d are swapped with symlinks to the host, / and /proc (200x)" {
        new_session
        start_swapper
        ok_calls=0
        race "read $sid race/t" "read $sid race/d/canary-$ntok.txt"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no read succeeded: the race never hit a plain file"
}

@test "race: write while the parent directory is swapped (200x)" {
        new_session
        start_swapper
        ok_calls=0
        race "write $sid race/d/new-$ntok-@I x" "write $sid race/d/sub/new-$ntok-@I x"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no write succeeded"
}

@test "race: edit while the file and its directory are swapped (200x)" {
        new_session
        start_swapper
        ok_calls=0
        race "edit --replace-all $sid race/t e E" "edit --replace-all $sid race/t E e" \
                "edit $sid race/d/canary-$ntok.txt decoy DECOY"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no edit succeeded"
        sbx_ok exec "$sid" sh -c 'ls -A /workspace/race; ls -A /workspace/race/.d* 2>/dev/null; true' 
        [[ $output != *.sbx-edit-* ]] || fail "temp files left: $output"
}

@test "race: ls while the directory is swapped (200x)" {
        new_session
        start_swapper
        ok_calls=0
        race "ls $sid race/d/" "ls --json $sid race/t"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no ls succeeded"
}

@test "race: glob while the directory is swapped (200x)" {
        new_session
        start_swapper /etc
        ok_calls=0
        race "glob --path race/d $sid **/canary-*" "glob --path race/t $sid *"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no glob succeeded"
}

@test "race: grep while the file and the directory are swapped (200x)" {
        new_session
        start_swapper /etc
        ok_calls=0
        race "grep --mode content $sid needle race/d" "grep --mode count $sid needle race/t"
        race_end
        [ "$ok_calls" -gt 0 ] || fail "no grep succeeded"
}

# ---- edit's temp file ---------------------------------------------------------------------

@test "edit: pre-planted temp-file names (symlinks, FIFOs, dirs) are never used" {
        new_session
        in_sbx 'set -e; cd /workspace; mkdir w; echo "victim content" > victim; cd w
                echo "edit me" > target.txt
                # the names an editor would use, and the first 1024 of sbx own pattern
                for n in .target.txt.tmp target.txt.tmp target.txt~ .target.txt.swp target.txt.new \
                        ".#target.txt" .sbx-edit-target.txt .sbx-target.txt .sbx-edit- .sbx-edit-0; do
                        ln -s /workspace/victim "$n"
                done
                i=0; while [ $i -lt 1024 ]; do
                        n=$(printf ".sbx-edit-%016x" $i)
                        case $((i % 4)) in
                        0) ln -s /workspace/victim "$n" ;;
                        1) ln -s "$1" "$n" ;;
                        2) mkfifo "$n" ;;
                        3) mkdir "$n" ;;
                        esac
                        i=$((i + 1))
                done
                ls -lA --time-style=+%s . > /tmp/before' "$canary"
        local i
        for i in 1 2 3 4 5; do
                fc edit "$sid" w/target.txt "edit me" "edited $i"
                [ "$status" -eq 0 ] || fail "edit $i: $status $stderr"
                fc edit "$sid" w/target.txt "edited $i" "edit me"
                [ "$status" -eq 0 ] || fail "edit back $i: $status $stderr"
        done
        in_sbx 'cd /workspace/w; cat /workspace/victim; test -f target.txt && test ! -L target.txt && cat target.txt
                ls -lA --time-style=+%s . | grep -v " target.txt$" > /tmp/after
                grep -v " target.txt$" /tmp/before | diff - /tmp/after && echo SAME'
        [ "$output" = $'victim content\nedit me\nSAME' ] || fail "planted entries changed: $output"
        no_leak
}

# ---- volumes ------------------------------------------------------------------------------

@test "read-only volumes stay read-only, submounts included; the host dir is unchanged" {
        mkdir -p "$pubdir/ro/sub" "$pubdir/ro/dir"
        printf 'needle ro\n' >"$pubdir/ro/data.txt"
        chmod -R a+rwX "$pubdir/ro"
        mount -t tmpfs -o size=1m sbx-test "$pubdir/ro/sub"
        sbx_cleanup_mounts+=("$pubdir/ro/sub")
        printf 'needle sub\n' >"$pubdir/ro/sub/in-sub.txt"
        chmod -R a+rwX "$pubdir/ro/sub"
        local before
        before=$(cd "$pubdir/ro" && find . -printf '%p %s %T@ %m\n' | sort && cat data.txt sub/in-sub.txt)
        new_session --mount "$pubdir/ro:/data:ro"
        in_sbx 'ln -s /data /workspace/data-link'
        sbx_ok read "$sid" /data/data.txt
        sbx_ok read "$sid" /data/sub/in-sub.txt # the volume is recursive
        local p
        for p in /data/new.txt /data/dir/new.txt /data/newdir/new.txt /data/sub/new.txt \
                /workspace/data-link/new.txt /data/data.txt; do
                fc_fails write "$sid" "$p" x
        done
        sbx_expect 1 write --json "$sid" /data/new.txt x
        json_doc
        [ "$(jq -r .error.code <<<"$output")" = unsupported ] || fail "code: $output"
        for p in /data/data.txt /data/sub/in-sub.txt /workspace/data-link/data.txt; do
                fc_fails edit "$sid" "$p" needle X
        done
        sbx_try exec "$sid" sh -c 'touch /data/sub/x || exit 1'
        [ "$status" -ne 0 ] || fail "the submount of a :ro volume is writable from inside"
        local after
        after=$(cd "$pubdir/ro" && find . -printf '%p %s %T@ %m\n' | sort && cat data.txt sub/in-sub.txt)
        [ "$after" = "$before" ] || fail "the host dir changed:" "$(diff <(echo "$before") <(echo "$after"))"
        no_leak
}

@test "files the commands create are owned by the sandbox uid, never setuid, never host root" {
        mkdir -m 0777 "$pubdir/rw"
        chmod 0777 "$pubdir/rw"
        mkdir -m 0755 "$pubdir/rw/root-owned"
        new_session --mount "$pubdir/rw:/data"
        sbx_ok exec "$sid" sh -c 'read -r a b c </proc/self/uid_map; echo $b'
        local uid=$output
        [ "$uid" != 0 ] || fail "the session's uid 0 is the host's root"
        sbx_ok write "$sid" /data/new.txt hello
        sbx_ok write "$sid" /data/p/q/new.txt hello
        [ "$(stat -c '%u %g %a' "$pubdir/rw/new.txt")" = "$uid $uid 644" ] ||
                fail "write made: $(stat -c '%u %g %a' "$pubdir/rw/new.txt")"
        [ "$(stat -c '%u %a' "$pubdir/rw/p" "$pubdir/rw/p/q" "$pubdir/rw/p/q/new.txt" | tr '\n' ' ')" = "$uid 755 $uid 755 $uid 644 " ] ||
                fail "parents: $(stat -c '%n %u %a' "$pubdir/rw/p" "$pubdir/rw/p/q" "$pubdir/rw/p/q/new.txt")"
        # a setuid/setgid file of the session's, edited: the result has neither bit
        in_sbx 'printf "#!/bin/sh\necho a\n" > /data/s.sh; chmod 6755 /data/s.sh'
        local m
        m=$(stat -c %a "$pubdir/rw/s.sh")
        [ "$m" = 6755 ] || skip "the session cannot set the setuid bit here ($m)"
        sbx_ok edit "$sid" /data/s.sh 'echo a' 'echo b'
        [ "$(stat -c '%u %a' "$pubdir/rw/s.sh")" = "$uid 755" ] ||
                fail "after edit: $(stat -c '%u %a' "$pubdir/rw/s.sh")"
        # a directory the session cannot write: the command has the session's rights only
        fc_fails write "$sid" /data/root-owned/new.txt x
        [ -z "$(ls -A "$pubdir/rw/root-owned")" ] || fail "wrote into a host-root 0755 dir"
        local bad_files
        bad_files=$(find "$pubdir/rw" -mindepth 1 \( -perm /6000 -o -uid 0 \) ! -path "$pubdir/rw/root-owned")
        [ -z "$bad_files" ] || fail "setuid or host-root files: $bad_files"
        no_leak
}

@test "a file command the session stops (SIGSTOP) ends with an error instead of hanging" {
        new_session
        in_sbx 'mkdir /workspace/t && cd /workspace/t && seq 1 3000 | xargs touch && echo needle >1'
        sbx_ok exec -d "$sid" sh -c 'while :; do pkill -STOP -x sbx-files; done'
        local i stopped=0
        for i in 1 2 3; do
                sbx_try grep "$sid" needle /workspace/t
                [ "$status" -eq 0 ] && continue # the stopper missed it this time
                [ "$status" -eq 1 ] && [[ $stderr == *"stopped by a process of the session (SIGSTOP)"* ]] ||
                        fail "grep exited $status: $stderr"
                stopped=$((stopped + 1))
        done
        # the stopper did reach the helper (else this test saw nothing), and none is left
        [ "$stopped" -gt 0 ] || fail "the session never stopped the file helper"
        in_sbx 'pkill -f "while :; do pkill -[S]TOP"; sleep 0.2; ! pgrep -x sbx-files'
        # positive control: without the stopper the same grep finds it
        sbx_ok grep "$sid" needle /workspace/t
}
