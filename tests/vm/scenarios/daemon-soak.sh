# Soak: everything at once, for NP_SOAK_S seconds (default 300), and the
# daemon must come out of it as it went in.
#
# Load, all at the same time on the 2-node guest:
# - churn: np-spawn batches of short processes (2 alive, 40 ms each, 1 MiB);
# - four hogs changing phase: two pinned ones whose threads move to the
#   other node every 40 s (their memory should follow), two unpinned ones
#   stopped and continued every 30 s (the plan's CPU demand changes);
# - SIGHUP every 3 s, alternating a good configuration (two variants) and a
#   bad one, which must be rejected while the running one stays;
# - every 60 s a task that exits while the daemon is moving its pages;
# - node 0 under memory pressure: a hog bound there leaves it ~220 MiB.
#
# Checked every 5 s: the daemon is alive and /metrics answers (within 30 s:
# the loop still moves pages itself, and a loaded host slows the guest).
# After a warm-up of 60 s its RSS may grow by at most 1 MiB. At the end,
# once the load has stopped and the daemon has forgotten it, it holds as
# many fds as before the load began; its log stays within a bound; SIGTERM
# ends it with status 0 within a second.
. /np/scenarios/daemon-lib.sh

soak_s=${NP_SOAK_S:-300}
warmup_s=$((soak_s / 3 < 60 ? soak_s / 3 : 60))
np_numa_balancing 0
np_loopback_up
all=$(cat /sys/devices/system/cpu/online)

# migrate_rate_mb_s bounds what one tick moves: pages still move inside the
# loop, and a loaded host's guest moves them slowly.
good_conf() {
	cat <<CONF
min_cpu_percent = 0
min_rss_mb = 16
tick_ms = $1
scan_delay_ms = 500
scan_period_min_ms = 500
scan_period_max_ms = 4000
migrate_rate_mb_s = 16
metrics_listen = 127.0.0.1:9467
log_level = notice
CONF
}

good_conf 200 >/tmp/soak-good.conf
np_daemon_start </tmp/soak-good.conf
daemon=$NP_DAEMON_PID
# A fixed port: at log_level notice the start line does not name it.
NP_METRICS_PORT=9467

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$daemon/status"
}
fd_count() {
	ls "/proc/$daemon/fd" 2>/dev/null | wc -l
}
# Sets MS to the milliseconds a GET /metrics takes, or fails.
metrics_ms() {
	t0=$(np_ms)
	timeout 30 wget -q -O /tmp/soak-metrics.txt "http://127.0.0.1:$NP_METRICS_PORT/metrics" ||
		np_fail "metrics: no answer within 30 s, $(($(np_ms) - ${begin:-$t0})) ms into the soak"
	MS=$(($(np_ms) - t0))
}
# Send SIGHUP and wait for the daemon's answer: its Nth "reload:" line.
reload_and_wait() {
	kill -HUP "$daemon"
	t0=$(np_ms)
	until [ "$(grep -c ' reload: ' "$NP_DAEMON_LOG")" -ge "$1" ]; do
		[ $(($(np_ms) - t0)) -lt 30000 ] || np_fail "SIGHUP $1 not answered in 30 s"
		sleep 0.1
	done
	reload_ms=$(($(np_ms) - t0))
	[ "$reload_ms" -gt "$max_reload_ms" ] && max_reload_ms=$reload_ms
}
alive() {
	kill -0 "$daemon" 2>/dev/null || np_fail "numaplaced died: $(tail -n 20 "$NP_DAEMON_LOG")"
}

sleep 2
metrics_ms
fds_before=$(fd_count)
ls -l "/proc/$daemon/fd" >/tmp/soak-fds-before 2>/dev/null
rss_start=$(rss_kib)

