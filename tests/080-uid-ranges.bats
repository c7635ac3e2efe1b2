#!/usr/bin/env bats
# Host uids of root-run sessions: each session takes a uid/gid range of its own, listed in no
# /etc/subuid or /etc/subgid, shared with no other session, and its host-side helper (the
# egress proxy) runs under an id of that range, so no other host user can signal, renice,
# OOM-adjust or write as a session, and no session shares per-uid kernel counters with another.
# The attacker is a real second user ($atk_user) with the subordinate range useradd gave it,
# which it maps with newuidmap (util-linux unshare --map-users) as any such user can.

BATS_TEST_TIMEOUT=240
load helpers

atk_user=sbxuidatk

setup_file() {
        [ "$(id -u)" -eq 0 ] || return 0
        ensure_user "$atk_user"
        # useradd gives the new user a subordinate range, as on Debian and Ubuntu
        atk_sub=$(awk -F: -v u="$atk_user" '$1 == u { print $2; exit }' /etc/subuid)
        atk_subg=$(awk -F: -v u="$atk_user" '$1 == u { print $2; exit }' /etc/subgid)
        export atk_sub atk_subg
}
teardown_file() {
        [ "$(id -u)" -eq 0 ] || return 0
        userdel -r "$atk_user" 2>/dev/null || true
}

setup() {
        [ "$(id -u)" -eq 0 ] || skip "ranges are picked for root-run sessions; 070 covers users"
        [ -n "${atk_sub:-}" ] && [ -n "${atk_subg:-}" ] ||
                fail "useradd gave $atk_user no range in /etc/subuid and /etc/subgid"
        command -v newuidmap >/dev/null || fail "newuidmap is missing (package uidmap)"
        setup_sbx
}
teardown() {
        # the foreign processes of the scan test, if it failed before it killed them
        [ -z "${foreign_pids:-}" ] || kill $foreign_pids 2>/dev/null || true
        teardown_sbx
}

marker() {
        echo $((700000 + RANDOM * 7 + BATS_TEST_NUMBER))
}

# overlaps_subid START COUNT: does [START, START+COUNT) overlap any /etc/subuid or
# /etc/subgid entry?
overlaps_subid() {
        awk -F: -v s="$1" -v n="$2" '
                NF >= 3 && $2 + 0 < s + n && s < $2 + $3 { found = 1 }
                END { exit !found }' /etc/subuid /etc/subgid
}

# as_attacker SCRIPT ARGS...: SCRIPT (sh) as $atk_user, in a user namespace whose uids and
# gids 0..65535 are its subordinate range on the host, as uid 0 there.
as_attacker() {
        local script=$1
        shift
        timeout 30 runuser -u "$atk_user" -- unshare --user \
                --map-users="$atk_sub,0,65536" --map-groups="$atk_subg,0,65536" \
                --setuid 0 --setgid 0 sh -c "$script" sh "$@"
}

# The attacks: one line "<what> ok|denied" each, against the command process $1, the session
# init $2 (its uid is the range's last one: the helper uid) and a file $3 the session wrote on
# a volume.
attack_script='
r() { if "$@" >/dev/null 2>&1; then echo ok; else echo denied; fi; }
echo "write $(r sh -c "echo pwned >>$3")"
echo "renice $(r renice -n 5 -p "$1")"
echo "oom $(r sh -c "echo 900 >/proc/$1/oom_score_adj")"
echo "kill $(r kill -KILL "$1")"
echo "init $(r setpriv --reuid=65535 --regid=65535 --clear-groups kill -KILL "$2")"
'

# session_with_targets [CREATE-OPTIONS]: a session with a volume $pubdir/vol, a file it wrote
# there ($vfile) and a background command ($victim, its host pid).
session_with_targets() {
        public_dir
        mkdir -m 0777 "$pubdir/vol"
        new_session --mount "$pubdir/vol:/vol" "$@"
        local m
        m=$(marker)
        sbx_ok exec "$sid" sh -c "echo data >/vol/f && sleep $m >/dev/null 2>&1 &"
        wait_until 5 pgrep -f "^sleep $m\$" >/dev/null || fail "no sleep on the host"
        victim=$(pgrep -f "^sleep $m\$")
        vfile=$pubdir/vol/f
        init=$(state_key init_pid)
        nice0=$(awk '{ print $19 }' "/proc/$victim/stat")
        oom0=$(cat "/proc/$victim/oom_score_adj")
        [ "$oom0" != 900 ] || fail "oom_score_adj is 900 already"
}

