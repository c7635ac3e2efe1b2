#!/usr/bin/env bats
# Resource attacks from inside real sessions (issue 3): each hostile workload must be held to
# what the session asked for, the host must stay healthy (its memory and disk, the session's
# supervisor and init), and a later exec in the same session must still work.
#
# 320-limits.bats already tries the memory hog (dd and python, exit 137, oom_killed), the
# process fork bomb and the bash fork bomb at --pids 32, and one CPU spinner at --cpus 0.2;
# tests/vm/run-v2.sh does those on cgroup v2. This file adds what they do not try: the
# writable layer (/workspace, /tmp, the overlay upper) and /dev/shm filled in bytes and in
# inodes, tmpfs pages and pipe buffers against --memory, a thread bomb at the default --pids, every core
# spinning at --cpus 0.5, 1 GiB of output, and 10,000 open files against --nofile.
# Each test prints what the workload achieved against what was asked ("# ..." lines).

load helpers
setup() {
        setup_sbx
        # The host's state before the attack, compared by host_healthy afterwards.
        mem_avail0=$(mem_avail_kib)
        disk_avail0=$(disk_avail_kib)
}
teardown() { teardown_sbx; }

# Without root there are no cgroups to enforce limits on this host: the sessions of the
# non-cgroup attacks then ask for none (320-limits.bats and 070 test that refusal).
no_cgroups=()
[ "$(id -u)" -eq 0 ] || no_cgroups=(--memory unlimited --cpus unlimited --pids unlimited)

need_root() {
        [ "$(id -u)" -eq 0 ] || skip "cgroups are only enforced here as root"
}

mem_avail_kib() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }

# Free KiB on the filesystems that hold the host's /, /tmp and the runtime dir (summed once
# per device): where a layer that is not bounded would spill.
disk_avail_kib() {
        df -k --output=source,avail / /tmp "$BATS_TEST_TMPDIR" | awk 'NR > 1 && !seen[$1]++ { s += $2 } END { print s }'
}

# The directory of the session's CONTROLLER (memory, pids, cpu): v1 when recorded, else v2.
cg_dir() {
        local v1
        v1=$(state_key "cgroup_v1_$1")
        if [ -n "$v1" ]; then echo "$v1"; else state_key cgroup; fi
}

# "key N" from a flat-keyed file.
cg_key() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# host_healthy: the host lost no lasting memory or disk space, the session's supervisor and
# init live, and an exec in it works. The margins are wide (1 GiB of memory, 512 MiB of disk)
# because other work shares this host (builds, VMs of 1 GiB); each test also checks its own
# bound directly (bytes written, the cgroup's peak), which is what catches a limit that leaks.
host_healthy() {
        local mem disk
        mem=$(mem_avail_kib) disk=$(disk_avail_kib)
        [ "$mem" -gt $((mem_avail0 - 1048576)) ] ||
                fail "host MemAvailable fell from $mem_avail0 to $mem KiB"
        [ "$disk" -gt $((disk_avail0 - 524288)) ] ||
                fail "host free disk fell from $disk_avail0 to $disk KiB"
        kill -0 "$(state_key supervisor_pid)" || fail "the supervisor died"
        kill -0 "$(state_key init_pid)" || fail "the session init died"
        sbx_ok exec "$sid" echo still-alive
        [ "$output" = still-alive ] || fail "a later exec printed '$output'"
}

# fill DIR...: inside session $sid, try to write 1 GiB into DIR/fill for each DIR (removed
# again before the next); prints "DIR BYTES-WRITTEN dd-EXIT LAST-ERROR" a line.
fill() {
        sbx_ok exec "$sid" sh -c 'for d; do
                mkdir -p "$d"
                err=$(dd if=/dev/zero of="$d/fill" bs=1M count=1024 2>&1 >/dev/null)
                rc=$?
                echo "$d $(stat -c %s "$d/fill") $rc $(echo "$err" | grep -o "No space left on device" | head -n 1 | tr " " _)"
                rm -f "$d/fill"
        done' sh "$@"
}

