# --status asks the running daemon: a hog its user pinned to node 0's CPUs
# with its memory on node 1 has its memory moved to node 0, and then
# --status --json shows the task, the node it is kept on, the MiB moved and
# why (checked on the host, daemon-status.check.py), and the text the same
# row; with the daemon stopped, --status says no daemon runs, exit 3.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_start_misplaced_hog /tmp/hog.out --mib 64 --pause-ms 50
hog=$NP_HOG_PID
echo "$hog" >/tmp/pid
np_daemon_start <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
log_level = info
CONF
start=$NP_DAEMON_START_MS
until [ "$(np_percent_on_node "$hog" 0)" -ge 90 ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] ||
		np_fail "hog only $(np_percent_on_node "$hog" 0)% on node 0 after 60 s"
	sleep 0.1
done
local_ms=$(($(np_ms) - start))
# The daemon shows what it saw at its last look: wait for a look after the
# move (LOOKS, column 11 of a 2-node row, at 2 or more and LOCAL, column 9,
# at 90% or more) before taking the status the host checks.
until numaplaced --status >/tmp/status.txt 2>/tmp/status.err &&
	awk -v pid="$hog" '$1 == pid && $2 == "np-hog" && $11 >= 2 && $9 + 0 >= 90 { ok = 1 }
		END { exit !ok }' /tmp/status.txt; do
	[ $(($(np_ms) - start)) -lt 60000 ] ||
		np_fail "no look after the move in 60 s: $(grep "^ *$hog np-hog" /tmp/status.txt) $(cat /tmp/status.err)"
	sleep 0.1
done
numaplaced --status --json >/tmp/status.json 2>/tmp/status.err ||
	np_fail "--status --json: exit $?: $(cat /tmp/status.err)"
numaplaced --status >/tmp/status.txt 2>/tmp/status.err ||
	np_fail "--status: exit $?: $(cat /tmp/status.err)"
np_daemon_stop
numaplaced --status >/tmp/status-stopped.txt 2>/tmp/status.err
rc=$?
kill "$hog"
echo "daemon-status: hog 90% on node 0 after $local_ms ms; --status after the stop: exit $rc:" \
	"$(cat /tmp/status.err)"
grep "^ *$hog np-hog" -A2 /tmp/status.txt
grep -q "^ *$hog np-hog " /tmp/status.txt || np_fail "--status shows no row for pid $hog"
[ "$rc" = 3 ] || np_fail "--status with the daemon stopped: exit $rc, want 3"
grep -q "no daemon is running: nothing answers on /run/numaplaced/control" /tmp/status.err ||
	np_fail "--status with the daemon stopped: $(cat /tmp/status.err)"
for f in status.json status.txt pid; do
	np_emit "$f" "/tmp/$f"
done
