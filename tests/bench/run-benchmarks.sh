#!/bin/sh
# Run every numaplaced benchmark and write docs/benchmarks.md with its plots
# (docs/benchmarks/*.png). See tests/bench/README.md.
#
# usage: tests/bench/run-benchmarks.sh [--build-dir DIR] [--results DIR] [--runs N]
#                                      [--parallel] [--guests-only] [--report-only]
#
# Steps, about 40 minutes on a quiet 2-core machine with one run of each
# placement scenario (--runs 1) before the split and churn scenarios came in
# (they add at least 8 minutes to each guest), and about 20 more per
# topology for each further run with every system (BENCH_SYSTEMS narrows
# them):
#   1. build the project (meson, ninja -j2) in DIR (default build-bench)
#   2. host: kbuild and hackbench without numaplaced and with it at
#      scan_delay_ms 0 and 1000 (host-overhead.sh); one plan of the whole
#      machine against its size (bench-planner, a few seconds)
#   3. 2-node guest: placement scenarios under each system, then migration
#      throughput; the placement scenarios again in N-1 more boots (--runs,
#      default 3: the guest moves unpinned threads at random, and one run
#      is not a result)
#   4. 4-node guest: the same, then np-spawn slow start; a 2-node
#      guest: short-lived processes beside a long task (bench-shortlived)
#   5. report.py writes docs/benchmarks.md from the results (the median and
#      the worst of the runs of each scenario and system)
# BENCH_HOST_RUNS (10), BENCH_SECONDS (20) and the BENCH_* knobs of
# vm-bench.sh change sizes; --report-only redoes step 5 from saved results.
# --guests-only redoes steps 3 and 4 and keeps the host results.
# --parallel runs steps 2, 3 and 4 at the same time, one boot of each guest
# part: about 25 minutes instead of 40 on a busy machine for one run each,
# at the price of the host timings sharing the CPUs with the guests (the
# ABC interleaving keeps the comparison fair, not quiet).
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build-bench
results=
report_only=false
runs=
parallel=false
guests_only=false
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) build=${2:?}; shift ;;
	--results) results=${2:?}; shift ;;
	--runs) runs=${2:?}; shift ;;
	--report-only) report_only=true ;;
	--parallel) parallel=true ;;
	--guests-only) guests_only=true ;;
	*) echo "usage: $0 [--build-dir DIR] [--results DIR] [--runs N] [--parallel] [--guests-only] [--report-only]" >&2; exit 2 ;;
	esac
	shift
done
case ${runs:-3} in
'' | 0* | *[!0-9]*) echo "$0: --runs wants a number of runs, 1 or more, not '$runs'" >&2; exit 2 ;;
esac
# --parallel stages its guests side by side: one boot per part.
if $parallel && ! $report_only && [ "${runs:-1}" != 1 ]; then
	echo "$0: --parallel runs each placement scenario once; drop --runs $runs or --parallel" >&2
	exit 2
fi
$parallel && runs=1
: "${runs:=3}"
: "${results:=$build/bench-results}"
bench=$src/tests/bench
raw=$src/docs/benchmarks/raw
# The report replaces the raw results of the last run with these: a
# directory without them would leave none, and the raw directory itself
# would be its own input.
if $report_only && ! ls -d "$results"/placement-* >/dev/null 2>&1; then
	echo "$0: --report-only: no placement results in $results" >&2
	exit 2
fi
if [ -d "$results" ] && [ -d "$raw" ] && [ "$(cd "$results" && pwd -P)" = "$(cd "$raw" && pwd -P)" ]; then
	echo "$0: --results is where the report puts its raw results ($raw): copy them elsewhere first" >&2
	exit 2
fi

log() {
	echo "bench: $(date -u +%H:%M:%S) $*"
}

