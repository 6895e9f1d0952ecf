# Placement benchmark: each workload below under each placement system, one
# after another in the same boot. Every run writes one results file
# (RUN.txt, sent to the host) with the topology, one sample of every task per
# second (pages per node from numa_maps, the CPU each thread last ran on and
# the CPUs it may run on), the tasks' CPU affinity at the start and at the
# end, the pages the kernel migrated, the placer's CPU time and each task's
# slowest pass. Tasks may start and stop during a run (churn): the events
# say when.
#
# BENCH_SCENARIOS and BENCH_SYSTEMS (bench-env.sh) may narrow the runs;
# BENCH_SECONDS and BENCH_SCENARIO_SECONDS set their length
# (scenario_seconds).
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology

scenarios=${BENCH_SCENARIOS:-misplaced compete big spread shift split churn}
systems=${BENCH_SYSTEMS:-none kernel numad numad-i5 numaplaced numaplaced-memonly}
node_mib=$NODE_MIB
cpus0=$(bench_cpus_of 0)
cpus_far=$(bench_cpus_of "$FAR_NODE")

# Start a hog under a launch affinity and wait until it holds its memory;
# appends its pid to HOGS (the tasks sampled).
#   start_hog NAME LAUNCH_CPUS NP_HOG_ARGS...
start_hog() {
	start_hog_later "$@"
	np_wait_ready "$1.out" 120
	PENDING=$(echo " $PENDING " | sed "s/ $HOG_PID / /")
	HOGS="$HOGS $HOG_PID"
}

# Start a hog as start_hog does, without waiting: it is sampled from the
# second it is ready at (see poll_pending). Sets HOG_PID.
start_hog_later() {
	name=$1
	launch=$2
	shift 2
	# Emptied here, not by the redirection below: that runs in the
	# background job, and a "ready" left by the run before could be read
	# first (the hog would then be let go while it allocates).
	: >"$name.out"
	taskset -c "$launch" np-hog --quiet --pause-ms=0 "$@" >"$name.out" 2>&1 &
	HOG_PID=$!
	eval "HOG_NAME_$HOG_PID=$name"
	PENDING="$PENDING $HOG_PID"
}

# Hogs started with start_hog_later that are now ready join HOGS.
poll_pending() {
	waiting=
	for pid in $PENDING; do
		name=$(eval "echo \$HOG_NAME_$pid")
		if grep -q '^ready' "$name.out" 2>/dev/null; then
			HOGS="$HOGS $pid"
			echo "event $(bench_now) ready:$name"
			bench_affinity start "$pid"
		else
			waiting="$waiting $pid"
		fi
	done
	PENDING=$waiting
}

# Stop hog PID (sampled or still starting) and record how it ended: its
# threads' CPUs at the end and its slowest pass.
stop_hog() {
	name=$(eval "echo \$HOG_NAME_$1")
	case " $HOGS " in
	*" $1 "*) bench_affinity end "$1" ;;
	esac
	kill -TERM "$1"
	wait "$1"
	echo "event $(bench_now) leave:$name"
	echo "hog $name.out $(grep '^done' "$name.out")"
	HOGS=$(echo " $HOGS " | sed "s/ $1 / /")
	PENDING=$(echo " $PENDING " | sed "s/ $1 / /")
}

# Seconds that scenario $1 runs for: BENCH_SECONDS, or the scenario's own
# length (churn: 60, three periods), or what BENCH_SCENARIO_SECONDS
# ("SCENARIO:SECONDS ...") gives it.
scenario_seconds() {
	length=$BENCH_SECONDS
	[ "$1" = churn ] && length=$((3 * CHURN_PERIOD))
	for pair in $BENCH_SCENARIO_SECONDS; do
		[ "${pair%%:*}" = "$1" ] && length=${pair#*:}
	done
	echo "$length"
}

# churn: the other task is replaced every CHURN_PERIOD seconds.
CHURN_PERIOD=20

# Set the workload of scenario $1 up; the user's affinity is in place when it
# returns.
setup_scenario() {
	HOGS=
	PENDING=
	case $1 in
	misplaced)
		# Memory first touched on the far node, then the user pins the
		# task to node 0: all its memory is remote.
		start_hog hog "$cpus_far" --mib=$((node_mib * 35 / 100))
		taskset -a -p -c "$cpus0" $HOGS >/dev/null
		;;
	compete)
		# Two 2-thread tasks, both with their memory on node 0 and free to
		# run anywhere: they do not fit on node 0's CPUs together.
		start_hog hog-a "$cpus0" --threads=2 --mib=$((node_mib * 35 / 100))
		start_hog hog-b "$cpus0" --threads=2 --mib=$((node_mib * 35 / 100))
		for pid in $HOGS; do
			taskset -a -p -c "$ALL_CPUS" "$pid" >/dev/null
		done
		;;
	big)
		# A task pinned to node 0 holding 1.3 times a node: no placement
		# makes it all local.
		start_hog hog "$cpus0" --threads=2 --mib=$((node_mib * 130 / 100))
		;;
	spread)
		# One thread pinned to each node, each touching its own slice
		# there: it starts well placed and should be left so.
		first_cpus=
		for n in $NODES; do
			first_cpus="$first_cpus${first_cpus:+,}$(bench_cpus_of "$n" | sed 's/[-,].*//')"
		done
		start_hog hog "$ALL_CPUS" --threads="$NODE_COUNT" --cpus="$first_cpus" \
			--policy=local --mib=$((node_mib * 16 / 100 * NODE_COUNT))
		;;
	shift)
		# Runs on node 0 with its memory there; a third of the way in, the
		# user moves it to the far node and its memory should follow
		# (scenario_tick).
		start_hog hog "$cpus0" --mib=$((node_mib * 35 / 100))
		;;
	split)
		# One thread free to run on every CPU, its memory half on node 0
		# and half on the far node, bound there for the first touch only:
		# to be all local, the thread and all its memory have to end up
		# on one node.
		start_hog hog "$ALL_CPUS" --node="0,$FAR_NODE" --split --policy=bind-once \
			--mib=$((node_mib * 35 / 100))
		;;
	churn)
		# Tasks as wide as node 0 (one thread per CPU of it), their memory
		# bound to node 0 for the first touch only, free to run on every
		# CPU: they do not fit on node 0 two at a time. One runs all
		# along; every CHURN_PERIOD seconds the other one leaves and a new
		# one arrives (scenario_tick), so the task that should move away
		# from node 0 changes.
		CHURN_ARGS="--threads=$(bench_count_cpus "$cpus0") --node=0 --policy=bind-once"
		CHURN_ARGS="$CHURN_ARGS --mib=$((node_mib * 35 / 100))"
		CHURN_OTHER=
		# shellcheck disable=SC2086
		start_hog hog-a "$ALL_CPUS" $CHURN_ARGS
		;;
	*) np_fail "unknown scenario $1" ;;
	esac
}

