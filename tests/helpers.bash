# Shared helpers of the bats suites (load with `load helpers`). They run the real binary.
#
# Every test file does:
#     load helpers
#     setup()    { setup_sbx; }
#     teardown() { teardown_sbx; }
# so that each test has its own runtime dir and config, and ends with a leak check.
#
# Environment (set by tests/meson.build): SBX (the built binary), SBX_SRC (source root),
# SBX_BUILD (build root), SBX_PROBE (static probe, when tests/probe.c exists), SBX_NO_CLONE3
# (runs a command with clone3 failing), SBX_RACE_INJECT (a library to LD_PRELOAD into sbx
# that makes it lose races with other sessions, tests/race_inject.c). These are the
# suite's own variables, not sbx configuration: setup_sbx keeps them as shell variables but
# removes them (and every other SBX_*) from the environment sbx sees.

bats_require_minimum_version 1.5.0

# Per-test watchdog of bats (a test that hangs fails instead of blocking the suite); a file
# may raise it before `load helpers`.
: "${BATS_TEST_TIMEOUT:=120}"
# Every sbx call made through the helpers is killed after this many seconds.
: "${sbx_call_timeout:=30}"

# The comm names the session's own processes carry (supervisor, session init, per-exec
# reaper and its spare, set-up helper, egress proxy, stale sweeper, detached commands'
# keepers, the cleaner a `run` leaves); any of them left after a test is a leak.
sbx_comms=(sbx-supervisor sbx-init sbx-reaper sbx-spare sbx-helper sbx-proxy sbx-sweep sbx-files sbx-keeper
        sbx-teardown)

# The user the unprivileged suites run as, and a second one for the "other user" checks.
test_user=sbxtest
other_user=sbxtest2

fail() {
        printf '%s\n' "$@" >&2
        return 1
}

# setup_sbx: a private runtime dir and config for this test, a clean SBX_* environment, and
# a note of the sbx processes that exist already (they are not this test's leaks).
setup_sbx() {
        [ -n "${SBX:-}" ] && [ -x "$SBX" ] ||
                fail "SBX must name the built sbx binary (run the suites with meson test)"
        if [ -e /etc/sbx/sandbox.ini ]; then
                fail "/etc/sbx/sandbox.ini exists on this host: it would change what the" \
                        "suites observe. Move it away to run the tests."
        fi
        local v
        for v in $(compgen -e); do
                case $v in
                SBX_SRC | SBX_BUILD | SBX_PROBE | SBX_NO_CLONE3 | SBX_RACE_INJECT) export -n "$v" ;;
                SBX_*) unset "$v" ;;
                esac
        done
        unset XDG_CONFIG_HOME XDG_RUNTIME_DIR
        export SBX_RUNTIME_DIR=$BATS_TEST_TMPDIR/rt
        export HOME=$BATS_TEST_TMPDIR/home
        mkdir -p "$HOME"
        sbx_runtime_dirs=("$SBX_RUNTIME_DIR")
        sbx_procs_before=$(sbx_procs)
        sbx_cleanup_files=()
        sbx_cleanup_dirs=()
        sbx_cleanup_mounts=()
}

# sbx_procs: "pid comm" of every live process that carries one of the sbx comm names.
# Zombies are left out: they hold nothing but a pid, and reaping them is their parent's
# business (a zombie whose parent is an sbx process is found through that parent).
sbx_procs() {
        ps -e -o pid=,stat=,comm= | awk -v names="${sbx_comms[*]}" '
                BEGIN { split(names, a, " "); for (i in a) want[a[i]] = 1 }
                $2 !~ /^Z/ && ($3 in want) { print $1, $3 }'
}

