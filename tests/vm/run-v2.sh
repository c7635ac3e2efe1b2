#!/bin/bash
# SPDX-License-Identifier: MIT
# The cgroup v2 cases of sbx's limits (--memory, --pids, --cpus, cgroup.kill teardown, a
# delegated leaf, and the resource attacks of 330-resources.bats that depend on cgroups),
# run as root in a pure-cgroup-v2 VM (tests/vm/run-in-vm), in one boot.
#
#   bash tests/vm/run-v2.sh          (from the repo root, as root, after building build/)
#
# On the host it boots the VM (run-in-vm, which shares the checkout) and runs itself there;
# the cases only ever run inside the VM, never against a host's cgroups. SBX names the binary
# (default build/sbx, relative to the repo root), SBX_VM_TIMEOUT the VM's limit (default 600 s).
# Prints TAP. Every process start costs ~40 ms in the VM, so the cases share sessions and sbx
# calls are few. Sessions use --read-only: the VM's /usr is 9p under an overlay, which
# overlayfs cannot take as a lower layer from inside a user namespace.
set -u
export LC_ALL=C

SBX=${SBX:-build/sbx}
if [ "${SBX_V2_IN_VM:-}" != 1 ] || [ "$(hostname)" != sbx-vm ]; then
        runinvm=$(dirname "$0")/run-in-vm
        if [ ! -x "$SBX" ] || ! command -v qemu-system-x86_64 >/dev/null; then
                echo "1..0 # SKIP needs $SBX and QEMU (scripts/bootstrap --vm)"
                exit 0
        fi
        export SBX SBX_V2_IN_VM=1
        exec "$runinvm" --timeout "${SBX_VM_TIMEOUT:-600}" -- bash tests/vm/run-v2.sh
