#!/usr/bin/env bats
# sbx serve's execd file endpoints (sbx(1), "sbx fs" and "sbx serve") with curl:
#  - upload (multipart metadata + file) creates parents, replaces, sets the mode; download
#    returns the bytes, ranges as 206/416, a missing file as 404 FILE_NOT_FOUND; info, search,
#    list, replace, directories, move, permissions and delete do what the execd API says;
#  - bad requests get {"code","message"} errors: missing multipart parts, bad metadata, bad
#    JSON, an empty "old", a missing ?path=; an upload past [serve] max_upload is 413;
#  - an upload is taken apart as it arrives: its file's bytes go into one memfd, and no other
#    copy of the body is held; a body split anywhere near a part's start is the same upload;
#    uploads still arriving hold no more memfds than serve's fd budget (429 past it);
#  - escapes: every path resolves inside the session with a session process's rights, so
#    "../", absolute host paths and symlinks the session planted to host directories reach
#    only the session's own files (host canaries stay unread and unchanged, with a positive
#    control that the same request does act on the session's file), /proc and read-only
#    mounts refuse an upload, and a recursive delete through a link removes the link only.

load helpers
load serve_env

setup() {
        setup_sbx
        public_dir
}
teardown() {
        [ -z "${holder:-}" ] || kill "$holder" 2>/dev/null || true
        serve_stop
        teardown_sbx
}

# ex METHOD PATH [CURL-ARGS...]: an execd request to the sandbox with its token; the body in
# $output, the status in $code, the headers in the file $hdrs.
ex() {
        local method=$1 path=$2
        shift 2
        hdrs=$BATS_TEST_TMPDIR/ex.headers
        _expect 0 curl -sS -D "$hdrs" -o "$BATS_TEST_TMPDIR/ex.body" -w '%{http_code}' \
                -X "$method" -H "$sb_token" "$@" "$sb_base$path" || return 1
        code=$output
        output=$(cat "$BATS_TEST_TMPDIR/ex.body")
}

# upload PATH FILE [MODE]: POST /files/upload as the SDK sends it.
upload() {
        local meta="{\"path\":\"$1\"${3:+,\"mode\":$3}}"
        ex POST /files/upload -F "metadata=$meta;type=application/json;filename=metadata" \
                -F "file=@$2;type=application/octet-stream"
}

# expect_error STATUS CODE: the last answer.
expect_error() {
        [ "$code" = "$1" ] || fail "status $code, want $1: $output"
        [ "$(jq -r .code <<<"$output")" = "$2" ] || fail "error code is not $2: $output"
        [ -n "$(jq -r '.message // empty' <<<"$output")" ] || fail "no message: $output"
}

