#!/usr/bin/env python3
"""Median and worst of repeated placement runs (tests/bench/repeat-placement.sh).

usage: repeat-summary.py OUT_DIR

OUT_DIR/<topology>/run-<k>/*.txt are bench-placement results, one set per
boot. For each topology, scenario and system this prints the table of
docs/benchmarks.md over the runs (report.py's placement_row: the median and
the worst of each figure), then the goal of each scenario. The per-run
figures come from report.py's own summarize(), so they mean what
docs/benchmarks.md means.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows, seen = [], set()
    for topo_dir in sorted(glob.glob(os.path.join(sys.argv[1], "*"))):
        # Another directory beside the topologies (a profile, a trial of
        # one setting) is not one.
        if not glob.glob(os.path.join(topo_dir, "run-*")):
            continue
        table = report.collect_runs(report.run_dirs(topo_dir))
        rows.extend(report.placement_rows(os.path.basename(topo_dir), table))
        seen.update(scenario for scenario, _ in table)
    print(report.PLACEMENT_HEADER)
    print("\n".join(rows))
    goals = report.goal_lines(seen)
    if goals:
        print()
        print("Goals:")
        print()
        print("\n".join(goals))


if __name__ == "__main__":
    main()
