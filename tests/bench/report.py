#!/usr/bin/env python3
"""Turn the raw benchmark results into docs/benchmarks.md and its plots.

usage: report.py RESULTS_DIR DOC_PATH PLOT_DIR

RESULTS_DIR holds what tests/bench/run-benchmarks.sh collected:
  placement-<topology>/run-<k>/*.txt
                              one file per scenario and system of boot k
                              (tests/bench/guest/bench-placement.sh); or
                              placement-<topology>/*.txt, one boot
  throughput.txt              tests/bench/guest/bench-throughput.sh
  spawn.txt                   tests/bench/guest/bench-spawn.sh
  shortlived.txt              tests/bench/guest/bench-shortlived.sh
  host-overhead.txt           tests/bench/host-overhead.sh
  planner.txt                 tests/bench/bench-planner on the host
  machine.txt                 "key: value" lines describing the host and guest
"""
import glob
import math
import os
import re
import statistics
import subprocess
import sys

SCENARIOS = {
    "misplaced": "one hog, threads pinned to node 0, memory on the far node",
    "compete": "two 2-thread hogs, memory on node 0, free to run anywhere",
    "big": "one 2-thread hog pinned to node 0, 1.3 times a node of memory",
    "spread": "one thread pinned per node, each with its own memory there",
    "shift": "one hog on node 0; a third of the way in, moved to the far node",
    "split": "one thread free to run anywhere, memory half on node 0, half on the far node",
    "churn": "tasks as wide as node 0, memory on node 0, free to run anywhere: one all "
             "along, the other replaced every 20 s",
}
# What a placer should achieve in each scenario: one line each beside the tables.
GOALS = {
    "misplaced": "90% local soon after the start (s to 90%), no long stall, the user's "
                 "affinity kept",
    "compete": "both tasks local, each with its memory on a node of its own",
    "big": "nothing to gain: the locality of no balancing, no back-and-forth",
    "spread": "left as it is: nothing migrated, locality kept",
    "shift": "90% local soon after the user's move (s to 90%), the move kept",
    "split": "95% local (s to 95%): the thread and its memory together on one node",
    "churn": "local again soon after each change (s to 90% counts from the last), with no "
             "returns: a task that stays is not sent back to a node it left as others "
             "come and go",
}
# numaplaced-node (affinity = node) is the system of older raw results, kept
# so that they still summarise under their own label.
SYSTEMS = ["none", "kernel", "numad", "numad-i5", "numaplaced", "numaplaced-memonly",
           "numaplaced-node", "numaplaced-nosample"]
SYSTEM_LABELS = {
    "none": "no balancing",
    "kernel": "kernel numa_balancing=1",
    "numad": "numad (defaults)",
    "numad-i5": "numad -i 5",
    "numaplaced": "numaplaced (defaults)",
    "numaplaced-memonly": "numaplaced, affinity = never (memory only)",
    "numaplaced-node": "numaplaced, affinity = node",
    "numaplaced-nosample": "numaplaced, run_sample_hz = 0 (no CPU samples)",
}
# A colour per system in the plots, the same in every one.
SYSTEM_COLOURS = {
    "none": "#555555",
    "kernel": "#1f5fbf",
    "numad": "#2e9e3e",
    "numad-i5": "#8bc34a",
    "numaplaced": "#d62728",
    "numaplaced-memonly": "#ff8c00",
    "numaplaced-node": "#9467bd",
    "numaplaced-nosample": "#8c564b",
}
PAGE = 4096


# ---- Placement ----------------------------------------------------------

def cpu_list(text):
    cpus = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.extend(range(int(lo), int(hi) + 1))
        elif part:
            cpus.append(int(part))
    return cpus


def parse_run(path):
    """One results file. Samples are kept per task; "rounds" gives each
    sample's round of sampling (every live task is sampled once a round, so
    a task seen again starts the next round) and "aff" each sample's allowed
    CPUs of the task's threads (None in files from before they were
    sampled)."""
    run = {"samples": {}, "rounds": {}, "aff": {}, "events": {}, "affinity": {}, "hogs": [],
           "cpu_node": {}, "placer_cpu_s": None, "log": []}
    round_no, in_round = 0, set()
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.split()
        if not f:
            continue
        kind = f[0]
        if kind == "run":
            run["topology"], run["scenario"], run["system"] = f[1], f[2], f[3]
        elif kind == "node":
            for cpu in cpu_list(f[2]):
                run["cpu_node"][cpu] = int(f[1])
        elif kind in ("vmstat_before", "vmstat_after"):
            run[kind] = int(f[1])
        elif kind == "event":
            run["events"][f[2]] = float(f[1])
        elif kind == "affinity":
            run["affinity"].setdefault((f[2], f[3]), {})[f[1]] = f[4] if len(f) > 4 else ""
        elif kind == "sample":
            pages, threads, aff = {}, [], None
            for item in f[3:]:
                if item.startswith("aff="):
                    aff = item[4:]
                elif item.startswith("cpus="):
                    for pair in item[5:].split(","):
                        if pair:
                            cpu, ticks = pair.split(":")
                            threads.append((int(cpu), int(ticks)))
                elif item.startswith("N"):
                    node, count = item[1:].split("=")
                    pages[int(node)] = int(count)
            run["samples"].setdefault(f[2], []).append((float(f[1]), pages, threads))
            if f[2] in in_round:
                round_no, in_round = round_no + 1, set()
            in_round.add(f[2])
            run["rounds"].setdefault(f[2], []).append(round_no)
            run["aff"].setdefault(f[2], []).append(aff)
        elif kind == "placer_cpu_s":
            run["placer_cpu_s"] = float(f[1])
        elif kind == "hog":
            m = re.search(r"slowest_ms ([0-9.]+)", line)
            if m:
                run["hogs"].append(float(m.group(1)))
        elif kind == "log":
            run["log"].append(line[4:].rstrip())
    return run


