#!/usr/bin/env python3
"""Write docs/benchmarks-scaling.md from tests/bench/scaling.sh's results.

usage: scaling-report.py RESULTS_DIR DOC PLOT_DIR
"""
import glob
import os
import re
import subprocess
import sys

IDLE_LINE = re.compile(
    r"^(?P<case>\w+): (?P<procs>\d+) processes, (?P<threads>\d+) threads: CPU per cycle "
    r"median (?P<median>[\d.]+) ms, 90th (?P<p90>[\d.]+), max (?P<max>[\d.]+) over "
    r"(?P<n>\d+) cycles; process CPU per cycle (?P<proc>[\d.]+) ms; (?P<us>[\d.]+) us per "
    r"process(?:; (?P<warm>[\d.]+) ms per cycle on average before)?"
    r"(?:; mean (?P<mean>[\d.]+) ms)?$")
CASE_LABELS = {
    "host": "the host as it is",
    "p100": "+ 100 idle processes",
    "p1000": "+ 1,000 idle processes",
    "p10000": "+ 10,000 idle processes",
    "t10000": "+ 1 process of 10,000 idle threads",
}


def read_machine(results):
    out = []
    path = os.path.join(results, "machine.txt")
    if os.path.exists(path):
        out = [f"- {line.strip()}" for line in open(path) if ":" in line]
    return out


def idle_rows(results, name="idle.txt"):
    rows = []
    path = os.path.join(results, name)
    if not os.path.exists(path):
        return rows
    for line in open(path):
        m = IDLE_LINE.match(line.strip())
        if m:
            r = m.groupdict()
            for k in r:
                if k != "case" and r[k] is not None:
                    r[k] = float(r[k])
            rows.append(r)
    return rows


def sample_rows(results):
    rows = []
    for path in glob.glob(os.path.join(results, "sample-*.txt")):
        text = open(path).read()
        r = {}
        m = re.search(r"^([\d.]+) GiB, ([^,]+),", text, re.M)
        if not m:
            continue
        r["gib"] = float(m.group(1))
        r["nodes"] = m.group(2)
        m = re.search(r", k (\d+)$", text, re.M)
        r["k"] = int(m.group(1)) if m else 4096
        for key, label in (("maps", "numa_maps look"), ("sample", "sampled look")):
            m = re.search(label + r":\s+cpu ([\d.]+) ms \(([\d.]+) ms/GiB\), wall ([\d.]+) ms",
                          text)
            if m:
                r[key + "_cpu"], r[key + "_per_gib"], r[key + "_wall"] = map(float, m.groups())
        m = re.search(r"worst difference from numa_maps ([\d.]+) points", text)
        r["diff"] = float(m.group(1)) if m else None
        if "maps_cpu" in r and "sample_cpu" in r:
            rows.append(r)
    return sorted(rows, key=lambda r: r["gib"])


