/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "config.h"
#include "filter.h"
#include "numa_maps.h"
#include "reason.h"
#include "task.h"
#include "topology.h"

/*
 * The placement policy: a pure function of (topology, per-node free memory
 * and CPU load, task samples, config, per-task history) to one action per
 * task, each with a reason, and each task's next history. It does no I/O,
 * keeps no state and writes nothing through its inputs: the caller keeps
 * the histories (which make hysteresis possible) and commits a next one
 * when its action took effect.
 */

/* What to do with one task. */
enum np_action_kind {
	NP_ACTION_KEEP,	  /* leave it where it is */
	NP_ACTION_MOVE,	  /* pages and/or threads to target_node */
	NP_ACTION_SPREAD, /* it fits no single node: keep it within target_nodes */
	NP_ACTION_SKIP,	  /* not considered (the reason says why) */
};

#define NP_REASON_TEXT_MAX 192

struct np_action {
	int pid;
	uint64_t start_ticks; /* with pid, the task's identity: verify before acting */
	enum np_action_kind kind;
	enum np_reason reason;
	bool move_pages;		/* migrate pages from source_nodes into target_nodes */
	bool set_affinity;		/* set the threads' affinity to target_cpus */
	bool partial;			/* move_bytes was capped by max_migrate_mb_per_scan */
	int target_node;		/* where it goes, or would go if held back; -1: nowhere */
	struct np_nodeset target_nodes; /* MOVE: {target_node}; SPREAD: the set */
	struct np_nodeset source_nodes; /* nodes holding the pages to move */
	struct np_bitmap target_cpus;	/* when set_affinity */
	uint64_t move_bytes;		/* bytes to migrate this scan (after the cap) */
	uint64_t misplaced_bytes;	/* bytes outside the target, before the cap */
	uint64_t total_bytes;		/* resident bytes it may move, over all nodes */
	unsigned locality_percent;	/* % of what it may move local to its threads */
	/* Where the policy saw it (as np_policy_locate): -1 when unknown; and
	 * the share, 0..1, of all its memory local to its threads. */
	int thread_node, home_node;
	double locality;
	char reason_text[NP_REASON_TEXT_MAX]; /* one line for people, no newline */
};

/*
 * What the policy remembers about one task between scans. The caller keeps
 * one per task identity (pid, start_ticks), starts it with
 * np_policy_history_init() and passes it at every look; the policy gives
 * back the next one. One look is one period for hysteresis_periods. The
 * next history records a move as made: a caller commits it when the move
 * took effect, and keeps the old one when it failed.
 */
struct np_policy_history {
	int target_node;		/* node the last move went toward; -1: none yet */
	int proposed_node;		/* best node at the last look; -1: none */
	unsigned proposed_streak;	/* consecutive looks that proposed proposed_node */
	unsigned looks;			/* looks so far */
	unsigned looks_since_change;	/* looks since target_node last changed */
	unsigned looks_since_dispute;	/* looks since one proposed a node other than target */
	unsigned flips;			/* times target_node changed from one node to another */
	bool narrowed;			/* the policy narrowed the affinity to target_cpus */
	struct np_bitmap narrowed_cpus; /* what it set */
	struct np_bitmap cpus_before;	/* the task's allowed CPUs before that */
};

/* The machine at one scan. */
struct np_policy_machine {
	const struct np_topology *topo;
	/* Free bytes per node, indexed like topo->nodes; NULL: topo's mem_free. */
	const uint64_t *node_free;
	/* CPU busy share 0..1 per node, indexed like topo->nodes
	 * (np_task_source_node_load); NULL: all idle. */
	const double *node_busy;
	/* kernel.numa_balancing is on. */
	bool kernel_numa_balancing;
	/* The configuration's filter (not owned); NULL: none. */
	const struct np_filter *filter;
	/* A single look (the one-shot report): a first move that would wait
	 * for hysteresis_periods agreeing looks is decided as if this look
	 * had lasted that long. */
	bool one_look;
};

/* One task as sampled by one scan. */
struct np_policy_task {
	/* Identity, comm, flags, age, RSS, and, when has_details, allowed CPUs and
	 * nodes, cgroup and each thread's last CPU. */
	const struct np_task *task;
	/* Resident bytes the daemon may move (np_task_memory's movable_bytes)
	 * per node id, nr_node_slots entries; NULL when numa_maps was not
	 * read. */
	const uint64_t *node_bytes;
	unsigned nr_node_slots;
	/* All its resident bytes per node id, movable or not (NULL: the same
	 * as node_bytes): the locality people see. */
	const uint64_t *all_node_bytes;
	/* What it may not move: bytes under each policy the user set (NULL:
	 * none), and file pages other tasks map too. */
	const uint64_t *policy_bytes; /* NP_MPOL_UNKNOWN + 1 entries */
	uint64_t shared_file_bytes;
	/* CPU used since the previous look (since start at the first), in percent
	 * of one CPU: a task keeping two CPUs busy is 200. */
	double cpu_percent;
	/* The task's history; NULL: decide without one. */
	const struct np_policy_history *hist;
};

/* Start an empty history. */
void np_policy_history_init(struct np_policy_history *hist);

/* Decide for one task into @out; its next history into @next (NULL: not
 * wanted). */
void np_policy_decide(const struct np_policy_machine *m, const struct np_config *cfg,
		      const struct np_policy_task *t, struct np_action *out,
		      struct np_policy_history *next);

/*
 * Decide for @nr tasks into actions[0..nr-1], in order. Memory and CPU
 * planned for earlier tasks in the batch count as used when deciding later
 * ones, so two tasks do not both fill the same node. The caller orders tasks
 * by priority. next[i] (when @next is not NULL) gets task i's next history.
 * Returns 0 or -ENOMEM.
 */
int np_policy_decide_all(const struct np_policy_machine *m, const struct np_config *cfg,
			 const struct np_policy_task *tasks, size_t nr, struct np_action *actions,
			 struct np_policy_history *next);

/*
 * Where the policy sees a task: @thread_node, the node where most of its
 * threads' CPU time is (-1 when unknown); @home_node, the node its memory
 * should be on (the thread node, or the nearest one that may hold it); and
 * @locality, the share (0..1) of its memory local to the threads that use
 * it: with all thread time on one node, the share on home_node; with thread
 * time split over nodes, each node's share of it matched against the pages
 * beside it. For the report, so that it shows what the decision is based
 * on. Leaves the history alone. Returns false when the task has no memory
 * data.
 */
bool np_policy_locate(const struct np_policy_machine *m, const struct np_config *cfg,
		      const struct np_policy_task *t, int *thread_node, int *home_node,
		      double *locality);

/* Stable machine name of an action kind ("keep", "move", "spread", "skip"). */
const char *np_action_kind_name(enum np_action_kind kind);