def locality(pages, threads, active, cpu_node):
    """Share of the memory on the node of the thread that uses it, when each
    running thread uses an equal share: the sum over nodes of
    min(memory share there, running-thread share there)."""
    total = sum(pages.values())
    if not total:
        return None
    running = [cpu for (cpu, _), on in zip(threads, active) if on] or [c for c, _ in threads]
    share = {}
    for cpu in running:
        node = cpu_node.get(cpu, -1)
        share[node] = share.get(node, 0) + 1 / len(running)
    return sum(min(pages.get(n, 0) / total, s) for n, s in share.items())


def series(run):
    """Locality over time (seconds from the start) of all the run's tasks
    together, weighted by their memory: one point per round of sampling,
    over the tasks sampled in it (tasks may come and go)."""
    start = run["events"].get("start", 0)
    per_round = {}
    for pid, samples in run["samples"].items():
        rounds = run["rounds"][pid]
        for i, (t, pages, threads) in enumerate(samples):
            # A thread runs when its CPU time grew since the last sample;
            # the first sample borrows the second's view.
            j = i if i > 0 else min(1, len(samples) - 1)
            if j == 0:
                active = [True] * len(threads)
            else:
                prev = samples[j - 1][2]
                cur = samples[j][2]
                active = [k < len(prev) and cur[k][1] > prev[k][1] for k in range(len(cur))]
                active = active[:len(threads)] + [False] * (len(threads) - len(active))
            loc = locality(pages, threads, active, run["cpu_node"])
            if loc is not None:
                per_round.setdefault(rounds[i], []).append((t - start, loc, sum(pages.values())))
    out = []
    for k in sorted(per_round):
        points = per_round[k]
        t = sum(p[0] for p in points) / len(points)
        weight = sum(p[2] for p in points)
        out.append((t, sum(p[1] * p[2] for p in points) / weight))
    return out


