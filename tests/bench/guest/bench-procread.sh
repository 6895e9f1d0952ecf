# What reading a process's figures costs in the guest, where a system call
# and a page fault cost many times what they do on the host: libproc2's
# select against one stat read (tests/bench/bench-procread.c).
. /np/scenarios/bench-env.sh
"$BENCH_PROCREAD" 7 || exit 1
