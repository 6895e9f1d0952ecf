#!/bin/sh
# numaplaced --advise VCPUS:MIB against fixture machines, each answer worked
# out by hand below, and the numad stand-in libvirt runs (conf/libvirt/numad).
#
# Both fixtures count memory room as MemFree less the 10% headroom of the
# shipped configuration, and free CPUs as CPUs x (1 - busy share since boot).
#
# engine-2node: node 0 CPUs 0-1 half busy (1.0 CPU free), 2 GiB, 1 GiB free
# (819.2 MiB room); node 1 CPUs 2-3 idle (2.0 free), 2 GiB, 1.5 GiB free
# (1331.2 MiB room); distance 20.
#
# advise-4node: two CPUs and 4 GiB per node (409.6 MiB headroom); nodes 0-1
# and 2-3 at distance 16, the pairs at 32.
#   node  busy  free CPUs  MemFree   room
#   0     0%    2.0        1 GiB      614.4 MiB
#   1     100%  0.0        3 GiB     2662.4 MiB
#   2     50%   1.0        2 GiB     1638.4 MiB
#   3     0%    2.0        0.5 GiB    102.4 MiB
set -u
bin=$1
fixtures=$2
wrapper=$3
conf=$4
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# advise FIXTURE REQUEST ANSWER [STDERR_PATTERN]: stdout is exactly ANSWER, exit 0.
advise() {
	"$bin" --root "$fixtures/$1" -c "$conf" --advise "$2" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != 0 ] || [ "$(cat "$tmp/out")" != "$3" ] ||
		{ [ -n "${4:-}" ] && ! grep -q -- "$4" "$tmp/err"; } ||
		{ [ -z "${4:-}" ] && [ -s "$tmp/err" ]; }; then
		echo "FAIL: --advise $2 on $1: exit $got, stdout '$(cat "$tmp/out")' (want '$3'), stderr:"
		sed 's/^/    /' "$tmp/err"
		fail=1
	fi
}

# refuse REQUEST PATTERN: exit 2, the pattern on stderr, nothing on stdout.
refuse() {
	"$bin" --root "$fixtures/engine-2node" -c "$conf" --advise "$1" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != 2 ] || [ -s "$tmp/out" ] || ! grep -q -- "$2" "$tmp/err"; then
		echo "FAIL: --advise '$1': exit $got (want 2), stdout '$(cat "$tmp/out")', stderr:"
		sed 's/^/    /' "$tmp/err"
		fail=1
	fi
}

# Both nodes hold 1 vCPU and 512 MiB; what each has left on its scarcer
# side: node 0 min(0/2 CPUs, 307.2/2048 MiB) = 0, node 1 min(1/2,
# 819.2/2048) = 0.4: node 1.
advise engine-2node 1:512 1
# Only node 1 has two free CPUs, and 1000 MiB fits its 1331.2.
advise engine-2node 2:1000 1
# No node has three free CPUs; both together have 3.0.
advise engine-2node 3:512 0-1
# 1500 MiB is more than either node's room; 2150.4 together.
advise engine-2node 2:1500 0-1
# Four free CPUs are not there at all: every node, and a warning.
advise engine-2node 4:512 0-1 "no set of nodes has room for 4 busy CPUs and 512 MiB"

# Only node 2 has a free CPU and 1024 MiB of room.
advise advise-4node 1:1024 2
# Node 0 has two free CPUs and 614.4 >= 512 MiB; node 3 lacks the memory.
advise advise-4node 2:512 0
# No node alone has 2048 MiB and two CPUs. Grown from node 0 (or 1): 0 and
# its nearest, 1: 2.0 CPUs, 3276.8 MiB: fits. From 2 (or 3): 2-3 has
# 1740.8 MiB, too little, so a third node is needed.
advise advise-4node 2:2048 0-1
# Three CPUs: 0-1 has only 2.0, so from node 0 a third node (3 nodes); 2-3
# has 3.0 CPUs and 1740.8 >= 1024 MiB: two nodes win.
advise advise-4node 3:1024 2-3
# 4096 MiB needs three nodes either way, each at distance 10+16+32 from
# where it was grown: 0-2 (from 0, the tie between 2 and 3 going to 2 with
# more room) has 4915.2 MiB, 1-3 (from 2 or 3, 1 having more room than 0)
# 4403.2. Spare on the scarcer side: 0-2 min(2/6, 819.2/12288) = 0.067,
# 1-3 min(2/6, 307.2/12288) = 0.025: 0-2.
advise advise-4node 1:4096 0-2
# Five free CPUs in all: seven do not fit anywhere.
advise advise-4node 7:100 0-3 "no set of nodes has room for 7 busy CPUs"

refuse 0:x "VCPUS '0' is not a number of CPUs.*MIB 'x' is not a size in MiB"
refuse 4 "'4' is not VCPUS:MIB"
refuse 4: "MIB '' is not a size"
refuse :512 "VCPUS '' is not a number"
refuse -1:512 "VCPUS '-1'"
refuse 4:512:1 "MIB '512:1'"
refuse 99999999999999999999:1 "VCPUS '99999999999999999999'"
refuse 4:0 "MIB '0'"
"$bin" --advise 1:1 --report >"$tmp/out" 2>&1
if [ $? != 2 ] || ! grep -q "exclude each other" "$tmp/out"; then
	echo "FAIL: --advise with --report is not refused"
	fail=1
fi

# The numad stand-in answers -w as numad does, and refuses the rest.
out=$(NUMAPLACED=$bin NUMAPLACED_OPTS="--root $fixtures/advise-4node -c $conf" "$wrapper" -w 3:1024)
if [ $? != 0 ] || [ "$out" != 2-3 ]; then
	echo "FAIL: numad -w 3:1024 through the stand-in: '$out'"
	fail=1
fi
if NUMAPLACED=$bin "$wrapper" -i 15 2>"$tmp/err"; then
	echo "FAIL: the numad stand-in took -i"
	fail=1
fi
grep -q "only -w VCPUS:MIB" "$tmp/err" || { echo "FAIL: no message for numad -i"; fail=1; }

exit $fail