@test "serve files: upload creates parents, replaces, sets the mode; download and range" {
        serve_start
        serve_sandbox
        printf 'first\n' >"$BATS_TEST_TMPDIR/a"
        upload /workspace/new/deep/a.txt "$BATS_TEST_TMPDIR/a" 640
        [ "$code" = 200 ] || fail "upload: $code $output"
        grep -qi '^content-length: 0' "$hdrs" || fail "an empty 200 without Content-Length: 0"
        sid=$sb_id
        in_sbx '[ "$(cat /workspace/new/deep/a.txt)" = first ] && stat -c %a /workspace/new/deep/a.txt'
        [ "$output" = 640 ] || fail "mode $output"
        # replaced, the mode kept when none is given
        printf 'second, longer\n' >"$BATS_TEST_TMPDIR/b"
        upload /workspace/new/deep/a.txt "$BATS_TEST_TMPDIR/b"
        [ "$code" = 200 ] || fail "replace: $code $output"
        ex GET '/files/download?path=/workspace/new/deep/a.txt'
        [ "$code" = 200 ] && [ "$output" = "second, longer" ] || fail "download: $code $output"
        grep -qi '^content-disposition: attachment; filename="a.txt"' "$hdrs" ||
                fail "no Content-Disposition: $(cat "$hdrs")"
        ex GET '/files/info?path=/workspace/new/deep/a.txt'
        json '.["/workspace/new/deep/a.txt"] | .mode == 640 and .size == 15 and .type == "file"
                and .path == "/workspace/new/deep/a.txt"' >/dev/null || fail "info: $output"
        # a range, an open range, a suffix, one past the end, malformed ones
        ex GET '/files/download?path=/workspace/new/deep/a.txt' -H 'Range: bytes=8-13'
        [ "$code" = 206 ] && [ "$output" = longer ] || fail "range: $code $output"
        grep -qi '^content-range: bytes 8-13/15' "$hdrs" || fail "Content-Range: $(cat "$hdrs")"
        ex GET '/files/download?path=/workspace/new/deep/a.txt' -H 'Range: bytes=-7'
        [ "$code" = 206 ] && [ "$output" = longer ] || fail "suffix range: $code $output"
        ex GET '/files/download?path=/workspace/new/deep/a.txt' -H 'Range: bytes=99-'
        expect_error 416 UNKNOWN
        # a sign or a space is no number: "-7" once read as 2^64 - 7, the whole file
        ex GET '/files/download?path=/workspace/new/deep/a.txt' -H 'Range: bytes=--7'
        expect_error 416 UNKNOWN
        ex GET '/files/download?path=/workspace/new/deep/a.txt' -H 'Range: bytes=8--13'
        expect_error 416 UNKNOWN
        # missing file, a directory, a missing parameter
        ex GET '/files/download?path=/workspace/nope'
        expect_error 404 FILE_NOT_FOUND
        ex GET '/files/download?path=/workspace'
        expect_error 404 FILE_NOT_FOUND
        ex GET /files/download
        expect_error 400 MISSING_QUERY
        # an empty file is a file
        : >"$BATS_TEST_TMPDIR/empty"
        upload /workspace/empty "$BATS_TEST_TMPDIR/empty"
        [ "$code" = 200 ] || fail "empty upload: $code $output"
        in_sbx 'test -f /workspace/empty && ! test -s /workspace/empty'
}

@test "serve files: a download bigger than one piece streams whole (20 MiB)" {
        serve_start
        serve_sandbox
        head -c $((20 << 20)) /dev/urandom >"$BATS_TEST_TMPDIR/big"
        upload /workspace/big "$BATS_TEST_TMPDIR/big"
        [ "$code" = 200 ] || fail "upload: $code $output"
        _expect 0 curl -sS -o "$BATS_TEST_TMPDIR/back" -H "$sb_token" \
                "$sb_base/files/download?path=/workspace/big"
        cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/back" || fail "the download differs"
        # a range across the 8 MiB piece boundary
        _expect 0 curl -sS -o "$BATS_TEST_TMPDIR/part" -H "$sb_token" \
                -H "Range: bytes=8388600-8388615" "$sb_base/files/download?path=/workspace/big"
        cmp "$BATS_TEST_TMPDIR/part" <(tail -c +8388601 "$BATS_TEST_TMPDIR/big" | head -c 16) ||
                fail "the range across pieces differs"
}

