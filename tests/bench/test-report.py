#!/usr/bin/env python3
"""Checks of report.py's placement table on made-up results: the median and
the worst of each figure over several boots, a figure some runs lack, a
boot's own no-balancing run as the user's affinity, and the layout of one
boot without run directories (the user's affinity then the start's); and
of its migration table: every method bench-migrate prints has its row,
the 2- and 4-mover paths are set against one call, and the one-thread path only
against one thread's calls; and of its planner table against its goal.

usage: test-report.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

FAILED = []


def check(what, got, want):
    if got != want:
        FAILED.append(f"{what}: got {got!r}, want {want!r}")


def write_run(path, system, far_pages, stall, cpu_s=None, start_cpus="0-1", end_cpus="0-1",
              vmstat=(0, 0), affs=None):
    """A misplaced-like run of one one-thread task on CPU 0 (node 0):
    far_pages[k] of its 1000 pages on node 1 at second k, its allowed CPUs
    affs[k] then (start_cpus throughout by default)."""
    lines = [f"run bench-2node misplaced {system}", "node 0 0-1", "node 1 2-3",
             f"vmstat_before {vmstat[0]} 0", "event 10.00 start",
             f"affinity start 100 100 {start_cpus}"]
    for k, far in enumerate(far_pages):
        aff = affs[k] if affs else start_cpus
        lines.append(f"sample {10 + k + 0.5:.2f} 100 N0={1000 - far} N1={far} "
                     f"cpus=0:{100 * (k + 1)} aff={aff}")
    lines.append(f"event {10 + len(far_pages):.2f} end")
    lines.append(f"vmstat_after {vmstat[1]} 0")
    lines.append(f"affinity end 100 100 {end_cpus}")
    if cpu_s is not None:
        lines.append(f"placer_cpu_s {cpu_s:.2f}")
    lines.append(f"hog hog.out done passes 10 slowest_ms {stall}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def cells(row):
    return [c.strip() for c in row.strip("|").split("|")]


THROUGHPUT = """bench_migrate 100000
method                                   total ms    ratio   longest call  on node B
(a) one move_pages call                    3000.0     1.00      2999.0 ms     100000
(b) numaplaced batched path                3300.0     1.10        21.0 ms     100000
    raw move_pages, batches of 512         2900.0     0.97        20.0 ms     100000
    other process, 512s, 1 thread          3200.0     1.07        20.5 ms     100000
    other process, 512s, 2 threads         1600.0     0.53        22.0 ms     100000
(b2) numaplaced path, 2 movers             2000.0     0.67        24.5 ms     100000
(b4) numaplaced path, 4 movers             2400.0     0.80        31.0 ms     100000
end_bench_migrate
"""


def check_throughput():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "throughput.txt"), "w") as f:
            f.write(THROUGHPUT)
        out = report.throughput_section(tmp)
    rows = [line.split(" | ")[0].lstrip("| ") for line in out if line.startswith("| (")
            or line.startswith("| raw") or line.startswith("| other")]
    check("migration rows", rows,
          ["(a) one move_pages call", "(b) numaplaced batched path",
           "raw move_pages, batches of 512", "other process, 512s, 1 thread",
           "other process, 512s, 2 threads", "(b2) numaplaced path, 2 movers",
           "(b4) numaplaced path, 4 movers"])
    text = "\n".join(out)
    check("2 movers against one call",
          "numaplaced's path with 2 movers 2000 ms, 1.50x as fast as one move_pages call "
          "(3000 ms; goal 1.5x), its longest call 24.5 ms (goal 25); 512-page calls from "
          "2 threads of another process: 1600 ms." in text, True)
    check("4 movers against one call",
          "numaplaced's path with 4 movers 2400 ms, 1.25x as fast as one move_pages call "
          "(3000 ms; no goal for four; the default is 2), its longest call 31.0 ms (goal 25)." in text, True)
    check("one thread against one thread",
          "numaplaced's path 3300 ms against the fastest raw method here, raw move_pages, "
          "batches of 512, 2900 ms: ratio 1.14" in text, True)


PLANNER = """   tasks  nodes   cpus         ms ns/(task*node)   relieved
    1000      2     64      0.050          25.00         10
   10000      8    256      1.200          15.00         40
   40000      8    256      6.000          18.75        100