fi
case $SBX in /*) ;; *) SBX=$PWD/$SBX ;; esac
CG=/sys/fs/cgroup
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '# %s\n' "$@"; }
# CONDITION; t DESCRIPTION: one test point from the status of the condition before it.
t() {
        if [ $? = 0 ]; then ok "$*"; else not_ok "$*"; fi
}
sbx() { timeout 120 "$SBX" "$@"; }
state_key() { sed -n "s/^$2=//p" "$SBX_RUNTIME_DIR/$1/state"; }
# within CONDITION: true once the shell condition holds, looking every 0.1 s for 5 s. destroy
# answers once every process of the session has its SIGKILL (cgroup.kill); their exit and the
# removal of the cgroups follow within milliseconds.
within() {
        local i
        for i in $(seq 50); do
                eval "$1" && return 0
                sleep 0.1
        done
        return 1
}
# The first number after "KEY " in a flat-keyed cgroup file.
cg_key() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

if [ ! -x "$SBX" ] || [ ! -e $CG/cgroup.subtree_control ] || grep -q ':memory:' /proc/self/cgroup
then
        echo "1..0 # SKIP needs $SBX and pure cgroup v2"
        exit 0
fi
SBX_RUNTIME_DIR=$(mktemp -d /tmp/sbx-v2.XXXXXX)
export SBX_RUNTIME_DIR
chmod 700 "$SBX_RUNTIME_DIR"
diag "kernel $(uname -r), $(cat $CG/cgroup.controllers), sbx $SBX"

# One 256M buffer filled by read(2): a small binary whose own pages do not thrash against the
# limit (a python hog re-faulting its text from 9p under TCG can take minutes to be OOM-killed).
hog=(dd if=/dev/zero of=/dev/null bs=256M count=1)
forker='import os, time, errno, signal
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
# CPU time over wall time of a 3 s busy loop (python's own start-up left out)
spin='import time
c, t = time.process_time(), time.time()
while time.time() - t < 3: pass
print("%.3f" % ((time.process_time() - c) / (time.time() - t)))'

# ---- one session with all three limits ------------------------------------------------------
id=$(sbx create --read-only --memory 64M --pids 32 --cpus 0.2)
[ -n "$id" ]
t "create --memory 64M --pids 32 --cpus 0.2"
cg=$(state_key "$id" cgroup)
[ "$cg" = "$CG/sbx/$id" ]
t "the state records the session's v2 cgroup below the caller's own"
limits="$(cat "$cg/memory.max" "$cg/memory.swap.max" "$cg/pids.max" "$cg/cpu.max")"
[ "$(echo $limits)" = "67108864 0 32 20000 100000" ]
t "limits: memory.max, memory.swap.max, pids.max, cpu.max"
init=$(state_key "$id" init_pid)
sup=$(state_key "$id" supervisor_pid)
[ "$(cat /proc/"$init"/cgroup)" = "0::/sbx/$id/init" -a "$(cat /proc/"$sup"/cgroup)" = "0::/" ]
t "the init is in <id>/init, the supervisor outside the limited cgroup"

out=$(sbx exec --json --timeout 60s "$id" "${hog[@]}")
code=$?
[ "$code" = 137 ] && [[ $out == *'"oom_killed":true'* ]]
t 'memory hog: exit 137 and "oom_killed":true'
peak=$(cat "$cg/memory.peak" 2>/dev/null || echo "?")
diag "memory hog: exit $code, memory.peak $peak (asked 67108864)" \
        "memory.events: $(tr '\n' ' ' < "$cg/memory.events")"
[ "$peak" != "?" ] && [ "$peak" -le 67108864 ]
t "memory.peak stayed at the limit"
[ "$(cg_key "$cg/memory.events" oom_group_kill)" -ge 1 ] && kill -0 "$init"
t "the OOM kill took the exec's group, not the session"
out=$(sbx exec --json "$id" echo alive)
[[ $out == *'"exit_code":0'*'"oom_killed":false'* ]]
t "a later exec in the same session works (oom_killed false)"
# a memory-limited session's exec joins from the client here: its reader gone, yes gets SIGPIPE
[ "$(timeout 20 "$SBX" exec "$id" yes | head -1 >/dev/null; echo "${PIPESTATUS[0]}")" = 141 ]
t "exec ID yes | head -1: the command ends with SIGPIPE (141) on the join path"

out=$(sbx exec "$id" python3 -c "$forker")
peak=$(cat "$cg/pids.peak" 2>/dev/null || echo "?")
diag "fork bomb: '$out', pids.peak $peak (asked 32), pids.events $(cat "$cg/pids.events")"
[[ $out == *"then EAGAIN"* ]]
t "fork bomb: fork fails with EAGAIN"
[ "$peak" != "?" ] && [ "$peak" -le 32 ]
t "pids never above 32"
[ "$(sbx exec "$id" echo ok)" = ok ]
t "after the fork bomb an exec works"

nt0=$(cg_key "$cg/cpu.stat" nr_throttled)
share=$(sbx exec "$id" python3 -c "$spin")
nt1=$(cg_key "$cg/cpu.stat" nr_throttled)
diag "cpu spin: share $share of a CPU over 3 s (asked 0.2), nr_throttled $nt0 -> $nt1"
awk -v s="$share" 'BEGIN { exit !(s > 0 && s < 0.6) }'
t "cpu spin throttled below 0.6 CPU (--cpus 0.2; TCG is noisy)"
[ "${nt1:-0}" -gt "${nt0:-0}" ]
t "cpu.stat nr_throttled grew"
[ "$(find "$cg" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')" = init ]
t "exec leaves are removed after each exec"

# The classic bomb lives on after its exec; an exec still starts with every pid taken (B and C
# enter by migration) and can clean up.
# (started in a subshell, so the exec's own bash forks once, before the bomb fills the pids)
sbx exec "$id" bash -c 'exec 2> /dev/null; (:(){ :|:& };:) & exit 0'
sleep 3
peak=$(cat "$cg/pids.peak")
diag "bash fork bomb: pids.current $(cat "$cg/pids.current"), pids.peak $peak"
[ "$peak" -le 32 ]
t "bash fork bomb: pids never above 32"
sbx exec "$id" sh -c 'kill -9 -1'
out=$(sbx exec "$id" echo recovered)
[ "$out" = recovered ]
t "an exec in the full session kills the bomb; the next exec works"

# ---- resource attacks of tests/330-resources.bats that depend on cgroup v2 --------------------
id2=$(sbx create --read-only --memory 32M --cpus 0.5)
cg2=$(state_key "$id2" cgroup)
init2=$(state_key "$id2" init_pid)
# tmpfs pages belong to no process: a writer smaller than the init (head) fills /tmp up to the
# limit, and the OOM kill must take the exec's group, never the session's init.
out=$(sbx exec --json "$id2" sh -c 'head -c 1G /dev/zero > /tmp/fill')
code=$?
peak=$(cat "$cg2/memory.peak" 2>/dev/null || echo "?")
diag "tmpfs fill at --memory 32M: exit $code, memory.peak $peak (asked 33554432)," \
        "$(stat -c %s "/proc/$init2/root/tmp/fill" 2>/dev/null || echo '?') bytes kept"
[ "$code" = 137 ] && [[ $out == *'"oom_killed":true'* ]] && kill -0 "$init2"
t "tmpfs fill: the writer is OOM-killed (oom_killed true), the init lives"
[ "$peak" != "?" ] && [ "$peak" -le 33554432 ]
t "tmpfs fill: memory.peak stayed at the limit"
for i in 1 2 3 4 5; do sbx exec "$id2" rm -f /tmp/fill 2> /dev/null && break; done
[ "$(sbx exec "$id2" echo alive)" = alive ]
t "tmpfs fill: after rm (attempt $i) a later exec works"

# Every CPU spinning for 3 s at --cpus 0.5: the session's usage_usec over the wall time.
u0=$(cg_key "$cg2/cpu.stat" usage_usec)
w0=$(date +%s%N)
sbx exec "$id2" sh -c 'for i in 1 2 3 4; do timeout 3 sh -c "while :; do :; done" & done; wait'
w1=$(date +%s%N)
u1=$(cg_key "$cg2/cpu.stat" usage_usec)
share=$(awk -v u=$((u1 - u0)) -v w=$(((w1 - w0) / 1000)) 'BEGIN { printf "%.3f", u / w }')
diag "cpu spin, 4 spinners on $(nproc) CPUs: cgroup usage $share of a CPU (asked 0.5)," \
        "nr_throttled $(cg_key "$cg2/cpu.stat" nr_throttled)"
awk -v s="$share" 'BEGIN { exit !(s > 0.05 && s < 0.75) }'
t "cpu spin at --cpus 0.5: the session's cpu.stat usage stays near half a CPU"
sbx destroy "$id2"

# ---- teardown: destroy with a background process; cgroup.kill --------------------------------
sbx exec "$id" sh -c 'sleep 1000 > /dev/null 2>&1 &'
bg=$(find "$cg" -name cgroup.procs -path '*exec-*' -exec cat {} + | head -1)
[ -n "$bg" ] && kill -0 "$bg"
t "a background process outlives its exec in its own leaf"
sbx destroy "$id"
within '! kill -0 "$bg" 2>/dev/null'
t "destroy: the background process is dead (within 5 s)"
within '[ ! -e "$cg" -a ! -e $CG/sbx ]'
t "destroy: the session's cgroup and the sbx parent are gone (within 5 s)"

id=$(sbx create --read-only --memory 32M)
cg=$(state_key "$id" cgroup)
sbx exec "$id" sh -c 'sleep 1000 > /dev/null 2>&1 &'
kill -KILL "$(state_key "$id" supervisor_pid)"
sbx list > /dev/null
[ ! -e "$cg" -a ! -e $CG/sbx ]
t "supervisor SIGKILLed: 'sbx list' removes the cgroups"

id=$(sbx create --read-only --memory unlimited --pids unlimited --cpus unlimited)
cg=$(state_key "$id" cgroup)
[ -n "$cg" ] && [ "$(cat "$cg/memory.max" 2> /dev/null || echo max)" = max ] &&
        [ "$(cat "$cg/pids.max" 2> /dev/null || echo max)" = max ]
t "unlimited: still a v2 cgroup (cgroup.kill), no limit in it"
sbx destroy "$id"

# --pids without --memory: no exec leaf (it exists for memory.oom.group); the command goes into
# the init leaf ("0::/" in the session's cgroup namespace), also when clone3 fails, and the v2
# pids.max holds for it and what it starts.
no_clone3=$PWD/build/tests/no-clone3
id=$(sbx create --read-only --memory unlimited --pids 16 --cpus unlimited)
cg=$(state_key "$id" cgroup)
where=$(sbx exec "$id" sh -c 'grep "^0::" /proc/self/cgroup'; "$no_clone3" "$SBX" exec "$id" \
        sh -c 'grep "^0::" /proc/self/cgroup'; "$no_clone3" "$SBX" read "$id" /proc/self/cgroup |
        sed -n 's/^ *[0-9]*\t\(0::.*\)/\1/p')
diag "--pids only: the command's and the file helper's cgroup: $(echo $where)"
[ "$(echo $where)" = "0::/ 0::/ 0::/" ] && [ -z "$(ls -d "$cg"/exec-* 2>/dev/null)" ]
t "--pids only: no exec leaf; command and file helper in the init leaf, also without clone3"
"$no_clone3" "$SBX" exec "$id" sh -c 'for i in $(seq 40); do sleep 30 & done 2>/dev/null' >/dev/null 2>&1
peak=$(cat "$cg/pids.peak" 2>/dev/null || cat "$cg/pids.current")
diag "--pids 16, 40 sleeps asked without clone3: pids.current $(cat "$cg/pids.current"), peak $peak"
[ "$peak" -le 16 ] && [ "$(cat "$cg/pids.current")" -ge 10 ]
t "--pids only, without clone3: pids never above 16"
sbx destroy "$id"

# One pid left in the session: the waiting spare reaper serves the exec, the init forks the
# next spare into the last pid, and the reaper cannot fork C; the exec starts over with B
# outside, which forks C outside and moves it in. Exactly one left: the init, its spare, the
# first exec's reaper (it stays while its background children live) and 4 sleeps.
id=$(sbx create --read-only --memory unlimited --pids 8 --cpus unlimited)
cg=$(state_key "$id" cgroup)
sbx exec "$id" sh -c 'for i in 1 2 3 4; do sleep 1000 > /dev/null 2>&1 & done'
left=$(( $(cat "$cg/pids.max") - $(cat "$cg/pids.current") ))
out=$(sbx exec "$id" echo started)
diag "one pid left ($left): exec printed '$out'"
[ "$left" = 1 ] && [ "$out" = started ]
t "one pid left in the session: the exec still starts"
sbx destroy "$id"

# --pids 1: the init, born in its cgroup (clone3), has no pid for the helper that makes the
# network namespace (sandbox/helper.c), so it makes it itself; the command (no fork needed)
# finds only lo, and up: a loopback connection works.
out=$(sbx run --read-only --memory unlimited --pids 1 --cpus unlimited -- python3 -c '
import socket
print(" ".join(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
socket.create_connection(s.getsockname()).close(); print("connected")' 2>&1)
diag "--pids 1: $(echo $out)"
[ "$(echo $out)" = "lo connected" ]
t "--pids 1: no pid for the netns helper; the init makes the namespace, lo only and up"

# ---- started inside a delegated leaf ----------------------------------------------------------
# /deleg has every controller, /deleg/leaf none for its children: as systemd hands a unit
# with Delegate=yes to its process. sbx alone in the leaf moves itself into
# leaf/sbx-supervisor, enables the controllers in the leaf, and puts sessions in leaf/sbx.
mkdir -p $CG/deleg/leaf $CG/deleg/busy
echo "+memory +pids +cpu" > $CG/deleg/cgroup.subtree_control
leaf=$CG/deleg/leaf
id=$(sh -c 'echo 0 > "$1/cgroup.procs" && exec "$2" create --read-only --memory 32M --pids 16' \
        _ "$leaf" "$SBX")
[ -n "$id" ]
t "alone in a delegated leaf: create works"
sup=$(state_key "$id" supervisor_pid)
[ "$(cat /proc/"$sup"/cgroup 2>/dev/null)" = "0::/deleg/leaf/sbx-supervisor" ]
t "the supervisor moved itself into leaf/sbx-supervisor (inside its own cgroup)"
[ "$(state_key "$id" cgroup)" = "$leaf/sbx/$id" ] &&
        [ "$(cat "$leaf/cgroup.subtree_control")" = "cpu memory pids" ]
t "the session is leaf/sbx/<id>, controllers enabled in the leaf"
sbx exec "$id" "${hog[@]}" > /dev/null 2>&1
code=$?
[ "$code" = 137 ]
t "the memory limit holds there too (exit 137)"
sbx destroy "$id"
within '[ ! -e "$leaf/sbx" ]'
t "destroy: leaf/sbx is gone (within 5 s)"

# Another process in the leaf: cgroup v2 cannot enable controllers there; sbx must say so and
# leave everything as it was.
out=$(sh -c 'echo 0 > "$1/cgroup.procs" && { sleep 30 & } && exec "$2" create --memory 32M 2>&1' \
        _ $CG/deleg/busy "$SBX")
code=$?
[ "$code" = 4 ] && [[ $out == *"other processes are in '$CG/deleg/busy'"* ]]
t "not alone in the leaf: create fails with exit 4 naming the cause"
diag "$out"
[ -z "$(find $CG/deleg/busy -mindepth 1 -type d)" ] &&
        [ -z "$(cat $CG/deleg/busy/cgroup.subtree_control)" ]
t "... and leaves no cgroup behind"
for p in $(cat $CG/deleg/busy/cgroup.procs); do kill "$p"; done

# ---- sbx run: the same limits without a supervisor --------------------------------------------
sbx run --read-only --memory 32M -- "${hog[@]}" > /dev/null 2>&1
code=$?
# (run returns with its command; its cleaner, sbx-teardown, removes the cgroups once the
# kernel has torn the session down: wait for it, bounded)
for i in $(seq 50); do
        [ -z "$(find $CG/sbx -mindepth 1 -type d 2> /dev/null)" ] && break
        sleep 0.1
done
diag "run: cgroups gone after ${i} looks"
[ "$code" = 137 ] && [ -z "$(find $CG/sbx -mindepth 1 -type d 2> /dev/null)" ]
t "run --memory 32M: memory hog exit 137, its cgroups removed"
diag "run: exit $code"

echo "1..$n"
rm -rf "$SBX_RUNTIME_DIR"
[ "$failed" = 0 ]
