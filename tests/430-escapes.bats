#!/usr/bin/env bats
# Escape attempts that must fail, tried from inside real sessions: one test per row of
# docs/SECURITY.md, "Boundaries", then the classic container-escape checks
# (setuid binaries, /proc/sys, raw sockets, mount, mknod, other sessions, /dev, /sys,
# cgroupfs). Where a boundary has two layers (seccomp and the kernel's own checks), the
# attempt is also made with --seccomp unconfined, so that the second layer is shown to hold
# on its own. The static probe (tests/probe.c) makes single raw syscalls.

load helpers
setup() {
        setup_sbx
        [ -n "${SBX_PROBE:-}" ] && [ -x "$SBX_PROBE" ] ||
                fail "SBX_PROBE must name the static probe built from tests/probe.c"
        # a directory the session's uid (an unprivileged host uid) can traverse
        public_dir
        mkdir -m 0755 "$pubdir/probe"
        cp "$SBX_PROBE" "$pubdir/probe/probe"
        chmod 0755 "$pubdir/probe/probe"
        probe_mount="$pubdir/probe:/probe:ro"
        bg_pids=()
}
teardown() {
        local p
        for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
        teardown_sbx
}

# probe_is WANT NAME [PID]: run the probe in session $sid; its answer must be WANT ("ok", an
# errno name, or "!X" for anything but X).
probe_is() {
        local want=$1
        shift
        sbx_try exec "$sid" /probe/probe "$@"
        local got=$output
        case $got in
        *": ok") got=ok ;;
        *": errno="*) got=${got#*errno=} && got=${got%% *} ;;
        *) fail "probe $*: no answer (exit $status): $output $stderr" ;;
        esac
        case $want in
        !*) [ "$got" != "${want#!}" ] || fail "probe $*: $output (want anything but ${want#!})" ;;
        *) [ "$got" = "$want" ] || fail "probe $*: $output (want $want)" ;;
        esac
}

# ---- the escapes of docs/SECURITY.md -------------------------------------------------------------

# Inside: a watcher loops over every process whose comm starts with "sbx" (the session init
# and every joining sbx process: the per-exec reaper, the fork that joins, the file-command
# helper) and tries to open its /proc/<pid>/exe for writing, read-write, reading and as O_PATH
# (then re-opens the O_PATH fd for writing, the CVE-2019-5736 trick). An exe that opens is
# the sbx binary when its device and inode are the host binary's (argv[1], argv[2]); a
# process that has just become the payload (its exe is the payload's) is not an attack.
watch_exe_py='
import os, sys
me = os.getpid()
sbx_id = (int(sys.argv[1]), int(sys.argv[2]))
seen, opened = {}, []
def attempt(p):
    for name, flags in (("wronly", os.O_WRONLY), ("rdwr", os.O_RDWR), ("rdonly", os.O_RDONLY),
                        ("path", os.O_PATH)):
        try:
            fd = os.open("/proc/%s/exe" % p, flags)
        except OSError:
            continue
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == sbx_id:
            opened.append("%s %s" % (p, name))
            try:
                os.close(os.open("/proc/self/fd/%d" % fd, os.O_WRONLY))
                opened.append("%s reopened-for-writing" % p)
            except OSError:
                pass
        os.close(fd)
open("/tmp/watch.ready", "w").close()
while not os.path.exists("/tmp/watch.stop"):
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            comm = open("/proc/%s/comm" % p).read().strip()
        except OSError:
            continue
        if p != "1" and not comm.startswith("sbx"):
            continue
        seen[comm] = seen.get(comm, 0) + 1
        attempt(p)
with open("/tmp/watch.out", "w") as f:
    for o in opened:
        print("OPENED", o, file=f)
    for c, n in sorted(seen.items()):
        print("SEEN", c, n, file=f)
'

