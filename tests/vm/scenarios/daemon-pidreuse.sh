# A pid reused by another process while the daemon acts on its first owner
# is never acted on under the new owner.
#
# Construction, not luck: A, a misplaced 128 MiB hog (memory on node 1,
# threads on node 0), is killed once the daemon's move is under way (2 MiB
# of it are on node 0), and reaped; /proc/sys/kernel/ns_last_pid is
# then set so that the next fork gets A's pid, and B, a 64 MiB hog whose
# threads and memory are both on node 1, starts with it. The daemon read A's
# maps and numa_maps when its action began, and every batch after B's birth
# is an action on that old reading of the same pid number. With address
# space randomisation off, B's memory sits where A's did, so a batch sent to
# the pid would move B's pages. The actuator checks A's pidfd before every
# batch (and the start time when it begins an action), so the batches stop
# and the failure is counted; B, local, must keep every page on node 1 and
# its affinity, while the daemon keeps looking at it for a few seconds.
# (What remains is the time between that check and the kernel resolving the
# pid in move_pages(2), microseconds, which no pid-based call can close.)
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
echo 0 >/proc/sys/kernel/randomize_va_space
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

node1_cpus=$(np_node_cpus 1)
reused=
for attempt in 1 2 3; do
	np_start_misplaced_hog /tmp/a.out --mib 128 --pause-ms 50
	a=$NP_HOG_PID
	np_wait_moving "$a" "$(np_pages_on_node "$a" 0)"
	kill -KILL "$a"
	wait "$a"
	rm -f /tmp/b.out
	# Nothing may fork between these two lines.
	echo $((a - 1)) >/proc/sys/kernel/ns_last_pid
	taskset -c "$node1_cpus" np-hog --mib 64 --policy local --pause-ms 50 >/tmp/b.out 2>&1 &
	b=$!
	if [ "$b" = "$a" ]; then
		reused=$attempt
		break
	fi
	# Some other fork took the pid first: try again.
	echo "attempt $attempt: B got pid $b, not $a"
	kill "$b"
	wait "$b"
done
[ -n "$reused" ] || np_fail "could not hand A's pid to B in 3 attempts"
np_wait_ready /tmp/b.out
affinity=$(np_affinity "$b")
b_node0=$(np_pages_on_node "$b" 0)
b_node1=$(np_pages_on_node "$b" 1)
scans=$(np_metric numaplaced_scans_total)
sleep 4
[ "$(np_metric numaplaced_scans_total)" -gt "$scans" ] || np_fail "numaplaced stopped scanning"
b_node0_after=$(np_pages_on_node "$b" 0)
affinity_after=$(np_affinity "$b")
failed=$(np_metric 'numaplaced_failures_total{action="move_pages",errno="ESRCH"')
vanished=$(np_metric 'numaplaced_skips_total{reason="vanished"')
kill "$b"
np_daemon_stop
echo "daemon-pidreuse: pid $a reused at attempt $reused; B: node 0 pages $b_node0 -> $b_node0_after" \
	"(node 1: $b_node1), affinity $affinity -> $affinity_after;" \
	"$failed move_pages ESRCH failures, $vanished vanished skips"
# B runs on node 1 with its memory there, so a page or two of its own new
# allocations may still land on node 0 (shared pages, page-table-adjacent
# faults); a move of B would take its thousands of node-1 pages.
[ $((b_node0_after - b_node0)) -le $((b_node1 / 100)) ] ||
	np_fail "pages of B, the pid's new owner, were moved to node 0"
[ "$affinity_after" = "$affinity" ] || np_fail "B's affinity changed"
[ $((failed + vanished)) -gt 0 ] || np_fail "A's end during the action was not counted"