# _sbx_ours PID: does the process belong to this test? sbx processes are forks of the sbx
# command that started them and keep its environment block (/proc/PID/environ), and every
# sbx call of the suite has SBX_RUNTIME_DIR set to a runtime dir of the test. So a process
# whose environment can be read and does not name one of them belongs to someone else (a
# developer's sbx running while the suite runs); one whose environment cannot be read is
# counted as ours.
# The session's own processes (init, reapers, helpers) replace their environment block with
# one SBX_PROCESS=<name> entry (the caller's must not be visible inside): for those the nearest
# ancestor with an environment decides (the supervisor, or the sbx client of an exec); one
# whose ancestors are gone is counted as ours.
# _sbx_orphan_ours PID: an sbx process whose parent is init (a detached command's keeper: it
# has no caller's environment to tell whose it is) is ours when it holds a file of one of our
# runtime dirs, not ours when it holds one of another session's (another test running at the
# same time), and ours when it holds none (nothing tells it is somebody else's).
_sbx_orphan_ours() {
        local f d other=false
        for f in "/proc/$1"/fd/*; do
                f=$(readlink "$f" 2>/dev/null) || continue
                for d in "${sbx_runtime_dirs[@]}"; do
                        [[ $f == "$d"/* ]] && return 0
                done
                [[ $f == */sb_[0-9a-f]*/* ]] && other=true
        done
        ! $other
}

_sbx_ours() {
        local env rt d pid=$1 hops=0 top
        [ -d "/proc/$pid" ] || return 1 # gone meanwhile
        while :; do
                env=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ") || return 0
                [ -z "$env" ] && return 0
                [[ $env =~ ^SBX_PROCESS=sbx-[a-z]+$ ]] || break
                top=$pid
                pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || return 0
                hops=$((hops + 1))
                [ -n "$pid" ] && [ "$hops" -lt 16 ] || return 0
                [ "$pid" -gt 1 ] || { _sbx_orphan_ours "$top"; return; }
        done
        rt=$(sed -n 's/^SBX_RUNTIME_DIR=//p' <<<"$env" | head -n 1)
        for d in "${sbx_runtime_dirs[@]}"; do
                [ "$rt" = "$d" ] && return 0
        done
        return 1
}

# sbx_new_procs: the sbx processes of this test that did not exist at setup.
sbx_new_procs() {
        local line
        while read -r line; do
                [ -n "$line" ] || continue
                grep -qxF -- "$line" <<<"$sbx_procs_before" && continue
                _sbx_ours "${line%% *}" && echo "$line"
        done < <(sbx_procs)
}

# sbx_leaked_procs: the new sbx processes of this test that stay: seen alive in two scans a
# second apart (a process on its way out, ours or anybody's, is gone or a zombie by then).
sbx_leaked_procs() {
        local first
        first=$(sbx_new_procs)
        [ -n "$first" ] || return 0
        sleep 1
        sbx_new_procs | grep -xF -f <(printf '%s\n' "$first") || true
}

# no_leaked_procs: wait up to 5 s for this test's sbx processes to end; true if none stay.
no_leaked_procs() {
        wait_until 5 _sbx_no_new_procs || true
        [ -z "$(sbx_leaked_procs)" ]
}

# _expect CODE CMD...: run CMD with a timeout; sets status, output (stdout, trailing
# newlines removed as by $(...)), stderr, lines; fails with everything printed when the exit
# status is not CODE. The caller's stdin is passed on. Output goes through files, not a
# pipe, so a process that CMD leaves behind holding its stdout cannot hang the test.
_expect() {
        local want=$1 outf errf t0 rc=0
        shift
        outf=$(mktemp "$BATS_TEST_TMPDIR/stdout.XXXXXX")
        errf=$(mktemp "$BATS_TEST_TMPDIR/stderr.XXXXXX")
        t0=$SECONDS
        timeout -k 5 "$sbx_call_timeout" "$@" >"$outf" 2>"$errf" || rc=$?
        status=$rc
        output=$(cat "$outf")
        stderr=$(cat "$errf")
        rm -f "$outf" "$errf"
        lines=()
        [ -z "$output" ] || mapfile -t lines <<<"$output"
        if [ "$want" != any ] && [ "$status" -ne "$want" ]; then
                {
                        printf 'command: '
                        printf '%q ' "$@"
                        echo
                        echo "exit status: $status, expected: $want"
                        if [ $((SECONDS - t0)) -ge "$sbx_call_timeout" ]; then
                                echo "(killed by the helper's ${sbx_call_timeout}s timeout)"
                        fi
                        echo "--- stdout ---"
                        printf '%s\n' "$output"
                        echo "--- stderr ---"
                        printf '%s\n' "$stderr"
                        echo "---"
                } >&2
                return 1
        fi
}

# _try CMD...: like _expect, without asserting the exit status (for cases where sbx(1)
# fixes only "fails", not the code).
_try() {
        _expect any "$@"
}

# sbx_try ARGS...: "$SBX" ARGS... with the helper's timeout; status, output, stderr set.
sbx_try() {
        _try "$SBX" "$@"
}

# sbx_expect CODE ARGS...: run "$SBX" ARGS... and assert its exit status.
sbx_expect() {
        local want=$1
        shift
        _expect "$want" "$SBX" "$@"
}

# sbx_raw CODE ARGS...: "$SBX" ARGS... with its exit status asserted; its exact stdout bytes are
# left in the file $raw ($output stays empty), stderr in $stderr. The caller sets raw_n=0 in
# its setup (the files are numbered).
sbx_raw() {
        local want=$1
        shift
        raw=$BATS_TEST_TMPDIR/raw.$((++raw_n))
        _expect "$want" sh -c 'f=$1; shift; exec "$@" >"$f"' sh "$raw" "$SBX" "$@"
}

# sbx_ok ARGS...: sbx_expect 0 ARGS...
sbx_ok() {
        sbx_expect 0 "$@"
}

# is_id STRING: a session id as sbx(1) defines it.
is_id() {
        [[ $1 =~ ^sb_[a-z0-9]{16}$ ]]
}

# state_key KEY: the value of KEY in session $sid's state ("" when absent).
state_key() {
        sed -n "s/^$1=//p" "$SBX_RUNTIME_DIR/$sid/state"
}

# new_session [CREATE-OPTIONS...]: create a session; its id is left in $sid.
new_session() {
        sbx_ok create "$@" || return 1
        is_id "$output" || fail "create printed '$output', not a session id"
        sid=$output
}

# in_sbx SCRIPT [ARGS...]: run a sh script in session $sid and expect exit 0.
in_sbx() {
        local script=$1
        shift
        sbx_ok exec "$sid" sh -c "$script" sh "$@"
}

# json FILTER: apply a jq filter to $output (fails if $output is not one JSON document).
json() {
        jq -e -r "$1" <<<"$output"
}

# busybox_root DIR TOOL...: DIR/bin with the static busybox and a link to it for each TOOL:
# the start of a minimal root for the image, --rootfs and commit tests (they add the rest).
busybox_root() {
        local d=$1 t
        shift
        mkdir -p "$d/bin"
        cp /bin/busybox "$d/bin/busybox"
        for t in "$@"; do
                ln -s busybox "$d/bin/$t"
        done
}

# store_snapshot: what the image store $store holds (tags, images, layers) and what is left
# in its tmp/, to compare before and after a failed operation.
store_snapshot() {
        (cd "$store" && find tags images layers -mindepth 1 -maxdepth 1 2>/dev/null | sort)
        find "$store/tmp" -mindepth 1 2>/dev/null
}

# free_port: a TCP port on 127.0.0.1 that was free a moment ago (for a test's own servers).
free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# json_doc: $output is exactly one JSON document.
json_doc() {
        jq -e -s 'length == 1' <<<"$output" >/dev/null ||
                fail "not exactly one JSON document on stdout:" "$output"
}

# wait_until SECONDS CMD...: poll CMD every 0.1s until it succeeds or SECONDS pass.
wait_until() {
        local deadline=$((SECONDS + $1))
        shift
        until "$@"; do
                [ "$SECONDS" -lt "$deadline" ] || return 1
                sleep 0.1
        done
}

# canary PATH: create a host file that must never be visible inside a sandbox; removed in
# teardown.
canary() {
        mkdir -p "$(dirname "$1")"
        echo "sbx canary $BATS_TEST_NAME" >"$1"
        sbx_cleanup_files+=("$1")
}

# public_dir: a new directory every user can traverse (0755, in /tmp), for volumes and
# homes a session must reach (the test's own tmpdir is under a 0700 directory); its path is
# left in $pubdir, and it is removed in teardown.
public_dir() {
        pubdir=$(mktemp -d /tmp/sbx-test.XXXXXX)
        chmod 0755 "$pubdir"
        sbx_cleanup_dirs+=("$pubdir")
}

# teardown_sbx: destroy what the test left, then fail if anything of a session remains: a
# session dir or name link in a runtime dir, an sbx process that was not there at setup, an
# fd open into a runtime dir, a mount under the test's tmpdir.
teardown_sbx() {
        local problems=() d id ids line f
        for d in "${sbx_runtime_dirs[@]}"; do
                [ -d "$d" ] || continue
                ids=$(_sbx_listed_ids "$d")
                for id in $ids; do
                        _sbx_destroy_in "$d" "$id" ||
                                problems+=("could not destroy session $id left in $d")
                done
        done
        for f in "${sbx_cleanup_files[@]}"; do
                rm -f "$f"
        done
        for f in "${sbx_cleanup_mounts[@]}"; do
                umount -l "$f" 2>/dev/null || true
        done
        for f in "${sbx_cleanup_dirs[@]}"; do
                rm -rf "$f"
        done
        # The processes of a destroyed session are gone when destroy returns, but the
        # per-exec reapers of finished execs may still be on their way out: allow 5s.
        wait_until 5 _sbx_no_new_procs || true
        line=$(sbx_leaked_procs)
        if [ -n "$line" ]; then
                problems+=("sbx processes left behind: $(tr '\n' ';' <<<"$line")")
                local pid
                while read -r pid _; do
                        _sbx_describe "$pid" >&2
                        kill -9 "$pid" 2>/dev/null || true
                done <<<"$line"
        fi
        for d in "${sbx_runtime_dirs[@]}"; do
                [ -d "$d" ] || continue
                for f in "$d"/sb_*; do
                        [ -e "$f" ] || [ -L "$f" ] || continue
                        problems+=("runtime dir entry left behind: $f")
                done
                if [ -d "$d/names" ]; then
                        for f in "$d/names"/* "$d/names"/.[!.]*; do
                                [ -e "$f" ] || [ -L "$f" ] || continue
                                problems+=("name link left behind: $f")
                        done
                fi
                line=$(_sbx_fds_into "$d")
                [ -z "$line" ] || problems+=("open fds into $d: $line")
        done
        line=$(awk -v t="$BATS_TEST_TMPDIR" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo)
        [ -z "$line" ] || problems+=("mounts left under $BATS_TEST_TMPDIR: $line")
        if [ ${#problems[@]} -gt 0 ]; then
                printf 'LEAK: %s\n' "${problems[@]}" >&2
                return 1
        fi
}

# _sbx_describe PID: what a leaked process is doing (for the failure message).
_sbx_describe() {
        local st
        st=$(ps -o pid=,ppid=,stat=,etime=,wchan:20=,comm=,args= -p "$1" 2>/dev/null) || return 0
        echo "leaked: $st"
        echo "  $(tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep '^SBX_RUNTIME_DIR=' | head -n 1)"
        sed 's/^/  stack: /' "/proc/$1/stack" 2>/dev/null | head -n 8
}

_sbx_no_new_procs() {
        [ -z "$(sbx_new_procs)" ]
}

# The session ids known in runtime dir $1: what `sbx list --json` reports (any object with
# an "id" that looks like one) plus the session directories, in case list is broken.
_sbx_listed_ids() {
        local d=$1 json
        local tmp
        tmp=$(mktemp "$BATS_TEST_TMPDIR/list.XXXXXX")
        _sbx_as_owner "$d" timeout 30 "$(_sbx_bin_for "$d")" list --json >"$tmp" 2>/dev/null || true
        json=$(cat "$tmp")
        rm -f "$tmp"
        {
                jq -r '.. | objects | .id? // empty | strings' <<<"$json" 2>/dev/null || true
                for f in "$d"/sb_*; do
                        [ -d "$f" ] && echo "${f##*/}"
                done
        } | grep -E '^sb_[a-z0-9]{16}$' | sort -u
}

