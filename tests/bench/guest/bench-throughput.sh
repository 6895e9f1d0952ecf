# Migration throughput: 10,000 and 100,000 pages from node 0 to node 1, by
# bench-migrate (one move_pages call for all pages, numaplaced's batched
# path, migrate_pages, fixed batches) and by numactl's migratepages moving
# an idle np-hog of the same size. Writes throughput.txt.
. /np/guest-lib.sh
. /np/scenarios/bench-lib.sh
bench_topology
np_numa_balancing 0
runs=${BENCH_MIGRATE_RUNS:-5}
out=/tmp/throughput.txt
: >"$out"

seconds_now() {
	/usr/bin/date +%s.%N
}

for pages in 10000 100000; do
	echo "bench: bench-migrate $pages pages"
	echo "bench_migrate $pages" >>"$out"
	"$BENCH_MIGRATE" "$pages" 0 1 "$runs" >>"$out" 2>&1 || np_fail "bench-migrate $pages failed"
	echo "end_bench_migrate" >>"$out"
	# migratepages moves a whole process: an idle np-hog holding the
	# same number of pages (plus its program and libraries).
	mib=$(((pages * 4096 + 1048575) / 1048576))
	run=0
	while [ $run -lt "$runs" ]; do
		taskset -c "$(bench_cpus_of 0)" np-hog --quiet --policy=local --mib="$mib" \
			--pause-ms=1000000 >hog.out 2>&1 &
		hog=$!
		np_wait_ready hog.out 120
		before=$(bench_vmstat_migrated)
		on0=$(np_pages_on_node "$hog" 0)
		t0=$(seconds_now)
		migratepages "$hog" 0 1 || np_fail "migratepages failed"
		t1=$(seconds_now)
		after=$(bench_vmstat_migrated)
		on1=$(np_pages_on_node "$hog" 1)
		echo "migratepages $pages run $run ms $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')" \
			"migrated $(( ${after% *} - ${before% *} )) on0_before $on0 on1_after $on1" >>"$out"
		kill -KILL "$hog"
		wait "$hog" 2>/dev/null
		run=$((run + 1))
	done
done
cat "$out"
np_emit throughput.txt "$out"
