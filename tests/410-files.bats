#!/usr/bin/env bats
# The file commands (ls read write edit glob grep) against a live session, to the letter of
# sbx(1), "File commands": every format rule and message, paging, the caps, CRLF, text
# detection, the three grep modes, and every error path with its exit code and JSON code.
# Fixtures are made inside the session with exec; expected bytes are made on the host and
# compared byte for byte where sbx(1) fixes the format.

load helpers
setup() {
        setup_sbx
        raw_n=0
        new_session
}
teardown() { teardown_sbx; }

# put PATH: the caller's stdin becomes the file PATH in the session (exact bytes; parents made).
put() {
        sbx_ok exec -i "$sid" sh -c 'mkdir -p "$(dirname "$1")" && cat >"$1"' sh "$1"
}

# same_bytes GOT WANT: the two files are identical (shows a byte diff when not).
same_bytes() {
        cmp -s "$1" "$2" && return 0
        fail "output differs from what sbx(1) gives (< got, > want):" \
                "$(diff <(od -An -c "$1") <(od -An -c "$2") | head -n 20)"
}

# want_bytes PRINTF-ARGS...: a file with the expected bytes; its name is left in $want.
want_bytes() {
        want=$BATS_TEST_TMPDIR/want.$((++raw_n))
        # shellcheck disable=SC2059 # the format is the argument
        printf "$@" >"$want"
}

# jtrue FILTER: $output is exactly one JSON document and FILTER is true of it (jq 1.6 -e
# alone is true of an empty input).
jtrue() {
        jq -e -s "length == 1 and (.[0] | $1)" <<<"$output" >/dev/null
}

# json_error CODE: $output is exactly one JSON document {"error":{"code":CODE,"message":...}}.
json_error() {
        json_doc || return 1
        local got
        got=$(jq -r '.error.code // empty' <<<"$output")
        [ "$got" = "$1" ] || fail "JSON error code '$got', want '$1':" "$output"
        jq -e '.error.message | type == "string" and length > 0' <<<"$output" >/dev/null ||
                fail "no error message in: $output"
}

# human_names CODE PATH: the last sbx call exited CODE, printed nothing on stdout, and said
# why on stderr as "sbx: ..." naming PATH (sbx(1) fixes the code, not these messages).
human_names() {
        [ "$status" -eq "$1" ] || fail "exit $status, want $1"
        [ -z "$output" ] || fail "stdout is not empty on an error: $output"
        [[ $stderr == "sbx: "*"$2"* ]] || fail "stderr does not name '$2': $stderr"
}

# human_error CODE MESSAGE: the last sbx call exited CODE, printed nothing on stdout, and its
# stderr is the one line "sbx: MESSAGE" (plus a "Try ..." hint for usage errors).
human_error() {
        [ "$status" -eq "$1" ] || fail "exit $status, want $1"
        [ -z "$output" ] || fail "stdout is not empty on an error: $output"
        [ "$(head -n 1 <<<"$stderr")" = "sbx: $2" ] ||
                fail "stderr: '$stderr'" "want:   'sbx: $2'"
}

# sha_in PATH: the sha256 of a file in the session, in $sha.
sha_in() {
        sbx_ok exec "$sid" sha256sum "$1"
        sha=${output%% *}
}

# ---- ls -----------------------------------------------------------------------------------

@test "ls: TYPE SIZE MTIME NAME, sorted by name, hidden entries too, symlinks shown not followed" {
        in_sbx 'set -e; mkdir -p l/dir l/Zed; printf abc > l/b.txt; printf x > l/.hidden
                ln -s /etc l/a-link; mkfifo l/c-fifo
                touch -h -d "2001-02-03 04:05:06 UTC" l/dir l/Zed l/b.txt l/.hidden l/a-link l/c-fifo'
        sbx_ok exec "$sid" stat -c %s l/dir l/Zed
        local dsz=${lines[0]} zsz=${lines[1]} t=2001-02-03T04:05:06Z
        want_bytes '%s\n' "- 1 $t .hidden" "d $zsz $t Zed" "l 4 $t a-link" "- 3 $t b.txt" \
                "? 0 $t c-fifo" "d $dsz $t dir"
        sbx_raw 0 ls "$sid" l
        same_bytes "$raw" "$want"
        # an absolute PATH lists the same
        sbx_raw 0 ls "$sid" /workspace/l
        same_bytes "$raw" "$want"
}

@test "ls: the default PATH is the workdir (also --workdir DIR)" {
        in_sbx 'touch /workspace/in-workspace; mkdir -p /tmp/wd && touch /tmp/wd/in-wd'
        sbx_ok ls "$sid"
        [[ $output == *" in-workspace" ]] || fail "ls without PATH: $output"
        new_session --workdir /tmp
        in_sbx 'mkdir -p /tmp/wd && touch /tmp/wd/in-wd'
        sbx_ok ls "$sid" wd
        [[ $output == *" in-wd" ]] || fail "ls wd with --workdir /tmp: $output"
        sbx_ok ls "$sid"
        [[ $output == *"d "*" wd" ]] || fail "ls without PATH with --workdir /tmp: $output"
}

@test "ls: a symlink to a directory inside PATH is one 'l' line, its target is not listed" {
        in_sbx 'mkdir -p l/real && touch l/real/inner-file && ln -s real l/link && ln -s /usr/bin l/bin'
        sbx_ok ls "$sid" l
        [ "${#lines[@]}" -eq 3 ] || fail "want 3 entries:" "$output"
        [[ ${lines[0]} == "l 8 "*" bin" ]] || fail "line 1: ${lines[0]}"
        [[ ${lines[1]} == "l 4 "*" link" ]] || fail "line 2: ${lines[1]}"
        [[ ${lines[2]} == "d "*" real" ]] || fail "line 3: ${lines[2]}"
        [[ $output != *inner-file* ]] || fail "followed a symlink"
}