# What scenario $1 does at second $2 of its run, before that second's
# samples; events go to stdout (the results file).
scenario_tick() {
	case $1 in
	shift)
		if [ "$2" = $((seconds / 3)) ]; then
			# shellcheck disable=SC2086
			taskset -a -p -c "$cpus_far" $HOGS >/dev/null
			echo "event $(bench_now) shift"
		fi
		;;
	churn)
		[ "$2" -gt 0 ] && [ $(($2 % CHURN_PERIOD)) = 0 ] || return 0
		[ -z "$CHURN_OTHER" ] || stop_hog "$CHURN_OTHER"
		# hog-b, hog-c, ...
		name=hog-$(awk -v k=$(($2 / CHURN_PERIOD)) 'BEGIN { printf "%c", 97 + k }')
		echo "event $(bench_now) arrive:$name"
		# shellcheck disable=SC2086
		start_hog_later "$name" "$ALL_CPUS" $CHURN_ARGS
		CHURN_OTHER=$HOG_PID
		;;
	esac
}

# What each thread of hog $1 says of its own slice (np-hog, SIGUSR1): the
# share on the node it runs on, which no /proc file tells. One line per
# thread, "threadlocal PID local thread I tid T node N pages P here H ms MS";
# none when the threads do not answer within 10 s.
thread_locality() {
	file=$(eval "echo \$HOG_NAME_$1").out
	threads=$(awk '$1 == "ready" { print $7 }' "$file")
	before=$(grep -c '^local' "$file")
	kill -USR1 "$1"
	t0=$(bench_now)
	until [ "$(grep -c '^local' "$file")" -ge $((before + threads)) ]; do
		awk -v t="$t0" -v n="$(bench_now)" 'BEGIN { exit !(n - t > 10) }' && return 0
		sleep 0.1
	done
	grep '^local' "$file" | tail -n "$threads" | sed "s/^/threadlocal $1 /"
}

run_one() {
	scenario=$1
	system=$2
	seconds=$(scenario_seconds "$scenario")
	out=/tmp/$scenario-$system.txt
	{
		echo "run $NP_TOPOLOGY $scenario $system"
		bench_topology_lines
		echo "vmstat_before $(bench_vmstat_migrated)"
	} >"$out"
	bench_start_system "$system"
	setup_scenario "$scenario"
	start=$(bench_now)
	{
		echo "event $start start"
		for pid in $HOGS; do
			bench_affinity start "$pid"
		done
	} >>"$out"
	second=0
	while [ $second -lt "$seconds" ]; do
		{
			scenario_tick "$scenario" $second
			poll_pending
		} >>"$out"
		for pid in $HOGS; do
			bench_sample "$(bench_now)" "$pid" >>"$out"
		done
		second=$((second + 1))
		# Sample on the second, whatever the sampling itself took.
		bench_sleep_until "$start" "$second"
	done
	for pid in $HOGS; do
		thread_locality "$pid"
	done >>"$out"
	{
		echo "event $(bench_now) end"
		echo "vmstat_after $(bench_vmstat_migrated)"
		for pid in $HOGS; do
			bench_affinity end "$pid"
		done
		bench_stop_system
	} >>"$out"
	for pid in $HOGS $PENDING; do
		kill -TERM "$pid"
	done
	for pid in $HOGS $PENDING; do
		wait "$pid"
		echo "hog $(eval "echo \$HOG_NAME_$pid").out $(grep '^done' "$(eval "echo \$HOG_NAME_$pid").out")"
	done >>"$out"
	grep -E '^(sample|event)' "$out" | tail -n 2
	np_emit "$NP_TOPOLOGY-$scenario-$system.txt" "$out"
}

echo "bench: $NODE_COUNT nodes of $node_mib MiB, far node $FAR_NODE, $BENCH_SECONDS s per run" \
	"(churn: $(scenario_seconds churn) s)"
# BENCH_RUNS, "SCENARIO:SYSTEM ...", picks single runs instead.
runs=${BENCH_RUNS:-}
if [ -z "$runs" ]; then
	for scenario in $scenarios; do
		for system in $systems; do
			runs="$runs $scenario:$system"
		done
	done
fi
for pair in $runs; do
	echo "bench: ${pair%%:*} under ${pair#*:}, $(scenario_seconds "${pair%%:*}") s"
	run_one "${pair%%:*}" "${pair#*:}"
done
