#!/usr/bin/env bats
# Kernel resources every session draws from the same host pool (issue 17, "Shared kernel
# resources"): the ptys of kernel.pty.max, the disk of the image store, and device nodes.
# Each test tries to take what is shared and shows it bounded, with a positive control that
# shows the workload really takes the resource up to the bound.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# Opens ptys inside the session until the kernel refuses one; prints "N ERRNO" and keeps
# them open for HOLD seconds (0: exit at once).
open_ptys_py='
import errno, os, sys, time
fds = []
err = "none"
while len(fds) < 5000:
    try:
        fds.append(os.openpty())
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
print(len(fds), err, flush=True)
time.sleep(float(sys.argv[1]))
'

@test "ptys: a session holds at most --ptys of them (and exactly that many)" {
        new_session --ptys 5
        sbx_ok exec "$sid" python3 -c "$open_ptys_py" 0
        # the positive control is the 5: the workload takes every pty it is given
        [ "$output" = "5 ENOSPC" ] || fail "with --ptys 5 the session opened: $output"
        sbx_ok destroy "$sid"
}

@test "ptys: the default is 64; [limits] ptys and SBX_PTYS set it too" {
        new_session
        sbx_ok exec "$sid" python3 -c "$open_ptys_py" 0
        [ "$output" = "64 ENOSPC" ] || fail "by default the session opened: $output"
        sbx_ok destroy "$sid"

        printf '[limits]\nptys = 3\n' >"$BATS_TEST_TMPDIR/ptys.ini"
        new_session --config "$BATS_TEST_TMPDIR/ptys.ini"
        sbx_ok exec "$sid" python3 -c "$open_ptys_py" 0
        [ "$output" = "3 ENOSPC" ] || fail "with ptys = 3 the session opened: $output"
        sbx_ok destroy "$sid"

        SBX_PTYS=2 new_session
        sbx_ok exec "$sid" python3 -c "$open_ptys_py" 0
        [ "$output" = "2 ENOSPC" ] || fail "with SBX_PTYS=2 the session opened: $output"
        sbx_ok destroy "$sid"
}

@test "ptys: a bad --ptys is a usage error" {
        local v
        for v in 0 4097 -1 many; do
                sbx_expect 2 create --ptys "$v"
                [[ $stderr == *ptys* ]] || fail "--ptys $v: $stderr"
        done
}

@test "ptys: a session that holds all its ptys leaves exec -T working in another" {
        new_session --ptys 8
        local hog=$sid
        # the hog holds every pty it can get while the other session runs exec -T
        "$SBX" exec "$hog" python3 -c "$open_ptys_py" 60 >"$BATS_TEST_TMPDIR/hog.out" &
        local hog_pid=$!
        wait_until 20 grep -q ENOSPC "$BATS_TEST_TMPDIR/hog.out" ||
                fail "the hog did not run: $(cat "$BATS_TEST_TMPDIR/hog.out")"
        [ "$(cat "$BATS_TEST_TMPDIR/hog.out")" = "8 ENOSPC" ] ||
                fail "the hog opened: $(cat "$BATS_TEST_TMPDIR/hog.out")"
        # in the hog itself, -T now fails (the positive control: its ptys are all taken)
        sbx_expect 125 exec -T "$hog" true
        new_session
        sbx_ok exec -T "$sid" tty
        [[ $output == /dev/pts/* ]] || fail "exec -T in the other session: $output"
        kill "$hog_pid"
        wait "$hog_pid" || true
        sbx_ok destroy "$hog" "$sid"
}

@test "ptys: the audit log records the bound" {
        new_session --ptys 7
        sbx_ok log "$sid"
        jq -e -s '.[0].limits.ptys.value == 7' <<<"$output" >/dev/null ||
                fail "no ptys limit in the audit log: $output"
        sbx_ok destroy "$sid"
}