# A key of the state of session $1 in runtime dir $2.
state_of() {
        sed -n "s/^$3=//p" "$2/$1/state"
}

@test "20 parallel creates get 20 distinct ranges, none in /etc/subuid or /etc/subgid" {
        # each in a runtime dir of its own: sessions that share nothing but the host must still
        # get distinct ranges
        local i ids=() id rt start starts=() seen pids=() init
        for i in $(seq 20); do
                rt=$BATS_TEST_TMPDIR/rt.$i
                sbx_runtime_dirs+=("$rt")
                SBX_RUNTIME_DIR=$rt timeout 60 "$SBX" create >"$BATS_TEST_TMPDIR/id.$i" \
                        2>"$BATS_TEST_TMPDIR/err.$i" &
                pids+=($!)
        done
        wait "${pids[@]}" || true
        for i in $(seq 20); do
                id=$(cat "$BATS_TEST_TMPDIR/id.$i")
                is_id "$id" || fail "create $i: '$id' $(cat "$BATS_TEST_TMPDIR/err.$i")"
                ids+=("$id")
        done
        for i in $(seq 20); do
                id=${ids[i - 1]}
                rt=$BATS_TEST_TMPDIR/rt.$i
                start=$(state_of "$id" "$rt" uid_start)
                init=$(state_of "$id" "$rt" init_pid)
                # the kernel's maps of the session's init are the recorded range
                read -r _ kstart kcount <"/proc/$init/uid_map"
                [ "$kstart $kcount" = "$start 65536" ] || fail "$id: kernel map $kstart $kcount, state $start"
                read -r _ kstart kcount <"/proc/$init/gid_map"
                [ "$kstart $kcount" = "$start 65536" ] || fail "$id: kernel gid map $kstart $kcount"
                # the proxy's id, next to the map, is in no subordinate range either
                ! overlaps_subid "$start" 65537 || fail "$id: range $start overlaps /etc/subuid or /etc/subgid"
                [ -e "/run/sbx-uidrange/$(printf %08x "$start")" ] || fail "$id: no lock file"
                SBX_RUNTIME_DIR=$rt sbx_ok log "$id"
                [ "$(jq -r 'select(.event == "create") | .uid_map | "\(.outside) \(.count) \(.helper_uid)"' <<<"$output")" = \
                        "$start 65536 $((start + 65535))" ] || fail "$id: audit log: $output"
                starts+=("$start")
        done
        # slots are 0x20000 apart, so distinct starts never overlap
        seen=$(printf '%s\n' "${starts[@]}" | sort -u | wc -l)
        [ "$seen" -eq 20 ] || fail "only $seen distinct ranges: ${starts[*]}"
        for start in "${starts[@]}"; do
                ((start % 0x20000 == 0)) || fail "range $start is not a slot"
        done
        for i in $(seq 20); do
                SBX_RUNTIME_DIR=$BATS_TEST_TMPDIR/rt.$i sbx_ok destroy "${ids[i - 1]}"
        done
        # every range is given back once its session is gone
        for start in "${starts[@]}"; do
                [ ! -e "/run/sbx-uidrange/$(printf %08x "$start")" ] || fail "lock of $start left behind"
        done
}

# run returns as soon as its command has ended (as bwrap's monitor does); a cleaner,
# sbx-teardown, waits for the kernel to tear the session down and then gives the range back.
# range_procs START: the live (not zombie) processes with the range's first id as their uid.
range_procs() { ps -e -o uid= -o stat= -o comm= | awk -v u="$1" '$1 == u && $2 !~ /^Z/'; }
lock_of() { echo "/run/sbx-uidrange/$(printf %08x "$1")"; }

live_teardown() { ps -e -o pid= -o stat= -o comm= | awk '$3 == "sbx-teardown" && $2 !~ /^Z/ { print $1 }'; }

