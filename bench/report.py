#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers of bench/run.

  report.py pss RUNTIME_DIR IDS_FILE   PSS of each session's host-visible processes (JSON)
  report.py pss-pids PIDS_FILE         the same for process trees rooted at the given pids
  report.py report RAW_DIR OUT_DIR     results.json, results.md and latency.png from RAW_DIR
"""
import glob
import json
import math
import os
import subprocess
import sys


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(root, kids):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_of_roots(roots):
    kids = children_map()
    per, nproc = [], 0
    for r in roots:
        pids = tree(r, kids)
        nproc += len(pids)
        per.append(sum(pss_kib(p) for p in pids))
    return {"sessions": len(per), "processes": nproc, "pss_kib_total": sum(per),
            "pss_kib_per_session": (sum(per) / len(per)) if per else 0}


def cmd_pss(rt, ids_file):
    roots = []
    for sid in open(ids_file).read().split():
        state = dict(line.split("=", 1) for line in
                     open(os.path.join(rt, sid, "state")).read().splitlines() if "=" in line)
        roots.append(int(state["supervisor_pid"]))  # the init and everything else are below it
    print(json.dumps(pss_of_roots(roots)))


def cmd_pss_pids(pids_file):
    print(json.dumps(pss_of_roots([int(p) for p in open(pids_file).read().split()])))


def pct(sorted_xs, q):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_xs:
        return float("nan")
    k = max(0, min(len(sorted_xs) - 1, math.ceil(q / 100 * len(sorted_xs)) - 1))
    return sorted_xs[k]


def stats(times_s):
    xs = sorted(t * 1000 for t in times_s)
    return {"runs": len(xs), "median_ms": pct(xs, 50), "p99_ms": pct(xs, 99),
            "mean_ms": sum(xs) / len(xs), "min_ms": xs[0], "max_ms": xs[-1], "times_ms": xs}


# Groups of the report: (title, raw files, reference command for the ratio column).
GROUPS = [
    ("1. One-shot sandboxed `true`", ["oneshot", "oneshot-crun", "oneshot-podman"], "bwrap"),
    ("1c. The same, interleaved (one run of each in turn)", ["oneshot-alt"],
     "bwrap (interleaved)"),
    ("2. A command in a live session", ["exec"], "nsenter -a true"),
    ("2c. The same, interleaved (one run of each in turn)", ["exec-alt"],
     "nsenter -a true (interleaved)"),
    ("2b. A command in a live session, after 50 ms idle", ["exec-pause"],
     "nsenter -a true, after 50 ms idle"),
    ("3. Create and destroy a session", ["create", "destroy"], "bwrap in background"),
    ("4. File commands", ["files"], None),
]
FILE_PEERS = {"sbx read 1 MB": "cat -n 1 MB (host)", "sbx grep": "grep -rl (host)",
              "sbx glob": "find -name (host)"}
FILE_PEERS.update({k + ", defaults": v for k, v in FILE_PEERS.items()})
# The two ways sbx runs in every section: the defaults first, as users run it.
LABELS = {"defaults": "defaults (512M, 1 CPU, 256 pids)", "nolimits": "unlimited"}


def load_hyperfine(raw, name):
    path = os.path.join(raw, name + ".json")
    if not os.path.exists(path):
        return []
    res = json.load(open(path))["results"]
    return [dict(command=r["command"], **stats(r["times"])) for r in res]


def fmt(x):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def cmd_report(raw, out):
    machine = dict(line.split("=", 1) for line in
                   open(os.path.join(raw, "machine.txt")).read().splitlines() if "=" in line)
    skipped = []
    if os.path.exists(os.path.join(raw, "skipped.txt")):
        skipped = [s.strip() for s in open(os.path.join(raw, "skipped.txt")) if s.strip()]
    result = {"machine": machine, "skipped": skipped, "groups": [], "cycles": {},
              "density": {}, "burst": {}}
    md = ["# sbx benchmark", "",
          f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores, "
          f"{machine.get('memory')}, {machine.get('os')}, kernel {machine.get('kernel')}; "
          f"load {machine.get('load_start')} at start, {machine.get('load_end')} at end; "
          f"sbx {machine.get('sbx')}; {'quick mode' if machine.get('quick') == 'true' else 'full run'}, "
          f"{machine.get('date')}.", "",
          "Latencies in ms (hyperfine -N, bench/harness.c or bench/interleave.py, no shell in "
          "between). "
          "Every sbx row is measured with the defaults (rows marked `defaults`: 512M memory, "
          "1 CPU, 256 pids) and with `--memory/--cpus/--pids unlimited` (unmarked), as the "
          "peers set no cgroup limits.", ""]
    for s in skipped:
        md.append(f"- {s}")
    if skipped:
        md.append("")

    head, md = md, []
    sections = {}  # "1", "2", "3", "3b", ...: lines, emitted in that order

    def section(key):
        sections[key] = []
        return sections[key]

    dist = []  # (panel, command, times) for the chart
    for title, files, ref in GROUPS:
        rows = [r for f in files for r in load_hyperfine(raw, f)]
        if not rows:
            continue
        by_cmd = {r["command"]: r for r in rows}
        md = section(title.split(".")[0])
        md += [f"## {title}", "", "| command | median | p99 | mean | runs | ratio (median) |",
               "|---|---:|---:|---:|---:|---|"]
        for r in rows:
            peer = ref
            if title.startswith("4."):
                peer = FILE_PEERS.get(r["command"])
            ratio = ""
            if peer and peer in by_cmd and r["command"] != peer:
                r["ratio"] = {"vs": peer, "median": r["median_ms"] / by_cmd[peer]["median_ms"]}
                ratio = f"{r['ratio']['median']:.2f}x {peer}"
            md.append(f"| {r['command']} | {fmt(r['median_ms'])} | {fmt(r['p99_ms'])} | "
                      f"{fmt(r['mean_ms'])} | {r['runs']} | {ratio} |")
            if not title.startswith("4."):
                dist.append((title, r["command"], r["times_ms"]))
        md.append("")
        result["groups"].append({"title": title, "results": rows})

    cyc = sorted(glob.glob(os.path.join(raw, "cycle-*.txt")))
    if cyc:
        md = section("3b")
        md += ["## 3b. create + exec `echo hello` + destroy, sequential cycles", "",
               "| sbx | median | mean | p99 | max | cycles |", "|---|---:|---:|---:|---:|---:|"]
        cyc.sort(key=lambda p: p.endswith("-nolimits.txt"))
        for path in cyc:
            label = os.path.basename(path)[6:-4]
            s = stats([float(x) for x in open(path).read().split()])
            result["cycles"][label] = s
            md.append(f"| {LABELS.get(label, label)} | "
                      f"{fmt(s['median_ms'])} | {fmt(s['mean_ms'])} | {fmt(s['p99_ms'])} | "
                      f"{fmt(s['max_ms'])} | {s['runs']} |")
            dist.append(("3b. create+exec+destroy", f"cycle ({label})", s["times_ms"]))
        md.append("")

    dens = sorted(glob.glob(os.path.join(raw, "density-*.json")),
                  key=lambda p: (p.split("density-")[1].startswith("nolimits"),
                                 int(p.rsplit("-", 1)[1][:-5])))
    if dens:
        md = section("5")
        md += ["## 5. Density: N idle sessions", "",
               "PSS summed over each session's host-visible processes (the supervisor and "
               "everything below it), from /proc/PID/smaps_rollup, 1 s after the last create.",
               "", "| what | N | create all (s) | per create (ms) | PSS total (MiB) | "
               "PSS per session (KiB) | processes | destroy all (s) |",
               "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for path in dens:
            d = json.load(open(path))
            label = path.split("density-")[1].rsplit("-", 1)[0]
            p = json.load(open(os.path.join(raw, f"pss-{label}-{d['n']}.json")))
            d.update(p)
            result["density"][f"{label}-{d['n']}"] = d
            md.append(f"| sbx, {LABELS.get(label, label)} | "
                      f"{d['n']} | {d['create_s']:.2f} | {1000 * d['create_s'] / d['n']:.2f} | "
                      f"{p['pss_kib_total'] / 1024:.1f} | {p['pss_kib_per_session']:.0f} | "
                      f"{p['processes']} | {d['destroy_s']:.2f} |")
        for path in glob.glob(os.path.join(raw, "pss-bwrap-*.json")):
            p = json.load(open(path))
            result["density"]["bwrap-" + str(p["sessions"])] = p
            md.append(f"| bwrap (idle `tail -f`) | {p['sessions']} | | | "
                      f"{p['pss_kib_total'] / 1024:.1f} | {p['pss_kib_per_session']:.0f} | "
                      f"{p['processes']} | |")
        md.append("")

    bursts = {}  # burst-LABEL-KIND-REP.txt
    for path in glob.glob(os.path.join(raw, "burst-*.txt")):
        label, kind = os.path.basename(path).split("-")[1:3]
        kind = "nsenter" if label == "nsenter" else f"{label}-{kind}"
        xs = [float(x) for x in open(path).read().split()]
        bursts.setdefault(kind, {"wall": [], "each": []})
        bursts[kind]["wall"].append(xs[0] * 1000)
        bursts[kind]["each"] += [x * 1000 for x in xs[1:]]
    if bursts:
        n = len(bursts[next(iter(bursts))]["each"]) // len(bursts[next(iter(bursts))]["wall"])
        md = section("5b")
        md += [f"## 5b. {n} concurrent execs of `true`", "",
               "| what | wall time of the burst, median (ms) | per exec median (ms) | "
               "per exec p99 (ms) | bursts |", "|---|---:|---:|---:|---:|"]
        names = {"nsenter": "nsenter -a into one namespace set"}
        for label in ("defaults", "nolimits"):
            names[f"{label}-one"] = f"sbx exec into one session, {LABELS[label]}"
            names[f"{label}-many"] = f"sbx exec into {n} sessions, {LABELS[label]}"
        for kind in names:
            if kind not in bursts:
                continue
            w, e = sorted(bursts[kind]["wall"]), sorted(bursts[kind]["each"])
            result["burst"][kind] = {"wall_median_ms": pct(w, 50), "each_median_ms": pct(e, 50),
                                     "each_p99_ms": pct(e, 99), "bursts": len(w)}
            md.append(f"| {names[kind]} | {fmt(pct(w, 50))} | {fmt(pct(e, 50))} | "
                      f"{fmt(pct(e, 99))} | {len(w)} |")
        md.append("")

    result["targets"] = targets(result)
    md = section("0")
    md += ["## 0. Targets, with the defaults", "", "| target | measured | met |",
           "|---|---:|---|"]
    for t in result["targets"]:
        md.append(f"| {t['what']} | {t['measured']} | {t['met']} |")
    md.append("")
    md = head + [line for key in sorted(sections) for line in sections[key]]
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    chart(dist, raw, os.path.join(out, "latency.png"))
    print("\n".join(md))


def targets(result):
    """The performance targets of the defaults, each with its figure of this run."""
    rows = {r["command"]: r for g in result["groups"] for r in g["results"]}
    out = []

    def add(what, value, unit, ok):
        measured = "not measured" if value is None else f"{value:.2f}{unit}"
        out.append({"what": what, "value": value,
                    "measured": measured, "met": "n/a" if value is None else
                    ("yes" if ok(value) else "**no**")})

    def ratio(cmd):
        r = rows.get(cmd)
        return r["ratio"]["median"] if r and "ratio" in r else None

    add("`sbx exec` <= 1.0x `nsenter -a` (interleaved medians)",
        ratio("sbx exec ID true, defaults (interleaved)"), "x", lambda v: v <= 1.0)
    add("`sbx run -- true` <= 1.0x bwrap (interleaved medians)",
        ratio("sbx run -- true, defaults (interleaved)"), "x", lambda v: v <= 1.0)
    cyc = result["cycles"].get("defaults")
    add(f"create + exec + destroy: p99 < 10 ms ({cyc['runs'] if cyc else 0} cycles)",
        cyc["p99_ms"] if cyc else None, " ms", lambda v: v < 10)
    dens = [d for k, d in result["density"].items() if k.startswith("defaults-")]
    big = max(dens, key=lambda d: d["n"]) if dens else None
    n = big["n"] if big else 0
    add(f"idle session PSS <= 300 KiB (N = {n})",
        big["pss_kib_per_session"] if big else None, " KiB", lambda v: v <= 300)
    add(f"create {n} idle sessions < {5 * n / 1000:g} s (5 s per 1,000)",
        big["create_s"] if big else None, " s", lambda v: v < 5 * n / 1000)
    return out


def chart(dist, raw, png):
    """One panel per group: the cumulative distribution of each command's latencies."""
    panels = []
    for title, cmd, times in dist:
        if not panels or panels[-1][0] != title:
            panels.append((title, []))
        path = os.path.join(raw, f"cdf-{len(dist)}-{len(panels)}-{len(panels[-1][1])}.dat")
        with open(path, "w") as f:
            for i, t in enumerate(times):
                f.write(f"{t} {(i + 1) / len(times)}\n")
        panels[-1][1].append((cmd, path))
    panels.sort(key=lambda p: p[0])
    rows = math.ceil(len(panels) / 2)
    gp = [f"set terminal pngcairo size 1400,{420 * rows} font ',9'", f"set output '{png}'",
          f"set multiplot layout {rows},2", "set logscale x", "set grid",
          "set xlabel 'latency (ms, log scale)'", "set ylabel 'fraction of runs'",
          "set key bottom right", "set yrange [0:1]"]
    for title, series in panels:
        esc = title.replace("'", "").replace("`", "")
        gp.append(f"set title '{esc}'")
        gp.append("plot " + ", ".join(
            f"'{p}' using 1:2 with steps lw 2 title '{c.replace(chr(39), '')}'"
            for c, p in series))
    gp.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)


def main(argv):
    if len(argv) == 4 and argv[1] == "pss":
        cmd_pss(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "pss-pids":
        cmd_pss_pids(argv[2])
    elif len(argv) == 4 and argv[1] == "report":
        cmd_report(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
