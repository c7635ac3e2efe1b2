#!/usr/bin/env bats
# sandbox.ini layers and SBX_* variables, observed as a user sees them: through
# `sbx create --json` (ttl_seconds) and inside the session (hostname, workdir, env).
# Precedence: flag > SBX_* > --config FILE > $SBX_CONFIG > ~/.config/sbx/sandbox.ini
# > /etc/sbx/sandbox.ini > built-in default. The /etc layer is host-global and is not written
# by the suite (setup_sbx refuses to run when it exists).
#
# sbx(1) names the variables SBX_CONFIG and SBX_VOLUME_MOUNTS; for the other keys the
# suite uses SBX_ + the ini key in upper case (SBX_TTL, SBX_HOSTNAME).

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

home_ini() {
        mkdir -p "$HOME/.config/sbx"
        cat >"$HOME/.config/sbx/sandbox.ini"
}

# ttl_is SECONDS CREATE-ARGS...: create with --json, check ttl_seconds, destroy.
ttl_is() {
        local want=$1
        shift
        sbx_ok create --json "$@"
        json_doc
        local got
        got=$(json .ttl_seconds)
        local id
        id=$(json .id)
        sbx_ok destroy "$id"
        [ "$got" = "$want" ] || fail "ttl_seconds is $got, expected $want"
}

@test "create --json: the documented shape with the built-in defaults" {
        local now
        now=$(date +%s)
        sbx_ok create --json
        json_doc
        json '(keys | sort) == (["expires_at","id","name","ttl_seconds"])' >/dev/null ||
                fail "keys differ from id,name,ttl_seconds,expires_at: $output"
        is_id "$(json .id)" || fail "bad id: $output"
        json '.name == null' >/dev/null || fail "name is not null: $output"
        json '.ttl_seconds == 1800' >/dev/null || fail "ttl_seconds is not 1800: $output"
        local exp t
        exp=$(json .expires_at)
        [[ $exp =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]] ||
                fail "expires_at '$exp' is not RFC 3339"
        t=$(date -d "$exp" +%s)
        [ $((t - now)) -ge 1795 ] && [ $((t - now)) -le 1830 ] ||
                fail "expires_at is $((t - now))s from now, expected ~1800"
}

@test "built-in defaults inside: hostname sandbox, workdir /workspace, env PATH HOME LANG" {
        new_session
        sbx_ok exec "$sid" hostname
        [ "$output" = sandbox ] || fail "hostname is '$output'"
        sbx_ok exec "$sid" pwd
        [ "$output" = /workspace ] || fail "workdir is '$output'"
        sbx_ok exec "$sid" env
        grep -qx 'HOME=/workspace' <<<"$output" || fail "HOME is not /workspace:" "$output"
        grep -qx 'LANG=C.UTF-8' <<<"$output" || fail "LANG is not C.UTF-8:" "$output"
        grep -q '^PATH=/' <<<"$output" || fail "no PATH:" "$output"
        ! grep -q '^TERM=' <<<"$output" || fail "TERM set without -T:" "$output"
}

@test "~/.config/sbx/sandbox.ini is read" {
        home_ini <<'EOF'
[sandbox]
ttl = 10m
hostname = fromhome
workdir = /tmp

[env]
FROM_HOME = yes
EOF
        ttl_is 600
        new_session
        sbx_ok exec "$sid" sh -c 'echo "$(hostname) $(pwd) $FROM_HOME"'
        [ "$output" = "fromhome /tmp yes" ] || fail "got '$output'"
}

@test "XDG_CONFIG_HOME is not where the suite's config comes from (isolation check)" {
        # The suite's isolation: setup_sbx unset it, so only $HOME/.config applies.
        [ -z "${XDG_CONFIG_HOME:-}" ]
        ttl_is 1800
}

@test "\$SBX_CONFIG overrides ~/.config/sbx/sandbox.ini" {
        home_ini <<'EOF'
[sandbox]
ttl = 10m
hostname = fromhome
EOF
        cat >"$BATS_TEST_TMPDIR/env.ini" <<'EOF'
[sandbox]
ttl = 20m
EOF
        export SBX_CONFIG=$BATS_TEST_TMPDIR/env.ini
        ttl_is 1200
        # a key the upper layer does not set still comes from the lower one
        new_session
        sbx_ok exec "$sid" hostname
        [ "$output" = fromhome ] || fail "hostname is '$output', expected fromhome"
}

