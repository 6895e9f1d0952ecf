#!/bin/sh
# Run the placement scenarios RUNS times in fresh guests of one topology and
# keep each run's results apart, for tests/bench/repeat-summary.py to give
# the median and the worst of each scenario and system. The guest moves
# threads about at random and shares the host's CPUs, so one run is not a
# result.
#
# usage: repeat-placement.sh --build-dir DIR --topology NAME --runs N --out DIR
# BENCH_SCENARIOS, BENCH_SYSTEMS and BENCH_SECONDS narrow the runs as for
# bench-placement (tests/bench/README.md).
set -eu

bench=$(cd "$(dirname "$0")" && pwd)
build= topology= runs=3 out=
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) build=${2:?}; shift ;;
	--topology) topology=${2:?}; shift ;;
	--runs) runs=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	*) echo "$0: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$build" ] && [ -n "$topology" ] && [ -n "$out" ] ||
	{ echo "usage: $0 --build-dir DIR --topology NAME --runs N --out DIR" >&2; exit 2; }
mkdir -p "$out"
for k in $(seq 1 "$runs"); do
	dest=$out/$topology/run-$k
	rm -rf "$dest"
	mkdir -p "$dest"
	start=$(date +%s)
	"$bench/vm-bench.sh" --build-dir "$build" --topology "$topology" --timeout 3000 \
		bench-placement >"$dest/vm.log" 2>&1 ||
		echo "$0: run $k: vm-bench.sh failed, see $dest/vm.log" >&2
	cp "$build/vm-out/$topology-bench-placement"/bench-placement/*.txt "$dest/" 2>/dev/null ||
		echo "$0: run $k: no results" >&2
	echo "$topology run $k: $(($(date +%s) - start)) s"
done
