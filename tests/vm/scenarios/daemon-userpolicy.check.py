#!/usr/bin/env python3
"""daemon-userpolicy: the JSON report keeps the hog whose memory is under its
own policy (prefer:1, from numactl --preferred=1) with reason user-policy,
moves nothing, and its reason text names the policy and an amount."""
import re

import vmcheck

MIB = 1 << 20

checks = vmcheck.Checks()
report = checks.json("report.json")
tasks = [t for t in report.get("tasks", []) if t.get("comm") == "np-hog"]
if checks.equal(len(tasks), 1, "np-hog tasks in the report"):
    task = tasks[0]
    checks.equal(task["decision"], "keep", "decision")
    checks.equal(task["reason"], "user-policy", "reason")
    checks.equal(task["move_bytes"], 0, "move_bytes")
    checks.check(re.search(r"\d.*\bprefer\b", task["reason_text"]) is not None,
                 f"reason_text {task['reason_text']!r} names no amount under the policy prefer")
    share = vmcheck.node_share(task, 1)
    checks.check(share >= 0.9, f"only {share:.1%} of the hog's memory on node 1")
    checks.check(task["rss_bytes"] >= 64 * MIB, f"rss_bytes {task['rss_bytes']} below 64 MiB")
checks.done()
