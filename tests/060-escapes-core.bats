#!/usr/bin/env bats
# Known escapes of container runtimes, tried from inside; every one must fail.
# - leaked host fds (runc CVE-2024-21626 "Leaky Vessels"): nothing above fd 2 enters;
# - /proc/<pid>/exe of the processes that join the session (runc CVE-2019-5736): sbx
#   processes are non-dumpable, their exe, mem, root, cwd and fds cannot be opened;
# - TIOCSTI (bubblewrap CVE-2017-5226): the -T pty is the sandbox's own, so a faked
#   keystroke never reaches the caller's terminal;
# - a base whose /proc, /dev, /tmp or /workspace is a symlink (runc CVE-2019-16884,
#   CVE-2021-30465): refused, never followed.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

@test "no host fd reaches an exec: only 0 1 2 (and ls's own 3)" {
        canary "$BATS_TEST_TMPDIR/fd-canary"
        new_session
        exec 7<"$BATS_TEST_TMPDIR/fd-canary" 8<"$BATS_TEST_TMPDIR"
        sbx_ok exec "$sid" ls /proc/self/fd
        local got
        got=$(echo $output)
        exec 7<&- 8<&-
        [ "$got" = "0 1 2 3" ] || fail "fds inside: $got"
}

@test "no host fd reaches run, -i or -T either" {
        canary "$BATS_TEST_TMPDIR/fd-canary"
        exec 7<"$BATS_TEST_TMPDIR/fd-canary"
        sbx_ok run -- ls /proc/self/fd
        local a
        a=$(echo $output)
        new_session
        sbx_ok exec -i "$sid" ls /proc/self/fd </dev/null
        local b
        b=$(echo $output)
        pty_expect 0 "$SBX" exec -T "$sid" ls /proc/self/fd
        local c
        c=$(echo $output | tr -d '\r')
        exec 7<&-
        [ "$a" = "0 1 2 3" ] || fail "run: $a"
        [ "$b" = "0 1 2 3" ] || fail "exec -i: $b"
        [ "$c" = "0 1 2 3" ] || fail "exec -T: $c"
}

@test "no fd of any process in the session points to a host file" {
        canary "$BATS_TEST_TMPDIR/fd-canary"
        exec 7<"$BATS_TEST_TMPDIR/fd-canary" 8<"$BATS_TEST_TMPDIR"
        new_session
        # the loop's status is its last ls's: a process of the glob that ended meanwhile (the
        # exec's own transient ones) makes it 2, which says nothing about the fds seen
        sbx_ok exec "$sid" sh -c 'for p in /proc/[0-9]*; do ls -l $p/fd/ 2>/dev/null; done; true'
        [[ $output == *" 0 -> "* ]] || fail "no fd listed at all: $output"
        exec 7<&- 8<&-
        ! grep -e fd-canary -e "$BATS_TEST_TMPDIR" <<<"$output" || fail "a host file is open inside"
}

@test "cd /proc/self/fd/N with the caller's leaked directory fd fails" {
        public_dir
        canary "$pubdir/host-only-file"
        exec 7<"$pubdir"
        new_session
        sbx_try exec -w /proc/self/fd/7 "$sid" ls
        local s1=$status o1=$output
        sbx_try exec "$sid" sh -c 'cd /proc/self/fd/7 && ls'
        local s2=$status o2=$output
        exec 7<&-
        [ "$s1" -ne 0 ] || fail "-w /proc/self/fd/7 worked: $o1"
        [[ $o1 != *host-only-file* ]] || fail "-w /proc/self/fd/7 listed the host dir"
        [ "$s2" -ne 0 ] || fail "cd /proc/self/fd/7 worked: $o2"
        [[ $o2 != *host-only-file* ]] || fail "cd /proc/self/fd/7 listed the host dir"
}

