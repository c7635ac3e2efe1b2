#!/bin/bash
# SPDX-License-Identifier: MIT
# Delegation from systemd, for real: an unprivileged sbx on a cgroup v2 host whose own cgroup
# is not writable asks the systemd user manager for a transient scope with Delegate=yes, and
# the default limits hold there. A VM (tests/vm/run-in-vm) boots systemd as pid 1
# (tests/vm/systemd-init), which runs this script as root in a service; the script makes a user,
# starts its user manager (user@UID.service, with its D-Bus at /run/user/UID/bus) and runs sbx
# as that user from the service's root-owned cgroup, as from a login shell's session scope.
#
#   bash tests/vm/run-systemd.sh    (from the repo root, as root, after building build/)
#
# SBX names the binary (default build/sbx), SBX_VM_TIMEOUT the VM's limit (default 360 s: about
# 2.5 minutes on an idle 2-core host, twice that at a load of 10).
# Prints TAP. The positive control: the same calls with the user bus hidden get no scope, and
# the default memory limit is then reported as not enforced and does not stop the allocation.
set -u
export LC_ALL=C

SBX=${SBX:-build/sbx}
if [ "${SBX_SYSTEMD_IN_VM:-}" != 1 ] || [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ] ||
        [ ! -d /run/sbx-vm ]; then
        here=$(dirname "$0")
        if [ ! -x "$SBX" ] || ! command -v qemu-system-x86_64 >/dev/null ||
                [ ! -x /lib/systemd/systemd ] || ! command -v jq >/dev/null; then
                echo "1..0 # SKIP needs $SBX, QEMU, systemd and jq (scripts/bootstrap --vm)"
                exit 0
        fi
        export SBX SBX_SYSTEMD_IN_VM=1
        exec "$here/run-in-vm" --timeout "${SBX_VM_TIMEOUT:-360}" --mem 2G \
                --init "/bin/bash $(cd "$here" && pwd -P)/systemd-init" -- bash tests/vm/run-systemd.sh
