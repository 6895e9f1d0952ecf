#!/usr/bin/env python3
"""daemon-home: while both hogs are homed, the running daemon's --status
--json gives each the home the guest saw it kept on (plan.home_node), and
the hog homed away from its memory (on node 1) shows at least 32 MiB moved
and a last action with reason home that narrowed its threads and moved
its pages there, done."""
import vmcheck

MIB = 1 << 20

checks = vmcheck.Checks()
words = checks.text("homes").split()
homes = {int(words[0]): int(words[1]), int(words[2]): int(words[3])}
status = checks.json("status.json")
tasks = {t["pid"]: t for t in status.get("tasks", []) if t.get("pid") in homes}
checks.equal(sorted(tasks), sorted(homes), "hogs in the status")
for pid, task in tasks.items():
    plan = task.get("plan") or {}
    checks.equal(plan.get("home_node"), homes[pid], f"pid {pid}: plan.home_node")
    checks.equal(plan.get("narrowed_to") is not None, True, f"pid {pid}: a narrowed mask")
    if homes[pid] != 1:
        continue
    live = task["live"]
    last = live["last_action"]
    checks.check(live["moved_bytes"] >= 32 * MIB,
                 f"pid {pid}: moved_bytes {live['moved_bytes']}, below 32 MiB of 64")
    if checks.check(last is not None, f"pid {pid}: no last_action"):
        checks.equal(last["reason"], "home", f"pid {pid}: last_action.reason")
        checks.equal(last["target_node"], 1, f"pid {pid}: last_action.target_node")
        checks.equal(last["outcome"], "done", f"pid {pid}: last_action.outcome")
        checks.check("home node 1" in last["reason_text"],
                     f"pid {pid}: last_action.reason_text {last['reason_text']!r}")
checks.done()
