#!/usr/bin/env bats
# Seccomp profiles (docs/SECURITY.md, "Seccomp"), tried from inside real
# sessions with the static probe of tests/probe.c, which makes one raw syscall and prints
# "NAME: ok" or "NAME: errno=ENAME (...)":
# - nested user namespaces, setns, namespace flags of clone; clone3 gives ENOSYS;
# - the old and new mount API (Flatpak CVE-2021-41133), pivot_root, chroot;
# - io_uring gives ENOSYS;
# - TIOCSTI/TIOCLINUX, also with high bits set in the request (bubblewrap CVE-2017-5226,
#   snapd CVE-2019-7303);
# - ptrace, process_vm_*, kcmp, pidfd_getfd, keyrings, bpf, userfaultfd, perf, kexec,
#   modules, syslog, acct, quota, swap, reboot, clock setters, open_by_handle_at;
# - socket families other than UNIX, INET, INET6, NETLINK; raw IP sockets;
# - the compat ABIs: int 0x80 (i386) and x32 syscalls are refused whatever they call.
# And the other side: `strict` still runs a shell, coreutils, python3, gcc and git.

load helpers
setup() {
        setup_sbx
        [ -n "${SBX_PROBE:-}" ] && [ -x "$SBX_PROBE" ] ||
                fail "SBX_PROBE must name the static probe built from tests/probe.c"
        # a directory uid 0 of the session (an unprivileged host uid) can traverse
        public_dir
        cp "$SBX_PROBE" "$pubdir/probe"
        chmod 0755 "$pubdir/probe"
        probe_dir=$pubdir
}
teardown() { teardown_sbx; }

# What every probe must report under the default profile ("ok" or the errno name).
default_expect='
unshare-user EPERM
unshare-mount EPERM
unshare-net EPERM
unshare-newpid EPERM
clone-newuser EPERM
clone-newns EPERM
clone ok
clone3 ENOSYS
fork ok
setns EPERM
mount EPERM
umount EPERM
pivot_root EPERM
chroot EPERM
open_tree EPERM
move_mount EPERM
fsopen EPERM
fsconfig EPERM
fsmount EPERM
fspick EPERM
mount_setattr EPERM
io_uring_setup ENOSYS
io_uring_enter ENOSYS
io_uring_register ENOSYS
ptrace-attach EPERM
ptrace-traceme EPERM
process_vm_readv EPERM
kcmp EPERM
pidfd_getfd EPERM
tiocsti EPERM
tiocsti-high EPERM
tioclinux EPERM
keyctl EPERM
add_key EPERM
request_key EPERM
bpf EPERM
userfaultfd EPERM
perf_event_open EPERM
kexec_load EPERM
init_module EPERM
finit_module EPERM
delete_module EPERM
syslog EPERM
acct EPERM
quotactl EPERM
swapon EPERM
swapoff EPERM
reboot EPERM
settimeofday EPERM
clock_settime EPERM
clock_adjtime EPERM
adjtimex EPERM
open_by_handle_at EPERM
name_to_handle_at EPERM
socket-packet EAFNOSUPPORT
socket-alg EAFNOSUPPORT
socket-vsock EAFNOSUPPORT
socket-high EAFNOSUPPORT
socket-raw EPERM
socket-netlink ok
socket-unix ok
socket-inet ok
socket-inet6 ok
socketpair-unix ok
personality ENOSYS
personality-query ok
sethostname EPERM
setdomainname EPERM
lookup_dcookie EPERM
vmsplice ok
mknod EPERM
mknod-chr-nodir EPERM
mknod-blk-nodir EPERM
mknod-chr-high EPERM
mknod-legacy-blk EPERM
mknod-whiteout EPERM
mknod-fifo ok
mknod-sock ok
int80-getpid ENOSYS
int80-unshare ENOSYS
x32-getpid ENOSYS
x32-unshare ENOSYS
getpid ok
'

# strict: the same refusals; what it does not list fails with ENOSYS.
strict_expect=$(sed 's/^vmsplice ok$/vmsplice ENOSYS/' <<<"$default_expect")

