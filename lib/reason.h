/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/*
 * Why a task was read, passed over, kept or moved: one table for every
 * stage of a tick. The scan scheduler gives the first group, the policy the
 * second, carrying the decision out (the engine and the actuator) the
 * third; a reason may come from more than one stage (a kernel thread is
 * skipped by all three). The report, the JSON, the metrics and the log all
 * take their words from here, so one reason reads the same wherever
 * it shows. Names are stable: they are part of the JSON report and of the
 * metric labels.
 */
enum np_reason {
	/* The scan scheduler: read now. */
	NP_REASON_SCAN_FIRST, /* first read: the scan delay has passed */
	NP_REASON_SCAN_DUE,   /* its period has passed */
	/* The scan scheduler: not read this tick. */
	NP_REASON_KERNEL_THREAD,  /* no user memory to place */
	NP_REASON_EXCLUDED,	  /* pid, comm or cgroup filter */
	NP_REASON_TOO_YOUNG,	  /* younger than scan_delay_ms */
	NP_REASON_TOO_SMALL,	  /* RSS below min_rss_mb */
	NP_REASON_WAITING_PERIOD, /* read within its period */
	NP_REASON_IDLE,		  /* CPU use since the last look below min_cpu_percent
				   * (the policy: below 5%, no home) */
	NP_REASON_MIGRATING,	  /* due, but its pages are being moved: read after */
	NP_REASON_OVER_BUDGET,	  /* due, but this tick's scan budget is spent */
	/* The policy. */
	NP_REASON_LOCAL,	    /* keep: enough memory is where the threads run */
	NP_REASON_NO_BETTER_NODE,   /* keep: no placement is clearly better than now */
	NP_REASON_NO_ROOM,	    /* keep: the nodes it should go to lack headroom */
	NP_REASON_HYSTERESIS,	    /* keep: a recent decision holds, or looks disagree */
	NP_REASON_MISPLACED,	    /* move: memory is away from the threads */
	NP_REASON_TOO_BIG,	    /* spread, or keep: larger than any one node can hold */
	NP_REASON_SINGLE_NODE,	    /* keep: nowhere else to go */
	NP_REASON_BOUND,	    /* skip: its own cpuset or affinity leaves no choice */
	NP_REASON_KERNEL_BALANCING, /* skip: kernel NUMA balancing is on, kernel_balancing=defer */
	NP_REASON_NO_MEMORY_DATA,   /* skip: numa_maps not read, or it shows no pages */
	NP_REASON_NO_DETAILS,	    /* skip: allowed CPUs and nodes were not read */
	NP_REASON_USER_POLICY,	    /* keep: its misplaced memory is the user's to place */
	NP_REASON_SHARED,	    /* keep: its misplaced memory is shared with other tasks */
	NP_REASON_HOME,		    /* move: threads and memory to the home node the plan gave it */
	NP_REASON_SPREAD,	    /* no home: more CPU demand than a node has CPUs */
	NP_REASON_NO_CPU_ROOM,	    /* no home: no node it may use has CPU room for it */
	NP_REASON_GIVEN_BACK,	    /* the mask the daemon set is no longer wanted: restored */
	NP_REASON_LAUNCHER, /* no home: it starts processes, which would inherit the mask */
	/* Carrying it out. */
	NP_REASON_NO_EFFECT,	  /* the last move of it moved nothing: backing off */
	NP_REASON_NO_SETAFFINITY, /* PF_NO_SETAFFINITY (per-CPU or io worker threads) */
	NP_REASON_BACKOFF,	  /* earlier actions on it failed: waiting */
	NP_REASON_RATE_LIMIT,	  /* the global migration rate is used up */
	NP_REASON_VANISHED, /* exited, or its pid was reused, before it was read or acted on */
	NP_REASON_AFFINITY_EMPTY, /* a thread's mask has no CPU of the target node */
	NP_REASON_MOVING_OTHER,	  /* another move is in flight: one at a time */
	NP_REASON_COUNT,
};

/* The scan scheduler's reasons are the first NP_REASON_SCHED_COUNT. */
#define NP_REASON_SCHED_COUNT (NP_REASON_OVER_BUDGET + 1)

struct np_reason_info {
	const char *name;     /* "too-young": the report's and JSON's word */
	const char *metric;   /* "too_young": the label of numaplaced_skips_total */
	const char *sentence; /* "younger than scan_delay_ms": for people */
};

/* The table entry of @reason; one for "unknown" when out of range. */
const struct np_reason_info *np_reason_info(enum np_reason reason);

/* Shorthands for the fields above. */
const char *np_reason_name(enum np_reason reason);
const char *np_reason_metric(enum np_reason reason);
const char *np_reason_sentence(enum np_reason reason);

/* A size as reason texts give it: "300 KiB", "512 MiB", "12.5 GiB". */
struct np_size_text {
	char s[24];
};
struct np_size_text np_size_text(uint64_t bytes);