# memfd_sizes PID: "NAME SIZE" for each memfd the process holds.
memfd_sizes() {
        local fd link
        for fd in /proc/"$1"/fd/*; do
                link=$(readlink "$fd" 2>/dev/null) || continue
                [[ $link == /memfd:* ]] || continue
                printf '%s %s\n' "${link#/memfd:}" "$(stat -L -c %s "$fd" 2>/dev/null || echo 0)"
        done
}

# The upload's file part holds data in serve (its memfd) while the upload still arrives.
upload_arriving() {
        memfd_sizes "$serve_pid" >"$BATS_TEST_TMPDIR/memfds"
        awk '$1 ~ /^sbx-serve-upload/ && $NF > 0 { f = 1 } END { exit !f }' "$BATS_TEST_TMPDIR/memfds"
}

@test "serve files: an upload goes into its file's memfd as it arrives, never held whole twice" {
        serve_start
        serve_sandbox
        head -c $((3 << 20)) /dev/urandom >"$BATS_TEST_TMPDIR/slow"
        curl -sS -o /dev/null -w '%{http_code}' --limit-rate 1M -H "$sb_token" \
                -F 'metadata={"path":"/workspace/slow"};type=application/json' \
                -F "file=@$BATS_TEST_TMPDIR/slow;type=application/octet-stream" \
                "$sb_base/files/upload" >"$BATS_TEST_TMPDIR/slow.code" &
        local curl_pid=$!
        # the positive control: serve's memfds are seen, the file part's with its bytes so far
        wait_until 10 upload_arriving || fail "no file part with data in serve's memfds:" \
                "$(cat "$BATS_TEST_TMPDIR/memfds")"
        kill -0 "$curl_pid" 2>/dev/null || fail "the upload was over before it could be looked at"
        # no other memfd holds the body (it was spooled whole, then parsed into a second copy)
        local others
        others=$(awk '$1 !~ /^sbx-serve-upload/ { n += $NF } END { print n + 0 }' \
                "$BATS_TEST_TMPDIR/memfds")
        [ "$others" -lt 65536 ] || fail "serve holds $others bytes besides the file part:" \
                "$(cat "$BATS_TEST_TMPDIR/memfds")"
        wait "$curl_pid" || fail "curl failed"
        [ "$(cat "$BATS_TEST_TMPDIR/slow.code")" = 200 ] || fail "upload: $(cat "$BATS_TEST_TMPDIR/slow.code")"
        _expect 0 curl -sS -o "$BATS_TEST_TMPDIR/slow.back" -H "$sb_token" \
                "$sb_base/files/download?path=/workspace/slow"
        cmp "$BATS_TEST_TMPDIR/slow" "$BATS_TEST_TMPDIR/slow.back" || fail "the file differs"
}

@test "serve files: a body split anywhere near a part's start is the same upload" {
        serve_start
        serve_sandbox
        # libmicrohttpd reports a part's start with no data when the piece of the body in hand
        # ends within four bytes of its value; the data then comes with offset 0 again
        local part k st
        for part in metadata file; do
                for k in 0 1 2 3 4 5; do
                        st=$(python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" \
                                "$sb_token" split "/workspace/split-$part-$k" "$part" "$k" \
                                "data of $part $k") || fail "the client failed"
                        [ "$st" = 200 ] || fail "split $k bytes into the $part part: status $st"
                done
        done
        # an empty file part followed by one of the same name, file name and type: two files,
        # whether the body comes whole or split near the second's start
        for k in -1 0 1 2 3 4 5; do
                st=$(python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" \
                        grouped "split-g$k" "$k") || fail "the client failed"
                [ "$st" = 200 ] || fail "an empty part, then one like it, split at $k: status $st"
        done
        _expect 0 "$SBX" exec "$sb_id" sh -c 'for f in /workspace/split-*; do printf "%s=%s\n" "${f##*/}" "$(cat "$f")"; done'
        local want
        want=$({
                for part in metadata file; do for k in 0 1 2 3 4 5; do
                        echo "split-$part-$k=data of $part $k"; done; done
                for k in -1 0 1 2 3 4 5; do echo "split-g$k-0="; echo "split-g$k-1=second"; done
        } | LC_ALL=C sort)
        [ "$(LC_ALL=C sort <<<"$output")" = "$want" ] || fail "the files differ: $output"
}

# upload_fds: how many file parts' memfds serve holds; upload_fds_are OP N: compared.
upload_fds() {
        memfd_sizes "$serve_pid" | grep -c '^sbx-serve-upload' || true
}
upload_fds_are() {
        [ "$(upload_fds)" "$1" "$2" ]
}
upload_bytes() {
        memfd_sizes "$serve_pid" | awk '$1 ~ /^sbx-serve-upload/ { n += $NF } END { print n + 0 }'
}
upload_bytes_are() {
        [ "$(upload_bytes)" "$1" "$2" ]
}

