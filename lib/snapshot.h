/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "memory.h"
#include "policy.h"
#include "scheduler.h"
#include "task.h"
#include "topology.h"

/*
 * What one tick saw, decided and did: the data every front end (the report,
 * the daemon's log) formats, and nothing of how to show it.
 */

/* What came of carrying a decision out. */
enum np_snap_outcome {
	NP_SNAP_NOT_ACTED, /* a keep, skip or spread; a one-shot look; the tick stopped */
	NP_SNAP_DONE,	   /* pages moved or threads narrowed (or, dry, would be) */
	NP_SNAP_NO_EFFECT, /* it ran and changed nothing: backing off from it */
	NP_SNAP_DEFERRED,  /* not tried now: rate limit, backoff, no effect last time */
	NP_SNAP_FAILED,	   /* an error (the task vanished, a call failed) */
	NP_SNAP_STARTED,   /* its pages are moving, off the daemon's loop */
};

/* The last action the daemon carried out on a task (or tried to), for a
 * status: what it was and why, how it went, and when. */
struct np_snap_acted {
	enum np_action_kind kind;
	enum np_reason reason;
	enum np_snap_outcome outcome;
	bool set_affinity, widen, move_pages;
	int target_node;
	uint64_t moved_bytes; /* by that action */
	uint64_t at_ms;	      /* clock ms */
	char reason_text[NP_REASON_TEXT_MAX];
};

/* What the running daemon knows of a task beyond one look: filled in a
 * status (np_engine_status) only, zero elsewhere. */
struct np_snap_live {
	unsigned looks;		/* numa_maps reads and decisions so far, sampled looks included */
	unsigned sampled_looks; /* of them, sampled looks that sufficed */
	bool last_sampled;	/* the last was one: its memory is the read's before */
	uint64_t look_ms;	/* clock ms of the last */
	double cpu_percent;	/* CPU used between the last two looks, % of one CPU */
	uint64_t moved_bytes;	/* every page moved for it, over all looks */
	bool acted;		/* last_action holds one */
	struct np_snap_acted last_action;
};

/* Threads shown of a task's thread homes, at most. */
#define NP_SNAP_THREAD_HOMES 8

/* Its threads' homes (lib/threadhome.h) as the tick left them. */
struct np_snap_threads {
	unsigned nr;			    /* threads the daemon keeps on a node's CPUs */
	int tid[NP_SNAP_THREAD_HOMES];	    /* the first of them */
	int node[NP_SNAP_THREAD_HOMES];	    /* and their nodes */
	uint64_t own_bytes, shared_bytes;   /* the last sample: written by one thread alone, by several */
	uint64_t moved_bytes;		    /* moved to the threads' nodes so far */
	bool sampling;			    /* a sample of its writes runs */
};

struct np_snap_task {
	struct np_task task;
	struct np_sched_verdict verdict; /* the scan scheduler's */
	bool picked;			 /* read this tick for a decision */
	struct np_task_memory mem;	 /* its numa_maps, as read this tick */
	/* The shared, writable objects (shm, memfd, files) it has dirty pages
	 * of, as keys of (device, inode); for groups. */
	uint64_t *share_keys;
	unsigned nr_share_keys;
	/* Where its threads run and how local its memory is, as the policy
	 * sees it: -1 / 0 when unknown. */
	int run_node, home_node;
	double locality;
	bool has_decision;
	struct np_action action;
	enum np_snap_outcome outcome;
	bool first_no_effect; /* this tick's action was the first to change nothing */
	uint64_t moved_bytes; /* by this tick's action */
	struct np_snap_live live;
	struct np_snap_threads threads;
};

struct np_snapshot {
	/* The machine as last read: at a daemon tick that read no task's
	 * memory, as the last tick that did (or the first tick) read it; so
	 * is kernel_numa_balancing. */
	struct np_topology *topo;
	double *node_load; /* per topo->nodes[i], 0..1 */
	/* The plan's CPU demand per node against its CPUs (per topo->nodes[i]);
	 * NULL when no plan was made this tick. */
	struct np_planner_load *node_plan;
	int kernel_numa_balancing; /* kernel.numa_balancing, -1 when absent */
	uint64_t uptime_ms;
	/* A one-shot look: a first move waiting for agreeing looks is decided
	 * as if this one had lasted this many (hysteresis_periods); 0 in the
	 * daemon, whose looks are real. */
	unsigned assumed_looks;
	struct np_snap_task *tasks; /* by pid */
	unsigned nr_tasks;
	/* A status of the running daemon (np_engine_status): each task is its
	 * last look, with .live filled; the nodes are as the last tick that
	 * decided anything saw them, at decided_ms. Times are clock ms;
	 * now_ms is when the status was made. */
	bool live;
	bool dry_run;
	uint64_t now_ms, decided_ms;
};

/* Free a snapshot and everything it holds; NULL is accepted. */
void np_snapshot_free(struct np_snapshot *snap);

/* Free what one entry holds. */
void np_snap_task_clear(struct np_snap_task *st);

/* Stable name of an outcome: "not_acted", "done", "no_effect", "deferred",
 * "failed", "started". */
const char *np_snap_outcome_name(enum np_snap_outcome outcome);
