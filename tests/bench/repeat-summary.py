#!/usr/bin/env python3
"""Median and worst of repeated placement runs (tests/bench/repeat-placement.sh).

usage: repeat-summary.py OUT_DIR

OUT_DIR/<topology>/run-<k>/*.txt are bench-placement results, one set per
boot. For each topology, scenario and system this prints, over the runs:
final locality (median, worst = lowest), seconds to 90% and to 95% local
(median, worst = slowest; "never" counts as worse than any time), MiB
migrated (median, worst = most), returns of a task's memory to a node it
had left (median, worst = most), the longest stall of the task (median,
worst), changes of the tasks' CPU affinity (median, worst = most; "-" for
runs from before affinity was sampled every second), and whether the CPU
affinity the user set was kept in every run; then the goal of each
scenario. The per-run figures come from report.py's own summarize(), so
they mean what docs/benchmarks.md means.
"""
import glob
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


def user_affinity(parsed, run):
    for r in parsed:
        if r.get("system") == "none" and r.get("scenario") == run["scenario"]:
            return report.end_affinity(r)
    keys = sorted(run["affinity"], key=lambda k: (int(k[0]), int(k[1])))
    return [run["affinity"][k].get("start") for k in keys]


def collect(out):
    table = {}
    for run_dir in sorted(glob.glob(os.path.join(out, "*", "run-*"))):
        topology = os.path.basename(os.path.dirname(run_dir))
        parsed = [report.parse_run(p) for p in glob.glob(os.path.join(run_dir, "*.txt"))]
        for run in parsed:
            if "scenario" not in run:
                continue
            s = report.summarize(run, user_affinity(parsed, run))
            key = (topology, run["scenario"], run["system"])
            table.setdefault(key, []).append(s)
    return table


def med_worst(values, worst):
    vals = [v for v in values if v is not None]
    if not vals:
        return None, None
    return statistics.median(vals), worst(vals)


def fmt(v, pattern):
    if v is None:
        return "-"
    if v == math.inf:
        return "never"
    return pattern.format(v)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    table = collect(sys.argv[1])
    print("| guest | scenario | system | runs | final locality median / worst | "
          "s to 90% median / worst | s to 95% median / worst | MiB migrated median / worst | "
          "returns median / worst | longest stall ms median / worst | "
          "affinity changes median / worst | affinity |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    order = {s: i for i, s in enumerate(report.SCENARIOS)}
    sysorder = {s: i for i, s in enumerate(report.SYSTEMS)}
    for key in sorted(table, key=lambda k: (k[0], order.get(k[1], 99), sysorder.get(k[2], 99))):
        runs = table[key]
        loc = med_worst([r["final"] and r["final"] * 100 for r in runs], min)
        t90 = med_worst([math.inf if r["t90"] is None else r["t90"] for r in runs], max)
        t95 = med_worst([math.inf if r["t95"] is None else r["t95"] for r in runs], max)
        mib = med_worst([r["mib"] for r in runs], max)
        returns = med_worst([r["returns"] for r in runs], max)
        stall = med_worst([r["stall"] for r in runs], max)
        changes = med_worst([r["aff_changes"] for r in runs], max)
        kept = "kept" if all(r["affinity"] == "kept" for r in runs) else \
            f"changed in {sum(r['affinity'] != 'kept' for r in runs)}"
        print(f"| {key[0]} | {key[1]} | {report.SYSTEM_LABELS.get(key[2], key[2])} | {len(runs)} | "
              f"{fmt(loc[0], '{:.0f}%')} / {fmt(loc[1], '{:.0f}%')} | "
              f"{fmt(t90[0], '{:.1f}')} / {fmt(t90[1], '{:.1f}')} | "
              f"{fmt(t95[0], '{:.1f}')} / {fmt(t95[1], '{:.1f}')} | "
              f"{fmt(mib[0], '{:.0f}')} / {fmt(mib[1], '{:.0f}')} | "
              f"{fmt(returns[0], '{:g}')} / {fmt(returns[1], '{:g}')} | "
              f"{fmt(stall[0], '{:.0f}')} / {fmt(stall[1], '{:.0f}')} | "
              f"{fmt(changes[0], '{:g}')} / {fmt(changes[1], '{:g}')} | {kept} |")
    goals = report.goal_lines({key[1] for key in table})
    if goals:
        print()
        print("Goals:")
        print()
        print("\n".join(goals))


if __name__ == "__main__":
    main()
