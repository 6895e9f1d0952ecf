# Helpers for the benchmark scenarios inside the test guest (busybox sh).
# Sourced after /np/guest-lib.sh.
. /np/scenarios/bench-env.sh

# Seconds since boot, to 10 ms.
bench_now() {
	cut -d' ' -f1 /proc/uptime
}

# Sleep until second K after START (bench_now's), at once when that is
# past: work done each second does not shift the next one.
bench_sleep_until() {
	sleep "$(awk -v s="$1" -v n="$(bench_now)" -v k="$2" \
		'BEGIN { d = s + k - n; if (d < 0) d = 0; printf "%.2f", d }')"
}

# NODES (list), NODE_COUNT, CPUS_<n> for each node, ALL_CPUS, FAR_NODE:
# the node farthest from node 0 (the lowest-numbered one on a tie), and
# NODE_MIB: node 0's memory in MiB (the guests' nodes are of one size).
bench_topology() {
	NODES=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
		for (j = r[1]; j <= r[n]; j++) printf "%d ", j } }' /sys/devices/system/node/online)
	NODE_COUNT=0
	for n in $NODES; do
		eval "CPUS_$n=$(cat /sys/devices/system/node/node$n/cpulist)"
		NODE_COUNT=$((NODE_COUNT + 1))
	done
	ALL_CPUS=$(cat /sys/devices/system/cpu/online)
	FAR_NODE=$(awk '{ far = 0; for (i = 2; i <= NF; i++) if ($i > $(far + 1)) far = i - 1; print far }' \
		/sys/devices/system/node/node0/distance)
	NODE_MIB=$(awk '$3 == "MemTotal:" { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo)
}

# CPU list of node N.
bench_cpus_of() {
	eval "echo \$CPUS_$1"
}

# Number of CPUs in LIST (e.g. 0-1,4).
bench_count_cpus() {
	echo "$1" | awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); count += r[n] - r[1] + 1 } }
		END { print count + 0 }'
}

# Print the topology header of a results file: one "node N CPULIST" line per
# node, so the host can map the CPU a thread ran on to its node.
bench_topology_lines() {
	for n in $NODES; do
		echo "node $n $(bench_cpus_of "$n")"
	done
}

# Migration counters from /proc/vmstat: "<pgmigrate_success> <numa_pages_migrated>".
bench_vmstat_migrated() {
	awk '$1 == "pgmigrate_success" { s = $2 } $1 == "numa_pages_migrated" { n = $2 }
		END { print s + 0, n + 0 }' /proc/vmstat
}

# CPU time (user + system clock ticks) of PID, 0 when it is gone.
bench_cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# One observation of PID at time T: pages per node from numa_maps, for
# each thread the CPU it last ran on and the CPU time it used so far (clock
# ticks), so that the host can leave out threads that only wait, and each
# thread's allowed CPUs, so that the host can count changes of affinity.
#   sample T PID N0=pages N1=pages ... cpus=CPU:TICKS,CPU:TICKS,... aff=LIST/LIST/...
# Threads are in the same order in cpus= and aff= (both globs sort alike).
bench_sample() {
	awk -v t="$1" -v pid="$2" '
		FILENAME ~ /numa_maps$/ {
			for (i = 2; i <= NF; i++)
				if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), kv, "="); pages[kv[1]] += kv[2] }
			next
		}
		FILENAME ~ /status$/ {
			if ($1 == "Cpus_allowed_list:") aff = aff (aff == "" ? "" : "/") $2
			next
		}
		{ line = $0; sub(/.*\) /, "", line); split(line, f, " ");
		  if (cpus != "") cpus = cpus ","
		  cpus = cpus f[37] ":" (f[12] + f[13]) }
		END {
			out = "sample " t " " pid
			for (n in pages) out = out " N" n "=" pages[n]
			print out " cpus=" cpus " aff=" aff
		}' "/proc/$2/numa_maps" /proc/"$2"/task/*/stat /proc/"$2"/task/*/status 2>/dev/null
}

