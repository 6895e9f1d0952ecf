# Sampled looks at a big task. A 1.1 GiB hog its user pinned to node 0's
# CPUs, its memory there, is found local at its first look; the looks after
# it are samples of its pages (move_pages given no nodes), numa_maps being
# read only after three in a row. Then its user moves its memory to node 1
# (migratepages): the next sample finds it away, numa_maps is read, and the
# memory goes back to node 0, beside the threads its user pinned there.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
rm -f /tmp/hog.out
taskset -c "$(np_node_cpus 0)" np-hog --policy local --mib 1100 --pause-ms 50 >/tmp/hog.out 2>&1 &
hog=$!
np_wait_ready /tmp/hog.out 120
[ "$(np_percent_on_node "$hog" 0)" -ge 95 ] ||
	np_fail "hog only $(np_percent_on_node "$hog" 0)% on node 0 at the start"
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
scan_period_max_ms = 1000
metrics_listen = 127.0.0.1:0
log_level = debug
CONF
start=$NP_DAEMON_START_MS

sufficed() {
	np_metric 'numaplaced_sampled_looks_total{result="sufficed"'
}
until [ "$(sufficed)" -ge 6 ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] ||
		np_fail "$(sufficed) sampled looks in 60 s: $(grep 'sampled look' "$NP_DAEMON_LOG" | tail -n 3)"
	sleep 0.2
done
# Looks at the hog so far: the first read, then three samples to a read.
scans=$(np_metric numaplaced_scans_total)
n=$(sufficed)
[ "$scans" -le $((n / 3 + 2)) ] || np_fail "$scans numa_maps reads beside $n sampled looks"
numaplaced --status --json >/tmp/status.json 2>/tmp/status.err ||
	np_fail "--status --json: exit $?: $(cat /tmp/status.err)"
grep -q '"sampled_looks": [1-9]' /tmp/status.json || np_fail "no sampled look in the status"
echo "daemon-sampled: $n sampled looks beside $scans numa_maps reads after $(($(np_ms) - start)) ms"

# Its user moves its memory away while the daemon is stopped, right after
# a numa_maps read of the hog (so that its next look is a sample, and the
# move is not raced by the daemon moving the pages back): the sample sees
# the memory gone, numa_maps is read, and the memory comes back.
reads() {
	grep -c "read numa_maps of pid $hog " "$NP_DAEMON_LOG"
}
r0=$(reads)
until [ "$(reads)" -gt "$r0" ]; do
	[ $(($(np_ms) - start)) -lt 90000 ] || np_fail "no numa_maps read of the hog in 90 s"
	sleep 0.05
done
kill -STOP "$NP_DAEMON_PID"
t0=$(np_ms)
migratepages "$hog" 0 1 || np_fail "migratepages $hog 0 1 failed"
moved_ms=$(($(np_ms) - t0))
away=$(np_percent_on_node "$hog" 1)
kill -CONT "$NP_DAEMON_PID"
[ "$away" -ge 90 ] || np_fail "migratepages left only $away% on node 1"
lines=$(wc -l <"$NP_DAEMON_LOG")
until grep -q "pid $hog (np-hog): sampled look: .*: read it" "$NP_DAEMON_LOG"; do
	[ $(($(np_ms) - t0)) -lt 60000 ] || {
		tail -n +"$lines" "$NP_DAEMON_LOG" | grep "pid $hog" | head -n 20
		np_fail "no sample found the memory away in 60 s"
	}
	sleep 0.2
done
until [ "$(np_percent_on_node "$hog" 0)" -ge 90 ]; do
	[ $(($(np_ms) - t0)) -lt 120000 ] ||
		np_fail "hog $(np_percent_on_node "$hog" 0)% on node 0 120 s after its memory left"
	sleep 0.2
done
echo "daemon-sampled: $away% moved to node 1 by its user in $moved_ms ms; a sample saw it;" \
	"back on node 0 (90%) $(($(np_ms) - t0)) ms after the move began"
np_daemon_stop
kill "$hog"
