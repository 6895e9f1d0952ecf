/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "actuate.h"
#include "policy.h"
#include "scheduler.h"
#include "snapshot.h"
#include "task.h"
#include "threadhome.h"

/*
 * Everything the daemon remembers of a task between ticks, in one table
 * keyed by identity (pid, start_ticks): the scan scheduler's timing, the
 * policy's history, the actuator's pidfd and backoff, and what the engine
 * keeps of its last look. A reused pid is a new task. The table is synced
 * to each tick's task list once, which is when the state of tasks that left
 * is released.
 */
struct np_task_state {
	int pid;
	uint64_t start_ticks;
	struct np_sched_task sched;
	/* The policy's history, from the first decision on (NULL before): a
	 * history holds CPU masks, and most listed tasks are never decided
	 * on, so the table stays small to sync. */
	struct np_policy_history *hist;
	/* What the plan keeps of it from its last look (empty before). */
	struct np_plan_memo memo;
	struct np_act_task act;
	/* The engine's. */
	bool looked; /* read and decided at least once */
	/* Where the CPU use the next look measures starts: the last look,
	 * or the tick that first saw its CPUs changed since (repinned). */
	uint64_t last_look_ms;
	uint64_t last_cpu_ticks;
	uint64_t last_child_cpu_ticks; /* its children's, at the same read */
	/* The children it waited for used NP_HOME_MIN_CPU_PERCENT between two
	 * reads; the last such read (engine clock). */
	bool launched;
	uint64_t launched_ms;
	/* It was started with a mask the daemon set on a parent, and given
	 * the parent's mask from before (give_back_inherited): what it
	 * started meanwhile is the daemon's doing too. */
	bool handed_back;
	bool repinned; /* its CPUs changed: the window starts at this tick's read */
	/* Each thread's wait for a CPU at the read last_look_ms stands for,
	 * by tid (wait_known: every thread's schedstat was read then). */
	bool wait_known;
	struct np_thread_wait {
		int tid;
		uint64_t wait_ns;
	} *waits;
	unsigned nr_waits;
	/* Its CPUs changed, and its next look judges its demand by its use
	 * and its threads' wait since its last look: no window (repinned) to
	 * wait for. */
	bool repinned_now;
	uint64_t repinned_now_ms; /* the last such change (0: none) */
	/* Its next look reads numa_maps, whatever a sample would say: its
	 * CPUs changed since the last, or sampled looks stood in for enough
	 * reads in a row. */
	bool must_read;
	unsigned sampled_in_a_row;
	unsigned last_locality; /* percent */
	/* The nodes of the main thread's CPUs as its last look's tick left
	 * them, hashed (0: not known): a change between looks is its user's. */
	uint64_t cpus_hash;
	int no_effect_node;	  /* a move there moved nothing; -1: none */
	unsigned no_effect_looks; /* looks left before trying it again */
	unsigned no_effect_wait;  /* the wait set last time: doubles */
	/* What CPU samples (lib/runsample.h) tell of it: whether one saw it
	 * running since read_ms, the tick whose scan last read its stat. */
	bool ran;
	uint64_t read_ms;
	/* Its last look as the tick's snapshot had it, without the VMAs and
	 * the task's details, with .live kept over every look: what a status
	 * shows (NULL before the first look). Owned. */
	struct np_snap_task *last;
	/* Its threads' homes, for a task the plan spreads (NULL: none). */
	struct np_thread_homes *th;
	/* The masks its thread homes set, for what its threads start (NULL:
	 * it never had any). */
	struct np_th_handed *th_handed;
};

struct np_state_table {
	struct np_task_state *v; /* v[i] is the state of list->tasks[i] after a sync */
	unsigned nr;
	struct np_sched_task **sched; /* &v[i].sched, for np_sched_plan */
	unsigned *from;		      /* a sync's scratch: where v[i] was */
	unsigned v_cap, sched_cap;    /* from has sched_cap entries too */
	uint64_t seen;	    /* distinct tasks ever listed */
	uint64_t forgotten; /* tasks that left the list */
};

/*
 * Make the table match @list, which must be sorted by (pid, start_ticks)
 * without repeats: afterwards v[i] is the state of list->tasks[i]. States of
 * tasks still listed are kept (read_ms set to @now_ms for a task this scan
 * read), new ones start fresh for @sched (read at @now_ms), the others are
 * released (their pidfds closed, their history freed). Pointers into
 * the table are valid until the next sync, after which they may point at
 * another task's state. Returns 0, -EINVAL (unsorted list) or -ENOMEM (the
 * table is unchanged).
 */
int np_state_table_sync(struct np_state_table *t, const struct np_task_list *list,
			const struct np_sched *sched, uint64_t now_ms);

/* Whether v[@i] started fresh at the last sync: its task was not listed
 * before. */
bool np_state_table_is_new(const struct np_state_table *t, unsigned i);

/* Release every state and the arrays; the table reads as empty after. */
void np_state_table_clear(struct np_state_table *t);

/* The state of (@pid, @start_ticks), or NULL. */
struct np_task_state *np_state_table_find(const struct np_state_table *t, int pid,
					  uint64_t start_ticks);

/* The same, for lookups in ascending order: the search starts at *@cursor
 * (0 for the first) and leaves it at the first state not before the one
 * asked for, so that a pass over a sorted list walks the table once. */
struct np_task_state *np_state_table_find_next(const struct np_state_table *t, int pid,
					       uint64_t start_ticks, unsigned *cursor);

/* The index of the first state of @pid, whatever its start time: the
 * states of @pid are those from there on with that pid (t->nr: none). */
unsigned np_state_table_first_of(const struct np_state_table *t, int pid);
