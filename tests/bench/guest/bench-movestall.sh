# How long does a move hold up the task whose pages move, with every CPU
# busy? A 2-thread task of 35% of a node runs on the far node's CPUs with
# its memory first touched on node 0, so that the daemon moves all of it,
# while a 2-thread task on node 0's CPUs keeps those busy too (as in
# compete once the daemon has narrowed the tasks). Each phase runs 20 s
# from when the task was seen ready (polled once a second; the daemon,
# if any, starts then), a fresh pair of tasks and a fresh daemon each
# time, phases interleaved round by round:
#   none        no placer: the task's passes with its memory left remote
#   numaplaced  the daemon with the shipped configuration
# One line per phase: "phase ROUND NAME passes N max MS next MS MS MS
# median MS far PAGES near PAGES daemon_cpu_s S" (the task's pages on the
# far node and on node 0 at the end, from numa_maps: its shared
# libraries' pages too), then one line per pass of the task of 20 ms or
# more: "pass ROUND NAME THREAD MS". The passes are all those after
# "ready", the second or so before the daemon starts included.
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology

node_mib=$NODE_MIB
cpus0=$(bench_cpus_of 0)
cpus_far=$(bench_cpus_of "$FAR_NODE")
rounds=${BENCH_STALL_ROUNDS:-3}
seconds=20
: "${BENCH_MOVESTALL_PHASES:=none numaplaced}"
out=/tmp/movestall.txt
: >"$out"
np_numa_balancing 0

conf=/etc/numaplaced/numaplaced.conf
round=1
while [ $round -le "$rounds" ]; do
	for phase in $BENCH_MOVESTALL_PHASES; do
		case $phase in
		none | numaplaced) ;;
		*) np_fail "unknown phase $phase" ;;
		esac
		taskset -c "$cpus0" np-hog --pause-ms=0 --threads=2 --mib=16 >busy.out 2>&1 &
		busy=$!
		taskset -c "$cpus_far" np-hog --pause-ms=0 --threads=2 --node=0 --policy=bind-once \
			--mib=$((node_mib * 35 / 100)) >hog.out 2>&1 &
		hog=$!
		np_wait_ready hog.out 180
		placer=
		if [ "$phase" = numaplaced ]; then
			numaplaced --foreground --config "$conf" >numaplaced.log 2>&1 &
			placer=$!
		fi
		sleep "$seconds"
		ticks=0
		[ -n "$placer" ] && ticks=$(bench_cpu_ticks "$placer")
		far=$(np_pages_on_node "$hog" "$FAR_NODE")
		near=$(np_pages_on_node "$hog" 0)
		kill -TERM "$hog" "$busy"
		wait "$hog"
		wait "$busy"
		if [ -n "$placer" ]; then
			kill -TERM "$placer"
			wait "$placer"
		fi
		echo "phase $round $phase $(bench_pass_summary hog.out) far $far near $near daemon_cpu_s $(awk -v t="$ticks" 'BEGIN { printf "%.2f", t / 100 }')" |
			tee -a "$out"
		grep '^pass ' hog.out | awk -v r="$round" -v p="$phase" '$6 >= 20 { print "pass", r, p, $4, $6 }' >>"$out"
	done
	round=$((round + 1))
done
np_emit movestall.txt "$out"
