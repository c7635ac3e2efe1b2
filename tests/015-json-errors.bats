#!/usr/bin/env bats
# Bad input (man sbx, JSON and EXIT STATUS): --json always gives exactly one JSON document,
# whatever fails and wherever the option stands; invalid ids create nothing; sbx's own
# runtime directory and image store are never mounted into a session; a config file with a
# NUL byte is refused naming its line; commands other than exec and run never exit 125.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# one_doc CODE: $output is exactly one JSON document, an error with machine code CODE.
one_error() {
        json_doc || return 1
        [ "$(jq -r '.error.code' <<<"$output")" = "$1" ] ||
                fail "error code is not '$1':" "$output"
}

# rt_listing: what the runtime dir holds ("absent" when it does not exist).
rt_listing() {
        if [ -e "$SBX_RUNTIME_DIR" ]; then
                find "$SBX_RUNTIME_DIR" | sort
        else
                echo absent
        fi
}

@test "--json: one document for an unknown command and an unknown global option" {
        sbx_expect 2 bogus --json
        one_error usage
        sbx_expect 2 --json bogus
        one_error usage
        sbx_expect 2 --bogus --json
        one_error usage
        sbx_expect 2 bogus x -- --json
        [ -z "$output" ] # after "--" it is not an option
}

@test "--json: one document for --version and help" {
        sbx_ok --version --json
        json_doc
        jq -e '.version | type == "string"' <<<"$output"
        sbx_ok --json --version
        jq -e '.features.seccomp.enabled == true' <<<"$output"
        sbx_ok help --json
        json_doc
        jq -e '[.commands[].name] | index("exec") != null' <<<"$output"
        sbx_ok --help --json
        json_doc
        sbx_ok --json
        json_doc
        sbx_ok help exec --json
        json_doc
        jq -e '.name == "exec" and (.flags | index("--timeout") != null)' <<<"$output"
        sbx_ok ls --help --json
        jq -e '.usage == "sbx ls ID [PATH]"' <<<"$output"
        sbx_ok check --help --json
        jq -e '.name == "check"' <<<"$output"
        sbx_expect 2 help bogus --json
        one_error usage
}

@test "--json after a bad flag or after an operand is still honoured" {
        sbx_expect 2 list --bogus --json
        one_error usage
        sbx_expect 2 create --bogus --json
        one_error usage
        sbx_expect 2 exec --bogus --json sb_0123456789abcdef true
        one_error usage
        sbx_expect 2 run --bogus --json -- true
        one_error usage
        sbx_expect 2 log --bogus x --json
        one_error usage
        new_session
        sbx_ok destroy --force "$sid" --json
        json_doc
        jq -e --arg id "$sid" '.destroyed == [$id]' <<<"$output"
        sbx_expect 3 connect "$sid" --json
        one_error session_not_found
        # a command's own arguments after its ID are its own
        new_session
        sbx_ok exec "$sid" echo --json
        [ "$output" = --json ]
}

@test "destroy: an invalid id is an error also with --force; several ids get one result each" {
        # one ID: the plain error document of every command
        sbx_expect 3 destroy --force --json 'bad id'
        one_error session_not_found
        jq -e 'keys == ["error"]' <<<"$output"
        sbx_expect 3 destroy --force --json sb_0123456789abcdef 'bad id'
        json_doc
        jq -e '.destroyed == ["sb_0123456789abcdef"] and .results[1] == {"id":"bad id",
                "destroyed":false,"error":.error}' <<<"$output"
        new_session
        local gone=sb_0123456789abcdef
        sbx_expect 3 destroy --json "$sid" "$gone" 'bad/id'
        json_doc
        jq -e --arg a "$sid" --arg b "$gone" '
                .destroyed == [$a] and (.results | length) == 3 and
                .results[0] == {"id":$a,"destroyed":true} and
                .results[1].destroyed == false and .results[1].error.code == "session_not_found" and
                .results[2].destroyed == false and .results[2].id == "bad/id" and
                .error.code == "session_not_found"' <<<"$output"
        # each failure is a line on stderr
        [ "$(grep -c '^sbx: no such session' <<<"$stderr")" -eq 2 ] || fail "$stderr"
        sbx_expect 3 exec "$sid" true # really destroyed
        # --force forgives absence only
        sbx_ok destroy --force --json "$gone"
        jq -e --arg b "$gone" '.destroyed == [$b] and (has("error") | not)' <<<"$output"
}

