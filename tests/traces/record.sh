#!/bin/sh
# Record the traces of this directory again on the machine at hand:
#   tests/traces/record.sh [BUILD_DIR]     (default: build)
# Each trace lists every process of the machine, every 50 ms, while the
# workload runs. Needs gcc, make and hackbench (rt-tests).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
record="$build/tests/tools/record-trace"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Many short compiler runs, like a kernel build: make -j2 over a generated
# tree, twice.
"$here/gen-tree.sh" "$work/tree" 120
"$record" -i 50 -c "kbuild: make -j2 over 120 generated C files, twice; $(uname -r), $(nproc) CPUs" \
	"$here/kbuild.trace" \
	sh -c "cd '$work/tree' && for round in 1 2; do make -s -j2 && make -s clean; done"

# Process-mode hackbench: groups of 40 processes passing messages; short
# runs (under a second) alternate with longer ones (several seconds).
"$record" -i 50 -c "hackbench: 8 rounds of hackbench -g 2 -l 50 then -l 400; $(uname -r), $(nproc) CPUs" \
	"$here/hackbench.trace" \
	sh -c 'for round in 1 2 3 4 5 6 7 8; do hackbench -g 2 -l 50 && hackbench -g 2 -l 400; done >/dev/null'
ls -l "$here"/*.trace