fi
case $SBX in /*) ;; *) SBX=$PWD/$SBX ;; esac
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '# %s\n' "$@"; }
# CONDITION; t DESCRIPTION: one test point from the status of the condition before it.
# The time since the last test point goes into its description (TCG is slow: keep track).
last=$(date +%s%N)
t() {
        local rc=$? ms=$((($(date +%s%N) - last) / 1000000))
        last=$(date +%s%N)
        if [ $rc = 0 ]; then ok "$* (${ms} ms)"; else not_ok "$* (${ms} ms)"; fi
}
# jq -e FILTER on stdin: true or not (jq starts in ms under TCG, python in seconds)
jtrue() { jq -e "$1" >/dev/null; }

user=sbx-deleg
uid=1500
useradd -m -u $uid -s /bin/bash $user || { echo "1..0 # SKIP cannot add a user"; exit 1; }
# the binary where the user can run it (the checkout's path may not be open to others)
install -m 755 "$SBX" /usr/local/bin/sbx
rt=/run/user/$uid
t0=$(date +%s%N)
systemctl start user@$uid.service
diag "user manager of uid $uid started in $((($(date +%s%N) - t0) / 1000000)) ms;" \
        "kernel $(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')," \
        "this script in $(sed -n 's/^0:://p' /proc/self/cgroup)"

# as_user [VAR=VALUE...] -- COMMAND...: COMMAND as the user, from this service's cgroup
as_user() {
        local envs=()
        while [ "$1" != -- ]; do envs+=("$1"); shift; done
        shift
        timeout 120 setpriv --reuid=$uid --regid=$uid --init-groups \
                env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/$user USER=$user \
                XDG_RUNTIME_DIR=$rt "${envs[@]}" "$@"
}
# The user manager hidden (its bus, and its private socket below $XDG_RUNTIME_DIR): what a user
# without a reachable user manager gets.
nort=/tmp/sbx-no-runtime-dir
install -d -o $uid -g $uid -m 700 $nort
nobus=(DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus XDG_RUNTIME_DIR=$nort)
scopes() { as_user -- systemctl --user list-units --all --plain --no-legend 'sbx-*.scope' | awk '{ print $1 }'; }
# 600M in one read(2) buffer: past the default --memory 512M
hog=(dd if=/dev/zero of=/dev/null bs=600M count=1)

[ -S $rt/bus ] && [ "$(stat -c %U /sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service)" = $user ] &&
        ! as_user -- test -w "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"
t "the user manager runs with its bus at $rt/bus; sbx starts in a cgroup it cannot write"

# ---- the positive control: no user bus, no scope, the default limit not in force -------------
err=$(as_user "${nobus[@]}" -- sbx run --read-only -- true 2>&1 >/dev/null)
code=$?
diag "no bus: run -- true: exit $code, stderr: $err"
[ $code = 0 ] && [[ $err == *"default limits not enforced: memory 512M"* ]] &&
        [[ $err == *"no delegated systemd scope: no systemd user bus"* ]]
t "no bus: run works, warns that memory 512M is not enforced, and why (no user bus)"
out=$(as_user "${nobus[@]}" -- sbx check --json)
echo "$out" | jtrue '.limits.memory_bytes.enforced == false and .limits.memory_bytes.enforced_by == null'
t "no bus: check --json reports memory not enforced"
as_user "${nobus[@]}" -- sbx run --read-only -- "${hog[@]}" >/dev/null 2>&1
code=$?
[ $code = 0 ]
t "no bus: the 600M allocation is not stopped (exit $code): the harm is visible"
err=$(as_user "${nobus[@]}" -- sbx create --read-only --strict-limits 2>&1)
code=$?
diag "no bus: create --strict-limits: exit $code: $err"
[ $code = 4 ] && [[ $err == *"no delegated systemd scope"* ]]
t "no bus: create --strict-limits exits 4 and says why there is no scope"
[ -z "$(scopes)" ] && [ -z "$(as_user "${nobus[@]}" -- sbx list -q 2>/dev/null)" ]
t "no bus: no scope and no session left"

# ---- delegation ------------------------------------------------------------------------------
t0=$(date +%s%N)
err=$(as_user -- sbx run --read-only -- true 2>&1 >/dev/null)
code=$?
diag "run -- true with the user bus: exit $code in $((($(date +%s%N) - t0) / 1000000)) ms, stderr '$err'"
[ $code = 0 ] && [ -z "$err" ]
t "run -- true: exit 0, no warning"
as_user -- sbx run --read-only -- "${hog[@]}" >/dev/null 2>&1
code=$?
[ $code = 137 ]
t "run: the default memory limit (512M) stops a 600M allocation (exit $code)"
as_user -- sbx run --read-only --memory 64M -- dd if=/dev/zero of=/dev/null bs=128M count=1 >/dev/null 2>&1
code=$?
[ $code = 137 ]
t "run --memory 64M (asked for: exit 4 before) stops a 128M allocation (exit $code)"
out=$(as_user -- sbx check --json)
echo "$out" | jtrue '.limits.memory_bytes.enforced and .limits.memory_bytes.enforced_by == "cgroup v2" and .limits.pids.enforced'
t "check --json: memory and pids enforced by cgroup v2"
diag "check: $(echo "$out" | jq -r '.features[] | select(.name == "cgroup-memory") | .detail')"
echo "$out" | jtrue '.verdict | test("with every limit enforced")'
t "check's verdict: every limit enforced"
# no user bus (no dbus-user-session): the user manager's own socket, as systemd-run --user uses
err=$(as_user DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus -- \
        sbx run --read-only -- true 2>&1)
code=$?
[ $code = 0 ] && [[ $err != *"not enforced"* ]]
t "no user bus: the scope comes through \$XDG_RUNTIME_DIR/systemd/private (exit $code, no warning)"
# A cgroup of the user's own, shared with other processes (a terminal's scope under the user
# manager): writable, but cgroup v2 gives it no controllers for children while others are in
# it. Control: with the manager hidden inside, the defaults go unenforced there.
busy='sleep 60 & "$@"; rc=$?; kill $!; exit $rc'
err=$(as_user -- systemd-run --user --scope --quiet sh -c "$busy" sh \
        env "${nobus[@]}" sbx run --read-only -- true 2>&1)
code=$?
diag "in a shared scope of the user's, manager hidden: exit $code: $err"
[ $code = 0 ] && [[ $err == *"default limits not enforced: memory 512M"* ]]
t "in a shared scope of the user's, manager hidden: the defaults go unenforced (control)"
err=$(as_user -- systemd-run --user --scope --quiet sh -c "$busy" sh sbx run --read-only -- true 2>&1)
code=$?
[ $code = 0 ] && [ -z "$err" ]
t "in a shared scope of the user's: a scope of sbx's own, every default enforced (exit $code, no warning)"

id=$(as_user -- sbx create --read-only 2>/tmp/create.err)
code=$?
[ $code = 0 ] && [ ! -s /tmp/create.err ]
t "create: exit 0, no warning"
out=$(as_user -- sbx list --json)
echo "$out" | jtrue ".[] | select(.id == \"$id\") | .limits.memory_bytes == {value: 536870912, enforced: true, enforced_by: \"cgroup v2\"}"
t "list --json: memory 512M enforced by cgroup v2"
out=$(as_user -- sbx log --json "$id")
echo "$out" | jtrue '.[0].event == "create" and .[0].limits.memory_bytes.enforced'
t "the audit log's create record: memory enforced"
cg=$(sed -n 's/^cgroup=//p' $rt/sbx/"$id"/state 2>/dev/null)
scope=$(basename "$(dirname "$(dirname "$cg")")")
diag "session cgroup: $cg"
[[ $cg == /sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service/*/sbx-*.scope/sbx/$id ]] &&
        [ "$(cat "$cg/memory.max")" = 536870912 ] &&
        [ "$(as_user -- systemctl --user show -p Delegate --value "$scope")" = yes ]