@test "run: the range comes back only once the kernel is done; the cleaner holds no caller fd" {
        local out=$BATS_TEST_TMPDIR/out start lock tpid fds seen=
        # 1 GB in the session's /tmp: freeing it keeps the kernel's teardown going for a while
        # (~0.1 s) after run has returned
        timeout 60 "$SBX" run --memory 2G --disk 2G -- sh -c 'read -r _ s _ </proc/self/uid_map
                echo "$s"; dd if=/dev/zero of=/tmp/fill bs=1M count=1000 2>/dev/null' \
                >"$out" 2>"$BATS_TEST_TMPDIR/err" || fail "run: $(cat "$out" "$BATS_TEST_TMPDIR/err")"
        start=$(cat "$out")
        [[ $start =~ ^[0-9]+$ ]] || fail "$start"
        lock=$(lock_of "$start")
        # until the lock file goes: whenever it has gone, no process of the range runs
        local looks=0 deadline=$((SECONDS + 20))
        while [ -e "$lock" ] && [ $SECONDS -lt $deadline ]; do
                looks=$((looks + 1))
                [ -z "$seen" ] || continue
                for tpid in $(live_teardown); do
                        fds=$(ls -l "/proc/$tpid/fd" 2>/dev/null)
                        [[ $fds != *"/dev/null"* ]] || seen=$fds
                done
        done
        [ ! -e "$lock" ] || fail "the lock file stayed"
        [ -z "$(range_procs "$start")" ] || fail "released while running: $(range_procs "$start")"
        # the control: the teardown was seen at work, with /dev/null and no pipe or file of ours
        [ -n "$seen" ] || fail "no teardown seen at work in $looks looks: did run wait?"
        [[ $seen != *pipe:* ]] && [[ $seen != *"$BATS_TEST_TMPDIR"* ]] || fail "teardown fds: $seen"
        wait_until 5 eval '[ -z "$(sbx_new_procs)" ]' || fail "left: $(sbx_new_procs)"
        # a pipe read to its end
        local t0=$SECONDS got
        got=$(timeout 20 "$SBX" run -- echo hi | cat)
        [ "$got" = hi ] || fail "got '$got'"
        [ $((SECONDS - t0)) -lt 10 ] || fail "the pipe stayed open $((SECONDS - t0)) s"
}

# What the command leaves running would run on until the init kills it, at the end of its own
# exit (slow in a throttled cpu cgroup): then run waits, so that nothing of the session runs
# once it has returned.
@test "run: what its command left running is dead when run returns" {
        local start
        sbx_ok run --cpus 0.1 -- sh -c 'read -r _ s _ </proc/self/uid_map; echo "$s"
                for i in 1 2 3 4 5 6; do (while :; do :; done) >/dev/null 2>&1 & done'
        start=$output
        [[ $start =~ ^[0-9]+$ ]] || fail "$output"
        [ -z "$(range_procs "$start")" ] || fail "still running: $(range_procs "$start")"
        [ ! -e "$(lock_of "$start")" ] || fail "the range is still held"
}

# A request too big for one message is run on the join path: the CLI itself joins the session's
# namespaces (its children would be born in the dying pid namespace), so it waits for the end
# itself, and gives the range back by an fd of the lock directory (by path it named the
# session's own /run and left the lock file behind).
@test "run on the join path (a request too big for one message): the range is given back at once" {
        local big start lock
        big=$(head -c 100000 /dev/zero | tr '\0' a)
        sbx_ok run -- sh -c 'read -r _ s _ </proc/self/uid_map; echo "$s"' sh "$big" "$big"
        start=$output
        [[ $start =~ ^[0-9]+$ ]] || fail "$output"
        lock=$(lock_of "$start")
        [ ! -e "$lock" ] || fail "lock file $lock left behind"
        [ -z "$(range_procs "$start")" ] || fail "left: $(range_procs "$start")"
        [ -z "$(sbx_new_procs)" ] || fail "left: $(sbx_new_procs)"
}

@test "run --mount returns only once nothing of the session is left" {
        local d=$BATS_TEST_TMPDIR/vol start lock
        mkdir "$d"
        # 300 MB in the session's layer: freeing it keeps the kernel's teardown going for a
        # while, so that a run that returned before the end would be seen doing so
        sbx_ok run --mount "$d:/vol" -- sh -c \
                'read -r _ s _ </proc/self/uid_map; echo "$s"; sleep 1000 >/dev/null 2>&1 &
                dd if=/dev/zero of=/tmp/fill bs=1M count=300 2>/dev/null'
        start=$output
        [[ $start =~ ^[0-9]+$ ]] || fail "$output"
        lock=/run/sbx-uidrange/$(printf %08x "$start")
        [ ! -e "$lock" ] || fail "the range is still held"
        [ -z "$(range_procs "$start")" ] || fail "left: $(range_procs "$start")"
        [ -z "$(sbx_new_procs)" ] || fail "left: $(sbx_new_procs)"
}

