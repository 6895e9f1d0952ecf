/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
#include "filter.h"
#include "reason.h"
#include "task.h"

/*
 * The scan scheduler decides, each tick, which tasks get their numa_maps read.
 * Reading numa_maps walks the task's page tables under its mmap lock (about
 * 8 ms per GiB of 4 KiB pages), stalling the task's own mmap/munmap, so the
 * scheduler starts slow and stays cheap, as the kernel's NUMA balancing does
 * (kernel/sched/fair.c: task_numa_work, update_task_scan_period):
 *
 *  - a task younger than scan_delay_ms is left alone: most processes (compiler
 *    runs, shell pipelines) are gone before anything could be gained;
 *  - kernel threads, excluded tasks, tasks below min_rss_mb and tasks that
 *    used less than min_cpu_percent of a CPU since the last look are skipped
 *    using only what the task list already holds (cgroup rules read a due
 *    task's details once per configuration, and only then);
 *  - each task then has its own period, from scan_period_min_ms doubling up
 *    to scan_period_max_ms while its placement stays put, and back to the
 *    minimum when it changed or its locality dropped. The period is stretched
 *    by ceil(rss / scan_budget), so the read rate of a big task is bounded
 *    like the kernel bounds the scan rate by scan_size;
 *  - one tick reads at most scan_budget_mb of RSS, most overdue task first;
 *    a task bigger than the budget is still read, alone, when it heads the
 *    line.
 *
 * The scheduler keeps no table of its own: its state of each task lives in
 * the caller's per-task table (lib/state.h), keyed by (pid, start_ticks), and
 * is handed to it with each plan.
 */
struct np_sched;

/* What the scheduler remembers of one task between ticks. Start it with
 * np_sched_task_init; only the scheduler writes it. */
struct np_sched_task {
	bool has_due;	      /* next_due_ms is set: the scan delay has passed */
	bool scanned;	      /* read at least once */
	bool cgroup_excluded; /* excluded by its cgroup: asked once per config */
	bool has_period;      /* period_start_ms is set */
	uint64_t next_due_ms;
	uint64_t period_start_ms; /* the last read, or the last look that found it idle */
	uint64_t base_period_ms;  /* adaptive, within [scan_period_min, scan_period_max] */
	bool has_cpu_ref;
	uint64_t cpu_ref_ticks; /* cpu_ticks + child_cpu_ticks at period_start_ms */
	uint64_t rss_bytes;	/* at the last plan */
	/* When its stat must be read again (clock ms; 0: at the next tick):
	 * until then the last record stands in (np_sched_needs_read). */
	uint64_t next_read_ms;
	uint64_t small_wait_ms; /* below min_rss_mb: the wait between reads */
	/* Its CPUs changed since its last read or idle look, first at
	 * held_since_ms (np_sched_task_poke); at its next read (rebase) its
	 * CPU use is measured from there. When the poke held it, its look
	 * waits for a window of use on its new CPUs, for at most
	 * scan_period_max_ms from held_since_ms. */
	bool held;
	bool rebase;
	uint64_t held_since_ms;
};

/* A fresh state for a task first seen now. */
void np_sched_task_init(const struct np_sched *sched, struct np_sched_task *st);

/* What reading and deciding on one task found; adapts its period. */
enum np_scan_outcome {
	NP_SCAN_STABLE,		  /* placement unchanged: the period doubles */
	NP_SCAN_CHANGED,	  /* placement changed: back to the minimum */
	NP_SCAN_LOCALITY_DROPPED, /* locality fell: back to the minimum */
	NP_SCAN_FAILED,		  /* the read failed: back off (doubles) */
	NP_SCAN_NR_OUTCOMES,
};

struct np_sched_verdict {
	enum np_reason reason; /* one of the first NP_REASON_SCHED_COUNT */
	uint64_t wait_ms;      /* too young, period: ms until it may be read */
};

/* One tick's plan over a task list. */
struct np_sched_plan {
	/* Indices into the task list of the tasks to read now, most overdue
	 * first. */
	unsigned *picks;
	unsigned nr_picks;
	/* One verdict per task of the list, by index. */
	struct np_sched_verdict *verdicts;
	unsigned nr_verdicts;
	uint64_t picked_rss_bytes;
	unsigned cap; /* allocated entries of both arrays */
};

struct np_sched_counters {
	uint64_t ticks;		  /* plans made */
	uint64_t tasks_tracked;	  /* tasks in the last list */
	uint64_t picks;		  /* reads planned */
	uint64_t numa_maps_reads; /* reads reported done, failed ones included */
	uint64_t sampled_looks;	  /* picks a sampled look stood in for (np_sched_sampled) */
	uint64_t read_failures;
	uint64_t bytes_parsed;		    /* numa_maps bytes reported done */
	uint64_t verdicts[NP_REASON_COUNT]; /* task-ticks by reason */
	uint64_t outcomes[NP_SCAN_NR_OUTCOMES];
};

/* Read the details (status, cgroup) of list->tasks[@index], which the
 * filter cannot judge without its cgroup, into the list the caller planned
 * with: the task keeps them for the rest of the tick. Returns 0, or -errno
 * (the task is then left out of this tick). */
typedef int (*np_sched_details_fn)(void *data, unsigned index);

/* Create a scheduler reading time from @clock (which must outlive it) and
 * its settings from @cfg (copied: @cfg need not outlive the call). Returns
 * 0, -EINVAL for settings it cannot work with (a zero period or budget, the
 * period minimum above the maximum), or -ENOMEM. */
