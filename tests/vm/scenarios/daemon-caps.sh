# The capability matrix. The daemon runs as uid 1000 with only the
# capabilities under test (util-linux setpriv, not busybox's: ambient
# capabilities, what CapabilityBoundingSet= leaves a service), against two
# hogs of uid 2000, started afresh for each case:
#   pinned: threads pinned to node 0, memory on node 1: its pages should move;
#   free:   threads free to run anywhere, memory on node 1: it should be
#           given home node 1 (its threads narrowed to node 1's CPUs).
# With CAP_SYS_NICE and CAP_SYS_PTRACE both happen and nothing is refused.
# Without CAP_SYS_PTRACE the daemon says so at start, reads neither hog, and
# changes nothing: every refusal is counted as denied (read), not as a task
# that vanished. Without CAP_SYS_NICE it says so, the pinned hog's pages
# still move, and the free hog keeps its mask: counted as denied (affinity).
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
all=$(cat /sys/devices/system/cpu/online)
as_hog_user="/usr/bin/setpriv --reuid=2000 --regid=2000 --clear-groups"
mkdir -p /tmp/caps-run && chown 1000:1000 /tmp/caps-run

start_hogs() {
	rm -f /tmp/pinned.out /tmp/free.out
	$as_hog_user taskset -c "$(np_node_cpus 1)" np-hog --mib 64 --policy local --pause-ms 50 \
		>/tmp/pinned.out 2>&1 &
	PINNED=$!
	# Not spinning: left free without CAP_SYS_NICE, two busy threads on
	# every CPU would starve the rest of the emulated guest.
	$as_hog_user taskset -c "$(np_node_cpus 1)" np-hog --threads 2 --mib 64 --policy local \
		--pause-ms 20 >/tmp/free.out 2>&1 &
	FREE=$!
	np_wait_ready /tmp/pinned.out
	np_wait_ready /tmp/free.out
	taskset -a -p -c "$(np_node_cpus 0)" "$PINNED" >/dev/null || np_fail "cannot pin $PINNED"
	taskset -a -p -c "$all" "$FREE" >/dev/null || np_fail "cannot free $FREE"
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$PINNED/status")" = 2000 ] ||
		np_fail "hog $PINNED does not belong to uid 2000"
	free_mask=$(np_affinity "$FREE")
}

stop_hogs() {
	kill "$PINNED" "$FREE"
	wait "$PINNED" "$FREE" 2>/dev/null
}

# Run the daemon as uid 1000 with capabilities CAPS ("+sys_nice,+sys_ptrace").
start_daemon() {
	NP_DAEMON_AS="/usr/bin/setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all,$1 --ambient-caps=-all,$1"
	np_daemon_start --runtime-dir /tmp/caps-run/run <<-CONF
		min_rss_mb = 32
		min_cpu_percent = 0
		tick_ms = 100
		scan_delay_ms = 500
		scan_period_min_ms = 500
		metrics_listen = 127.0.0.1:0
		log_level = info
	CONF
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$NP_DAEMON_PID/status")" = 1000 ] ||
		np_fail "the daemon does not run as uid 1000"
}

# Wait up to SECONDS for the shell condition CMD.
wait_for() {
	deadline=$(($(np_ms) + $1 * 1000))
	until eval "$2"; do
		[ "$(np_ms)" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}

denied() {
	np_metric "numaplaced_permission_denied_total{action=\"$1\""
}

# ---- CAP_SYS_NICE and CAP_SYS_PTRACE: everything works.
start_hogs
start_daemon +sys_nice,+sys_ptrace
! grep -q 'no CAP_' "$NP_DAEMON_LOG" || np_fail "a capability said missing: $(grep 'no CAP_' "$NP_DAEMON_LOG")"
wait_for 90 '[ "$(np_percent_on_node "$PINNED" 0)" -ge 90 ] && [ "$(np_home_of "$FREE")" = 1 ]' ||
	np_fail "with both: pinned hog $(np_percent_on_node "$PINNED" 0)% on node 0, free hog home $(np_home_of "$FREE")"
total=$(np_metric numaplaced_permission_denied_total)
[ "$total" = 0 ] || np_fail "with both: $total permission failures: $(grep -i 'denied\|not permitted' "$NP_DAEMON_LOG" | head -n 3)"
echo "daemon-caps: both: pinned hog moved to node 0, free hog homed on node 1, nothing refused"
np_daemon_stop
stop_hogs

# ---- Without CAP_SYS_PTRACE: said at start, both hogs left alone, counted.
start_hogs
start_daemon +sys_nice
grep -q "warning: no CAP_SYS_PTRACE: the numa_maps of other users' tasks cannot be read nor their pages moved" "$NP_DAEMON_LOG" ||
	np_fail "no CAP_SYS_PTRACE warning: $(head -n 5 "$NP_DAEMON_LOG")"
! grep -q 'no CAP_SYS_NICE' "$NP_DAEMON_LOG" || np_fail "CAP_SYS_NICE said missing"
wait_for 30 'grep -q "pid [0-9]* (np-hog): reading its memory: Permission denied" "$NP_DAEMON_LOG"' ||
	np_fail "no refusal logged for a hog"
wait_for 30 '[ "$(denied read)" -ge 2 ]' || np_fail "read refusals counted: $(denied read)"
sleep 5
[ "$(np_percent_on_node "$PINNED" 1)" -ge 90 ] ||
	np_fail "without CAP_SYS_PTRACE the pinned hog moved: $(np_percent_on_node "$PINNED" 1)% on node 1"
[ "$(np_affinity "$FREE")" = "$free_mask" ] ||
	np_fail "without CAP_SYS_PTRACE the free hog's mask changed: $free_mask -> $(np_affinity "$FREE")"
first=$(grep -c 'not allowed for this task' "$NP_DAEMON_LOG")
[ "$first" = 1 ] || np_fail "the explained refusal logged $first times"
echo "daemon-caps: no CAP_SYS_PTRACE: warned, $(denied read) reads refused and counted, hogs unchanged"
np_daemon_stop
stop_hogs

# ---- Without CAP_SYS_NICE: said at start, pages still move, masks stay.
start_hogs
start_daemon +sys_ptrace
grep -q "warning: no CAP_SYS_NICE: the CPU affinity of other users' tasks cannot be set" "$NP_DAEMON_LOG" ||
	np_fail "no CAP_SYS_NICE warning: $(head -n 5 "$NP_DAEMON_LOG")"
! grep -q 'no CAP_SYS_PTRACE' "$NP_DAEMON_LOG" || np_fail "CAP_SYS_PTRACE said missing"
wait_for 120 '[ "$(np_percent_on_node "$PINNED" 0)" -ge 90 ]' ||
	np_fail "without CAP_SYS_NICE the pinned hog did not move: $(np_percent_on_node "$PINNED" 0)% on node 0"
wait_for 30 '[ "$(denied affinity)" -ge 1 ]' || np_fail "no affinity refusal counted"
grep -q "pid $FREE (np-hog): setting its threads' CPU affinity: Operation not permitted" "$NP_DAEMON_LOG" ||
	np_fail "no affinity refusal logged for the free hog"
[ "$(np_affinity "$FREE")" = "$free_mask" ] ||
	np_fail "without CAP_SYS_NICE the free hog's mask changed: $free_mask -> $(np_affinity "$FREE")"
echo "daemon-caps: no CAP_SYS_NICE: warned, pinned hog moved, $(denied affinity) affinity calls refused, free hog's mask kept"
np_daemon_stop
stop_hogs
