#!/bin/sh
# The kernel's slow-start experiment, replayed for numaplaced on this host:
# kbuild (clean builds of this project's library and daemon, ninja -j2,
# BENCH_KBUILD_REPEAT of them back to back per run) and hackbench (perf bench
# sched messaging, BENCH_HACKBENCH_REPEAT times per run), each under three
# configurations,
#   A  no daemon
#   B  numaplaced --foreground, scan_delay_ms = 0
#   C  numaplaced --foreground, scan_delay_ms = 1000
# B and C set min_rss_mb = 0 and min_cpu_percent = 0, so that the delay is
# the only filter left in front of the short-lived compiler processes, and
# export metrics on a fixed local port for the scan counters. Runs are
# interleaved (ABCABC...). One line per run goes to OUTFILE:
#   run BENCH CONFIG INDEX elapsed_s E user_s U sys_s S [metric VALUE]...
#
# usage: host-overhead.sh BUILD_DIR OUTFILE [RUNS]
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR OUTFILE [RUNS]}" && pwd)
out=${2:?usage: $0 BUILD_DIR OUTFILE [RUNS]}
runs=${3:-10}
port=${BENCH_METRICS_PORT:-19464}
daemon_bin=$build/daemon/numaplaced
work=$build/bench-host
hackbench_args=${BENCH_HACKBENCH_ARGS:--p -g 10 -l 300}
# One build of this project takes under a second on a quiet host, one
# hackbench of the size above under one: each run repeats them back to back
# so that a run lasts several seconds, many daemon ticks.
kbuild_repeat=${BENCH_KBUILD_REPEAT:-8}
hackbench_repeat=${BENCH_HACKBENCH_REPEAT:-5}
[ -x "$daemon_bin" ] || { echo "$0: no $daemon_bin" >&2; exit 2; }
command -v perf >/dev/null || { echo "$0: perf is missing (apt-get install linux-perf)" >&2; exit 2; }

if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then
	echo "$0: port $port is taken; set BENCH_METRICS_PORT to a free one" >&2
	exit 1
fi
rm -rf "$work"
mkdir -p "$work"
: >"$out"
# The kbuild tree: this project from a clean build directory of its own,
# without optimisation so that 3 x 10 builds fit the time budget.
meson setup "$work/kbuild" "$src" --buildtype=plain >/dev/null

for delay in 0 1000; do
	cat >"$work/delay$delay.conf" <<CONF
scan_delay_ms = $delay
min_rss_mb = 0
min_cpu_percent = 0
metrics_listen = 127.0.0.1:$port
CONF
done

# Counters from the metrics endpoint, one "name value" per line.
scrape() {
	python3 - "$port" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode()
sums = {}
for line in text.splitlines():
    if line.startswith("#") or not line.strip():
        continue
    name, value = line.rsplit(" ", 1)
    name = name.split("{")[0]
    if name in ("numaplaced_scans_total", "numaplaced_numa_maps_read_bytes_total",
                "numaplaced_cpu_seconds_total"):
        sums[name] = sums.get(name, 0.0) + float(value)
for name, value in sorted(sums.items()):
    print(name, value)
PY
}

daemon_pid=
start_daemon() {
	"$daemon_bin" --foreground -c "$work/delay$1.conf" >>"$work/numaplaced.log" 2>&1 &
	daemon_pid=$!
	# Let its first sweep over the tasks already running end before timing.
	tries=0
	until scrape >"$work/before" 2>/dev/null; do
		tries=$((tries + 1))
		kill -0 "$daemon_pid" 2>/dev/null && [ $tries -lt 50 ] ||
			{ echo "$0: numaplaced did not start (see $work/numaplaced.log)" >&2; exit 1; }
		sleep 0.2
	done
	sleep 3
	kill -0 "$daemon_pid" 2>/dev/null ||
		{ echo "$0: numaplaced stopped (see $work/numaplaced.log)" >&2; exit 1; }
	scrape >"$work/before"
	ticks_before=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$daemon_pid/stat")
}

# Appends " metric value ..." for the run that just ended and stops the daemon.
stop_daemon() {
	scrape >"$work/after"
	ticks_after=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$daemon_pid/stat")
	kill -TERM "$daemon_pid"
	wait "$daemon_pid" || true
	awk 'NR == FNR { before[$1] = $2; next } { printf " %s %.6f", $1, $2 - before[$1] }' \
		"$work/before" "$work/after"
	printf ' daemon_cpu_s %.2f' "$(awk -v a="$ticks_before" -v b="$ticks_after" 'BEGIN { print (b - a) / 100 }')"
}

kbuild() {
	/usr/bin/time -f "elapsed_s %e user_s %U sys_s %S" -o "$work/time" \
		sh -c 'i=0; while [ $i -lt "$2" ]; do
			ninja -C "$1" -t clean >/dev/null &&
			ninja -C "$1" -j2 daemon/numaplaced >/dev/null || exit 1
			i=$((i + 1)); done' kbuild "$work/kbuild" "$kbuild_repeat"
	tr -d '\n' <"$work/time"
}

hackbench() {
	# shellcheck disable=SC2016
	/usr/bin/time -f "elapsed_s %e user_s %U sys_s %S" -o "$work/time" \
		sh -c 'i=0; while [ $i -lt "$1" ]; do
			perf bench sched messaging $2 || exit 1
			i=$((i + 1)); done' hackbench "$hackbench_repeat" "$hackbench_args" \
		>"$work/hackbench.out"
	tr -d '\n' <"$work/time"
	printf ' total_s %s' "$(awk '/Total time/ { t += $3 } END { print t }' "$work/hackbench.out")"
}

# A warm-up build so that the first timed one does not pay for cold caches.
kbuild >/dev/null
for bench in kbuild hackbench; do
	i=0
	while [ $i -lt "$runs" ]; do
		for config in none delay0 delay1000; do
			[ $config = none ] || start_daemon "${config#delay}"
			line="run $bench $config $i $($bench)"
			[ $config = none ] || line="$line$(stop_daemon)"
			echo "$line" | tee -a "$out"
		done
		i=$((i + 1))
	done
done
