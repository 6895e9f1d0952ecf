# A sampled look against numa_maps on a 2-node guest, where the answer is
# not trivially 100%: bench-sample binds 30% of its memory to node 1.
. /np/scenarios/bench-env.sh
for args in "0.6 4096 7" "0.6 1024 7" "0.25 4096 7"; do
	echo "---- bench-sample $args"
	# shellcheck disable=SC2086
	"$BENCH_SAMPLE" $args || exit 1
done