_sbx_destroy_in() {
        local d=$1 id=$2 rc=0
        _sbx_as_owner "$d" timeout 30 "$(_sbx_bin_for "$d")" destroy --force "$id" \
                >/dev/null 2>&1 || rc=$?
        # 3: already gone (it may have ended between list and destroy)
        [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]
}

# The fds (and cwds) of any process that point into directory $1, as "/proc/PID/fd/N -> path".
_sbx_fds_into() {
        find /proc/[0-9]*/fd /proc/[0-9]*/cwd -maxdepth 1 \( -lname "$1" -o -lname "$1/*" \) \
                -printf '%p -> %l; ' 2>/dev/null || true
}

# ---- the unprivileged user ------------------------------------------------------------
#
# as_user CMD...       run CMD as $test_user with a clean environment, its own HOME and
#                      runtime dir (both under a 0755 dir in /tmp it can reach)
# as_other CMD...      the same as $other_user
# user_sbx_expect CODE ARGS...   "$user_sbx" ARGS... as $test_user, exit status asserted
# $user_sbx            a copy of $SBX that the users can execute (the checkout and the build
#                      dir may be under /root)
#
# Call setup_users in setup_file (creates the users once, copies the binary) and
# teardown_users in teardown_file; setup_sbx_user in setup after setup_sbx.

