#!/usr/bin/env bats
# Output safety (man sbx, OUTPUT SAFETY): names and contents made inside a session must not
# reach the caller's terminal raw. A session makes files whose names and contents carry
# terminal escape sequences (window title, OSC 52 clipboard write, clear screen, CSI as a C1
# byte), a CR, a newline that would forge a second listing line, and invalid UTF-8. The text
# output of ls, glob, grep and read must carry none of those bytes in names (always) and in
# content (when stdout is a terminal), in the documented reversible form; --json stays exact.
# Each check has its positive control: the raw bytes really are in the session (exec, --json).
#
# Also the "silent results" of a search: grep cut short by the walk's depth bound, the
# result cap or a line longer than it searches says so and does not exit 1 ("no match");
# read --json says when lines were left out.

load helpers
setup() {
        setup_sbx
        raw_n=0
        new_session
}
teardown() { teardown_sbx; }

# sbx_tty CODE ARGS...: "$SBX" ARGS... with stdout on a terminal (script(1) makes one); the
# bytes the terminal received are left in $raw (its CR LF line ends made LF).
sbx_tty() {
        local want=$1 cmd
        shift
        raw=$BATS_TEST_TMPDIR/raw.$((++raw_n))
        cmd=$(printf '%q ' "$SBX" "$@")
        # the exit status of the command is script's own (-e)
        _expect "$want" script -qefc "$cmd; exit \$?" /dev/null
        printf '%s' "$output" | sed 's/\r$//' >"$raw"
}

# The bytes no terminal may receive from a session: C0 controls but LF (and TAB where
# allowed), DEL, C1 controls (UTF-8 C2 80-9F), and invalid UTF-8.
no_control() { # FILE [tab-ok]
        local f=$1 class='[\x00-\x08\x09\x0b-\x1f\x7f]'
        [ "${2:-}" = tab-ok ] && class='[\x00-\x08\x0b-\x1f\x7f]'
        if LC_ALL=C grep -naP "$class|\xc2[\x80-\x9f]" "$f" >&2; then
                fail "a control byte reached the output:" "$(od -An -c "$f" | head -n 20)"
        fi
        iconv -f UTF-8 -t UTF-8 "$f" >/dev/null ||
                fail "invalid UTF-8 reached the output:" "$(od -An -c "$f" | head -n 20)"
}

# has_raw FILE BYTES: FILE contains BYTES (printf format) as they are.
has_raw() {
        local pat
        pat=$(printf "$2")
        LC_ALL=C grep -qaF -- "$pat" "$1" || fail "'$2' not found raw in:" "$(od -An -c "$1" | head)"
}

# The hostile names, made inside the session in /workspace/h, each holding a hostile line.
make_hostile() {
        in_sbx '
                mkdir -p /workspace/h && cd /workspace/h
                line=$(printf "needle \033]52;c;cHduZWQ=\007 \033[2J \033]0;title\007 \r end")
                for n in "$(printf "title\033]0;pwned\007")" "$(printf "clip\033]52;c;cHduZWQ=\007")" \
                         "$(printf "clear\033[2J")" "$(printf "cr\rfake")" \
                         "$(printf "nl\n- 0 2020-01-01T00:00:00Z forged")" \
                         "$(printf "bad\377utf8")" "$(printf "c1\302\2332J")" \
                         "$(printf "tab\tname")" "$(printf "back\\\\x1bslash")" plain; do
                        printf "%s\n" "$line" >"$n"
                done'
}

@test "positive control: the hostile names and contents really are in the session" {
        make_hostile
        sbx_ok exec "$sid" sh -c 'cd /workspace/h && ls | od -An -tx1'
        [[ $output == *"1b 5d 35 32"* ]] # ESC ] 5 2
        sbx_raw 0 exec "$sid" cat /workspace/h/plain
        has_raw "$raw" '\033]52;c;'
        has_raw "$raw" '\033[2J'
        # --json keeps the names exact: the ESC is there, JSON-escaped
        sbx_ok ls --json "$sid" /workspace/h
        json_doc
        jq -e '[.[].path | select(contains("\u001b]52;c;"))] | length == 1' <<<"$output"
        jq -e '[.[].path | select(contains("\n- 0 2020"))] | length == 1' <<<"$output"
        [ "$(jq length <<<"$output")" -eq 10 ]
}