@test "serve files: uploads still arriving hold at most serve's fd budget; past it 429, freed after" {
        # a hard limit of 400 fds: the budget is a quarter of it (100)
        ulimit -n 400
        serve_start
        serve_sandbox
        python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" parts a 60 hold \
                >"$BATS_TEST_TMPDIR/hold.out" 3>&- &
        holder=$!
        # the positive control: the held upload's 60 file parts are seen in serve's fds
        wait_until 10 upload_fds_are -ge 60 || fail "the held upload holds $(upload_fds) fds"
        run python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" parts b 60 finish
        [ "$output" = 429 ] || fail "an upload past the budget: status $output"
        kill "$holder"
        wait "$holder" 2>/dev/null || true
        holder=
        wait_until 10 upload_fds_are -eq 0 || fail "serve still holds $(upload_fds) upload fds"
        run python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" parts c 60 finish
        [ "$output" = 200 ] || fail "an upload after the others ended: status $output"
        _expect 0 "$SBX" exec "$sb_id" sh -c 'ls /workspace | grep -c "^c-"; ls /workspace | grep -c "^[ab]-" || true'
        [ "$output" = "60"$'\n'"0" ] || fail "files made: $output"
}

@test "serve files: uploads still arriving hold at most 8 x max_upload bytes together; past it 429" {
        serve_start 'max_upload = 1M'
        serve_sandbox
        # eight uploads of 1 MB each held open just short of their end: 8 MB of the 8 MiB
        local i holders=()
        for i in 1 2 3 4 5 6 7 8; do
                python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" big "h$i" 1000000 hold \
                        >/dev/null 3>&- &
                holders+=($!)
        done
        # the positive control: their bytes are in serve's memfds (no upload was refused)
        wait_until 15 upload_bytes_are -ge $((8 * 999000)) ||
                fail "the held uploads hold $(upload_bytes) bytes"
        run python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" big next 1000000 finish
        [ "$output" = 429 ] || fail "an upload past the bytes' budget: status $output"
        kill "${holders[@]}"
        wait "${holders[@]}" 2>/dev/null || true
        wait_until 10 upload_fds_are -eq 0 || fail "serve still holds $(upload_fds) upload fds"
        run python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" big next 1000000 finish
        [ "$output" = 200 ] || fail "an upload after the others ended: status $output"
        _expect 0 "$SBX" exec "$sb_id" stat -c %s /workspace/next
        [ "$output" = 1000000 ] || fail "size: $output"
}

@test "serve files: a max_upload as large as a size goes does not wrap the uploads' budget" {
        serve_start 'max_upload = 2097152T'
        serve_sandbox
        run python3 "$SBX_SRC/tests/serve_upload_raw.py" "$sb_base" "$sb_token" big small 6 finish
        [ "$output" = 200 ] || fail "a 6-byte upload: status $output"
}

