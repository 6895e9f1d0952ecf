"""Helpers for the host-side checks of guest scenarios (NAME.check.py).

A check is run as: NAME.check.py OUTDIR TOPOLOGY_FILE, where OUTDIR holds the
files the scenario sent (np_emit) and guest.log, its console output.
"""
import json
import os
import sys


class Checks:
    """Counts checks and failures; done() prints the tally and exits."""

    def __init__(self):
        self.outdir, self.topology_file = sys.argv[1:3]
        self.count = 0
        self.failures = 0

    def check(self, ok, message):
        self.count += 1
        if not ok:
            self.failures += 1
            print(f"FAIL: {message}")
        return ok

    def equal(self, got, expected, what):
        return self.check(got == expected, f"{what}: got {got!r}, expected {expected!r}")

    def path(self, name):
        return os.path.join(self.outdir, name)

    def text(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def json(self, name):
        try:
            with open(self.path(name)) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            print(f"FAIL: {name}: {e}")
            sys.exit(1)

    def topology(self):
        return parse_topology(self.topology_file)

    def done(self):
        print(f"{self.count - self.failures} of {self.count} checks passed")
        sys.exit(1 if self.failures else 0)


def parse_list(text):
    """"0-2,5" -> [0, 1, 2, 5]"""
    ids = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return ids


def parse_topology(path):
    """The topology file run-vm.sh gave QEMU: {node id: {"cpus": [...],
    "mem_bytes": N, "distances": [...]}}."""
    nodes = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            node = int(words[1])
            if words[0] == "node":
                settings = dict(w.split("=", 1) for w in words[2:])
                size = settings["mem"]
                scale = {"M": 1 << 20, "G": 1 << 30}[size[-1]]
                nodes.setdefault(node, {})
                nodes[node]["cpus"] = parse_list(settings.get("cpus", ""))
                nodes[node]["mem_bytes"] = int(size[:-1]) * scale
            elif words[0] == "distance":
                nodes.setdefault(node, {})["distances"] = [int(w) for w in words[2:]]
            else:
                raise ValueError(f"{path}:{number}: unknown line {line.strip()!r}")
    return nodes


def report_task(checks, report, pid):
    """The task with @pid in a numaplaced --report --json report, or None
    (a failed check)."""
    for task in report.get("tasks", []):
        if task.get("pid") == pid:
            return task
    checks.check(False, f"pid {pid} is not in the report")
    return None


def node_share(task, node):
    """Fraction of a report task's bytes that are on @node."""
    per_node = {int(k): v for k, v in task["node_bytes"].items()}
    total = sum(per_node.values())
    return per_node.get(node, 0) / total if total else 0.0
