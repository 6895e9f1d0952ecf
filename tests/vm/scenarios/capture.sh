# Copy the guest's real /proc and /sys files (those the observation layer
# reads) into a fixture tree and send it to the host as fixture.tar, while
# two memory hogs run: one single-threaded, bound to node 1, and one with a
# thread and a slice of memory on every node (CPU-less nodes included).
. /np/guest-lib.sh
set -e

nodes=$(ls -d /sys/devices/system/node/node[0-9]* | sed 's|.*/node||' | sort -n | tr '\n' ',')
nodes=${nodes%,}
node_count=$(echo "$nodes" | tr ',' '\n' | wc -l)
# Thread i runs on the first CPU of node i (node 0's for a CPU-less node).
first_cpu() {
	cut -d, -f1 "/sys/devices/system/node/node$1/cpulist" | cut -d- -f1
}
cpus=
for n in $(echo "$nodes" | tr ',' ' '); do
	cpu=$(first_cpu "$n")
	cpus="$cpus,${cpu:-$(first_cpu 0)}"
done
cpus=${cpus#,}

np_start_hog /tmp/hog-bound.out --mib 64 --node 1 --pause-ms 500
bound=$NP_HOG_PID
np_start_hog /tmp/hog-spread.out --mib $((32 * node_count)) --threads "$node_count" \
	--node "$nodes" --cpus "$cpus" --pause-ms 500
spread=$NP_HOG_PID

out=/tmp/fixture
copy() {
	mkdir -p "$out/$(dirname "$1")"
	cat "/$1" >"$out/$1"
}

for f in online possible has_cpu has_memory has_normal_memory; do
	copy sys/devices/system/node/$f
done
for n in $(echo "$nodes" | tr ',' ' '); do
	for f in cpulist cpumap meminfo distance numastat; do
		copy sys/devices/system/node/node$n/$f
	done
done
for f in online possible present; do
	copy sys/devices/system/cpu/$f
done
for f in uptime stat meminfo sys/kernel/numa_balancing; do
	copy proc/$f
done
for pid in $bound $spread; do
	for f in stat status numa_maps cgroup comm cmdline; do
		copy proc/$pid/$f
	done
	for task in /proc/$pid/task/*; do
		copy "${task#/}/stat"
		copy "${task#/}/comm"
	done
done

cat >"$out/capture.txt" <<INFO
Captured by tests/vm/capture-fixtures.sh from a QEMU guest, topology
$NP_TOPOLOGY (tests/vm/topologies/$NP_TOPOLOGY.conf), kernel $(uname -r).
pid $bound: np-hog --mib 64 --node 1
  (one worker thread, not pinned, its memory bound to node 1; the main
  thread only waits)
pid $spread: np-hog --mib $((32 * node_count)) --threads $node_count --node $nodes --cpus $cpus
  (worker i pinned to the i-th CPU of that list, its 32 MiB bound to node i)
INFO
cat "$out/capture.txt"
tar -c -f /tmp/fixture.tar -C "$out" .
np_emit fixture.tar /tmp/fixture.tar