@test "serve files: info, search, list, replace, directories, move, permissions, delete" {
        serve_start
        serve_sandbox
        sid=$sb_id
        in_sbx 'mkdir -p /workspace/t/sub && echo aXa >/workspace/t/one.txt &&
                echo b >/workspace/t/sub/two.txt && echo c >/workspace/t/sub/three.md &&
                ln -s /etc /workspace/t/link'
        ex GET '/files/search?path=/workspace/t&pattern=*.txt'
        [ "$code" = 200 ] || fail "search: $code $output"
        [ "$(jq -r '[.[].path] | sort | join(" ")' <<<"$output")" = \
                "/workspace/t/one.txt /workspace/t/sub/two.txt" ] || fail "search: $output"
        ex GET '/directories/list?path=/workspace/t&depth=1'
        [ "$(jq -r '[.[] | "\(.path):\(.type)"] | join(" ")' <<<"$output")" = \
                "/workspace/t/link:symlink /workspace/t/one.txt:file /workspace/t/sub:directory" ] ||
                fail "list: $output"
        ex GET '/directories/list?path=/workspace/t/link'
        expect_error 404 FILE_NOT_FOUND
        ex POST '/files/replace?verbose=true' -d '{"/workspace/t/one.txt":{"old":"a","new":"bb"}}'
        json '.["/workspace/t/one.txt"].replacedCount == 2' >/dev/null || fail "replace: $output"
        ex POST /files/replace -d '{"/workspace/t/one.txt":{"old":"zzz","new":"y"}}'
        [ "$code" = 200 ] && [ -z "$output" ] || fail "replace without a match: $code $output"
        ex POST /directories -d '{"/workspace/t/made/x":{"mode":700}}'
        [ "$code" = 200 ] || fail "mkdir: $code $output"
        ex POST /files/mv -d '[{"src":"/workspace/t/one.txt","dest":"/workspace/t/made/x/1.txt"}]'
        [ "$code" = 200 ] || fail "mv: $code $output"
        ex POST /files/permissions -d '{"/workspace/t/made/x/1.txt":{"mode":600}}'
        [ "$code" = 200 ] || fail "chmod: $code $output"
        in_sbx 'stat -c "%a %n" /workspace/t/made/x /workspace/t/made/x/1.txt; cat /workspace/t/made/x/1.txt'
        [ "$output" = $'700 /workspace/t/made/x\n600 /workspace/t/made/x/1.txt\nbbXbb' ] ||
                fail "after mkdir, mv, chmod: $output"
        ex POST /files/mv -d '[{"src":"/workspace/t/sub/two.txt","dest":"/workspace/t/made/x/1.txt"}]'
        expect_error 500 RUNTIME_ERROR # an existing destination is not replaced
        ex DELETE '/files?path=/workspace/t/sub'
        expect_error 404 FILE_NOT_FOUND # a directory is not a file
        ex DELETE '/files?path=/workspace/t/made/x/1.txt&path=/workspace/t/nope'
        [ "$code" = 200 ] || fail "delete files: $code $output"
        ex DELETE '/directories?path=/workspace/t'
        [ "$code" = 200 ] || fail "delete directories: $code $output"
        in_sbx '! test -e /workspace/t && test -d /etc'
        ex GET '/files/info?path=/workspace/t'
        expect_error 404 FILE_NOT_FOUND
}

@test "serve files: bad requests are 400 with the execd codes, a big upload 413" {
        serve_start 'max_upload = 1M'
        serve_sandbox
        echo x >"$BATS_TEST_TMPDIR/x"
        ex POST /files/upload -F "file=@$BATS_TEST_TMPDIR/x"
        expect_error 400 INVALID_FILE_METADATA
        ex POST /files/upload -F 'metadata={"path":"/workspace/m"};type=application/json'
        expect_error 400 INVALID_FILE_CONTENT
        ex POST /files/upload -H 'Content-Type: application/json' -d '{"path":"/workspace/m"}'
        expect_error 400 INVALID_FILE
        ex POST /files/upload -F 'metadata={"mode":644};type=application/json' -F "file=@$BATS_TEST_TMPDIR/x"
        expect_error 400 INVALID_FILE_METADATA
        ex POST /files/upload -F 'metadata=not json' -F "file=@$BATS_TEST_TMPDIR/x"
        expect_error 400 INVALID_FILE_METADATA
        ex POST /files/upload -F 'metadata={"path":"/workspace/m","mode":999}' -F "file=@$BATS_TEST_TMPDIR/x"
        expect_error 400 INVALID_REQUEST_BODY
        ex POST /files/upload -F 'metadata={"path":"/workspace/m"}' -F 'metadata={"path":"/workspace/n"}' \
                -F "file=@$BATS_TEST_TMPDIR/x"
        expect_error 400 INVALID_FILE
        # a form that ends inside its last part: said so, nothing written
        ex POST /files/upload -H 'Content-Type: multipart/form-data; boundary=xx' --data-binary \
                $'--xx\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"path":"/workspace/m"}\r\n--xx\r\nContent-Disposition: form-data; name="file"\r\n\r\nhalf a fi'
        expect_error 400 INVALID_FILE
        [[ $output == *"ends before its last part"* ]] || fail "a form cut short: $output"
        ex POST /files/replace -d '{"/workspace/m":{"old":"","new":"y"}}'
        expect_error 400 INVALID_REQUEST_BODY
        ex POST /files/mv -d '{"src":"a"}'
        expect_error 400 INVALID_REQUEST_BODY
        ex POST /directories -d 'not json'
        expect_error 400 INVALID_REQUEST_BODY
        ex GET /files/search
        expect_error 400 MISSING_QUERY
        ex GET '/directories/list?path=/workspace&depth=-1'
        expect_error 400 INVALID_REQUEST_BODY
        # 2 MiB against max_upload = 1M: refused, nothing made
        head -c $((2 << 20)) /dev/zero >"$BATS_TEST_TMPDIR/two"
        upload /workspace/two "$BATS_TEST_TMPDIR/two"
        [ "$code" = 413 ] || fail "an upload past max_upload: $code $output"
        jq -e '.code and .message' <<<"$output" >/dev/null || fail "413 without an error body: $output"
        # positive control: under the cap it goes through
        head -c $((512 << 10)) /dev/zero >"$BATS_TEST_TMPDIR/half"
        upload /workspace/half "$BATS_TEST_TMPDIR/half"
        [ "$code" = 200 ] || fail "an upload under max_upload: $code $output"
        sid=$sb_id
        in_sbx '! test -e /workspace/two && test "$(wc -c </workspace/half)" = 524288'
        # nothing is left in the session from the refused ones
        in_sbx '! test -e /workspace/m && ! test -e /workspace/n && ! ls -A /workspace | grep -q sbx-upload'
}

