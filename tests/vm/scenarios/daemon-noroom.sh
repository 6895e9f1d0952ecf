# A node without headroom is never chosen: with node_mem_headroom_percent =
# 50, node 0 is filled by a hog bound there (its memory policy is its own,
# so the daemon leaves it alone) until moving the misplaced hog's 64 MiB
# would leave less than half of node 0 free. The misplaced hog's pages stay
# on node 1 and the report says no-room. Then the filler goes, and the same
# daemon moves the hog: it was able to. (The high headroom halves the
# filler, which takes long to fault in here.)
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
np_start_misplaced_hog /tmp/hog.out --mib 64 --pause-ms 50
hog=$NP_HOG_PID
free_kib=$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo)
total_kib=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node0/meminfo)
# Leave free half of the node plus 32 MiB: the 64 MiB move would eat into
# the headroom.
filler_mib=$(((free_kib - total_kib / 2) / 1024 - 32))
[ "$filler_mib" -gt 0 ] || np_fail "node 0 has only $free_kib KiB free"
rm -f /tmp/filler.out
np-hog --mib "$filler_mib" --node 0 --policy bind --cpus "$(np_node_cpus 0 | cut -d, -f1 | cut -d- -f1)" \
	--pause-ms 60000 >/tmp/filler.out 2>&1 &
filler=$!
np_wait_ready /tmp/filler.out 120
echo "filler $filler: $filler_mib MiB bound to node 0;" \
	"$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo) KiB free of $total_kib"
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
scan_period_max_ms = 2000
node_mem_headroom_percent = 50
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$NP_DAEMON_START_MS
until [ "$(np_metric 'numaplaced_skips_total{reason="no_room"')" -ge 2 ]; do
	[ $(($(np_ms) - start)) -lt 40000 ] ||
		np_fail "no no_room skip in 40 s: $(numaplaced --report -c /tmp/numaplaced.conf 2>&1)"
	sleep 0.2
done
numaplaced --report --json -c /tmp/numaplaced.conf >/tmp/report.json || np_fail "numaplaced --report failed"
reason=$(awk -v pid="\"pid\": $hog," 'index($0, pid) { found = 1 }
	found && /"reason":/ { gsub(/[",]/, "", $2); print $2; exit }' /tmp/report.json)
node0=$(np_pages_on_node "$hog" 0)
moved=$(np_metric_moved_mib 1 0)
echo "daemon-noroom: report says '$reason'; hog pages on node 0: $node0; $moved MiB moved"
[ "$reason" = no-room ] || np_fail "report reason '$reason' for the hog"
[ "$moved" = 0 ] || np_fail "the daemon moved $moved MiB to a node without headroom"

kill "$filler"
wait "$filler"
start=$(np_ms)
until [ "$(np_percent_on_node "$hog" 0)" -ge 90 ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] || np_fail "with room again, the hog was not moved in 60 s"
	sleep 0.2
done
echo "daemon-noroom: with the filler gone the hog was 90% on node 0 after $(($(np_ms) - start)) ms"
kill "$hog"
np_daemon_stop