t "the session's cgroup is in $scope (Delegate=yes), memory.max 512M"
# (a second session at 64M: an exec's allocation is stopped sooner than at 512M under TCG)
id2=$(as_user -- sbx create --read-only --memory 64M)
cg2=$(sed -n 's/^cgroup=//p' $rt/sbx/"$id2"/state 2>/dev/null)
as_user -- sbx exec "$id2" dd if=/dev/zero of=/dev/null bs=128M count=1 >/dev/null 2>&1
code=$?
out=$(as_user -- sbx exec "$id2" echo alive)
[ $code = 137 ] && [ "$out" = alive ] && [ "$(cat "$cg2/memory.max")" = 67108864 ]
t "exec from outside the scope: a 128M allocation stopped at --memory 64M (exit $code), the next exec works"
as_user -- sbx destroy "$id" "$id2"
for i in $(seq 50); do [ -z "$(scopes)" ] && break; sleep 0.2; done
left=$(scopes)
diag "scopes left after destroy: '$left' (waited $i)"
[ -z "$left" ] && [ ! -e "$(dirname "$(dirname "$cg")")" ] && [ ! -e "$(dirname "$(dirname "$cg2")")" ] &&
        [ -z "$(find /sys/fs/cgroup \( -name sbx -o -name 'sbx-*.scope' -o -name sbx-supervisor \) 2>/dev/null)" ]
t "destroy: no sbx scope and no sbx cgroup left"

# ---- root never asks -------------------------------------------------------------------------
timeout 120 sbx run --read-only -- true 2>/dev/null &&
        [ -z "$(systemctl list-units --all --plain --no-legend 'sbx-*.scope')" ] && [ -z "$(scopes)" ]
t "root: run works and no scope is asked for"

echo "1..$n"
[ "$failed" = 0 ]
