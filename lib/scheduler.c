/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "scheduler.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (UINT64_C(1) << 20)

/* The settings the scheduler uses, copied out of a struct np_config. */
struct sched_settings {
	uint64_t scan_delay_ms;
	uint64_t period_min_ms;
	uint64_t period_max_ms;
	uint64_t budget_bytes;
	uint64_t min_rss_bytes;
	unsigned min_cpu_percent;
	uint64_t tick_lead_ms; /* see due_after */
};

struct np_sched {
	struct np_clock *clock;
	struct sched_settings set;
	const struct np_filter *filter;
	np_sched_details_fn details;
	void *details_data;
	np_sched_busy_fn busy;
	void *busy_data;
	struct np_sched_counters counters;
};

static int settings_from_config(struct sched_settings *set, const struct np_config *cfg)
{
	if (cfg->scan_period_min_ms == 0 || cfg->scan_period_min_ms > cfg->scan_period_max_ms ||
	    cfg->scan_budget_mb == 0 || cfg->scan_budget_mb > UINT64_MAX / MIB ||
	    cfg->min_rss_mb > UINT64_MAX / MIB)
		return -EINVAL;
	*set = (struct sched_settings){
	    .scan_delay_ms = cfg->scan_delay_ms,
	    .period_min_ms = cfg->scan_period_min_ms,
	    .period_max_ms = cfg->scan_period_max_ms,
	    .budget_bytes = cfg->scan_budget_mb * MIB,
	    .min_rss_bytes = cfg->min_rss_mb * MIB,
	    .min_cpu_percent = cfg->min_cpu_percent,
	    /* The config file keeps tick_ms within scan_period_min_ms; a
	     * caller's own config may not: the lead is at most half of it. */
	    .tick_lead_ms = np_tick_lead_ms(cfg->tick_ms, cfg->scan_period_min_ms),
	};
	return 0;
}

int np_sched_new(const struct np_config *cfg, struct np_clock *clock, struct np_sched **out)
{
	struct np_sched *sched = calloc(1, sizeof(*sched));
	int err;

	if (!sched)
		return -ENOMEM;
	err = settings_from_config(&sched->set, cfg);
	if (err) {
		free(sched);
		return err;
	}
	sched->clock = clock;
	*out = sched;
	return 0;
}

void np_sched_free(struct np_sched *sched)
{
	free(sched);
}

void np_sched_set_filter(struct np_sched *sched, const struct np_filter *filter,
			 np_sched_details_fn details, void *data)
{
	sched->filter = filter;
	sched->details = details;
	sched->details_data = data;
}

void np_sched_set_busy(struct np_sched *sched, np_sched_busy_fn busy, void *data)
{
	sched->busy = busy;
	sched->busy_data = data;
}

