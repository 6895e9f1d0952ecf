#!/usr/bin/env python3
"""daemon-status: the running daemon's --status --json shows the hog whose
memory it moved from node 1 to node 0: on node 0, looked at more than
once, at least 32 MiB moved by it, and its last action a move of pages to
node 0 that was done, with its reason and the reason's words."""
import vmcheck

MIB = 1 << 20

checks = vmcheck.Checks()
pid = int(checks.text("pid"))
status = checks.json("status.json")
checks.check(status.get("live", {}).get("dry_run") is False, "live.dry_run is not false")
checks.equal(len(status["topology"]["nodes"]), 2, "nodes in the status")
tasks = [t for t in status.get("tasks", []) if t.get("pid") == pid]
if checks.equal(len(tasks), 1, f"tasks with pid {pid} in the status"):
    task = tasks[0]
    live = task["live"]
    last = live["last_action"]
    checks.equal(task["comm"], "np-hog", "comm")
    checks.equal(task["run_node"], 0, "run_node")
    checks.equal(task["home_node"], 0, "home_node")
    checks.check(live["looks"] >= 2, f"looks {live['looks']}: fewer than 2")
    checks.check(live["moved_bytes"] >= 32 * MIB,
                 f"moved_bytes {live['moved_bytes']}: below 32 MiB of a 64 MiB hog")
    if checks.check(last is not None, "no last_action"):
        checks.equal(last["decision"], "move", "last_action.decision")
        checks.equal(last["reason"], "misplaced", "last_action.reason")
        checks.equal(last["target_node"], 0, "last_action.target_node")
        checks.check(last["move_pages"], "last_action.move_pages is false")
        checks.equal(last["outcome"], "done", "last_action.outcome")
        checks.check(last["moved_bytes"] > 0, f"last_action.moved_bytes {last['moved_bytes']}")
        checks.check("node 0" in last["reason_text"],
                     f"last_action.reason_text {last['reason_text']!r} does not name node 0")
    share = vmcheck.node_share(task, 0)
    checks.check(share >= 0.9, f"only {share:.1%} of the hog's memory on node 0 in the status")
text = checks.text("status.txt")
checks.check(f"{pid} np-hog" in text and "last action" in text and "LOOKS" in text,
             "status.txt lacks the hog's row, its last action or the status columns")
checks.done()