int np_sched_new(const struct np_config *cfg, struct np_clock *clock, struct np_sched **out);

/* Free a scheduler; NULL is accepted. */
void np_sched_free(struct np_sched *sched);

/* Validate and apply a reloaded config (SIGHUP), with the filter compiled
 * from it. Callers apply every task's state with np_sched_task_reload after.
 * Returns 0, -EINVAL (config rejected, the old one stays) or -ENOMEM. */
int np_sched_set_config(struct np_sched *sched, const struct np_config *cfg);

/* After np_sched_set_config: clamp a task's period into the new range; a
 * task already read is next due one new period after that read, and the
 * filter is asked again. */
void np_sched_task_reload(const struct np_sched *sched, struct np_sched_task *st);

/* The filter tasks are judged by (not owned; NULL: none) and, when it has
 * cgroup rules, how to read a due task's details for them. */
void np_sched_set_filter(struct np_sched *sched, const struct np_filter *filter,
			 np_sched_details_fn details, void *data);

/* Whether @task's pages are being moved now. A due task that is waits,
 * still due (verdict "migrating"): a read of it would see pages in motion,
 * and would walk its page tables beside the move. */
typedef bool (*np_sched_busy_fn)(void *data, const struct np_task *task);
void np_sched_set_busy(struct np_sched *sched, np_sched_busy_fn busy, void *data);

/* Plan this tick over @list, sorted by (pid, start_ticks); states[i] is the
 * state of list->tasks[i]. Picked tasks count as read now: until
 * np_sched_done adapts it, the next read waits a full period even if the
 * caller never reads. A period, like every wait the scheduler sets from a
 * read, ends at the tick nearest its end: it is set half of tick_ms early
 * (np_tick_lead_ms), and with tick_ms 0 (plans at any time) exact. With
 * @no_budget every due task is picked (a one-shot look). The list must
 * have ticks_per_s set. Returns 0, -EINVAL or -ENOMEM. */
int np_sched_plan(struct np_sched *sched, const struct np_task_list *list,
		  struct np_sched_task *const *states, bool no_budget, struct np_sched_plan *plan);

/* Report the read of a picked task: @bytes_read of numa_maps parsed, and
 * what came of it. Returns 0, or -EINVAL for an unknown outcome. */
int np_sched_done(struct np_sched *sched, struct np_sched_task *st, const struct np_task *task,
		  uint64_t bytes_read, enum np_scan_outcome outcome);

/* A picked task was given a sampled look instead of a numa_maps read
 * (lib/sample.h), which found it as its last read left it: its period
 * doubles as after a stable read, and no numa_maps read is counted. */
void np_sched_sampled(struct np_sched *sched, struct np_sched_task *st, const struct np_task *task);

/*
 * Whether a task's stat must be read for the next plan, or the record read
 * before may stand in (the task list's stat_kept). A plan sets when each
 * task needs its next read from the record of a read: a young one when it
 * comes of age; one below min_rss_mb after scan_period_min_ms, the wait
 * doubling up to scan_period_max_ms while it stays small (between half and
 * all of it, by pid, so that tasks seen together are not all read again at
 * one tick); one waiting for its period (or idle) when its period ends; a
 * kernel thread or an excluded task after scan_period_max_ms (an exec may
 * rename it, and a user-mode helper's child looks like a kernel thread
 * until it execs); any other at the next tick. A kept record is never
 * read numa_maps on or judged idle by: a task that came due on one waits
 * for its read at the next tick.
 */
bool np_sched_needs_read(const struct np_sched_task *st, uint64_t now_ms);

/* Something outside the scheduler's figures changed for a task already
 * read (its user gave it other CPUs): its period is back at the minimum,
 * it is due one such period (stretched for its size) from now, or sooner
 * when it was due sooner, and its stat is read at this scan. The first
 * poke since its last read returns true: its CPU use is measured anew
 * from this scan's read (the caller's too). With @hold (its demand will
 * matter), its look waits for a window of use on its new CPUs: a
 * shortest period (ended at the tick nearest its end), though it was due;
 * each poke after that
 * pushes the look so, until the task has waited scan_period_max_ms since
 * the first (re-pinned again and again): then it is looked at when it is
 * due, by its use since the first. */
bool np_sched_task_poke(const struct np_sched *sched, struct np_sched_task *st, bool hold);

/* The same change for a task whose demand need not wait for a window (the
 * caller can judge it by its use and its threads' wait for a CPU since its
 * last look): due now, its period back at the minimum, its stat read at
 * this scan, and its CPU use measured, as for any look, since its last. A
 * task not yet of age is left to its first read. */
void np_sched_task_poke_now(const struct np_sched *sched, struct np_sched_task *st);

/* The current period of a task (its adaptive base times its size factor)
 * and when it may next be read, in clock ms. */
void np_sched_task_period(const struct np_sched *sched, const struct np_sched_task *st,
			  uint64_t *period_ms, uint64_t *next_ms);

/* The counters since np_sched_new (a reload keeps them). */
const struct np_sched_counters *np_sched_counters(const struct np_sched *sched);

/* Free a plan's arrays; the plan can be used again. */
void np_sched_plan_free(struct np_sched_plan *plan);

/* One line on why a task got @v, with its figures ("younger than
 * scan_delay_ms (1000): first look in 500 ms"), into @buf. */
void np_sched_verdict_text(const struct np_sched *sched, const struct np_task *task,
			   const struct np_sched_verdict *v, char *buf, size_t len);

/* Short stable name of an outcome ("stable", "changed", ...). */
const char *np_scan_outcome_name(enum np_scan_outcome outcome);
