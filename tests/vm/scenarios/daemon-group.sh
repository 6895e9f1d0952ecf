# Two processes nobody pinned that write the same shared memory (a file in
# /dev/shm, mapped shared by both) are homed together, as the kernel's
# numa_group places tasks that fault on the same pages. A first touches the
# shared file and 16 MiB of its own on node 0; B has 96 MiB of its own on
# node 1 and maps the same file. Alone, B's home would be node 1 (96 MiB
# there against 64 MiB of the file on node 0); as one unit their memory is
# mostly on node 0, so both are homed there and B's own memory follows.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
all=$(cat /sys/devices/system/cpu/online)
shm=/dev/shm/np-group
rm -f "$shm"

start_hog() {
	out=$1 node=$2
	shift 2
	rm -f "$out"
	taskset -c "$(np_node_cpus "$node")" np-hog --policy local --pause-ms 20 --quiet \
		--shm "$shm:64" "$@" >"$out" 2>&1 &
	HOG=$!
	np_wait_ready "$out"
}
start_hog /tmp/a.out 0 --mib 16
a=$HOG
start_hog /tmp/b.out 1 --mib 96
b=$HOG
taskset -a -p -c "$all" "$a" >/dev/null && taskset -a -p -c "$all" "$b" >/dev/null ||
	np_fail "cannot free the hogs' threads"
before_a=$(np_affinity "$a")
before_b=$(np_affinity "$b")

np_daemon_start <<CONF
min_rss_mb = 8
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$NP_DAEMON_START_MS

until [ "$(np_home_of "$a")" = 0 ] && [ "$(np_home_of "$b")" = 0 ] &&
	[ "$(np_percent_on_node "$b" 0)" -ge 90 ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] ||
		np_fail "after 60 s: a home $(np_home_of "$a"), b home $(np_home_of "$b")," \
			"b $(np_percent_on_node "$b" 0)% on node 0: $(grep -E 'np-hog' "$NP_DAEMON_LOG" | tail -n 4)"
	sleep 0.1
done
took=$(($(np_ms) - start))
# The decision is logged when its tick ends, after the pages moved: the
# locality above can be seen first.
left=100
until grep -q 'with the tasks it shares written memory with' "$NP_DAEMON_LOG"; do
	left=$((left - 1))
	[ "$left" -ge 0 ] || np_fail "no group decision logged: $(grep np-hog "$NP_DAEMON_LOG" | tail -n 3)"
	sleep 0.1
done
moved=$(np_metric_moved_mib 1 0)
np_daemon_stop
after_a=$(np_affinity "$a")
after_b=$(np_affinity "$b")
kill "$a" "$b"
rm -f "$shm"
echo "daemon-group: both homed on node 0, b 90% there after $took ms, $moved MiB moved"
[ "$after_a" = "$before_a" ] && [ "$after_b" = "$before_b" ] ||
	np_fail "masks not given back: a $before_a -> $after_a, b $before_b -> $after_b"
