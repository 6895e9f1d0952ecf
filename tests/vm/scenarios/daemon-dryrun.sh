# --dry-run changes nothing: with a misplaced hog present, the node totals
# (N<node>= in numa_maps) of every process and the hog's affinity are the
# same after a few seconds of dry run, while the log says what would be done.
. /np/scenarios/daemon-lib.sh

np_numa_balancing 0
np_loopback_up
np_start_misplaced_hog /tmp/hog.out --mib 64 --pause-ms 50
hog=$NP_HOG_PID
affinity=$(np_affinity "$hog")

# "pid N0=.. N1=.." for every process, summed per node over all its
# mappings: one awk over every numa_maps file (forking per process takes
# seconds in this guest). This shell is left out: its own memory grows.
snapshot() {
	awk -v skip="$$" 'FNR == 1 { flush(); split(FILENAME, p, "/"); pid = p[3]; delete n }
		{ for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split($i, kv, "="); n[kv[1]] += kv[2] } }
		function flush(  i, line) { if (pid == "" || pid == skip) return
			line = pid; for (i = 0; i < 64; i++) if (("N" i) in n) line = line " N" i "=" n["N" i]
			print line }
		END { flush() }' /proc/[0-9]*/numa_maps 2>/dev/null | sort
}

snapshot >/tmp/before.txt
np_daemon_start --dry-run <<CONF
min_cpu_percent = 0
min_rss_mb = 32
tick_ms = 100
scan_delay_ms = 500
scan_period_min_ms = 500
metrics_listen = 127.0.0.1:0
log_level = info
CONF
start=$NP_DAEMON_START_MS
until grep -q 'would move' "$NP_DAEMON_LOG"; do
	[ $(($(np_ms) - start)) -lt 40000 ] ||
		np_fail "no 'would move' in the log after 40 s: $(numaplaced --report -c /tmp/numaplaced.conf 2>&1)"
	sleep 0.2
done
sleep 3
scans=$(np_metric numaplaced_scans_total)
calls=$(np_metric numaplaced_migrate_calls_total)
snapshot >/tmp/after.txt
affinity_after=$(np_affinity "$hog")
kill "$hog"
np_daemon_stop
echo "daemon-dryrun: $scans scans, $calls migration calls, $(wc -l </tmp/before.txt) processes compared" \
	"$(($(np_ms) - start)) ms after the daemon's start"
grep 'would move' "$NP_DAEMON_LOG" | head -n 1
# Processes in both snapshots (the daemon and the snapshots' own awk come
# and go): none may have pages leave one node for another. A process may
# fault in a page or free one by itself meanwhile, so growth alone or
# shrinking alone is no migration; one node down and another up is.
changed=$(awk 'function load(line, m,  f, i, kv) { delete m; f = split(line, a, " ")
		for (i = 2; i <= f; i++) { split(a[i], kv, "="); m[kv[1]] = kv[2] } }
	NR == FNR { before[$1] = $0; next }
	($1 in before) { load(before[$1], b); load($0, n); down = up = 0
		for (k in b) if ((k in n ? n[k] : 0) < b[k]) down = 1
		for (k in n) if (n[k] > (k in b ? b[k] : 0)) up = 1
		if (down && up) print "was: " before[$1] "; now: " $0 }' \
	/tmp/before.txt /tmp/after.txt)
[ -z "$changed" ] || np_fail "node totals changed during the dry run: $changed"
[ "$calls" = 0 ] || np_fail "metrics: $calls migration calls in a dry run"
[ "$affinity_after" = "$affinity" ] || np_fail "affinity changed: $affinity -> $affinity_after"
grep -q "^$hog N1=" /tmp/before.txt || grep -q "^$hog .*N1=" /tmp/before.txt ||
	np_fail "the hog is missing from the snapshot"
