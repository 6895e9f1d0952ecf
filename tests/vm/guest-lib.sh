# Helpers for scenario scripts inside the test guest (busybox sh).
# A scenario sources this file: . /np/guest-lib.sh

# Stop the scenario with a message; the harness shows it and fails the test.
np_fail() {
	echo "FAIL: $*"
	exit 1
}

# Send FILE to the host as NAME (written to the scenario's output directory
# there). The content travels base64-encoded with its size and checksum, with
# kernel console messages held back so they cannot mix into it.
np_emit() {
	name=$1
	file=$2
	[ -f "$file" ] || np_fail "np_emit: no file $file"
	size=$(wc -c <"$file")
	sum=$(sha256sum "$file" | cut -d' ' -f1)
	dmesg -n 1
	echo "@@NP-FILE $name $size $sum@@"
	base64 "$file"
	echo "@@NP-FILE-END@@"
	dmesg -n 4
}

# Turn the kernel's own NUMA balancing on (1) or off (0).
np_numa_balancing() {
	echo "$1" >/proc/sys/kernel/numa_balancing || np_fail "cannot set kernel.numa_balancing"
}

# Wait until FILE has a line starting with "ready" (a workload is set up);
# gives up after SECONDS (default 60).
np_wait_ready() {
	file=$1
	left=${2:-60}
	while ! grep -q '^ready' "$file" 2>/dev/null; do
		left=$((left - 1))
		[ "$left" -ge 0 ] || np_fail "no 'ready' in $file: $(cat "$file")"
		sleep 1
	done
}

# Start np-hog with ARGS in the background, its output in FILE, and wait
# until it holds its memory. Sets NP_HOG_PID.
np_start_hog() {
	file=$1
	shift
	: >"$file" # not left to the background job: an old "ready" could be read first
	np-hog "$@" >"$file" 2>&1 &
	NP_HOG_PID=$!
	np_wait_ready "$file"
}

# Pages of PID on NODE according to /proc/PID/numa_maps (sum of N<node>=).
np_pages_on_node() {
	awk -v key="N$2" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) sum += kv[2] } }
		END { print sum + 0 }' "/proc/$1/numa_maps"
}

# Resident pages of PID (all nodes) according to /proc/PID/numa_maps.
np_pages_total() {
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split($i, kv, "="); sum += kv[2] } }
		END { print sum + 0 }' "/proc/$1/numa_maps"
}
