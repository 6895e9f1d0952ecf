# With the kernel's own NUMA balancing on and the default configuration
# (kernel_balancing = defer), the daemon moves nothing: a misplaced hog is
# looked at, the report says kernel-balancing, and no migration call is
# made. (The kernel itself may move the hog's pages meanwhile: that is its
# job, so the check is on the daemon's counters, not on the pages.)
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
np_start_misplaced_hog /tmp/hog.out --mib 64 --pause-ms 50
hog=$NP_HOG_PID
np_numa_balancing 1
cat >/tmp/report.conf <<CONF
min_rss_mb = 32
min_cpu_percent = 0
CONF
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_period_min_ms = 500
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$(np_ms)
while [ "$(np_metric numaplaced_scans_total)" -lt 3 ]; do
	[ $(($(np_ms) - start)) -lt 15000 ] || np_fail "fewer than 3 scans in 15 s"
	sleep 0.2
done
calls=$(np_metric numaplaced_migrate_calls_total)
moved=$(np_metric numaplaced_migrated_bytes_total)
deferred=$(np_metric 'numaplaced_skips_total{reason="kernel_balancing"')
scans=$(np_metric numaplaced_scans_total)
numaplaced --report --json -c /tmp/report.conf >/tmp/report.json || np_fail "numaplaced --report failed"
reason=$(awk -v pid="\"pid\": $hog," 'index($0, pid) { found = 1 }
	found && /"reason":/ { gsub(/[",]/, "", $2); print $2; exit }' /tmp/report.json)
kill "$hog"
np_daemon_stop
echo "daemon-defer: $scans scans, $deferred deferred, $calls migration calls, $moved bytes moved; report: $reason"
[ "$calls" = 0 ] && [ "$moved" = 0 ] || np_fail "the daemon migrated while the kernel balances"
[ "$deferred" -ge 1 ] || np_fail "no kernel_balancing skip counted"
[ "$reason" = kernel-balancing ] || np_fail "report gives reason '$reason' for the hog: $(cat /tmp/report.json)"
if grep -q ': move ' "$NP_DAEMON_LOG"; then
	np_fail "a decision to move was logged"
fi
