# The observation layer reports the topology QEMU was given. The guest sends
# numaplaced's JSON report and what /sys says; the host compares both with
# the topology file (topology.check.py).
. /np/guest-lib.sh
set -e

if dmesg | grep -E -A 3 'BUG|WARNING|Oops'; then
	np_fail "the kernel complained about this topology at boot"
fi

sys=/sys/devices/system/node
{
	for f in online has_cpu has_memory; do
		echo "$f $(cat $sys/$f)"
	done
	for dir in $sys/node[0-9]*; do
		echo "${dir##*/} cpulist=$(cat $dir/cpulist)" \
			"memtotal_kb=$(awk '/MemTotal/ { print $4 }' $dir/meminfo)" \
			"distance=$(tr ' ' , <$dir/distance)"
	done
} >sysfs.txt
cat sysfs.txt
numaplaced --report --json >report.json
numaplaced --report
np_emit sysfs.txt sysfs.txt
np_emit report.json report.json