ensure_user() {
        id -u "$1" >/dev/null 2>&1 && return 0
        useradd -m -s /bin/sh "$1" 2>/dev/null || id -u "$1" >/dev/null 2>&1 ||
                fail "cannot create the test user $1"
}

setup_users() {
        [ "$(id -u)" -eq 0 ] || fail "the unprivileged suite must be started as root"
        ensure_user "$test_user" && ensure_user "$other_user" || return 1
        users_base=$(mktemp -d /tmp/sbx-users.XXXXXX)
        chmod 0755 "$users_base"
        mkdir -m 0755 "$users_base/bin"
        cp "$SBX" "$users_base/bin/sbx"
        chmod 0755 "$users_base/bin/sbx"
        export users_base
}

teardown_users() {
        [ -n "${users_base:-}" ] && [ -d "$users_base" ] && rm -rf "$users_base"
        return 0
}

# setup_sbx_user: per-test HOME and runtime dir for both users (the runtime dirs are made
# by sbx itself, inside a 0700 dir each user owns).
setup_sbx_user() {
        [ -n "${users_base:-}" ] || fail "setup_users was not called in setup_file"
        user_sbx=$users_base/bin/sbx
        local u
        for u in "$test_user" "$other_user"; do
                mkdir -p "$users_base/$u/$BATS_TEST_NUMBER/home"
                chown -R "$u:" "$users_base/$u"
                chmod 0700 "$users_base/$u"
                sbx_runtime_dirs+=("$users_base/$u/$BATS_TEST_NUMBER/rt")
        done
        sbx_procs_before=$(sbx_procs)
}