"""


def check_planner(tmp):
    """The planner's table: a row per size, the goal's size set against
    its 5 ms, the growth as the slope of the time against tasks x nodes on
    log scales (0.93, 1.44 and 1.16 computed by hand for these rows), and a
    missing goal size or a rising cost said as such."""
    path = os.path.join(tmp, "planner.txt")

    def section(text):
        """The section's lines from @text as planner.txt, by what they say."""
        with open(path, "w") as f:
            f.write(text)
        out = report.planner_section(tmp)
        return {"rows": [line for line in out if line.startswith("| ") and line[2].isdigit()],
                "goal": [line for line in out if "Goal" in line],
                "growth": [line for line in out if "Growth" in line]}

    got = section(PLANNER)
    check("planner rows", len(got["rows"]), 3)
    check("planner row", cells(got["rows"][1]), ["10,000", "8", "256", "1.200", "15.00", "40"])
    check("planner goal", got["goal"],
          ["- Goal: one plan over 10,000 tasks on 8 nodes (256 CPUs) in at most 5 ms. "
           "Measured: 1.20 ms: met."])
    check("planner growth", got["growth"],
          ["- Growth: over the 3 sizes the time grows as (tasks × nodes) to the power 0.93, "
           "no faster than tasks × nodes; 15.00 to 25.00 ns per task and node."])
    got = section(PLANNER.replace("1.200          15.00", "6.500          81.25")
                  .replace("6.000          18.75", "90.000        281.25"))
    check("planner goal missed", got["goal"],
          ["- Goal: one plan over 10,000 tasks on 8 nodes (256 CPUs) in at most 5 ms. "
           "Measured: 6.50 ms: not met."])
    check("planner growth rising", got["growth"],
          ["- Growth: over the 3 sizes the time grows as (tasks × nodes) to the power 1.44, "
           "faster than tasks × nodes; 25.00 to 281.25 ns per task and node."])
    got = section("\n".join(PLANNER.splitlines()[:2]) + "\n")
    check("planner goal size not run", got["goal"],
          ["- Goal: one plan over 10,000 tasks on 8 nodes in at most 5 ms: that size was "
           "not run."])
    check("planner one size, no growth", got["growth"], [])
    got = section(PLANNER.replace("0.050          25.00", "0.000           0.00"))
    check("planner row under the clock's grain left out of the growth", got["growth"],
          ["- Growth: over the 2 sizes the time grows as (tasks × nodes) to the power 1.16, "
           "faster than tasks × nodes; 15.00 to 18.75 ns per task and node."])
    os.remove(path)
    check("planner not run", report.planner_section(tmp), ["(not run)"])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        topo = os.path.join(tmp, "placement-2node")
        # Three boots. numaplaced is 90% and 95% local at its third sample,
        # at its fifth (ending at 96%), and never: in the third boot its
        # memory goes to node 0, back to node 1 and to node 0 again (two
        # returns, two reversals), it ends at 60%, it changes its CPUs once
        # and its CPU time is missing (the placer died). The user (the
        # no-balancing run of each boot) moved the task to CPUs 2-3, as in
        # shift: numaplaced keeps that in the first two boots, not in the
        # third.
        plans = [([1000, 500, 0, 0, 0], 40, 0.50, "2-3", (0, 256), None),
                 ([1000, 900, 500, 200, 40], 90, 0.80, "2-3", (0, 512), None),
                 ([1000, 300, 800, 400, 400], 60, None, "0-1", (0, 768),
                  ["0-1", "0-1", "2-3", "2-3", "2-3"])]
        for k, (far, stall, cpu, end, vm, affs) in enumerate(plans, start=1):
            d = os.path.join(topo, f"run-{k}")
            os.makedirs(d)
            write_run(os.path.join(d, "misplaced-numaplaced.txt"), "numaplaced", far, stall,
                      cpu, end_cpus=end, vmstat=vm, affs=affs)
            write_run(os.path.join(d, "misplaced-none.txt"), "none", [1000] * 5, 30 + k,
                      end_cpus="2-3")
            write_run(os.path.join(d, "misplaced-kernel.txt"), "kernel", [1000, 0, 0, 0, 0],
                      500 + k, end_cpus="2-3")
        check("run dirs", [os.path.basename(d) for d in report.run_dirs(topo)],
              ["run-1", "run-2", "run-3"])
        table = report.collect_runs(report.run_dirs(topo))
        rows = report.placement_rows("2node", table)
        check("rows", len(rows), 3)
        none, kernel, placed = (cells(r) for r in rows)
        check("none system", none[2], "no balancing")
        check("none runs", none[3], "3")
        check("none locality", none[4], "0% / 0%")
        check("none time", none[5], "never / never")
        check("none cpu", none[10], "-")
        check("none stall", none[11], "32 / 33")
        check("none affinity", none[13], "kept")
        check("kernel cpu", kernel[10], "in task")
        check("kernel time", kernel[5], "1.5 / 1.5")
        check("numaplaced runs", placed[3], "3")
        check("numaplaced locality", placed[4], "96% / 60%")
        # Times count from the start to the sample, 0.5 s after each second:
        # the median of 2.5, 4.5 and never.
        check("numaplaced s to 90%", placed[5], "4.5 / never")
        check("numaplaced s to 95%", placed[6], "4.5 / never")
        check("numaplaced MiB", placed[7], "2 / 3")
        check("numaplaced back-and-forth", placed[8], "0 / 2")
        check("numaplaced returns", placed[9], "0 / 2")
        # Two runs of three have a CPU time: the lower middle one of two.
        check("numaplaced cpu", placed[10], "0.50 / 0.80 (2 of 3)")
        check("numaplaced stall", placed[11], "60 / 90")
        check("numaplaced affinity changes", placed[12], "0 / 1")
        # Against each boot's no-balancing run, not the start's CPUs.
        check("numaplaced affinity", placed[13], "changed in 1")
        check("header columns", len(cells(report.PLACEMENT_HEADER.splitlines()[0])),
              len(placed))
        check("boots", [s["boot"] for s in table[("misplaced", "numaplaced")]],
              ["run-1", "run-2", "run-3"])

        # One boot, results straight in the topology's directory, with no
        # no-balancing run: the user's CPUs are those of the start.
        one = os.path.join(tmp, "placement-4node")
        os.makedirs(one)
        write_run(os.path.join(one, "misplaced-numaplaced.txt"), "numaplaced",
                  [1000, 0, 0], 50, 0.25, end_cpus="2-3")
        check("one boot dirs", report.run_dirs(one), [one])
        table = report.collect_runs(report.run_dirs(one))
        row = cells(report.placement_rows("4node", table)[0])
        check("one boot runs", row[3], "1")
        check("one boot time", row[5], "1.5 / 1.5")
        check("one boot cpu", row[10], "0.25 / 0.25")
        check("one boot affinity", row[13], "changed in 1")
        check("one boot name", table[("misplaced", "numaplaced")][0]["boot"], "run-1")

        # A tenth boot sorts after the ninth, not after the first.
        many = os.path.join(tmp, "placement-many")
        for k in (10, 9, 1):
            os.makedirs(os.path.join(many, f"run-{k}"))
        check("run order", [os.path.basename(d) for d in report.run_dirs(many)],
              ["run-1", "run-9", "run-10"])
    check_throughput()
    with tempfile.TemporaryDirectory() as tmp:
        check_planner(tmp)
    for line in FAILED:
        print("FAIL " + line)
    print(f"{'FAILED' if FAILED else 'ok'}: report.py's placement, migration and planner "
          "tables")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