def gnuplot(plot_dir, name, title, xlabel, points, curves, yrange="[*:*]"):
    """A log-log PNG of @points (rows of x and one y per curve), the
    @curves titled, plus any extra gnuplot plot terms; returns its name."""
    data = os.path.join(plot_dir, name + ".dat")
    with open(data, "w") as f:
        for row in points:
            f.write(" ".join(f"{v:.3f}" for v in row) + "\n")
    terms = [f"'{data}' using 1:{k + 2} with linespoints title '{t}'"
             for k, t in enumerate(curves[0])] + curves[1]
    png = os.path.join(plot_dir, name + ".png")
    script = f"""set terminal pngcairo size 800,450 noenhanced
set output '{png}'
set title '{title}'
set xlabel '{xlabel}'
set ylabel 'CPU ms'
set logscale xy
set yrange {yrange}
set key below
set grid
plot {", ".join(terms)}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(data)
    return os.path.basename(png)


def plot_idle(rows, plot_dir):
    procs = sorted((r for r in rows if r["case"] != "t10000"), key=lambda r: r["procs"])
    if len(procs) < 2:
        return None
    return gnuplot(plot_dir, "scaling-idle",
                   "CPU per placement cycle against the processes listed (host, dry run)",
                   "processes in /proc", [(r["procs"], r["median"], r["p90"]) for r in procs],
                   (["median", "90th percentile"],
                    ["1 with lines dashtype 2 title 'goal: 1 ms at 10,000 tasks'"]), "[0.5:*]")


def plot_sample(rows, plot_dir):
    if len(rows) < 2:
        return None
    return gnuplot(plot_dir, "scaling-sample",
                   "One look at a task: numa_maps read against a sampled look (host)",
                   "GiB the task holds", [(r["gib"], r["maps_cpu"], r["sample_cpu"]) for r in rows],
                   (["numa_maps read and parse", f"sampled look, {rows[0]['k']} pages"], []))


def idle_section(rows, before, png, doc_dir, plot_dir):
    if not rows:
        return ["(not run)"]
    out = ["| case | processes | threads | CPU per cycle: median ms | 90th ms | max ms | "
           "process CPU per cycle ms | µs per process | warm-up: mean ms per cycle |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        warm = f"{r['warm']:.2f}" if r.get("warm") is not None else "-"
        out.append(f"| {CASE_LABELS.get(r['case'], r['case'])} | {r['procs']:.0f} | "
                   f"{r['threads']:.0f} | {r['median']:.2f} | {r['p90']:.2f} | {r['max']:.2f} | "
                   f"{r['proc']:.2f} | {r['us']:.1f} | {warm} |")
    out.append("")
    if before:
        out += ["Before the kept records and the process connector (commit 694ac6c: every "
                "task's `stat` read at every cycle, `tick_ms = 250`, no warm-up; "
                "`docs/benchmarks/raw/scaling/idle-before.txt`):", "",
                "| case | processes | CPU per cycle: median ms | µs per process |",
                "|---|---:|---:|---:|"]
        for r in before:
            out.append(f"| {CASE_LABELS.get(r['case'], r['case'])} | {r['procs']:.0f} | "
                       f"{r['median']:.2f} | {r['us']:.1f} |")
        out.append("")
    by = {r["case"]: r for r in rows}
    if "p10000" in by:
        r = by["p10000"]
        out.append(f"Goal: at most 1 ms of CPU per cycle with 10,000 idle tasks, not growing with "
                   f"them. Measured: {r['median']:.1f} ms with {r['procs']:.0f} processes "
                   f"({r['us']:.1f} µs each): **not met**." if r["median"] > 1 else
                   f"Goal: at most 1 ms of CPU per cycle with 10,000 idle tasks. Measured: "
                   f"{r['median']:.2f} ms: met.")
    if png:
        out += ["", f"![CPU per cycle]({os.path.relpath(os.path.join(plot_dir, png), doc_dir)})"]
    return out


def sample_section(rows, png, doc_dir, plot_dir):
    if not rows:
        return ["(not run)"]
    out = ["| GiB | nodes | numa_maps: CPU ms | ms per GiB | sampled look: CPU ms | "
           "numa_maps / sampled | worst difference, points |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        diff = "-" if r["diff"] is None else f"{r['diff']:.2f}"
        out.append(f"| {r['gib']:.0f} | {r['nodes']} | {r['maps_cpu']:.1f} | "
                   f"{r['maps_per_gib']:.2f} | {r['sample_cpu']:.2f} | "
                   f"{r['maps_cpu'] / r['sample_cpu']:.1f} | {diff} |")
    big = rows[-1]
    ok = big["sample_cpu"] <= 5 and big["maps_cpu"] / big["sample_cpu"] >= 20
    verdict = ("met" if ok else "**not met**") if big["gib"] >= 16 else "not measured at 16 GiB"
    out += ["", f"Goal: a look at a 16 GiB task in at most 5 ms and at most 1/20 of a numa_maps "
            f"read. Measured at {big['gib']:.0f} GiB: {big['sample_cpu']:.2f} ms against "
            f"{big['maps_cpu']:.1f} ms, 1/{big['maps_cpu'] / big['sample_cpu']:.0f}: {verdict}."]
    if png:
        out += ["", f"![sampled look]({os.path.relpath(os.path.join(plot_dir, png), doc_dir)})"]
    return out


TEMPLATE = """# numaplaced: cost against the size of the machine

