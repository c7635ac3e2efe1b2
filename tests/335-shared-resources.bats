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

# Nothing of a failed import in the store $1: no tag, record, layer, or work directory.
store_is_empty() {
        [ ! -d "$1" ] && return 0
        local left
        left=$(find "$1/tags" "$1/images" "$1/layers" "$1/tmp" -mindepth 1 -maxdepth 1 2>/dev/null)
        [ -z "$left" ] || fail "left in the store:" "$left"
}

# make_bomb FILE: a zstd tar of one 2 GiB file of real zeros (~70 KB), streamed: no 2 GiB
# file is ever written here.
make_bomb() {
        {
                python3 -c 'import sys, tarfile
ti = tarfile.TarInfo("zeros"); ti.size = 2 << 30
sys.stdout.buffer.write(ti.tobuf(tarfile.GNU_FORMAT))'
                head -c 2G /dev/zero
                head -c 1024 /dev/zero
        } | zstd -q -1 >"$1"
}

@test "image import of a decompression bomb: zero runs stay holes, the store holds almost nothing" {
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        make_bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
        [ "$(stat -c %s "$BATS_TEST_TMPDIR/bomb.tar.zst")" -lt 200000 ] || fail "not a bomb"
        sbx_ok image import bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
        local f
        f=$(find "$SBX_IMAGE_STORE/layers" -name zeros -type f)
        [ -n "$f" ] || fail "the file is not in the store"
        # the positive control: the file is really there at its full size
        [ "$(stat -c %s "$f")" = 2147483648 ] || fail "size $(stat -c %s "$f")"
        local kib
        kib=$(du -sk "$SBX_IMAGE_STORE" | cut -f1)
        echo "# the store holds $kib KiB for 2 GiB of zeros" >&3
        [ "$kib" -lt 10240 ] || fail "the store takes $kib KiB"
        # and it reads as the zeros it stands for, at its start and at its end
        cmp -n 1048576 "$f" /dev/zero || fail "not zeros at the start"
        [ "$(tail -c 1048576 "$f" | tr -d '\0' | wc -c)" = 0 ] || fail "not zeros at the end"
}

@test "image import: SBX_IMAGE_MAX_SIZE bounds the unpacked total; a refused import leaves nothing" {
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        make_bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
        SBX_IMAGE_MAX_SIZE=1G sbx_expect 1 image import bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
        [[ $stderr == *"too large"*SBX_IMAGE_MAX_SIZE* ]] || fail "stderr: $stderr"
        [ "$(wc -l <<<"$stderr")" = 1 ] || fail "not one line: $stderr"
        store_is_empty "$SBX_IMAGE_STORE"
        SBX_IMAGE_MAX_SIZE=lots sbx_expect 2 image import bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
        [[ $stderr == *"invalid SBX_IMAGE_MAX_SIZE 'lots'"* ]] || fail "stderr: $stderr"
        store_is_empty "$SBX_IMAGE_STORE"
        # the positive control: a bound above its size lets the same archive in
        SBX_IMAGE_MAX_SIZE=3G sbx_ok image import bomb "$BATS_TEST_TMPDIR/bomb.tar.zst"
}

@test "image import of real data stops before the store's filesystem is full, leaving nothing" {
        [ "$(id -u)" -eq 0 ] || skip "mounting a small filesystem for the store needs root"
        local small=$BATS_TEST_TMPDIR/small big=$BATS_TEST_TMPDIR/big
        mkdir -p "$small" "$big" "$BATS_TEST_TMPDIR/data"
        mount -t tmpfs -o size=64M tmpfs "$small"
        sbx_cleanup_mounts+=("$small")
        mount -t tmpfs -o size=256M tmpfs "$big"
        sbx_cleanup_mounts+=("$big")
        head -c 60M /dev/urandom >"$BATS_TEST_TMPDIR/data/random"
        tar -C "$BATS_TEST_TMPDIR/data" -cf "$BATS_TEST_TMPDIR/data.tar" random
        rm -f "$BATS_TEST_TMPDIR/data/random"
        SBX_IMAGE_STORE=$small/store sbx_expect 1 image import data "$BATS_TEST_TMPDIR/data.tar"
        [[ $stderr == *"would leave less than 16 MiB free"* ]] || fail "stderr: $stderr"
        store_is_empty "$small/store"
        local avail
        avail=$(df -k --output=avail "$small" | tail -n1)
        [ "$avail" -gt 60000 ] || fail "the partial image was not removed: $avail KiB free"
        # the positive control: the same archive fits a store with room for it
        SBX_IMAGE_STORE=$big/store sbx_ok image import data "$BATS_TEST_TMPDIR/data.tar"
        [ "$(du -sk "$big/store" | cut -f1)" -gt 60000 ] || fail "the data did not land"
}

@test "device nodes: mknod of a block or character device is refused by the filter, fifos are not" {
        local p
        for p in default strict; do
                new_session --seccomp "$p"
                # python3's os.mknod: S_IFCHR/S_IFBLK fail with EPERM even in a missing
                # directory, where the kernel itself would answer ENOENT
                sbx_ok exec "$sid" python3 -c '
import errno, os, stat
for name, mode in (("chr", stat.S_IFCHR), ("blk", stat.S_IFBLK)):
    try:
        os.mknod("/nonexistent-dir/x", mode | 0o600, os.makedev(1, 3))
        print(name, "created")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
os.mkfifo("/tmp/fifo"); print("fifo", stat.S_ISFIFO(os.stat("/tmp/fifo").st_mode))'
                [ "$output" = $'chr EPERM\nblk EPERM\nfifo True' ] || fail "$p: $output"
                sbx_ok destroy "$sid"
        done
        # the positive control: without the filter the kernel answers ENOENT
        sbx_ok run --seccomp unconfined -- python3 -c '
import errno, os, stat
try:
    os.mknod("/nonexistent-dir/x", stat.S_IFCHR | 0o600, os.makedev(1, 3))
except OSError as e:
    print(errno.errorcode[e.errno])'
        [ "$output" = ENOENT ] || fail "unconfined: $output"
}
