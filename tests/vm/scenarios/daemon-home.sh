# Homes for tasks nobody pinned, with the defaults. Two 2-thread hogs with
# their memory on node 0, free to run on every CPU: they do not fit node 0's
# two CPUs together. The daemon gives each a home: one stays on node 0, the
# other goes to node 1 with its memory; both end at least 90% local. Then
# the user pins one thread of the first hog: at its next look the daemon
# gives that hog's other threads their mask back (its user placed a thread),
# leaving that thread's mask alone, and at SIGTERM the other hog's. Last, a
# daemon killed with SIGKILL leaves its masks file, and the next start gives
# the masks back. While both are homed, --status --json says so: each hog's
# home, and for the one that went to node 1, the MiB moved there and why.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
all=$(cat /sys/devices/system/cpu/online)

# First touch on node 0's CPUs, then the user frees them: no mask of theirs.
start_hog() {
	np_start_free_hog "$1" --threads 2 --mib 64 --pause-ms 0
}
start_hog /tmp/hog-a.out
hog_a=$HOG
start_hog /tmp/hog-b.out
hog_b=$HOG
before_a=$(np_affinity "$hog_a")
before_b=$(np_affinity "$hog_b")

local_enough() {
	h=$(np_home_of "$1")
	[ "$h" -ge 0 ] && [ "$(np_percent_on_node "$1" "$h")" -ge 90 ]
}

# Start the daemon (defaults, or the extra lines on stdin) and wait until
# both hogs are homed apart and 90% local.
start_and_wait() {
	{
		echo "min_rss_mb = 32"
		echo "tick_ms = 100"
		echo "scan_delay_ms = 500"
		echo "scan_period_min_ms = 500"
		echo "metrics_listen = 127.0.0.1:0"
		echo "log_level = info"
		cat
	} >/tmp/home.conf
	np_daemon_start </tmp/home.conf
	start=$NP_DAEMON_START_MS
	until local_enough "$hog_a" && local_enough "$hog_b"; do
		[ $(($(np_ms) - start)) -lt 90000 ] ||
			np_fail "after 90 s: hog a home $(np_home_of "$hog_a") $(np_percent_on_node "$hog_a" 0)% on node 0," \
				"hog b home $(np_home_of "$hog_b") $(np_percent_on_node "$hog_b" 0)% on node 0"
		sleep 0.1
	done
	local_ms=$(($(np_ms) - start))
	home_a=$(np_home_of "$hog_a")
	home_b=$(np_home_of "$hog_b")
	[ "$home_a" != "$home_b" ] || np_fail "both hogs homed on node $home_a"
}

start_and_wait </dev/null
# 90% local can come while the last pages still move, and the status shows
# a move in flight as "started": take the one the host checks once the hog
# homed on node 1 has a move that ended.
[ "$home_a" = 1 ] && away=$hog_a || away=$hog_b
until numaplaced --status >/tmp/status.txt 2>/tmp/status.err &&
	awk -v pid="$away" '$1 == pid && $2 == "np-hog" { row = 1; next }
		row && /last action/ { ok = /, done: /; row = 0 } END { exit !ok }' /tmp/status.txt; do
	[ $(($(np_ms) - start)) -lt 90000 ] ||
		np_fail "no ended move of pid $away in 90 s: $(grep -A2 "^ *$away np-hog" /tmp/status.txt) $(cat /tmp/status.err)"
	sleep 0.1
done
moved=$(np_metric_moved_mib 0 1)
echo "daemon-home: both hogs 90% local after $local_ms ms, homes $home_a and $home_b, $moved MiB moved"
# What the daemon says it did: checked on the host (daemon-home.check.py).
numaplaced --status --json >/tmp/status.json 2>/tmp/status.err ||
	np_fail "--status --json: exit $?: $(cat /tmp/status.err)"
echo "$hog_a $home_a $hog_b $home_b" >/tmp/homes
np_emit status.json /tmp/status.json
np_emit homes /tmp/homes

# The user pins one thread of hog a meanwhile: that mask is theirs, and
# a task whose user placed a thread has no home: at its next look the
# daemon gives its other threads back the mask they had; SIGTERM then
# gives hog b its own.
tid=$(ls "/proc/$hog_a/task" | sed -n 2p)
taskset -p -c 0 "$tid" >/dev/null || np_fail "cannot pin thread $tid"
t0=$(np_ms)
until grep -q "pid $hog_a (np-hog): move given-back: a thread has a CPU mask of its own" \
	"$NP_DAEMON_LOG"; do
	[ $(($(np_ms) - t0)) -lt 30000 ] ||
		np_fail "hog a not given back 30 s after a thread was pinned: $(tail -n 5 "$NP_DAEMON_LOG")"
	sleep 0.1
done
np_daemon_stop
grep -q 'gave 1 task the CPU mask it had before' "$NP_DAEMON_LOG" ||
	np_fail "no give-back of hog b logged: $(tail -n 5 "$NP_DAEMON_LOG")"
[ ! -e /run/numaplaced/masks ] || np_fail "masks file left after a clean stop"
after_a=$(np_affinity "$hog_a")
after_b=$(np_affinity "$hog_b")
want_a=$(echo "$before_a" | sed "s/\b$tid:[^ ]*/$tid:0/")
[ "$after_b" = "$before_b" ] || np_fail "hog b not given back: $before_b -> $after_b"
[ "$after_a" = "$want_a" ] || np_fail "hog a: want $want_a, have $after_a"
echo "daemon-home: after SIGTERM hog b $after_b, hog a $after_a (thread $tid the user's)"

# A crash: the masks stay narrowed, and the file says what they were.
taskset -p -c "$all" "$tid" >/dev/null
start_and_wait </dev/null
np_daemon_crash
[ "$NP_SAVED" = 2 ] || np_fail "masks file: $NP_SAVED entries: $(cat /run/numaplaced/masks)"
[ "$(np_home_of "$hog_a")" -ge 0 ] || np_fail "hog a not narrowed before the restart"
# The next start gives them back first.
np_restart_gives_back "$hog_a" "$before_a" "$hog_b" "$before_b"
kill "$hog_a" "$hog_b"
echo "daemon-home: after SIGKILL and a restart both hogs have their masks back"
