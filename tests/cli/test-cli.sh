#!/bin/sh
# The command line: bad options and bad configuration give a clear message
# and a non-zero exit; good ones work.
set -u
bin=$1
fixtures=$2
kernel_trace=$3
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS PATTERN ARGS...: exit status and a pattern in stderr+stdout.
# A run that hangs (a FIFO waited on) is killed and fails.
expect() {
	want=$1 pattern=$2
	shift 2
	timeout 200 "$bin" "$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" != "$want" ] || ! grep -q -- "$pattern" "$tmp/out"; then
		echo "FAIL: numaplaced $*: exit $got (want $want), output:"
		sed 's/^/    /' "$tmp/out"
		fail=1
	fi
}

expect 2 "unrecognized option" --no-such-option
expect 2 "requires an argument" --root
expect 2 "unexpected argument" --report extra
expect 2 "goes with --report" --json
expect 2 "by-cgroup goes with --report" --by-cgroup
expect 2 "not a size" --report --min-rss=12x

expect 0 "Usage: numaplaced" --help
expect 0 "numaplaced [0-9]" --version
expect 1 "/nonexistent/dir" --report --root /nonexistent/dir
expect 1 "missing.conf" -n -c "$tmp/missing.conf"
printf 'scan_delay_ms = soon\n' >"$tmp/bad.conf"
expect 1 "bad.conf:1:" -n -c "$tmp/bad.conf"
printf 'scan_delay_ms = 500\n' >"$tmp/good.conf"
expect 0 "scan_delay_ms = 500" -n -v -c "$tmp/good.conf"
# The configuration may be a link (as in /etc), but it ends in a regular
# file: a FIFO is refused, not waited on, and so is a directory.
ln -s good.conf "$tmp/link.conf"
expect 0 "scan_delay_ms = 500" -n -v -c "$tmp/link.conf"
mkfifo "$tmp/fifo.conf"
expect 1 "fifo.conf: not a regular file" -n -c "$tmp/fifo.conf"
expect 1 "fifo.conf: not a regular file" --report --root "$fixtures/host" -c "$tmp/fifo.conf"
expect 1 "$tmp: Is a directory" -n -c "$tmp"
mkfifo "$tmp/fifo.trace"
expect 1 "fifo.trace: not a regular file" --replay "$tmp/fifo.trace"
chmod 000 "$tmp/good.conf"
if [ "$(id -u)" != 0 ]; then
	expect 1 "good.conf" -n -c "$tmp/good.conf"
fi
expect 1 "bad.conf:1:" --report --root "$fixtures/host" -c "$tmp/bad.conf"
# A tree under --root with odd files where /proc has regular ones: each is
# refused by name and only its task is left out; nothing is followed out
# of the tree. Built here: git holds no FIFO.
odd=$tmp/odd
cp -R "$fixtures/engine-2node" "$odd"
# 500: a copy of 100 with nothing odd, which must still be shown.
cp -R "$odd/proc/100" "$odd/proc/500"
mv "$odd/proc/500/task/100" "$odd/proc/500/task/500"
sed 's/^100 (hog)/500 (hog)/' "$odd/proc/100/stat" >"$odd/proc/500/stat"
sed 's/^100 (hog)/500 (hog)/' "$odd/proc/100/task/100/stat" >"$odd/proc/500/task/500/stat"
echo 'secret-line 1 2 3' >"$tmp/secret"
rm "$odd/proc/200/stat" && mkfifo "$odd/proc/200/stat"
rm "$odd/proc/300/stat" && ln -s "$tmp/secret" "$odd/proc/300/stat"
rm "$odd/proc/400/numa_maps" && mkdir "$odd/proc/400/numa_maps"
head -c 300000 /dev/zero | tr '\0' x >"$odd/proc/100/cgroup"
# One run, several things to find in its output.
expect 0 "^ *500 hog " --report --root "$odd" --min-rss 0
for pattern in "$odd/proc/200/stat: a FIFO; not read" \
	"$odd/proc/300/stat: a symbolic link, not followed; not read" \
	"$odd/proc/400/numa_maps: a directory; not read" \
	"$odd/proc/100/cgroup: larger than 262144 bytes; not read"; do
	if ! grep -q -- "$pattern" "$tmp/out"; then
		echo "FAIL: --report --root $odd: no \"$pattern\" in:"
		sed 's/^/    /' "$tmp/out"
		fail=1
	fi
done
if grep -q secret-line "$tmp/out"; then
	echo "FAIL: a link under --root was followed:"
	sed 's/^/    /' "$tmp/out"
	fail=1
fi
# Replay: the kernel's slow-start experiment on a recorded kernel build.
traces=$(dirname "$fixtures")/traces
printf 'min_rss_mb = 0\nmin_cpu_percent = 0\n' >"$tmp/delay1000.conf"
printf 'min_rss_mb = 0\nmin_cpu_percent = 0\nscan_delay_ms = 0\n' >"$tmp/delay0.conf"
expect 0 "^short_lived_tasks_read 0$" --replay "$traces/kbuild.trace" -c "$tmp/delay1000.conf"
expect 0 "^short_lived_tasks_read [1-9]" --replay "$traces/kbuild.trace" -c "$tmp/delay0.conf"
expect 0 "^short_lived_tasks_read 0$" --replay "$kernel_trace" -c "$tmp/delay1000.conf"
expect 0 "^short_lived_tasks_read [1-9]" --replay "$kernel_trace" -c "$tmp/delay0.conf"
expect 0 "^short_lived_tasks_read 0$" --replay "$traces/hackbench.trace" -c "$tmp/delay1000.conf"
expect 0 "^short_lived_tasks_read [1-9]" --replay "$traces/hackbench.trace" -c "$tmp/delay0.conf"
printf 'exclude_cgroup = /system.slice\n' >"$tmp/cgroup.conf"
expect 1 "cgroup.*cannot be replayed: traces hold no cgroups" --replay "$traces/hackbench.trace" -c "$tmp/cgroup.conf"
printf 'numaplaced-trace 1\nhz 100\nt 10\nu 5 1 1 1\n' >"$tmp/bad.trace"
expect 1 "bad.trace:4:" --replay "$tmp/bad.trace"
expect 1 "missing.trace" --replay "$tmp/missing.trace"
expect 2 "exclude each other" --replay "$tmp/bad.trace" --report
expect 2 "requires an argument" --runtime-dir
expect 2 "exclude each other" --report --runtime-dir "$tmp"
expect 0 "(default /run/numaplaced)" --help
# --status asks a daemon; with none there it says where it asked.
expect 2 "exclude each other" --status --report
expect 2 "exclude each other" --status --dry-run
expect 2 "the daemon's own" --status --root "$fixtures/host"
expect 2 "the daemon's own" --status -c "$tmp/good.conf"
expect 3 "no daemon is running: nothing answers on $tmp/control" --status --runtime-dir "$tmp"
expect 3 "no daemon is running" --status --json --runtime-dir "$tmp"

exit $fail
