/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "reason.h"

#include <inttypes.h>
#include <stdio.h>

#define MIB (UINT64_C(1) << 20)

/* Metric labels predate the table for some reasons (kthread, small_rss,
 * local_enough): dashboards use them, so they stay. */
static const struct np_reason_info table[NP_REASON_COUNT] = {
    [NP_REASON_SCAN_FIRST] = {"scan-first", "scan_first", "first read, the scan delay has passed"},
    [NP_REASON_SCAN_DUE] = {"scan-due", "scan_due", "its scan period has passed"},
    [NP_REASON_KERNEL_THREAD] = {"kernel-thread", "kthread", "kernel thread"},
    [NP_REASON_EXCLUDED] = {"excluded", "excluded", "excluded by the configuration"},
    [NP_REASON_TOO_YOUNG] = {"too-young", "too_young", "younger than scan_delay_ms"},
    [NP_REASON_TOO_SMALL] = {"too-small", "small_rss", "RSS below min_rss_mb"},
    [NP_REASON_WAITING_PERIOD] = {"waiting-period", "waiting_period", "read within its period"},
    [NP_REASON_IDLE] = {"idle", "idle", "CPU use since the last look below min_cpu_percent"},
    [NP_REASON_MIGRATING] = {"migrating", "migrating",
			     "its pages are being moved: read once the move ends"},
    [NP_REASON_OVER_BUDGET] = {"over-budget", "over_budget",
			       "due, but this cycle's scan_budget_mb is spent"},
    [NP_REASON_LOCAL] = {"local", "local_enough", "its memory is where its threads run"},
    [NP_REASON_NO_BETTER_NODE] = {"no-better-node", "no_better_node",
				  "no placement clearly better"},
    [NP_REASON_NO_ROOM] = {"no-room", "no_room",
			   "the node it should go to would keep less than its headroom"},
    [NP_REASON_HYSTERESIS] = {"hysteresis", "hysteresis",
			      "holding: looks disagree or a recent decision stands"},
    [NP_REASON_MISPLACED] = {"misplaced", "misplaced", "memory away from its threads"},
    [NP_REASON_HOME] = {"home", "home", "threads and memory go to the home node the plan gave it"},
    [NP_REASON_SPREAD] = {"spread", "spread",
			  "more CPU demand than a node has CPUs: it runs on all it may use"},
    [NP_REASON_NO_CPU_ROOM] = {"no-cpu-room", "no_cpu_room",
			       "no node it may use has CPU room for it"},
    [NP_REASON_GIVEN_BACK] =
	{"given-back", "given_back",
	 "the mask the daemon set is no longer wanted: the one before is back"},
    [NP_REASON_LAUNCHER] = {"launcher", "launcher",
			    "it starts processes, which would inherit a home: its memory stays"},
    [NP_REASON_TOO_BIG] = {"too-big", "too_big", "fits no single node"},
    [NP_REASON_SINGLE_NODE] = {"single-node", "single_node", "one node: nowhere to move"},
    [NP_REASON_BOUND] = {"bound", "bound", "its cpuset or affinity leaves no choice"},
    [NP_REASON_KERNEL_BALANCING] = {"kernel-balancing", "kernel_balancing",
				    "kernel NUMA balancing is on, deferring"},
    [NP_REASON_NO_MEMORY_DATA] = {"no-memory-data", "no_memory_data",
				  "numa_maps not read or without resident pages"},
    [NP_REASON_NO_DETAILS] = {"no-details", "no_details", "allowed CPUs and nodes not read"},
    [NP_REASON_USER_POLICY] = {"user-policy", "user_policy",
			       "its misplaced memory is under its own memory policy"},
    [NP_REASON_SHARED] = {"shared", "shared", "its misplaced memory is file pages other tasks map"},
    [NP_REASON_NO_EFFECT] = {"no-effect", "no_effect", "the last move moved nothing: backing off"},
    [NP_REASON_NO_SETAFFINITY] = {"no-setaffinity", "no_setaffinity",
				  "its threads may not change CPUs"},
    [NP_REASON_BACKOFF] = {"backoff", "backoff", "earlier actions failed: waiting"},
    [NP_REASON_RATE_LIMIT] = {"rate-limit", "rate_limit", "migrate_rate_mb_s is used up"},
    [NP_REASON_VANISHED] = {"vanished", "vanished", "exited or replaced before we acted"},
    [NP_REASON_AFFINITY_EMPTY] = {"affinity-empty", "affinity_empty",
				  "a thread may use no CPU of the target node"},
    [NP_REASON_MOVING_OTHER] = {"migration-busy", "migration_busy",
				"as many tasks' pages are being moved as migrate_tasks allows"},
};

static const struct np_reason_info unknown = {"unknown", "unknown", "unknown reason"};

const struct np_reason_info *np_reason_info(enum np_reason reason)
{
	if ((unsigned)reason >= NP_REASON_COUNT || !table[reason].name)
		return &unknown;
	return &table[reason];
}

const char *np_reason_name(enum np_reason reason)
{
	return np_reason_info(reason)->name;
}

const char *np_reason_metric(enum np_reason reason)
{
	return np_reason_info(reason)->metric;
}

const char *np_reason_sentence(enum np_reason reason)
{
	return np_reason_info(reason)->sentence;
}

struct np_size_text np_size_text(uint64_t bytes)
{
	struct np_size_text t;

	if (bytes >= 10 * 1024 * MIB)
		snprintf(t.s, sizeof(t.s), "%.1f GiB", (double)bytes / (double)(1024 * MIB));
	else if (bytes >= MIB)
		snprintf(t.s, sizeof(t.s), "%" PRIu64 " MiB", (bytes + MIB / 2) / MIB);
	else
		snprintf(t.s, sizeof(t.s), "%" PRIu64 " KiB", (bytes + 512) / 1024);
	return t;
}