@test "the subuid user can signal, renice, OOM-adjust and write as a session forced into its range (control)" {
        # an explicit uid_range is honoured as it is: this one is the attacker's own
        SBX_UID_RANGE=$atk_sub:65536 session_with_targets
        run as_attacker "$attack_script" "$victim" "$init" "$vfile"
        [ "$status" -eq 0 ] || fail "attack script failed: $output"
        [ "$(echo $output)" = "write ok renice ok oom ok kill ok init ok" ] ||
                fail "the attacker could not do what the test looks for: $output"
        grep -q pwned "$vfile" || fail "the write did not land"
        [ "$(cat "/proc/$victim/oom_score_adj" 2>/dev/null || echo 900)" = 900 ] || fail "oom_score_adj not changed"
        wait_until 5 sh -c "! kill -0 $victim 2>/dev/null" || fail "the command survived"
        # the init is dead: the session is over
        wait_until 10 sh -c "! '$SBX' exec '$sid' true 2>/dev/null" || fail "the session survived its init"
        sbx_expect 3 exec "$sid" true
}

@test "with the default range the subuid user can do none of it, nor map the session's ids" {
        session_with_targets
        local start
        start=$(state_key uid_start)
        run as_attacker "$attack_script" "$victim" "$init" "$vfile"
        [ "$status" -eq 0 ] || fail "attack script failed: $output"
        [ "$(echo $output)" = "write denied renice denied oom denied kill denied init denied" ] ||
                fail "an attack worked: $output"
        [ "$(cat "$vfile")" = data ] || fail "the file changed: $(cat "$vfile")"
        kill -0 "$victim" || fail "the command died"
        [ "$(awk '{ print $19 }' "/proc/$victim/stat")" = "$nice0" ] || fail "the command was reniced"
        [ "$(cat "/proc/$victim/oom_score_adj")" = "$oom0" ] || fail "oom_score_adj changed"
        sbx_ok exec "$sid" echo alive
        # newuidmap refuses the session's ids (and the proxy's), which are no range of the user's
        local id
        for id in "$start" "$((start + 65535))" "$((start + 65536))"; do
                run timeout 30 runuser -u "$atk_user" -- unshare --user --map-users="$id,0,1" true
                [ "$status" -ne 0 ] || fail "newuidmap mapped host uid $id for $atk_user"
        done
        # the old shared default, 100000, is another user's range or nobody's: never this session's
        ((start >= 0x40000000)) || fail "range $start is below the pool"
}

@test "the proxy runs under the session's own helper id: nobody cannot kill it; its death is logged" {
        new_session --allow-host example.com
        local sup proxy helper start
        sup=$(state_key supervisor_pid)
        start=$(state_key uid_start)
        helper=$(state_key helper_uid)
        [ "$helper" = $((start + 65536)) ] || fail "helper uid $helper, range $start"
        wait_until 5 pgrep -P "$sup" -x sbx-proxy >/dev/null || fail "no proxy"
        proxy=$(pgrep -P "$sup" -x sbx-proxy)
        [ "$(ps -o uid=,gid= -p "$proxy" | xargs)" = "$helper $helper" ] ||
                fail "proxy ids: $(ps -o uid=,gid= -p "$proxy")"
        # host nobody (which the proxy used to be), and the subuid user, cannot
        run setpriv --reuid=65534 --regid=65534 --clear-groups kill -KILL "$proxy"
        [ "$status" -ne 0 ] || fail "nobody killed the proxy"
        run as_attacker 'kill -KILL "$1" && echo killed' "$proxy"
        [ "$output" != killed ] || fail "the subuid user killed the proxy"
        kill -0 "$proxy" || fail "the proxy died"
        sbx_ok log "$sid"
        [ "$(jq -r 'select(.event == "create") | .uid_map.host_helper_uid' <<<"$output")" = "$helper" ] ||
                fail "the create record does not name the helper uid: $output"
        ! jq -e 'select(.event == "helper_exited")' <<<"$output" >/dev/null || fail "a death logged early"
        # control: a process with the proxy's own id can; the supervisor notices and logs it
        setpriv --reuid="$helper" --regid="$helper" --clear-groups kill -KILL "$proxy" ||
                fail "the proxy's own uid could not signal it"
        wait_until 5 sh -c "'$SBX' log '$sid' | grep -q helper_exited" || fail "the proxy's death was not logged"
        sbx_ok log "$sid"
        [ "$(jq -r 'select(.event == "helper_exited") | "\(.helper) \(.pid) \(.signal)"' <<<"$output")" = \
                "proxy $proxy KILL" ] ||
                fail "record: $output"
        # the session lives on (without egress)
        sbx_ok exec "$sid" echo alive
}

