/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "config.h"
#include "filter.h"
#include "numa_maps.h"
#include "planner.h"
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
	bool set_affinity;		/* threads whose mask is from_cpus get target_cpus */
	bool widen;			/* set_affinity gives back the mask it had before */
	bool partial;			/* move_bytes was capped by max_migrate_mb_per_scan */
	int target_node;		/* where it goes, or would go if held back; -1: nowhere */
	struct np_nodeset target_nodes; /* MOVE: {target_node}; SPREAD: the set */
	struct np_nodeset source_nodes; /* nodes holding the pages to move */
	struct np_bitmap target_cpus;	/* when set_affinity */
	struct np_bitmap from_cpus;	/* when set_affinity: the mask it has now */
	uint64_t move_bytes;		/* bytes to migrate this scan (after the cap) */
	uint64_t misplaced_bytes;	/* bytes outside the target, before the cap */
	uint64_t total_bytes;		/* resident bytes it may move, over all nodes */
	unsigned locality_percent;	/* % of what it may move local to its threads */
	/* Where the policy saw it (as np_policy_locate): -1 when unknown; and
	 * the share, 0..1, of all its memory local to its threads. */
	int thread_node, home_node;
	double locality;
	/* The machine-wide plan, for a task whose threads the daemon places:
	 * its home node (-1: none) and why, and the CPUs it keeps busy. */
	bool planned;
	int plan_home;
	enum np_plan_reason plan_reason;
	double demand;
	/* After this action, the daemon keeps the task's threads on
	 * narrowed_to in place of narrowed_from (its own mask). */
	bool narrowed;
	struct np_bitmap narrowed_from, narrowed_to;
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
	int home_node;			/* the plan's home node id; -1: none */
	uint64_t home_since_ms;		/* when home_node was last set (machine clock) */
	/* When the daemon last gave narrowed_cpus back (machine clock; 0:
	 * never): processes started before may still carry that mask. */
	uint64_t given_back_ms;
};

/* A home changes at most this often, unless its user changes the task's
 * CPUs: a task has time to settle, and no back-and-forth is possible. */
#define NP_POLICY_HOME_HOLD_MS UINT64_C(60000)

/* A home narrows a task's threads only once it uses this much of one CPU
 * between two looks (since its start at the first, which counts its exec
 * and loading: 10-20 ms for a busybox sleep in the emulated test guest,
 * 2-4% of its first half second): what it starts inherits the mask, and a
 * task that hardly runs gains nothing from it (a shell, a supervisor). The
 * same floor, for the children a task waited for, marks a launcher. Fixed:
 * the default of min_cpu_percent, which the scheduler applies over the
 * window since its last read or idle verdict. */
#define NP_HOME_MIN_CPU_PERCENT 5.0

/*
 * What the planner keeps of a task between its looks, so that the tasks
 * decided at one tick are planned around the ones decided earlier. Arrays
 * are by topology index, nr_nodes entries; owned by the memo.
 */
struct np_plan_memo {
	unsigned nr_nodes; /* 0: empty */
	bool placeable;	   /* the daemon may narrow its threads */
	double demand;	   /* CPUs it kept busy at its last look */
	int home;	   /* home node index; -1: none */
	uint64_t home_since_ms;
	uint64_t total;	 /* all its resident bytes */
	uint64_t *bytes; /* per node: of those, the ones local to it homed there */
	double *runs;	 /* share of thread time per node */
	bool *allowed;	 /* may be homed there */
	uint64_t *share_keys; /* the shared objects it writes */
	unsigned nr_share_keys;
};

/* Free the arrays; @memo reads as empty after. */
void np_plan_memo_clear(struct np_plan_memo *memo);

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
	/* The clock, in ms, for home hold times. */
	uint64_t now_ms;
	/* Tasks decided at earlier looks and not now (not owned): the plan
	 * counts their demand and may not move them. */
	const struct np_plan_memo *known;
	size_t nr_known;
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
	/* Its threads' wait for a CPU over the same span, in percent of one
	 * CPU, where the caller wants its demand judged by what it would have
	 * used with CPUs enough (a look at once after its user gave it CPUs
	 * on more nodes: the old mask squeezed it); 0: by its use alone. */
	double wait_percent;
	/* The children it waited for (cutime + cstime) used
	 * NP_HOME_MIN_CPU_PERCENT of a CPU between two reads of it, the last
	 * time at launched_ms (the machine clock): a task that starts
	 * processes, which would inherit a narrowed mask. The engine keeps it
	 * over every read, decided on or not. */
	bool launched;
	uint64_t launched_ms;
	/* The task's history; NULL: decide without one. */
	const struct np_policy_history *hist;
	/* Keys of the shared objects it writes (np_snap_task.share_keys): tasks
	 * with a key in common are planned as one group. */
	const uint64_t *share_keys;
	unsigned nr_share_keys;
};

/* Start an empty history. */
void np_policy_history_init(struct np_policy_history *hist);

/* Free memory @node must keep after a move: node_mem_headroom_percent of
 * its total. The one definition the policy, the planner's input and
 * --advise share. */
uint64_t np_policy_headroom(const struct np_node *node, const struct np_config *cfg);

/* Decide for one task into @out; its next history into @next (NULL: not
 * wanted). */
void np_policy_decide(const struct np_policy_machine *m, const struct np_config *cfg,
		      const struct np_policy_task *t, struct np_action *out,
		      struct np_policy_history *next);

/*
 * Decide for @nr tasks into actions[0..nr-1], in order. The tasks whose
 * threads the daemon may place (affinity = unpinned, nobody pinned them)
 * get their home nodes from one plan over them and m->known; memory
 * planned for earlier tasks in the batch counts as used when deciding
 * later ones, so two tasks do not both fill the same node. The caller
 * orders tasks by priority. next[i] (when @next is not NULL) gets task i's
 * next history, memos[i] (when not NULL; empty or owned, replaced) what
 * the plan keeps of it, and node_load (when not NULL, topo->nr_nodes
 * entries) the plan's CPU demand per node. Returns 0 or -ENOMEM.
 */
int np_policy_decide_all(const struct np_policy_machine *m, const struct np_config *cfg,
			 const struct np_policy_task *tasks, size_t nr, struct np_action *actions,
			 struct np_policy_history *next, struct np_plan_memo *memos,
			 struct np_planner_load *node_load);

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