@test "serve files: ../, host paths and planted symlinks reach only the session's files" {
        serve_start
        serve_sandbox
        sid=$sb_id
        token=SBXCANARY$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
        cdir=$pubdir/canaries
        mkdir -m 0777 "$cdir"
        printf '%s\n' "$token" >"$cdir/canary.txt"
        chmod 0666 "$cdir/canary.txt"
        before=$(stat -c '%s %Y %i' "$cdir/canary.txt"; ls -A "$cdir")
        # the session plants links to the host directory and to its file
        in_sbx 'ln -s "$1" /workspace/dirlink && ln -s "$1/canary.txt" /workspace/filelink' "$cdir"
        seen=
        for p in "$cdir/canary.txt" "/workspace/../../../..$cdir/canary.txt" \
                "../../../../../..$cdir/canary.txt" /workspace/filelink /workspace/dirlink/canary.txt; do
                ex GET "/files/download?path=$p"
                seen+="$output"
                [ "$code" = 404 ] || fail "download $p: $code $output"
                ex GET "/files/info?path=$p"
                seen+="$output"
                [ "$code" = 404 ] || [ "$p" = /workspace/filelink ] || fail "info $p: $code $output"
        done
        ex GET "/files/search?path=/workspace/dirlink"
        seen+="$output"
        [ "$code" = 404 ] || fail "search through the link: $code $output"
        # writes through every shape land in the session, never in the host directory
        printf 'written by the API\n' >"$BATS_TEST_TMPDIR/w"
        upload "/workspace/../../../..$cdir/new1" "$BATS_TEST_TMPDIR/w"
        [ "$code" = 200 ] || fail "upload by ../ path: $code $output"
        upload /workspace/dirlink/new2 "$BATS_TEST_TMPDIR/w"
        seen+="$output"
        ex POST /files/replace -d "{\"/workspace/filelink\":{\"old\":\"SBX\",\"new\":\"XXX\"}}"
        seen+="$output"
        ex POST /files/mv -d "[{\"src\":\"$cdir/canary.txt\",\"dest\":\"/workspace/stolen\"}]"
        seen+="$output"
        ex DELETE "/directories?path=/workspace/dirlink"
        [ "$code" = 200 ] || fail "delete of the link: $code $output"
        # positive control: the ../ upload did write, inside the session, at the path it names
        in_sbx 'cat "$1/new1"' "$cdir"
        [ "$output" = "written by the API" ] || fail "the session has no $cdir/new1: $output"
        ex GET "/files/download?path=$cdir/new1"
        [ "$code" = 200 ] && [ "$output" = "written by the API" ] ||
                fail "positive control: download of the session's own file: $code $output"
        # the host: canary unchanged, nothing new beside it, the token never answered
        [ "$(stat -c '%s %Y %i' "$cdir/canary.txt"; ls -A "$cdir")" = "$before" ] ||
                fail "the host directory changed: $(ls -lA "$cdir")"
        [ "$(cat "$cdir/canary.txt")" = "$token" ] || fail "the canary changed"
        [[ $seen != *"$token"* ]] || fail "the canary's content reached an answer"
        # the recursive delete removed the link only
        in_sbx '! test -L /workspace/dirlink'
}