@test "ls --json: path, is_dir, size, modified_at of every entry" {
        in_sbx 'set -e; mkdir -p l/d; printf 12345 > l/f; ln -s d l/s
                touch -h -d "2001-02-03 04:05:06 UTC" l/d l/f l/s'
        sbx_ok ls --json "$sid" l
        json_doc
        jtrue '. == [
          {"path":"/workspace/l/d","is_dir":true,"size":(.[0].size),"modified_at":"2001-02-03T04:05:06Z"},
          {"path":"/workspace/l/f","is_dir":false,"size":5,"modified_at":"2001-02-03T04:05:06Z"},
          {"path":"/workspace/l/s","is_dir":false,"size":1,"modified_at":"2001-02-03T04:05:06Z"}]' || fail "ls --json:" "$output"
        jtrue '.[0].size | type == "number"' || fail "$output"
        sbx_ok ls --json "$sid" /workspace/l/d
        [ "$output" = "[]" ] || fail "an empty directory: $output"
}

@test "ls: a missing PATH is exit 1, not_found" {
        sbx_try ls "$sid" /workspace/no-such-dir
        human_names 1 /workspace/no-such-dir
        sbx_expect 1 ls --json "$sid" no-such-dir
        json_error not_found
}

# ---- read ---------------------------------------------------------------------------------

@test "read: each line as %6d<TAB>text, the last line without newline too" {
        printf 'alpha\n\n  gamma\tdelta\nlast' | put /workspace/r.txt
        want_bytes '%6d\t%s\n' 1 alpha 2 '' 3 $'  gamma\tdelta' 4 last
        sbx_raw 0 read "$sid" r.txt
        same_bytes "$raw" "$want"
        sbx_raw 0 read "$sid" /workspace/r.txt
        same_bytes "$raw" "$want"
}

@test "read: the number is right-aligned to 6 and grows past 6 digits" {
        seq 1 1000001 | put /workspace/big.txt
        sbx_raw 0 read --offset 999998 "$sid" big.txt
        want_bytes '%6d\t%d\n' 999999 999999 1000000 1000000 1000001 1000001
        same_bytes "$raw" "$want"
}

@test "read: CRLF and lone CR line ends read as LF" {
        printf 'one\r\ntwo\rthree\n\r\nfive\r' | put /workspace/crlf.txt
        want_bytes '%6d\t%s\n' 1 one 2 two 3 three 4 '' 5 five
        sbx_raw 0 read "$sid" crlf.txt
        same_bytes "$raw" "$want"
}

@test "read: a line longer than 5000 characters continues on rows N.1, N.2, ..." {
        local x5000 x2001
        x5000=$(printf 'x%.0s' $(seq 5000))
        x2001=$(printf 'y%.0s' $(seq 2001))
        printf 'short\n%s%s%s\n%s\n%sz\n' "$x5000" "$x5000" "$x2001" "$x5000" "$x5000" |
                put /workspace/long.txt
        want_bytes '%6s\t%s\n' 1 short 2 "$x5000" 2.1 "$x5000" 2.2 "$x2001" 3 "$x5000" \
                4 "$x5000" 4.1 z
        sbx_raw 0 read "$sid" long.txt
        same_bytes "$raw" "$want"
        # paging counts lines, not rows
        sbx_raw 0 read --offset 1 --limit 1 "$sid" long.txt
        want_bytes '%6s\t%s\n' 2 "$x5000" 2.1 "$x5000" 2.2 "$x2001"
        same_bytes "$raw" "$want"
}

@test "read: the 5000 are characters (UTF-8 code points), not bytes" {
        local e5000
        e5000=$(printf 'é%.0s' $(seq 5000))
        printf '%s€\n' "$e5000" | put /workspace/utf8.txt
        want_bytes '%6s\t%s\n' 1 "$e5000" 1.1 '€'
        sbx_raw 0 read "$sid" utf8.txt
        same_bytes "$raw" "$want"
}

@test "read: --offset and --limit page through the lines; the default limit is 2000" {
        seq 1 2500 | put /workspace/n.txt
        sbx_raw 0 read --offset 3 --limit 2 "$sid" n.txt
        want_bytes '%6d\t%d\n' 4 4 5 5
        same_bytes "$raw" "$want"
        sbx_raw 0 read "$sid" n.txt --limit 3
        want_bytes '%6d\t%d\n' 1 1 2 2 3 3
        same_bytes "$raw" "$want"
        sbx_raw 0 read "$sid" n.txt
        # shellcheck disable=SC2046 # one printf argument per word
        want_bytes '%6d\t%d\n' $(seq 1 2000 | sed 'p')
        same_bytes "$raw" "$want"
        sbx_raw 0 read --offset 2000 "$sid" n.txt
        # shellcheck disable=SC2046 # one printf argument per word
        want_bytes '%6d\t%d\n' $(seq 2001 2500 | sed 'p')
        same_bytes "$raw" "$want"
        sbx_raw 0 read --offset 2499 "$sid" n.txt
        want_bytes '%6d\t%d\n' 2500 2500
        same_bytes "$raw" "$want"
}

@test "read: an offset at or past the end is exit 1 with 'Line offset N exceeds file length (M lines)'" {
        seq 1 10 | put /workspace/ten.txt
        sbx_try read --offset 10 "$sid" ten.txt
        human_error 1 "Line offset 10 exceeds file length (10 lines)"
        sbx_try read --offset 11 --limit 5 "$sid" ten.txt
        human_error 1 "Line offset 11 exceeds file length (10 lines)"
        sbx_expect 1 read --json --offset 10 "$sid" ten.txt
        json_doc
        jtrue '.error.message == "Line offset 10 exceeds file length (10 lines)"' ||
                fail "$output"
}

