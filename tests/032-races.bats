#!/usr/bin/env bats
# Concurrency and faults: many sbx processes at once, and sbx processes killed at any moment.
# Each test runs a bounded loop (parallel calls, or a race forced with tests/race_inject.c,
# which makes sbx lose it every time) and asserts counts: how many calls failed, how many
# sessions nobody has the id of. Never timings.

load helpers
setup() { setup_sbx; }
teardown() {
        local rc=0
        [ -z "${sweeper:-}" ] || stop_sweeper
        teardown_sbx || rc=$?
        remove_private_cgroups
        return "$rc"
}

# ---- helpers ------------------------------------------------------------------------

# start_sweeper: `sbx list` (which removes every stale session it finds) over and over in the
# background until stop_sweeper; the number of lists that ran is in $sweeps afterwards.
start_sweeper() {
        sweeper_stop=$BATS_TEST_TMPDIR/sweeper.stop
        sweeper_count=$BATS_TEST_TMPDIR/sweeper.count
        rm -f "$sweeper_stop" "$sweeper_count"
        (
                n=0
                while [ ! -e "$sweeper_stop" ]; do
                        timeout 20 "$SBX" list --quiet >/dev/null 2>&1 || true
                        n=$((n + 1))
                done
                echo "$n" >"$sweeper_count"
        ) &
        sweeper=$!
}

stop_sweeper() {
        touch "$sweeper_stop"
        wait "$sweeper" || true
        sweeper=
        sweeps=$(cat "$sweeper_count" 2>/dev/null || echo 0)
}