# Inside: try to open the exe (read-only and O_PATH), mem, environ, root, cwd and fd dir of
# pid 1 and of every process whose name starts with sbx (the session init, the per-exec
# reapers, a joining sbx). Prints one line per success; "found N" at the end.
# A process forked by the reaper is still named sbx-reaper until it execs the payload, and
# the payload is an ordinary dumpable process of the sandbox: a success counts only if the
# process is still sbx code after the open (its name unchanged, as sbx never renames itself
# after an exec), or if the exe opened is a file the sandbox itself cannot see (the sbx
# binary of the host).
probe_sbx_procs='
import os, sys
found = 0
opened = []
me = os.getpid()

def comm_of(p):
    try:
        return open(f"/proc/{p}/comm").read().strip()
    except OSError:
        return None

def is_command(p):
    """Past the point of no return of execve the process is already the command (its mm, its
    creds, dumpable) while the kernel has yet to rename it: its exe is a file of the session,
    at the path it names. An sbx process never is (its exe is the host binary, and it is
    not dumpable, so its exe cannot even be read)."""
    try:
        target = os.readlink(f"/proc/{p}/exe")
        a, b = os.stat(f"/proc/{p}/exe"), os.stat(target)
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and os.path.basename(target) != "sbx"
    except OSError:
        return False

def foreign_file(fd):
    """The opened file is not one the sandbox can reach by its path (a host file)."""
    st = os.fstat(fd)
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
        other = os.stat(path)
        return (other.st_dev, other.st_ino) != (st.st_dev, st.st_ino)
    except OSError:
        return True

for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) == me:
        continue
    comm = comm_of(p)
    if comm is None or (not comm.startswith("sbx") and int(p) != 1):
        continue
    found += 1
    for what, flags in (("exe", os.O_RDONLY), ("exe", os.O_PATH), ("mem", os.O_RDONLY),
                        ("environ", os.O_RDONLY), ("root", os.O_RDONLY | os.O_DIRECTORY),
                        ("cwd", os.O_RDONLY | os.O_DIRECTORY), ("fd", os.O_RDONLY | os.O_DIRECTORY)):
        try:
            fd = os.open(f"/proc/{p}/{what}", flags)
        except OSError:
            continue
        still_sbx = comm_of(p) == comm and not is_command(p)
        foreign = what == "exe" and foreign_file(fd)
        os.close(fd)
        if still_sbx or foreign:
            opened.append(f"{p}({comm})/{what} flags={flags:#o}" + (" (a host file)" if foreign else ""))
    try:
        target = os.readlink(f"/proc/{p}/exe")
        if comm_of(p) == comm:
            opened.append(f"{p}({comm})/exe readlink -> {target}")
    except OSError:
        pass
for o in opened:
    print("OPENED", o)
print("found", found)
'

@test "/proc/1/exe and /proc/<joining sbx process>/exe cannot be opened (CVE-2019-5736)" {
        new_session
        sbx_ok exec "$sid" python3 -c "$probe_sbx_procs"
        ! grep OPENED <<<"$output" || fail "opened from inside:" "$output"
        local n
        n=$(sed -n 's/^found //p' <<<"$output")
        [ "${n:-0}" -ge 2 ] || fail "saw only ${n:-0} sbx processes (expected the init and the reaper)"
}

@test "the same from a background process while another exec is joining" {
        new_session
        sbx_ok exec -i "$sid" sh -c 'cat > /tmp/probe.py' <<<"$probe_sbx_procs"
        # a watcher in the background probes again and again while execs join the session
        sbx_ok exec "$sid" sh -c '(i=0; while [ $i -lt 30 ]; do python3 /tmp/probe.py | grep OPENED; i=$((i+1)); done > /tmp/probe.log 2>&1; touch /tmp/probe.done) >/dev/null 2>&1 &'
        local i
        for i in $(seq 1 20); do
                sbx_ok exec "$sid" true
        done
        wait_until 60 timeout 30 "$SBX" exec "$sid" test -e /tmp/probe.done || fail "the watcher did not finish"
        sbx_ok exec "$sid" cat /tmp/probe.log
        [ -z "$output" ] || fail "opened from inside while execs joined:" "$output"
}

