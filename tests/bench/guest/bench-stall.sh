# Does the daemon lengthen a busy task's passes when it has nothing to move?
# The task of the big scenario (two threads on node 0's CPUs, 1.3 times a
# node of memory) runs 20 s under each phase, a fresh task and a fresh
# daemon each time, phases interleaved round by round:
#   none             no placer
#   numaplaced       the daemon with the shipped configuration
#   numaplaced-far   the same, its threads confined to the far node's CPUs
#   numaplaced-sched the same as numaplaced, with the scheduler's switches
#                    recorded on every CPU (the host's perf): how long each
#                    program ran on each CPU, and who took a CPU from the
#                    task while it could run
# One line per phase: "phase ROUND NAME passes N max MS next MS MS MS
# median MS daemon_cpu_s S". BENCH_STALL_SAMPLE set to anything also
# samples the task once a second as bench-placement.sh does (its
# numa_maps, its threads).
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology

node_mib=$NODE_MIB
cpus0=$(bench_cpus_of 0)
cpus_far=$(bench_cpus_of "$FAR_NODE")
rounds=${BENCH_STALL_ROUNDS:-3}
seconds=20
: "${BENCH_STALL_PHASES:=none numaplaced numaplaced-far numaplaced-sched}"
out=/tmp/stall.txt
: >"$out"
np_numa_balancing 0
case " $BENCH_STALL_PHASES " in
*" numaplaced-sched "*) command -v perf >/dev/null || np_fail "numaplaced-sched needs perf: run with BENCH_PERF=1" ;;
esac

# From `perf script` of sched_switch on stdin: per CPU and program, the ms
# it ran there (5 ms and more, and the daemon's whatever they are), and per
# CPU the programs that took the CPU from a np-hog thread that could still
# run (prev_state R, or R+ when preempted in the kernel).
switch_summary() {
	awk -v r="$1" '
		{
			c = ""; t = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^\[[0-9]+\]$/) c = substr($i, 2, length($i) - 2) + 0
				else if (c != "" && t == "" && $i ~ /^[0-9.]+:$/) t = substr($i, 1, length($i) - 1)
				else if ($i ~ /^prev_comm=/) pc = substr($i, 11)
				else if ($i ~ /^prev_state=/) ps = substr($i, 12)
				else if ($i ~ /^next_comm=/) nc = substr($i, 11)
			}
			if (c == "" || t == "") next
			if (c in since) {
				d = (t - since[c]) * 1000
				k = c " " cur[c]; ran[k] += d; n[k]++
				if (d > longest[k]) longest[k] = d
			}
			if (pc == "np-hog" && ps ~ /^R/) took[c " " nc]++
			cur[c] = nc; since[c] = t
		}
		END {
			for (k in ran) if (ran[k] >= 5 || k ~ / numaplaced$/) printf "ran %d cpu %s ms %.1f times %d longest %.1f\n", r, k, ran[k], n[k], longest[k]
			for (k in took) printf "took %d cpu %s %d\n", r, k, took[k]
		}'
}

conf=/etc/numaplaced/numaplaced.conf
round=1
while [ $round -le "$rounds" ]; do
	for phase in $BENCH_STALL_PHASES; do
		placer=
		case $phase in
		none) ;;
		numaplaced | numaplaced-sched)
			numaplaced --foreground --config "$conf" >numaplaced.log 2>&1 &
			placer=$! ;;
		numaplaced-far)
			taskset -c "$cpus_far" numaplaced --foreground --config "$conf" >numaplaced.log 2>&1 &
			placer=$! ;;
		*) np_fail "unknown phase $phase" ;;
		esac
		# As in bench-placement.sh: the placer first, then the task.
		sleep 0.2
		taskset -c "$cpus0" np-hog --pause-ms=0 --threads=2 --mib=$((node_mib * 130 / 100)) >hog.out 2>&1 &
		hog=$!
		np_wait_ready hog.out 180
		start=$(bench_now)
		recorder=
		if [ "$phase" = numaplaced-sched ]; then
			perf record -q -e sched:sched_switch -a -o /tmp/switch.data -- sleep "$seconds" >/dev/null 2>&1 &
			recorder=$!
		fi
		if [ -n "${BENCH_STALL_SAMPLE:-}" ]; then
			second=0
			while [ $second -lt $seconds ]; do
				bench_sample "$(bench_now)" "$hog" >/dev/null
				second=$((second + 1))
				bench_sleep_until "$start" "$second"
			done
		else
			sleep "$seconds"
		fi
		[ -z "$recorder" ] || wait "$recorder"
		ticks=0
		[ -n "$placer" ] && ticks=$(bench_cpu_ticks "$placer")
		kill -TERM "$hog"
		wait "$hog"
		if [ -n "$placer" ]; then
			kill -TERM "$placer"
			wait "$placer"
		fi
		echo "phase $round $phase $(bench_pass_summary hog.out) daemon_cpu_s $(awk -v t="$ticks" 'BEGIN { printf "%.2f", t / 100 }')" |
			tee -a "$out"
		if [ "$phase" = numaplaced-sched ]; then
			perf script -i /tmp/switch.data 2>/dev/null | switch_summary "$round" >>"$out"
			rm -f /tmp/switch.data
		fi
	done
	round=$((round + 1))
done
np_emit stall.txt "$out"