@test "/workspace, /tmp and the overlay upper filled: ENOSPC at --disk 32M, the host's disk untouched" {
        new_session --disk 32M "${no_cgroups[@]}"
        fill /workspace /tmp /usr/sbx-fill
        echo "# disk fill (asked 33554432 bytes): $(tr '\n' ';' <<<"$output")" >&3
        local d bytes rc why n=0
        while read -r d bytes rc why; do
                n=$((n + 1))
                [ "$rc" = 1 ] && [ "$why" = No_space_left_on_device ] ||
                        fail "$d: dd exit $rc ($why), not ENOSPC"
                [ "$bytes" -le 33554432 ] || fail "$d: $bytes bytes written, above --disk"
                [ "$bytes" -ge 16777216 ] || fail "$d: only $bytes bytes written before ENOSPC"
        done <<<"$output"
        [ "$n" = 3 ] || fail "$output"
        # one layer for all three: what /workspace holds, /tmp cannot have
        sbx_ok exec "$sid" sh -c 'dd if=/dev/zero of=/workspace/a bs=1M count=24 2>/dev/null
                dd if=/dev/zero of=/tmp/b bs=1M count=24 2>/dev/null; echo $?
                echo $(( $(stat -c %s /workspace/a) + $(stat -c %s /tmp/b) ))'
        [ "${lines[0]}" = 1 ] && [ "${lines[1]}" -le 33554432 ] || fail "$output"
        host_healthy
        sbx_ok exec "$sid" sh -c 'rm /workspace/a /tmp/b && echo again > /workspace/x && cat /workspace/x'
        [ "$output" = again ]
}

@test "/dev/shm filled: ENOSPC at its size (never SIGXFSZ), the session lives on" {
        new_session --disk 32M "${no_cgroups[@]}"
        fill /dev/shm
        echo "# /dev/shm fill (asked 33554432 bytes): $output" >&3
        local d bytes rc why
        read -r d bytes rc why <<<"$output"
        [ "$rc" = 1 ] && [ "$why" = No_space_left_on_device ] || fail "dd exit $rc ($why)"
        [ "$bytes" -le 33554432 ] && [ "$bytes" -ge 16777216 ] || fail "$bytes bytes"
        # the default --disk (1G): /dev/shm stays at 64M
        sbx_ok destroy "$sid"
        new_session "${no_cgroups[@]}"
        fill /dev/shm
        read -r d bytes rc why <<<"$output"
        echo "# /dev/shm fill at the default --disk: $bytes bytes (cap 67108864)" >&3
        [ "$rc" = 1 ] && [ "$bytes" -le 67108864 ] || fail "$output"
        host_healthy
}

@test "inode exhaustion: file creation fails with ENOSPC at the layer's inode bound" {
        new_session --disk 32M "${no_cgroups[@]}"
        sbx_ok exec "$sid" python3 -c 'import os, errno, sys
def exhaust(d):
    os.makedirs(d, exist_ok=True)
    n = 0
    try:
        while True:
            os.close(os.open("%s/f%d" % (d, n), os.O_CREAT | os.O_WRONLY, 0o600))
            n += 1
    except OSError as e:
        return n, errno.errorcode[e.errno]
for d in sys.argv[1:]:
    n, err = exhaust(d)
    st = os.statvfs(d)
    print(d, n, err, st.f_files)' /workspace/many /dev/shm/many
        echo "# inodes: $(tr '\n' ';' <<<"$output") (--disk 32M: 8192 inodes; /dev/shm 4096)" >&3
        local d n err files
        read -r d n err files <<<"${lines[0]}"
        [ "$err" = ENOSPC ] || [ "$err" = EDQUOT ] || fail "${lines[0]}"
        [ "$files" = 8192 ] && [ "$n" -le 8192 ] && [ "$n" -ge 4096 ] || fail "${lines[0]}"
        read -r d n err files <<<"${lines[1]}"
        [ "$err" = ENOSPC ] && [ "$files" -le 4096 ] && [ "$n" -le 4096 ] || fail "${lines[1]}"
        host_healthy
        # and with every inode gone the session still runs commands; freeing them helps
        sbx_ok exec "$sid" sh -c 'rm -rf /workspace/many /dev/shm/many && touch /workspace/ok && echo ok'
        [ "$output" = ok ]
}

