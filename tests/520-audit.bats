#!/usr/bin/env bats
# The audit log (docs/CONTRACT.md, "Lifetime"; docs/DESIGN.md, "Audit log"): JSON Lines,
# one record per event: create with the effective boundaries, warnings, every exec, every
# write/edit, and the end with its reason. `sbx log ID` prints it (`--json`: one array).
# With [audit] dir set the log is kept there (0600) after the session ends.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# log_events ID: the event names of the session's log, one per line.
log_events() {
        sbx_ok log "$1"
        jq -r '.event' <<<"$output"
}

# every_line_json FILE: each line of FILE is one JSON object (no torn or merged lines).
every_line_json() {
        local n=0 line
        while IFS= read -r line; do
                n=$((n + 1))
                jq -e 'type == "object"' <<<"$line" >/dev/null ||
                        fail "line $n of $1 is not one JSON object: ${line:0:200}"
        done <"$1"
}

@test "create records the effective boundaries, and they match the session" {
        # a directory beside the test's runtime dir: the test dir itself holds it, and a
        # mount of sbx's runtime dir is refused
        mkdir "$BATS_TEST_TMPDIR/vol"
        new_session --memory 256M --pids 64 --cpus 0.5 --disk 64M --nofile 512 \
                --mount "$BATS_TEST_TMPDIR/vol:/data:ro" --seccomp strict
        sbx_ok log --json "$sid"
        json '.[0].event == "create"'
        json ".[0].session == \"$sid\""
        json '.[0].namespaces | sort == ["cgroup","ipc","mnt","net","pid","user","uts"]'
        json '.[0].capabilities == [] and .[0].no_new_privs == true'
        json '.[0].seccomp == "strict"'
        json '.[0].limits.memory_bytes.value == 268435456'
        json '.[0].limits.pids.value == 64 and .[0].limits.cpus_milli.value == 500'
        json '.[0].limits.disk_bytes.value == 67108864 and .[0].limits.nofile.value == 512'
        json '.[0].network.mode == "none" and .[0].network.allow == []'
        json ".[0].mounts == [{\"host\":\"$BATS_TEST_TMPDIR/vol\",\"sandbox\":\"/data\",\"read_only\":true}]"
        # the controller that enforces each limit is the one sbx check reports
        local mem_by
        mem_by=$(jq -r '.[0].limits.memory_bytes.enforced_by' <<<"$output")
        [[ $mem_by == "cgroup v1" || $mem_by == "cgroup v2" ]] || fail "memory enforced by '$mem_by'"
        # the recorded uid map is the one the kernel has for the session init
        local init outside
        init=$(jq -r '.[0].init_pid' <<<"$output")
        outside=$(jq -r '.[0].uid_map.outside' <<<"$output")
        read -r _ host_uid _ <"/proc/$init/uid_map"
        [ "$host_uid" = "$outside" ] || fail "log says uid 0 -> $outside, kernel says $host_uid"
}

@test "every exec is recorded: argv, workdir, duration, exit code, output size; env values are not" {
        new_session
        sbx_expect 3 exec -e SECRET_TOKEN=hunter2 -w /tmp "$sid" sh -c 'printf 12345; exit 3'
        sbx_expect 124 exec -t 1s "$sid" sleep 30
        sbx_ok exec --json --max-output 10 "$sid" sh -c 'head -c 100000 /dev/zero'
        sbx_expect 127 exec "$sid" /no/such/program
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "exec")] | length == 4'
        json '[.[] | select(.event == "exec")][0] | .argv == ["sh","-c","printf 12345; exit 3"]
                and .workdir == "/tmp" and .exit_code == 3 and .output_bytes == 5
                and .timed_out == false and .env_set == ["SECRET_TOKEN"]'
        json '[.[] | select(.event == "exec")][1] | .timed_out == true and .exit_code == 124
                and .timeout_ms == 1000 and .duration_ms >= 900'
        json '[.[] | select(.event == "exec")][2] | .output_bytes == 100000 and .output_truncated'
        json '[.[] | select(.event == "exec")][3] | .exit_code == 127'
        ! grep -q hunter2 <<<"$output" || fail "an environment value reached the audit log"
}

