# Thread homes, with the defaults, on 4 nodes of one CPU: two 2-thread
# hogs, each thread writing a slice of its own, with all their memory on
# node 0 and free to run on every CPU. No node holds a hog's two busy
# threads: the plan spreads them, and the daemon gives each thread a node
# and moves the slice it writes there. Each thread then finds at least 90%
# of its slice on the node it runs on (np-hog says so on SIGUSR1: no file
# of /proc tells which thread uses which page). Then a thread the user
# pins meanwhile keeps that mask through SIGTERM, which gives every other
# thread its mask back; last, after SIGKILL the saved masks file lists the
# threads, and the next start gives them back.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up

# The write samples' own test, whole here: the build host's kernel may
# keep no soft-dirty bits, and there it skips its live parts (a sample,
# and one split in two).
out=$(/np/bin/test-writers 2>&1) || np_fail "test-writers: $out"
case $out in *skipped*) np_fail "test-writers skipped a part: $out" ;; esac
echo "daemon-threads: test-writers: $(echo "$out" | tr '\n' ' ')"

# Two hogs, a and b, with their memory on node 0 and free threads.
start_hogs() {
	np_start_free_hog /tmp/hog-a.out --threads 2 --mib 48 --pause-ms 0 --quiet
	hog_a=$HOG
	np_start_free_hog /tmp/hog-b.out --threads 2 --mib 48 --pause-ms 0 --quiet
	hog_b=$HOG
	before_a=$(np_affinity "$hog_a")
	before_b=$(np_affinity "$hog_b")
}
start_hogs

# The hog's threads but its main one (which only waits for them).
workers() {
	ls "/proc/$1/task" | grep -vx "$1"
}

# The lowest, over both hogs' threads, of the percent of its slice on the
# node it runs on, as the threads said at their last SIGUSR1.
lowest_local() {
	for f in /tmp/hog-a.out /tmp/hog-b.out; do
		awk '$1 == "local" { pct[$3] = $9 ? int($11 * 100 / $9) : 0 }
			END { for (t in pct) print pct[t] }' "$f"
	done | sort -n | head -n 1
}

# Whether this daemon homed PID's two threads.
homed() {
	grep -q "pid $1 (np-hog): 2 threads homed" "$NP_DAEMON_LOG"
}

# Start the daemon (the extra lines on stdin) and wait until it homed
# both hogs' threads and every thread is 90% local.
start_and_wait() {
	{
		echo "min_rss_mb = 32"
		echo "tick_ms = 100"
		echo "scan_delay_ms = 500"
		echo "scan_period_min_ms = 500"
		echo "log_level = info"
		echo "metrics_listen = 127.0.0.1:0"
		cat
	} >/tmp/threads.conf
	np_daemon_start </tmp/threads.conf
	start=$NP_DAEMON_START_MS
	while :; do
		lines=$(cat /tmp/hog-a.out /tmp/hog-b.out | grep -c '^local')
		kill -USR1 "$hog_a" "$hog_b"
		# Both threads of both hogs answer at their next pass.
		t0=$(np_ms)
		until [ "$(cat /tmp/hog-a.out /tmp/hog-b.out | grep -c '^local')" -ge $((lines + 4)) ]; do
			[ $(($(np_ms) - t0)) -lt 20000 ] || np_fail "the hogs did not answer SIGUSR1"
			sleep 0.1
		done
		low=$(lowest_local)
		[ "$low" -ge 90 ] && homed "$hog_a" && homed "$hog_b" && break
		[ $(($(np_ms) - start)) -lt 120000 ] ||
			np_fail "after 120 s a thread has only $low% of its slice beside it:" \
				"$(grep '^local' /tmp/hog-a.out | tail -n 2)" \
				"$(grep '^local' /tmp/hog-b.out | tail -n 2)" \
				"masks a $(np_affinity "$hog_a") b $(np_affinity "$hog_b")"
		sleep 1
	done
	local_ms=$(($(np_ms) - start))
}

start_and_wait </dev/null
echo "daemon-threads: every thread at least 90% local after $local_ms ms:" \
	"$(grep '^local' /tmp/hog-a.out /tmp/hog-b.out | tail -n 4 | tr '\n' ';')"
