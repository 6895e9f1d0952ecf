/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The machine-wide planner: which node is the home, for threads and memory
 * together, of each task whose threads the daemon may place. A pure
 * function of the nodes' CPU capacity and memory room and the tasks' CPU
 * demand and memory, by node index (not id). It does no I/O and keeps no
 * state.
 *
 * A task's natural home is where most of its memory is: moving threads is
 * cheaper than moving pages, which is also why the kernel pulls a task
 * toward its memory. Where the natural homes ask more CPU of a node than it
 * has, the tasks that cost the fewest bytes per CPU freed leave it for a
 * node with room; when no node has room for one, two tasks of different
 * demand may trade places. A task with more CPU demand than any node it may
 * use has CPUs gets no home: it is spread. A home, once set, is kept while
 * the task is held (the caller's hold time) and while its node can take it.
 */

/* One node, as the planner counts it. */
struct np_planner_node {
	unsigned cpus;	   /* online CPUs (0: a memory-only node, never a home) */
	double background; /* CPUs kept busy by work the plan does not place */
	uint64_t mem_room; /* bytes it may still take: free memory above headroom */
	int mem_node;	   /* index of the node its threads' memory goes to: itself,
			    * or the nearest node with memory; -1: none */
};

/* One task. Arrays are by node index, nr_nodes entries. */
struct np_planner_task {
	double demand; /* CPUs it keeps busy, at most its threads */
	/* Per node: of its movable bytes, those that would be local to it
	 * homed there (on the memory node it would use from there). */
	const uint64_t *bytes;
	uint64_t total;	     /* their sum */
	const double *runs;  /* share 0..1 of its thread time per node; NULL: unknown */
	const bool *allowed; /* it may be homed on the node; NULL: every node with CPUs */
	int home;	     /* its home now; -1: none */
	bool held;	     /* its home may not change now (and it keeps it) */
	bool placeable;	     /* false: its threads stay where they run; it only counts */
	bool acted_on;	     /* the caller acts on this task's result now: between
			      * equal choices, it is the one that moves */
};

enum np_plan_reason {
	NP_PLAN_NOT_PLACED, /* not placeable, or no memory data: counted where it runs */
	NP_PLAN_MEMORY,	    /* homed where most of its memory is */
	NP_PLAN_KEPT,	    /* its home stays */
	NP_PLAN_HELD,	    /* its home stays: it changed too recently to change again */
	NP_PLAN_CAPACITY, /* its memory's node has no CPU room for it: the cheapest node that has */
	NP_PLAN_SWAP,	  /* traded places with a task of other demand */
	NP_PLAN_SPREAD,	  /* more CPU demand than any node it may use has CPUs */
	NP_PLAN_NO_ROOM,  /* no node it may use has CPU room for it */
	NP_PLAN_GROUP,	  /* homed with the tasks it shares written memory with */
};

struct np_planner_result {
	int home; /* node index; -1: none */
	enum np_plan_reason reason;
	uint64_t move_bytes; /* of its memory, what the plan moves to the home's memory node */
	bool partial;	     /* the home's memory node could take only move_bytes of more */
};

/* The CPU demand the plan puts on each node against its CPUs. */
struct np_planner_load {
	double demand; /* background plus the demand of the tasks homed or running there */
	unsigned cpus;
};

/*
 * Plan @nr tasks on @nr_nodes nodes (@distance: nr_nodes x nr_nodes SLIT
 * values, row-major, from CPU node to memory node) into results[0..nr-1],
 * and, when @load is not NULL, each node's planned demand into
 * load[0..nr_nodes-1]. Cost: O(nr x nr_nodes), plus O(log nr) for each
 * task an overloaded node sends away or weighs sending. Returns 0 or
 * -ENOMEM.
 */
int np_planner_run(const struct np_planner_node *nodes, unsigned nr_nodes, const unsigned *distance,
		   const struct np_planner_task *tasks, size_t nr,
		   struct np_planner_result *results, struct np_planner_load *load);

/* Stable machine name of a reason ("memory", "capacity", ...). */
const char *np_plan_reason_name(enum np_plan_reason reason);

/* CPUs a node may be asked for above its own: measured demand is noisy,
 * and a node exactly full is not overloaded. */
double np_planner_slack(unsigned cpus);