@test "tmpfs pages count against --memory: filling /tmp with 1G kills the writer, not the session" {
        need_root
        new_session --memory 64M
        local mem init
        mem=$(cg_dir memory) init=$(state_key init_pid)
        # A writer smaller than the session's init (head's RSS is ~1.7M, the init's ~2M): the
        # pages it fills belong to no process, and the OOM killer must still choose the writer.
        sbx_expect 137 exec --json "$sid" sh -c 'head -c 1G /dev/zero > /tmp/fill'
        json '.exit_code == 137 and .oom_killed == true' >/dev/null || fail "$output"
        local peak size
        peak=$(cat "$mem/memory.max_usage_in_bytes" 2>/dev/null || cat "$mem/memory.peak")
        size=$(stat -c %s "/proc/$init/root/tmp/fill")
        echo "# /tmp fill at --memory 64M: $size bytes kept, memory peak $peak of 67108864" >&3
        [ "$size" -le 67108864 ] || fail "$size bytes in /tmp"
        [ "$peak" -le 67108864 ] || fail "memory peak $peak above the limit"
        kill -0 "$init" || fail "the session init was OOM-killed"
        # While tmpfs holds every page of the limit, a new command may be OOM-killed in its
        # turn (the session lives on): freeing the pages may take a retry.
        local i
        for i in 1 2 3 4 5; do
                sbx_try exec "$sid" rm -f /tmp/fill
                [ "$status" = 0 ] && break
                [ "$status" = 137 ] || fail "rm: exit $status: $stderr"
        done
        echo "# rm /tmp/fill: attempt $i, exit $status" >&3
        [ "$status" = 0 ] || fail "rm was OOM-killed 5 times"
        host_healthy
        sbx_ok exec "$sid" python3 -c 'print(len(bytearray(32 << 20)))'
        [ "$output" = 33554432 ]
}

@test "kernel memory: pipe buffers filled until the limit are charged to --memory" {
        need_root
        new_session --memory 64M --nofile 4096
        local mem
        mem=$(cg_dir memory)
        # 1 MiB pipes filled without reading: kernel pages that no process maps
        sbx_try exec --json "$sid" python3 -c 'import os, fcntl
pipes = []
while True:
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
    except OSError:
        pass
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"x" * 65536)
    except BlockingIOError:
        pass
    pipes.append((r, w))'
        # OOM-killed, or a write that fails with ENOMEM: either way the limit held
        json '(.exit_code == 137 and .oom_killed == true) or
              (.exit_code == 1 and (.output | test("Cannot allocate memory")))' >/dev/null ||
                fail "exit $status: $output"
        local peak
        peak=$(cat "$mem/memory.max_usage_in_bytes" 2>/dev/null || cat "$mem/memory.peak")
        echo "# pipe buffers at --memory 64M: exit $(json .exit_code), memory peak $peak of 67108864" >&3
        [ "$peak" -le 67108864 ] || fail "memory peak $peak above the limit"
        host_healthy
}

@test "thread bomb at the default --pids 256: thread creation fails, never more than 256 tasks" {
        need_root
        new_session
        local pids
        pids=$(cg_dir pids)
        sbx_ok exec "$sid" python3 -c 'import threading
ev = threading.Event()
ts = []
try:
    while len(ts) < 10000:
        t = threading.Thread(target=ev.wait)
        t.start()
        ts.append(t)
except RuntimeError as e:
    print("threads", len(ts), e)
ev.set()
for t in ts:
    t.join()'
        local peak
        peak=$(cat "$pids/pids.peak" 2>/dev/null || echo "?")
        echo "# thread bomb: $output; pids.peak $peak of 256 asked" >&3
        [[ $output =~ ^threads\ ([0-9]+)\ can.t\ start\ new\ thread$ ]] || fail "$output"
        [ "${BASH_REMATCH[1]}" -le 255 ] || fail "$output"
        [ "$peak" = "?" ] || [ "$peak" -le 256 ] || fail "pids.peak $peak"
        [ "$(cg_key "$pids/pids.events" max)" -gt 0 ]
        host_healthy
}

