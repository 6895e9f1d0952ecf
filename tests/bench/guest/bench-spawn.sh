# Slow start in the guest: np-spawn starts many short-lived processes while
# (A) no daemon runs, (B) numaplaced runs with scan_delay_ms = 0 and
# (C) with scan_delay_ms = 1000; both with min_rss_mb = 0 and
# min_cpu_percent = 0 so that only the delay differs. Guest timings are too
# noisy for a 2% effect; what is recorded is deterministic: numa_maps reads
# (scans), numa_maps bytes read and the daemon's CPU time, from its metrics
# endpoint. Rounds are interleaved (ABCABC). Writes spawn.txt.
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
np_numa_balancing 0
ip link set lo up
rounds=${BENCH_SPAWN_ROUNDS:-2}
count=${BENCH_SPAWN_COUNT:-200}
port=9464
out=/tmp/spawn.txt
: >"$out"

# One counter from the metrics text in FILE (the sum over its label sets).
metric() {
	awk -v name="$1" '$1 == name || index($1, name "{") == 1 { sum += $2 } END { printf "%.6f\n", sum }' "$2"
}

# Whether PID runs (a child that died stays a zombie until waited for).
alive() {
	state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}

# The metrics page into FILE (busybox wget crashes in this guest; nc does
# not).
scrape() {
	printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' |
		timeout 20 nc 127.0.0.1 "$port" >"$1" 2>/dev/null
	grep -q '^numaplaced_scans_total' "$1" || echo "log no metrics from numaplaced" >>"$out"
}

round=0
while [ $round -lt "$rounds" ]; do
	for config in none delay0 delay1000; do
		daemon=
		if [ $config != none ]; then
			cat >/tmp/spawn.conf <<CONF
scan_delay_ms = ${config#delay}
min_rss_mb = 0
min_cpu_percent = 0
metrics_listen = 127.0.0.1:$port
CONF
			numaplaced --foreground -c /tmp/spawn.conf >numaplaced.log 2>&1 &
			daemon=$!
			sleep 2
			alive "$daemon" || np_fail "numaplaced: $(cat numaplaced.log)"
			ticks0=$(bench_cpu_ticks "$daemon")
			rm -f before.prom after.prom
			scrape before.prom
		fi
		np-spawn --count="$count" --parallel=4 --mib=4 --life-ms=50 >spawn.out 2>&1 ||
			np_fail "np-spawn: $(cat spawn.out)"
		line="spawn round $round config $config $(grep '^done' spawn.out)"
		if [ -n "$daemon" ]; then
			ticks1=$(bench_cpu_ticks "$daemon")
			alive "$daemon" &&
				scrape after.prom
			if ! alive "$daemon"; then
				line="$line daemon_died 1"
				dmesg | grep -i 'numaplaced' | tail -n 3 | sed 's/^/log /' >>"$out"
				sed 's/^/log /' numaplaced.log | tail -n 10 >>"$out"
			fi
			[ -s before.prom ] && [ -s after.prom ] &&
				for m in numaplaced_scans_total numaplaced_numa_maps_read_bytes_total \
					numaplaced_cpu_seconds_total; do
				a=$(metric "$m" before.prom)
				b=$(metric "$m" after.prom)
				line="$line $m $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f", b - a }')"
			done
			line="$line cpu_ticks $((ticks1 - ticks0))"
			kill -TERM "$daemon" 2>/dev/null
			wait "$daemon"
		fi
		echo "$line" | tee -a "$out"
		[ -n "$daemon" ] && sed 's/^/log /' numaplaced.log | tail -n 5 >>"$out"
	done
	round=$((round + 1))
done
np_emit spawn.txt "$out"
