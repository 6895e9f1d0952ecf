#!/bin/sh
# usage: run-golden.sh NUMAPLACED FIXTURE_DIR EXPECTED_FILE [OPTION...]
# Run the report on a fixture tree and diff it against the expected output.
# With NP_UPDATE_GOLDEN=1, rewrite the expected file instead.
set -u
bin=$1 root=$2 expected=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --report --root "$root" "$@" >"$out" || { echo "numaplaced exited $?"; exit 1; }
if [ "${NP_UPDATE_GOLDEN:-0}" = 1 ]; then
	cp "$out" "$expected"
	exit 0
fi
diff -u "$expected" "$out"