# Memory pressure on node 0: leave it about 220 MiB, so that the hogs
# and np-vanish started there still fit but what the daemon moves in soon
# meets node_mem_headroom_percent (77 MiB of 768).
free0=$(awk '/MemFree/ { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo)
press_mib=$((free0 > 320 ? free0 - 220 : 100))
np_start_hog /tmp/soak-press.out --mib "$press_mib" --node 0 --policy bind --pause-ms 1000 --quiet
press=$NP_HOG_PID

# Pinned hogs, one per node; unpinned hogs, left free.
np_start_hog /tmp/soak-p0.out --mib 48 --threads 2 --cpus "$(np_node_cpus 0)" --pause-ms 50 --quiet
pin0=$NP_HOG_PID
np_start_hog /tmp/soak-p1.out --mib 48 --threads 2 --cpus "$(np_node_cpus 1)" --pause-ms 50 --quiet
pin1=$NP_HOG_PID
np_start_hog /tmp/soak-u0.out --mib 48 --pause-ms 20 --quiet
free_a=$NP_HOG_PID
np_start_hog /tmp/soak-u1.out --mib 48 --pause-ms 20 --quiet
free_b=$NP_HOG_PID
taskset -a -p -c "$all" "$free_a" >/dev/null && taskset -a -p -c "$all" "$free_b" >/dev/null ||
	np_fail "cannot free the unpinned hogs' threads"
hogs="$press $pin0 $pin1 $free_a $free_b"

# Churn, in batches so the count is known at the end.
(
	batches=0
	while [ ! -e /tmp/soak-stop ]; do
		np-spawn --count 200 --parallel 2 --mib 1 --life-ms 40 >/dev/null 2>&1 || exit 1
		batches=$((batches + 1))
		echo "$batches" >/tmp/soak-batches
	done
) &
churn=$!

# A task that exits while its pages move: np-vanish starts on node 0 with
# its memory there, is moved to node 1's CPUs, and exits (SIGUSR1) once the
# daemon has moved 2 MiB of it to node 1. If the move has not started in
# 20 s it is ended all the same.
vanish_once() {
	rm -f /tmp/soak-vanish.out
	taskset -c "$(np_node_cpus 0)" np-vanish --mib 48 >/tmp/soak-vanish.out 2>&1 &
	victim=$!
	np_wait_ready /tmp/soak-vanish.out
	base=$(np_pages_on_node "$victim" 1)
	taskset -p -c "$(np_node_cpus 1)" "$victim" >/dev/null
	t0=$(np_ms)
	while [ "$(np_pages_on_node "$victim" 1 2>/dev/null || echo 0)" -lt $((base + 512)) ] &&
		[ $(($(np_ms) - t0)) -lt 20000 ]; do
		sleep 0.1
	done
	[ $(($(np_ms) - t0)) -lt 20000 ] && vanished_mid=$((vanished_mid + 1))
	kill -USR1 "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
}

begin=$(np_ms)
now=0
next_hup=3000 next_flip=40000 next_stop=30000 next_vanish=15000 next_sample=0
hups=0 bad_hups=0 flips=0 vanished_mid=0 vanish_runs=0 stopped=
max_metrics_ms=0 max_reload_ms=0 samples=0 rss_warm= rss_max=0 fds_max=0
while [ "$now" -lt $((soak_s * 1000)) ]; do
	if [ "$now" -ge "$next_sample" ]; then
		alive
		metrics_ms
		[ "$MS" -gt "$max_metrics_ms" ] && max_metrics_ms=$MS
		rss=$(rss_kib)
		fds=$(fd_count)
		[ "$fds" -gt "$fds_max" ] && fds_max=$fds
		if [ "$now" -ge $((warmup_s * 1000)) ]; then
			[ -n "$rss_warm" ] || rss_warm=$rss
			[ "$rss" -gt "$rss_max" ] && rss_max=$rss
		fi
		samples=$((samples + 1))
		next_sample=$((next_sample + 5000))
	fi
	if [ "$now" -ge "$next_hup" ]; then
		case $((hups % 4)) in
		1 | 3)
			printf 'tick_ms = banana\n' >/tmp/numaplaced.conf
			bad_hups=$((bad_hups + 1))
			;;
		0) good_conf 250 >/tmp/numaplaced.conf ;;
		2) good_conf 200 >/tmp/numaplaced.conf ;;
		esac
		hups=$((hups + 1))
		reload_and_wait "$hups"
		next_hup=$((next_hup + 3000))
	fi
	if [ "$now" -ge "$next_flip" ]; then
		# The pinned hogs trade nodes: their users moved them.
		if [ $((flips % 2)) = 0 ]; then
			taskset -a -p -c "$(np_node_cpus 1)" "$pin0" >/dev/null
			taskset -a -p -c "$(np_node_cpus 0)" "$pin1" >/dev/null
		else
			taskset -a -p -c "$(np_node_cpus 0)" "$pin0" >/dev/null
			taskset -a -p -c "$(np_node_cpus 1)" "$pin1" >/dev/null
		fi
		flips=$((flips + 1))
		next_flip=$((next_flip + 40000))
	fi
	if [ "$now" -ge "$next_stop" ]; then
		if [ -n "$stopped" ]; then
			kill -CONT "$free_a" "$free_b"
			stopped=
		else
			kill -STOP "$free_a" "$free_b"
			stopped=1
		fi
		next_stop=$((next_stop + 30000))
	fi
	if [ "$now" -ge "$next_vanish" ]; then
		vanish_once
		vanish_runs=$((vanish_runs + 1))
		next_vanish=$((next_vanish + 60000))
	fi
	sleep 0.5
	now=$(($(np_ms) - begin))