echo "daemon-threads: masks a $(np_affinity "$hog_a"), b $(np_affinity "$hog_b")"
# What the status and the metrics say of it.
numaplaced --status >/tmp/status.txt 2>&1 || np_fail "--status: $(cat /tmp/status.txt)"
[ "$(grep -c 'thread homes: 2 threads (' /tmp/status.txt)" = 2 ] ||
	np_fail "status: $(cat /tmp/status.txt)"
[ "$(np_metric numaplaced_thread_homes)" = 4 ] ||
	np_fail "numaplaced_thread_homes $(np_metric numaplaced_thread_homes), not 4"
grep 'thread homes:' /tmp/status.txt
# Each busy thread on one node's CPU (a mask of one CPU), no two on the
# same: four threads, four nodes of one CPU.
masks=
for pid in "$hog_a" "$hog_b"; do
	for tid in $(workers "$pid"); do
		mask=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$pid/task/$tid/status")
		case $mask in *-* | *,*) np_fail "thread $tid of $pid: mask $mask, not one node's" ;; esac
		masks="$masks $mask"
	done
done
[ "$(echo $masks | tr ' ' '\n' | sort -u | wc -l)" = 4 ] ||
	np_fail "four threads on fewer nodes: $masks"

# A homed thread starts a process, which fork(2) gives that thread's
# one-node mask: once the daemon lists it, it has the hog's mask from
# before (the main thread's, never homed: it only waits).
kill -USR2 "$hog_a"
t0=$(np_ms)
until grep -q '^child' /tmp/hog-a.out; do
	[ $(($(np_ms) - t0)) -lt 20000 ] || np_fail "hog a started no child"
	sleep 0.1
done
child=$(awk '$1 == "child" { print $7 }' /tmp/hog-a.out)
born=$(awk '$1 == "child" { print $9 }' /tmp/hog-a.out)
case $born in *,*) np_fail "thread 0 of hog a had CPUs $born, not one node's" ;; esac
want=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$hog_a/status")
until [ "$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$child/status")" = "$want" ]; do
	[ $(($(np_ms) - t0)) -lt 20000 ] ||
		np_fail "child $child of hog a: CPUs" \
			"$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$child/status"), not $want"
	sleep 0.1
done
grep -q "pid $child (.*): inherited the CPUs the home of pid $hog_a gave it" "$NP_DAEMON_LOG" ||
	np_fail "child $child widened, not by the daemon: $(grep "pid $child" "$NP_DAEMON_LOG")"
echo "daemon-threads: a child started by a thread on CPU $born has CPUs $want" \
	"after $(($(np_ms) - t0)) ms"
kill "$child"

# The user pins a thread of hog a meanwhile: that mask is theirs.
tid=$(workers "$hog_a" | head -n 1)
mine=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$hog_a/task/$tid/status")
theirs=$(((mine + 1) % $(grep -c '^processor' /proc/cpuinfo)))
taskset -p -c "$theirs" "$tid" >/dev/null || np_fail "cannot pin thread $tid"
np_daemon_stop
[ ! -e /run/numaplaced/masks ] || np_fail "masks file left after a clean stop"
after_a=$(np_affinity "$hog_a")
after_b=$(np_affinity "$hog_b")
want_a=$(echo "$before_a" | sed "s/\b$tid:[^ ]*/$tid:$theirs/")
[ "$after_b" = "$before_b" ] || np_fail "hog b not given back: $before_b -> $after_b"
[ "$after_a" = "$want_a" ] || np_fail "hog a: want $want_a, have $after_a"
echo "daemon-threads: after SIGTERM hog b $after_b, hog a $after_a (thread $tid the user's)"

# A crash: the threads stay narrowed, and the file lists them. Two new
# hogs with their memory on node 0 (the old ones' threads are beside
# their memory now: they need no homes).
kill "$hog_a" "$hog_b"
wait "$hog_a" "$hog_b" 2>/dev/null
start_hogs
start_and_wait </dev/null
np_daemon_crash
[ "$NP_SAVED" -ge 4 ] || np_fail "masks file: $NP_SAVED entries: $(cat /run/numaplaced/masks)"
np_restart_gives_back "$hog_a" "$before_a" "$hog_b" "$before_b"
kill "$hog_a" "$hog_b"
echo "daemon-threads: after SIGKILL and a restart every thread has its mask back"
