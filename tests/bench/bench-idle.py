#!/usr/bin/env python3
"""The daemon's CPU per placement cycle against the number of idle tasks.

For each case (the host as it is, then 100, 1,000 and 10,000 idle processes
more, then one process of 10,000 idle threads) a dry-run daemon with the
default configuration, but --tick-ms as given, runs here; its metrics
endpoint is asked every few milliseconds, and each cycle's CPU time is the
growth of numaplaced_tick_cpu_seconds_total across exactly one more
numaplaced_ticks_total (the cycle's whole handler, on the main thread). The
daemon's process CPU (utime + stime) over the same stretch is shown beside,
per cycle. Idle tasks use no CPU, so they cost the daemon only its looks at
them: a cost that grows with them is a cost of the machine's size.

usage: bench-idle.py BUILD_DIR [--ticks N] [--tick-ms MS] [--port P]
       [--cases host,p100,p1000,p10000,t10000] [--set KEY=VALUE ...]
Prints one line per case, then a Markdown table.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

CASES = {
    "host": None,
    "p100": ("--processes", 100),
    "p1000": ("--processes", 1000),
    "p10000": ("--processes", 10000),
    "t10000": ("--threads", 10000),
}


def proc_tasks():
    """Processes and threads /proc lists now."""
    procs = threads = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            procs += 1
            try:
                threads += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return procs, threads


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("numaplaced_ticks_total ") or line.startswith(
            "numaplaced_tick_cpu_seconds_total "
        ):
            name, value = line.split()
            out[name] = float(value)
    return out["numaplaced_ticks_total"], out["numaplaced_tick_cpu_seconds_total"]


def process_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_case(args, name, work):
    holder = None
    if CASES[name]:
        kind, n = CASES[name]
        holder = subprocess.Popen(
            [os.path.join(args.build, "tests/bench/idle-tasks"), kind, str(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = holder.stdout.readline()
        if not line.startswith("ready"):
            sys.exit(f"bench-idle: idle-tasks {kind} {n} did not start")
    procs, threads = proc_tasks()
    conf = os.path.join(work, "numaplaced.conf")
    with open(conf, "w") as f:
        f.write(f"tick_ms = {args.tick_ms}\nmetrics_listen = 127.0.0.1:{args.port}\n"
                "log_level = warning\n")
        for setting in args.set:
            key, _, value = setting.partition("=")
            f.write(f"{key.strip()} = {value.strip()}\n")
    daemon = subprocess.Popen(
        [os.path.join(args.build, "daemon/numaplaced"), "--foreground", "--dry-run",
         "-c", conf, "--runtime-dir", os.path.join(work, "run")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                ticks, cpu = metrics(args.port)
                if ticks >= 2:  # the first cycle reads every task's state anew
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or daemon.poll() is not None:
                sys.exit(f"bench-idle: {name}: the daemon did not start")
            time.sleep(0.01)
        # Tasks the daemon need not look at are read less and less often,
        # down to once every scan_period_max_ms: what an idle machine costs
        # once that is reached is the figure; the start is shown apart.
        warm_until = time.monotonic() + args.warmup_s
        warm = []
        while time.monotonic() < warm_until:
            time.sleep(args.tick_ms / 1000 / 4)
            t, c = metrics(args.port)
            if t == ticks + 1:
                warm.append((c - cpu) * 1000)
            ticks, cpu = t, c
        per_tick = []
        start_ticks, start_cpu = ticks, cpu
        start_proc = process_cpu_s(daemon.pid)
        while len(per_tick) < args.ticks:
            time.sleep(args.tick_ms / 1000 / 4)
            t, c = metrics(args.port)
            if t == ticks + 1:
                per_tick.append((c - cpu) * 1000)
            ticks, cpu = t, c
        proc_per_tick = (process_cpu_s(daemon.pid) - start_proc) / (ticks - start_ticks) * 1000
    finally:
        daemon.terminate()
        daemon.wait()
        if holder:
            holder.stdin.close()
            holder.wait()
    return {
        "case": name, "procs": procs, "threads": threads, "n": len(per_tick),
        "warm_mean": statistics.mean(warm) if warm else 0.0,
        "median": statistics.median(per_tick), "mean": statistics.mean(per_tick),
        "p90": sorted(per_tick)[int(len(per_tick) * 0.9) - 1],
        "max": max(per_tick), "proc": proc_per_tick,
        "us_per_proc": statistics.median(per_tick) * 1000 / procs,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--ticks", type=int, default=60)
    ap.add_argument("--tick-ms", type=int, default=1000)
    ap.add_argument("--port", type=int, default=19465)
    ap.add_argument("--warmup-s", type=float, default=130.0)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for the daemon's configuration (repeatable), "
                    "e.g. run_sample_hz=0 for a baseline without CPU samples")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as work:
        for name in args.cases.split(","):
            if name not in CASES:
                sys.exit(f"bench-idle: no case {name!r} (one of {', '.join(CASES)})")
            r = run_case(args, name, work)
            rows.append(r)
            print(f"{r['case']}: {r['procs']} processes, {r['threads']} threads: "
                  f"CPU per cycle median {r['median']:.2f} ms, 90th {r['p90']:.2f}, "
                  f"max {r['max']:.2f} over {r['n']} cycles; process CPU per cycle "
                  f"{r['proc']:.2f} ms; {r['us_per_proc']:.1f} us per process; "
                  f"{r['warm_mean']:.2f} ms per cycle on average before; "
                  f"mean {r['mean']:.2f} ms", flush=True)
    print()
    print("| case | processes | threads | CPU per cycle, median ms | 90th ms | max ms "
          "| mean ms | process CPU per cycle ms | µs per process |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['procs']} | {r['threads']} | {r['median']:.2f} "
              f"| {r['p90']:.2f} | {r['max']:.2f} | {r['mean']:.2f} | {r['proc']:.2f} "
              f"| {r['us_per_proc']:.1f} |")


if __name__ == "__main__":
    main()
