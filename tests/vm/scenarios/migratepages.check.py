#!/usr/bin/env python3
"""migratepages: the report before the move has the hog's memory on node 1,
the first report after `migratepages PID 1 0` has it on node 0."""
import vmcheck

checks = vmcheck.Checks()
pid = int(checks.text("pid"))
for name, node in (("report-before.json", 1), ("report-after.json", 0)):
    task = vmcheck.report_task(checks, checks.json(name), pid)
    if task:
        share = vmcheck.node_share(task, node)
        checks.check(share >= 0.95, f"{name}: only {share:.1%} of the hog's memory on node {node}")
checks.done()
