# While the daemon moves a big task's pages, its loop goes on: the metrics
# endpoint answers and the placement cycles keep running, and SIGTERM ends
# the move at its next batch and the daemon with it.
#
# np-hog (450 MiB on node 1, its threads pinned on node 0 by its user) is
# moved with no rate limit, by one mover and then by two (the default:
# threads that each take their next call as soon as they return one, which
# a stop must wait for): some 2-3 s of move_pages calls in this guest, in
# one move. During
# them the endpoint is asked five times, 100 ms apart, timed by np-get; the
# cycle count must grow between the first answer and the last, with the
# move still in flight after the last (its result is logged when it ends).
# Then SIGTERM: the move's result must be logged after "stopping", that is,
# the stop ended it. A move that ends on its own before a step is done
# proves nothing: the attempt is repeated with a fresh hog and daemon.
#
# Printed, not judged (timings belong to the benchmarks): the slowest answer
# and the time from SIGTERM to the daemon's exit (10 ms resolution).
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up

# The checks above with $1 movers, in up to three attempts.
moving_check() {
	movers=$1
	caught=
	for attempt in 1 2 3; do
		np_start_misplaced_hog /tmp/hog.out --mib 450 --pause-ms 10
		hog=$NP_HOG_PID
		base=$(np_pages_on_node "$hog" 0)
		np_daemon_start <<-CONF
	min_rss_mb = 32
	min_cpu_percent = 0
	tick_ms = 100
	scan_delay_ms = 500
	scan_period_min_ms = 500
	migrate_rate_mb_s = 65536
	migrate_threads = $movers
	metrics_listen = 127.0.0.1:0
	log_level = info
	CONF
		ended="pid $hog .*: [0-9]* pages to node 0 in"
		np_wait_moving "$hog" "$base"
		slowest=0
		times=
		for i in 1 2 3 4 5; do
			answer=$(np-get --out "/tmp/metrics.$i" "$NP_METRICS_PORT" /metrics) ||
				np_fail "metrics: no answer during the move"
			set -- $answer
			[ "$2" = 200 ] || np_fail "metrics: status $2 during the move"
			slowest=$(awk -v a="$slowest" -v b="$4" 'BEGIN { print (b > a ? b : a) }')
			times="$times $4"
			[ "$i" = 5 ] || sleep 0.1
		done
		ticks_first=$(awk '$1 == "numaplaced_ticks_total" { print $2 }' /tmp/metrics.1)
		ticks_last=$(awk '$1 == "numaplaced_ticks_total" { print $2 }' /tmp/metrics.5)
		cycle_max=$(awk '$1 == "numaplaced_tick_seconds_max" { printf "%.1f", $2 * 1000 }' /tmp/metrics.5)
		if grep -q "$ended" "$NP_DAEMON_LOG"; then
			echo "migrate_threads $movers, attempt $attempt: the move ended before the endpoint was asked five times"
			np_daemon_stop
			kill "$hog"
			wait "$hog"
			continue
		fi
		[ "$ticks_last" -gt "$ticks_first" ] ||
			np_fail "no cycle ran during the move: ticks_total $ticks_first, then $ticks_last"
		pct=$(np_percent_on_node "$hog" 0)
		t0=$(np_ms)
		kill -TERM "$NP_DAEMON_PID"
		wait "$NP_DAEMON_PID"
		status=$?
		stop_ms=$(($(np_ms) - t0))
		[ "$status" = 0 ] || np_fail "numaplaced exited with $status: $(tail -n 20 "$NP_DAEMON_LOG")"
		after=$(np_percent_on_node "$hog" 0)
		kill "$hog"
		wait "$hog"
		order=$(awk -v re="$ended" '/: stopping$/ && !stop { stop = NR }
			$0 ~ re { end = NR } END { print (stop && end > stop) ? "stopped" : "ended" }' "$NP_DAEMON_LOG")
		# Logged after "stopping" and most pages still where they were: the
		# stop ended the move (a move that ended by itself in the same pass
		# of the loop as the signal is also logged after it).
		if [ "$order" = stopped ] && [ "$after" -lt 90 ]; then
			caught=$attempt
			break
		fi
		echo "migrate_threads $movers, attempt $attempt: the move ended by itself before SIGTERM"
	done
	[ -n "$caught" ] || np_fail "migrate_threads $movers: the move never lasted through the checks in 3 attempts"
	grep "$ended" "$NP_DAEMON_LOG"
	echo "daemon-moving: migrate_threads $movers, attempt $caught: during the move $((ticks_last - ticks_first)) cycles ran" \
		"between the first and fifth metrics answers (in$times ms; longest cycle $cycle_max ms);" \
		"SIGTERM at $pct% on node 0 ended the daemon in $stop_ms ms, $after% there after"
}

moving_check 1
moving_check 2