Generated by `tests/bench/scaling.sh` (see `tests/bench/README.md`); do not
edit by hand. The raw results are in `docs/benchmarks/raw/scaling/`.
Benchmarks are not tests: nothing here passes or fails.

{machine}

## 1. CPU per placement cycle against the number of idle tasks

`tests/bench/bench-idle.py`: a dry-run daemon with the default
configuration (`tick_ms = 1000`), run as root so that it follows the
kernel's process connector, beside N idle tasks held by
`tests/bench/idle-tasks`; its metrics endpoint is asked four times a cycle,
and a cycle's CPU is the growth of `numaplaced_tick_cpu_seconds_total`
(the main thread's CPU over the whole timer handler) across one more
`numaplaced_ticks_total`, over 60 cycles after 130 s of warm-up (the
cycles of the warm-up are in the last column, as a mean). "process CPU"
is the daemon's utime + stime over the same cycles, the metrics answers
included. Idle tasks use no CPU, so whatever they cost is the daemon
looking at them.

{idle}

A cycle lists `/proc` only every `scan_period_max_ms` (60 s): the other
cycles take the last list and the processes the process connector named
since. It reads the `stat` of the tasks the scheduler needs figures of
(new ones, those whose period ends, small ones when their wait, doubling
up to 60 s, is over; each wait between half of it and all of it, by pid);
the other tasks keep the record of their last read. What remains per task
and cycle is the engine's own passes over every task (the list, the state
table, the plan) and, on average, one `stat` read every 30 to 60 s. The
warm-up reads more: at the start every small task is read at waits of 1,
2, 4 ... s. A process's threads are listed only when it is looked at, but
its `stat` costs more with them: the kernel sums every thread's CPU times
into it.

## 2. A sampled look against a numa_maps read

`tests/bench/bench-sample`: a process holding N GiB of touched anonymous
memory reads and parses its own `numa_maps` as the daemon does, and takes a
sampled look at itself (its `maps`, {pages} random pages looked up with
`move_pages(2)` given no nodes), interleaved, 7 rounds; CPU is the thread's
user + system time (the kernel's page-table walk and lookups are done on
its behalf), the median of the rounds. On a host of one node the share on
node 0 is 100% for both looks, so the accuracy column says nothing here:
the sample's error bound (the Wilson interval of its draws) is what the
look relies on.

{sample}

The daemon takes such a look, in place of a `numa_maps` read, at a task of
1 GiB or more that its last look found local, with every thread still on
that node: 1,024 pages first (the figures above), and 3,072 more only when
those cannot say whether the task is still `locality_target_percent`
local; `numa_maps` is read when the sample finds less, cannot tell, or
stood in three times in a row (docs/architecture.md, step 4).
"""


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    results, doc, plot_dir = sys.argv[1:]
    doc_dir = os.path.dirname(os.path.abspath(doc))
    plot_dir = os.path.abspath(plot_dir)
    os.makedirs(plot_dir, exist_ok=True)
    idle = idle_rows(results)
    before = idle_rows(os.path.join(plot_dir, "raw", "scaling"), "idle-before.txt")
    sample = sample_rows(results)
    text = TEMPLATE.format(
        machine="\n".join(read_machine(results)),
        idle="\n".join(idle_section(idle, before, plot_idle(idle, plot_dir), doc_dir, plot_dir)),
        sample="\n".join(sample_section(sample, plot_sample(sample, plot_dir), doc_dir,
                                        plot_dir)),
        pages=f"{sample[0]['k']:,}" if sample else "4,096")
    with open(doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