@test "--config FILE overrides \$SBX_CONFIG" {
        printf '[sandbox]\nttl = 20m\n' >"$BATS_TEST_TMPDIR/env.ini"
        printf '[sandbox]\nttl = 25m\n' >"$BATS_TEST_TMPDIR/flag.ini"
        export SBX_CONFIG=$BATS_TEST_TMPDIR/env.ini
        ttl_is 1500 --config "$BATS_TEST_TMPDIR/flag.ini"
}

@test "SBX_* variables override --config FILE" {
        printf '[sandbox]\nttl = 25m\nhostname = fromfile\n' >"$BATS_TEST_TMPDIR/flag.ini"
        SBX_TTL=15m ttl_is 900 --config "$BATS_TEST_TMPDIR/flag.ini"
        export SBX_HOSTNAME=fromenv
        new_session --config "$BATS_TEST_TMPDIR/flag.ini"
        sbx_ok exec "$sid" hostname
        [ "$output" = fromenv ] || fail "hostname is '$output', expected fromenv"
}

@test "flags override SBX_* variables" {
        SBX_TTL=15m ttl_is 300 --ttl 5m
        export SBX_HOSTNAME=fromenv
        new_session --hostname fromflag
        sbx_ok exec "$sid" hostname
        [ "$output" = fromflag ] || fail "hostname is '$output', expected fromflag"
}

@test "durations: plain seconds, s, m, h; 0 means until destroyed" {
        ttl_is 90 --ttl 90
        ttl_is 45 --ttl 45s
        ttl_is 120 --ttl 2m
        ttl_is 7200 --ttl 2h
        ttl_is 0 --ttl 0
}

@test "[env] and --env: the flag wins for the same key, both reach every exec" {
        printf '[env]\nA = from-ini\nB = ini-only\n' >"$BATS_TEST_TMPDIR/c.ini"
        new_session --config "$BATS_TEST_TMPDIR/c.ini" --env A=from-flag --env 'C=with space'
        sbx_ok exec "$sid" sh -c 'echo "$A|$B|$C"'
        [ "$output" = "from-flag|ini-only|with space" ] || fail "got '$output'"
}

@test "[sandbox] timeout is the default exec timeout" {
        printf '[sandbox]\ntimeout = 1s\n' >"$BATS_TEST_TMPDIR/c.ini"
        new_session --config "$BATS_TEST_TMPDIR/c.ini"
        sbx_expect 124 exec "$sid" sleep 20
}

@test "[sandbox] mounts and SBX_VOLUME_MOUNTS: comma-separated, ~ is the caller's home" {
        # the volumes live where the session's uid can reach them (see 050 for the rest)
        public_dir
        export HOME=$pubdir/home
        mkdir -p "$HOME/vol" "$pubdir/v2" "$pubdir/v3"
        chmod -R a+rX "$pubdir"
        echo one >"$HOME/vol/f"
        echo two >"$pubdir/v2/f"
        echo three >"$pubdir/v3/f"
        chmod a+r "$HOME/vol/f" "$pubdir/v2/f" "$pubdir/v3/f"
        printf '[sandbox]\nmounts = ~/vol:/one:ro,%s:/two:ro\n' "$pubdir/v2" >"$BATS_TEST_TMPDIR/c.ini"
        new_session --config "$BATS_TEST_TMPDIR/c.ini"
        sbx_ok exec "$sid" cat /one/f /two/f
        [ "$output" = "$(printf 'one\ntwo')" ] || fail "got '$output'"
        SBX_VOLUME_MOUNTS="$pubdir/v3:/three:ro" new_session
        sbx_ok exec "$sid" cat /three/f
        [ "$output" = three ] || fail "got '$output'"
}