if ! $report_only; then
	"$src/tests/install-deps.sh" build
	"$src/tests/install-deps.sh" vm
	for tool in gnuplot:gnuplot-nox perf:linux-perf; do
		command -v "${tool%%:*}" >/dev/null || apt-get install -y -q --no-install-recommends "${tool#*:}"
	done
	[ -d "$build" ] || meson setup "$build" "$src" --buildtype=debugoptimized >/dev/null
	ninja -C "$build" -j2 >/dev/null
	if $guests_only; then
		# Redo the guests only: keep the host results and their notes.
		rm -rf "$results"/placement-* "$results"/throughput.txt "$results"/spawn.txt "$results"/shortlived.txt
	else
		rm -rf "$results"
	fi
	mkdir -p "$results"
	$guests_only || {
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "host CPU: $(nproc) x $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
		echo "host memory: $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "host kernel: $(uname -r), $(cat /etc/debian_version 2>/dev/null | sed 's/^/Debian /')"
		echo "host NUMA nodes: $(ls -d /sys/devices/system/node/node* | wc -l)"
		echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$results/machine.txt"
	start=$(date +%s)

	host_part() {
		$guests_only && return
		log "host: kbuild and hackbench"
		"$bench/host-overhead.sh" "$build" "$results/host-overhead.txt" "${BENCH_HOST_RUNS:-10}"
		log "host: the planner against the machine's size"
		"$build/tests/bench/bench-planner" >"$results/planner.txt" ||
			log "host: bench-planner failed (see $results/planner.txt)"
		log "host: done"
	}
	# One boot: bench-placement for SCENARIOS, then EXTRA (if any); the
	# results of boot RUN go to placement-TOPOLOGY/run-RUN/.
	#   guest_part TOPOLOGY RUN "SCENARIOS" [EXTRA]
	guest_part() {
		topology=$1
		run=$2
		scenarios=$3
		extra=${4:-}
		tag=$topology-bench-placement${extra:++$extra}
		log "guest $topology, run $run: $scenarios $extra"
		# No file of an earlier boot may pass for this one's, should it
		# fail before it writes its own.
		rm -rf "$build/vm-out/$tag"
		BENCH_SCENARIOS=$scenarios "$bench/vm-bench.sh" --build-dir "$build" \
			--topology "$topology" --timeout 3000 bench-placement $extra \
			>"$results/vm-$tag-$run.log" 2>&1 ||
			log "guest $topology: a scenario failed (results kept; see $results/vm-$tag-$run.log)"
		dest=$results/placement-${topology#bench-}/run-$run
		mkdir -p "$dest"
		cp "$build/vm-out/$tag"/bench-placement/*.txt "$dest/" 2>/dev/null || true
		[ -z "$extra" ] || cp "$build/vm-out/$tag/$extra"/*.txt "$results/" 2>/dev/null || true
		log "guest $topology, run $run: $scenarios $extra: done"
	}
	# The boots of one topology: the first with EXTRA, the others without.
	#   guest_runs TOPOLOGY "SCENARIOS" [EXTRA]
	guest_runs() {
		guest_part "$1" 1 "$2" "${3:-}"
		k=2
		while [ "$k" -le "$runs" ]; do
			guest_part "$1" "$k" "$2"
			k=$((k + 1))
		done
	}
	# numad waits for several samples before its first move, longer than
	# the runs above: the misplaced task once more over a minute.
	long_part() {
		log "guest bench-2node: misplaced over 60 s"
		rm -rf "$build/vm-out/bench-2node-bench-placement"
		BENCH_SECONDS=60 BENCH_SCENARIOS=misplaced BENCH_SYSTEMS="numad numad-i5 numaplaced" \
			"$bench/vm-bench.sh" --build-dir "$build" --topology bench-2node --timeout 1800 \
			bench-placement >"$results/vm-bench-2node-60s.log" 2>&1 ||
			log "guest bench-2node, 60 s: a scenario failed"
		mkdir -p "$results/placement-2node-60s/run-1"
		cp "$build"/vm-out/bench-2node-bench-placement/bench-placement/*.txt \
			"$results/placement-2node-60s/run-1/" 2>/dev/null || true
		log "guest bench-2node, 60 s: done"
	}
	# Short-lived processes beside a long task, every system interleaved.
	shortlived_part() {
		log "guest bench-2node: short-lived processes"
		rm -rf "$build/vm-out/bench-2node-bench-shortlived"
		"$bench/vm-bench.sh" --build-dir "$build" --topology bench-2node --timeout 3000 \
			bench-shortlived >"$results/vm-bench-2node-shortlived.log" 2>&1 ||
			log "guest bench-2node, short-lived processes: a run failed"
		cp "$build"/vm-out/bench-2node-bench-shortlived/bench-shortlived/shortlived.txt \
			"$results/" 2>/dev/null || true
		log "guest bench-2node, short-lived processes: done"
	}
	# Guests of one build directory stage their initramfs in the same
	# place: the next one starts once the last one has booted from its own.
	wait_booted() {
		tries=0
		until grep -q 'vm: booted' "$results/vm-$1.log" 2>/dev/null || [ $tries -ge 900 ]; do
			sleep 1
			tries=$((tries + 1))
		done
	}
	first="misplaced compete big"
	second="spread shift split churn"
	if $parallel; then
		host_part &
		jobs_started=$!
		guest_part bench-2node 1 "$first" bench-throughput &
		jobs_started="$jobs_started $!"
		wait_booted bench-2node-bench-placement+bench-throughput-1
		guest_part bench-4node 1 "$first" bench-spawn &
		jobs_started="$jobs_started $!"
		wait_booted bench-4node-bench-placement+bench-spawn-1
		{ guest_part bench-2node 1 "$second" && long_part && shortlived_part; } &
		jobs_started="$jobs_started $!"
		wait_booted bench-2node-bench-placement-1
		guest_part bench-4node 1 "$second" &
		# shellcheck disable=SC2086
		wait $jobs_started $!
		echo "run: host and four guests at the same time (--parallel)" >>"$results/machine.txt"
	else
		host_part
		guest_runs bench-2node "$first $second" bench-throughput
		guest_runs bench-4node "$first $second" bench-spawn
		long_part
		shortlived_part
		echo "run: host, then each guest (sequential); placement: $runs boots per topology, one for 2node-60s" >>"$results/machine.txt"
	fi
	echo "host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/machine.txt"
	kernel=$(ls "$build"/vm-kernel/*/boot/vmlinuz-* | head -n 1)
	{
		echo "guest kernel: Debian's $(basename "$kernel" | sed 's/^vmlinuz-//'), QEMU $(qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }') TCG (software emulation)"
		echo "guest topologies: $(grep -h '^node' "$bench"/topologies/bench-2node.conf | tr '\n' ';' ) and $(grep -h '^node' "$bench"/topologies/bench-4node.conf | tr '\n' ';')"
		echo "numad: Debian package $(apt-cache show numad 2>/dev/null | awk '/^Version/ { print $2; exit }')"
		echo "total time: $((($(date +%s) - start) / 60)) min"
	} >>"$results/machine.txt"
fi

mkdir -p "$src/docs/benchmarks"
rm -f "$src"/docs/benchmarks/*.png
python3 "$bench/report.py" "$results" "$src/docs/benchmarks.md" "$src/docs/benchmarks"
# Keep the raw results beside the document, in place of the last ones; the
# other series there (the sections of docs/benchmarks-*.md) stay.
mkdir -p "$raw"
rm -rf "$raw"/placement-* "$raw"/machine.txt "$raw"/host-overhead.txt "$raw"/throughput.txt \
	"$raw"/spawn.txt "$raw"/shortlived.txt "$raw"/planner.txt
cp -r "$results"/*.txt "$results"/placement-* "$raw/" 2>/dev/null || true
log "wrote docs/benchmarks.md"