@test "serve files: /proc and read-only mounts refuse an upload; a FIFO is not read" {
        serve_start
        serve_sandbox
        sid=$sb_id
        echo x >"$BATS_TEST_TMPDIR/x"
        host_name=$(cat /proc/sys/kernel/hostname)
        upload /proc/sys/kernel/hostname "$BATS_TEST_TMPDIR/x"
        [ "$code" != 200 ] || fail "an upload over /proc/sys/kernel/hostname succeeded"
        jq -e '.code and .message' <<<"$output" >/dev/null || fail "no error body: $output"
        [ "$(cat /proc/sys/kernel/hostname)" = "$host_name" ] || fail "the host's hostname changed"
        upload /proc/1/environ "$BATS_TEST_TMPDIR/x"
        [ "$code" != 200 ] || fail "an upload over /proc/1/environ succeeded"
        # /etc/alternatives is a read-only bind of the host's: EROFS
        upload /etc/alternatives/sbx-test "$BATS_TEST_TMPDIR/x"
        expect_error 500 RUNTIME_ERROR
        [[ $output == *"Read-only file system"* ]] || fail "not EROFS: $output"
        [ ! -e /etc/alternatives/sbx-test ] || fail "the host got /etc/alternatives/sbx-test"
        # positive control: the same upload to a writable place succeeds
        upload /workspace/sbx-test "$BATS_TEST_TMPDIR/x"
        [ "$code" = 200 ] || fail "upload to /workspace: $code $output"
        # a FIFO planted by the session is refused, not waited on
        in_sbx 'mkfifo /workspace/fifo'
        ex GET '/files/download?path=/workspace/fifo' --max-time 10
        expect_error 400 INVALID_FILE
        ex GET '/files/download?path=/dev/zero'
        expect_error 400 INVALID_FILE
}

@test "sbx fs: put replaces a symlink rather than write through it; usage errors exit 2" {
        new_session
        in_sbx 'echo keep >/workspace/target && ln -s /workspace/target /workspace/link'
        _expect 0 sh -c 'printf new | "$1" fs "$2" put /workspace/link 600' sh "$SBX" "$sid"
        in_sbx 'test ! -L /workspace/link && cat /workspace/target /workspace/link && stat -c %a /workspace/link'
        [ "$output" = $'keep\nnew600' ] || fail "after put over a link: $output"
        # a failed put leaves the old file whole (the parent is a file: ENOTDIR)
        _expect 1 sh -c 'printf x | "$1" fs --json "$2" put /workspace/target/sub' sh "$SBX" "$sid"
        json '.error.code == "not_found"' >/dev/null || fail "$output"
        sbx_expect 2 fs "$sid"
        sbx_expect 2 fs "$sid" frobnicate
        sbx_expect 2 fs "$sid" info
        _expect 2 sh -c 'echo "{\"/workspace/d\":{\"mode\":8}}" | "$1" fs "$2" mkdir' sh "$SBX" "$sid"
        _expect 2 sh -c 'echo "[1]" | "$1" fs "$2" mv' sh "$SBX" "$sid"
        sbx_expect 2 fs "$sid" list /workspace notanumber
        sbx_expect 3 fs sb_0000000000000000 info /workspace
        # the changes are in the audit log
        sbx_ok log "$sid"
        grep -q '"event":"write".*"/workspace/link"' <<<"$output" || fail "no write record: $output"
}
