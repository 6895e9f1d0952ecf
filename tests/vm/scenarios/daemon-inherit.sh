# What a narrowed task starts is not narrowed. fork(2) copies affinity: a
# process started by a task the daemon homed begins with the home's CPUs,
# a mask that is the daemon's doing, not its user's. A busy shell nobody
# pinned is homed; it then starts a shell that starts a sleep, and goes on
# to start one short process after another: a launcher now, it is given
# its mask back at its next look. The scan delay (2 s) lists the child and
# the grandchild after that: both still get the mask the busy shell had
# before (every CPU), and the log says so. An
# idle process (below 5% of a CPU), a launcher (a shell that starts one
# short process after another: they would all inherit its home), pid 1
# and the daemon itself are never narrowed, even with min_rss_mb = 0 and
# min_cpu_percent = 0 (every task looked at). SIGTERM gives the busy shell
# its mask back.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
all=$(cat /sys/devices/system/cpu/online)
rm -f /tmp/go

# The pids of PID's children named COMM, from every process's stat at once
# (an awk per process takes seconds in the emulated guest).
children_of() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v ppid="$1" -v comm="$2" '{ pid = $1; c = $0
		sub(/^[0-9]+ \(/, "", c); sub(/\) .*/, "", c); sub(/.*\) /, "")
		if ($2 == ppid && c == comm) print pid }'
}

mask_of() {
	awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$1/status"
}

# Spins until /tmp/go appears, then starts sh -> sleep, then launches.
sh -c 'while [ ! -e /tmp/go ]; do :; done; sh -c "sleep 1000 & wait" &
	while :; do sleep 0; done' &
busy=$!
sleep 1000 &
idle=$!
sh -c 'while :; do sleep 0; done' &
launcher=$!
np_daemon_start <<CONF
min_rss_mb = 0
min_cpu_percent = 0
tick_ms = 100
scan_delay_ms = 2000
scan_period_min_ms = 500
log_level = info
CONF
start=$(np_ms)
until [ "$(np_home_of "$busy")" -ge 0 ]; do
	[ $(($(np_ms) - start)) -lt 30000 ] ||
		np_fail "busy shell $busy not homed in 30 s: mask $(mask_of "$busy")"
	sleep 0.1
done
home=$(np_home_of "$busy")
narrowed=$(mask_of "$busy")
touch /tmp/go
child=
grandchild=
until [ -n "$grandchild" ]; do
	[ $(($(np_ms) - start)) -lt 60000 ] || np_fail "no child and grandchild of $busy"
	child=$(children_of "$busy" sh | head -n 1)
	[ -z "$child" ] || grandchild=$(children_of "$child" sleep | head -n 1)
	sleep 0.1
done
t0=$(np_ms)
# The construction: they started with the home's CPUs.
[ "$(mask_of "$child")" = "$narrowed" ] ||
	np_fail "child $child started with CPUs $(mask_of "$child"), not the home's $narrowed"
until [ "$(mask_of "$child")" = "$all" ] && [ "$(mask_of "$grandchild")" = "$all" ]; do
	[ $(($(np_ms) - t0)) -lt 10000 ] ||
		np_fail "after 10 s: child $child $(mask_of "$child"), grandchild $grandchild" \
			"$(mask_of "$grandchild"), want $all"
	sleep 0.1
done
widened_ms=$(($(np_ms) - t0))
for pid in "$child" "$grandchild"; do
	grep -q "pid $pid ([a-z]*): inherited the CPUs the home of pid $busy gave it: back to CPUs $all" \
		"$NP_DAEMON_LOG" || np_fail "no give-back of pid $pid logged"
done
# The busy shell lost its home first: the children's masks were given
# back after it.
order=$(grep -n -e "pid $busy (sh): move given-back: it starts processes" \
	-e "pid $child ([a-z]*): inherited" "$NP_DAEMON_LOG" | cut -d: -f1 | tr '\n' ' ')
set -- $order
[ $# = 2 ] && [ "$1" -lt "$2" ] ||
	np_fail "the launcher's give-back and its child's, lines: $order"
for who in init:1 idle:"$idle" launcher:"$launcher" daemon:"$NP_DAEMON_PID"; do
	pid=${who#*:}
	[ "$(mask_of "$pid")" = "$all" ] || np_fail "${who%:*} (pid $pid) narrowed: $(mask_of "$pid")"
done
grep -q "pid $NP_DAEMON_PID (numaplaced): move" "$NP_DAEMON_LOG" &&
	np_fail "the daemon acted on itself"
grep -q "pid $launcher (sh): move home" "$NP_DAEMON_LOG" && np_fail "the launcher was homed"
# The construction: the launcher's children did use CPU (cutime + cstime).
child_ticks=$(awk '{ sub(/.*\) /, ""); print $14 + $15 }' "/proc/$launcher/stat")
[ "$child_ticks" -gt 0 ] || np_fail "the launcher's children used no CPU"
np_daemon_stop
[ "$(mask_of "$busy")" = "$all" ] || np_fail "busy shell not given back: $(mask_of "$busy")"
kill "$busy" "$child" "$grandchild" "$idle" "$launcher" 2>/dev/null
echo "daemon-inherit: busy shell homed on node $home ($narrowed), given back as a launcher;" \
	"its child and grandchild back to CPUs $all within $widened_ms ms of being seen; pid 1, an idle sleep, a launcher (children's CPU $child_ticks ticks) and the daemon untouched"