# parallel_creates N LOG [ENV...]: N `sbx create` at once (each with ENV and the race library
# preloaded when ENV is given); the exit codes go to $codes (one per line, sorted), the ids
# printed to $created_ids, stderr of the failures to LOG.
parallel_creates() {
        local n=$1 log=$2 i pids=() dir
        shift 2
        dir=$(mktemp -d "$BATS_TEST_TMPDIR/creates.XXXXXX")
        for ((i = 0; i < n; i++)); do
                if [ $# -gt 0 ]; then
                        timeout -k 5 60 env LD_PRELOAD="$SBX_RACE_INJECT" \
                                ASAN_OPTIONS=verify_asan_link_order=0 "$@" "$SBX" create \
                                >"$dir/out.$i" 2>"$dir/err.$i" &
                else
                        timeout -k 5 60 "$SBX" create >"$dir/out.$i" 2>"$dir/err.$i" &
                fi
                pids+=($!)
        done
        codes=
        for ((i = 0; i < n; i++)); do
                local rc=0
                wait "${pids[$i]}" || rc=$?
                codes+="$rc"$'\n'
                if [ "$rc" -eq 0 ]; then
                        created_ids+=("$(cat "$dir/out.$i")")
                else
                        cat "$dir/err.$i" >>"$log"
                fi
        done
        codes=$(sort -n <<<"$codes" | sed '/^$/d')
        rm -rf "$dir"
}

# count_not CODE...: how many lines of $codes are none of CODE...
count_not() {
        local pattern
        pattern=$(printf '^%s$|' "$@")
        grep -cvE "${pattern%|}" <<<"$codes" || true
}

# The cgroups sbx makes its shared parents ("sbx") in, for sessions of this test alone: a new
# cgroup below each of the test's own (as a normal session records them), which `in_private`
# moves a command into before it runs. Removed in teardown, after the sessions.
private_cgroups=()

make_private_cgroups() {
        new_session
        local k p own
        for k in cgroup cgroup_v1_memory cgroup_v1_pids cgroup_v1_cpu; do
                p=$(state_key "$k")
                [ -n "$p" ] || continue
                own=$(dirname "$(dirname "$p")")
                [ "$(basename "$(dirname "$p")")" = sbx ] || fail "unexpected cgroup path $p"
                p="$own/sbxt-race-$BATS_TEST_NUMBER-$$"
                [[ " ${private_cgroups[*]} " == *" $p "* ]] && continue
                mkdir "$p" || fail "cannot create cgroup $p"
                private_cgroups+=("$p")
        done
        sbx_ok destroy "$sid"
        [ ${#private_cgroups[@]} -gt 0 ] || fail "sessions here have no cgroups: nothing to race on"
}

remove_private_cgroups() {
        local d
        for d in "${private_cgroups[@]}"; do
                rmdir "$d/sbx" "$d/sbx-supervisor" 2>/dev/null || true
                rmdir "$d" 2>/dev/null || echo "cgroup $d left behind" >&2
        done
        private_cgroups=()
}

# in_private CMD...: CMD in the private cgroups (its own process moves there, then execs).
in_private_sh='for d in $SBXT_CGROUPS; do echo $$ >"$d/cgroup.procs" || exit 99; done; exec "$@"'

# ---- a session being born is never stale -----------------------------------------------

@test "50 parallel creates, twice, while stale sweeps run: every create succeeds" {
        local log=$BATS_TEST_TMPDIR/errors created_ids=()
        start_sweeper
        parallel_creates 50 "$log"
        local bad1
        bad1=$(count_not 0)
        parallel_creates 50 "$log"
        stop_sweeper
        local bad=$((bad1 + $(count_not 0)))
        [ "$sweeps" -gt 0 ] || fail "no sweep ran during the creates"
        [ "$bad" -eq 0 ] || fail "$bad of 100 creates failed:" "$(sort "$log" | uniq -c)"
        # every printed id is a working session
        sbx_ok list --quiet
        [ "$(sort <<<"$output")" = "$(printf '%s\n' "${created_ids[@]}" | sort)" ] ||
                fail "listed sessions differ from the ids printed"
        sbx_ok destroy "${created_ids[@]}"
}

@test "a sweep in the middle of making a session leaves it alone (20 creates, race forced)" {
        local log=$BATS_TEST_TMPDIR/errors inject=$BATS_TEST_TMPDIR/inject.log created_ids=()
        local bad=0 r
        start_sweeper
        for r in 1 2 3 4 5; do
                parallel_creates 4 "$log" SBXT_FIRST_FLOCK_DELAY_MS=40 SBXT_INJECT_LOG="$inject"
                bad=$((bad + $(count_not 0)))
        done
        stop_sweeper
        # positive control: each create was held in the middle, with sweeps running meanwhile
        [ "$(grep -c delayed "$inject")" -eq 20 ] || fail "the delay was not injected 20 times"
        [ "$sweeps" -gt 0 ] || fail "no sweep ran during the creates"
        [ "$bad" -eq 0 ] || fail "$bad of 20 creates failed:" "$(sort "$log" | uniq -c)"
        local id
        for id in "${created_ids[@]}"; do
                sbx_ok exec "$id" true
        done
        sbx_ok destroy "${created_ids[@]}"
}

# ---- the shared cgroup parent removed by a session ending elsewhere ---------------------

@test "a create whose cgroup parent is removed between mkdir and use makes it again (exit 0, never 4)" {
        make_private_cgroups
        local inject=$BATS_TEST_TMPDIR/inject.log n races keys_normal keys
        new_session
        keys_normal=$(grep -o '^cgroup[a-z0-9_]*=' "$SBX_RUNTIME_DIR/$sid/state" | sort)
        sbx_ok destroy "$sid"
        # 1 to 12 lost races per process, each one a real removal of the empty parent
        for n in 1 2 4 8 12; do
                rm -f "$inject"
                _expect 0 env SBXT_CGROUPS="${private_cgroups[*]}" LD_PRELOAD="$SBX_RACE_INJECT" \
                        ASAN_OPTIONS=verify_asan_link_order=0 SBXT_CGROUP_PARENT_RACES=$n \
                        SBXT_INJECT_LOG="$inject" sh -c "$in_private_sh" sh "$SBX" create
                sid=$output
                races=$(grep -c removed "$inject" || true)
                # positive control: the creator alone lost n races
                [ "$races" -ge "$n" ] || fail "only $races races injected (wanted $n or more)"
                # the session has every cgroup a session made without races has, in the private
                # parents, and works
                keys=$(grep -o '^cgroup[a-z0-9_]*=' "$SBX_RUNTIME_DIR/$sid/state" | sort)
                [ "$keys" = "$keys_normal" ] || fail "cgroups '$keys', without races '$keys_normal'"
                grep -q "sbxt-race-$BATS_TEST_NUMBER-$$/sbx/$sid\$" "$SBX_RUNTIME_DIR/$sid/state" ||
                        fail "the session is not in the private cgroups"
                sbx_ok exec "$sid" true
                sbx_ok destroy "$sid"
        done
}

# ---- the creator dies ------------------------------------------------------------------

@test "kill -9 of create at 20 moments of its run: no session is left that nobody has the id of" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/audit
        local t pid out known=() made left orphans t0 ms
        out=$BATS_TEST_TMPDIR/out
        # the moments: spread over how long a create takes here (a sanitized build is slower)
        t0=$(date +%s%N)
        new_session
        ms=$((($(date +%s%N) - t0) / 1000000))
        sbx_ok destroy "$sid"
        rm -rf "$SBX_AUDIT_DIR"
        for t in $(seq 0 19); do
                : >"$out"
                "$SBX" create >"$out" 2>/dev/null &
                pid=$!
                sleep "$(awk -v t="$t" -v ms="$ms" 'BEGIN { printf "%.3f", t * ms / 20000 }')"
                kill -9 "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                [ ! -s "$out" ] || known+=("$(cat "$out")")
        done
        # the sessions whose creator died end on their own: wait (bounded) for that
        orphans_listed() {
                sbx_ok list --quiet || return 1
                left=$(grep -vxF -f <(printf '%s\n' "${known[@]}" none) <<<"$output" || true)
                [ -z "$left" ]
        }
        wait_until 20 orphans_listed || true
        orphans=$(grep -c . <<<"$left" || true)
        # positive control: sessions were made (an audit log each) whose creator never printed
        # their id
        made=$(find "$SBX_AUDIT_DIR" -name '*.jsonl' 2>/dev/null | wc -l)
        [ "$((made - ${#known[@]}))" -gt 0 ] ||
                fail "no kill landed after the session was made ($made made, ${#known[@]} printed)"
        [ "$orphans" -eq 0 ] || fail "$orphans sessions left that nobody has the id of: $left"
        # and their logs say why they ended
        local f id abandoned=0
        for f in "$SBX_AUDIT_DIR"/*.jsonl; do
                id=$(basename "$f" .jsonl)
                [[ " ${known[*]} " == *" $id "* ]] && continue
                tail -n 1 "$f" | jq -e '.event == "end" and .reason == "destroyed" and
                        (.detail | test("creator"))' >/dev/null || fail "$id: $(tail -n 1 "$f")"
                abandoned=$((abandoned + 1))
        done
        [ "$abandoned" -eq "$((made - ${#known[@]}))" ]
        [ ${#known[@]} -eq 0 ] || sbx_ok destroy --force "${known[@]}"
}

@test "create whose id cannot be written (stdout full) fails and leaves no session" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/audit
        local opt
        for opt in --ttl=5m --json; do
                # exit 1: only exec and run exit 125 (sbx(1), EXIT STATUS)
                _expect 1 sh -c '"$0" create "$1" >/dev/full' "$SBX" "$opt"
                [[ $stderr == *"failed to write the output"* ]] || fail "stderr: $stderr"
        done
        sbx_ok list --quiet
        [ -z "$output" ] || fail "sessions left: $output"
        [ "$(find "$SBX_AUDIT_DIR" -name '*.jsonl' | wc -l)" -eq 2 ] || fail "not 2 sessions made"
        local f
        for f in "$SBX_AUDIT_DIR"/*.jsonl; do
                tail -n 1 "$f" | jq -e '.event == "end" and .reason == "destroyed"' >/dev/null ||
                        fail "$(tail -n 1 "$f")"
        done
}

# ---- parallel destroy of one session ---------------------------------------------------

@test "10 parallel destroys of one session, 10 times: one 0 each time, the others 3" {
        local r i pids codes_all= log=$BATS_TEST_TMPDIR/errors
        for r in $(seq 1 10); do
                new_session
                pids=()
                for i in $(seq 0 9); do
                        timeout -k 5 60 "$SBX" destroy "$sid" 2>>"$log" &
                        pids+=($!)
                done
                for i in $(seq 0 9); do
                        local rc=0
                        wait "${pids[$i]}" || rc=$?
                        codes_all+="$r $rc"$'\n'
                done
                [ ! -d "$SBX_RUNTIME_DIR/$sid" ] || fail "session $sid still there"
        done
        codes=$(awk 'NF { print $2 }' <<<"$codes_all")
        local bad zeros
        bad=$(count_not 0 3)
        zeros=$(grep -cx 0 <<<"$codes" || true)
        [ "$bad" -eq 0 ] || fail "$bad of 100 destroys exited neither 0 nor 3:" "$(sort "$log" | uniq -c)"
        [ "$zeros" -eq 10 ] || fail "$zeros destroys succeeded, not one per session"
        ! grep -q "does not answer" "$log" || fail "$(sort "$log" | uniq -c)"
}

@test "10 parallel destroy --force of one session, 5 times: all exit 0" {
        local r i pids bad=0
        for r in $(seq 1 5); do
                new_session
                pids=()
                for i in $(seq 0 9); do
                        timeout -k 5 60 "$SBX" destroy --force "$sid" 2>/dev/null &
                        pids+=($!)
                done
                for i in $(seq 0 9); do
                        wait "${pids[$i]}" || bad=$((bad + 1))
                done
        done
        [ "$bad" -eq 0 ] || fail "$bad of 50 destroy --force failed"
}