# Unprivileged users get no cgroup delegation on hosts like CI's (hybrid v1): their sessions
# ask for no limits (the default limits would make create exit 4 there, which
# 070-unprivileged.bats tests on its own).
user_no_limits=(SBX_MEMORY=unlimited SBX_CPUS=unlimited SBX_PIDS=unlimited)

# _as USER CMD...: CMD as USER with a clean environment and that user's per-test dirs.
_as() {
        local u=$1
        shift
        runuser -u "$u" -- env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "${user_no_limits[@]}" \
                HOME="$users_base/$u/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$users_base/$u/$BATS_TEST_NUMBER/rt" "$@"
}

as_user() { _as "$test_user" "$@"; }
as_other() { _as "$other_user" "$@"; }

# The runtime dir of a user in the current test.
user_rt() { echo "$users_base/$1/$BATS_TEST_NUMBER/rt"; }

user_sbx_expect() {
        local want=$1
        shift
        _expect "$want" runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin "${user_no_limits[@]}" \
                LANG=C.UTF-8 HOME="$users_base/$test_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$test_user")" "$user_sbx" "$@"
}

other_sbx_expect() {
        local want=$1
        shift
        _expect "$want" runuser -u "$other_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin "${user_no_limits[@]}" \
                LANG=C.UTF-8 HOME="$users_base/$other_user/$BATS_TEST_NUMBER/home" \
                SBX_RUNTIME_DIR="$(user_rt "$other_user")" "$user_sbx" "$@"
}

# The binary and the user to run it as for runtime dir $1 (teardown of user sessions).
_sbx_bin_for() {
        case $1 in
        "${users_base:-/nonexistent}"/*) echo "$user_sbx" ;;
        *) echo "$SBX" ;;
        esac
}

_sbx_as_owner() {
        local d=$1
        shift
        case $d in
        "${users_base:-/nonexistent}/$test_user"/*) _as "$test_user" "$@" ;;
        "${users_base:-/nonexistent}/$other_user"/*) _as "$other_user" "$@" ;;
        *) "$@" ;;
        esac
}

# ---- terminals ------------------------------------------------------------------------
#
# pty_expect CODE [-i INPUT] CMD...: run CMD with a new pseudo-terminal as its controlling
# terminal and stdio (as at a user's terminal), write INPUT to the terminal, and assert CMD's
# exit status like _expect; $output is everything the terminal showed. Like script(1),
# without its handling of our stdin.
pty_py='
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
data = os.environ.get("PTY_INPUT", "").encode()
if data:
    os.write(fd, data)
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:  # EIO: every slave fd is closed
        break
    if not chunk:
        break
    out += chunk
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st))
'

pty_expect() {
        local want=$1 input=
        shift
        if [ "${1:-}" = -i ]; then
                input=$2
                shift 2
        fi
        _expect "$want" env PTY_INPUT="$input" python3 -c "$pty_py" "$@"
}

# client SCENARIO: run tests/mcp/client.mjs with the official MCP SDK (510, 515).
# Without the SDK the case is skipped on a developer's machine, and fails in CI (CI=true),
# where scripts/bootstrap must have installed it.
client() {
        local why=
        command -v node >/dev/null || why="node is not installed (scripts/bootstrap installs it)"
        [ -n "$why" ] || [ -d "$SBX_SRC/tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
                why="the MCP SDK is not installed: run scripts/bootstrap (npm ci in tests/mcp)"
        if [ -n "$why" ]; then
                [ -z "${CI:-}" ] || fail "$why"
                skip "$why"
        fi
        sbx_call_timeout=90 _expect 0 env SBX="$SBX" node "$SBX_SRC/tests/mcp/client.mjs" "$1"
        printf '# %s\n' "${lines[@]}" >&3
}
