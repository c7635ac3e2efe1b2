#!/bin/bash
# SPDX-License-Identifier: MIT
# The core figures of issue 2, each measured in the same run as its peers (hyperfine -N, no
# shell in between):
#   sbx run -- true            vs  bwrap --unshare-all ... true,  and plain fork+exec of true
#   sbx exec ID true           vs  nsenter -t PID -a true into a live `unshare -Urmnpif` sleep
#   sbx create + sbx destroy   (one pair per run)
#
#   bench/core.sh [RUNS]       (default 300; needs hyperfine and bubblewrap: scripts/bootstrap)
#
# Writes bench/results/core.md and core.json. sbx runs with `--memory/--cpus/--pids unlimited`
# so the figures compare the namespace/rootfs/seccomp work with peers that set no cgroup
# limits either (MEASURED.md: the peers run without cgroups on this host); the cgroup cost is
# measured separately by the issue-6 benchmark.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${1:-300}
sbx=$PWD/build/sbx
out=bench/results
mkdir -p "$out"
export SBX_RUNTIME_DIR
SBX_RUNTIME_DIR=$(mktemp -d /tmp/sbx-bench.XXXXXX)
nolimits=(--memory unlimited --cpus unlimited --pids unlimited)

sid=$("$sbx" create "${nolimits[@]}" --ttl 10m)
unshare -Urmnpif --mount-proc sleep 600 &
unshare_pid=$!
cleanup() {
        "$sbx" destroy --force "$sid" >/dev/null 2>&1 || true
        kill "$unshare_pid" 2>/dev/null || true
        rm -rf "$SBX_RUNTIME_DIR"
}
trap cleanup EXIT
sleep 0.3
# the sleep inside unshare's new pid namespace: the child of unshare's fork
target=$(pgrep -P "$(pgrep -P "$unshare_pid" | head -n1)" sleep || pgrep -P "$unshare_pid" | head -n1)
true_bin=$(command -v true)

hyperfine -N --warmup 20 --runs "$runs" \
        --export-markdown "$out/core.md" --export-json "$out/core.json" \
        -n "fork+exec true" "$true_bin" \
        -n "sbx run -- true" "$sbx run ${nolimits[*]} -- true" \
        -n "bwrap true" "bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc --dev /dev true" \
        -n "sbx exec ID true" "$sbx exec $sid true" \
        -n "nsenter -a true" "nsenter -t $target -a true"

# create and destroy as one pair per run: a destroy needs its own session
hyperfine -N --warmup 5 --runs "$((runs / 3))" \
        --export-markdown "$out/create-destroy.md" \
        -n "sbx create+destroy" \
        "bash -c 'id=\$($sbx create ${nolimits[*]}) && $sbx destroy \$id'"

cat "$out/core.md" "$out/create-destroy.md"
