# --dry-run changes nothing: with a misplaced hog present, the node totals
# (N<node>= in numa_maps) of every process and the hog's affinity are the
# same after a few seconds of dry run, while the log says what would be done.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
np_start_misplaced_hog /tmp/hog.out --mib 64 --pause-ms 50
hog=$NP_HOG_PID
affinity=$(np_affinity "$hog")

# "pid N0=.. N1=.." for every process but this shell and its children
# (which come and go), summed per node over all mappings.
snapshot() {
	for maps in /proc/[0-9]*/numa_maps; do
		pid=${maps#/proc/}
		pid=${pid%/numa_maps}
		[ "$pid" = $$ ] || [ "$pid" = "$NP_DAEMON_PID" ] && continue
		grep -q "^PPid:[[:space:]]*$$\$" "/proc/$pid/status" 2>/dev/null && [ "$pid" != "$hog" ] && continue
		awk -v pid="$pid" '{ for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
				split($i, kv, "="); n[kv[1]] += kv[2] } }
			END { line = pid; for (k in n) line = line " " k "=" n[k]; print line }' "$maps" 2>/dev/null
	done | sort
}

NP_DAEMON_PID=none
snapshot >/tmp/before.txt
np_daemon_start --dry-run <<CONF
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$NP_DAEMON_START_MS
until grep -q 'would move' "$NP_DAEMON_LOG"; do
	[ $(($(np_ms) - start)) -lt 20000 ] || np_fail "no 'would move' in the log after 20 s"
	sleep 0.2
done
sleep 3
scans=$(np_metric numaplaced_scans_total)
calls=$(np_metric numaplaced_migrate_calls_total)
snapshot >/tmp/after.txt
affinity_after=$(np_affinity "$hog")
kill "$hog"
np_daemon_stop
echo "daemon-dryrun: $scans scans, $calls migration calls, $(wc -l </tmp/before.txt) processes compared"
grep 'would move' "$NP_DAEMON_LOG" | head -n 1
if ! diff /tmp/before.txt /tmp/after.txt; then
	np_fail "node totals changed during the dry run"
fi
[ "$calls" = 0 ] || np_fail "metrics: $calls migration calls in a dry run"
[ "$affinity_after" = "$affinity" ] || np_fail "affinity changed: $affinity -> $affinity_after"
grep -q "^$hog N1=" /tmp/before.txt || grep -q "^$hog .*N1=" /tmp/before.txt ||
	np_fail "the hog is missing from the snapshot"
