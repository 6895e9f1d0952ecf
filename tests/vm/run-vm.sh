#!/bin/sh
# Boot a multi-node Linux guest under QEMU (software emulation) and run test
# scenarios inside it, or open a shell there, or capture /proc and /sys
# files from it as test fixtures. See tests/vm/README.md.
set -eu

usage() {
	cat <<USAGE
usage: $0 [options] SCENARIO...   run scenarios (tests/vm/scenarios/NAME.sh) in one boot
       $0 [options] --shell       interactive shell in the guest (leave with exit or Ctrl-A x)
       $0 [options] --capture DIR capture /proc and /sys files from the guest into DIR
options:
  --topology NAME   tests/vm/topologies/NAME.conf (default 2node)
  --build-dir DIR   meson build directory holding the binaries (default: build)
  --timeout SEC     hard limit for the guest's whole life (default 600; shell 3600)
  --update-kernel   fetch the kernel linux-image-amd64 now depends on, if not cached yet
environment: NP_VM_KERNEL=PATH boots that kernel; NP_VM_APPEND adds kernel arguments
USAGE
	exit 2
}

src=$(cd "$(dirname "$0")/../.." && pwd)
vmdir=$src/tests/vm
topology=2node
build=$src/build
mode=run
timeout=
capture_dir=
scenarios=
update_kernel=
started=$(date +%s.%N)

while [ $# -gt 0 ]; do
	case $1 in
	--topology) topology=${2:?}; shift ;;
	--build-dir) build=${2:?}; shift ;;
	--timeout) timeout=${2:?}; shift ;;
	--shell) mode=shell ;;
	--update-kernel) update_kernel=1 ;;
	--capture) mode=capture; capture_dir=${2:?}; shift ;;
	-h|--help) usage ;;
	-*) echo "$0: unknown option $1" >&2; usage ;;
	*) scenarios="$scenarios $1" ;;
	esac
	shift
done

case $mode in
run) [ -n "$scenarios" ] || usage ;;
capture) scenarios=capture ;;
esac
for s in $scenarios; do
	[ -f "$vmdir/scenarios/$s.sh" ] || { echo "$0: no scenario $vmdir/scenarios/$s.sh" >&2; exit 2; }
done
topo_file=$vmdir/topologies/$topology.conf
[ -f "$topo_file" ] || { echo "$0: no topology $topo_file" >&2; exit 2; }
[ -x "$build/daemon/numaplaced" ] || { echo "$0: build $build first (no daemon/numaplaced)" >&2; exit 2; }
build=$(cd "$build" && pwd)
: "${timeout:=$([ $mode = shell ] && echo 3600 || echo 600)}"

"$src/tests/install-deps.sh" vm