@test "read: an empty file prints the reminder, without a number" {
        in_sbx ': > /workspace/empty.txt'
        want_bytes 'System reminder: File exists but has empty contents\n'
        sbx_raw 0 read "$sid" empty.txt
        same_bytes "$raw" "$want"
        sbx_ok read --json "$sid" empty.txt
        json_doc
        jtrue '.path == "/workspace/empty.txt" and .content == "" and .lines == 0 and .truncated == false' || fail "$output"
}

@test "read: output stops after 500 KiB with the truncation line" {
        local row
        row=$(printf 'y%.0s' $(seq 199))
        for _ in $(seq 3000); do echo "$row"; done | put /workspace/wide.txt
        sbx_raw 0 read --limit 3000 "$sid" wide.txt
        local notice='[Output truncated at 500 KiB: continue with a larger --offset or a smaller --limit]'
        [ "$(tail -n 1 "$raw")" = "$notice" ] || fail "last line: $(tail -n 1 "$raw" | cut -c1-100)"
        local body rows
        body=$(($(wc -c <"$raw") - ${#notice} - 1))
        rows=$(($(wc -l <"$raw") - 1))
        # whole rows of 207 bytes, as many as fit in 500 KiB
        [ "$body" -le $((500 * 1024)) ] || fail "$body bytes of rows before the notice"
        [ "$body" -gt $((500 * 1024 - 207)) ] || fail "stopped early: $body bytes"
        # shellcheck disable=SC2046 # one printf argument per word
        want_bytes '%6d\t%s\n' $(for i in $(seq 1 "$rows"); do echo "$i $row"; done)
        head -n "$rows" "$raw" >"$raw.rows"
        same_bytes "$raw.rows" "$want"
        # the next page starts where this one stopped
        sbx_raw 0 read --offset "$rows" --limit 2 "$sid" wide.txt
        # shellcheck disable=SC2046 # one printf argument per word
        want_bytes '%6d\t%s\n' $((rows + 1)) "$row" $((rows + 2)) "$row"
        same_bytes "$raw" "$want"
        sbx_ok read --json --limit 3000 "$sid" wide.txt
        jtrue '.truncated == true and .lines == 3000' || fail "$(cut -c1-200 <<<"$output")"
        jtrue '(.content | length) <= 512000' || fail "JSON content over 500 KiB"
        # under the cap: no notice
        sbx_raw 0 read "$sid" wide.txt
        ! grep -qF 'Output truncated' "$raw" || fail "notice under the cap (2000 rows)"
}

@test "read: not text (NUL or invalid UTF-8 in the first 8 KiB) is exit 1, not_text" {
        printf 'abc\000def\n' | put /workspace/nul.bin
        printf 'caf\351\n' | put /workspace/latin1.txt
        sbx_try read "$sid" nul.bin
        [ "$status" -eq 1 ] || fail "exit $status"
        [ -z "$output" ] || fail "printed: $output"
        sbx_expect 1 read --json "$sid" nul.bin
        json_error not_text
        sbx_expect 1 read --json "$sid" latin1.txt
        json_error not_text
        # past the first 8 KiB it is text
        { seq 1 3000; printf 'z\000z\n'; } | put /workspace/late-nul.txt
        sbx_ok read --offset 2999 "$sid" late-nul.txt
        [[ ${lines[0]} == "  3000"$'\t'3000 ]] || fail "$output"
}

@test "read --binary prints the whole file as base64" {
        head -c 3000 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
        printf '\000' >>"$BATS_TEST_TMPDIR/blob"
        put /workspace/blob.bin <"$BATS_TEST_TMPDIR/blob"
        sbx_ok read --binary "$sid" blob.bin
        base64 -d <<<"$output" >"$BATS_TEST_TMPDIR/blob.back" || fail "not base64: $output"
        same_bytes "$BATS_TEST_TMPDIR/blob.back" "$BATS_TEST_TMPDIR/blob"
        sbx_ok read --binary --json "$sid" blob.bin
        json_doc
        json .content | base64 -d >"$BATS_TEST_TMPDIR/blob.json" || fail "JSON content not base64"
        same_bytes "$BATS_TEST_TMPDIR/blob.json" "$BATS_TEST_TMPDIR/blob"
        jtrue '.path == "/workspace/blob.bin"' || fail "$output"
}

@test "read: a missing path or a directory is exit 1, not_found" {
        sbx_try read "$sid" /workspace/nope.txt
        human_names 1 /workspace/nope.txt
        sbx_expect 1 read --json "$sid" nope.txt
        json_error not_found
        sbx_expect 1 read "$sid" /workspace
        [ -z "$output" ] || fail "printed: $output"
        sbx_expect 1 read --json "$sid" /workspace
        json_error not_found
}

@test "read --json: path, the numbered content of the window, the file's line count, truncated" {
        printf 'a\nb\nc\nd\n' | put /workspace/j.txt
        sbx_ok read --json --offset 1 --limit 2 "$sid" j.txt
        json_doc
        # line 4 was left out: truncated tells the caller that more lines exist
        jtrue '. == {"path":"/workspace/j.txt","content":"     2\tb\n     3\tc\n","lines":4,"truncated":true}' || fail "$output"
        sbx_ok read --json --offset 1 --limit 3 "$sid" j.txt
        jtrue '.truncated == false' || fail "$output"
}

@test "read: a relative PATH is relative to the session's workdir" {
        new_session --workdir /tmp
        in_sbx 'echo in-tmp > /tmp/rel.txt; echo in-ws > /workspace/rel.txt'
        sbx_ok read "$sid" rel.txt
        [ "$output" = "     1"$'\t'"in-tmp" ] || fail "$output"
        sbx_ok read --json "$sid" rel.txt
        jtrue '.path == "/tmp/rel.txt"' || fail "$output"
}

# ---- write --------------------------------------------------------------------------------

@test "write: CONTENT from the argument, exact bytes, no newline added" {
        sbx_ok write "$sid" /workspace/w.txt $'line one\nline two'
        sbx_raw 0 exec "$sid" cat /workspace/w.txt
        want_bytes 'line one\nline two'
        same_bytes "$raw" "$want"
        sbx_ok write "$sid" /workspace/empty.txt ''
        sbx_ok exec "$sid" stat -c %s /workspace/empty.txt
        [ "$output" = 0 ] || fail "size $output"
}

@test "write: CONTENT from stdin with '-' or when absent" {
        head -c 100000 /dev/urandom | base64 >"$BATS_TEST_TMPDIR/in.txt"
        sbx_ok write "$sid" /workspace/dash.txt - <"$BATS_TEST_TMPDIR/in.txt"
        sbx_ok write "$sid" /workspace/absent.txt <"$BATS_TEST_TMPDIR/in.txt"
        local f
        for f in dash absent; do
                sbx_raw 0 exec "$sid" cat "/workspace/$f.txt"
                same_bytes "$raw" "$BATS_TEST_TMPDIR/in.txt"
        done
}

@test "write: creates the missing parent directories" {
        sbx_ok write "$sid" /workspace/new/a/b/c.txt hello
        sbx_ok write "$sid" rel/x/y.txt world
        sbx_ok exec "$sid" sh -c 'cat /workspace/new/a/b/c.txt; echo; cat /workspace/rel/x/y.txt; echo; stat -c %F /workspace/new/a/b /workspace/rel/x'
        [ "$output" = $'hello\nworld\ndirectory\ndirectory' ] || fail "$output"
}

@test "write: a failed write removes the parent directories it made, not the others" {
        sbx_ok destroy "$sid"
        new_session --disk 8M
        head -c 12000000 /dev/zero >"$BATS_TEST_TMPDIR/big"
        in_sbx 'mkdir /workspace/kept'
        sbx_expect 1 write --json "$sid" /workspace/kept/new/a/b/f.txt - <"$BATS_TEST_TMPDIR/big"
        json_error limit
        sbx_expect 1 fs "$sid" put /workspace/kept/put/a/f.txt <"$BATS_TEST_TMPDIR/big"
        sbx_ok exec "$sid" ls -A /workspace /workspace/kept
        [ "$output" = $'/workspace:\nkept\n\n/workspace/kept:' ] || fail "left behind: $output"
        # positive control: the same paths with content that fits
        sbx_ok write "$sid" /workspace/kept/new/a/b/f.txt small
        echo small | sbx_ok fs "$sid" put /workspace/kept/put/a/f.txt
        sbx_ok exec "$sid" cat /workspace/kept/new/a/b/f.txt /workspace/kept/put/a/f.txt
        [ "$output" = $'smallsmall' ] || fail "$output"
}

@test "write: an existing path fails with the exact message, exit 1, exists, unchanged" {
        in_sbx 'printf keep > /workspace/e.txt; mkdir /workspace/d; ln -s /workspace/nowhere /workspace/dangling'
        local p
        for p in /workspace/e.txt /workspace/d /workspace/dangling; do
                sbx_try write "$sid" "$p" new-content
                human_error 1 "Cannot write to $p because it already exists. Read and then make an edit, or write to a new path."
                sbx_expect 1 write --json "$sid" "$p" new-content
                json_error exists
                jtrue '.error.message == "Cannot write to '"$p"' because it already exists. Read and then make an edit, or write to a new path."' ||
                        fail "$output"
        done
        sbx_ok exec "$sid" sh -c 'cat /workspace/e.txt; echo; ls -A /workspace/d; test ! -e /workspace/nowhere && echo dangling-still'
        [ "$output" = $'keep\ndangling-still' ] || fail "changed: $output"
        # a relative PATH names the same file
        sbx_try write "$sid" e.txt x
        [ "$status" -eq 1 ] || fail "exit $status"
        [[ $stderr == "sbx: Cannot write to "*"e.txt because it already exists. Read and then make an edit, or write to a new path." ]] ||
                fail "$stderr"
}

# ---- edit ---------------------------------------------------------------------------------

@test "edit: replaces the one occurrence and says so" {
        printf 'hello world\nsecond line\n' | put /workspace/e.txt
        sbx_ok edit "$sid" /workspace/e.txt world there
        [ "$output" = "Successfully replaced 1 instance(s) of the string in '/workspace/e.txt'" ] ||
                fail "$output"
        sbx_raw 0 exec "$sid" cat /workspace/e.txt
        want_bytes 'hello there\nsecond line\n'
        same_bytes "$raw" "$want"
        # OLD is a string, not a regular expression
        printf 'a.*b and a+b\n' | put /workspace/re.txt
        sbx_ok edit "$sid" re.txt 'a.*b' X
        sbx_ok exec "$sid" cat re.txt
        [ "$output" = "X and a+b" ] || fail "$output"
}

@test "edit: OLD not found is exit 1 with the exact message, file unchanged" {
        printf 'abc\n' | put /workspace/e.txt
        sha_in /workspace/e.txt
        local before=$sha
        sbx_try edit "$sid" /workspace/e.txt xyz q
        human_error 1 "String not found in file: 'xyz'"
        sbx_expect 1 edit --json "$sid" /workspace/e.txt xyz q
        json_error not_found
        jtrue ".error.message == \"String not found in file: 'xyz'\"" || fail "$output"
        sha_in /workspace/e.txt
        [ "$sha" = "$before" ] || fail "the file changed"
}

@test "edit: OLD found N>1 times without --replace-all is exit 1 with the exact message" {
        printf 'foo bar foo baz foo\n' | put /workspace/e.txt
        sha_in /workspace/e.txt
        local before=$sha
        sbx_try edit "$sid" /workspace/e.txt foo X
        human_error 1 "String 'foo' appears 3 times in file. Use --replace-all to replace every instance, or provide a more specific string with surrounding context."
        sbx_expect 1 edit --json "$sid" /workspace/e.txt foo X
        json_error ambiguous
        sha_in /workspace/e.txt
        [ "$sha" = "$before" ] || fail "the file changed"
        sbx_ok edit --replace-all "$sid" /workspace/e.txt foo X
        [ "$output" = "Successfully replaced 3 instance(s) of the string in '/workspace/e.txt'" ] ||
                fail "$output"
        sbx_ok exec "$sid" cat /workspace/e.txt
        [ "$output" = "X bar X baz X" ] || fail "$output"
        # --replace-all after the operands, and with one occurrence
        sbx_ok edit "$sid" /workspace/e.txt bar Y --replace-all
        [ "$output" = "Successfully replaced 1 instance(s) of the string in '/workspace/e.txt'" ] ||
                fail "$output"
        sbx_ok edit --json --replace-all "$sid" /workspace/e.txt X Z
        json_doc
}

@test "edit: CRLF fallback: OLD with LF matches a CRLF file, NEW is written with CRLF" {
        printf 'one\r\ntwo\r\nthree\r\n' | put /workspace/crlf.txt
        sbx_ok edit "$sid" crlf.txt $'one\ntwo' $'uno\ndos\ntres'
        [ "$output" = "Successfully replaced 1 instance(s) of the string in 'crlf.txt'" ] || fail "$output"
        sbx_raw 0 exec "$sid" cat crlf.txt
        want_bytes 'uno\r\ndos\r\ntres\r\nthree\r\n'
        same_bytes "$raw" "$want"
}

@test "edit: CRLF fallback the other way: OLD with CRLF matches an LF file, NEW gets LF" {
        printf 'one\ntwo\nthree\n' | put /workspace/lf.txt
        sbx_ok edit "$sid" lf.txt $'two\r\nthree' $'2\r\n3'
        sbx_raw 0 exec "$sid" cat lf.txt
        want_bytes 'one\n2\n3\n'
        same_bytes "$raw" "$want"
}

@test "edit: the file is replaced (new inode, no temp file left) and keeps its mode" {
        printf 'mode test\n' | put /workspace/m.sh
        in_sbx 'chmod 0751 /workspace/m.sh'
        sbx_ok exec "$sid" stat -c %i /workspace/m.sh
        local ino=$output
        sbx_ok edit "$sid" /workspace/m.sh test 'done'
        sbx_ok exec "$sid" stat -c '%a %i' /workspace/m.sh
        [ "${output%% *}" = 751 ] || fail "mode after edit: $output"
        [ "${output##* }" != "$ino" ] || fail "edited in place (same inode), not temp file + rename"
        sbx_ok exec "$sid" ls -A /workspace
        [ "$output" = m.sh ] || fail "left behind: $output"
}

@test "edit: an empty OLD is a usage error (exit 2)" {
        printf 'abc\n' | put /workspace/e.txt
        sbx_try edit "$sid" /workspace/e.txt '' x
        [ "$status" -eq 2 ] || fail "exit $status"
        sbx_expect 2 edit --json "$sid" /workspace/e.txt '' x
        json_error usage
        sbx_ok exec "$sid" cat /workspace/e.txt
        [ "$output" = abc ] || fail "changed: $output"
}

@test "edit: --old-file and --new-file read multi-line OLD/NEW, '-' is stdin" {
        printf 'start\n  a: 1\n  b: 2\nend\n' | put /workspace/y.yml
        printf '  a: 1\n  b: 2\n' >"$BATS_TEST_TMPDIR/old"
        printf '  a: 10\n  b: 20\n  c: 30\n' >"$BATS_TEST_TMPDIR/new"
        sbx_ok edit --old-file "$BATS_TEST_TMPDIR/old" --new-file - "$sid" y.yml <"$BATS_TEST_TMPDIR/new"
        sbx_raw 0 exec "$sid" cat y.yml
        want_bytes 'start\n  a: 10\n  b: 20\n  c: 30\nend\n'
        same_bytes "$raw" "$want"
        sbx_ok edit --new-file "$BATS_TEST_TMPDIR/old" "$sid" y.yml $'  a: 10\n  b: 20\n  c: 30\n'
        sbx_raw 0 exec "$sid" cat y.yml
        want_bytes 'start\n  a: 1\n  b: 2\nend\n'
        same_bytes "$raw" "$want"
}

@test "edit: a missing file is exit 1, not_found" {
        sbx_expect 1 edit "$sid" /workspace/none.txt a b
        [ -z "$output" ] || fail "printed: $output"
        sbx_expect 1 edit --json "$sid" /workspace/none.txt a b
        json_error not_found
}

# ---- glob ---------------------------------------------------------------------------------

# A tree with distinct modification times (newest first: n1 .. n6).
glob_tree() {
        in_sbx 'set -e; mkdir -p g/a/b g/.hid g/link-target
                cd g
                touch -d "2020-01-06" a/b/deep.c      # n1
                touch -d "2020-01-05" a/mid.c         # n2
                touch -d "2020-01-04" top.c           # n3
                touch -d "2020-01-03" top.h           # n4
                touch -d "2020-01-02" .dot.c          # n5
                touch -d "2020-01-01" notes.txt       # n6
                touch .hid/hidden.c
                touch link-target/via-link.c
                ln -s link-target ln
                touch -h -d "2019-01-01" ln
                touch -d "2019-06-01" .hid link-target a a/b'
}

@test "glob: '**' matches any depth, newest first, one absolute path a line" {
        glob_tree
        sbx_raw 0 glob --path g "$sid" '**/*.c'
        # via-link.c's mtime is "now": it is the newest
        want_bytes '%s\n' /workspace/g/link-target/via-link.c /workspace/g/a/b/deep.c \
                /workspace/g/a/mid.c /workspace/g/top.c
        same_bytes "$raw" "$want"
        sbx_raw 0 glob "$sid" 'g/a/**/*.c'
        want_bytes '%s\n' /workspace/g/a/b/deep.c /workspace/g/a/mid.c
        same_bytes "$raw" "$want"
}

@test "glob: '*' does not cross '/' nor match a leading dot; '.*' does" {
        glob_tree
        sbx_ok glob --path g "$sid" '*.c'
        [ "$output" = /workspace/g/top.c ] || fail "'*.c': $output"
        sbx_ok glob --path g "$sid" '*'
        [[ $output != *.dot.c* && $output != *.hid* && $output != */a/b* ]] || fail "'*': $output"
        [ "${#lines[@]}" -eq 6 ] || fail "'*' want a top.c top.h notes.txt ln link-target:" "$output"
        sbx_ok glob --path g "$sid" '.*'
        [ "$(sort <<<"$output")" = $'/workspace/g/.dot.c\n/workspace/g/.hid' ] || fail "'.*': $output"
}

@test "glob: braces, '?' and '[...]'" {
        glob_tree
        sbx_raw 0 glob --path g "$sid" 'top.{c,h}'
        want_bytes '%s\n' /workspace/g/top.c /workspace/g/top.h
        same_bytes "$raw" "$want"
        sbx_raw 0 glob --path g "$sid" '{a/mid,top}.c'
        want_bytes '%s\n' /workspace/g/a/mid.c /workspace/g/top.c
        same_bytes "$raw" "$want"
        sbx_raw 0 glob --path g "$sid" 'to?.[ch]'
        want_bytes '%s\n' /workspace/g/top.c /workspace/g/top.h
        same_bytes "$raw" "$want"
        sbx_raw 0 glob --path g "$sid" 'top.[!c]'
        want_bytes '%s\n' /workspace/g/top.h
        same_bytes "$raw" "$want"
}

@test "glob: symlinks are listed, never followed into" {
        glob_tree
        sbx_ok glob --path g "$sid" '**/via-link.c'
        [ "$output" = /workspace/g/link-target/via-link.c ] || fail "followed ln/: $output"
        sbx_ok glob --path g "$sid" 'ln'
        [ "$output" = /workspace/g/ln ] || fail "the symlink itself: $output"
        sbx_ok glob --path g "$sid" 'ln/*'
        [ -z "$output" ] || fail "entered a symlinked directory: $output"
}

@test "glob: --path relative to the workdir, default the workdir; JSON as ls" {
        glob_tree
        sbx_ok glob "$sid" 'g/top.*'
        [ "$output" = $'/workspace/g/top.c\n/workspace/g/top.h' ] || fail "$output"
        sbx_ok glob --json --path g/a "$sid" '*.c'
        json_doc
        jtrue '. == [{"path":"/workspace/g/a/mid.c","is_dir":false,"size":0,"modified_at":"2020-01-05T00:00:00Z"}]' || fail "$output"
        sbx_ok glob --json --path g "$sid" 'a'
        jtrue '.[0].is_dir == true and .[0].path == "/workspace/g/a"' || fail "$output"
}

@test "glob: no match prints nothing, exit 0 ([] in JSON); a missing DIR is exit 1, not_found" {
        glob_tree
        sbx_raw 0 glob --path g "$sid" '*.nothing'
        [ ! -s "$raw" ] || fail "printed: $(cat "$raw")"
        sbx_ok glob --json --path g "$sid" '*.nothing'
        [ "$output" = "[]" ] || fail "$output"
        sbx_try glob --path /workspace/missing "$sid" '*'
        [ "$status" -eq 1 ] || fail "exit $status"
        [ -z "$output" ] || fail "printed: $output"
        sbx_expect 1 glob --json --path missing "$sid" '*'
        json_error not_found
}

@test "glob: at most 10,000 results, then the truncation line" {
        in_sbx 'mkdir /workspace/many && cd /workspace/many && seq 1 10050 | sed "s/^/f/" | xargs touch'
        sbx_ok glob --path many "$sid" '*'
        [ "${#lines[@]}" -eq 10001 ] || fail "${#lines[@]} lines"
        [ "${lines[10000]}" = "[Results truncated at 10000 entries]" ] || fail "last: ${lines[10000]}"
        [[ ${lines[0]} == /workspace/many/f* ]] || fail "first: ${lines[0]}"
}

# ---- grep ---------------------------------------------------------------------------------

grep_tree() {
        printf 'l1\nHello world\nl3\nl4\nhello again\nl6\nl7\nl8\nhello end\n' | put /workspace/gr/a.txt
        printf 'a.b\naxb\n123 numbers 456\n' | put /workspace/gr/sub/b.md
        printf 'hello\000binary\n' | put /workspace/gr/bin.dat
        printf 'nothing here\n' | put /workspace/gr/sub/c.txt
}

@test "grep: files_with_matches (default) lists each matching file once, absolute" {
        grep_tree
        sbx_ok grep "$sid" hello gr
        [ "$output" = /workspace/gr/a.txt ] || fail "binary file not skipped or wrong list: $output"
        sbx_ok grep --mode files_with_matches "$sid" 'l[0-9]|numbers' /workspace/gr
        [ "$(sort <<<"$output")" = $'/workspace/gr/a.txt\n/workspace/gr/sub/b.md' ] || fail "$output"
        # PATH defaults to the workdir
        sbx_ok grep "$sid" numbers
        [ "$output" = /workspace/gr/sub/b.md ] || fail "$output"
        # PATH may be a file
        sbx_ok grep "$sid" numbers gr/sub/b.md
        [ "$output" = /workspace/gr/sub/b.md ] || fail "$output"
}

@test "grep --mode content: path:line:text" {
        grep_tree
        sbx_raw 0 grep --mode content "$sid" hello gr
        want_bytes '%s\n' '/workspace/gr/a.txt:5:hello again' '/workspace/gr/a.txt:9:hello end'
        same_bytes "$raw" "$want"
        sbx_raw 0 grep --mode content -i "$sid" '^hello' gr/a.txt
        want_bytes '%s\n' '/workspace/gr/a.txt:2:Hello world' '/workspace/gr/a.txt:5:hello again' \
                '/workspace/gr/a.txt:9:hello end'
        same_bytes "$raw" "$want"
}

@test "grep: context -A -B -C with '-' separators and '--' between groups, like GNU grep" {
        grep_tree
        sbx_raw 0 grep --mode content -C 1 "$sid" 'again|end' gr/a.txt
        want_bytes '%s\n' '/workspace/gr/a.txt-4-l4' '/workspace/gr/a.txt:5:hello again' \
                '/workspace/gr/a.txt-6-l6' '--' '/workspace/gr/a.txt-8-l8' '/workspace/gr/a.txt:9:hello end'
        same_bytes "$raw" "$want"
        sbx_raw 0 grep --mode content -A 1 "$sid" 'l1|l4' gr/a.txt
        want_bytes '%s\n' '/workspace/gr/a.txt:1:l1' '/workspace/gr/a.txt-2-Hello world' '--' \
                '/workspace/gr/a.txt:4:l4' '/workspace/gr/a.txt-5-hello again'
        same_bytes "$raw" "$want"
        sbx_raw 0 grep --mode content -B 2 "$sid" again gr/a.txt
        want_bytes '%s\n' '/workspace/gr/a.txt-3-l3' '/workspace/gr/a.txt-4-l4' \
                '/workspace/gr/a.txt:5:hello again'
        same_bytes "$raw" "$want"
        # adjacent groups merge, no separator
        sbx_raw 0 grep --mode content -A 1 "$sid" 'l3|l4' gr/a.txt
        want_bytes '%s\n' '/workspace/gr/a.txt:3:l3' '/workspace/gr/a.txt:4:l4' \
                '/workspace/gr/a.txt-5-hello again'
        same_bytes "$raw" "$want"
        # the same as GNU grep on the same file
        printf 'l1\nHello world\nl3\nl4\nhello again\nl6\nl7\nl8\nhello end\n' >"$BATS_TEST_TMPDIR/a.txt"
        (cd "$BATS_TEST_TMPDIR" && grep -n -H -C 1 -P 'again|end' a.txt) |
                sed 's|^a.txt|/workspace/gr/a.txt|' >"$BATS_TEST_TMPDIR/gnu"
        sbx_raw 0 grep --mode content -C 1 "$sid" 'again|end' gr/a.txt
        same_bytes "$raw" "$BATS_TEST_TMPDIR/gnu"
}

@test "grep --mode count: path:N of matching lines" {
        grep_tree
        sbx_ok grep --mode count "$sid" hello gr
        [ "$output" = /workspace/gr/a.txt:2 ] || fail "$output"
        sbx_ok grep --mode count -i "$sid" hello gr
        [ "$output" = /workspace/gr/a.txt:3 ] || fail "$output"
        sbx_ok grep --mode count "$sid" 'l' gr/a.txt
        [ "$output" = /workspace/gr/a.txt:9 ] || fail "$output"
}

@test "grep: -F is a fixed string; the default is a PCRE" {
        grep_tree
        sbx_ok grep --mode content -F "$sid" a.b gr/sub/b.md
        [ "$output" = /workspace/gr/sub/b.md:1:a.b ] || fail "-F: $output"
        sbx_ok grep --mode content "$sid" a.b gr/sub/b.md
        [ "$output" = $'/workspace/gr/sub/b.md:1:a.b\n/workspace/gr/sub/b.md:2:axb' ] || fail "$output"
        sbx_ok grep --mode content "$sid" '\d+(?= numbers)' gr
        [ "$output" = '/workspace/gr/sub/b.md:3:123 numbers 456' ] || fail "PCRE: $output"
        # with -F an invalid regular expression is just text
        sbx_expect 2 grep "$sid" '(?=' gr
        sbx_expect 1 grep -F "$sid" '(?=' gr
}

@test "grep --glob restricts the files searched" {
        grep_tree
        sbx_ok grep --glob '*.md' "$sid" 'a' gr
        [ "$output" = /workspace/gr/sub/b.md ] || fail "$output"
        sbx_ok grep --glob '*.txt' "$sid" 'h' gr
        [ "$(sort <<<"$output")" = $'/workspace/gr/a.txt\n/workspace/gr/sub/c.txt' ] || fail "$output"
        sbx_expect 1 grep --glob '*.none' "$sid" 'a' gr
}

@test "grep: no match is exit 1 with nothing printed; in JSON [] and exit 0, every mode" {
        grep_tree
        local m
        for m in files_with_matches content count; do
                sbx_raw 1 grep --mode "$m" "$sid" zzz-no-match gr
                [ ! -s "$raw" ] || fail "$m printed: $(cat "$raw")"
                [ -z "$stderr" ] || fail "$m: stderr: $stderr"
                sbx_ok grep --json --mode "$m" "$sid" zzz-no-match gr
                [ "$output" = "[]" ] || fail "$m --json: $output"
        done
}

@test "grep --json: the three shapes" {
        grep_tree
        sbx_ok grep --json "$sid" hello gr
        jtrue '. == ["/workspace/gr/a.txt"]' || fail "$output"
        sbx_ok grep --json --mode content "$sid" 'hello e' gr
        jtrue '. == [{"path":"/workspace/gr/a.txt","line":9,"text":"hello end"}]' ||
                fail "$output"
        sbx_ok grep --json --mode count "$sid" hello gr
        jtrue '. == [{"path":"/workspace/gr/a.txt","count":2}]' || fail "$output"
}

@test "grep: at most 10,000 result lines, then the truncation line" {
        seq 1 10050 | sed 's/^/match /' | put /workspace/many.txt
        sbx_ok grep --mode content "$sid" match many.txt
        [ "${#lines[@]}" -eq 10001 ] || fail "${#lines[@]} lines"
        [ "${lines[10000]}" = "[Results truncated at 10000 entries]" ] || fail "last: ${lines[10000]}"
        [ "${lines[9999]}" = "/workspace/many.txt:10000:match 10000" ] || fail "${lines[9999]}"
}

@test "grep: a bad regular expression or mode is a usage error (exit 2); a missing PATH exit 1" {
        sbx_expect 2 grep "$sid" '(' .
        sbx_expect 2 grep --json "$sid" '(' .
        json_error usage
        sbx_expect 2 grep --mode nope "$sid" x
        sbx_expect 2 grep -A x "$sid" a
        sbx_try grep "$sid" x /workspace/missing
        human_names 1 /workspace/missing
        sbx_expect 1 grep --json "$sid" x /workspace/missing
        json_error not_found
}

# ---- errors common to all six -------------------------------------------------------------

@test "every file command: no such session is exit 3, session_not_found" {
        local gone=sb_0123456789abcdef c
        local -
        set -f # the '*' of glob is an argument
        sbx_ok destroy "$sid"
        for c in "ls $sid" "read $sid f" "write $sid f x" "edit $sid f a b" "glob $sid *" \
                "grep $sid x" "ls $gone" "read $gone f" "write $gone f x" "edit $gone f a b" \
                "glob $gone *" "grep $gone x" "ls no-such-name"; do
                # shellcheck disable=SC2086 # one word per argument
                sbx_expect 3 $c
                [ -z "$output" ] || fail "$c printed: $output"
                [[ $stderr == "sbx: "* ]] || fail "$c: stderr: $stderr"
                # shellcheck disable=SC2086
                sbx_expect 3 $c --json
                json_error session_not_found
        done
}

# The usage errors of the six commands, as "COMMAND ARGS..." lines ($sid replaced).
usage_cases='ls
read
read $sid
write
write $sid
edit $sid f
edit $sid f a
glob $sid
grep $sid
ls $sid --bogus
read $sid f --bogus
read --offset -1 $sid f
read --limit 0 $sid f
read --offset x $sid f
write $sid f x --bogus
edit --bogus $sid f a b
glob --bogus $sid x
grep --bogus $sid x
grep -C -1 $sid x
grep --mode nope $sid x'

@test "every file command: missing operands, bad values and unknown options are exit 2" {
        local cmd args
        local -
        set -f
        while read -r cmd args <&3; do
                args=${args//\$sid/$sid}
                # shellcheck disable=SC2086 # one word per argument
                sbx_expect 2 "$cmd" $args
                [ -z "$output" ] || fail "$cmd $args printed: $output"
                [[ $stderr == "sbx: "* ]] || fail "$cmd $args: stderr: $stderr"
        done 3<<<"$usage_cases"
        sbx_expect 2 glob "$sid" ''
}

# usage_json WHERE: every usage case with --json first or last; fails listing the cases that
# did not print exactly one {"error":{"code":"usage",...}} document.
usage_json() {
        local cmd args bad=()
        local -
        set -f
        while read -r cmd args <&3; do
                args=${args//\$sid/$sid}
                # shellcheck disable=SC2086 # one word per argument
                if [ "$1" = first ]; then
                        sbx_expect 2 "$cmd" --json $args
                else
                        sbx_expect 2 "$cmd" $args --json
                fi
                jtrue '.error.code == "usage" and (.error.message | length > 0)' 2>/dev/null ||
                        bad+=("sbx $cmd $args (--json $1): stdout '$output'")
        done 3<<<"$usage_cases"
        [ ${#bad[@]} -eq 0 ] || fail "no JSON error document:" "${bad[@]}"
}

@test "every file command: a usage error with --json first is one JSON document, code usage" {
        usage_json first
        sbx_expect 2 glob --json "$sid" ''
        json_error usage
}

@test "every file command: --json after the other arguments still makes the usage error JSON" {
        # "Every command takes --json", "also on error", and the options of the file commands
        # may follow the operands.
        usage_json last
}

@test "write into a read-only place is exit 1 (unsupported), nothing created" {
        sbx_try write "$sid" /dev/new-node x
        [ "$status" -eq 1 ] || fail "exit $status"
        sbx_expect 1 write --json "$sid" /dev/new-node x
        json_error unsupported
        sbx_expect 1 exec "$sid" test -e /dev/new-node
}
