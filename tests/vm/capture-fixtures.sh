#!/bin/sh
# Regenerate the fixtures captured from QEMU guests: tests/fixtures/qemu-2node
# (two nodes of two CPUs) and tests/fixtures/qemu-4node (asymmetric distances,
# a memory-only node). Usage: tests/vm/capture-fixtures.sh [BUILD_DIR]
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
"$src/tests/vm/run-vm.sh" --build-dir "$build" --topology 2node --capture "$src/tests/fixtures/qemu-2node"
"$src/tests/vm/run-vm.sh" --build-dir "$build" --topology 4node-asym --capture "$src/tests/fixtures/qemu-4node"
