# Placement benchmark: each workload below under each placement system, one
# after another in the same boot. Every run writes one results file
# (RUN.txt, sent to the host) with the topology, one sample of every task per
# second (pages per node from numa_maps, the CPU each thread last ran on),
# the tasks' CPU affinity at the start and at the end, the pages the kernel
# migrated, the placer's CPU time and each task's slowest pass.
#
# BENCH_SCENARIOS and BENCH_SYSTEMS (bench-env.sh) may narrow the runs.
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology

scenarios=${BENCH_SCENARIOS:-misplaced compete big spread shift split}
systems=${BENCH_SYSTEMS:-none kernel numad numad-i5 numaplaced numaplaced-memonly}
seconds=$BENCH_SECONDS
node_mib=$(awk '$3 == "MemTotal:" { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo)
cpus0=$(bench_cpus_of 0)
cpus_far=$(bench_cpus_of "$FAR_NODE")

# Start a hog under a launch affinity; appends its pid to HOGS.
#   start_hog NAME LAUNCH_CPUS NP_HOG_ARGS...
start_hog() {
	name=$1
	launch=$2
	shift 2
	taskset -c "$launch" np-hog --quiet --pause-ms=0 "$@" >"$name.out" 2>&1 &
	pid=$!
	np_wait_ready "$name.out" 120
	HOGS="$HOGS $pid"
	HOG_FILES="$HOG_FILES $name.out"
}

# Set the workload of scenario $1 up; the user's affinity is in place when it
# returns. MID_ACTION runs at MID_SECONDS (if set).
setup_scenario() {
	HOGS=
	HOG_FILES=
	MID_ACTION=
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
		# user moves it to the far node and its memory should follow.
		start_hog hog "$cpus0" --mib=$((node_mib * 35 / 100))
		MID_ACTION="taskset -a -p -c $cpus_far $HOGS"
		MID_SECONDS=$((seconds / 3))
		;;
	split)
		# One thread free to run on every CPU, its memory half on node 0
		# and half on the far node, bound there for the first touch only:
		# to be all local, the thread and all its memory have to end up
		# on one node.
		start_hog hog "$ALL_CPUS" --node="0,$FAR_NODE" --split --policy=bind-once \
			--mib=$((node_mib * 35 / 100))
		;;
	*) np_fail "unknown scenario $1" ;;
	esac
}

run_one() {
	scenario=$1
	system=$2
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
		if [ -n "$MID_ACTION" ] && [ $second = "$MID_SECONDS" ]; then
			$MID_ACTION >/dev/null
			echo "event $(bench_now) shift" >>"$out"
		fi
		for pid in $HOGS; do
			bench_sample "$(bench_now)" "$pid" >>"$out"
		done
		second=$((second + 1))
		# Sample on the second, whatever the sampling itself took.
		now=$(bench_now)
		left=$(awk -v s="$start" -v n="$now" -v k="$second" 'BEGIN { d = s + k - n; if (d < 0) d = 0; printf "%.2f", d }')
		sleep "$left"
	done
	{
		echo "event $(bench_now) end"
		echo "vmstat_after $(bench_vmstat_migrated)"
		for pid in $HOGS; do
			bench_affinity end "$pid"
		done
		bench_stop_system
	} >>"$out"
	for pid in $HOGS; do
		kill -TERM "$pid"
	done
	for pid in $HOGS; do
		wait "$pid"
	done
	for f in $HOG_FILES; do
		echo "hog $f $(grep '^done' "$f")" >>"$out"
	done
	grep -E '^(sample|event)' "$out" | tail -n 2
	np_emit "$NP_TOPOLOGY-$scenario-$system.txt" "$out"
}

echo "bench: $NODE_COUNT nodes of $node_mib MiB, far node $FAR_NODE, $seconds s per run"
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
	echo "bench: ${pair%%:*} under ${pair#*:}"
	run_one "${pair%%:*}" "${pair#*:}"
done