done

# The load stops; the daemon must forget it all.
touch /tmp/soak-stop
[ -n "$stopped" ] && kill -CONT "$free_a" "$free_b"
wait "$churn" || np_fail "np-spawn failed"
batches=$(cat /tmp/soak-batches 2>/dev/null || echo 0)
for pid in $hogs; do
	kill -TERM "$pid"
	wait "$pid"
done
sleep 5
alive
metrics_ms
moved=$(np_metric 'numaplaced_migrated_pages_total')
scans=$(np_metric 'numaplaced_scans_total')
young=$(np_metric 'numaplaced_skips_total{reason="too_young"')
# How long the loop was held at most: by one cycle, by one move call.
tick_max_ms=$(np_metric_float 'numaplaced_tick_seconds_max' | awk '{ printf "%.0f", $1 * 1000 }')
call_max_ms=$(np_metric_float 'numaplaced_migrate_call_seconds_max{call="move_pages"' |
	awk '{ printf "%.0f", $1 * 1000 }')
ticks=$(np_metric 'numaplaced_ticks_total')
# The fewest fds over 5 s: a connection of the last GET may still be
# closing; a leaked fd stays.
fds_after=$(fd_count)
for i in 1 2 3 4 5; do
	[ "$fds_after" -le "$fds_before" ] && break
	sleep 1
	fds_after=$(fd_count)
done
ls -l "/proc/$daemon/fd" >/tmp/soak-fds-after 2>/dev/null
rss_end=$(rss_kib)
log_lines=$(wc -l <"$NP_DAEMON_LOG")
log_bytes=$(wc -c <"$NP_DAEMON_LOG")
rejected=$(grep -c 'rejected, the running configuration stays' "$NP_DAEMON_LOG")

t0=$(np_ms)
kill -TERM "$daemon"
wait "$daemon"
status=$?
stop_ms=$(($(np_ms) - t0))

echo "daemon-soak: ${soak_s} s, $samples samples; tasks: $((batches * 200)) short processes" \
	"($batches batches), 5 hogs, $vanish_runs vanishing tasks ($vanished_mid mid-migration);" \
	"$flips pinning flips; $hups SIGHUPs ($bad_hups bad, $rejected rejected)"
echo "daemon-soak: $ticks cycles, longest $tick_max_ms ms; longest move_pages call $call_max_ms ms"
echo "daemon-soak: scans $scans, young skips $young, pages moved $moved;" \
	"RSS KiB start $rss_start, after warm-up $rss_warm, max after $rss_max, end $rss_end;" \
	"fds before $fds_before, max $fds_max, after $fds_after;" \
	"slowest /metrics $max_metrics_ms ms, slowest reload $max_reload_ms ms; log $log_lines lines, $log_bytes bytes;" \
	"SIGTERM: status $status in $stop_ms ms"

[ "$status" = 0 ] || np_fail "numaplaced exited with $status: $(tail -n 20 "$NP_DAEMON_LOG")"
[ "$stop_ms" -le 1000 ] || np_fail "SIGTERM took $stop_ms ms"
[ "$rejected" = "$bad_hups" ] || np_fail "$bad_hups bad configurations sent, $rejected rejected"
[ "$rss_max" -le $((rss_warm + 1024)) ] ||
	np_fail "RSS grew from $rss_warm KiB after warm-up to $rss_max KiB"
[ "$fds_after" -le "$fds_before" ] ||
	np_fail "fds: $fds_before before the load, $fds_after after:" \
		"$(diff /tmp/soak-fds-before /tmp/soak-fds-after)"
# Each reload says one line; beyond those, a few lines a minute.
log_bound=$((2 * hups + 20 * soak_s / 60 + 40))
[ "$log_lines" -le "$log_bound" ] ||
	np_fail "log: $log_lines lines, more than $log_bound: $(sort "$NP_DAEMON_LOG" | uniq -c | sort -rn | head -n 5)"
[ "$moved" -gt 0 ] || np_fail "nothing was moved in the whole soak"
[ "$batches" -gt 0 ] || np_fail "no short process ran"