@test "run: the proxy runs under a picked helper id, and its death during the command is logged" {
        local adir=$BATS_TEST_TMPDIR/audit proxy uid i
        SBX_AUDIT_DIR=$adir timeout 60 "$SBX" run --allow-host example.com -- sleep 4 \
                >"$BATS_TEST_TMPDIR/run.out" 2>&1 &
        local runpid=$! sbxpid
        wait_until 10 pgrep -P "$runpid" >/dev/null || fail "no sbx under timeout"
        sbxpid=$(pgrep -P "$runpid")
        wait_until 10 pgrep -P "$sbxpid" -x sbx-proxy >/dev/null || fail "no proxy under run"
        proxy=$(pgrep -P "$sbxpid" -x sbx-proxy)
        uid=$(ps -o uid= -p "$proxy" | xargs)
        ((uid >= 0x40000000 && uid < 0x70000000 && uid % 0x20000 == 0x10000)) || fail "proxy uid $uid"
        run setpriv --reuid=65534 --regid=65534 --clear-groups kill -KILL "$proxy"
        [ "$status" -ne 0 ] || fail "nobody killed the proxy"
        setpriv --reuid="$uid" --regid="$uid" --clear-groups kill -KILL "$proxy" ||
                fail "the proxy's own uid could not signal it"
        wait "$runpid" || fail "run failed: $(cat "$BATS_TEST_TMPDIR/run.out")"
        [ "$(jq -r 'select(.event == "helper_exited") | "\(.helper) \(.pid) \(.signal)"' "$adir"/*.jsonl)" = \
                "proxy $proxy KILL" ] || fail "log: $(cat "$adir"/*.jsonl)"
        [ "$(jq -r 'select(.event == "create") | .uid_map.host_helper_uid' "$adir"/*.jsonl)" = "$uid" ] ||
                fail "create record: $(cat "$adir"/*.jsonl)"
}

# fill_inflight: a python script that keeps SCM_RIGHTS fds in flight on a socket pair until
# the kernel refuses more (ETOOMANYREFS: the per-uid count passed RLIMIT_NOFILE), says so, and
# holds them.
fill_py='
import array, errno, socket, sys, time
a, b = socket.socketpair()
fds = array.array("i", [a.fileno()] * 200)
n = 0
while True:
    try:
        a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        n += 200
    except OSError as e:
        print("full" if e.errno == errno.ETOOMANYREFS else "error %d" % e.errno, n, flush=True)
        break
time.sleep(300)
'
# pass one fd over a fresh socket pair: "passed" or the errno name
pass_py='
import array, errno, socket
a, b = socket.socketpair()
try:
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno()]))])
    print("passed")
except OSError as e:
    print(errno.errorcode[e.errno])
'

# fill SID: start fill_py in the session and wait until its uid's in-flight count is full.
fill() {
        sbx_ok exec "$1" sh -c "python3 -c '$fill_py' >/tmp/fill.log 2>&1 &"
        wait_until 20 sh -c "'$SBX' exec '$1' cat /tmp/fill.log | grep -q ." || fail "the filler did not report"
        sbx_ok exec "$1" cat /tmp/fill.log
        [[ $output == "full "* ]] || fail "filler: $output"
}

@test "per-uid kernel counters: one session filling its in-flight fd count leaves another's fd passing alone" {
        command -v python3 >/dev/null || fail "python3 is missing"
        local a b
        # control: two sessions forced into one range share the count, and the second fails
        SBX_UID_RANGE=3000000000:65536 new_session
        a=$sid
        SBX_UID_RANGE=3000000000:65536 new_session
        b=$sid
        sbx_ok exec "$b" python3 -c "$pass_py"
        [ "$output" = passed ] || fail "fd passing failed before anything: $output"
        fill "$a"
        sbx_ok exec "$b" python3 -c "$pass_py"
        [ "$output" = ETOOMANYREFS ] || fail "the control did not share the counter: $output"
        sbx_ok destroy "$a" "$b"
        # default ranges: the second session passes fds whatever the first one does
        new_session
        a=$sid
        new_session
        b=$sid
        fill "$a"
        sbx_ok exec "$b" python3 -c "$pass_py"
        [ "$output" = passed ] || fail "one session's fd passing failed because of another's: $output"
        sbx_ok exec "$a" python3 -c "$pass_py"
        [ "$output" = ETOOMANYREFS ] || fail "the full session could still pass: $output"
}