# run_probes PROFILE EXPECTED: every probe of EXPECTED ("NAME WANT" lines; WANT is ok, an
# errno name, or !ERRNO for "anything but") in one session of PROFILE; fails listing every
# probe whose answer differs.
run_probes() {
        local profile=$1 expected=$2 names
        names=$(awk 'NF { print $1 }' <<<"$expected")
        # shellcheck disable=SC2086 # one word per probe name
        sbx_ok run --seccomp "$profile" --mount "$probe_dir:/probe:ro" -- \
                sh -c 'for p in "$@"; do /probe/probe "$p"; done; true' sh $names
        local bad=() name want line got
        while read -r name want; do
                [ -n "$name" ] || continue
                line=$(grep -m1 "^$name: " <<<"$output") || {
                        bad+=("$name: no answer (want $want)")
                        continue
                }
                got=${line#"$name: "}
                case $got in
                ok) got=ok ;;
                errno=*) got=${got#errno=} && got=${got%% *} ;;
                esac
                case $want in
                !*) [ "$got" != "${want#!}" ] || bad+=("$name: got '$line', want $want") ;;
                *) [ "$got" = "$want" ] || bad+=("$name: got '$line', want $want") ;;
                esac
        done <<<"$expected"
        [ ${#bad[@]} -eq 0 ] || fail "seccomp '$profile':" "${bad[@]}"
}

@test "default: every escape probe is refused with the errno of docs/SECURITY.md" {
        run_probes default "$default_expect"
}

@test "strict: every escape probe is refused too" {
        run_probes strict "$strict_expect"
}

@test "the probes are real: unconfined, the kernel answers the same calls differently" {
        # Calls the kernel lets any process make in a user namespace without capabilities
        # (or refuses with another errno on hardened hosts): the answers of the two tests
        # above are the filter's. TIOCSTI goes to the probe's own pty, never a terminal.
        run_probes unconfined '
tiocsti !EPERM
tiocsti-high !EPERM
clone3 ok
io_uring_setup !ENOSYS
kcmp !EPERM
pidfd_getfd !EPERM
ptrace-attach !EPERM
process_vm_readv !EPERM
keyctl !EPERM
personality ok
socket-netlink ok
mknod-chr-nodir ENOENT
mknod-blk-nodir ENOENT
mknod-chr-high ENOENT
mknod-legacy-blk ENOENT
mknod-whiteout ok
mknod-fifo ok
'
        [[ $stderr == *unconfined* ]] || fail "no warning for --seccomp unconfined: $stderr"
}

@test "every process in a session is filtered: init, reapers, background processes, file commands" {
        local profile
        for profile in default strict; do
                new_session --seccomp "$profile"
                # a background process, and an exec running while another one looks
                sbx_ok exec "$sid" sh -c 'sleep 30 >/dev/null 2>&1 &'
                sbx_ok exec "$sid" sh -c '(sleep 2; true) >/dev/null 2>&1 &'
                sbx_ok exec "$sid" sh -c 'for p in /proc/[0-9]*; do
                                s=$(grep -s "^Seccomp:" $p/status) || continue
                                echo "$(cat $p/comm 2>/dev/null) $s"; done'
                local bad
                bad=$(grep -Ev $'Seccomp:\t2$' <<<"$output") || true
                [ -z "$bad" ] || fail "$profile: unfiltered processes:" "$bad"
                grep -q '^sbx-init ' <<<"$output" || fail "$profile: the init was not seen: $output"
                grep -q '^sbx-reaper ' <<<"$output" || fail "$profile: no reaper was seen: $output"
                grep -q '^sleep ' <<<"$output" || fail "$profile: the background sleep was not seen: $output"
                # the file-command helper reads its own status
                sbx_ok read "$sid" /proc/self/status
                grep -Eq $'^ +[0-9]+\tSeccomp:\t2$' <<<"$output" || fail "$profile: file command: $output"
                grep -Eq $'^ +[0-9]+\tNoNewPrivs:\t1$' <<<"$output" || fail "$profile: file command NNP"
                grep -Eq $'^ +[0-9]+\tCapEff:\t0+$' <<<"$output" || fail "$profile: file command caps"
                grep -Eq $'^ +[0-9]+\tCapBnd:\t0+$' <<<"$output" || fail "$profile: file command bounding set"
        done
}

@test "the profile is the session's: strict and default differ in every exec of the session" {
        new_session --seccomp strict --mount "$probe_dir:/probe:ro"
        local i
        for i in 1 2 3; do
                sbx_ok exec "$sid" /probe/probe getpid
                sbx_expect 1 exec "$sid" /probe/probe vmsplice
                [[ $output == *errno=ENOSYS* ]] || fail "strict exec $i: $output"
        done
        sbx_ok exec -T "$sid" /probe/probe getpid </dev/null
        sbx_expect 1 exec -T "$sid" /probe/probe vmsplice </dev/null
        [[ $output == *errno=ENOSYS* ]] || fail "strict exec -T: $output"
        new_session --mount "$probe_dir:/probe:ro"
        sbx_ok exec "$sid" /probe/probe vmsplice
}

@test "[security] seccomp in sandbox.ini selects the profile; --seccomp wins over it" {
        printf '[security]\nseccomp = strict\n' >"$BATS_TEST_TMPDIR/strict.ini"
        sbx_expect 1 run --config "$BATS_TEST_TMPDIR/strict.ini" --mount "$probe_dir:/probe:ro" -- /probe/probe vmsplice
        [[ $output == *errno=ENOSYS* ]] || fail "ini strict: $output"
        sbx_ok run --config "$BATS_TEST_TMPDIR/strict.ini" --seccomp default --mount "$probe_dir:/probe:ro" -- /probe/probe vmsplice
        printf '[security]\nseccomp = none-such\n' >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 create --config "$BATS_TEST_TMPDIR/bad.ini"
}

# The audit-log half of this requirement (issue 3 item 1: "unconfined warns on stderr and in
# the audit log") waits for the audit log of issue 5: `sbx log` does not exist yet. Add its
# assertions here when it lands.
@test "unconfined warns on stderr; default and strict do not" {
        new_session --seccomp unconfined
        [[ $stderr == *unconfined* ]] || fail "no warning on stderr: $stderr"
        new_session --seccomp strict
        [[ $stderr != *unconfined* ]] || fail "a strict session warned about unconfined: $stderr"
        new_session
        [[ $stderr != *unconfined* ]] || fail "a default session warned about unconfined: $stderr"
}

@test "the filter is on in every process of a session, exec and file commands included" {
        new_session --seccomp strict
        sbx_ok exec "$sid" sh -c 'grep Seccomp: /proc/self/status; grep Seccomp: /proc/1/status'
        [ "$(grep -c 'Seccomp:[[:space:]]*2' <<<"$output")" -eq 2 ] ||
                fail "not filtered: $output"
        # the file commands run confined with the session's profile and must still work
        sbx_ok write "$sid" /workspace/f.txt "hello seccomp"
        sbx_ok read "$sid" /workspace/f.txt
        [[ $output == *"hello seccomp"* ]] || fail "read: $output"
        sbx_ok edit "$sid" /workspace/f.txt hello bye
        sbx_ok ls "$sid" /workspace
        sbx_ok grep "$sid" bye /workspace
        sbx_ok glob "$sid" '*.txt'
}

# The workloads `strict` must keep running (and `default`, a superset, too).
shell_work='set -e
cd /tmp
echo hello >a.txt; cat a.txt >/dev/null; cp a.txt b.txt; mv b.txt c.txt; mkdir -p x/y
cp -a c.txt x/y/; ls -la x/y >/dev/null; printf "3\n1\n2\n" | sort | head -n1 >/dev/null
find . -name "*.txt" | wc -l >/dev/null; rm -rf x c.txt; ln -s a.txt l; readlink l >/dev/null
stat a.txt >/dev/null; tar czf t.tgz a.txt; tar xzf t.tgz -O >/dev/null; sha256sum a.txt >/dev/null
sed -n 1p a.txt >/dev/null; awk "{print \$1}" a.txt >/dev/null; grep -r hello . >/dev/null
mkfifo f; (echo p >f &); cat f >/dev/null; timeout 5 sleep 0.1; date >/dev/null
bash -c "x=\$(echo sub); [[ \$x == sub ]]; echo \$((1 + 2)) >/dev/null"
echo SHELL-OK'

python_work='import ssl, sqlite3, subprocess, threading, multiprocessing, socket
subprocess.run(["true"], check=True)
sqlite3.connect(":memory:").execute("select 1")
ssl.create_default_context()
t = threading.Thread(target=lambda: None); t.start(); t.join()
with multiprocessing.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.send(b"x"); assert a.recv(1) == b"x"
print("PYTHON-OK")'

gcc_work='set -e
cd /tmp
printf "#include <stdio.h>\nint main(void) { puts(\"GCC-OK\"); return 0; }\n" >h.c
gcc -O2 -o h h.c
./h'

git_work='set -e
cd /workspace
export HOME=/workspace GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
git init -q r; cd r; echo a >f; git add f; git commit -qm one; echo b >>f; git commit -qam two
git log --oneline | wc -l | grep -qx 2; git status --short; git diff HEAD~1 >/dev/null
echo GIT-OK'

@test "strict runs sh, bash and coreutils" {
        sbx_ok run --seccomp strict -- sh -c "$shell_work"
        [[ $output == *SHELL-OK* ]] || fail "$output"
}

@test "strict runs python3 with ssl, sqlite3, subprocess, threads, multiprocessing" {
        command -v python3 >/dev/null || skip "no python3 on this host"
        sbx_ok run --seccomp strict -- python3 -c "$python_work"
        [[ $output == *PYTHON-OK* ]] || fail "$output"
}

@test "strict runs gcc: compile, assemble, link, run" {
        command -v gcc >/dev/null || skip "no gcc on this host"
        sbx_ok run --seccomp strict -- sh -c "$gcc_work"
        [[ $output == *GCC-OK* ]] || fail "$output"
}

@test "strict runs git init, add, commit, log" {
        command -v git >/dev/null || skip "no git on this host"
        sbx_ok run --seccomp strict -- sh -c "$git_work"
        [[ $output == *GIT-OK* ]] || fail "$output"
}

@test "default runs the same workloads" {
        sbx_ok run -- sh -c "$shell_work"
        [[ $output == *SHELL-OK* ]] || fail "$output"
        if command -v python3 >/dev/null; then
                sbx_ok run -- python3 -c "$python_work"
                [[ $output == *PYTHON-OK* ]] || fail "$output"
        fi
        if command -v gcc >/dev/null; then
                sbx_ok run -- sh -c "$gcc_work"
                [[ $output == *GCC-OK* ]] || fail "$output"
        fi
        if command -v git >/dev/null; then
                sbx_ok run -- sh -c "$git_work"
                [[ $output == *GIT-OK* ]] || fail "$output"
        fi
}

@test "sbx check reports both profiles as available" {
        # exit 4 is fine here: another feature (cgroups) may be missing on this host
        run --separate-stderr timeout 60 "$SBX" check --json
        [ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "check: $status $output $stderr"
        local p
        for p in seccomp-default seccomp-strict; do
                jq -e --arg p "$p" '.features[] | select(.name == $p) | .available' \
                        <<<"$output" >/dev/null || fail "$p: $output"
        done
}

# The build's program generator (seccomp-gen) removes a half-written output on a write error,
# and only a regular file: given a device it once removed the host's /dev/full. Here on a
# private node of the same device (a regression removes that node only) and on a full tmpfs.
@test "seccomp-gen: a write error removes a half-written file, never a device" {
        local gen tiny=$BATS_TEST_TMPDIR/tiny
        gen=$(dirname "$SBX")/src/sandbox/seccomp-gen
        [ -x "$gen" ] || fail "no seccomp-gen next to $SBX"
        mknod -m 600 "$BATS_TEST_TMPDIR/full" c 1 7
        # positive control: the node is the full device (a write to it fails with ENOSPC)
        ! printf x 2>/dev/null >"$BATS_TEST_TMPDIR/full" || fail "the node takes writes"
        LSAN_OPTIONS=detect_leaks=0 _expect 1 "$gen" "$BATS_TEST_TMPDIR/full"
        [[ $stderr == *"failed to write"* ]] || fail "$stderr"
        [ -c "$BATS_TEST_TMPDIR/full" ] || fail "seccomp-gen removed the device node"
        # nor a symlink to it (unlink would remove the link)
        ln -s "$BATS_TEST_TMPDIR/full" "$BATS_TEST_TMPDIR/link"
        LSAN_OPTIONS=detect_leaks=0 _expect 1 "$gen" "$BATS_TEST_TMPDIR/link"
        [ -L "$BATS_TEST_TMPDIR/link" ] || fail "seccomp-gen removed the symlink"
        mkdir "$tiny"
        mount -t tmpfs -o size=4k tiny "$tiny"
        LSAN_OPTIONS=detect_leaks=0 _expect any "$gen" "$tiny/out.c"
        local left
        left=$(ls -A "$tiny")
        umount "$tiny"
        [ "$status" -eq 1 ] || fail "seccomp-gen exited $status on a full file system"
        [[ $stderr == *"failed to write"* ]] || fail "$stderr"
        [ -z "$left" ] || fail "a half-written file is left: $left"
        # and a write that fits succeeds
        LSAN_OPTIONS=detect_leaks=0 _expect 0 "$gen" "$BATS_TEST_TMPDIR/ok.c"
        grep -q 'seccomp_bpf_profiles' "$BATS_TEST_TMPDIR/ok.c"
}
