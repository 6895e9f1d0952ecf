# A hog whose user pinned its threads to node 0 and gave it a memory policy
# of its own (numactl --cpunodebind=0 --preferred=1): its memory is on node
# 1 because the user asked for it there. The actuator leaves memory under a
# user's policy alone, so the report must not call it misplaced either: the
# hog is kept with reason user-policy, and the daemon moves none of its
# pages and does not log a move decision for it on every tick (once at most).
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
# np-hog itself sets no policy (--policy local, no --node): the only policy
# is numactl's, the task's own, which numa_maps shows on every VMA that has
# none of its own. First touch under it puts every page on node 1.
rm -f /tmp/hog.out
numactl --cpunodebind=0 --preferred=1 np-hog --mib 64 --policy local --pause-ms 50 >/tmp/hog.out 2>&1 &
hog=$!
np_wait_ready /tmp/hog.out
# The hog's memory is its largest anonymous VMA.
vma=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^anon=/) { n = substr($i, 6) + 0
		if (n > max) { max = n; line = $0 } } } END { print line }' "/proc/$hog/numa_maps")
echo "daemon-userpolicy: hog's memory in numa_maps: $vma"
# Its brk heap (small: np-hog's slices are mmap'ed) carries the same policy.
echo "daemon-userpolicy: hog's heap in numa_maps: $(grep ' heap ' "/proc/$hog/numa_maps")"
case " $vma " in
*" prefer:1 "*) ;;
*) np_fail "the hog's memory does not carry the policy prefer:1: '$vma'" ;;
esac
[ "$(np_percent_on_node "$hog" 1)" -ge 90 ] ||
	np_fail "hog memory not on node 1: only $(np_percent_on_node "$hog" 1)%"
cp "/proc/$hog/numa_maps" numa_maps
affinity=$(np_affinity "$hog")

cat >/tmp/userpolicy.conf <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 100
scan_period_min_ms = 500
metrics_listen = 127.0.0.1:0
log_level = info
CONF

# What is wrong is collected and reported together at the end: the report
# and the daemon are checked independently.
failures=

# (a) The report: keep, user-policy, saying how much is under which policy.
# Its JSON has one key per line; the task's fields follow its "pid".
numaplaced --report --json -c /tmp/userpolicy.conf >report.json 2>report.err ||
	np_fail "numaplaced --report --json failed: $(cat report.err)"
numaplaced --report -c /tmp/userpolicy.conf >report.txt 2>&1 || np_fail "numaplaced --report failed"
field() {
	awk -v pid="$hog" -v key="\"$1\":" '
		$1 == "\"pid\":" { cur = $2; sub(/,$/, "", cur) }
		cur == pid && $1 == key { sub(/^[ \t]*"[a-z_]*": /, ""); sub(/,$/, ""); gsub(/^"|"$/, ""); print; exit }' report.json
}
decision=$(field decision)
reason=$(field reason)
text=$(field reason_text)
move_bytes=$(field move_bytes)
echo "daemon-userpolicy: report for pid $hog: $decision $reason ($text), move_bytes $move_bytes"
grep -E "^ *$hog " report.txt
[ -n "$decision" ] || np_fail "pid $hog is not in the report: $(cat report.txt)"
[ "$decision" = keep ] || failures="$failures
report: decision '$decision', expected 'keep'"
[ "$reason" = user-policy ] || failures="$failures
report: reason '$reason', expected 'user-policy'"
[ "$move_bytes" = 0 ] || failures="$failures
report: move_bytes $move_bytes, expected 0"
case "$text" in
*[0-9]*prefer*) ;;
*) failures="$failures
report: reason_text '$text' does not say how much is under the policy prefer" ;;
esac

# (b) The daemon, really acting, for about 5 s.
np_daemon_start </tmp/userpolicy.conf
sleep 5
moved=$(np_metric_moved_mib 1 0)
calls=$(np_metric numaplaced_migrate_calls_total)
scans=$(np_metric numaplaced_scans_total)
skipped=$(np_metric 'numaplaced_skips_total{reason="user_policy"')
on1=$(np_percent_on_node "$hog" 1)
affinity_after=$(np_affinity "$hog")
np_daemon_stop
kill "$hog"
# Decisions are logged as "notice: pid N (comm): move misplaced: ..."; a
# rate-limited repeat comes back as "notice: ... suppressed ..., the last:
# pid N (comm): move ...", which counts too.
move_lines=$(grep -c "notice: .*pid $hog (.*move" "$NP_DAEMON_LOG")
echo "daemon-userpolicy: $(($(np_ms) - NP_DAEMON_START_MS)) ms of daemon: $scans scans," \
	"$calls migration calls, $moved MiB moved 1->0, $skipped user_policy skips," \
	"$on1% on node 1, $move_lines move lines at notice for pid $hog"
grep "notice: .*pid $hog (.*move" "$NP_DAEMON_LOG" | head -n 3
[ "$scans" -ge 2 ] || failures="$failures
daemon: only $scans numa_maps reads in 5 s: it did not look at the hog"
[ "$moved" = 0 ] || failures="$failures
daemon: $moved MiB moved from node 1 to node 0"
[ "$on1" -ge 90 ] || failures="$failures
daemon: only $on1% of the hog left on node 1"
[ "$affinity_after" = "$affinity" ] || failures="$failures
daemon: the hog's affinity changed: $affinity -> $affinity_after"
[ "$move_lines" -le 1 ] || failures="$failures
daemon: $move_lines lines at notice level with a move decision for pid $hog (at most 1)"

for f in report.json report.txt numa_maps; do
	np_emit "$f" "$f"
done
[ -z "$failures" ] || np_fail "memory under the hog's own policy prefer:1:$failures"