@test "ls: names are escaped, one name per line, reversibly" {
        make_hostile
        sbx_raw 0 ls "$sid" /workspace/h
        no_control "$raw"
        [ "$(wc -l <"$raw")" -eq 10 ] || fail "not one line per entry:" "$(cat "$raw")"
        # no line is a forged entry: every line is TYPE SIZE MTIME NAME of a real file
        ! grep -q 'forged$' "$raw" || grep -q 'nl\\n- 0 2020-01-01T00:00:00Z forged$' "$raw"
        grep -qF 'title\x1b]0;pwned\x07' "$raw"
        grep -qF 'clip\x1b]52;c;cHduZWQ=\x07' "$raw"
        grep -qF 'cr\rfake' "$raw"
        grep -qF 'bad\xffutf8' "$raw"
        grep -qF 'c1\xc2\x9b2J' "$raw"
        grep -qF 'tab\tname' "$raw"
        grep -qF 'back\\x1bslash' "$raw" # a backslash is doubled: the form is reversible
        # a file operand is a name too
        sbx_raw 0 ls "$sid" "$(printf '/workspace/h/clear\033[2J')"
        no_control "$raw"
        grep -qF '/workspace/h/clear\x1b[2J' "$raw"
}

@test "glob and grep: paths are escaped, one path per line, in every mode" {
        make_hostile
        sbx_raw 0 glob "$sid" '*' --path /workspace/h
        no_control "$raw"
        [ "$(wc -l <"$raw")" -eq 10 ]
        grep -qxF '/workspace/h/nl\n- 0 2020-01-01T00:00:00Z forged' "$raw"
        sbx_raw 0 grep "$sid" needle /workspace/h
        no_control "$raw"
        [ "$(wc -l <"$raw")" -eq 10 ]
        grep -qxF '/workspace/h/clip\x1b]52;c;cHduZWQ=\x07' "$raw"
        sbx_raw 0 grep --mode count "$sid" needle /workspace/h
        no_control "$raw"
        grep -qxF '/workspace/h/cr\rfake:1' "$raw"
        # content mode to a pipe: the path is escaped, the line itself exact
        sbx_raw 0 grep --mode content "$sid" needle /workspace/h/plain
        has_raw "$raw" '\033]52;c;'
        grep -qF '/workspace/h/plain:1:needle' "$raw"
        sbx_raw 0 grep --mode content "$sid" needle "$(printf '/workspace/h/title\033]0;pwned\007')"
        grep -qF '/workspace/h/title\x1b]0;pwned\x07:1:needle' "$raw"
        # --json: exact names
        sbx_ok glob --json "$sid" '*' --path /workspace/h
        jq -e '[.[].path | select(. == "/workspace/h/cr\rfake")] | length == 1' <<<"$output"
        sbx_ok grep --json "$sid" needle /workspace/h
        jq -e 'map(select(. == "/workspace/h/clear\u001b[2J")) | length == 1' <<<"$output"
}

@test "read and grep content on a terminal: escaped; to a pipe: exact" {
        make_hostile
        # a pipe: the exact bytes (positive control of what the terminal would get)
        sbx_raw 0 read "$sid" /workspace/h/plain
        has_raw "$raw" '\033]52;c;cHduZWQ=\007'
        # a terminal: no control byte; the tab after the line number stays
        sbx_tty 0 read "$sid" /workspace/h/plain
        no_control "$raw" tab-ok
        grep -qF $'     1\tneedle \\x1b]52;c;cHduZWQ=\\x07 \\x1b[2J' "$raw"
        # a lone CR ends a line for read; grep keeps it inside the line, escaped
        grep -qF $'     2\t end' "$raw"
        sbx_tty 0 grep --mode content "$sid" needle /workspace/h
        no_control "$raw" tab-ok
        [ "$(grep -c . "$raw")" -eq 10 ]
        grep -qF '/workspace/h/plain:1:needle \x1b]52;c;' "$raw"
        grep -qF '\x07 \r end' "$raw"
        # names on a terminal too
        sbx_tty 0 ls "$sid" /workspace/h
        no_control "$raw"
}