def back_and_forth(run):
    """Reversals of the flow of a task's memory into or out of a node:
    changes of at least 1% of the task (and 256 pages) count, and each
    reversal seen on two nodes is one move back."""
    total = 0
    for samples in run["samples"].values():
        task_reversals = 0
        nodes = set()
        for _, pages, _ in samples:
            nodes.update(pages)
        size = max((sum(p.values()) for _, p, _ in samples), default=0)
        threshold = max(256, size // 100)
        for node in nodes:
            last_sign, level = 0, None
            for _, pages, _ in samples:
                value = pages.get(node, 0)
                if level is None:
                    level = value
                    continue
                delta = value - level
                if abs(delta) < threshold:
                    continue
                sign = 1 if delta > 0 else -1
                if last_sign and sign != last_sign:
                    task_reversals += 1
                last_sign, level = sign, value
        total += math.ceil(task_reversals / 2)
    return total


def node_returns(run):
    """Per task, the times the node holding the majority of its pages
    became again a node that had held it earlier in the run (A -> B -> A
    is one), summed over tasks. A node holds the majority when it has at
    least 51% of the task's pages: a task split evenly has no holder until
    one side gains, so noise around 50/50 is no change."""
    total = 0
    for samples in run["samples"].values():
        holder, left = None, set()
        for _, pages, _ in samples:
            size = sum(pages.values())
            if not size:
                continue
            node, count = max(pages.items(), key=lambda kv: (kv[1], -kv[0]))
            if count * 100 < size * 51 or node == holder:
                continue
            if holder is not None:
                total += node in left
                left.add(holder)
            holder = node
    return total


def affinity_changes(run):
    """Changes of a task's allowed CPUs (any thread's) from one sample to
    the next, summed over tasks; None when the samples do not have them."""
    total, seen = 0, False
    for affs in run["aff"].values():
        known = [a for a in affs if a is not None]
        seen = seen or bool(known)
        total += sum(a != b for a, b in zip(known, known[1:]))
    return total if seen else None


def affinity_at(run, when):
    """Each thread's allowed CPUs at the "start" or the "end", in task and
    thread order."""
    keys = sorted(run["affinity"], key=lambda k: (int(k[0]), int(k[1])))
    return [run["affinity"][k].get(when) for k in keys]


def end_affinity(run):
    """Each thread's allowed CPUs at the end, in task and thread order."""
    return affinity_at(run, "end")


def time_to(points, ref, level):
    """Seconds from REF until locality first reached LEVEL, None if never."""
    for t, loc in points:
        if t >= ref and loc >= level:
            return t - ref
    return None


def reference_time(run):
    """Seconds from the start that the times to 90% and 95% count from: the
    user's move (shift), the last task that arrived becoming ready (churn),
    or the start."""
    events = run["events"]
    start = events.get("start", 0)
    if "shift" in events:
        return events["shift"] - start
    ready = [t for name, t in events.items() if name.startswith("ready:")]
    return max(ready) - start if ready else 0


def summarize(run, baseline_affinity):
    """baseline_affinity: the threads' CPUs at the end of the same scenario
    with no balancing, i.e. what the user set (including a move the
    scenario makes half-way)."""
    points = series(run)
    ref = reference_time(run)
    t90 = time_to(points, ref, 0.9)
    t95 = time_to(points, ref, 0.95)
    moved = run.get("vmstat_after", 0) - run.get("vmstat_before", 0)
    changed = baseline_affinity is not None and end_affinity(run) != baseline_affinity
    return {
        "points": points,
        "shift": ref if "shift" in run["events"] else None,
        "final": points[-1][1] if points else None,
        "t90": t90,
        "t95": t95,
        "mib": moved * PAGE / 2**20,
        "bnf": back_and_forth(run),
        "returns": node_returns(run),
        "aff_changes": affinity_changes(run),
        "cpu_s": run["placer_cpu_s"],
        "stall": max(run["hogs"]) if run["hogs"] else None,
        "affinity": "changed" if changed else "kept",
    }


def plot(topology, scenario, runs, plot_dir, data_dir):
    """One PNG per scenario: locality over time, a colour per system and a
    line per run of it (runs: system -> [summary, ...])."""
    lines = []
    for point, system in enumerate(SYSTEMS, start=1):
        for k, summary in enumerate(runs.get(system, [])):
            data = os.path.join(data_dir, f"{topology}-{scenario}-{system}-{summary['boot']}.dat")
            # A shifted task is drawn from its move: the move comes at a
            # different time in each run (sampling is slow in the guest).
            offset = summary.get("shift") or 0
            with open(data, "w") as f:
                for t, loc in summary["points"]:
                    f.write(f"{t - offset:.2f} {loc * 100:.2f}\n")
            title = f"title '{SYSTEM_LABELS[system]}'" if k == 0 else "notitle"
            lines.append(f"'{data}' using 1:2 with linespoints "
                         f"linecolor rgb '{SYSTEM_COLOURS[system]}' pointtype {point} {title}")
    png = os.path.join(plot_dir, f"{topology}-{scenario}.png")
    script = f"""set terminal pngcairo size 800,450 noenhanced
set output '{png}'
set title '{topology}: {scenario} ({SCENARIOS.get(scenario, "")})'
set xlabel '{"seconds since the move" if scenario == "shift" else "seconds"}'
set ylabel 'locality %'
set yrange [0:105]
set key below
set grid
plot {", ".join(lines)}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return os.path.basename(png)


def fmt(value, pattern, missing="-"):
    if value is None:
        return missing
    if value == math.inf:
        return "never"
    return pattern.format(value)


def goal_lines(scenarios):
    """"- *scenario*: goal" for each of SCENARIOS that is in SCENARIOS."""
    return [f"- *{s}*: {GOALS[s]}" for s in SCENARIOS if s in scenarios and s in GOALS]


def run_dirs(topo_dir):
    """The boots of one topology: its run-<k>/ directories (repeated runs,
    tests/bench/repeat-placement.sh or run-benchmarks.sh --runs), or the
    directory itself (results of one boot)."""
    runs = sorted(glob.glob(os.path.join(topo_dir, "run-*")),
                  key=lambda d: int(re.sub(r"\D", "", os.path.basename(d)) or 0))
    return [d for d in runs if os.path.isdir(d)] or [topo_dir]


def collect_runs(dirs):
    """(scenario, system) -> [summary, ...], one per boot in @dirs, each with
    "boot", the name of its run directory. Each run's affinity is judged
    against the same boot's run with no balancing (what the user set, a
    move the scenario makes included), or without one against the start's."""
    table = {}
    for d in dirs:
        boot = os.path.basename(d) if os.path.basename(d).startswith("run-") else "run-1"
        parsed = [parse_run(p) for p in sorted(glob.glob(os.path.join(d, "*.txt")))]
        baseline = {r["scenario"]: end_affinity(r) for r in parsed
                    if r.get("system") == "none" and "scenario" in r}
        for run in parsed:
            if "scenario" not in run:
                continue
            user = baseline.get(run["scenario"])
            if user is None:
                user = affinity_at(run, "start")
            s = summarize(run, user)
            s["log"] = run["log"]
            s["boot"] = boot
            table.setdefault((run["scenario"], run["system"]), []).append(s)
    return table