# Each thread's allowed CPUs of PID: "affinity WHEN PID TID LIST" lines.
bench_affinity() {
	for status in /proc/"$2"/task/*/status; do
		tid=${status#/proc/$2/task/}
		tid=${tid%/status}
		echo "affinity $1 $2 $tid $(awk '$1 == "Cpus_allowed_list:" { print $2 }' "$status" 2>/dev/null)"
	done
}

# Start the placement system NAME; sets PLACER_PID (empty when the system is
# the kernel alone). Every system starts from kernel balancing off.
#   none        nothing moves memory or threads
#   kernel      kernel.numa_balancing = 1
#   numad       Debian's numad with its defaults
#   numad-i5    numad -i 5 (re-evaluates at most every 5 s)
#   numaplaced  numaplaced --foreground with the shipped config (its defaults)
#   numaplaced-memonly  the same with affinity = never: it moves memory only
#               and never touches a thread's CPU affinity
#   numaplaced-node  the same with affinity = node, the name of an older
#               series (now an alias of the default, unpinned), kept so that
#               such a series can be run again
#   numaplaced-nosample  the same with run_sample_hz = 0: no CPU samples,
#               small and idle tasks read at each wait's end (a baseline)
# BENCH_NUMAPLACED_SETTING, when set, is one more line of configuration
# for every numaplaced system (an experiment: "migrate_threads = 4").
bench_start_system() {
	PLACER_PID=
	np_numa_balancing 0
	# A killed numad stays a zombie until init reaps it, and takes a while
	# to get there when the guest is busy: up to 10 s.
	left=100
	for pid in $(pidof numad); do
		while [ -d "/proc/$pid" ] &&
			[ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
			[ $left -gt 0 ] || np_fail "a numad from an earlier run is still running"
			sleep 0.1
			left=$((left - 1))
		done
	done
	case $1 in
	none) ;;
	kernel) np_numa_balancing 1 ;;
	numad | numad-i5)
		# numad holds back for 300 s after boot, counted on the monotonic
		# clock: a fresh time namespace 1000 s ahead lets it act at once.
		# util-linux unshare by its path: busybox sh prefers its own
		# applet, which has no --time. This numad has no foreground
		# option: it detaches, and is found by name.
		mkdir -p /var/log /var/run
		rm -f /var/run/numad.pid /var/log/numad.log numad.out /tmp/numad-start.ticks
		interval=
		[ "$1" = numad-i5 ] && interval="-i 5"
		# Its starting process loads, reads its options, forks the
		# daemon and exits: a shell waits for it and writes down the
		# CPU it used, which counts as numaplaced's own start does.
		# shellcheck disable=SC2016,SC2086
		/usr/bin/unshare --time --monotonic 1000 --fork sh -c '"$@"
			awk "{ sub(/.*\\) /, \"\"); print \$14 + \$15 }" /proc/$$/stat \
				>/tmp/numad-start.ticks' sh "$BENCH_NUMAD" $interval >numad.out 2>&1 &
		BENCH_UNSHARE_PID=$!
		left=50
		while [ -z "$PLACER_PID" ] && [ $left -gt 0 ]; do
			sleep 0.1
			PLACER_PID=$(pidof numad | cut -d' ' -f1)
			left=$((left - 1))
		done
		[ -n "$PLACER_PID" ] || np_fail "numad did not start: $(cat numad.out)"
		# pidof may have caught the parent on its way out: the daemon
		# writes its own pid once detached.
		left=50
		while [ $left -gt 0 ]; do
			pid=$(cat /var/run/numad.pid 2>/dev/null)
			[ -n "$pid" ] && [ -d "/proc/$pid" ] && { PLACER_PID=$pid; break; }
			sleep 0.1
			left=$((left - 1))
		done
		;;
	numaplaced | numaplaced-memonly | numaplaced-node | numaplaced-nosample)
		# The shipped configuration (/etc/numaplaced/numaplaced.conf in
		# the guest) sets nothing: every key at its default.
		conf=/etc/numaplaced/numaplaced.conf
		case $1 in
		numaplaced-memonly) setting="affinity = never" ;;
		numaplaced-node) setting="affinity = node" ;;
		numaplaced-nosample) setting="run_sample_hz = 0" ;;
		*) setting= ;;
		esac
		if [ -n "${BENCH_NUMAPLACED_SETTING:-}" ]; then
			setting="$setting${setting:+
}$BENCH_NUMAPLACED_SETTING"
		fi
		if [ -n "$setting" ]; then
			conf=/tmp/$1.conf
			{ cat /etc/numaplaced/numaplaced.conf; echo "$setting"; } >"$conf"
		fi
		# shellcheck disable=SC2086
		numaplaced --foreground --config "$conf" ${BENCH_NUMAPLACED_ARGS:-} \
			>numaplaced.log 2>&1 &
		PLACER_PID=$!
		sleep 0.2
		kill -0 "$PLACER_PID" 2>/dev/null || np_fail "numaplaced did not start: $(cat numaplaced.log)"
		;;
	*) np_fail "unknown system $1" ;;
	esac
	bench_perf_start
}

# BENCH_PERF=1: sample the placer's stacks on the CPU clock while it runs
# (the host's perf, copied in by vm-bench.sh, attached once the placer has
# started); bench_perf_stop ends the sampling, bench_perf_report prints
# the report once the placer has stopped, each line prefixed "perf ".
BENCH_PERF_PID=
bench_perf_start() {
	[ -n "${BENCH_PERF:-}" ] && [ -n "$PLACER_PID" ] || return 0
	rm -f /tmp/placer.perf
	# BENCH_PERF=dwarf unwinds user stacks from DWARF (a build without
	# frame pointers), at a lower rate: each sample copies the stack.
	case $BENCH_PERF in
	dwarf) graph="--call-graph dwarf,16384 -F ${BENCH_PERF_HZ:-250}" ;;
	*) graph=-g ;;
	esac
	# shellcheck disable=SC2086
	perf record -q -e cpu-clock $graph -p "$PLACER_PID" -o /tmp/placer.perf >/dev/null 2>&1 &
	BENCH_PERF_PID=$!
}

bench_perf_stop() {
	[ -n "$BENCH_PERF_PID" ] || return 0
	kill -INT "$BENCH_PERF_PID" 2>/dev/null
	wait "$BENCH_PERF_PID" 2>/dev/null
	BENCH_PERF_PID=
}

bench_perf_report() {
	[ -f /tmp/placer.perf ] || return 0
	# Where the time went, flat, then the call chains of the biggest.
	{
		perf report -i /tmp/placer.perf --stdio --no-children --sort dso,sym -g none \
			--percent-limit 0.5
		perf report -i /tmp/placer.perf --stdio --no-children --sort sym -g graph,0.5,callee \
			--percent-limit 2
		# Each function with what it called: where a cycle's time goes.
		perf report -i /tmp/placer.perf --stdio --children --sort sym -g none \
			--percent-limit 1
	} 2>&1 | grep -v -e '^#' -e '^$' | sed 's/^/perf /'
	rm -f /tmp/placer.perf
}

# Stop what bench_start_system started; prints "placer_cpu_s SECONDS" (its
# user + system time) when there was a placer process.
bench_stop_system() {
	if [ -n "$PLACER_PID" ]; then
		bench_perf_stop
		ticks=$(bench_cpu_ticks "$PLACER_PID")
		if [ -f /tmp/numad-start.ticks ]; then
			start=$(cat /tmp/numad-start.ticks)
			echo "placer_start_cpu_s $(awk -v t="$start" 'BEGIN { printf "%.2f", t / 100 }')"
			ticks=$((ticks + start))
			rm -f /tmp/numad-start.ticks
		fi
		# numaplaced logs its counters on SIGUSR1.
		if [ -z "${BENCH_UNSHARE_PID:-}" ]; then
			kill -USR1 "$PLACER_PID" 2>/dev/null
			sleep 0.5
		fi
		echo "placer_cpu_s $(awk -v t="$ticks" 'BEGIN { printf "%.2f", t / 100 }')"
		kill -TERM "$PLACER_PID" 2>/dev/null
		left=50
		while kill -0 "$PLACER_PID" 2>/dev/null && [ $left -gt 0 ]; do
			sleep 0.1
			left=$((left - 1))
		done
		kill -KILL "$PLACER_PID" 2>/dev/null
		wait "${BENCH_UNSHARE_PID:-$PLACER_PID}" 2>/dev/null
		# No numad may outlive its run: one left behind would place the
		# tasks of every run after it.
		for pid in $(pidof numad); do
			kill -KILL "$pid" 2>/dev/null
		done
		# The placer's own account of what it did, for the record.
		for log in numad.out /var/log/numad.log numaplaced.log; do
			[ -f "$log" ] && sed 's/^/log /' "$log" | tail -n "${BENCH_LOG_LINES:-40}"
			rm -f "$log"
		done
		bench_perf_report
	fi
	BENCH_UNSHARE_PID=
	PLACER_PID=
	np_numa_balancing 0
}

# The passes np-hog reported in FILE (its "pass N thread T ms X" lines):
# "passes N max MS next MS MS MS median MS", the slowest four and the
# median.
bench_pass_summary() {
	grep '^pass ' "$1" | awk '{ print $6 }' | sort -rn >/tmp/passes
	n=$(wc -l </tmp/passes)
	echo "passes $n max $(sed -n 1p /tmp/passes) next $(sed -n 2,4p /tmp/passes | tr '\n' ' ')median $(sed -n "$((n / 2 + 1))p" /tmp/passes)"
}
