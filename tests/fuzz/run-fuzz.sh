#!/bin/sh
# Run one libFuzzer program for a bounded time over its committed corpus:
#   run-fuzz.sh FUZZER CORPUS WORKDIR [DICT]
# The committed corpus is read, never written: inputs the run finds go to
# WORKDIR/new, and a crashing input to WORKDIR/crash-*, which the message
# names (copy it into CORPUS with a name saying what it found, once fixed).
# NP_FUZZ_SECONDS sets the time (default 20). Fails on any crash, leak,
# timeout or sanitizer report, and on an empty corpus.
set -u
fuzzer=$1 corpus=$2 work=$3 dict=${4:-}
seconds=${NP_FUZZ_SECONDS:-20}

if [ -z "$(ls -A "$corpus" 2>/dev/null)" ]; then
	echo "$corpus: no corpus" >&2
	exit 1
fi
rm -rf "$work"
mkdir -p "$work/new" || exit 1
set -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/"
[ -n "$dict" ] && [ -f "$dict" ] && set -- "$@" -dict="$dict"
"$fuzzer" "$@" "$work/new" "$corpus"
status=$?
if [ "$status" != 0 ]; then
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$f" ] && echo "reproducer: $f (replay: $fuzzer $f)" >&2
	done
fi
# Not 77, libFuzzer's crash status, which meson reads as a skipped test.
[ "$status" = 0 ] || exit 1
