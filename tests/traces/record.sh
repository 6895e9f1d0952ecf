#!/bin/sh
# Record the traces of this directory again on the machine at hand:
#   tests/traces/record.sh [BUILD_DIR]     (default: build)
# Each trace lists every process of the machine, every 50 ms, while the
# workload runs. Needs gcc, make, xz and hackbench (rt-tests).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
record="$build/tests/tools/record-trace"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Many short compiler runs, like a kernel build: make -j2 over a generated
# tree, twice.
"$here/gen-tree.sh" "$work/tree" 120
"$record" -i 50 -c "kbuild: make -j2 over 120 generated C files, twice; $(uname -r), $(nproc) CPUs" \
	"$here/kbuild.trace" \
	sh -c "cd '$work/tree' && for round in 1 2; do make -s -j2 && make -s clean; done"

# A kernel build: Debian's kernel source, tinyconfig, make -j2, recorded
# until vmlinux is linked (NP_RECORD_KERNEL=0 skips it: it takes from a few
# minutes to over half an hour, by machine and load). Needs flex, bison, bc.
if [ "${NP_RECORD_KERNEL:-1}" != 0 ]; then
	(cd "$work" && apt-get -o APT::Sandbox::User=root download -q linux-source-6.1 &&
		dpkg -x linux-source-6.1_*.deb pkg && tar -xJf pkg/usr/src/linux-source-6.1.tar.xz)
	ksrc=$(echo "$work"/linux-source-6.1)
	make -s -C "$ksrc" tinyconfig
	"$record" -i 50 -c "kernel build: $(basename "$(ls "$work"/linux-source-6.1_*.deb)"), tinyconfig, make -j2, one build to vmlinux; $(uname -r), $(nproc) CPUs" \
		"$work/kbuild-kernel.trace" make -s -C "$ksrc" -j2 vmlinux
	xz -9 -c "$work/kbuild-kernel.trace" >"$here/kbuild-kernel.trace.xz"
fi

# Process-mode hackbench: groups of 40 processes passing messages; short
# runs (under a second) alternate with longer ones (several seconds).
"$record" -i 50 -c "hackbench: 8 rounds of hackbench -g 2 -l 50 then -l 400; $(uname -r), $(nproc) CPUs" \
	"$here/hackbench.trace" \
	sh -c 'for round in 1 2 3 4 5 6 7 8; do hackbench -g 2 -l 50 && hackbench -g 2 -l 400; done >/dev/null'
ls -l "$here"/*.trace "$here"/*.trace.xz
