# A target that exits while the daemon is moving its pages: the daemon keeps
# running, counts the failed action, and acts on nothing of it afterwards.
#
# np-vanish (128 MiB on node 1, its thread on node 0) gets SIGUSR1 and exits
# from its signal handler as soon as 2 MiB of it have reached node 0,
# that is while the daemon's action (a series of move_pages batches, more
# than a second here) is under way. The pidfd check before each batch then
# finds it gone: failures_total{action="move_pages",errno="ESRCH"}, or, if
# it exited between the daemon's reading and acting, a "vanished" skip.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
migrate_rate_mb_s = 65536
metrics_listen = 127.0.0.1:0
log_level = info
CONF

caught=
for attempt in 1 2 3; do
	rm -f /tmp/vanish.out
	taskset -c "$(np_node_cpus 1)" np-vanish --mib 128 >/tmp/vanish.out 2>&1 &
	victim=$!
	np_wait_ready /tmp/vanish.out
	taskset -p -c "$(np_node_cpus 0)" "$victim" >/dev/null || np_fail "cannot move np-vanish to node 0"
	np_wait_moving "$victim" "$(np_pages_on_node "$victim" 0)"
	pct=$(np_percent_on_node "$victim" 0)
	kill -USR1 "$victim"
	wait "$victim"
	echo "attempt $attempt: np-vanish $victim exited when $pct% of it was on node 0"
	sleep 1
	failed=$(np_metric 'numaplaced_failures_total{action="move_pages",errno="ESRCH"')
	vanished=$(np_metric 'numaplaced_skips_total{reason="vanished"')
	if [ $((failed + vanished)) -gt 0 ]; then
		caught=$attempt
		break
	fi
	# The whole move was over before the signal landed: try again.
done
[ -n "$caught" ] || np_fail "np-vanish never exited during an action in 3 attempts"
# Alive and its loop turning: it answers SIGUSR1 with a summary.
kill -USR1 "$NP_DAEMON_PID" || np_fail "numaplaced died"
start=$(np_ms)
until grep -q 'failed calls' "$NP_DAEMON_LOG"; do
	[ $(($(np_ms) - start)) -lt 20000 ] || np_fail "numaplaced did not answer SIGUSR1 in 20 s"
	sleep 0.2
done
moved=$(np_metric_moved_mib 1 0)
np_daemon_stop
grep 'failed calls' "$NP_DAEMON_LOG"
echo "daemon-vanish: caught at attempt $caught: $failed move_pages ESRCH failures, $vanished vanished skips;" \
	"$moved MiB moved before it went; the daemon answered SIGUSR1 $(($(np_ms) - start)) ms later"
grep -q 'failed calls:.*move_pages ESRCH\|skipped:.*vanished' "$NP_DAEMON_LOG" ||
	np_fail "the SIGUSR1 summary does not show the failure"
