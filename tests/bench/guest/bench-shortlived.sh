# Short-lived work beside a long task: np-spawn starts many processes that
# each live a few tens of milliseconds (2 alive at a time) while one np-hog
# runs, under each placement system with its defaults. What counts is how
# long np-spawn takes against no placement system in the same boot: nothing
# here should be placed, so a system that costs the generator time costs it
# for nothing. Rounds are interleaved, each round in another order of the
# systems (the first system of one round is the last of the next), so that
# a slow stretch of the host falls on all of them. Writes shortlived.txt:
#   shortlived round R system S processes N failed N ms MS placer_cpu_s S hog_passes N
# with "spawn_status N" when np-spawn failed and "placer_died 1" when the
# placement daemon was gone before its stop; a round that went wrong is
# recorded, and the next one runs.
# BENCH_SHORTLIVED_ROUNDS (3), BENCH_SHORTLIVED_COUNT (2000),
# BENCH_SHORTLIVED_LIFE_MS (40), BENCH_SHORTLIVED_SYSTEMS
# ("none kernel numad numaplaced").
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology

rounds=${BENCH_SHORTLIVED_ROUNDS:-3}
count=${BENCH_SHORTLIVED_COUNT:-2000}
life_ms=${BENCH_SHORTLIVED_LIFE_MS:-40}
systems=${BENCH_SHORTLIVED_SYSTEMS:-none kernel numad numaplaced}
node_mib=$NODE_MIB
out=/tmp/shortlived.txt
: >"$out"
{
	echo "run $NP_TOPOLOGY shortlived count $count parallel 2 life_ms $life_ms"
	bench_topology_lines
} >>"$out"

# The systems of round $1: the list rotated by the round's number.
round_order() {
	echo "$systems" | awk -v r="$1" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }'
}

round=0
while [ $round -lt "$rounds" ]; do
	for system in $(round_order "$round"); do
		: >placer.txt
		bench_start_system "$system"
		# The long task: one thread, memory on node 0, free to run anywhere
		# (a placement system may move it; that is part of its cost).
		np-hog --quiet --pause-ms=0 --node=0 --policy=bind-once \
			--mib=$((node_mib * 20 / 100)) >hog.out 2>&1 &
		hog=$!
		np_wait_ready hog.out 120
		sleep 2
		status=0
		np-spawn --count="$count" --parallel=2 --mib=1 --life-ms="$life_ms" >spawn.out 2>&1 ||
			status=$?
		kill -TERM "$hog"
		wait "$hog"
		extra=
		[ "$status" = 0 ] || extra=" spawn_status $status"
		if [ -n "$PLACER_PID" ] && ! kill -0 "$PLACER_PID" 2>/dev/null; then
			extra="$extra placer_died 1"
		fi
		bench_stop_system >>placer.txt
		cpu=$(awk '$1 == "placer_cpu_s" { print $2 }' placer.txt)
		passes=$(awk '$1 == "done" { for (i = 2; i < NF; i++) if ($i == "passes") print $(i + 1) }' hog.out)
		echo "shortlived round $round system $system $(sed -n 's/^done //p' spawn.out)" \
			"placer_cpu_s ${cpu:-0} hog_passes ${passes:-0}$extra" | tee -a "$out"
		[ "$status" = 0 ] || sed 's/^/log np-spawn: /' spawn.out | tail -n 5 >>"$out"
		grep '^log ' placer.txt | tail -n 5 >>"$out"
	done
	round=$((round + 1))
done
np_emit shortlived.txt "$out"
