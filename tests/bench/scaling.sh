#!/bin/sh
# What the daemon costs against the size of the machine, on this host, and
# docs/benchmarks-scaling.md with its plots from the results:
#   1. CPU per placement cycle against the number of idle tasks
#      (bench-idle.py: the host as it is, 100, 1,000 and 10,000 idle
#      processes more, 10,000 idle threads);
#   2. a sampled look against a numa_maps read, per GiB of the task
#      (bench-sample at BENCH_SAMPLE_GIB, default "1 4 16" GiB, with the
#      1,024 pages of the daemon's first round).
# About 20 minutes on a 2-core host (each idle case warms up for 130 s).
# Needs root (the daemon reads every task's files and follows the process
# connector) and gnuplot.
#
# usage: tests/bench/scaling.sh [--build-dir DIR] [--report-only]
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
bench=$src/tests/bench
build=$src/build-bench
report_only=false
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) build=${2:?}; shift ;;
	--report-only) report_only=true ;;
	*) echo "usage: $0 [--build-dir DIR] [--report-only]" >&2; exit 2 ;;
	esac
	shift
done
results=$build/scaling-results

if ! $report_only; then
	command -v gnuplot >/dev/null || apt-get install -y -q --no-install-recommends gnuplot-nox
	[ -d "$build" ] || meson setup "$build" "$src" --buildtype=debugoptimized >/dev/null
	ninja -C "$build" -j2 >/dev/null
	rm -rf "$results"
	mkdir -p "$results"
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
		echo "host CPU: $(nproc) x $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
		echo "host memory: $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "host kernel: $(uname -r)"
		echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$results/machine.txt"
	echo "scaling: $(date -u +%H:%M:%S) idle tasks"
	python3 "$bench/bench-idle.py" "$build" >"$results/idle.txt"
	for gib in ${BENCH_SAMPLE_GIB:-1 4 16}; do
		echo "scaling: $(date -u +%H:%M:%S) sampled look, $gib GiB"
		"$build/tests/bench/bench-sample" "$gib" 1024 7 >"$results/sample-$gib.txt"
	done
	echo "host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/machine.txt"
fi

mkdir -p "$src/docs/benchmarks/raw/scaling"
python3 "$bench/scaling-report.py" "$results" "$src/docs/benchmarks-scaling.md" \
	"$src/docs/benchmarks"
cp "$results"/*.txt "$src/docs/benchmarks/raw/scaling/"
echo "scaling: wrote docs/benchmarks-scaling.md"
