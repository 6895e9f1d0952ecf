#!/usr/bin/env python3
"""hog-placement: a task bound to node 1 has at least 95% of its memory on
node 1 in numaplaced's report, and the report's per-node figures match
numastat -p for it, read just before and after, within 1 MiB or 2%."""
import vmcheck

MIB = 1 << 20


def numastat_totals(text):
    """Per-node MiB from the "Total" row of numastat -p output."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == "Total":
            return [float(w) for w in words[1:-1]]
    raise ValueError("no Total row in numastat output")


checks = vmcheck.Checks()
pid = int(checks.text("pid"))
task = vmcheck.report_task(checks, checks.json("report.json"), pid)
if task:
    share = vmcheck.node_share(task, 1)
    checks.check(share >= 0.95, f"only {share:.1%} of the hog's memory on node 1")
    checks.check(task["rss_bytes"] >= 128 * MIB,
                 f"rss_bytes {task['rss_bytes']} below the hog's 128 MiB")
    before = numastat_totals(checks.text("numastat-before.txt"))
    after = numastat_totals(checks.text("numastat.txt"))
    for node, mib in enumerate(after):
        reported = task["node_bytes"].get(str(node), 0) / MIB
        low, high = min(before[node], mib), max(before[node], mib)
        slack = max(1.0, 0.02 * high)
        checks.check(low - slack <= reported <= high + slack,
                     f"node {node}: report {reported:.2f} MiB, numastat {low:.2f}-{high:.2f} MiB")
checks.done()