def median_worst(values, worst):
    """(median, worst, count) of the figures that are not None, (None, None,
    0) for none. The median of an even count is the lower middle one: a
    figure some run had ("never" beside a time gives the time)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None, None, 0
    return statistics.median_low(vals), worst(vals), len(vals)


def mw(figures, pattern, runs):
    """"median / worst", and how many of the @runs had the figure when some
    did not (a placer that died before its CPU time was read, a run with no
    sample)."""
    text = f"{fmt(figures[0], pattern)} / {fmt(figures[1], pattern)}"
    return text if figures[2] in (0, runs) else f"{text} ({figures[2]} of {runs})"


PLACEMENT_HEADER = (
    "| guest | scenario | system | runs | final locality median / worst | "
    "s to 90% median / worst | s to 95% median / worst | MiB migrated median / worst | "
    "back-and-forth median / worst | returns median / worst | placer CPU s median / worst | "
    "longest stall ms median / worst | affinity changes median / worst | CPU affinity |\n"
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def placement_row(topology, scenario, system, runs):
    """One table row over @runs (summaries) of a scenario and system: the
    median and the worst of each figure (the lowest locality, the slowest
    time, "never" slower than any, the most MiB, reversals, returns, CPU
    and affinity changes, the longest stall)."""
    n = len(runs)

    def figure(key, pattern, worst=max, scale=1):
        return mw(median_worst([None if s[key] is None else s[key] * scale for s in runs],
                               worst), pattern, n)

    def time(key):
        # A run that never got there, or has no sample, is slower than any.
        return mw(median_worst([math.inf if s[key] is None else s[key] for s in runs], max),
                  "{:.1f}", n)

    if system == "none":
        cpu = "-"
    elif system == "kernel":
        cpu = "in task"
    else:
        cpu = figure("cpu_s", "{:.2f}")
    changed = sum(s["affinity"] != "kept" for s in runs)
    return (f"| {topology} | {scenario} | {SYSTEM_LABELS.get(system, system)} | {n} | "
            f"{figure('final', '{:.0f}%', min, 100)} | {time('t90')} | {time('t95')} | "
            f"{figure('mib', '{:.0f}')} | {figure('bnf', '{:g}')} | "
            f"{figure('returns', '{:g}')} | {cpu} | {figure('stall', '{:.0f}')} | "
            f"{figure('aff_changes', '{:g}')} | "
            f"{'kept' if not changed else f'changed in {changed}'} |")


def placement_rows(topology, table):
    """The rows of one topology's @table (collect_runs), scenarios and
    systems in their usual order."""
    rows = []
    for scenario in SCENARIOS:
        for system in SYSTEMS:
            if (scenario, system) in table:
                rows.append(placement_row(topology, scenario, system, table[(scenario, system)]))
    return rows


def placement_section(results, doc_dir, plot_dir):
    data_dir = os.path.join(results, "plot-data")
    os.makedirs(data_dir, exist_ok=True)
    tables, plots, notes = [], [], []
    seen = set()
    for topo_dir in sorted(glob.glob(os.path.join(results, "placement-*"))):
        topology = os.path.basename(topo_dir)[len("placement-"):]
        table = collect_runs(run_dirs(topo_dir))
        tables.extend(placement_rows(topology, table))
        for scenario in SCENARIOS:
            runs = {system: table[(scenario, system)] for system in SYSTEMS
                    if (scenario, system) in table}
            if not runs:
                continue
            seen.add(scenario)
            png = plot(topology, scenario, runs, plot_dir, data_dir)
            plots.append(f"![{topology} {scenario}]({os.path.relpath(os.path.join(plot_dir, png), doc_dir)})")
            for s in runs.get("numaplaced", []):
                log = [l for l in s["log"] if "summary" in l or "error" in l or "err:" in l]
                notes.extend(f"    {topology}/{scenario} {s['boot']}: {l}" for l in log[:3])
    out = ["Goals:", ""]
    out.extend(goal_lines(seen))
    out.append("")
    out.append(PLACEMENT_HEADER)
    out.extend(tables)
    out.append("")
    out.extend(p + "\n" for p in plots)
    return out, notes


# ---- Migration throughput -----------------------------------------------

# The daemon's path and another process's raw 512-page calls, by threads.
MOVER_METHODS = {
    "numaplaced's path": {1: "(b) numaplaced batched path", 2: "(b2) numaplaced path, 2 movers",
                          4: "(b4) numaplaced path, 4 movers"},
    "another process's 512-page calls": {1: "other process, 512s, 1 thread",
                                         2: "other process, 512s, 2 threads",
                                         4: "other process, 512s, 4 threads"},
}


def movers_plot(methods, pages, one, plot_dir, data_dir):
    """A PNG of the time @pages took against the number of threads moving
    them, with one move_pages call (@one ms) as a line; None when fewer
    than two of the daemon's mover counts ran."""
    ours = [n for n, name in MOVER_METHODS["numaplaced's path"].items()
            if pages in methods.get(name, {})]
    if len(ours) < 2 or not one:
        return None
    lines = []
    for k, (label, by_threads) in enumerate(MOVER_METHODS.items()):
        data = os.path.join(data_dir, f"migration-{pages}-{k}.dat")
        with open(data, "w") as f:
            for n, name in sorted(by_threads.items()):
                if pages in methods.get(name, {}):
                    f.write(f"{n} {methods[name][pages][0]:.1f}\n")
        lines.append(f"'{data}' using 1:2 with linespoints pointtype {k + 5} title \"{label}\"")
    lines.append(f"{one:.1f} with lines dashtype 2 title \"one move_pages call\"")
    png = os.path.join(plot_dir, "migration-movers.png")
    script = f"""set terminal pngcairo size 800,450 noenhanced
set output '{png}'
set title '{pages:,} pages from node 0 to node 1, 2-node guest (median of the runs)'
set xlabel 'threads moving them'
set ylabel 'ms'
set xtics (1, 2, 4)
set xrange [0.5:4.5]
set yrange [0:*]
set key below
set grid
plot {", ".join(lines)}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def throughput_section(results, doc_dir=None, plot_dir=None):
    path = os.path.join(results, "throughput.txt")
    if not os.path.exists(path):
        return ["(not run)"]
    methods = {}   # name -> {pages: ms}
    order = []
    migratepages = {}
    notes = []
    pages = None
    for line in open(path):
        if line.startswith("bench_migrate "):
            pages = int(line.split()[1])
            continue
        # (a), (b), (c), (b2) ..., raw ..., other process ...
        m = re.match(r"^(\(\w+\) .+?|    (?:raw|other process),? .+?)\s+([0-9.]+)\s+([0-9.]+)"
                     r"\s+([0-9.]+) ms\s+(\d+)$", line.rstrip())
        if m and pages:
            name = m.group(1).strip()
            if name not in methods:
                methods[name] = {}
                order.append(name)
            methods[name][pages] = (float(m.group(2)), float(m.group(4)))
            continue
        if line.startswith("    (b) looked up"):
            notes.append(f"{pages} pages: {line.strip()}")
        m = re.match(r"migratepages (\d+) run \d+ ms ([0-9.]+) migrated (\d+) on0_before (\d+)", line)
        if m:
            migratepages.setdefault(int(m.group(1)), []).append(
                (float(m.group(2)), int(m.group(3)), int(m.group(4))))
    sizes = sorted({p for v in methods.values() for p in v} | set(migratepages))
    base = {p: methods.get("(a) one move_pages call", {}).get(p, (None,))[0] for p in sizes}
    head = "| method | " + " | ".join(f"{p:,} pages: ms | ratio | longest call ms" for p in sizes) + " |"
    out = [head, "|---|" + "---:|---:|---:|" * len(sizes)]
    for name in order:
        cells = []
        for p in sizes:
            ms, longest = methods[name].get(p, (None, None))
            ratio = ms / base[p] if ms is not None and base[p] else None
            cells += [fmt(ms, "{:.0f}"), fmt(ratio, "{:.2f}"), fmt(longest, "{:.0f}")]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = []
    for p in sizes:
        # A run counts when the hog's memory was on node 0 to begin with.
        runs = [r for r in migratepages.get(p, []) if r[2] >= p * 9 // 10]
        ms = statistics.median(r[0] for r in runs) if runs else None
        ratio = ms / base[p] if ms is not None and base[p] else None
        cells += [fmt(ms, "{:.0f}"), fmt(ratio, "{:.2f}"), fmt(ms, "{:.0f}")]
    out.append("| numactl migratepages PID 0 1 (whole np-hog) | " + " | ".join(cells) + " |")
    out.append("")
    for p, runs in sorted(migratepages.items()):
        good = [r for r in runs if r[2] >= p * 9 // 10]
        out.append(f"- migratepages, {p:,}-page hog: {len(runs)} runs, pages migrated per run "
                   f"(vmstat pgmigrate_success) {', '.join(str(r[1]) for r in runs)}; "
                   f"{len(runs) - len(good)} left out of the median because less than 90% "
                   f"of the hog's pages were on node 0 before the move (its first touch "
                   f"fell elsewhere).")
    for p in sizes:
        ours = methods.get("(b) numaplaced batched path", {}).get(p, (None,))[0]
        # One thread's calls against one thread's.
        raw = [(v[p][0], n) for n, v in methods.items()
               if not n.startswith("(b") and "threads" not in n and p in v]
        if ours is None or not raw:
            continue
        fastest, name = min(raw)
        out.append(f"- {p:,} pages: numaplaced's path {ours:.0f} ms against the fastest raw "
                   f"method here, {name.strip()}, {fastest:.0f} ms: ratio {ours / fastest:.2f} "
                   f"(goal: 1.05 or less).")
    for p in sizes:
        one = base[p]
        two = methods.get("other process, 512s, 2 threads", {}).get(p)
        for n in (2, 4):
            movers = methods.get(MOVER_METHODS["numaplaced's path"][n], {}).get(p)
            if not one or not movers:
                continue
            goal = "goal 1.5x" if n == 2 else "no goal for four; the default is 2"
            out.append(f"- {p:,} pages: numaplaced's path with {n} movers {movers[0]:.0f} ms, "
                       f"{one / movers[0]:.2f}x as fast as one move_pages call ({one:.0f} ms; "
                       f"{goal}), its longest call {movers[1]:.1f} ms (goal 25)"
                       + (f"; 512-page calls from 2 threads of another process: "
                          f"{two[0]:.0f} ms." if two and n == 2 else "."))
    for n in notes:
        out.append(f"- {n}")
    if plot_dir and sizes:
        data_dir = os.path.join(results, "plot-data")
        os.makedirs(data_dir, exist_ok=True)
        png = movers_plot(methods, sizes[-1], base[sizes[-1]], plot_dir, data_dir)
        if png:
            out += ["", f"![migration against movers]({os.path.relpath(png, doc_dir)})"]
    return out


# ---- Slow start ---------------------------------------------------------

def mean_rsd(values):
    if not values:
        return None, None
    mean = statistics.fmean(values)
    rsd = statistics.stdev(values) / mean * 100 if len(values) > 1 and mean else 0.0
    return mean, rsd


def host_section(results):
    path = os.path.join(results, "host-overhead.txt")
    if not os.path.exists(path):
        return ["(not run)"]
    rows = {}
    for line in open(path):
        f = line.split()
        if not f or f[0] != "run":
            continue
        bench, config = f[1], f[2]
        kv = dict(zip(f[4::2], f[5::2]))
        rows.setdefault((bench, config), []).append({k: float(v) for k, v in kv.items()})
    out = ["| benchmark | configuration | runs | elapsed s (mean ± rel. stddev) | ratio to no daemon | "
           "CPU user+sys s | daemon CPU s per run | numa_maps reads per run | numa_maps MiB per run |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    labels = {"none": "no daemon", "delay0": "numaplaced, scan_delay_ms=0",
              "delay1000": "numaplaced, scan_delay_ms=1000"}
    for bench in ("kbuild", "hackbench"):
        base, _ = mean_rsd([r["elapsed_s"] for r in rows.get((bench, "none"), [])])
        for config in ("none", "delay0", "delay1000"):
            rs = rows.get((bench, config), [])
            if not rs:
                continue
            el, rsd = mean_rsd([r["elapsed_s"] for r in rs])
            cpu, cpu_rsd = mean_rsd([r["user_s"] + r["sys_s"] for r in rs])
            dcpu, _ = mean_rsd([r["daemon_cpu_s"] for r in rs if "daemon_cpu_s" in r])
            scans, _ = mean_rsd([r["numaplaced_scans_total"] for r in rs
                                 if "numaplaced_scans_total" in r])
            nbytes, _ = mean_rsd([r["numaplaced_numa_maps_read_bytes_total"] / 2**20 for r in rs
                                  if "numaplaced_numa_maps_read_bytes_total" in r])
            out.append(f"| {bench} | {labels[config]} | {len(rs)} | {el:.2f} ± {rsd:.1f}% | "
                       f"{el / base:.3f} | {cpu:.2f} ± {cpu_rsd:.1f}% | {fmt(dcpu, '{:.2f}')} | "
                       f"{fmt(scans, '{:.0f}')} | {fmt(nbytes, '{:.2f}')} |")
    out.append("")
    out.extend(host_findings(rows, labels))
    return out


def host_findings(rows, labels):
    """What the table says about noise: each daemon configuration's
    difference from no daemon next to twice its standard error, and the
    daemon's own CPU time next to the benchmark's."""
    out = []
    for bench in ("kbuild", "hackbench"):
        base = [r["elapsed_s"] for r in rows.get((bench, "none"), [])]
        base_cpu = [r["user_s"] + r["sys_s"] for r in rows.get((bench, "none"), [])]
        if len(base) < 2:
            continue
        for config in ("delay0", "delay1000"):
            rs = rows.get((bench, config), [])
            if len(rs) < 2:
                continue
            el = [r["elapsed_s"] for r in rs]
            diff = statistics.fmean(el) - statistics.fmean(base)
            se = math.sqrt(statistics.variance(el) / len(el) +
                           statistics.variance(base) / len(base))
            pct = diff / statistics.fmean(base) * 100
            band = 2 * se / statistics.fmean(base) * 100
            verdict = ("within the noise" if abs(pct) <= band else
                       "beyond two standard errors")
            dcpu = [r["daemon_cpu_s"] for r in rs if "daemon_cpu_s" in r]
            scans = [r["numaplaced_scans_total"] for r in rs if "numaplaced_scans_total" in r]
            share = (statistics.fmean(dcpu) / statistics.fmean(base_cpu) * 100
                     if dcpu and base_cpu else None)
            out.append(f"- {bench}, {labels[config]}: elapsed {pct:+.1f}% against no daemon, "
                       f"two standard errors ±{band:.1f}%: {verdict}. The daemon read "
                       f"numa_maps {statistics.fmean(scans) if scans else 0:.0f} times and used "
                       f"{statistics.fmean(dcpu) if dcpu else 0:.2f} s of CPU per run, "
                       f"{fmt(share, '{:.1f}')}% of the CPU time the benchmark itself used.")
        zero, second = rows.get((bench, "delay0"), []), rows.get((bench, "delay1000"), [])

        def avg(rs, key):
            vals = [r[key] for r in rs if key in r]
            return statistics.fmean(vals) if vals else 0.0
        if zero and second:
            out.append(
                f"- {bench}: without the delay numaplaced read numa_maps "
                f"{avg(zero, 'numaplaced_scans_total') - avg(second, 'numaplaced_scans_total'):.0f} "
                f"more times per run "
                f"({(avg(zero, 'numaplaced_numa_maps_read_bytes_total') - avg(second, 'numaplaced_numa_maps_read_bytes_total')) / 2**20:.2f} MiB more) "
                f"and used {avg(zero, 'daemon_cpu_s') - avg(second, 'daemon_cpu_s'):+.2f} s more CPU: "
                f"the benchmark's own short-lived processes, read because they were "
                f"no longer too young to look at.")
    return out


def spawn_section(results):
    path = os.path.join(results, "spawn.txt")
    if not os.path.exists(path):
        return ["(not run)"]
    rows = {}
    died = []
    for line in open(path):
        f = line.split()
        if not f or f[0] != "spawn":
            continue
        config = f[4]
        rest = [x for x in f[5:] if x != "done"]
        kv = dict(zip(rest[0::2], rest[1::2]))
        if "daemon_died" in kv:
            died.append(f"round {f[2]} {config}")
        rows.setdefault(config, []).append(kv)
    out = ["| configuration | rounds | np-spawn processes | np-spawn ms | numa_maps reads | "
           "numa_maps KiB read | daemon CPU s |", "|---|---:|---:|---:|---:|---:|---:|"]
    labels = {"none": "no daemon", "delay0": "scan_delay_ms=0", "delay1000": "scan_delay_ms=1000"}
    for config in ("none", "delay0", "delay1000"):
        rs = rows.get(config, [])
        if not rs:
            continue

        def avg(key, scale=1.0):
            vals = [float(r[key]) * scale for r in rs if key in r]
            return statistics.fmean(vals) if vals else None
        out.append(f"| {labels[config]} | {len(rs)} | {fmt(avg('processes'), '{:.0f}')} | "
                   f"{fmt(avg('ms'), '{:.0f}')} | {fmt(avg('numaplaced_scans_total'), '{:.0f}')} | "
                   f"{fmt(avg('numaplaced_numa_maps_read_bytes_total', 1 / 1024), '{:.0f}')} | "
                   f"{fmt(avg('cpu_ticks', 0.01), '{:.2f}')} |")
    if died:
        out.append("")
        out.append(f"numaplaced died during: {', '.join(died)} (see the raw spawn.txt).")
    return out


def shortlived_rows(path):
    """{system: [ {"ms": .., "processes": .., ...}, ... ]} from shortlived.txt."""
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) < 5 or f[0] != "shortlived" or f[1] != "round":
            continue
        kv = dict(zip(f[5::2], f[6::2]))
        try:
            row = {k: float(v) for k, v in kv.items()}
        except ValueError:
            continue
        rows.setdefault(f[4], []).append(row)
    return rows


def shortlived_section(results):
    path = os.path.join(results, "shortlived.txt")
    if not os.path.exists(path):
        return ["(not run)"]
    rows = shortlived_rows(path)
    base = [r["ms"] for r in rows.get("none", []) if "ms" in r]
    base_ms = statistics.median(base) if base else None
    out = ["| system | runs | np-spawn s median / worst | against no balancing | "
           "placer CPU s median / worst | hog passes median |",
           "|---|---:|---:|---:|---:|---:|"]
    for system in SYSTEMS:
        rs = [r for r in rows.get(system, []) if "ms" in r]
        if not rs:
            continue
        ms = [r["ms"] for r in rs]
        cpu = [r.get("placer_cpu_s", 0.0) for r in rs]
        passes = [r.get("hog_passes", 0.0) for r in rs]
        ratio = f"{statistics.median(ms) / base_ms:.3f}x" if base_ms else "-"
        placer = (f"{statistics.median(cpu):.2f} / {max(cpu):.2f}"
                  if system not in ("none", "kernel") else "-")
        failed = sum(r.get("failed", 0.0) for r in rs)
        out.append(f"| {SYSTEM_LABELS.get(system, system)} | {len(rs)} | "
                   f"{statistics.median(ms) / 1000:.1f} / {max(ms) / 1000:.1f} | {ratio} | "
                   f"{placer} | {statistics.median(passes):.0f} |"
                   + (f" ({failed:.0f} processes failed)" if failed else ""))
    notes = []
    for system, rs in rows.items():
        spawn_failed = sum(1 for r in rs if r.get("spawn_status"))
        died = sum(1 for r in rs if r.get("placer_died"))
        if spawn_failed:
            notes.append(f"{SYSTEM_LABELS.get(system, system)}: np-spawn failed in "
                         f"{spawn_failed} round(s)")
        if died:
            notes.append(f"{SYSTEM_LABELS.get(system, system)}: the placer died in "
                         f"{died} round(s), its CPU time is not counted there")
    if notes:
        out += ["", "; ".join(notes) + " (see the raw shortlived.txt)."]
    return out


# ---- The planner's cost -----------------------------------------------------

# One plan of this many tasks on this many nodes in at most this many ms.
PLANNER_GOAL = (10000, 8, 5.0)


def planner_rows(path):
    """[(tasks, nodes, cpus, ms, ns per task and node, tasks sent), ...]
    from bench-planner's output, its header and any other line left out."""
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) != 6:
            continue
        try:
            rows.append((int(f[0]), int(f[1]), int(f[2]), float(f[3]), float(f[4]),
                         int(f[5])))
        except ValueError:
            continue
    return rows


