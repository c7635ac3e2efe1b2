#!/bin/bash
# SPDX-License-Identifier: MIT
# The file commands of issue 4 against the same work done by `sbx exec` of the usual tools
# inside the same live session, and against GNU grep/find on the host, in one run
# (hyperfine -N: no shell in between):
#   read of a 10 MB text file      sbx read (first page, SPEC defaults) | sbx exec cat -n
#   grep over a 20,000-file tree    sbx grep | sbx exec grep -rlP | host grep -rlP
#   grep content mode               sbx grep --mode content | sbx exec grep -rnP | host grep -rnP
#   glob '**/*.h' over the tree     sbx glob | sbx exec find -name | host find -name
#   small-file commands             sbx read / ls / write+... on a 1 KiB file (target < 5 ms)
#
#   bench/file-commands.sh [RUNS]   (default 30; scripts/bootstrap installs hyperfine)
#
# The tree: the first 20,000 regular files of /usr/include, /usr/lib/python3* and /usr/share
# (real source and text), copied once into $SBX_BENCH_TREE (default /var/tmp/sbx-bench-tree)
# and bind-mounted read-only at /src in the session. Writes bench/results/file-commands.md
# and .json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${1:-30}
sbx=$PWD/build/sbx
out=bench/results
tree=${SBX_BENCH_TREE:-/var/tmp/sbx-bench-tree}
mkdir -p "$out"

make_tree() {
        [ -f "$tree/.complete" ] && return 0
        rm -rf "$tree"
        mkdir -p "$tree/src"
        find /usr/include /usr/lib/python3* /usr/share/perl* /usr/share/doc -type f -size -256k \
                2>/dev/null | head -n 20000 >"$tree/list"
        # cp --parents keeps the directory structure (depth and fan-out of real trees)
        xargs -a "$tree/list" -d '\n' cp --parents -t "$tree/src" 2>/dev/null || true
        # the 10 MB text file: numbered lines of real text
        { find /usr/include -name '*.h' -type f -print0 | xargs -0 cat | head -c 10485760 \
                >"$tree/big.txt"; } || true # head closes the pipe early
        head -c 1024 "$tree/big.txt" >"$tree/small.txt"
        touch "$tree/.complete"
}
make_tree
nfiles=$(find "$tree/src" -type f | wc -l)

export SBX_RUNTIME_DIR
SBX_RUNTIME_DIR=$(mktemp -d /tmp/sbx-bench.XXXXXX)
sid=$("$sbx" create --ttl 30m --memory 2G --mount "$tree:/data:ro")
cleanup() {
        "$sbx" destroy --force "$sid" >/dev/null 2>&1 || true
        rm -rf "$SBX_RUNTIME_DIR"
}
trap cleanup EXIT
"$sbx" exec "$sid" cp /data/small.txt /workspace/small.txt

pat='\bpthread_mutex_\w+lock\s*\('
hf() {
        hyperfine -N --warmup 3 --runs "$runs" --style basic --output=null "$@"
}

echo "tree: $nfiles files in $tree/src; pattern: $pat"
hf --export-markdown "$out/fc-read.md" --export-json "$out/fc-read.json" \
        -n "sbx read 10MB (first 2000 lines)" "$sbx read $sid /data/big.txt" \
        -n "sbx exec cat -n 10MB" "$sbx exec $sid cat -n /data/big.txt" \
        -n "host cat -n 10MB" "cat -n $tree/big.txt"
hf --export-markdown "$out/fc-grep.md" --export-json "$out/fc-grep.json" \
        -n "sbx grep (files)" "$sbx grep $sid '$pat' /data/src" \
        -n "sbx exec grep -rlP" "$sbx exec $sid grep -rlP '$pat' /data/src" \
        -n "host grep -rlP" "grep -rlP '$pat' $tree/src" \
        -n "sbx grep --mode content" "$sbx grep --mode content $sid '$pat' /data/src" \
        -n "sbx exec grep -rnP" "$sbx exec $sid grep -rnP '$pat' /data/src" \
        -n "host grep -rnP" "grep -rnP '$pat' $tree/src"
hf --export-markdown "$out/fc-glob.md" --export-json "$out/fc-glob.json" \
        -n "sbx glob **/*.h" "$sbx glob --path /data/src $sid '**/*.h'" \
        -n "sbx exec find -name '*.h'" "$sbx exec $sid find /data/src -name '*.h'" \
        -n "host find -name '*.h'" "find $tree/src -name '*.h'"
hf --export-markdown "$out/fc-small.md" --export-json "$out/fc-small.json" \
        -n "sbx read 1KiB" "$sbx read $sid small.txt" \
        -n "sbx ls" "$sbx ls $sid" \
        -n "sbx grep 1 file" "$sbx grep $sid include small.txt" \
        -n "sbx edit (no match)" "$sbx edit $sid small.txt zzzz-absent y" \
        -n "sbx exec cat -n 1KiB" "$sbx exec $sid cat -n small.txt" \
        -n "sbx exec true" "$sbx exec $sid true" -i

cat "$out"/fc-read.md "$out"/fc-grep.md "$out"/fc-glob.md "$out"/fc-small.md >"$out/file-commands.md"
jq -s '[.[].results[] | {command, median: (.median * 1000), mean: (.mean * 1000),
        p99_ms: ((.times | sort) as $t | $t[(($t | length) * 0.99 | floor)] * 1000)}]' \
        "$out"/fc-*.json >"$out/file-commands.json"
jq -r '.[] | "\(.command)\t median \(.median | . * 100 | round / 100) ms\t p99 \(.p99_ms | . * 100 | round / 100) ms"' \
        "$out/file-commands.json"
