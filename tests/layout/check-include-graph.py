#!/usr/bin/env python3
"""lib/'s modules include one another in one direction only.

A module is a lib/NAME.{c,h} pair; NAME depends on OTHER when either of its
files includes "OTHER.h". The graph must have no cycle: data flows from
observation to the snapshot, and nothing below includes its way back up
(docs/architecture.md). Prints the first cycle found and exits 1, or prints
the modules in an order where each comes after what it includes.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(lib):
    mods = {os.path.splitext(f)[0] for f in os.listdir(lib) if f.endswith((".c", ".h"))}
    deps = {m: set() for m in mods}
    for f in os.listdir(lib):
        name, ext = os.path.splitext(f)
        if ext not in (".c", ".h"):
            continue
        with open(os.path.join(lib, f), errors="replace") as fh:
            for inc in INCLUDE.findall(fh.read()):
                other = os.path.splitext(os.path.basename(inc))[0]
                if other != name and other in mods:
                    deps[name].add(other)
    return deps


def find_cycle(deps):
    state, path, order = {}, [], []

    def visit(m):
        state[m] = 1
        path.append(m)
        for d in sorted(deps[m]):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if not state.get(d):
                c = visit(d)
                if c:
                    return c
        state[m] = 2
        path.pop()
        order.append(m)
        return None

    for m in sorted(deps):
        if not state.get(m):
            c = visit(m)
            if c:
                return c, order
    return None, order


def main():
    lib = sys.argv[1] if len(sys.argv) > 1 else "lib"
    deps = graph(lib)
    if len(sys.argv) > 2 and sys.argv[2] == "--self-test":
        deps = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
        cycle, _ = find_cycle(deps)
        if cycle != ["a", "b", "c", "a"]:
            print("self-test: the cycle a -> b -> c -> a was not found:", cycle)
            return 1
        print("self-test: cycle found")
        return 0
    cycle, order = find_cycle(deps)
    if cycle:
        print("lib/ include cycle: " + " -> ".join(cycle))
        return 1
    print("lib/ modules, each after what it includes: " + " ".join(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