@test "invalid ids and names create nothing in the runtime directory" {
        [ "$(rt_listing)" = absent ]
        local bad
        for bad in 'bad id' '../x' 'Sb_X' "$(printf 'sb_\033[2J')" '' '-'; do
                sbx_expect 3 exec -- "$bad" true
                sbx_expect 3 ls -- "$bad"
                sbx_expect 3 read -- "$bad" /etc/hostname
                sbx_expect 3 connect -- "$bad"
                sbx_expect 3 log -- "$bad"
                sbx_expect 3 destroy -- "$bad"
                sbx_expect 3 pause -- "$bad"
                sbx_expect 3 resume -- "$bad"
                sbx_expect 3 stats -- "$bad"
                sbx_expect 3 diff -- "$bad"
                sbx_expect 3 net -- "$bad" show
                sbx_expect 3 destroy --force --json -- "$bad"
                one_error session_not_found
        done
        sbx_expect 2 create --name 'Bad Name'
        sbx_expect 2 run --name ../x -- true
        [ "$(rt_listing)" = absent ] || fail "made: $(rt_listing)"
        # positive control: a valid id does open (and so make) the runtime dir
        sbx_expect 3 ls sb_0123456789abcdef
        [ "$(rt_listing)" != absent ]
}

@test "a runtime directory that is a symlink, a file or cannot be made: exit 4, one line, nothing made" {
        local real=$BATS_TEST_TMPDIR/real
        mkdir -m 0700 "$real"
        ln -s "$real" "$BATS_TEST_TMPDIR/link"
        : >"$BATS_TEST_TMPDIR/file"
        SBX_RUNTIME_DIR=$BATS_TEST_TMPDIR/link sbx_expect 4 exec sb_0123456789abcdef true
        [[ $stderr == *"it must be a directory, not a symlink"* ]] || fail "$stderr"
        SBX_RUNTIME_DIR=$BATS_TEST_TMPDIR/file sbx_expect 4 ls sb_0123456789abcdef
        [[ $stderr == *"it must be a directory"* ]] || fail "$stderr"
        SBX_RUNTIME_DIR=$BATS_TEST_TMPDIR/none/rt sbx_expect 4 exec sb_0123456789abcdef true
        [[ $stderr == *"failed to create runtime directory"*"set SBX_RUNTIME_DIR"* ]] ||
                fail "$stderr"
        [ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "not one line: $stderr"
        [ ! -e "$BATS_TEST_TMPDIR/none" ] && [ -z "$(ls -A "$real")" ] || fail "made something"
        # positive control: the directory itself is used (and so gets names/)
        SBX_RUNTIME_DIR=$real sbx_expect 3 exec sb_0123456789abcdef true
        [ -d "$real/names" ] || fail "the real runtime dir was not used"
}

@test "--mount of the runtime directory, above or inside it, or of the image store: exit 2, nothing made" {
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        mkdir -m 0700 "$SBX_RUNTIME_DIR" "$SBX_IMAGE_STORE" "$SBX_RUNTIME_DIR/inside"
        ln -s "$SBX_RUNTIME_DIR" "$BATS_TEST_TMPDIR/alias"
        local before m
        before=$(rt_listing)
        for m in "$SBX_RUNTIME_DIR" "$(dirname "$SBX_RUNTIME_DIR")" "$SBX_RUNTIME_DIR/inside" \
                "$BATS_TEST_TMPDIR/alias" "$SBX_RUNTIME_DIR/inside/../" "$SBX_IMAGE_STORE" /; do
                sbx_expect 2 create --mount "$m:/data"
                [[ $stderr == *"invalid --mount"* ]] || fail "$stderr"
                sbx_expect 2 create --json --mount "$m:/data:ro"
                one_error usage
                sbx_expect 2 run --mount "$m:/data" -- true
                SBX_VOLUME_MOUNTS="$m:/data" sbx_expect 2 create
        done
        [[ $stderr == *"runtime directory"* ]] || fail "$stderr"
        sbx_expect 2 create --mount "$SBX_IMAGE_STORE:/data"
        [[ $stderr == *"image store"* ]] || fail "$stderr"
        [ "$(rt_listing)" = "$before" ] || fail "made: $(rt_listing)"
        # positive control: a directory beside them mounts, and the session sees it
        public_dir
        echo visible >"$pubdir/f"
        chmod 0644 "$pubdir/f"
        new_session --mount "$pubdir:/data:ro"
        sbx_ok exec "$sid" cat /data/f
        [ "$output" = visible ]
}

@test "a config file with a NUL byte is a usage error naming the file and line" {
        local ini=$BATS_TEST_TMPDIR/nul.ini
        printf '[sandbox]\nttl = 5m\n[limits]\nmemory = 1G\0 ; and the rest\n' >"$ini"
        sbx_expect 2 create --config "$ini"
        [[ $stderr == *"line 4 of $ini contains a NUL byte"* ]] || fail "$stderr"
        sbx_expect 2 list --json --config "$ini"
        one_error usage
        jq -e --arg f "$ini" '.error.message | contains("line 4 of " + $f)' <<<"$output"
        # positive control: the same file without the NUL is accepted
        printf '[sandbox]\nttl = 5m\n[limits]\nmemory = 1G\n' >"$ini"
        sbx_ok list --config "$ini"
        [ "$(rt_listing)" != absent ] # list made the runtime dir; create made no session
        [ -z "$(find "$SBX_RUNTIME_DIR" -mindepth 1 -maxdepth 1 -name 'sb_*')" ]
}

@test "exec of one word with spaces: the error says there is no shell and suggests sh -c" {
        new_session
        sbx_expect 127 exec "$sid" "pip install x"
        [ "$(grep -c . <<<"$stderr")" -eq 1 ] || fail "$stderr"
        [[ $stderr == *"no shell"* && $stderr == *"sh -c"* ]] || fail "$stderr"
        sbx_expect 127 exec --json "$sid" "pip install x"
        jq -e '.exit_code == 127 and (.error.message | contains("sh -c"))' <<<"$output"
        # a missing command without spaces keeps the plain message
        sbx_expect 127 exec "$sid" no-such-command-here
        [[ $stderr != *"sh -c"* ]] || fail "$stderr"
}

@test "commands other than exec and run never exit 125" {
        # a relative image store is a bad setting, not 'Cannot allocate memory'
        SBX_IMAGE_STORE=relative/store sbx_expect 2 create --image x:1
        [[ $stderr == *"SBX_IMAGE_STORE must be an absolute path"* ]] || fail "$stderr"
        SBX_IMAGE_STORE=relative/store sbx_expect 2 image list --json
        one_error usage
        # an output that cannot be written: 1 with the cause, not 125
        _expect 1 sh -c '"$1" list --json >/dev/full' sh "$SBX"
        [[ $stderr == *"failed to write the output"* ]] || fail "$stderr"
        # positive control: the same to a writable output succeeds
        _expect 0 sh -c '"$1" list --json >/dev/null' sh "$SBX"
}

@test "error messages are one line with user input escaped" {
        sbx_expect 2 create --name "$(printf 'a\nb\033[2J')"
        [ "$(grep -c . <<<"$stderr")" -le 2 ] || fail "$stderr" # the message and 'Try ...'
        [[ $stderr == *'a\nb\x1b[2J'* ]] || fail "$stderr"
        ! LC_ALL=C grep -qaP '\x1b' <<<"$stderr"
        sbx_expect 2 create --json --name "$(printf 'a\033b')"
        jq -e '.error.message | contains("a\u001bb")' <<<"$output" # JSON stays exact
}

@test "--json exec and run: a result that cannot be written is an error (125), not a silent 0" {
        new_session
        sbx_expect 0 --json exec "$sid" echo hi
        _expect 125 sh -c '"$@" >/dev/full' sh "$SBX" --json exec "$sid" echo hi
        [[ $stderr == *"failed to write the output"* ]] || fail "$stderr"
        _expect 125 sh -c '"$@" >/dev/full' sh "$SBX" --json run -- echo hi
        # a usage error of run points at run's help, not exec's
        sbx_expect 2 run --ttl x true
        [[ $stderr == *"Try 'sbx run --help'."* ]] || fail "$stderr"
}