@test "a mount whose host path does not exist is skipped with a warning" {
        new_session --mount "$BATS_TEST_TMPDIR/does-not-exist:/data"
        [[ $stderr == *warning* ]] || fail "no warning on stderr: '$stderr'"
        [[ $stderr == *does-not-exist* ]] || fail "the warning does not name the path: '$stderr'"
        sbx_ok exec "$sid" sh -c 'test ! -e /data/x && echo fine'
}

# ---- bad configuration: exit 2, the file and key named, nothing created ----------------

bad_config() { # INI-TEXT WORD-IN-MESSAGE
        printf '%s\n' "$1" >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 create --config "$BATS_TEST_TMPDIR/bad.ini"
        [ -z "$output" ] || fail "stdout is not empty: $output"
        [[ $stderr == *bad.ini* ]] || fail "the message does not name the file: $stderr"
        [[ $stderr == *"$2"* ]] || fail "the message does not name '$2': $stderr"
}

@test "bad config: an unknown key" {
        bad_config $'[sandbox]\nfrobnicate = 1' frobnicate
}

@test "bad config: an unknown section" {
        bad_config $'[frobnicate]\nttl = 1' frobnicate
}

@test "bad config: a value that does not parse" {
        bad_config $'[sandbox]\nttl = forever' ttl
        bad_config $'[limits]\nmemory = lots' memory
        bad_config $'[network]\nmode = carrier-pigeon' mode
        bad_config $'[sandbox]\nread_only = perhaps' read_only
}

@test "bad config: a line that is not key = value" {
        printf '[sandbox]\nthis is not ini\n' >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 create --config "$BATS_TEST_TMPDIR/bad.ini"
        [[ $stderr == *bad.ini* ]] || fail "the message does not name the file: $stderr"
}

@test "bad config in ~/.config/sbx/sandbox.ini is an error too, on every command that reads it" {
        home_ini <<<$'[sandbox]\nttl = forever'
        sbx_expect 2 create
        [[ $stderr == *sandbox.ini* ]] || fail "the message does not name the file: $stderr"
        sbx_expect 2 run -- true
}

@test "a missing \$SBX_CONFIG file is an error (exit 2)" {
        export SBX_CONFIG=$BATS_TEST_TMPDIR/missing.ini
        sbx_expect 2 create
        [[ $stderr == *missing.ini* ]] || fail "the message does not name the file: $stderr"
        # for every command, as a missing --config file is
        local c
        for c in list check "image list"; do
                # shellcheck disable=SC2086
                sbx_expect 2 $c
                [[ $stderr == *missing.ini* ]] || fail "$c: $stderr"
        done
        # the control: the same commands with the file there
        echo "[sandbox]" >"$SBX_CONFIG"
        sbx_ok list
        sbx_ok image list
}

@test "a bad SBX_* value is an error (exit 2)" {
        SBX_TTL=forever sbx_expect 2 create
        [[ $stderr == *SBX_TTL* ]] || fail "the message does not name SBX_TTL: $stderr"
}

@test "bad flag values: exit 2 and nothing created" {
        sbx_expect 2 create --ttl -1
        sbx_expect 2 create --ttl 10x
        sbx_expect 2 create --memory 12Q
        sbx_expect 2 create --cpus many
        sbx_expect 2 create --pids -5
        sbx_expect 2 create --net bogus
        sbx_expect 2 create --seccomp bogus
        sbx_expect 2 create --env 'NOEQUALS'
        sbx_expect 2 create --env '=value'
        sbx_expect 2 create --mount 'relative/path:/data'
        sbx_expect 2 create --mount "$BATS_TEST_TMPDIR:relative"
        sbx_expect 2 create --workdir relative/dir
        sbx_expect 2 create --name 'Not A Name'
        sbx_expect 2 create --name '-leading-dash'
        sbx_expect 2 create --name "$(printf 'a%.0s' {1..64})"
        sbx_expect 2 create --name sb_0123456789abcdef
}

@test "bad config with --json: one error document, code usage" {
        printf '[sandbox]\nttl = forever\n' >"$BATS_TEST_TMPDIR/bad.ini"
        sbx_expect 2 create --json --config "$BATS_TEST_TMPDIR/bad.ini"
        json_doc
        json '.error.code == "usage"' >/dev/null || fail "code is not usage: $output"
}
