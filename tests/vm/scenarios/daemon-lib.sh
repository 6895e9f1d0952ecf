# Helpers for the daemon scenarios (daemon-*.sh), on top of guest-lib.sh.
# Not a scenario itself: the daemon scenarios source it.
. /np/guest-lib.sh

# Milliseconds since boot (10 ms resolution: /proc/uptime has hundredths).
np_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

np_node_cpus() {
	cat "/sys/devices/system/node/node$1/cpulist"
}

# Percent (rounded down) of PID's resident pages that are on NODE.
np_percent_on_node() {
	awk -v key="N$2" '{ for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
			split($i, kv, "="); all += kv[2]; if (kv[1] == key) on += kv[2] } }
		END { print all ? int(on * 100 / all) : 0 }' "/proc/$1/numa_maps"
}

# "tid:cpulist ..." for every thread of PID: its affinity, to compare.
np_affinity() {
	for status in /proc/"$1"/task/*/status; do
		tid=${status%/status}
		printf '%s:%s ' "${tid##*/}" "$(awk '/^Cpus_allowed_list:/ { print $2 }' "$status")"
	done
	echo
}

# The node whose CPUs PID's main thread is kept on, or -1 while its mask
# is not one node's.
np_home_of() {
	mask=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$1/status")
	for dir in /sys/devices/system/node/node[0-9]*; do
		[ "$mask" = "$(cat "$dir/cpulist")" ] && { echo "${dir##*node}"; return; }
	done
	echo -1
}

