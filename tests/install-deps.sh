#!/bin/sh
# Install what building and testing numaplaced needs on Debian 12.
# Idempotent: asks apt only when a package is missing.
set -eu

BUILD_PKGS="gcc meson ninja-build pkg-config libnuma-dev libproc2-dev libevent-dev \
libjson-c-dev libsystemd-dev xz-utils"
# Tests: clang's libFuzzer, systemd-analyze, numastat/migratepages, the
# DaemonSet's YAML, and the QEMU guest (tests/vm). libclang-rt-14-dev holds
# clang's libFuzzer and sanitizer runtimes; clang only recommends it, and
# recommends are not installed here.
VM_PKGS="python3 numactl qemu-system-x86 busybox-static cpio"
# The Debian package (tests/packaging): its build and its checks.
DEB_PKGS="dpkg-dev debhelper fakeroot lintian init-system-helpers"
TEST_PKGS="clang libclang-rt-14-dev systemd util-linux python3-yaml $VM_PKGS $DEB_PKGS"

case "${1:-all}" in
build) pkgs=$BUILD_PKGS ;;
all) pkgs="$BUILD_PKGS $TEST_PKGS" ;;
vm) pkgs=$VM_PKGS ;;
deb) pkgs="$BUILD_PKGS $DEB_PKGS" ;;
*) echo "usage: $0 [build|all|vm|deb]" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing packages:$missing (run this script as root to install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