@test "uid_range = pick in sandbox.ini is the default; an explicit range is honoured" {
        printf '[security]\nuid_range = pick\n' >"$BATS_TEST_TMPDIR/p.ini"
        new_session --config "$BATS_TEST_TMPDIR/p.ini"
        (($(state_key uid_start) >= 0x40000000)) || fail "pick gave $(state_key uid_start)"
        sbx_ok list --json
        json ".[] | select(.id == \"$sid\") | .uid_range == {\"start\":$(state_key uid_start),\"count\":65536}" >/dev/null ||
                fail "list --json: $output"
        printf '[security]\nuid_range = 3000000000:1000\n' >"$BATS_TEST_TMPDIR/e.ini"
        new_session --config "$BATS_TEST_TMPDIR/e.ini"
        sbx_ok exec "$sid" cat /proc/self/uid_map
        [ "$(echo $output)" = "0 3000000000 1000" ] || fail "map: $output"
        printf '[security]\nuid_range = choose\n' >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 create --config "$BATS_TEST_TMPDIR/bad.ini"
        [[ $stderr == *"pick, or START:COUNT"* ]] || fail "message: $stderr"
}

@test "no free range: create exits 4 with a clear message and leaves nothing" {
        # a private mount namespace whose /etc/subuid lists the whole pool for somebody
        printf 'filler:%d:%d\n' $((0x40000000)) $((0x30000000)) >"$BATS_TEST_TMPDIR/subuid"
        _expect 4 unshare -m --propagation private -- sh -c \
                'mount --bind "$0" /etc/subuid && exec "$1" create' "$BATS_TEST_TMPDIR/subuid" "$SBX"
        [[ $stderr == "sbx: "*"no free host uid range"* ]] || fail "message: $stderr"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" | grep -v '^names$')" ] || fail "left: $(ls -A "$SBX_RUNTIME_DIR")"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR/names" 2>/dev/null)" ] || fail "names left"
}

@test "a process of another tool on a slot's ids keeps sessions off it (uid and gid); the control takes it once it is gone" {
        # every slot but the pool's first and last listed in /etc/subuid (a private mount
        # namespace), and a foreign process on each of those two: one by uid, one by gid
        local first=$((0x40000000)) last=$((0x40000000 + 0x17ff * 0x20000)) subuid=$BATS_TEST_TMPDIR/subuid
        printf 'filler:%d:%d\n' $((first + 0x20000)) $((0x17fe * 0x20000)) >"$subuid"
        setpriv --reuid=$((first + 7)) --regid=$((first + 7)) --clear-groups sleep 300 3>&- &
        local by_uid=$!
        setpriv --reuid=65534 --regid=$((last + 9)) --clear-groups sleep 300 3>&- &
        local by_gid=$!
        foreign_pids="$by_uid $by_gid"
        # once they have their ids, a second more: a scan shared before then has aged out, so
        # every scan from here on sees them
        wait_until 10 eval '[ "$(stat -c %u:%g /proc/'"$by_uid"')" = "$((first + 7)):$((first + 7))" ] &&
                [ "$(stat -c %u:%g /proc/'"$by_gid"')" = "65534:$((last + 9))" ]' ||
                fail "the foreign processes never got their ids"
        sleep 1.2
        _expect 4 unshare -m --propagation private -- sh -c \
                'mount --bind "$0" /etc/subuid && exec "$1" create' "$subuid" "$SBX"
        [[ $stderr == "sbx: "*"no free host uid range"* ]] || fail "took a slot in use: $output $stderr"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" | grep -v '^names$')" ] || fail "left: $(ls -A "$SBX_RUNTIME_DIR")"
        # the control: the same create takes one of the two once the processes are gone (and
        # the scan shared while they ran has aged out)
        kill "$by_uid" "$by_gid"
        wait "$by_uid" "$by_gid" 2>/dev/null || true
        foreign_pids=
        sleep 1.2
        _expect 0 unshare -m --propagation private -- sh -c \
                'mount --bind "$0" /etc/subuid && exec "$1" create' "$subuid" "$SBX"
        is_id "$output" || fail "control: no session ($output $stderr)"
        local id=$output start
        start=$(sed -n 's/^uid_start=//p' "$SBX_RUNTIME_DIR/$id/state")
        [ "$start" = "$first" ] || [ "$start" = "$last" ] || fail "control: took $start"
        sbx_ok destroy "$id"
}
