#!/bin/sh
# Build numaplaced three times, warnings as errors in each (gcc; gcc with
# ASan+UBSan; clang's libFuzzer with ASan+UBSan) and run every test suite.
# Ends with one line "N passed, N failed, N skipped" counted from meson's
# own test logs.
set -u
cd "$(dirname "$0")/.."

tests/install-deps.sh all || exit 1

setup() {
	dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi || exit 1
	ninja -C "$dir" || exit 1
}

setup build -Dwerror=true
setup build-san -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
# The fuzzers: clang, which warns about some things gcc does not (a
# va_list format without its attribute, a literal split across lines in
# an array), held to its warnings too.
CC=clang setup build-fuzz -Dwerror=true -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false

status=0
meson test -C build --print-errorlogs --num-processes 2 --no-suite vm || status=1
# One guest at a time: each emulates its CPUs with host threads, and the
# scenarios that bound how fast the daemon acts need them. The soak
# (daemon-soak, five minutes) is among them.
meson test -C build --print-errorlogs --num-processes 1 --suite vm --logbase vmlog || status=1
# The guest suite runs once, in the plain build: sanitizers add nothing to
# what happens inside the guest and would double its time.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-san --print-errorlogs --num-processes 2 --no-suite vm || status=1

# Each parser's fuzzer for NP_FUZZ_SECONDS (20) over its corpus: about two
# and a half minutes on two CPUs.
meson test -C build-fuzz --print-errorlogs --num-processes 2 --suite fuzz --logbase fuzzlog ||
	status=1

python3 tests/summary.py build/meson-logs/testlog.json build/meson-logs/vmlog.json \
	build-san/meson-logs/testlog.json build-fuzz/meson-logs/fuzzlog.json ||
	status=1
exit $status
