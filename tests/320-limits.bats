#!/usr/bin/env bats
# --memory, --pids and --cpus, enforced with cgroups (docs/DESIGN.md, "Cgroups"), tried with
# hostile workloads that must be contained while the host stays healthy and a later exec in
# the same session still works. As root on this host they run on the cgroup v1 fallback
# (hybrid hierarchy); the same cases on pure cgroup v2 are tests/vm/run-v2.sh (in a VM).
# The files checked are the ones the session's state records, v1 or v2.

load helpers
setup_file() { [ "$(id -u)" -ne 0 ] || setup_users; }
teardown_file() { teardown_users; }
setup() {
        [ "$(id -u)" -eq 0 ] || skip "cgroups are only enforced here as root"
        setup_sbx
}
teardown() { teardown_sbx; }

# A 256M buffer filled by read(2); and a python list that grows by 1M until it is killed.
dd_hog=(dd if=/dev/zero of=/dev/null bs=256M count=1)
py_hog='a = []
while True: a.append(bytearray(1 << 20))'

# The directory of the session's CONTROLLER (memory, pids, cpu): v1 when recorded, else v2.
cg_dir() {
        local v1
        v1=$(state_key "cgroup_v1_$1")
        if [ -n "$v1" ]; then echo "$v1"; else state_key cgroup; fi
}

# Every cgroup directory the state records, one a line.
cg_all() {
        sed -n 's/^cgroup\(_v1_[a-z]*\)\{0,1\}=//p' "$SBX_RUNTIME_DIR/$sid/state"
}

# pids_at_most DIR N: the cgroup DIR has at most N tasks now.
pids_at_most() {
        [ "$(cat "$1/pids.current")" -le "$2" ]
}

# "key N" from a flat-keyed cgroup file.
cg_key() {
        awk -v k="$2" '$1 == k { print $2 }' "$1"
}

@test "create writes the limits into the session's cgroups; the supervisor stays outside" {
        new_session --memory 64M --pids 32 --cpus 0.2
        local mem pids cpu
        mem=$(cg_dir memory) pids=$(cg_dir pids) cpu=$(cg_dir cpu)
        [ -n "$mem" ] && [ -n "$pids" ] && [ -n "$cpu" ] || fail "state: $(cat "$SBX_RUNTIME_DIR/$sid/state")"
        [ "${mem##*/}" = "$sid" ] || fail "memory cgroup $mem is not named after $sid"
        if [ -e "$mem/memory.limit_in_bytes" ]; then
                [ "$(cat "$mem/memory.limit_in_bytes")" = 67108864 ]
                if [ -e "$mem/memory.memsw.limit_in_bytes" ]; then
                        [ "$(cat "$mem/memory.memsw.limit_in_bytes")" = 67108864 ]
                fi
                [ "$(cat "$cpu/cpu.cfs_quota_us") $(cat "$cpu/cpu.cfs_period_us")" = "20000 100000" ]
        else
                [ "$(cat "$mem/memory.max") $(cat "$mem/memory.swap.max")" = "67108864 0" ]
                [ "$(cat "$cpu/cpu.max")" = "20000 100000" ]
        fi
        [ "$(cat "$pids/pids.max")" = 32 ]
        # a command is in every one of them, the supervisor in none; the init is in all but the
        # command's v1 memory and pids cgroups (sandbox/init.c: it serves every exec, so a
        # command that fills them must not starve it)
        local init sup d cmd
        init=$(state_key init_pid) sup=$(state_key supervisor_pid)
        sbx_ok exec "$sid" sh -c 'sleep 30 >/dev/null 2>&1 & echo $!'
        cmd=$(pgrep -f -x 'sleep 30' | while read -r p; do
                [ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$init/ns/pid")" ] && echo "$p"
        done)
        [ -n "$cmd" ] || fail "the command's process is not found"
        for d in $(cg_all); do
                grep -qx "$cmd" "$d/cgroup.procs" "$d/init/cgroup.procs" "$d"/exec-*/cgroup.procs 2>/dev/null ||
                        fail "the command $cmd is not in $d"
                case $d in
                "$(state_key cgroup_v1_memory)" | "$(state_key cgroup_v1_pids)")
                        ! grep -qx "$init" "$d/cgroup.procs" || fail "the init $init is in $d" ;;
                *) grep -qx "$init" "$d/cgroup.procs" "$d/init/cgroup.procs" 2>/dev/null ||
                        fail "the init $init is not in $d" ;;
                esac
                ! grep -qx "$sup" "$d/cgroup.procs" 2>/dev/null || fail "the supervisor is in $d"
        done
}