# --- Kernel: Debian's, the package linux-image-amd64 depends on, unpacked
# once into the build directory.
kernel_cache=$build/vm-kernel
find_kernel() {
	# A kernel unpacked before is used as it is: asking apt costs seconds
	# on a busy machine. --update-kernel looks for a newer one.
	if [ -z "$update_kernel" ]; then
		kernel=$(ls "$kernel_cache"/*/boot/vmlinuz-* 2>/dev/null | tail -n 1)
		[ -n "$kernel" ] && return
	fi
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	if [ -z "$pkg" ]; then
		# No apt lists (or no network to refresh them): any kernel
		# unpacked before will do.
		kernel=$(ls "$kernel_cache"/*/boot/vmlinuz-* 2>/dev/null | tail -n 1)
		[ -n "$kernel" ] || { echo "$0: apt-cache names no linux-image package" >&2; exit 1; }
		return
	fi
	kernel=$(ls "$kernel_cache/$pkg"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] && return
	echo "vm: fetching kernel package $pkg"
	rm -rf "$kernel_cache/$pkg.tmp"
	mkdir -p "$kernel_cache/$pkg.tmp"
	(cd "$kernel_cache/$pkg.tmp" && { apt-get -o APT::Sandbox::User=root download -q "$pkg" ||
		{ apt-get update -q && apt-get -o APT::Sandbox::User=root download -q "$pkg"; }; })
	# Only boot/ is needed: the guest has no modules and no root disk.
	mkdir -p "$kernel_cache/$pkg.tmp/root"
	dpkg-deb --fsys-tarfile "$kernel_cache/$pkg.tmp"/*.deb |
		tar -x -C "$kernel_cache/$pkg.tmp/root" --wildcards './boot/*'
	rm -rf "$kernel_cache/$pkg"
	mv "$kernel_cache/$pkg.tmp/root" "$kernel_cache/$pkg"
	rm -rf "$kernel_cache/$pkg.tmp"
	kernel=$(ls "$kernel_cache/$pkg"/boot/vmlinuz-* | head -n 1)
}
# The bzImage's decompressor takes several seconds under emulation. The ELF
# kernel inside it, unpacked once here, boots through its PVH entry point
# instead; if it cannot be unpacked, the bzImage boots as it is.
unpack_elf_kernel() {
	elf=$(dirname "$kernel")/vmlinux
	[ -f "$elf" ] || python3 - "$kernel" "$elf" <<'PY' || return 0
import gzip, lzma, sys
data = open(sys.argv[1], "rb").read()
for magic, decompress in ((b"\xfd7zXZ\x00", lambda d: lzma.LZMADecompressor().decompress(d)),
                          (b"\x1f\x8b\x08", lambda d: gzip.GzipFile(fileobj=__import__("io").BytesIO(d)).read())):
    at = data.find(magic)
    while at >= 0:
        try:
            elf = decompress(data[at:])
        except (OSError, EOFError, lzma.LZMAError):
            elf = b""
        if elf[:4] == b"\x7fELF":
            open(sys.argv[2] + ".tmp", "wb").write(elf)
            __import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
            sys.exit(0)
        at = data.find(magic, at + 1)
sys.exit(1)
PY
	kernel=$elf
}
if [ -n "${NP_VM_KERNEL:-}" ]; then
	kernel=$NP_VM_KERNEL
else
	# One download at a time when several runs start together.
	mkdir -p "$kernel_cache"
	exec 8>"$kernel_cache/lock"
	flock 8
	find_kernel
	unpack_elf_kernel
	exec 8>&-
fi

# Everything of this run lives in its own directory, so that runs of other
# topologies or scenarios can go on at the same time.
outdir=$build/vm-out/$topology-$(echo $scenarios | tr ' ' '+')
rm -rf "$outdir"
mkdir -p "$outdir"

# --- Initramfs: busybox, the project's binaries and the host tools listed in
# tests/vm/guest-tools, each with the shared libraries ldd names.
stage=$outdir/initramfs
initrd=$outdir/initramfs.cpio.gz
mkdir -p "$stage/bin" "$stage/np/bin" "$stage/np/scenarios" "$stage/etc" \
	"$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp" "$stage/usr/bin"

# /init installs the other applet links itself (faster than here).
cp /bin/busybox "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
project_bins=$build/daemon/numaplaced
for exe in "$build"/tests/workloads/np-*; do
	[ -f "$exe" ] && [ -x "$exe" ] && project_bins="$project_bins $exe"
done
# Unit tests whose live parts need the guest's kernel (soft-dirty bits).
for exe in "$build"/tests/test-writers; do
	[ -f "$exe" ] && [ -x "$exe" ] && project_bins="$project_bins $exe"
done
tools=$(grep -v '^#' "$vmdir/guest-tools")
for tool in $tools; do
	[ -x "$tool" ] || { echo "$0: guest tool $tool is missing on this host" >&2; exit 1; }
done
# shellcheck disable=SC2086
{
	cp -L $project_bins "$stage/np/bin/"
	cp -L --parents $tools "$stage/"
	# Libraries at the paths ldd names (and the loader), all in one go:
	# forks are slow on a busy machine.
	ldd $project_bins $tools |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' |
		sort -u | xargs cp -L --parents -t "$stage/"
}
cp "$vmdir"/scenarios/*.sh "$stage/np/scenarios/"
cp "$vmdir/guest-lib.sh" "$stage/np/guest-lib.sh"
cp "$topo_file" "$stage/np/topology.conf"
# The shipped configuration, where the daemon looks for it.
mkdir -p "$stage/etc/numaplaced"
cp "$src/conf/numaplaced.conf" "$stage/etc/numaplaced/numaplaced.conf"
cp "$vmdir/init.sh" "$stage/init"
chmod 755 "$stage/init"
cat >"$stage/etc/np-vm.conf" <<CONF
NP_MODE=$mode
NP_TOPOLOGY=$topology
NP_SCENARIOS="$scenarios"
CONF
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$initrd"
[ "$(wc -c <"$initrd")" -gt 100000 ] || { echo "$0: $initrd came out empty (cpio?)" >&2; exit 1; }
echo "vm: kernel $kernel, initramfs $(($(wc -c <"$initrd") >> 10)) KiB," \
	"prepared in $(echo "$(date +%s.%N) $started" | awk '{ printf "%.1f", $1 - $2 }') s"

# --- QEMU arguments from the topology file:
#   node ID [cpus=LIST] mem=SIZE      (no cpus: a memory-only node)
#   distance SRC D0 D1 ...            (one row of the distance matrix)
numa_args=
total_mib=0
cpu_count=0
while read -r kind id rest; do
	case $kind in
	''|'#'*) continue ;;
	node)
		cpus= mem=
		for kv in $rest; do
			case $kv in
			cpus=*) cpus=${kv#cpus=} ;;
			mem=*) mem=${kv#mem=} ;;
			*) echo "$topo_file: unknown node setting $kv" >&2; exit 2 ;;
			esac
		done
		case $mem in
		*M) mib=${mem%M} ;;
		*G) mib=$((${mem%G} * 1024)) ;;
		*) echo "$topo_file: node $id: mem=$mem must end in M or G" >&2; exit 2 ;;
		esac
		total_mib=$((total_mib + mib))
		node="node,nodeid=$id,memdev=m$id"
		for range in $(echo "$cpus" | tr ',' ' '); do
			node="$node,cpus=$range"
			last=${range#*-}
			[ "$last" -lt "$cpu_count" ] || cpu_count=$((last + 1))
		done
		numa_args="$numa_args -object memory-backend-ram,id=m$id,size=${mib}M -numa $node"
		;;
	distance)
		dst=0
		for val in $rest; do
			[ "$dst" = "$id" ] || numa_args="$numa_args -numa dist,src=$id,dst=$dst,val=$val"
			dst=$((dst + 1))
		done
		;;
	*) echo "$topo_file: unknown line '$kind'" >&2; exit 2 ;;
	esac
done <"$topo_file"

# monitor=off: without MONITOR/MWAIT the guest idles with HLT, so waking an
# idle CPU is always an interrupt that QEMU delivers. One socket per CPU: CPUs
# of one socket share a cache, and a cache shared across nodes makes the
# kernel warn at boot (topology_sane). cryptomgr.notests: the crypto
# self-tests are the boot's longest emulated work, and once (CI, 5 Dec 2026)
# their thread spun on one vCPU until the guest's time limit ("soft lockup:
# cryptomgr_test"); nothing here uses the kernel's crypto.
# shellcheck disable=SC2086
set -- timeout --foreground -s KILL "$timeout" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max,monitor=off \
	-smp "$cpu_count,sockets=$cpu_count,cores=1,threads=1" -m "${total_mib}M" $numa_args \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 quiet panic=-1 oops=panic cryptomgr.notests ${NP_VM_APPEND:-}" \
	-nodefaults -display none -no-reboot

if [ $mode = shell ]; then
	exec "$@" -serial mon:stdio
fi
status=0
python3 "$vmdir/console.py" "$outdir" "$vmdir/scenarios" "$topo_file" "$timeout" -- \
	"$@" -serial stdio || status=$?
if [ $mode = capture ] && [ $status = 0 ]; then
	rm -rf "$capture_dir"
	mkdir -p "$capture_dir"
	tar -x -C "$capture_dir" -f "$outdir/capture/fixture.tar"
	echo "vm: fixture written to $capture_dir"
fi
exit $status