@test "ptrace of the session init or the reaper fails" {
        new_session
        sbx_expect 1 exec "$sid" python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
ppid = int([l.split()[1] for l in open("/proc/self/status") if l.startswith("PPid:")][0])
ok = 0
for pid in (1, ppid):
    if libc.ptrace(16, pid, None, None) == 0:   # PTRACE_ATTACH
        print("attached to", pid); ok = 1
sys.exit(0 if ok else 1)'
}

# tiocsti_from_inside: inject "echo SBX-INJECTED" with TIOCSTI from a -T exec in $sid, then
# see whether the caller's own terminal received it.
tiocsti_from_inside() {
        cat >"$BATS_TEST_TMPDIR/tiocsti.sh" <<EOF
"$SBX" exec -T "$sid" python3 -c '
import fcntl, termios
for c in b"echo SBX-INJECTED\\n":
    try:
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    except OSError as e:
        print("TIOCSTI refused:", e.errno); break
'
# whatever was injected would now be waiting on our terminal
if read -r -t 2 line; then echo "CALLER-READ=[\$line]"; else echo "CALLER-READ-NOTHING"; fi
EOF
        pty_expect 0 bash "$BATS_TEST_TMPDIR/tiocsti.sh"
}

@test "TIOCSTI on the -T pty does not reach the caller's terminal (CVE-2017-5226)" {
        new_session
        tiocsti_from_inside
        [[ $output == *CALLER-READ-NOTHING* ]] || fail "the caller's terminal received input:" "$output"
}

@test "TIOCSTI without a seccomp filter lands in the sandbox's own pty, not the caller's" {
        # The filter refuses TIOCSTI (310-seccomp); without it the pty itself must hold.
        new_session --seccomp unconfined
        tiocsti_from_inside
        [[ $output != *"TIOCSTI refused"* ]] || fail "TIOCSTI was refused even unconfined:" "$output"
        [[ $output == *CALLER-READ-NOTHING* ]] || fail "the caller's terminal received input:" "$output"
}

@test "the -T pty belongs to the sandbox's devpts, not the caller's terminal" {
        new_session
        pty_expect 0 "$SBX" exec -T "$sid" sh -c 'for f in 0 1 2; do stat -L -c %d /proc/self/fd/$f; done; stat -c %d /dev/pts/ptmx'
        local devs
        devs=$(tr -d '\r' <<<"$output" | sort -u | wc -l)
        [ "$devs" -eq 1 ] || fail "stdio and /dev/pts are on different devices:" "$output"
}

@test "a base whose /proc, /dev, /tmp or /workspace is a symlink is refused, never followed" {
        public_dir
        local target=$pubdir/target d
        mkdir -p "$target"
        chmod 0777 "$target"
        for d in proc dev tmp workspace; do
                rm -rf "$pubdir/root"
                mkdir -p "$pubdir/root/usr" "$pubdir/root/etc" "$pubdir/root/proc" \
                        "$pubdir/root/dev" "$pubdir/root/tmp" "$pubdir/root/workspace"
                rmdir "$pubdir/root/$d"
                ln -s "$target" "$pubdir/root/$d"
                sbx_try create --rootfs "$pubdir/root"
                [ "$status" -ne 0 ] || fail "a base with /$d -> $target was accepted"
                [ "$status" -ne 124 ] || fail "create hung"
                [ -z "$(ls -A "$target")" ] || fail "/$d: written through the symlink: $(ls -A "$target")"
                ! grep -q " $target " /proc/self/mountinfo || fail "/$d: mounted on the host's $target"
        done
}

@test "a volume target that is a symlink in the base is refused" {
        public_dir
        mkdir -p "$pubdir/vol" "$pubdir/target" "$pubdir/root/usr" "$pubdir/root/etc" \
                "$pubdir/root/proc" "$pubdir/root/dev" "$pubdir/root/tmp" "$pubdir/root/workspace"
        chmod 0777 "$pubdir/target"
        ln -s "$pubdir/target" "$pubdir/root/data"
        sbx_try create --rootfs "$pubdir/root" --mount "$pubdir/vol:/data"
        [ "$status" -ne 0 ] || fail "a volume on a symlinked target was accepted"
        ! grep -q " $pubdir/target " /proc/self/mountinfo || fail "mounted on the host's target"
}
