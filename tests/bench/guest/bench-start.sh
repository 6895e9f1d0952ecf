# What starting a program costs in the guest, where exec, page faults and
# the loader run under software emulation: the CPU time (user + system, in
# clock ticks, of the shell's waited-for children) of ten runs each of
# busybox true, numad -V, numactl --show, numaplaced --version and
# numaplaced -n (its configuration checked), twice over; then the
# loader's own statistics for numaplaced and numad.
. /np/scenarios/bench-env.sh
children_ticks() {
	awk '{ sub(/.*\) /, ""); print $14 + $15 }' "/proc/$$/stat"
}
ten_runs() {
	before=$(children_ticks)
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		"$@" >/dev/null 2>&1
	done
	echo "start: $(($(children_ticks) - before)) ticks for 10 runs of $*"
}
for _ in 1 2; do
	ten_runs /bin/true
	ten_runs "$BENCH_NUMAD" -V
	ten_runs numactl --show
	ten_runs numaplaced --version
	ten_runs numaplaced -n --config /etc/numaplaced/numaplaced.conf
done
for prog in numaplaced "$BENCH_NUMAD"; do
	flag=--version
	[ "$prog" = numaplaced ] || flag=-V
	LD_DEBUG=statistics "$prog" $flag 2>&1 >/dev/null |
		sed -n "s|^ *[0-9]*:[[:space:]]*|loader $(basename "$prog"): |p" | grep -E 'startup|relocation|load objects'
done