def planner_section(results):
    path = os.path.join(results, "planner.txt")
    if not os.path.exists(path):
        return ["(not run)"]
    rows = planner_rows(path)
    if not rows:
        return ["(no result: see the raw planner.txt)"]
    out = ["| tasks | nodes | CPUs | one plan: CPU ms, median of 15 | ns per task and node | "
           "tasks sent to another node |",
           "|---:|---:|---:|---:|---:|---:|"]
    for tasks, nodes, cpus, ms, ns, sent in rows:
        out.append(f"| {tasks:,} | {nodes} | {cpus} | {ms:.3f} | {ns:.2f} | {sent:,} |")
    out.append("")
    tasks, nodes, limit = PLANNER_GOAL
    goal = [r for r in rows if r[0] == tasks and r[1] == nodes]
    if goal:
        ms = goal[0][3]
        out.append(f"- Goal: one plan over {tasks:,} tasks on {nodes} nodes ({goal[0][2]} CPUs) "
                   f"in at most {limit:g} ms. Measured: {ms:.2f} ms: "
                   f"{'met' if ms <= limit else 'not met'}.")
    else:
        out.append(f"- Goal: one plan over {tasks:,} tasks on {nodes} nodes in at most "
                   f"{limit:g} ms: that size was not run.")
    timed = [r for r in rows if r[3] > 0]  # a plan under the clock's grain has no log
    sizes = {(r[0] * r[1]) for r in timed}
    if len(sizes) > 1:
        # The cost should grow no faster than tasks x nodes: the slope of
        # log(time) against log(tasks x nodes), least squares over the rows.
        xs = [math.log(r[0] * r[1]) for r in timed]
        ys = [math.log(r[3]) for r in timed]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
                 sum((x - mx) ** 2 for x in xs))
        per = [r[4] for r in timed]
        out.append(f"- Growth: over the {len(timed)} sizes the time grows as (tasks × nodes) "
                   f"to the power {slope:.2f}, "
                   + ("no faster than tasks × nodes" if slope <= 1.0 else
                      "faster than tasks × nodes")
                   + f"; {min(per):.2f} to {max(per):.2f} ns per task and node.")
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    results, doc, plot_dir = sys.argv[1:]
    doc_dir = os.path.dirname(os.path.abspath(doc))
    os.makedirs(plot_dir, exist_ok=True)
    machine = {}
    path = os.path.join(results, "machine.txt")
    if os.path.exists(path):
        for line in open(path):
            if ":" in line:
                k, v = line.split(":", 1)
                machine[k.strip()] = v.strip()
    placement, notes = placement_section(results, doc_dir, os.path.abspath(plot_dir))
    parts = {
        "machine": "\n".join(f"- {k}: {v}" for k, v in machine.items()),
        "placement": "\n".join(placement),
        "placement_notes": "\n".join(notes) if notes else "",
        "throughput": "\n".join(throughput_section(results, doc_dir,
                                                      os.path.abspath(plot_dir))),
        "host": "\n".join(host_section(results)),
        "spawn": "\n".join(spawn_section(results)),
        "shortlived": "\n".join(shortlived_section(results)),
        "planner": "\n".join(planner_section(results)),
    }
    template = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "benchmarks.md.in")).read()
    with open(doc, "w") as f:
        f.write(template.format(**parts))


if __name__ == "__main__":
    main()