@test "every core spinning at --cpus 0.5: the session gets half a CPU" {
        need_root
        new_session --cpus 0.5
        local cpu u0 u1 t0 t1
        cpu=$(cg_dir cpu)
        t0=$(cg_key "$cpu/cpu.stat" nr_throttled)
        u0=$(cg_key "$cpu/cpu.stat" usage_usec)
        # as many spinners as the host has CPUs, for 2 s; the kernel's account of their CPU
        # time (children's user + system) over the wall time
        sbx_ok exec "$sid" python3 -c 'import os, time
t = time.time()
kids = []
for i in range(max(2, os.cpu_count())):
    pid = os.fork()
    if pid == 0:
        while time.time() - t < 2:
            pass
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
c = os.times()
print("%.3f" % ((c.children_user + c.children_system) / (time.time() - t)))'
        local share=$output
        t1=$(cg_key "$cpu/cpu.stat" nr_throttled)
        u1=$(cg_key "$cpu/cpu.stat" usage_usec)
        local host=""
        [ -z "$u0" ] || host=", cgroup usage $(((u1 - u0) / 1000)) ms"
        echo "# cpu spin on $(nproc) CPUs: $share of a CPU over 2 s (asked 0.5)$host, nr_throttled $t0 -> $t1, $(cg_key "$cpu/cpu.stat" throttled_time) ns throttled" >&3
        # 0.5 at most (a period of slack: the quota is enforced per 100 ms period), and more
        # than nothing (the host may be busy with other work)
        awk -v s="$share" 'BEGIN { exit !(s > 0.05 && s <= 0.6) }' || fail "share $share"
        [ "$t1" -gt "$t0" ] || fail "never throttled"
        host_healthy
}

# maxrss CMD...: run CMD (its stdout to $BATS_TEST_TMPDIR/out), then print its exit status
# and its peak RSS in KiB (GNU time: the process's own, not that of a forking wrapper).
maxrss() {
        local rc=0
        timeout 120 /usr/bin/time -o "$BATS_TEST_TMPDIR/rss" -f %M "$@" >"$BATS_TEST_TMPDIR/out" || rc=$?
        echo "$rc $(tail -n 1 "$BATS_TEST_TMPDIR/rss")"
}

# counted ARGS...: "$SBX" ARGS... with its stdout counted by wc after DELAY seconds (nothing
# of the output is kept on the host); as maxrss, with the count in $BATS_TEST_TMPDIR/out and
# the peak RSS of the sbx client alone.
counted() {
        local delay=$1 rc
        shift
        timeout 120 /usr/bin/time -o "$BATS_TEST_TMPDIR/rss" -f %M "$SBX" "$@" |
                { sleep "$delay"; wc -c; } >"$BATS_TEST_TMPDIR/out"
        rc=${PIPESTATUS[0]}
        echo "$rc $(tail -n 1 "$BATS_TEST_TMPDIR/rss")"
}

# supervisor_hwm: the supervisor's peak RSS (KiB).
supervisor_hwm() {
        awk '/^VmHWM:/ { print $2 }' "/proc/$(state_key supervisor_pid)/status"
}