@test "runc CVE-2019-5736: /proc/<pid>/exe of the init and of joining sbx processes never opens (100 execs)" {
        # the session runs from a copy of sbx, so even a successful attack could not touch the build
        cp "$SBX" "$pubdir/sbx"
        local SBX=$pubdir/sbx sum
        sum=$(sha256sum <"$SBX")
        new_session
        sbx_ok exec -i "$sid" sh -c 'cat > /tmp/watch.py' <<<"$watch_exe_py"
        sbx_ok exec "$sid" sh -c 'python3 /tmp/watch.py "$@" >/tmp/watch.log 2>&1 &' sh \
                "$(stat -c %d "$SBX")" "$(stat -c %i "$SBX")"
        wait_until 10 timeout 10 "$SBX" exec "$sid" test -e /tmp/watch.ready || fail "no watcher"
        # each exec also attacks its own parent (the per-exec reaper) and pid 1 directly
        local i bad=()
        for i in $(seq 100); do
                sbx_ok exec "$sid" sh -c 'c=$(cat /proc/$PPID/comm); r=
                        (exec 3<>/proc/$PPID/exe) 2>/dev/null && r="$r rdwr"
                        (exec 3>>/proc/$PPID/exe) 2>/dev/null && r="$r append"
                        (exec 3</proc/$PPID/exe) 2>/dev/null && r="$r rdonly"
                        (exec 3<>/proc/1/exe) 2>/dev/null && r="$r init-rdwr"
                        (exec 3</proc/1/exe) 2>/dev/null && r="$r init-rdonly"
                        readlink /proc/$PPID/exe >/dev/null 2>&1 && r="$r readlink"
                        echo "$c:$r"'
                [ "$output" = "sbx-reaper:" ] || bad+=("exec $i: $output")
                if [ $((i % 10)) -eq 0 ]; then
                        sbx_ok ls "$sid" /tmp # a file-command helper joins too
                fi
        done
        sbx_ok exec "$sid" touch /tmp/watch.stop
        wait_until 10 timeout 10 "$SBX" exec "$sid" test -e /tmp/watch.out || fail "the watcher did not end"
        sbx_ok exec "$sid" cat /tmp/watch.out
        local out=$output
        [ ${#bad[@]} -eq 0 ] || fail "an exec opened its joining parent's exe:" "${bad[@]}"
        ! grep -q OPENED <<<"$out" || fail "opened from inside:" "$(grep OPENED <<<"$out" | head)"
        grep -q '^SEEN sbx-init ' <<<"$out" || fail "the watcher never saw the init: $out"
        grep '^SEEN sbx' <<<"$out" | grep -vq '^SEEN sbx-init ' ||
                fail "the watcher never saw a joining process: $out"
        [ "$(sha256sum <"$SBX")" = "$sum" ] || fail "the sbx binary changed"
}

@test "runc CVE-2016-9962: ptrace and process_vm_readv of the init and of the joining reaper fail, unconfined too" {
        local profile
        for profile in default unconfined; do
                new_session --seccomp "$profile" --mount "$probe_mount"
                # the probe's own child: only the seccomp filter refuses (shows the probe works)
                if [ "$profile" = unconfined ]; then
                        probe_is ok ptrace-attach
                else
                        probe_is EPERM ptrace-attach
                fi
                probe_is EPERM ptrace-attach 1
                probe_is '!ok' process_vm_readv 1
                sbx_try exec "$sid" sh -c 'exec /probe/probe ptrace-attach $PPID'
                [[ $output == "ptrace-attach: errno=EPERM"* ]] || fail "$profile: attach to the reaper: $output"
                sbx_try exec "$sid" sh -c 'exec /probe/probe process_vm_readv $PPID'
                [[ $output == "process_vm_readv: errno="* ]] || fail "$profile: read the reaper: $output"
                # no fd, memory or environment of a joining process is readable
                sbx_try exec "$sid" sh -c 'ls /proc/$PPID/fd /proc/1/fd 2>&1; cat /proc/$PPID/environ /proc/1/environ /proc/$PPID/mem 2>&1 | head -c 300'
                [[ $output != *"->"* && $output != *SBX_* && $output != *PATH=* ]] ||
                        fail "$profile: a joining process is open to the session: $output"
        done
}

@test "runc CVE-2024-21626: fds the caller leaks never enter; cd /proc/self/fd/7 fails" {
        canary "$pubdir/canary"
        chmod 0644 "$pubdir/canary"
        new_session
        exec 7<"$pubdir/canary" 8<"$pubdir" 9>>"$pubdir/canary"
        sbx_try exec "$sid" ls /proc/self/fd
        local s1=$status o1=$output
        sbx_try exec "$sid" ls -l /proc/self/fd
        local o1l=$output
        sbx_try exec "$sid" sh -c 'cd /proc/self/fd/7 && pwd && ls'
        local s2=$status o2=$output
        sbx_try exec "$sid" sh -c 'cd /proc/self/fd/8 && pwd && ls'
        local s3=$status o3=$output
        sbx_try exec -w /proc/self/fd/8 "$sid" ls
        local s4=$status o4=$output
        sbx_try run -- sh -c 'ls /proc/self/fd; cat /proc/self/fd/7 /proc/self/fd/9 2>&1'
        local s5=$status o5=$output
        sbx_try exec -i "$sid" sh -c 'for p in /proc/[0-9]*; do ls -l $p/fd 2>/dev/null; readlink $p/cwd $p/root 2>/dev/null; done' </dev/null
        local o6=$output
        exec 7<&- 8<&- 9>&-
        [ "$s1" -eq 0 ] || fail "ls -l /proc/self/fd: exit $s1"
        [ "$(echo $o1)" = "0 1 2 3" ] || fail "fds inside: $(echo $o1)" "$o1l"
        [[ $o1l != *"$pubdir"* && $o1l != *canary* ]] || fail "a host path is open inside: $o1l"
        [ "$s2" -ne 0 ] || fail "cd /proc/self/fd/7 worked: $o2"
        [ "$s3" -ne 0 ] || fail "cd /proc/self/fd/8 worked: $o3"
        [ "$s4" -ne 0 ] || fail "exec -w /proc/self/fd/8 worked: $o4"
        [[ "$o2$o3$o4$o5$o6" != *canary* && "$o2$o3$o4$o5$o6" != *"$pubdir"* ]] ||
                fail "the host dir or canary was reached:" "$o2" "$o3" "$o4" "$o5" "$o6"
        [ "$(echo $o5 | cut -d' ' -f1-4)" = "0 1 2 3" ] || fail "run: $o5"
        [[ $o5 != *"sbx canary"* ]] || fail "run read a leaked fd: $o5"
}

# A base DIR with the usual directories (usr etc proc dev tmp workspace).
make_base() {
        rm -rf "$1"
        mkdir -p "$1"/{usr,etc,proc,dev,tmp,workspace}
        chmod -R 0755 "$1"
}

@test "runc CVE-2019-16884/CVE-2021-30465: a base with a symlinked /proc, /dev, /tmp or /workspace is refused" {
        local base=$pubdir/base target=$pubdir/target d how
        mkdir -m 0777 "$target"
        chmod 0777 "$target"
        # the same base without a symlink is accepted: the refusals below are the symlinks'
        make_base "$base"
        new_session --rootfs "$base"
        sbx_ok destroy "$sid"
        for d in proc dev tmp workspace; do
                for how in abs rel; do
                        make_base "$base"
                        rmdir "$base/$d"
                        if [ $how = abs ]; then
                                ln -s "$target" "$base/$d"
                        else
                                ln -s "../target" "$base/$d"
                        fi
                        sbx_try create --rootfs "$base"
                        [ "$status" -ne 0 ] || fail "/$d -> $(readlink "$base/$d") was accepted"
                        [ "$status" -ne 124 ] || fail "create hung"
                        [ -z "$output" ] || fail "create printed an id: $output"
                        [ -z "$(ls -A "$target")" ] || fail "/$d ($how): written through the symlink: $(ls -A "$target")"
                        ! grep -q " $target " /proc/self/mountinfo || fail "/$d ($how): mounted on the host's $target"
                        [ -z "$(find "$SBX_RUNTIME_DIR" -maxdepth 1 -name 'sb_*' 2>/dev/null)" ] ||
                                fail "/$d ($how): left $(ls "$SBX_RUNTIME_DIR")"
                done
        done
        # and a volume target that is a symlink in the base
        make_base "$base"
        mkdir -p "$pubdir/vol"
        ln -s "$target" "$base/data"
        sbx_try create --rootfs "$base" --mount "$pubdir/vol:/data"
        [ "$status" -ne 0 ] || fail "a volume on a symlinked target was accepted"
        ! grep -q " $target " /proc/self/mountinfo || fail "the volume was mounted on the host's target"
        [ -z "$(ls -A "$target")" ] || fail "written through the volume symlink"
}

# tiocsti_check PROFILE: a script run in a terminal (script(1)) starts `sbx exec -T` whose
# command pushes "echo SBX-INJECTED" into its terminal with TIOCSTI, then reads its own
# terminal: whatever was injected into the caller's terminal would be read there.
tiocsti_check() {
        new_session --seccomp "$1"
        cat >"$BATS_TEST_TMPDIR/caller.sh" <<EOF
"$SBX" exec -T "$sid" python3 -c '
import fcntl, os, termios
res = []
for fd in (0, 1, 2, os.open("/dev/tty", os.O_RDWR)):
    try:
        for c in b"echo SBX-INJECTED\\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        res.append("fd%d:pushed" % fd)
    except OSError as e:
        res.append("fd%d:errno%d" % (fd, e.errno))
print(" ".join(res))
'
if read -r -t 2 line; then echo "CALLER-READ=[\$line]"; else echo "CALLER-READ-NOTHING"; fi
EOF
        # script's stdin stays open (a pipe from a sleeper), so it forwards nothing and ends
        # nothing: only an injection could reach the read
        local hold hold_pid
        exec {hold}< <(exec sleep 60)
        hold_pid=$!
        _expect 0 script -qec "bash $BATS_TEST_TMPDIR/caller.sh" /dev/null <&"$hold"
        exec {hold}<&-
        kill "$hold_pid" 2>/dev/null || true
        [[ $output == *CALLER-READ-NOTHING* ]] || fail "$1: the caller's terminal received input:" "$output"
        [[ $output == *fd0:* ]] || fail "$1: the command did not run: $output"
}

@test "bubblewrap CVE-2017-5226: TIOCSTI from a -T session never reaches the caller's terminal" {
        command -v script >/dev/null || skip "no script(1)"
        # the detection works: the same push from a process on the caller's own terminal is read
        cat >"$BATS_TEST_TMPDIR/control.sh" <<'EOF'
python3 -c '
import fcntl, termios
for c in b"echo CONTROL\n":
    fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
' || echo CONTROL-REFUSED
if read -r -t 2 line; then echo "CALLER-READ=[$line]"; else echo "CALLER-READ-NOTHING"; fi
EOF
        local hold hold_pid
        exec {hold}< <(exec sleep 60)
        hold_pid=$!
        _expect 0 script -qec "bash $BATS_TEST_TMPDIR/control.sh" /dev/null <&"$hold"
        exec {hold}<&-
        kill "$hold_pid" 2>/dev/null || true
        if [[ $output == *"CALLER-READ=[echo CONTROL]"* ]]; then
                tiocsti_check default
                [[ $output == *fd0:errno1* ]] || fail "default: TIOCSTI was not refused by seccomp: $output"
                tiocsti_check unconfined
        else
                # TIOCSTI is disabled on this kernel (dev.tty.legacy_tiocsti = 0): the
                # seccomp layer is all that can be shown
                tiocsti_check default
        fi
}

@test "Flatpak CVE-2021-41133: the new mount API is refused, clone3 is ENOSYS" {
        new_session --mount "$probe_mount"
        local p
        for p in open_tree move_mount fsopen fsconfig fsmount fspick mount_setattr; do
                probe_is EPERM "$p"
        done
        probe_is ENOSYS clone3
        probe_is ok clone
        probe_is ok fork
        # without the filter the kernel refuses them too (no capability in the session)
        new_session --seccomp unconfined --mount "$probe_mount"
        for p in open_tree fsopen fspick; do
                probe_is '!ok' "$p"
        done
        sbx_try exec "$sid" sh -c 'mkdir -p /tmp/m && /probe/probe mount'
        [[ $output == "mount: errno=EPERM"* ]] || fail "unconfined mount: $output"
}

@test "nested user namespaces: unshare -U fails, max_*_namespaces are 0, unconfined too" {
        local profile
        for profile in default unconfined; do
                new_session --seccomp "$profile" --mount "$probe_mount"
                sbx_try exec "$sid" unshare -U true
                [ "$status" -ne 0 ] || fail "$profile: unshare -U worked"
                sbx_try exec "$sid" unshare -Ur id -u
                [ "$status" -ne 0 ] || fail "$profile: unshare -Ur worked: $output"
                probe_is '!ok' unshare-user
                probe_is '!ok' clone-newuser
                probe_is '!ok' unshare-mount
                probe_is '!ok' unshare-net
                sbx_ok exec "$sid" sh -c 'cd /proc/sys/user && for f in max_user_namespaces max_mnt_namespaces max_net_namespaces max_ipc_namespaces max_uts_namespaces max_cgroup_namespaces max_time_namespaces; do echo "$f=$(cat $f)"; done'
                local want
                want=$(printf '%s=0\n' max_user_namespaces max_mnt_namespaces max_net_namespaces \
                        max_ipc_namespaces max_uts_namespaces max_cgroup_namespaces max_time_namespaces)
                [ "$output" = "$want" ] || fail "$profile: $output"
                sbx_try exec "$sid" sh -c 'echo 10 > /proc/sys/user/max_user_namespaces'
                [ "$status" -ne 0 ] || fail "$profile: the limit is writable"
        done
        probe_is ENOSPC unshare-user # unconfined: the sysctl, not seccomp, refuses
}

@test "io_uring: every io_uring call is ENOSYS" {
        local profile p
        for profile in default strict; do
                new_session --seccomp "$profile" --mount "$probe_mount"
                for p in io_uring_setup io_uring_enter io_uring_register; do
                        probe_is ENOSYS "$p"
                done
        done
}

@test "firejail #2718: no filter file anywhere; the session's files do not change the filter" {
        new_session --mount "$probe_mount"
        # the host side of exec reads no filter file: the filter is built in memory
        if command -v strace >/dev/null; then
                # LeakSanitizer cannot run under ptrace (sanitizer builds): leaks are not the point
                LSAN_OPTIONS=detect_leaks=0 _expect 0 strace -f -qq -e trace=openat,open,execve -o "$BATS_TEST_TMPDIR/strace" \
                        "$SBX" exec "$sid" true
                local files
                files=$(grep -o '"[^"]*"' "$BATS_TEST_TMPDIR/strace" | tr -d '"' | sort -u)
                ! grep -Ei 'seccomp|bpf|filter' <<<"$files" | grep -v '/libseccomp\.so' ||
                        fail "exec opened a filter file:" "$(grep -Ei 'seccomp|bpf|filter' <<<"$files")"
        fi
        # nothing inside looks like one
        sbx_ok exec "$sid" sh -c 'find / -xdev \( -iname "*seccomp*" -o -iname "*.bpf" -o -iname "*filter*" \) 2>/dev/null; find /tmp /workspace /dev/shm /etc /run /var -xdev 2>/dev/null | grep -i -e seccomp -e bpf; true'
        [ -z "$output" ] || fail "filter-like files in the session: $output"
        # the session empties every file it can write and plants the configs a careless
        # runtime might read; a new exec and a file command are filtered exactly as before
        sbx_ok exec "$sid" sh -c 'find / -xdev -type f -writable ! -name ld.so.cache 2>/dev/null | while read -r f; do : > "$f"; done
                mkdir -p /etc/sbx /run/sbx /tmp/sbx-0 /workspace/.config/sbx
                for d in /etc/sbx /workspace/.config/sbx; do printf "[security]\nseccomp = unconfined\n" > $d/sandbox.ini; done
                true'
        probe_is EPERM unshare-user
        probe_is ENOSYS io_uring_setup
        sbx_ok exec "$sid" grep Seccomp: /proc/self/status
        [[ $output == *$'\t'2 ]] || fail "$output"
        sbx_ok read "$sid" /proc/self/status
        grep -Eq '^ +[0-9]+.Seccomp:.2$' <<<"$output" || fail "file command: $(grep Seccomp <<<"$output")"
}

@test "Flatpak CVE-2024-32462, firejail CVE-2020-17368: arguments are passed literally, never to a shell" {
        new_session
        local args=(--help '$(touch /tmp/pwned1)' '`touch /tmp/pwned2`' '; touch /tmp/pwned3'
                '&& touch /tmp/pwned4' '| touch /tmp/pwned5' '--version' '-t' '--json' '*' '' $'a\nb')
        sbx_ok exec "$sid" -- printf '[%s]\n' "${args[@]}"
        [ "$output" = "$(printf '[%s]\n' "${args[@]}")" ] || fail "got:" "$output"
        sbx_ok exec "$sid" printf '[%s]\n' "${args[@]}"
        [ "$output" = "$(printf '[%s]\n' "${args[@]}")" ] || fail "without --: $output"
        # a command named like an option is a command, not an option of sbx
        sbx_expect 127 exec "$sid" -- --help
        [[ $output != *Usage* && $output != *usage* ]] || fail "sbx parsed the command: $output"
        sbx_expect 127 exec "$sid" '$(touch /tmp/pwned6)'
        # environment values and file-command operands are literal too
        sbx_ok exec -e 'X=$(touch /tmp/pwned7)' "$sid" sh -c 'printf %s "$X"'
        [ "$output" = '$(touch /tmp/pwned7)' ] || fail "env: $output"
        sbx_ok write "$sid" -- '--help' '$(touch /tmp/pwned8)'
        sbx_ok read "$sid" -- --help
        [ "$output" = "     1"$'\t''$(touch /tmp/pwned8)' ] || fail "read --help: $output"
        sbx_ok grep -F "$sid" -- '$(touch' /workspace
        [ "$output" = /workspace/--help ] || fail "grep: $output"
        sbx_expect 1 grep "$sid" -- --version /workspace
        sbx_try create --name '$(touch /tmp/pwned9)'
        [ "$status" -eq 2 ] || fail "create --name with a command substitution: exit $status"
        sbx_ok exec "$sid" sh -c 'for f in /tmp/pwned* /workspace/pwned* /pwned*; do [ -e "$f" ] && echo "$f"; done; true'
        [ -z "$output" ] || fail "created inside: $output"
        local f
        for f in /tmp/pwned{1..9}; do
                [ ! -e "$f" ] || { rm -f "$f"; fail "$f was created on the host"; }
        done
}

# ---- more of the classics -----------------------------------------------------------------

# A library whose constructor reports the credentials of the process it is loaded into:
# preloaded into a setuid binary, it runs only if the kernel gave no privileges (AT_SECURE 0).
report_c='
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
__attribute__((constructor)) static void report(void)
{
        const char *log = getenv("SBX_REPORT");
        FILE *f = log ? fopen(log, "a") : NULL, *s = fopen("/proc/self/status", "r");
        char line[256];
        if (!f || !s)
                return;
        fprintf(f, "AT_SECURE:%lu", getauxval(AT_SECURE));
        while (fgets(line, sizeof(line), s))
                if (!strncmp(line, "Name:", 5) || !strncmp(line, "Uid:", 4) ||
                    !strncmp(line, "Gid:", 4) || !strncmp(line, "CapPrm:", 7) ||
                    !strncmp(line, "CapEff:", 7) || !strncmp(line, "NoNewPrivs:", 11)) {
                        line[strcspn(line, "\n")] = 0;
                        fprintf(f, " %s", line);
                }
        fputc(10, f);
        fclose(f);
        fclose(s);
}
'

@test "setuid and file-capability binaries gain nothing: uid 0 of the session, no caps, NoNewPrivs 1" {
        command -v gcc >/dev/null || skip "no gcc to build the reporting library"
        new_session
        sbx_ok exec -i "$sid" sh -c 'cat > /tmp/report.c && gcc -shared -fPIC -O2 -o /tmp/report.so /tmp/report.c' <<<"$report_c"
        sbx_ok exec "$sid" python3 -c '
import os, stat
for d in ("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec"):
    for root, dirs, files in os.walk(d):
        for n in files:
            p = os.path.join(root, n)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            caps = False
            try:
                os.getxattr(p, "security.capability"); caps = True
            except OSError:
                pass
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID) or caps:
                print(p)'
        local bins=("${lines[@]}") b
        [ ${#bins[@]} -gt 0 ] || skip "no setuid, setgid or file-capability binary in /usr"
        local -A rc=()
        for b in "${bins[@]}"; do
                sbx_try exec "$sid" sh -c 'LD_PRELOAD=/tmp/report.so SBX_REPORT=/tmp/report.log "$1" --help </dev/null >/dev/null 2>&1; echo $?' sh "$b"
                rc[$b]=$output
        done
        sbx_ok exec "$sid" sh -c 'cat /tmp/report.log 2>/dev/null; true'
        local log=$output bad=() ran=0
        for b in "${bins[@]}"; do
                local name=${b##*/} line
                # 126: the kernel refused to run it at all (a mode the session's uid may not
                # execute, or file capabilities that cannot be granted): it gained nothing
                [ "${rc[$b]}" != 126 ] || continue
                ran=$((ran + 1))
                line=$(grep -m1 -F "Name:"$'\t'"${name:0:15}" <<<"$log") || {
                        bad+=("$b (exit ${rc[$b]}): no report (its privileges made the loader drop LD_PRELOAD?)")
                        continue
                }
                [[ $line == "AT_SECURE:0 "* ]] || bad+=("$b: $line")
                [[ $line == *"Uid:"$'\t'"0"$'\t'"0"$'\t'"0"$'\t'"0"* ]] || bad+=("$b: uid changed: $line")
                [[ $line == *"Gid:"$'\t'"0"$'\t'"0"$'\t'"0"$'\t'"0"* ]] || bad+=("$b: gid changed: $line")
                [[ $line == *"CapPrm:"$'\t'"0000000000000000"* ]] || bad+=("$b: permitted caps: $line")
                [[ $line == *"CapEff:"$'\t'"0000000000000000"* ]] || bad+=("$b: effective caps: $line")
                [[ $line == *"NoNewPrivs:"$'\t'"1"* ]] || bad+=("$b: no NoNewPrivs: $line")
        done
        [ ${#bad[@]} -eq 0 ] || fail "${bad[@]}"
        [ "$ran" -gt 0 ] || fail "no setuid binary ran: nothing was shown"
        # and they fail at what they are for
        if [ -x /usr/bin/su ]; then
                sbx_try exec "$sid" su -c 'touch /tmp/su-worked' nobody
                sbx_expect 1 exec "$sid" test -e /tmp/su-worked
        fi
        if [ -x /usr/bin/sudo ]; then
                sbx_try exec "$sid" sudo -n true
                [ "$status" -ne 0 ] || fail "sudo worked"
        fi
}

@test "writes to /proc/sys and /proc/sysrq-trigger fail; the host's values are unchanged" {
        local before
        before=$(cat /proc/sys/kernel/core_pattern /proc/sys/vm/swappiness /proc/sys/fs/protected_hardlinks)
        local profile
        for profile in default unconfined; do
                new_session --seccomp "$profile"
                local f bad=()
                for f in /proc/sys/kernel/core_pattern /proc/sys/vm/swappiness /proc/sys/vm/drop_caches \
                        /proc/sys/fs/protected_hardlinks /proc/sys/kernel/hostname \
                        /proc/sys/user/max_user_namespaces /proc/sys/net/ipv4/ip_forward /proc/sysrq-trigger; do
                        sbx_try exec "$sid" sh -c 'echo 1 > "$1"' sh "$f"
                        [ "$status" -ne 0 ] || bad+=("$profile: wrote $f")
                done
                sbx_try exec "$sid" sh -c 'mount -o remount,rw /proc/sys'
                [ "$status" -ne 0 ] || bad+=("$profile: remounted /proc/sys rw")
                [ ${#bad[@]} -eq 0 ] || fail "${bad[@]}"
                # if sysrq-trigger exists, it is a read-only mount
                sbx_ok exec "$sid" sh -c 'test ! -e /proc/sysrq-trigger || grep -E " /proc/sysrq-trigger ro[, ]" /proc/self/mountinfo'
        done
        [ "$(cat /proc/sys/kernel/core_pattern /proc/sys/vm/swappiness /proc/sys/fs/protected_hardlinks)" = "$before" ] ||
                fail "a host sysctl changed"
}

@test "raw and packet sockets fail, unconfined too" {
        new_session --mount "$probe_mount"
        probe_is EPERM socket-raw
        probe_is EAFNOSUPPORT socket-packet
        probe_is EAFNOSUPPORT socket-high
        sbx_try exec "$sid" python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'
        [ "$status" -ne 0 ] || fail "python opened a raw socket"
        new_session --seccomp unconfined --mount "$probe_mount"
        probe_is EPERM socket-raw
        probe_is EPERM socket-packet
        probe_is ok socket-inet # the probe works
}

@test "mounting anything fails, unconfined too" {
        local profile bad=() cmd
        for profile in default unconfined; do
                new_session --seccomp "$profile" --mount "$probe_mount"
                for cmd in 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m' 'mount --bind /usr /workspace' \
                        'mount -o remount,rw /usr' 'mount -t proc proc /tmp' 'mount -t cgroup2 none /tmp' \
                        'mount -o remount,rw /dev' 'umount -l /proc' 'umount /workspace'; do
                        sbx_try exec "$sid" sh -c "$cmd"
                        [ "$status" -ne 0 ] || bad+=("$profile: '$cmd' worked")
                done
                probe_is EPERM mount
                probe_is '!ok' pivot_root
                probe_is '!ok' chroot
        done
        [ ${#bad[@]} -eq 0 ] || fail "${bad[@]}"
}

@test "mknod of a device fails, unconfined too" {
        local profile
        for profile in default unconfined; do
                new_session --seccomp "$profile" --mount "$probe_mount"
                probe_is EPERM mknod
                sbx_try exec "$sid" sh -c 'mknod /tmp/null c 1 3 || mknod /workspace/sda b 8 0 || mknod /dev/shm/mem c 1 1'
                [ "$status" -ne 0 ] || fail "$profile: mknod worked"
                sbx_expect 0 exec "$sid" sh -c 'find /tmp /workspace /dev/shm \( -type c -o -type b \) | wc -l'
                [ "$output" = 0 ] || fail "$profile: device nodes made: $output"
        done
}

@test "session A cannot see or signal session B's processes" {
        local m=$((500000 + RANDOM))
        new_session
        local b=$sid
        sbx_ok exec "$b" sh -c "sleep $m >/dev/null 2>&1 &"
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "the sleeper in B did not start"
        local hostpid
        hostpid=$(pgrep -f "^sleep $m\$")
        new_session
        local a=$sid
        sbx_ok exec "$a" sh -c 'for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null; echo; done'
        [[ $output != *"$m"* ]] || fail "A sees B's sleeper"
        sbx_try exec "$a" kill -9 "$hostpid"
        [ "$status" -ne 0 ] || fail "A signalled pid $hostpid"
        # A kills everything it can; B's sleeper lives on
        sbx_try exec "$a" sh -c 'kill -9 -1; sleep 1'
        sleep 0.5
        kill -0 "$hostpid" 2>/dev/null || fail "B's sleeper was killed from A"
        sbx_ok exec "$b" sh -c "pgrep -f '^sleep $m\$' >/dev/null && echo alive"
        [ "$output" = alive ] || fail "B's sleeper: $output"
}

@test "session A cannot read session B's files" {
        local secret=SBXSECRET$RANDOM$RANDOM$RANDOM m=$((600000 + RANDOM))
        new_session
        local b=$sid
        sbx_ok exec "$b" sh -c 'for d in /workspace /tmp /dev/shm /etc; do echo "$1" > $d/secret-b; done
                sleep "$2" >/dev/null 2>&1 &' sh "$secret" "$m"
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "no sleeper in B"
        local bpid
        bpid=$(pgrep -f "^sleep $m\$")
        # the secret is real: the host (root) reads it through B's process
        grep -q "$secret" "/proc/$bpid/root/workspace/secret-b" || fail "control: the host cannot see B's secret"
        new_session
        local a=$sid out=
        sbx_try exec "$a" sh -c 'cat /proc/*/root/workspace/secret-b /proc/*/root/tmp/secret-b /proc/$1/root/workspace/secret-b 2>/dev/null
                grep -rs "$2" /workspace /tmp /dev/shm /etc /run /var 2>/dev/null
                find / -xdev -name "secret-b" 2>/dev/null' sh "$bpid" "$secret"
        out+=$output
        local p
        for p in "/proc/$bpid/root/workspace/secret-b" /workspace/secret-b /tmp/secret-b \
                /dev/shm/secret-b /etc/secret-b "/proc/1/root/workspace/secret-b"; do
                sbx_try read "$a" "$p"
                out+=$output
        done
        sbx_try grep "$a" "$secret" /tmp
        out+=$output
        sbx_try grep "$a" "$secret" /workspace
        out+=$output
        sbx_try glob --path /tmp "$a" '**/secret-b'
        out+=$output
        sbx_try glob --path /workspace "$a" '**/secret-b'
        out+=$output
        [[ $out != *"$secret"* ]] || fail "A reached B's files:" "$out"
}

@test "/dev holds only the listed nodes and is read-only" {
        new_session
        sbx_ok exec "$sid" sh -c 'cd /dev && for f in * .[!.]*; do [ -e "$f" ] || [ -L "$f" ] || continue; printf "%s %s\n" "$f" "$(stat -c "%F %t:%T" "$f")"; done'
        local want='full character special file 1:7
null character special file 1:3
ptmx symbolic link 0:0
pts directory 0:0
random character special file 1:8
shm directory 0:0
tty character special file 5:0
urandom character special file 1:9
zero character special file 1:5' got
        # fd, stdin, stdout, stderr, core are allowed as symlinks into /proc/self
        got=$(grep -Ev '^(fd|stdin|stdout|stderr|core) symbolic link' <<<"$output" | sort)
        [ "$got" = "$want" ] || fail "/dev holds:" "$output"
        sbx_ok exec "$sid" sh -c 'readlink /dev/ptmx; for f in fd stdin stdout stderr core; do [ -L /dev/$f ] && readlink /dev/$f; done; true'
        [ "$(head -n 1 <<<"$output")" = pts/ptmx ] || fail "ptmx: $output"
        local links
        links=$(tail -n +2 <<<"$output")
        if [ -n "$links" ] && grep -vq '^/proc/' <<<"$links"; then
                fail "a /dev symlink points out of /proc: $links"
        fi
        # stat, not find -type: the nodes are bind mounts over placeholder files
        sbx_ok exec "$sid" sh -c 'find /dev -exec stat -c "%F %n" {} + | sed -n "s/^\(character\|block\) special file //p" | sort'
        [ "$output" = $'/dev/full\n/dev/null\n/dev/pts/ptmx\n/dev/random\n/dev/tty\n/dev/urandom\n/dev/zero' ] ||
                fail "device nodes: $output"
        local cmd bad=()
        for cmd in 'touch /dev/x' 'mkdir /dev/x' 'ln -s / /dev/x' 'rm -f /dev/null' 'mv /dev/zero /dev/z' \
                'chmod 777 /dev' 'rm -rf /dev/shm' 'mount -o remount,rw /dev'; do
                sbx_try exec "$sid" sh -c "$cmd"
                [ "$status" -ne 0 ] || bad+=("'$cmd' worked")
        done
        [ ${#bad[@]} -eq 0 ] || fail "${bad[@]}"
        sbx_ok exec "$sid" sh -c 'awk "\$5 == \"/dev\" { print \$6 }" /proc/self/mountinfo'
        [[ $output == ro,* || $output == ro ]] || fail "/dev mount options: $output"
        sbx_ok exec "$sid" sh -c 'echo x > /dev/shm/ok && cat /dev/shm/ok' # shm stays writable
}

@test "/sys is absent or read-only; no cgroupfs is writable" {
        new_session
        # mountinfo: the filesystem type is the field after the "-" separator
        sbx_ok exec "$sid" awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { print $5, $6, $(i + 1); break } }' /proc/self/mountinfo
        local mnt opts fstype bad=()
        while read -r mnt opts fstype; do
                case $fstype in
                sysfs | cgroup | cgroup2) ;;
                *) continue ;;
                esac
                [[ $opts == ro || $opts == ro,* ]] || bad+=("writable $fstype mount at $mnt ($opts)")
        done <<<"$output"
        sbx_try exec "$sid" sh -c 'test -d /sys || exit 7; touch /sys/x || echo 1 > /sys/kernel/mm/transparent_hugepage/enabled || mkdir /sys/fs/cgroup/sbx-escape'
        [ "$status" -ne 0 ] || bad+=("wrote under /sys")
        sbx_try exec "$sid" sh -c 'for d in $(awk "{ for (i = 7; i <= NF; i++) if (\$i == \"-\") { if (\$(i + 1) ~ /^cgroup/) print \$5; break } }" /proc/self/mountinfo); do mkdir "$d/sbx-escape" && exit 0; echo 1 > "$d/cgroup.procs" && exit 0; done; exit 1'
        [ "$status" -ne 0 ] || bad+=("wrote into a cgroupfs")
        sbx_try exec "$sid" sh -c 'mkdir -p /tmp/cg && mount -t cgroup2 none /tmp/cg'
        [ "$status" -ne 0 ] || bad+=("mounted cgroup2")
        [ ${#bad[@]} -eq 0 ] || fail "${bad[@]}"
        [ -z "$(find /sys/fs/cgroup -maxdepth 3 -name sbx-escape 2>/dev/null)" ] || fail "a host cgroup was made"
}