@test "error messages: one line, input escaped" {
        sbx_expect 1 read "$sid" "$(printf 'no\033[2Jsuch\nfile')"
        [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "not one line: $stderr"
        [[ $stderr == *'no\x1b[2Jsuch\nfile'* ]]
        ! printf '%s' "$stderr" | LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]'
        sbx_expect 2 ls --bogus"$(printf '\033]0;x\007')" "$sid"
        [[ $stderr == *'--bogus\x1b]0;x\x07'* ]]
        ! printf '%s' "$stderr" | LC_ALL=C grep -qaP '\x1b'
        sbx_expect 3 exec "$(printf 'sb_\033[2J')" true
        ! printf '%s' "$stderr" | LC_ALL=C grep -qaP '\x1b'
        # --json keeps the message exact
        sbx_expect 1 read --json "$sid" "$(printf 'no\033such')"
        json_doc
        jq -e '.error.message | contains("no\u001bsuch")' <<<"$output"
}

@test "grep: a search cut at the depth bound says so and is not 'no match'" {
        in_sbx 'd=/workspace/deep; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); done
                mkdir -p "$d" && echo needle >"$d/hidden"'
        # positive control: the needle is there, and found from a directory nearer to it
        sbx_ok exec "$sid" find /workspace/deep -name hidden -exec cat {} +
        [[ $output == *needle* ]]
        sbx_ok exec "$sid" sh -c 'd=/workspace/deep; i=0; while [ $i -lt 100 ]; do d=$d/d; i=$((i+1)); done; echo $d'
        near=$output
        sbx_ok grep "$sid" needle "$near"
        [[ $output == *"/hidden" ]]
        # from the top the bound cuts the walk: said in the last line, exit 0, not 1
        sbx_ok grep "$sid" needle /workspace
        [ "${lines[-1]}" = "[Walk stopped at depth 256]" ]
        sbx_ok grep --mode count "$sid" needle /workspace
        [ "${lines[-1]}" = "[Walk stopped at depth 256]" ]
        sbx_ok grep --json "$sid" needle /workspace
        json_doc
        jq -e '.[-1] == {"truncated":true,"reason":"depth","message":"Walk stopped at depth 256"}' \
                <<<"$output"
        # a search that was not cut still says "no match"
        sbx_expect 1 grep "$sid" no-such-needle "$near"
}

@test "grep: a line longer than the searched limit is reported, not 'no match'" {
        # 65 MiB of one line, then the needle on the next
        in_sbx 'head -c 68157440 /dev/zero | tr "\000" a >/workspace/long && printf "\nneedle\n" >>/workspace/long'
        sbx_ok exec "$sid" tail -n 1 /workspace/long
        [ "$output" = needle ] # positive control
        sbx_ok grep "$sid" needle /workspace/long
        [ "${#lines[@]}" -eq 1 ]
        [[ ${lines[0]} == "[Search cut short: 1 file(s) have a line longer than 64 MiB, searched up to it; the first: /workspace/long]" ]]
        sbx_ok grep --json "$sid" needle /workspace
        json_doc
        jq -e '.[-1].truncated == true and .[-1].reason == "line" and
                (.[-1].message | contains("/workspace/long"))' <<<"$output"
        in_sbx 'rm /workspace/long'
}

@test "grep and glob: the result cap is reported in JSON too" {
        in_sbx 'mkdir /workspace/many && cd /workspace/many && i=0
                while [ $i -le 10000 ]; do echo needle >f$i; i=$((i+1)); done'
        sbx_ok grep --json "$sid" needle /workspace/many
        json_doc
        jq -e 'length == 10001 and .[-1].truncated == true and .[-1].reason == "results"' <<<"$output"
        sbx_ok grep "$sid" needle /workspace/many
        [ "${lines[-1]}" = "[Results truncated at 10000 entries]" ]
        sbx_ok glob --json "$sid" '*' --path /workspace/many
        jq -e 'length == 10001 and .[-1] ==
                {"truncated":true,"reason":"results","message":"Results truncated at 10000 entries"}' \
                <<<"$output"
}

@test "read --json: truncated says lines were left out" {
        in_sbx 'seq 3000 >/workspace/n'
        sbx_ok read --json "$sid" /workspace/n
        json_doc
        jq -e '.lines == 3000 and .truncated == true' <<<"$output"
        jq -e '.content | split("\n") | length == 2001' <<<"$output"
        sbx_ok read --json --offset 2000 "$sid" /workspace/n
        jq -e '.lines == 3000 and .truncated == false' <<<"$output"
        sbx_ok read --json --limit 3000 "$sid" /workspace/n
        jq -e '.truncated == false' <<<"$output"
        sbx_ok read --json --limit 2999 "$sid" /workspace/n
        jq -e '.truncated == true' <<<"$output"
}
