#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time commands round-robin: one run of each in turn, the order reversed every round.

    interleave.py OUT.json RUNS WARMUP -n NAME CMD [-n NAME CMD ...]

hyperfine runs all of one command, then all of the next: on a shared VM whose speed drifts
by 20% within a minute, that drift lands in the ratio. Here every command sees the same
conditions, so the ratio of medians is the figure to trust. CMD is split like a shell word
list (no shell runs), spawned with posix_spawn, stdout/stderr to /dev/null, timed from the
spawn to its reaping. OUT.json has hyperfine's shape (results[].command, .times in seconds),
which bench/report.py reads; a command that fails ends the run with exit 1.
"""
import json
import os
import shlex
import sys
import time


def main(argv):
    out, runs, warm = argv[1], int(argv[2]), int(argv[3])
    rest = argv[4:]
    if len(rest) < 3 or len(rest) % 3 or any(rest[i] != "-n" for i in range(0, len(rest), 3)):
        print("usage: interleave.py OUT.json RUNS WARMUP -n NAME CMD [-n NAME CMD ...]",
              file=sys.stderr)
        return 2
    names = rest[1::3]
    cmds = [shlex.split(c) for c in rest[2::3]]
    null = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    times = [[] for _ in cmds]

    def once(k):
        t0 = time.perf_counter_ns()
        pid = os.posix_spawnp(cmds[k][0], cmds[k], os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        t1 = time.perf_counter_ns()
        if status != 0:
            print(f"interleave.py: '{names[k]}' failed (wait status {status})", file=sys.stderr)
            sys.exit(1)
        return (t1 - t0) / 1e9

    order = list(range(len(cmds)))
    for i in range(warm + runs):
        for k in (order if i % 2 == 0 else order[::-1]):
            t = once(k)
            if i >= warm:
                times[k].append(t)
    with open(out, "w") as f:
        json.dump({"results": [{"command": n, "times": t} for n, t in zip(names, times)]}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
