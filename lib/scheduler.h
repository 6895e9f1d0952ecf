/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
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
 *    using only what the task list already holds;
 *  - each task then has its own period, from scan_period_min_ms doubling up
 *    to scan_period_max_ms while its placement stays put, and back to the
 *    minimum when it changed or its locality dropped. The period is stretched
 *    by ceil(rss / scan_budget), so the read rate of a big task is bounded
 *    like the kernel bounds the scan rate by scan_size;
 *  - one tick reads at most scan_budget_mb of RSS, most overdue task first;
 *    a task bigger than the budget is still read, alone, when it heads the
 *    line.
 *
 * State is keyed by (pid, start_ticks): a reused pid is a new task. A task
 * missing from a plan's list has exited and is forgotten.
 */
struct np_sched;

/* Why a task is, or is not, read this tick. */
enum np_sched_reason {
	NP_SCHED_SCAN_FIRST,	 /* first read, the scan delay has passed */
	NP_SCHED_SCAN_DUE,	 /* its period has passed */
	NP_SCHED_SKIP_KTHREAD,	 /* kernel thread: no user memory */
	NP_SCHED_SKIP_EXCLUDED,	 /* by comm glob, pid or the exclude callback */
	NP_SCHED_SKIP_TOO_YOUNG, /* age below scan_delay_ms; wait_ms to go */
	NP_SCHED_SKIP_TOO_SMALL, /* RSS below min_rss_mb */
	NP_SCHED_SKIP_PERIOD,	 /* read within its period; wait_ms to go */
	NP_SCHED_SKIP_IDLE,	 /* CPU use since the last look below min_cpu_percent */
	NP_SCHED_SKIP_BUDGET,	 /* due, but this tick's budget is spent */
	NP_SCHED_NR_REASONS,
};

/* What reading and deciding on one task found; adapts its period. */
enum np_scan_outcome {
	NP_SCAN_STABLE,		  /* placement unchanged: the period doubles */
	NP_SCAN_CHANGED,	  /* placement changed: back to the minimum */
	NP_SCAN_LOCALITY_DROPPED, /* locality fell: back to the minimum */
	NP_SCAN_FAILED,		  /* the read failed: back off (doubles) */
	NP_SCAN_NR_OUTCOMES,
};

struct np_sched_verdict {
	enum np_sched_reason reason;
	uint64_t wait_ms; /* too young, period: ms until it may be read */
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
	uint64_t tasks_seen;	  /* distinct tasks ever listed */
	uint64_t tasks_forgotten; /* tasks that left the list */
	uint64_t tasks_tracked;	  /* tasks in the last list */
	uint64_t picks;		  /* reads planned */
	uint64_t numa_maps_reads; /* reads reported done, failed ones included */
	uint64_t read_failures;
	uint64_t bytes_parsed;			/* numa_maps bytes reported done */
	uint64_t verdicts[NP_SCHED_NR_REASONS]; /* task-ticks by reason */
	uint64_t outcomes[NP_SCAN_NR_OUTCOMES];
};

/* An expensive filter (cgroup membership needs np_task_read_details) asked
 * only about tasks that passed every cheap test and are due. Returns true to
 * exclude the task. */
typedef bool (*np_sched_exclude_fn)(void *data, const struct np_task *task);

/* Create a scheduler reading time from @clock (which must outlive it) and
 * its settings from @cfg (copied: @cfg need not outlive the call). Returns
 * 0, -EINVAL for settings it cannot work with (a zero period or budget, the
 * period minimum above the maximum), or -ENOMEM. */
int np_sched_new(const struct np_config *cfg, struct np_clock *clock, struct np_sched **out);

/* Free a scheduler; NULL is accepted. */
void np_sched_free(struct np_sched *sched);

/* Apply a reloaded config (SIGHUP). Per-task state is kept; every task's
 * period is clamped into the new range, and a task already read is next due
 * one new period after that read. The exclude callback is asked again.
 * Returns 0, -EINVAL (config rejected, the old one stays) or -ENOMEM. */
int np_sched_set_config(struct np_sched *sched, const struct np_config *cfg);

/* Set the expensive exclusion filter (NULL: none). */
void np_sched_set_exclude_fn(struct np_sched *sched, np_sched_exclude_fn fn, void *data);

/* Plan this tick over @list (the whole current task list: absent tasks are
 * forgotten). Picked tasks count as read now: until np_sched_done adapts it,
 * the next read waits a full period even if the caller never reads. The list
 * must have ticks_per_s set. Returns 0, -EINVAL or -ENOMEM. */
int np_sched_plan(struct np_sched *sched, const struct np_task_list *list,
		  struct np_sched_plan *plan);

/* Report the read of a picked task: @bytes_read of numa_maps parsed, and
 * what came of it. Returns 0, or -ENOENT for a task the scheduler does not
 * track (gone from the last list). */
int np_sched_done(struct np_sched *sched, const struct np_task *task, uint64_t bytes_read,
		  enum np_scan_outcome outcome);

/* The current period of a task (its adaptive base times its size factor)
 * and when it may next be read, in clock ms. Returns 0 or -ENOENT. */
int np_sched_task_period(const struct np_sched *sched, int pid, uint64_t start_ticks,
			 uint64_t *period_ms, uint64_t *next_ms);

/* The counters since np_sched_new (a reload keeps them). */
const struct np_sched_counters *np_sched_counters(const struct np_sched *sched);

/* Free a plan's arrays; the plan can be used again. */
void np_sched_plan_free(struct np_sched_plan *plan);

/* Short stable names ("too-young", "scan-due", ...) for reports and metrics. */
const char *np_sched_reason_name(enum np_sched_reason reason);
const char *np_scan_outcome_name(enum np_scan_outcome outcome);