# threads_outside: every thread of every process in session $sid's pid namespace that is not
# listed in the "tasks" file of one of its v1 cgroups, one "tid dir" a line; and the threads
# seen, on fd 3. sbx's own processes (the init, its spare and reapers) are looked for in the
# cpu cgroup only: the memory and pids cgroups are the commands' (sandbox/init.c).
threads_outside() {
        local init ns p t d n=0 dirs
        init=$(state_key init_pid)
        ns=$(readlink "/proc/$init/ns/pid")
        for p in /proc/[0-9]*; do
                [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
                case $(cat "$p/comm" 2>/dev/null) in
                sbx-*) dirs=$(state_key cgroup_v1_cpu) ;;
                *) dirs=$(sed -n 's/^cgroup_v1_[a-z]*=//p' "$SBX_RUNTIME_DIR/$sid/state") ;;
                esac
                for t in "$p"/task/*; do
                        n=$((n + 1))
                        for d in $dirs; do
                                grep -qx "${t##*/}" "$d/tasks" || echo "${t##*/} $d"
                        done
                done
        done
        echo "$n" >&3
}

# The init and each exec move themselves into the v1 cgroups through "tasks", which moves one
# thread (and skips the RCU grace period a cgroup.procs write waits for). Shown here to leave
# no thread out: the init, the spare, a reaper and a command with 4 threads, with and without
# a memory limit.
@test "every thread of every process of a session is in each of its v1 cgroups" {
        grep -q ':pids:' /proc/self/cgroup || skip "no cgroup v1 pids hierarchy on this host"
        local threaded='import threading, time
for _ in range(3):
    threading.Thread(target=time.sleep, args=(30,)).start()
print("up", flush=True)
time.sleep(30)'
        local limits out seen
        for limits in "--memory 128M --pids 64" "--memory unlimited --pids 64 --cpus 1"; do
                # shellcheck disable=SC2086
                new_session $limits
                [ -n "$(state_key cgroup_v1_pids)" ] || fail "no v1 pids cgroup: $(cat "$SBX_RUNTIME_DIR/$sid/state")"
                in_sbx 'python3 -c "$1" > /tmp/up 2>&1 & until [ -s /tmp/up ]; do sleep 0.05; done' "$threaded"
                out=$(threads_outside 3>"$BATS_TEST_TMPDIR/seen") || fail "threads_outside failed"
                seen=$(cat "$BATS_TEST_TMPDIR/seen")
                [ -z "$out" ] || fail "$limits: threads outside: $out"
                # init, python's 4 threads, and more (spare, reaper) when the server runs
                [ "$seen" -ge 5 ] || fail "$limits: only $seen threads seen"
                sbx_ok destroy "$sid"
        done
}

