# The test workloads do what scenarios rely on: np-hog's threads run on the
# CPUs asked for with their slices on the nodes asked for (a memory-only node
# included), one slice can be split over nodes and freed of its policy,
# np-spawn's children all succeed, and np-vanish exits on SIGUSR1 while
# migratepages is moving its pages. Meant for 4node-asym (node 3 has no
# CPUs; CPUs 0, 2 and 3 are on nodes 0, 1 and 2).
. /np/guest-lib.sh
set -e

np_numa_balancing 0
kernel_lines=$(dmesg | wc -l)
np_start_hog hog.out --mib 96 --threads 3 --node 0,1,3 --cpus 0,2,3 --pause-ms 100
for node in 0 1 3; do
	pages=$(np_pages_on_node "$NP_HOG_PID" "$node")
	echo "np-hog: node $node holds $pages pages"
	[ "$pages" -ge 8192 ] || np_fail "np-hog: $pages pages on node $node, expected 32 MiB"
done
# Field 39 of a thread's stat is the CPU it last ran on; workers are the
# threads after the main one, in creation order.
sleep 1
cpus=$(for stat in /proc/$NP_HOG_PID/task/*/stat; do
	tid=${stat%/stat}
	tid=${tid##*/}
	[ "$tid" = "$NP_HOG_PID" ] || echo "$tid $(sed 's/.*) //' "$stat" | cut -d' ' -f37)"
done | sort -n | cut -d' ' -f2 | tr '\n' ' ')
echo "np-hog: workers last ran on CPUs $cpus"
[ "$cpus" = "0 2 3 " ] || np_fail "np-hog: workers on CPUs '$cpus', expected '0 2 3 '"
kill "$NP_HOG_PID"
wait "$NP_HOG_PID"
grep -q '^done passes [1-9]' hog.out || np_fail "np-hog: no passes: $(tail -n 1 hog.out)"

# --split --policy bind-once: one thread's slice half on each node, with no
# policy left on it once its pages are in.
np_start_hog split.out --mib 64 --node 0,1 --split --policy bind-once --pause-ms 100
for node in 0 1; do
	pages=$(np_pages_on_node "$NP_HOG_PID" "$node")
	echo "np-hog --split: node $node holds $pages pages"
	[ "$pages" -ge 8192 ] || np_fail "np-hog --split: $pages pages on node $node, expected 32 MiB"
done
if grep -E ' (bind|prefer)' "/proc/$NP_HOG_PID/numa_maps"; then
	np_fail "np-hog --policy bind-once: a policy is left on its memory"
fi
kill "$NP_HOG_PID"
wait "$NP_HOG_PID"

out=$(np-spawn --count 40 --parallel 4 --mib 2 --node 3 --life-ms 20)
echo "np-spawn: $out"
case $out in "done processes 40 failed 0 "*) ;; *) np_fail "np-spawn: $out" ;; esac

np-vanish --mib 128 --node 1 >vanish.out &
vanish=$!
np_wait_ready vanish.out
migratepages "$vanish" 1 0 &
migrate=$!
sleep 1
kill -USR1 "$vanish"
status=0
wait "$vanish" || status=$?
[ "$status" = 0 ] && grep -q '^vanishing' vanish.out ||
	np_fail "np-vanish: status $status, output: $(cat vanish.out)"
status=0
wait "$migrate" || status=$?
echo "np-vanish: exited on SIGUSR1 during migratepages (which ended with status $status)"
if dmesg | tail -n "+$((kernel_lines + 1))" | grep -E 'BUG|WARNING|Oops'; then
	np_fail "the kernel complained"
fi