void np_sched_task_init(const struct np_sched *sched, struct np_sched_task *st)
{
	*st = (struct np_sched_task){.base_period_ms = sched->set.period_min_ms};
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * The time between two reads of a task: its adaptive base period stretched
 * by how many budgets its RSS spans. A 16 GiB task under a 4 GiB budget is
 * read at most every 4 * scan_period_min: reading it costs four small tasks'
 * worth of page-table walking, and stalls its own mmap four times as long.
 * The stretch raises the floor; the ceiling stays scan_period_max unless the
 * floor is above it.
 */
static uint64_t task_interval(const struct sched_settings *set, const struct np_sched_task *st)
{
	uint64_t scale = max_u64(1, st->rss_bytes / set->budget_bytes +
					(st->rss_bytes % set->budget_bytes != 0));
	uint64_t floor =
	    set->period_min_ms > UINT64_MAX / scale ? UINT64_MAX : set->period_min_ms * scale;
	uint64_t stretched =
	    st->base_period_ms > UINT64_MAX / scale ? UINT64_MAX : st->base_period_ms * scale;

	return max_u64(floor, min_u64(stretched, set->period_max_ms));
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * When a task that waits @wait_ms from @from is due: set a tick's lead
 * early (np_tick_lead_ms), it is met by the tick nearest its end. Exactly
 * @wait_ms on, a task poked at one tick to wait one period was as often
 * as not read two ticks on, not one.
 */
static uint64_t due_after(const struct sched_settings *set, uint64_t from, uint64_t wait_ms)
{
	return add_sat(from, wait_ms - min_u64(wait_ms, set->tick_lead_ms));
}

int np_sched_set_config(struct np_sched *sched, const struct np_config *cfg)
{
	struct sched_settings set;
	int err = settings_from_config(&set, cfg);

	if (err)
		return err;
	sched->set = set;
	return 0;
}

void np_sched_task_reload(const struct np_sched *sched, struct np_sched_task *st)
{
	const struct sched_settings *set = &sched->set;

	st->base_period_ms =
	    max_u64(set->period_min_ms, min_u64(st->base_period_ms, set->period_max_ms));
	/* The filter may have changed: ask it again, with a fresh read. */
	st->cgroup_excluded = false;
	st->next_read_ms = 0;
	st->small_wait_ms = 0;
	if (st->has_period)
		st->next_due_ms = due_after(set, st->period_start_ms, task_interval(set, st));
}

/* The CPU a task's work took: its own, and that of the children it waited
 * for (a build's make does its work through them; a task homed before it
 * began to launch must be looked at again to lose that home). */
static uint64_t work_ticks(const struct np_task *task)
{
	return task->cpu_ticks + task->child_cpu_ticks;
}

/*
 * CPU use since the last look (the last read, or the last time it was found
 * idle), or over its whole life before the first look. Windows are about a
 * period long, and at least a tick, so a 100 Hz tick counter gives a usable
 * ratio.
 */
static bool task_is_idle(const struct sched_settings *set, const struct np_sched_task *st,
			 const struct np_task *task, unsigned ticks_per_s, uint64_t now)
{
	uint64_t window_ms, used_ticks, work = work_ticks(task);

	if (set->min_cpu_percent == 0)
		return false;
	if (st->has_cpu_ref) {
		window_ms = now - st->period_start_ms;
		used_ticks = work >= st->cpu_ref_ticks ? work - st->cpu_ref_ticks : work;
	} else {
		window_ms = task->age_ms;
		used_ticks = work;
	}
	if (window_ms == 0)
		return false;
	/* used_ms * 100 < percent * window_ms, with used_ms = ticks * 1000 / hz */
	return (double)used_ticks * 100000.0 / ticks_per_s <
	       (double)set->min_cpu_percent * (double)window_ms;
}

struct candidate {
	unsigned index;
	uint64_t overdue_ms;
	int pid;
	uint64_t start_ticks;
};

static int compare_candidates(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->overdue_ms != y->overdue_ms)
		return x->overdue_ms > y->overdue_ms ? -1 : 1;
	return np_task_id_compare(x->pid, x->start_ticks, y->pid, y->start_ticks);
}

static int plan_reserve(struct np_sched_plan *plan, unsigned nr)
{
	if (nr > plan->cap) {
		unsigned *picks = realloc(plan->picks, nr * sizeof(*picks));
		struct np_sched_verdict *verdicts;

		if (!picks)
			return -ENOMEM;
		plan->picks = picks;
		verdicts = realloc(plan->verdicts, nr * sizeof(*verdicts));
		if (!verdicts)
			return -ENOMEM;
		plan->verdicts = verdicts;
		plan->cap = nr;
	}
	plan->nr_picks = 0;
	plan->nr_verdicts = nr;
	plan->picked_rss_bytes = 0;
	return 0;
}

/* The verdict of the cheap tests, or NP_REASON_COUNT for a task that is due
 * and worth a read. */
static enum np_reason cheap_verdict(struct np_sched *sched, struct np_sched_task *st,
				    const struct np_task *task, unsigned ticks_per_s, uint64_t now,
				    uint64_t *wait_ms)
{
	const struct sched_settings *set = &sched->set;

	*wait_ms = 0;
	if (task->kthread || (task->flags & NP_PF_KTHREAD))
		return NP_REASON_KERNEL_THREAD;
	if (st->cgroup_excluded ||
	    (sched->filter && np_filter_excludes(sched->filter, task, NULL, 0)))
		return NP_REASON_EXCLUDED;
	if (task->age_ms < set->scan_delay_ms) {
		*wait_ms = set->scan_delay_ms - task->age_ms;
		return NP_REASON_TOO_YOUNG;
	}
	if (!st->has_due) {
		/* Due since the moment it came of age: how overdue it is
		 * orders it against tasks waiting for their period, whose
		 * due times lead by as much (due_after). The age itself
		 * gets no lead: no task is read before scan_delay_ms. */
		st->next_due_ms = now - min_u64(now, task->age_ms - set->scan_delay_ms +
							 set->tick_lead_ms);
		st->has_due = true;
	}
	if (task->rss_bytes < set->min_rss_bytes) {
		st->held = false; /* not read until it grows: no window to keep */
		return NP_REASON_TOO_SMALL;
	}
	if (now < st->next_due_ms) {
		*wait_ms = st->next_due_ms - now;
		return NP_REASON_WAITING_PERIOD;
	}
	if (task->stat_kept)
		return NP_REASON_WAITING_PERIOD; /* due, on an old record: read next tick */
	if (sched->busy && sched->busy(sched->busy_data, task))
		return NP_REASON_MIGRATING;
	if (task_is_idle(set, st, task, ticks_per_s, now)) {
		/* A look without a read: the next one judges the CPU use of
		 * a full period from here, and a later change of its CPUs
		 * starts a window of its own. */
		st->held = false;
		st->period_start_ms = now;
		st->has_period = true;
		st->cpu_ref_ticks = work_ticks(task);
		st->has_cpu_ref = true;
		st->next_due_ms = due_after(set, now, task_interval(set, st));
		return NP_REASON_IDLE;
	}
	return NP_REASON_COUNT;
}

/* A due task the filter can only judge by its cgroup: read its details now
 * (once per config) and ask again. */
static enum np_reason cgroup_verdict(struct np_sched *sched, struct np_sched_task *st,
				     const struct np_task *task, unsigned index)
{
	if (!sched->filter || !np_filter_needs_cgroup(sched->filter))
		return NP_REASON_COUNT;
	/* Unreadable now: it has gone, or is going; not picked this tick. */
	if (!task->has_details && (!sched->details || sched->details(sched->details_data, index)))
		return NP_REASON_VANISHED;
	st->cgroup_excluded = np_filter_excludes(sched->filter, task, NULL, 0);
	return st->cgroup_excluded ? NP_REASON_EXCLUDED : NP_REASON_COUNT;
}

/* Between half of @wait and all of it, by pid. */
static uint64_t spread_wait(uint64_t wait, int pid)
{
	uint64_t half = wait / 2;

	return half + ((uint64_t)(unsigned)pid * 2654435761u) % (wait - half + 1);
}

/* After a plan on a record read this tick: when the next read is needed. */
static uint64_t next_read(const struct sched_settings *set, struct np_sched_task *st,
			  const struct np_task *task, const struct np_sched_verdict *v,
			  uint64_t now)
{
	if (v->reason != NP_REASON_TOO_SMALL)
		st->small_wait_ms = 0;
	switch (v->reason) {
	case NP_REASON_KERNEL_THREAD: /* a user-mode helper's child can look like one */
	case NP_REASON_EXCLUDED:      /* an exec may rename it */
		return add_sat(now, set->period_max_ms);
	case NP_REASON_TOO_YOUNG:
		return add_sat(now, v->wait_ms);
	case NP_REASON_TOO_SMALL:
		st->small_wait_ms = st->small_wait_ms
					? min_u64(st->small_wait_ms * 2, set->period_max_ms)
					: set->period_min_ms;
		return add_sat(now, spread_wait(st->small_wait_ms, task->pid));
	case NP_REASON_WAITING_PERIOD:
	case NP_REASON_IDLE:
	case NP_REASON_SCAN_FIRST:
	case NP_REASON_SCAN_DUE:
		return st->next_due_ms;
	default:
		return 0;
	}
}

bool np_sched_task_poke(const struct np_sched *sched, struct np_sched_task *st, bool hold)
{
	const struct sched_settings *set = &sched->set;
	uint64_t now = np_clock_now_ms(sched->clock), soon, least, due;
	bool first = !st->held;

	if (!st->has_due)
		return false; /* not of age yet: its first read comes anyway */
	st->base_period_ms = set->period_min_ms;
	st->next_read_ms = 0;
	if (first) {
		st->held = st->rebase = true;
		st->held_since_ms = now;
	}
	/* Its CPU use is measured from the change on: a window that
	 * straddles it would show the old mask's (a task that let go of the
	 * one CPU it allocated on would look small enough for a node of one),
	 * and one of nothing shows none. A big task re-pinned at every tick
	 * is not walked at every tick, nor left unlooked at for good. */
	soon = due_after(set, now, task_interval(set, st));
	if (!hold) {
		st->next_due_ms = min_u64(st->next_due_ms, soon);
		return first;
	}
	if (now - st->held_since_ms >= set->period_max_ms)
		return first;
	least = due_after(set, now, set->period_min_ms);
	due = st->next_due_ms > now ? min_u64(st->next_due_ms, soon) : soon;
	st->next_due_ms = max_u64(due, least);
	return first;
}

void np_sched_task_poke_now(const struct np_sched *sched, struct np_sched_task *st)
{
	uint64_t now = np_clock_now_ms(sched->clock);

	if (!st->has_due)
		return;
	st->base_period_ms = sched->set.period_min_ms;
	st->next_read_ms = 0;
	st->next_due_ms = min_u64(st->next_due_ms, now);
}

bool np_sched_needs_read(const struct np_sched_task *st, uint64_t now_ms)
{
	return now_ms >= st->next_read_ms;
}

int np_sched_plan(struct np_sched *sched, const struct np_task_list *list,
		  struct np_sched_task *const *states, bool no_budget, struct np_sched_plan *plan)
{
	uint64_t now = np_clock_now_ms(sched->clock);
	uint64_t budget = no_budget ? UINT64_MAX : sched->set.budget_bytes;
	struct candidate *cands;
	size_t nr_cands = 0;
	bool budget_spent = false;
	int err;

	if (list->nr && list->ticks_per_s == 0)
		return -EINVAL;
	for (unsigned i = 1; i < list->nr; i++)
		if (np_task_id_compare(list->tasks[i - 1].pid, list->tasks[i - 1].start_ticks,
				       list->tasks[i].pid, list->tasks[i].start_ticks) >= 0)
			return -EINVAL; /* unsorted, or one task listed twice */
	err = plan_reserve(plan, list->nr);
	if (err)
		return err;
	cands = malloc((list->nr ? list->nr : 1) * sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	sched->counters.tasks_tracked = list->nr;
	sched->counters.ticks++;

	for (unsigned i = 0; i < list->nr; i++) {
		const struct np_task *task = &list->tasks[i];
		struct np_sched_task *st = states[i];
		struct np_sched_verdict *v = &plan->verdicts[i];

		st->rss_bytes = task->rss_bytes;
		if (st->rebase && !task->stat_kept) {
			/* Re-pinned: its use is judged from this read on. */
			st->period_start_ms = now;
			st->has_period = true;
			st->cpu_ref_ticks = work_ticks(task);
			st->has_cpu_ref = true;
			st->rebase = false;
		}
		v->reason = cheap_verdict(sched, st, task, list->ticks_per_s, now, &v->wait_ms);
		if (v->reason == NP_REASON_COUNT)
			cands[nr_cands++] = (struct candidate){i, now - st->next_due_ms, task->pid,
							       task->start_ticks};
	}

	qsort(cands, nr_cands, sizeof(*cands), compare_candidates);
	for (size_t c = 0; c < nr_cands; c++) {
		const struct np_task *task = &list->tasks[cands[c].index];
		struct np_sched_task *st = states[cands[c].index];
		struct np_sched_verdict *v = &plan->verdicts[cands[c].index];
		/* Reading details replaces the scan's RSS with VmRSS: the
		 * budget counts what it was judged by. */
		uint64_t rss = task->rss_bytes;

		/* Strictly in line: a task that does not fit stops the tick,
		 * so it heads the line next time instead of being passed
		 * forever by smaller ones. */
		if (budget_spent || (plan->nr_picks > 0 && plan->picked_rss_bytes + rss > budget)) {
			budget_spent = true;
			v->reason = NP_REASON_OVER_BUDGET;
			continue;
		}
		v->reason = cgroup_verdict(sched, st, task, cands[c].index);
		if (v->reason != NP_REASON_COUNT)
			continue;
		v->reason = st->scanned ? NP_REASON_SCAN_DUE : NP_REASON_SCAN_FIRST;
		st->scanned = true;
		st->held = false;
		st->period_start_ms = now;
		st->has_period = true;
		st->cpu_ref_ticks = work_ticks(task);
		st->has_cpu_ref = true;
		st->next_due_ms = due_after(&sched->set, now, task_interval(&sched->set, st));
		plan->picks[plan->nr_picks++] = cands[c].index;
		plan->picked_rss_bytes += rss;
		/* A task bigger than the budget is read alone. */
		if (plan->picked_rss_bytes >= budget)
			budget_spent = true;
	}
	for (unsigned i = 0; i < list->nr; i++) {
		if (!list->tasks[i].stat_kept)
			states[i]->next_read_ms = next_read(&sched->set, states[i], &list->tasks[i],
							    &plan->verdicts[i], now);
		sched->counters.verdicts[plan->verdicts[i].reason]++;
	}
	sched->counters.picks += plan->nr_picks;
	free(cands);
	return 0;
}

/* The period after a look with @outcome, and when the task is due next. */
static void adapt_period(struct np_sched *sched, struct np_sched_task *st,
			 const struct np_task *task, enum np_scan_outcome outcome)
{
	const struct sched_settings *set = &sched->set;

	switch (outcome) {
	case NP_SCAN_STABLE:
	case NP_SCAN_FAILED:
		st->base_period_ms = min_u64(set->period_max_ms, st->base_period_ms * 2);
		break;
	case NP_SCAN_CHANGED:
	case NP_SCAN_LOCALITY_DROPPED:
		st->base_period_ms = set->period_min_ms;
		break;
	default:
		break;
	}
	st->held = false; /* looked at: a later change starts a new window */
	if (!st->scanned) {
		/* Read without a plan (the caller's own choice): the period
		 * starts now. */
		st->scanned = true;
		st->has_due = true;
		st->has_period = true;
		st->period_start_ms = np_clock_now_ms(sched->clock);
	}
	st->rss_bytes = task->rss_bytes;
	st->next_due_ms = due_after(set, st->period_start_ms, task_interval(set, st));
	st->next_read_ms = st->next_due_ms;
}

int np_sched_done(struct np_sched *sched, struct np_sched_task *st, const struct np_task *task,
		  uint64_t bytes_read, enum np_scan_outcome outcome)
{
	if ((unsigned)outcome >= NP_SCAN_NR_OUTCOMES)
		return -EINVAL;
	adapt_period(sched, st, task, outcome);
	sched->counters.numa_maps_reads++;
	sched->counters.bytes_parsed += bytes_read;
	sched->counters.outcomes[outcome]++;
	if (outcome == NP_SCAN_FAILED)
		sched->counters.read_failures++;
	return 0;
}

void np_sched_sampled(struct np_sched *sched, struct np_sched_task *st, const struct np_task *task)
{
	adapt_period(sched, st, task, NP_SCAN_STABLE);
	sched->counters.sampled_looks++;
}

void np_sched_task_period(const struct np_sched *sched, const struct np_sched_task *st,
			  uint64_t *period_ms, uint64_t *next_ms)
{
	*period_ms = task_interval(&sched->set, st);
	*next_ms = st->next_due_ms;
}

const struct np_sched_counters *np_sched_counters(const struct np_sched *sched)
{
	return &sched->counters;
}

void np_sched_plan_free(struct np_sched_plan *plan)
{
	free(plan->picks);
	free(plan->verdicts);
	*plan = (struct np_sched_plan){0};
}

void np_sched_verdict_text(const struct np_sched *sched, const struct np_task *task,
			   const struct np_sched_verdict *v, char *buf, size_t len)
{
	const struct sched_settings *set = &sched->set;
	const char *what = np_reason_sentence(v->reason);

	switch (v->reason) {
	case NP_REASON_TOO_YOUNG:
		snprintf(buf, len, "%s (%" PRIu64 "): first look in %" PRIu64 " ms", what,
			 set->scan_delay_ms, v->wait_ms);
		break;
	case NP_REASON_TOO_SMALL:
		snprintf(buf, len, "RSS %s below min_rss_mb (%" PRIu64 ")",
			 np_size_text(task->rss_bytes).s, set->min_rss_bytes / MIB);
		break;
	case NP_REASON_IDLE:
		snprintf(buf, len, "%s (%u%%)", what, set->min_cpu_percent);
		break;
	case NP_REASON_EXCLUDED:
		if (!sched->filter || !np_filter_excludes(sched->filter, task, buf, len))
			snprintf(buf, len, "%s", what);
		break;
	case NP_REASON_WAITING_PERIOD:
		snprintf(buf, len, "%s: next in %" PRIu64 " ms", what, v->wait_ms);
		break;
	default:
		snprintf(buf, len, "%s", what);
		break;
	}
}

const char *np_scan_outcome_name(enum np_scan_outcome outcome)
{
	static const char *const names[NP_SCAN_NR_OUTCOMES] = {
	    [NP_SCAN_STABLE] = "stable",
	    [NP_SCAN_CHANGED] = "changed",
	    [NP_SCAN_LOCALITY_DROPPED] = "locality-dropped",
	    [NP_SCAN_FAILED] = "failed",
	};

	return (unsigned)outcome < NP_SCAN_NR_OUTCOMES ? names[outcome] : "unknown";
}