# A move the kernel refuses, on the init's own path (sandbox/init.c): a SCHED_FIFO process may not
# enter a v1 cpu cgroup without RT runtime. sbx runs here in a pids cgroup of the test's own, so
# that what it leaves below it can be told from other tests' sessions.
@test "the kernel refuses the init's move: exit 4 naming the cgroup, nothing left behind" {
        [ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && [ -d /sys/fs/cgroup/pids ] ||
                skip "no v1 cpu controller with RT group scheduling here"
        local own=/sys/fs/cgroup/pids/sbx-test-$$ cmd
        mkdir "$own"
        for cmd in "create --cpus 1 --pids 8 --memory unlimited" "run --cpus 1 --pids 8 --memory unlimited -- true"; do
                # shellcheck disable=SC2016,SC2086
                _expect 4 sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec chrt -f 1 "$@"' sh "$own" "$SBX" $cmd
                [[ $stderr == *"failed to move the session into its cpu cgroup"* ]] || fail "$cmd: $stderr"
                [ -z "$(find "$own" -mindepth 1 -type d)" ] || fail "$cmd left: $(find "$own" -mindepth 1 -type d)"
                [ -z "$(ls "$SBX_RUNTIME_DIR" | grep '^sb_')" ] || fail "$cmd left a session: $(ls "$SBX_RUNTIME_DIR")"
        done
        rmdir "$own"
}

@test "memory hog: exit 137 and oom_killed true; the host is fine, the session lives on" {
        new_session --memory 64M
        local mem avail
        mem=$(cg_dir memory)
        avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
        sbx_expect 137 exec --json "$sid" "${dd_hog[@]}"
        json_doc
        json '.exit_code == 137 and .oom_killed == true and .timed_out == false' >/dev/null ||
                fail "$output"
        sbx_expect 137 exec --json "$sid" python3 -c "$py_hog"
        json '.oom_killed == true' >/dev/null || fail "$output"
        # without --json: 137 and a line on stderr
        sbx_expect 137 exec "$sid" python3 -c "$py_hog"
        [[ $stderr == *"killed by the session's memory limit"* ]] || fail "stderr: $stderr"
        local peak
        peak=$(cat "$mem/memory.max_usage_in_bytes" 2>/dev/null || cat "$mem/memory.peak")
        echo "# memory peak $peak of 67108864 asked" >&3
        [ "$peak" -le 67108864 ] || fail "peak $peak above the limit"
        # the host lost nothing lasting, the session's init and supervisor live
        [ "$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)" -gt $((avail - 262144)) ]
        kill -0 "$(state_key init_pid)" && kill -0 "$(state_key supervisor_pid)"
        sbx_ok exec --json "$sid" echo alive
        json '.exit_code == 0 and .oom_killed == false and .output == "alive\n"' >/dev/null ||
                fail "$output"
}

@test "oom_killed stays false for a SIGKILL that is not the memory limit's" {
        new_session --memory 64M
        sbx_expect 137 exec --json "$sid" sh -c 'kill -9 $$'
        json '.exit_code == 137 and .oom_killed == false' >/dev/null || fail "$output"
}

@test "fork bomb: fork fails at --pids 32, never more than 32 tasks, a later exec recovers" {
        new_session --pids 32
        local pids
        pids=$(cg_dir pids)
        sbx_ok exec "$sid" python3 -c 'import os, time, errno, signal
kids = []
try:
    while True:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
except OSError as e:
    print("forked", len(kids), "then", errno.errorcode[e.errno])
for k in kids:
    os.kill(k, signal.SIGKILL)
for k in kids:
    os.waitpid(k, 0)'
        [[ $output =~ ^forked\ ([0-9]+)\ then\ EAGAIN$ ]] || fail "$output"
        [ "${BASH_REMATCH[1]}" -le 31 ] || fail "$output"
        # The classic bomb: its exec returns at once, the bomb lives on in the background.
        # It starts in a subshell: bash forks each side of `:|:&` itself, so when the bomb
        # fills the 32 pids between the two forks of the exec's own bash, that bash retries
        # for 15 s and exits 254 (seen in CI). The launcher here forks once, before any bomb.
        # The task count is sampled from the host for 3 s.
        sbx_ok exec "$sid" bash -c 'exec 2>/dev/null; (:(){ :|:& };:) & exit 0'
        local max=0 n end=$((SECONDS + 3))
        while [ "$SECONDS" -lt "$end" ]; do
                n=$(cat "$pids/pids.current")
                [ "$n" -le "$max" ] || max=$n
                sleep 0.01
        done
        n=$(cat "$pids/pids.peak" 2>/dev/null || echo "$max")
        echo "# fork bomb: max $max tasks sampled, pids.peak $n, $(cat "$pids/pids.events")" >&3
        [ "$max" -le 32 ] && [ "$n" -le 32 ] || fail "max $max, peak $n"
        [ "$(cg_key "$pids/pids.events" max)" -gt 0 ]
        # An exec still starts with every pid taken (it enters by migration), and recovers.
        sbx_ok exec "$sid" sh -c 'kill -9 -1'
        wait_until 5 pids_at_most "$pids" 1 ||
                fail "the bomb's processes survive: $(cat "$pids/pids.current")"
        sbx_ok exec "$sid" echo later
        [ "$output" = later ]
}

@test "CPU spin is throttled to --cpus 0.2" {
        new_session --cpus 0.2
        local cpu t0 t1
        cpu=$(cg_dir cpu)
        t0=$(cg_key "$cpu/cpu.stat" nr_throttled)
        sbx_ok exec "$sid" python3 -c 'import time
c, t = time.process_time(), time.time()
while time.time() - t < 2: pass
print("%.3f" % ((time.process_time() - c) / (time.time() - t)))'
        t1=$(cg_key "$cpu/cpu.stat" nr_throttled)
        echo "# cpu spin: $output of a CPU over 2 s (asked 0.2), nr_throttled $t0 -> $t1" >&3
        awk -v s="$output" 'BEGIN { exit !(s > 0 && s < 0.5) }' || fail "share $output"
        [ "$t1" -gt "$t0" ]
}

run_cgroups() { find /sys/fs/cgroup -maxdepth 6 -type d -name "$run_cg" 2>/dev/null; }
run_cgroups_gone() { [ -z "$(run_cgroups)" ]; }

@test "run enforces the limits too, and removes its cgroups" {
        sbx_expect 137 run --json --memory 64M -- "${dd_hog[@]}"
        json '.oom_killed == true' >/dev/null || fail "$output"
        # its session id, from the v1 cgroup paths the command sees (relative to sbx's own)
        if grep -q ':pids:' /proc/self/cgroup; then
                sbx_ok run --pids 8 -- cat /proc/self/cgroup
                [[ $output =~ :pids:/sbx/(sb_[0-9a-f]{16}) ]] || fail "$output"
                # run returns with its command; its cleaner (sbx-teardown) removes them
                # once the kernel has torn the session down
                run_cg=${BASH_REMATCH[1]}
                wait_until 5 run_cgroups_gone || fail "left: $(run_cgroups)"
        fi
        sbx_ok run --pids 8 -- python3 -c 'import os, errno, signal
n = 0
try:
    while True:
        if os.fork() == 0:
            signal.pause()
        n += 1
except OSError as e:
    print("forked", n, "then", errno.errorcode[e.errno])'
        [[ $output =~ ^forked\ ([0-9]+)\ then\ EAGAIN$ ]] || fail "$output"
        [ "${BASH_REMATCH[1]}" -le 7 ] || fail "$output"
}

# run hands its command to the init under a v1 memory limit too (cgroup_server_prepare): the
# init is outside the memory cgroup (sandbox/init.c), so a set-up command ([sandbox] setup,
# SBX_SETUP) that left tmpfs pages there changes nothing. The OOM count is the session's.
@test "run under a v1 memory limit: the init forks the command, also after a set-up command" {
        grep -q ':memory:' /proc/self/cgroup || skip "no cgroup v1 memory hierarchy here (v2 keeps the client's path)"
        sbx_ok run --memory 64M -- sh -c 'echo $PPID'
        [ "$output" = 1 ] || fail "the command's parent is $output, not the init"
        SBX_SETUP='dd if=/dev/zero of=/tmp/fill bs=1M count=40 2>/dev/null' \
                sbx_ok run --memory 64M -- sh -c 'echo $PPID; du -m /tmp/fill'
        [ "${lines[0]}" = 1 ] || fail "after the set-up command: parent ${lines[0]}"
        [[ ${lines[1]} == 40* ]] || fail "the set-up command's file: ${lines[1]}"
        SBX_SETUP=true sbx_expect 137 run --json --memory 64M -- "${dd_hog[@]}"
        json '.oom_killed == true' >/dev/null || fail "$output"
}

@test "destroy removes the session's cgroups" {
        new_session --memory 64M --pids 32 --cpus 0.2
        sbx_ok exec "$sid" sh -c 'sleep 1000 >/dev/null 2>&1 &'
        local dirs d
        dirs=$(cg_all)
        [ -n "$dirs" ]
        sbx_ok destroy "$sid"
        for d in $dirs; do
                [ ! -e "$d" ] || fail "$d is left"
        done
}

@test "supervisor SIGKILLed: the next list removes the cgroups" {
        new_session --memory 64M --pids 32 --cpus 0.2
        sbx_ok exec "$sid" sh -c 'sleep 1000 >/dev/null 2>&1 &'
        local dirs d
        dirs=$(cg_all)
        kill -KILL "$(state_key supervisor_pid)"
        sbx_ok list
        [[ $output != *"$sid"* ]] || fail "$output"
        for d in $dirs; do
                [ ! -e "$d" ] || fail "$d is left"
        done
}

# orphan_session_cgroups: a limited session whose supervisor is SIGKILLed and whose runtime
# dir is then removed, so that nothing records its cgroups; they are left in $dirs.
orphan_session_cgroups() {
        new_session --memory 64M --pids 32 --cpus 0.2
        local init
        dirs=$(cg_all) init=$(state_key init_pid)
        kill -KILL "$(state_key supervisor_pid)"
        wait_until 5 eval '! kill -0 '"$init"' 2>/dev/null' || fail "the init survived"
        rm -rf "${SBX_RUNTIME_DIR:?}/$sid"
}

@test "cgroups nobody records any more (runtime dir gone): swept once a minute old and empty" {
        local dirs d
        orphan_session_cgroups
        sbx_ok list
        for d in $dirs; do
                [ -d "$d" ] || fail "$d was removed while younger than a minute"
        done
        for d in $dirs; do
                touch -d '2 minutes ago' "$d"
        done
        sbx_ok list
        for d in $dirs; do
                [ ! -e "$d" ] || fail "$d is left"
        done
}

# The init is never in its v1 memory and pids cgroups, so those of an idle session are empty:
# emptiness is no sign of death there (the sweep once removed them, and every exec after
# failed). The two tests above are the positive control: dead ones do go.
@test "a live idle session's cgroups over a minute old: the sweeps of list and create leave them" {
        local dirs d other
        new_session --memory 64M --pids 32 --cpus 0.2
        dirs=$(cg_all)
        [ -n "$dirs" ] || fail "the session records no cgroup"
        for d in $dirs; do
                touch -d '2 minutes ago' "$d"
        done
        sbx_ok list
        sbx_ok create --memory 64M
        other=$output
        sbx_ok list
        for d in $dirs; do
                [ -d "$d" ] || fail "$d of a live session was removed"
        done
        sbx_ok exec "$sid" sh -c 'echo ok'
        [ "$output" = ok ]
        sbx_ok destroy "$other"
}

@test "cgroups nobody records any more: the next create's supervisor sweeps them too" {
        local dirs d
        orphan_session_cgroups
        for d in $dirs; do
                touch -d '2 minutes ago' "$d"
        done
        # the sweep runs in the new session's supervisor after create has returned
        new_session --memory 64M --pids 32 --cpus 0.2
        for d in $dirs; do
                wait_until 5 test ! -e "$d" || fail "$d is left"
        done
}

@test "unlimited: no limit asked, no v1 cgroup made" {
        new_session --memory unlimited --pids unlimited --cpus unlimited
        [ -z "$(state_key cgroup_v1_memory)$(state_key cgroup_v1_pids)$(state_key cgroup_v1_cpu)" ]
        sbx_ok exec "$sid" echo ok
}

# In the session's cgroup namespace the init leaf is the root: "0::/" is the init leaf, an exec
# leaf shows as "0::/../exec-...", and anything else is outside the session's cgroup.
@test "an exec, its background processes and the file helper stay in the session's v2 cgroup, also without clone3" {
        new_session --memory unlimited --pids 64 --cpus unlimited
        [ -n "$(state_key cgroup)" ] || skip "this host gives the session no v2 cgroup"
        local how v2
        for how in direct no-clone3; do
                local pre=()
                [ $how = direct ] || pre=("$SBX_NO_CLONE3")
                _expect 0 "${pre[@]}" "$SBX" exec "$sid" sh -c \
                        'sleep 30 >/dev/null 2>&1 & grep "^0::" /proc/self/cgroup /proc/$!/cgroup'
                v2=$(sed 's/^[^:]*://' <<<"$output" | sort -u)
                [ "$v2" = "0::/" ] || fail "$how: the command is not in the init leaf: $output"
                _expect 0 "${pre[@]}" "$SBX" read "$sid" /proc/self/cgroup
                grep -Eq $'\t0::/$' <<<"$output" || fail "$how: the file helper: $output"
        done
        # and the session's pids limit (v1 here, v2 in tests/vm/run-v2.sh) holds for them: the
        # shell dies when its fork fails
        sbx_expect any exec "$sid" sh -c 'for i in $(seq 100); do sleep 30 & done 2>/dev/null'
        pids_at_most "$(cg_dir pids)" 64 || fail "more than 64 tasks: $(cat "$(cg_dir pids)/pids.current")"
        [ "$(grep -c . "$(cg_dir pids)/cgroup.procs")" -ge 50 ] || fail "the loop did not fork: $(cat "$(cg_dir pids)/cgroup.procs")"
}

@test "check: one row per controller, with the hierarchy that provides it" {
        sbx_ok check --json
        local k
        for k in memory pids cpu; do
                json ".features[] | select(.name == \"cgroup-$k\") | .available and
                      (.detail | test(\"^cgroup v[12] /\"))" >/dev/null || fail "$output"
        done
        # a limit asked for needs its controller; a built-in default may go without it
        _expect any env SBX_MEMORY=1G SBX_PIDS=100 SBX_CPUS=1 "$SBX" check --json
        for k in memory pids cpu; do
                json ".features[] | select(.name == \"cgroup-$k\") | .required" >/dev/null ||
                        fail "$output"
        done
}

# user_plain CODE ARGS...: "$user_sbx" ARGS... as $test_user with only PATH, HOME and the
# runtime dir set (no SBX_MEMORY & co. that a suite may give its users), exit status asserted.
user_plain() {
        local want=$1
        shift
        _expect "$want" runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                LANG=C.UTF-8 HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" "$@"
}

@test "a user without delegated cgroups: a strict default create fails with exit 4 naming the fix" {
        setup_sbx_user
        if as_user test -w "$(awk -F: '$2 == "memory" { print "/sys/fs/cgroup/memory" $3 }' \
                /proc/self/cgroup)"; then
                skip "cgroups are delegated to $test_user here"
        fi
        # without --strict-limits it goes without the defaults: 072-honest-defaults.bats
        user_plain 4 create --strict-limits
        [[ $stderr == *"cannot enforce the memory limit 512M (the default)"* ]] || fail "$stderr"
        [[ $stderr == *"--memory unlimited"* ]] || fail "$stderr"
        user_plain 4 create --memory unlimited --cpus unlimited --pids 10
        [[ $stderr == *"the pids limit 10"* ]] || fail "$stderr"
        user_plain 0 check
        user_plain 4 create --memory 512M
        user_plain 0 create --memory unlimited --cpus unlimited --pids unlimited
        is_id "$output"
        user_plain 0 destroy "$output"
}