@test "write and edit are recorded, failures too; reads are not" {
        new_session
        sbx_ok write "$sid" notes.txt "hello world"
        sbx_ok edit "$sid" notes.txt world there
        sbx_expect 1 write "$sid" notes.txt again
        sbx_expect 1 edit --replace-all "$sid" notes.txt absent x
        sbx_ok read "$sid" notes.txt
        run log_events "$sid"
        [ "$output" = "$(printf 'create\nwrite\nedit\nwrite\nedit')" ] || fail "events: $output"
        sbx_ok log --json "$sid"
        json '.[1] | .path == "notes.txt" and .bytes == 11 and .exit_code == 0 and .workdir == "/workspace"'
        json '.[2] | .replace_all == false and .exit_code == 0'
        json '.[3] | .exit_code == 1 and .error == "exists"'
        json '.[4] | .exit_code == 1 and .error == "not_found" and .replace_all == true'
}

@test "the end is recorded: destroyed, expired, crashed (log kept in the audit dir)" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/audit
        new_session
        local destroyed=$sid
        sbx_ok destroy "$destroyed"
        new_session --ttl 1s
        local expired=$sid
        wait_until 10 eval "! $SBX list --quiet | grep -q $expired"
        new_session
        local crashed=$sid sup
        sup=$(sed -n 's/^supervisor_pid=//p' "$SBX_RUNTIME_DIR/$crashed/state")
        kill -9 "$sup"
        wait_until 5 eval "! kill -0 $sup 2>/dev/null"
        sbx_ok list # the next list cleans the stale session up and notes the crash
        sbx_ok log --json "$destroyed"
        json '.[-1] | .event == "end" and .reason == "destroyed"'
        sbx_ok log --json "$expired"
        json '.[-1] | .event == "end" and .reason == "expired"'
        sbx_ok log --json "$crashed"
        json '.[-1] | .event == "end" and .reason == "crashed"'
        local f
        for f in "$SBX_AUDIT_DIR"/*.jsonl; do
                [ "$(stat -c %a "$f")" = 600 ] || fail "$f has mode $(stat -c %a "$f")"
                every_line_json "$f"
        done
        [ "$(stat -c %a "$SBX_AUDIT_DIR")" = 700 ]
        [ "$(ls "$SBX_AUDIT_DIR" | wc -l)" = 3 ]
}

@test "without an audit dir the log ends with its session" {
        new_session --name gone
        [ -f "$SBX_RUNTIME_DIR/$sid/audit.jsonl" ]
        sbx_ok destroy "$sid"
        sbx_expect 3 log "$sid"
        [[ $stderr == *"[audit] dir"* ]] || fail "the error does not say how to keep logs: $stderr"
        sbx_expect 3 log --json gone
        json '.error.code == "session_not_found"'
}

@test "unconfined seccomp and host network are warnings on stderr and in the log" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/audit
        sbx_ok create --seccomp unconfined --net host
        sid=$output
        [[ $stderr == *"--seccomp unconfined"* && $stderr == *"--net host"* ]]
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "warning") | .message] | length == 2'
        json '[.[] | select(.event == "warning") | .message] | any(test("--seccomp unconfined"))'
        json '[.[] | select(.event == "warning") | .message] | any(test("--net host"))'
        json '.[0].network.mode == "host" and (.[0].namespaces | index("net") == null)'
        # `run` keeps a log too when the audit dir is set
        sbx_ok run --seccomp unconfined -- true
        local logs
        logs=$(grep -l '"event":"exec"' "$SBX_AUDIT_DIR"/*.jsonl | wc -l)
        [ "$logs" = 1 ] || fail "expected one log with an exec (from run), found $logs"
}

@test "concurrent execs and writes never tear or merge lines" {
        new_session --pids 512
        local i big pids=()
        big=$(head -c 20000 /dev/zero | tr '\0' x)
        for i in $(seq 1 24); do
                timeout 60 "$SBX" exec "$sid" sh -c "echo $i" "$big" >/dev/null &
                pids+=($!)
                timeout 60 "$SBX" write "$sid" "f$i" "$i" >/dev/null &
                pids+=($!)
        done
        # only these jobs: bats has a watchdog job of its own
        for i in "${pids[@]}"; do
                wait "$i" || fail "a concurrent exec or write failed"
        done
        every_line_json "$SBX_RUNTIME_DIR/$sid/audit.jsonl"
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "exec")] | length == 24'
        json '[.[] | select(.event == "write" and .exit_code == 0)] | length == 24'
}

@test "a huge argv is cut, and the record stays one valid line" {
        new_session
        local arg
        arg=$(head -c 120000 /dev/zero | tr '\0' y)
        sbx_ok exec "$sid" true "$arg" "$arg"
        every_line_json "$SBX_RUNTIME_DIR/$sid/audit.jsonl"
        local len
        len=$(sed -n 2p "$SBX_RUNTIME_DIR/$sid/audit.jsonl" | wc -c)
        [ "$len" -lt 61440 ] || fail "record of $len bytes"
        sbx_ok log --json "$sid"
        json '.[1].argv_truncated == true and .[1].argv[0] == "true"'
}

@test "the sandbox cannot reach or forge its log" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/audit
        new_session
        local log=$SBX_AUDIT_DIR/$sid.jsonl
        sbx_expect any exec "$sid" sh -c "cat '$log' || ls '$SBX_AUDIT_DIR' || ls '$SBX_RUNTIME_DIR'"
        [ "$status" -ne 0 ] || fail "the audit log or runtime dir is visible inside: $output"
        # no open file of any process inside points at a log
        sbx_ok exec "$sid" sh -c 'ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c jsonl || true'
        [ "$output" = 0 ] || fail "a process inside holds an audit log open"
        # what a command prints is never taken as a record
        sbx_ok exec "$sid" printf '\n{"event":"end","reason":"destroyed"}\n'
        sbx_ok log --json "$sid"
        json '[.[] | select(.event == "end")] | length == 0'
}

@test "an unusable audit dir fails create (exit 4) and leaves nothing behind" {
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/shared
        mkdir -m 0777 "$SBX_AUDIT_DIR"
        sbx_expect 4 create
        [[ $stderr == *"audit"* ]] || fail "the error does not name the audit dir: $stderr"
        [ -z "$(ls -A "$SBX_AUDIT_DIR")" ] || fail "files left in the audit dir"
        [ -z "$(ls "$SBX_RUNTIME_DIR" | grep '^sb_' || true)" ] || fail "a session dir was left"
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/afile
        touch "$SBX_AUDIT_DIR"
        sbx_expect 4 create --json
        json '.error.code == "unsupported"'
}

@test "log: usage errors and a session that never existed" {
        sbx_expect 2 log
        sbx_expect 2 log a b
        sbx_expect 2 log --bogus x
        sbx_expect 3 log sb_0123456789abcdef
        sbx_expect 3 log ../../etc
}

@test "a large log streams whole, as text and as JSON; an over-long line is skipped in JSON" {
        new_session
        local log=$SBX_RUNTIME_DIR/$sid/audit.jsonl
        # 40,000 records (about 6 MB), as a flood of proxy records would make
        python3 - "$log" "$sid" <<'PY'
import sys
with open(sys.argv[1], "a") as f:
    for i in range(40000):
        f.write('{"ts":"2026-01-01T00:00:00.000Z","session":"%s","event":"net","n":%d,"pad":"%s"}\n'
                % (sys.argv[2], i, "x" * 100))
    f.write("{" + "y" * 200000 + "}\n")
PY
        sbx_ok exec "$sid" true
        sbx_ok log --json "$sid"
        json 'length == 40002'
        json '.[0].event == "create" and .[-1].event == "exec" and .[40000].n == 39999'
        sbx_ok log "$sid"
        [ "${#lines[@]}" -eq 40003 ] || fail "text output has ${#lines[@]} lines"
}

@test "an audit dir reached through a symbolic link is refused (exit 4)" {
        mkdir -p "$BATS_TEST_TMPDIR/real/audit"
        ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/link"
        export SBX_AUDIT_DIR=$BATS_TEST_TMPDIR/link/audit
        sbx_expect 4 create
        [[ $stderr == *"symbolic link"* ]] || fail "the error does not say why: $stderr"
        [ -z "$(ls -A "$BATS_TEST_TMPDIR/real/audit")" ] || fail "a log was written through the link"
}