@test "1 GiB of output: --json keeps 1M and says truncated; streaming passes it all; memory stays bounded" {
        new_session "${no_cgroups[@]}"
        local gib='yes abcdefghijklmnopqrstuvwxyz | head -c 1073741824'
        local sup0 rc rss base
        sup0=$(supervisor_hwm)
        # the client's own peak RSS for a command with no output (ASan builds are larger): the
        # bounds below are what 1 GiB may add to it
        read -r rc base < <(maxrss "$SBX" exec "$sid" true)
        [ "$rc" = 0 ] || fail "exec true: exit $rc"
        # --json: the output is cut at the default 1M, the command runs to its end
        read -r rc rss < <(maxrss "$SBX" exec --json "$sid" sh -c "$gib")
        output=$(cat "$BATS_TEST_TMPDIR/out")
        [ "$rc" = 0 ] || fail "exit $rc"
        json '.exit_code == 0 and .truncated == true and (.output | length) == 1048576' >/dev/null ||
                fail "exit $(json .exit_code), truncated $(json .truncated), length $(json '.output | length')"
        echo "# 1 GiB, --json: 1048576 bytes kept, truncated; client peak RSS $rss KiB ($base KiB for no output)" >&3
        [ "$rss" -lt $((base + 16384)) ] || fail "the client peaked at $rss KiB"
        # streamed: every byte reaches the caller, through a bounded buffer
        local size
        read -r rc rss < <(counted 0 exec "$sid" sh -c "$gib")
        size=$(cat "$BATS_TEST_TMPDIR/out")
        echo "# 1 GiB, streamed: $size bytes passed; client peak RSS $rss KiB" >&3
        [ "$rc" = 0 ] && [ "$size" = 1073741824 ] || fail "exit $rc, $size bytes"
        [ "$rss" -lt $((base + 4096)) ] || fail "the client peaked at $rss KiB"
        # to a reader that does not read for 2 s: the client waits, it does not buffer
        read -r rc rss < <(counted 2 exec "$sid" sh -c "$gib")
        size=$(cat "$BATS_TEST_TMPDIR/out")
        echo "# 1 GiB to a stalled reader: $size bytes; client peak RSS $rss KiB" >&3
        [ "$rc" = 0 ] && [ "$size" = 1073741824 ] || fail "exit $rc, $size bytes"
        [ "$rss" -lt $((base + 4096)) ] || fail "the client peaked at $rss KiB"
        # --max-output without --json: cut, the rest dropped
        read -r rc rss < <(counted 0 exec --max-output 1M "$sid" sh -c "$gib")
        size=$(cat "$BATS_TEST_TMPDIR/out")
        [ "$rc" = 0 ] && [ "$size" = 1048576 ] || fail "--max-output 1M: exit $rc, $size bytes"
        local sup1
        sup1=$(supervisor_hwm)
        echo "# supervisor peak RSS $sup0 -> $sup1 KiB" >&3
        [ "$sup1" -le $((sup0 + 4096)) ] || fail "the supervisor grew from $sup0 to $sup1 KiB"
        host_healthy
}

# open_fds: inside session $sid, open /dev/null 10,000 times; prints "N ERRNO" (how many were
# opened before the first failure, and its errno), then the soft and hard RLIMIT_NOFILE.
open_fds() {
        sbx_ok exec "$sid" python3 -c 'import os, errno, resource
fds = []
err = "none"
try:
    while len(fds) < 10000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    err = errno.errorcode[e.errno]
print(len(fds), err)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
    print("raised")
except (OSError, ValueError) as e:
    print("raise refused", errno.errorcode.get(getattr(e, "errno", 0) or 0, "ValueError"))'
}

@test "10,000 open files: EMFILE at --nofile (default 1024, then 256); the limit cannot be raised" {
        new_session "${no_cgroups[@]}"
        open_fds
        echo "# 10,000 fds at the default --nofile 1024: ${lines[0]}; ${lines[1]}" >&3
        [[ ${lines[0]} =~ ^([0-9]+)\ EMFILE$ ]] || fail "$output"
        [ "${BASH_REMATCH[1]}" -le 1021 ] && [ "${BASH_REMATCH[1]}" -ge 1000 ] || fail "$output"
        [[ ${lines[1]} == "raise refused"* ]] || fail "$output"
        host_healthy
        sbx_ok destroy "$sid"
        new_session --nofile 256 "${no_cgroups[@]}"
        open_fds
        echo "# 10,000 fds at --nofile 256: ${lines[0]}" >&3
        [[ ${lines[0]} =~ ^([0-9]+)\ EMFILE$ ]] || fail "$output"
        [ "${BASH_REMATCH[1]}" -le 253 ] && [ "${BASH_REMATCH[1]}" -ge 240 ] || fail "$output"
        [[ ${lines[1]} == "raise refused"* ]] || fail "$output"
        host_healthy
}
