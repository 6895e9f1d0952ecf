#!/bin/sh
# Run benchmark scenarios (tests/bench/guest/NAME.sh) in the test guest of
# tests/vm, unchanged: a staging tree beside the build directory links the
# harness files and adds the benchmark scenarios, the benchmark topologies and
# the extra guest programs (numad, util-linux unshare, coreutils
# date, bench-migrate, bench-sample, bench-procread), then
# tests/vm/run-vm.sh boots from there.
#
# usage: vm-bench.sh --build-dir DIR --topology NAME [--timeout SEC] SCENARIO...
# Output: DIR/vm-out/NAME-SCENARIO+.../SCENARIO/* (see tests/vm/README.md).
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
bench=$src/tests/bench
build=
topology=
timeout=1800
scenarios=
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) build=${2:?}; shift ;;
	--topology) topology=${2:?}; shift ;;
	--timeout) timeout=${2:?}; shift ;;
	-*) echo "$0: unknown option $1" >&2; exit 2 ;;
	*) scenarios="$scenarios $1" ;;
	esac
	shift
done
[ -n "$build" ] && [ -n "$topology" ] && [ -n "$scenarios" ] ||
	{ echo "usage: $0 --build-dir DIR --topology NAME [--timeout SEC] SCENARIO..." >&2; exit 2; }
[ -x "$src/tests/vm/run-vm.sh" ] || { echo "$0: no tests/vm/run-vm.sh in this tree" >&2; exit 2; }
build=$(cd "$build" && pwd)

# numad from Debian's package, unpacked (not installed: installing would
# start it on this host).
numad_root=$build/bench-cache/numad
if [ ! -x "$numad_root/usr/bin/numad" ]; then
	rm -rf "$numad_root.tmp"
	mkdir -p "$numad_root.tmp"
	(cd "$numad_root.tmp" && { apt-get download -q numad ||
		{ apt-get update -q && apt-get download -q numad; }; })
	dpkg-deb -x "$numad_root.tmp"/numad_*.deb "$numad_root.tmp/root"
	rm -rf "$numad_root"
	mv "$numad_root.tmp/root" "$numad_root"
	rm -rf "$numad_root.tmp"
fi

stage=$build/bench-stage
rm -rf "$stage"
mkdir -p "$stage/tests/vm/scenarios" "$stage/tests/vm/topologies"
for f in run-vm.sh console.py init.sh guest-lib.sh; do
	ln -s "$src/tests/vm/$f" "$stage/tests/vm/$f"
done
ln -s "$src/tests/install-deps.sh" "$stage/tests/install-deps.sh"
ln -s "$src/conf" "$stage/conf"
for f in "$src"/tests/vm/topologies/*.conf "$bench"/topologies/*.conf; do
	ln -s "$f" "$stage/tests/vm/topologies/"
done
# run-vm.sh copies every scenarios/*.sh into the guest; the benchmark's own
# helpers travel the same way.
for f in "$bench"/guest/*; do
	ln -s "$f" "$stage/tests/vm/scenarios/"
done
{
	cat "$src/tests/vm/guest-tools"
	echo "$numad_root/usr/bin/numad"
	echo /usr/bin/unshare
	echo /usr/bin/date
	echo "$build/tests/bench/bench-migrate"
	echo "$build/tests/bench/bench-sample"
	echo "$build/tests/bench/bench-procread"
	# A profile of the placer (BENCH_PERF=1) takes the host's perf.
	if [ -n "${BENCH_PERF:-}" ]; then
		command -v perf >/dev/null || { echo "$0: BENCH_PERF set, no perf on this host" >&2; exit 2; }
		command -v perf
	fi
} >"$stage/tests/vm/guest-tools"
# Where the guest finds what the host paths above became.
cat >"$stage/tests/vm/scenarios/bench-env.sh" <<ENV
BENCH_NUMAD=$numad_root/usr/bin/numad
BENCH_MIGRATE=$build/tests/bench/bench-migrate
BENCH_SAMPLE=$build/tests/bench/bench-sample
BENCH_PROCREAD=$build/tests/bench/bench-procread
BENCH_MIGRATE_RUNS=${BENCH_MIGRATE_RUNS:-5}
BENCH_SECONDS=${BENCH_SECONDS:-20}
BENCH_SCENARIO_SECONDS="${BENCH_SCENARIO_SECONDS:-}"
BENCH_SCENARIOS="${BENCH_SCENARIOS:-}"
BENCH_SYSTEMS="${BENCH_SYSTEMS:-}"
BENCH_RUNS="${BENCH_RUNS:-}"
BENCH_NUMAPLACED_ARGS="${BENCH_NUMAPLACED_ARGS:-}"
BENCH_NUMAPLACED_SETTING="${BENCH_NUMAPLACED_SETTING:-}"
BENCH_LOG_LINES=${BENCH_LOG_LINES:-40}
BENCH_SPAWN_ROUNDS=${BENCH_SPAWN_ROUNDS:-2}
BENCH_SPAWN_COUNT=${BENCH_SPAWN_COUNT:-200}
BENCH_SHORTLIVED_ROUNDS=${BENCH_SHORTLIVED_ROUNDS:-3}
BENCH_SHORTLIVED_COUNT=${BENCH_SHORTLIVED_COUNT:-2000}
BENCH_SHORTLIVED_LIFE_MS=${BENCH_SHORTLIVED_LIFE_MS:-40}
BENCH_SHORTLIVED_SYSTEMS="${BENCH_SHORTLIVED_SYSTEMS:-}"
BENCH_PERF="${BENCH_PERF:-}"
BENCH_PERF_HZ="${BENCH_PERF_HZ:-}"
BENCH_STALL_ROUNDS="${BENCH_STALL_ROUNDS:-}"
BENCH_STALL_PHASES="${BENCH_STALL_PHASES:-}"
BENCH_MOVESTALL_PHASES="${BENCH_MOVESTALL_PHASES:-}"
BENCH_STALL_SAMPLE="${BENCH_STALL_SAMPLE:-}"
ENV

# shellcheck disable=SC2086
exec "$stage/tests/vm/run-vm.sh" --build-dir "$build" --topology "$topology" \
	--timeout "$timeout" $scenarios
