# A hog its user pinned to node 0's CPUs (numactl --cpunodebind=0), with its
# memory on node 1, keeps its pinning: the daemon moves the memory instead,
# even with affinity = node, which allows it to narrow affinity (a mask the
# user set is never widened or moved elsewhere). numad, in the same spot,
# rewrote the task's affinity to node 1.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
# First touch on node 0 under the user's pinning, then the pages go to node
# 1 with migratepages, which leaves no memory policy behind.
rm -f /tmp/hog.out
numactl --cpunodebind=0 np-hog --mib 64 --policy local --pause-ms 50 >/tmp/hog.out 2>&1 &
hog=$!
np_wait_ready /tmp/hog.out
migratepages "$hog" 0 1 || np_fail "migratepages failed"
[ "$(np_percent_on_node "$hog" 1)" -ge 90 ] || np_fail "hog memory not on node 1"
affinity=$(np_affinity "$hog")
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
affinity = node
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$NP_DAEMON_START_MS
until [ "$(np_percent_on_node "$hog" 0)" -ge 90 ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] || np_fail "hog only $(np_percent_on_node "$hog" 0)% on node 0 after 60 s"
	sleep 0.1
done
local_ms=$(($(np_ms) - start))
sleep 1
affinity_after=$(np_affinity "$hog")
narrowed=$(np_metric numaplaced_affinity_threads_total)
moved=$(np_metric_moved_mib 1 0)
kill "$hog"
np_daemon_stop
echo "daemon-pinned: 90% on node 0 after $local_ms ms, $moved MiB moved, $narrowed threads narrowed;" \
	"affinity $affinity -> $affinity_after"
[ "$affinity_after" = "$affinity" ] || np_fail "the user's pinning changed: $affinity -> $affinity_after"
[ "$narrowed" = 0 ] || np_fail "metrics: $narrowed threads narrowed"
grep -q 'np-hog.*move pages to node 0' "$NP_DAEMON_LOG" || np_fail "no decision to move pages to node 0 logged"