# The CPUs PID's threads last ran on (field 39 of each thread's stat).
np_last_cpus() {
	cat /proc/"$1"/task/*/stat | awk '{ sub(/.*\) /, ""); printf "%s ", $37 } END { print "" }'
}

# Start an np-hog whose memory sits on node 1 while its threads run on node 0:
# it starts on node 1's CPUs so first touch puts every page there (no memory
# policy: a policy the user set is theirs, and the daemon leaves such memory
# alone), then all its threads are moved to node 0's CPUs. FILE gets its
# output; the other arguments go to np-hog. Sets NP_HOG_PID.
np_start_misplaced_hog() {
	file=$1
	shift
	# The redirection happens in the child: a file left by an earlier hog
	# would say "ready" before this one has started.
	rm -f "$file"
	taskset -c "$(np_node_cpus 1)" np-hog --policy local "$@" >"$file" 2>&1 &
	NP_HOG_PID=$!
	np_wait_ready "$file"
	taskset -a -p -c "$(np_node_cpus 0)" "$NP_HOG_PID" >/dev/null ||
		np_fail "cannot move the threads of $NP_HOG_PID to node 0"
	[ "$(np_percent_on_node "$NP_HOG_PID" 1)" -ge 90 ] ||
		np_fail "hog $NP_HOG_PID: only $(np_percent_on_node "$NP_HOG_PID" 1)% on node 1:" \
			"$(grep N0= "/proc/$NP_HOG_PID/numa_maps")"
}

# Start an np-hog whose first touch is on node 0's CPUs, then free all its
# threads to run on every CPU (the user's mask is then no pin): its memory
# is on node 0 and nobody placed it. FILE gets its output; the other
# arguments go to np-hog. Sets HOG.
np_start_free_hog() {
	file=$1
	shift
	rm -f "$file"
	taskset -c "$(np_node_cpus 0)" np-hog --policy local "$@" >"$file" 2>&1 &
	HOG=$!
	np_wait_ready "$file"
	taskset -a -p -c "$(cat /sys/devices/system/cpu/online)" "$HOG" >/dev/null ||
		np_fail "cannot free the threads of $HOG"
}

# Wait until the daemon has moved at least 2 MiB of PID to node 0: its pages
# there beyond BASE (what was there before, its share of shared libraries).
# Fails after SECONDS (default 30) or when PID exits.
np_wait_moving() {
	deadline=$(($(np_ms) + ${3:-30} * 1000))
	while :; do
		pages=$(np_pages_on_node "$1" 0 2>/dev/null) || np_fail "pid $1 exited by itself"
		[ "$pages" -ge $(($2 + 512)) ] && return 0
		[ "$(np_ms)" -lt "$deadline" ] || np_fail "the daemon did not start moving pid $1 in ${3:-30} s"
	done
}

# Slowest pass in np-hog output FILE after its first SKIP lines.
np_slowest_pass() {
	awk -v skip="$2" 'NR > skip && $1 == "pass" && $6 > max { max = $6 } END { print max + 0 }' "$1"
}

# The metrics endpoint must be reachable: the guest's loopback starts down.
np_loopback_up() {
	ip link set lo up || np_fail "cannot bring up lo"
}

# Start the daemon with the configuration on stdin and ARGS, under the
# command in NP_DAEMON_AS when set (setpriv ..., which execs it: the pid is
# the daemon's); waits for its start-up line. Sets NP_DAEMON_PID, NP_DAEMON_LOG, NP_DAEMON_START_MS (when
# it was launched) and, with metrics_listen = 127.0.0.1:0 and log_level =
# info in the configuration, NP_METRICS_PORT (a free port: one left in use
# by an earlier scenario's daemon cannot get in the way).
np_daemon_start() {
	cat >/tmp/numaplaced.conf
	NP_DAEMON_LOG=/tmp/numaplaced.log
	NP_DAEMON_START_MS=$(np_ms)
	# Emptied here, not only by the child's redirection: the wait below
	# must not find the start line of a daemon that ran before.
	: >"$NP_DAEMON_LOG"
	${NP_DAEMON_AS:-} numaplaced --foreground -c /tmp/numaplaced.conf "$@" >"$NP_DAEMON_LOG" 2>&1 &
	NP_DAEMON_PID=$!
	left=100
	until grep -q ' started' "$NP_DAEMON_LOG"; do
		kill -0 "$NP_DAEMON_PID" 2>/dev/null || np_fail "numaplaced exited: $(cat "$NP_DAEMON_LOG")"
		left=$((left - 1))
		[ "$left" -ge 0 ] || np_fail "numaplaced did not start: $(cat "$NP_DAEMON_LOG")"
		sleep 0.1
	done
	NP_METRICS_PORT=$(sed -n 's/.* metrics on port \([0-9]*\)$/\1/p' "$NP_DAEMON_LOG")
}

# Kill the daemon with SIGKILL: the masks file it kept stays. Sets
# NP_SAVED to the number of masks in it.
np_daemon_crash() {
	kill -KILL "$NP_DAEMON_PID"
	wait "$NP_DAEMON_PID" 2>/dev/null
	NP_SAVED=$(grep -vc '^#' /run/numaplaced/masks) || np_fail "no masks file after SIGKILL"
}

# After np_daemon_crash: a daemon started with affinity = never (so that
# nothing is narrowed again) must give back every saved mask first; then,
# for each PID BEFORE pair given, PID's threads have the masks BEFORE
# (np_affinity) again. Stops that daemon.
np_restart_gives_back() {
	# From a file, not a pipe: np_daemon_start sets variables here.
	printf 'min_rss_mb = 32\ntick_ms = 100\nlog_level = info\naffinity = never\n' \
		>/tmp/restart.conf
	np_daemon_start </tmp/restart.conf
	grep -q "an earlier run left $NP_SAVED narrowed tasks; $NP_SAVED given back" \
		"$NP_DAEMON_LOG" || np_fail "no restore logged: $(tail -n 5 "$NP_DAEMON_LOG")"
	while [ $# -ge 2 ]; do
		after=$(np_affinity "$1")
		[ "$after" = "$2" ] || np_fail "pid $1 after the restart: $2 -> $after"
		shift 2
	done
	np_daemon_stop
}

# A failed scenario shows what the daemon said.
np_show_daemon_log() {
	status=$?
	if [ "$status" != 0 ] && [ -n "${NP_DAEMON_LOG:-}" ]; then
		echo "--- numaplaced log (last 40 lines)"
		tail -n 40 "$NP_DAEMON_LOG"
	fi
	exit "$status"
}
trap np_show_daemon_log EXIT

# Stop the daemon with SIGTERM; it must exit 0.
np_daemon_stop() {
	kill -TERM "$NP_DAEMON_PID"
	wait "$NP_DAEMON_PID"
	status=$?
	[ "$status" = 0 ] || np_fail "numaplaced exited with $status: $(tail -n 20 "$NP_DAEMON_LOG")"
}

# Sum of the samples of metric NAME (a prefix like 'numaplaced_x' or
# 'numaplaced_x{a="b"'); 0 when there are none.
np_metric_float() {
	wget -q -O - "http://127.0.0.1:$NP_METRICS_PORT/metrics" >/tmp/metrics.txt ||
		np_fail "metrics: no answer on port $NP_METRICS_PORT"
	awk -v name="$1" 'index($0, name) == 1 {
			rest = substr($0, length(name) + 1)
			if (rest ~ /^[ {},]/) sum += $NF }
		END { printf "%.6f\n", sum }' /tmp/metrics.txt
}

# The same, rounded to a whole number.
np_metric() {
	np_metric_float "$1" | awk '{ printf "%.0f\n", $1 }'
}

# MiB the daemon moved from node SRC to node DST.
np_metric_moved_mib() {
	echo $(($(np_metric "numaplaced_migrated_bytes_total{src=\"$1\",dst=\"$2\"") >> 20))
}
