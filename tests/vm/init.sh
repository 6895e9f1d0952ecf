#!/bin/sh
# /init of the test guest (busybox). Mounts the kernel file systems, runs the
# scenarios named in /etc/np-vm.conf one after another between console
# markers that tests/vm/console.py reads, and powers the guest off.
/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts /dev/shm /run
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm

export PATH=/np/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
export HOME=/tmp
. /etc/np-vm.conf
export NP_TOPOLOGY

# Kill every process left behind by a scenario (all but this one and kernel
# threads, whose exe link leads nowhere, as a zombie's does), and wait until
# they are gone and their memory is free, so the next one starts clean.
reap_leftovers() {
	tries=100
	while [ "$tries" -gt 0 ]; do
		left=
		for dir in /proc/[0-9]*; do
			pid=${dir#/proc/}
			[ "$pid" = 1 ] && continue
			[ -e "$dir/exe" ] || continue
			kill -9 "$pid" 2>/dev/null && left=1
		done
		[ -n "$left" ] || return 0
		tries=$((tries - 1))
		sleep 0.1
	done
	echo "processes left by the scenario would not die:"
	ps
}

# Put back what a scenario may have changed, so that each one starts as if
# just booted, whatever ran before it in the same boot.
boot_balancing=$(cat /proc/sys/kernel/numa_balancing)
reset_state() {
	rm -rf /tmp/* /dev/shm/*
	echo "$boot_balancing" >/proc/sys/kernel/numa_balancing
	echo 3 >/proc/sys/vm/drop_caches
	dmesg -n 4
}

echo "@@NP-BOOTED@@"
if [ "$NP_MODE" = shell ]; then
	echo "numaplaced test guest, topology $NP_TOPOLOGY; scenarios are in /np/scenarios."
	echo "Leave with 'exit' (or Ctrl-A x)."
	setsid cttyhack sh -l
else
	for scenario in $NP_SCENARIOS; do
		mkdir -p "/tmp/$scenario"
		echo "@@NP-BEGIN $scenario@@"
		(cd "/tmp/$scenario" && NP_SCENARIO=$scenario exec sh "/np/scenarios/$scenario.sh")
		status=$?
		if [ "$status" != 0 ]; then
			echo "--- last kernel messages"
			dmesg | tail -n 40
		fi
		echo "@@NP-END $scenario $status@@"
		reap_leftovers
		reset_state
	done
	echo "@@NP-DONE@@"
fi
sync
poweroff -f
