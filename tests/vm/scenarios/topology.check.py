#!/usr/bin/env python3
"""topology: numaplaced's report inside the guest names exactly the nodes,
CPUs, distances and memory sizes QEMU was given, memory-only nodes
included, and agrees with /sys to the byte."""
import vmcheck
from vmcheck import parse_list

checks = vmcheck.Checks()
expected = checks.topology()
report = checks.json("report.json")

sysfs = {}
for line in checks.text("sysfs.txt").splitlines():
    name, _, rest = line.partition(" ")
    sysfs[name] = rest

ids = sorted(expected)
checks.equal(parse_list(sysfs["online"]), ids, "/sys node online")
checks.equal(parse_list(sysfs["has_cpu"]), [n for n in ids if expected[n]["cpus"]],
             "/sys has_cpu")
checks.equal(parse_list(sysfs["has_memory"]), ids, "/sys has_memory")

nodes = {n["id"]: n for n in report["topology"]["nodes"]}
checks.equal(sorted(nodes), ids, "report node ids")
for node_id in ids:
    want = expected[node_id]
    got = nodes.get(node_id)
    if got is None:
        continue
    what = f"node {node_id}"
    checks.equal(got["cpus"], want["cpus"], f"{what} cpus")
    checks.equal(got["distances"], want["distances"], f"{what} distances")
    # MemTotal leaves out what the kernel reserved at boot: its image, the
    # initramfs, the 64 MiB bounce buffer (swiotlb); which node each lands on
    # varies, so a node may show up to 30% less than QEMU gave it.
    total = got["mem_total_bytes"]
    checks.check(0.7 * want["mem_bytes"] <= total <= want["mem_bytes"],
                 f"{what} mem_total_bytes {total} not within 70-100% of {want['mem_bytes']}")
    fields = dict(kv.split("=", 1) for kv in sysfs[f"node{node_id}"].split())
    checks.equal(total, int(fields["memtotal_kb"]) * 1024, f"{what} mem_total_bytes vs /sys")
    checks.equal(parse_list(fields["cpulist"]), got["cpus"], f"{what} cpus vs /sys")
    checks.check(0 < got["mem_free_bytes"] <= total,
                 f"{what} mem_free_bytes {got['mem_free_bytes']} not in (0, {total}]")
checks.done()
