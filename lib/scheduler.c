/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "scheduler.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024ull * 1024)

/* What the scheduler remembers of one task between ticks. */
struct task_state {
	int pid;
	uint64_t start_ticks;
	bool has_due;	  /* next_due_ms is set: the scan delay has passed */
	bool scanned;	  /* read at least once */
	bool fn_excluded; /* the exclude callback said no; asked once per config */
	bool has_period;  /* period_start_ms is set */
	uint64_t next_due_ms;
	uint64_t period_start_ms; /* the last read, or the last look that found it idle */
	uint64_t base_period_ms;  /* adaptive, within [scan_period_min, scan_period_max] */
	bool has_cpu_ref;
	uint64_t cpu_ref_ticks; /* cpu_ticks at period_start_ms */
	uint64_t rss_bytes;	/* at the last plan */
};

/* The settings the scheduler uses, copied out of a struct np_config. */
struct sched_settings {
	uint64_t scan_delay_ms;
	uint64_t period_min_ms;
	uint64_t period_max_ms;
	uint64_t budget_bytes;
	uint64_t min_rss_bytes;
	unsigned min_cpu_percent;
	struct np_strv include_comm;
	struct np_strv exclude_comm;
	int *exclude_pid;
	size_t nr_exclude_pid;
};

struct np_sched {
	struct np_clock *clock;
	struct sched_settings set;
	np_sched_exclude_fn exclude_fn;
	void *exclude_data;
	/* Sorted by (pid, start_ticks): the tasks of the last plan. */
	struct task_state *tasks;
	size_t nr_tasks;
	struct np_sched_counters counters;
};

static void strv_free(struct np_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

static int strv_copy(struct np_strv *dst, const struct np_strv *src)
{
	dst->n = 0;
	dst->v = src->n ? calloc(src->n, sizeof(*dst->v)) : NULL;
	if (src->n && !dst->v)
		return -ENOMEM;
	for (; dst->n < src->n; dst->n++) {
		dst->v[dst->n] = strdup(src->v[dst->n]);
		if (!dst->v[dst->n]) {
			strv_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

static void settings_free(struct sched_settings *set)
{
	strv_free(&set->include_comm);
	strv_free(&set->exclude_comm);
	free(set->exclude_pid);
	set->exclude_pid = NULL;
	set->nr_exclude_pid = 0;
}

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
	};
	if (strv_copy(&set->include_comm, &cfg->include_comm) ||
	    strv_copy(&set->exclude_comm, &cfg->exclude_comm))
		goto nomem;
	if (cfg->nr_exclude_pid) {
		set->exclude_pid = malloc(cfg->nr_exclude_pid * sizeof(*set->exclude_pid));
		if (!set->exclude_pid)
			goto nomem;
		memcpy(set->exclude_pid, cfg->exclude_pid,
		       cfg->nr_exclude_pid * sizeof(*set->exclude_pid));
		set->nr_exclude_pid = cfg->nr_exclude_pid;
	}
	return 0;
nomem:
	settings_free(set);
	return -ENOMEM;
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
	if (!sched)
		return;
	settings_free(&sched->set);
	free(sched->tasks);
	free(sched);
}

void np_sched_set_exclude_fn(struct np_sched *sched, np_sched_exclude_fn fn, void *data)
{
	sched->exclude_fn = fn;
	sched->exclude_data = data;
	for (size_t i = 0; i < sched->nr_tasks; i++)
		sched->tasks[i].fn_excluded = false;
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
static uint64_t task_interval(const struct sched_settings *set, const struct task_state *st)
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

int np_sched_set_config(struct np_sched *sched, const struct np_config *cfg)
{
	struct sched_settings set;
	int err = settings_from_config(&set, cfg);

	if (err)
		return err;
	settings_free(&sched->set);
	sched->set = set;
	for (size_t i = 0; i < sched->nr_tasks; i++) {
		struct task_state *st = &sched->tasks[i];

		st->base_period_ms =
		    max_u64(set.period_min_ms, min_u64(st->base_period_ms, set.period_max_ms));
		/* Exclusion lists may have changed: ask the callback again. */
		st->fn_excluded = false;
		if (st->has_period)
			st->next_due_ms = add_sat(st->period_start_ms, task_interval(&set, st));
	}
	return 0;
}

static int compare_state(int pid_a, uint64_t start_a, int pid_b, uint64_t start_b)
{
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	if (start_a != start_b)
		return start_a < start_b ? -1 : 1;
	return 0;
}

static struct task_state *find_state(const struct np_sched *sched, int pid, uint64_t start_ticks)
{
	size_t lo = 0, hi = sched->nr_tasks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct task_state *st = &sched->tasks[mid];
		int c = compare_state(pid, start_ticks, st->pid, st->start_ticks);

		if (c == 0)
			return st;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static bool comm_matches(const struct np_strv *globs, const char *comm)
{
	for (size_t i = 0; i < globs->n; i++)
		if (fnmatch(globs->v[i], comm, 0) == 0)
			return true;
	return false;
}

static bool config_excludes(const struct sched_settings *set, const struct np_task *task)
{
	for (size_t i = 0; i < set->nr_exclude_pid; i++)
		if (set->exclude_pid[i] == task->pid)
			return true;
	if (set->include_comm.n && !comm_matches(&set->include_comm, task->comm))
		return true;
	return comm_matches(&set->exclude_comm, task->comm);
}

/*
 * CPU use since the last look (the last read, or the last time it was found
 * idle), or over its whole life before the first look. Windows are at least
 * one period long, so a 100 Hz tick counter gives a usable ratio.
 */
static bool task_is_idle(const struct sched_settings *set, const struct task_state *st,
			 const struct np_task *task, unsigned ticks_per_s, uint64_t now)
{
	uint64_t window_ms, used_ticks;

	if (set->min_cpu_percent == 0)
		return false;
	if (st->has_cpu_ref) {
		window_ms = now - st->period_start_ms;
		used_ticks = task->cpu_ticks >= st->cpu_ref_ticks
				 ? task->cpu_ticks - st->cpu_ref_ticks
				 : task->cpu_ticks;
	} else {
		window_ms = task->age_ms;
		used_ticks = task->cpu_ticks;
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
	return compare_state(x->pid, x->start_ticks, y->pid, y->start_ticks);
}

static int compare_tasks_by_index(const void *a, const void *b, void *data)
{
	const struct np_task *tasks = data;
	const struct np_task *x = &tasks[*(const unsigned *)a], *y = &tasks[*(const unsigned *)b];

	return compare_state(x->pid, x->start_ticks, y->pid, y->start_ticks);
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

/*
 * Carry the state of tasks still listed over to a new array in (pid,
 * start_ticks) order, start fresh ones, and drop the rest. state_of[i] is
 * the new state of list->tasks[i].
 */
static int merge_states(struct np_sched *sched, const struct np_task_list *list,
			struct task_state **out, size_t **state_of)
{
	unsigned *order = malloc((list->nr ? list->nr : 1) * sizeof(*order));
	struct task_state *next = calloc(list->nr ? list->nr : 1, sizeof(*next));
	size_t *map = malloc((list->nr ? list->nr : 1) * sizeof(*map));
	size_t old = 0, kept = 0;

	if (!order || !next || !map) {
		free(order);
		free(next);
		free(map);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < list->nr; i++)
		order[i] = i;
	qsort_r(order, list->nr, sizeof(*order), compare_tasks_by_index, list->tasks);
	for (unsigned k = 0; k < list->nr; k++) {
		const struct np_task *task = &list->tasks[order[k]];
		struct task_state *st = &next[k];

		if (k > 0 && compare_tasks_by_index(&order[k - 1], &order[k], list->tasks) == 0) {
			free(order);
			free(next);
			free(map);
			return -EINVAL; /* one task listed twice */
		}
		while (old < sched->nr_tasks &&
		       compare_state(sched->tasks[old].pid, sched->tasks[old].start_ticks,
				     task->pid, task->start_ticks) < 0)
			old++;
		if (old < sched->nr_tasks &&
		    compare_state(sched->tasks[old].pid, sched->tasks[old].start_ticks, task->pid,
				  task->start_ticks) == 0) {
			*st = sched->tasks[old++];
			kept++;
		} else {
			*st = (struct task_state){
			    .pid = task->pid,
			    .start_ticks = task->start_ticks,
			    .base_period_ms = sched->set.period_min_ms,
			};
			sched->counters.tasks_seen++;
		}
		map[order[k]] = k;
	}
	sched->counters.tasks_forgotten += sched->nr_tasks - kept;
	free(order);
	*out = next;
	*state_of = map;
	return 0;
}

/* The verdict of the cheap tests, or NP_SCHED_NR_REASONS for a task that is
 * due and worth a read. */
static enum np_sched_reason cheap_verdict(struct np_sched *sched, struct task_state *st,
					  const struct np_task *task, unsigned ticks_per_s,
					  uint64_t now, uint64_t *wait_ms)
{
	const struct sched_settings *set = &sched->set;

	*wait_ms = 0;
	if (task->kthread || (task->flags & NP_PF_KTHREAD))
		return NP_SCHED_SKIP_KTHREAD;
	if (st->fn_excluded || config_excludes(set, task))
		return NP_SCHED_SKIP_EXCLUDED;
	if (task->age_ms < set->scan_delay_ms) {
		*wait_ms = set->scan_delay_ms - task->age_ms;
		return NP_SCHED_SKIP_TOO_YOUNG;
	}
	if (!st->has_due) {
		/* Due since the moment it came of age: how overdue it is
		 * orders it against tasks waiting for their period. */
		st->next_due_ms = now - min_u64(now, task->age_ms - set->scan_delay_ms);
		st->has_due = true;
	}
	if (task->rss_bytes < set->min_rss_bytes)
		return NP_SCHED_SKIP_TOO_SMALL;
	if (now < st->next_due_ms) {
		*wait_ms = st->next_due_ms - now;
		return NP_SCHED_SKIP_PERIOD;
	}
	if (task_is_idle(set, st, task, ticks_per_s, now)) {
		/* A look without a read: the next one judges the CPU use of
		 * a full period from here. */
		st->period_start_ms = now;
		st->has_period = true;
		st->cpu_ref_ticks = task->cpu_ticks;
		st->has_cpu_ref = true;
		st->next_due_ms = add_sat(now, task_interval(set, st));
		return NP_SCHED_SKIP_IDLE;
	}
	return NP_SCHED_NR_REASONS;
}

int np_sched_plan(struct np_sched *sched, const struct np_task_list *list,
		  struct np_sched_plan *plan)
{
	uint64_t now = np_clock_now_ms(sched->clock);
	struct task_state *next;
	struct candidate *cands;
	size_t *state_of, nr_cands = 0;
	bool budget_spent = false;
	int err;

	if (list->nr && list->ticks_per_s == 0)
		return -EINVAL;
	err = plan_reserve(plan, list->nr);
	if (err)
		return err;
	cands = malloc((list->nr ? list->nr : 1) * sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	err = merge_states(sched, list, &next, &state_of);
	if (err) {
		free(cands);
		return err;
	}
	free(sched->tasks);
	sched->tasks = next;
	sched->nr_tasks = list->nr;
	sched->counters.tasks_tracked = list->nr;
	sched->counters.ticks++;

	for (unsigned i = 0; i < list->nr; i++) {
		const struct np_task *task = &list->tasks[i];
		struct task_state *st = &next[state_of[i]];
		struct np_sched_verdict *v = &plan->verdicts[i];

		st->rss_bytes = task->rss_bytes;
		v->reason = cheap_verdict(sched, st, task, list->ticks_per_s, now, &v->wait_ms);
		if (v->reason == NP_SCHED_NR_REASONS)
			cands[nr_cands++] = (struct candidate){i, now - st->next_due_ms, task->pid,
							       task->start_ticks};
	}

	qsort(cands, nr_cands, sizeof(*cands), compare_candidates);
	for (size_t c = 0; c < nr_cands; c++) {
		const struct np_task *task = &list->tasks[cands[c].index];
		struct task_state *st = &next[state_of[cands[c].index]];
		struct np_sched_verdict *v = &plan->verdicts[cands[c].index];

		/* Strictly in line: a task that does not fit stops the tick,
		 * so it heads the line next time instead of being passed
		 * forever by smaller ones. */
		if (budget_spent ||
		    (plan->nr_picks > 0 &&
		     plan->picked_rss_bytes + task->rss_bytes > sched->set.budget_bytes)) {
			budget_spent = true;
			v->reason = NP_SCHED_SKIP_BUDGET;
			continue;
		}
		if (sched->exclude_fn && sched->exclude_fn(sched->exclude_data, task)) {
			st->fn_excluded = true;
			v->reason = NP_SCHED_SKIP_EXCLUDED;
			continue;
		}
		v->reason = st->scanned ? NP_SCHED_SCAN_DUE : NP_SCHED_SCAN_FIRST;
		st->scanned = true;
		st->period_start_ms = now;
		st->has_period = true;
		st->cpu_ref_ticks = task->cpu_ticks;
		st->has_cpu_ref = true;
		st->next_due_ms = add_sat(now, task_interval(&sched->set, st));
		plan->picks[plan->nr_picks++] = cands[c].index;
		plan->picked_rss_bytes += task->rss_bytes;
		/* A task bigger than the budget is read alone. */
		if (plan->picked_rss_bytes >= sched->set.budget_bytes)
			budget_spent = true;
	}
	for (unsigned i = 0; i < list->nr; i++)
		sched->counters.verdicts[plan->verdicts[i].reason]++;
	sched->counters.picks += plan->nr_picks;
	free(cands);
	free(state_of);
	return 0;
}

int np_sched_done(struct np_sched *sched, const struct np_task *task, uint64_t bytes_read,
		  enum np_scan_outcome outcome)
{
	struct task_state *st = find_state(sched, task->pid, task->start_ticks);
	const struct sched_settings *set = &sched->set;

	if (!st)
		return -ENOENT;
	if ((unsigned)outcome >= NP_SCAN_NR_OUTCOMES)
		return -EINVAL;
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
	if (!st->scanned) {
		/* Read without a plan (the caller's own choice): the period
		 * starts now. */
		st->scanned = true;
		st->has_due = true;
		st->has_period = true;
		st->period_start_ms = np_clock_now_ms(sched->clock);
	}
	st->rss_bytes = task->rss_bytes;
	st->next_due_ms = add_sat(st->period_start_ms, task_interval(set, st));
	sched->counters.numa_maps_reads++;
	sched->counters.bytes_parsed += bytes_read;
	sched->counters.outcomes[outcome]++;
	if (outcome == NP_SCAN_FAILED)
		sched->counters.read_failures++;
	return 0;
}

int np_sched_task_period(const struct np_sched *sched, int pid, uint64_t start_ticks,
			 uint64_t *period_ms, uint64_t *next_ms)
{
	const struct task_state *st = find_state(sched, pid, start_ticks);

	if (!st)
		return -ENOENT;
	*period_ms = task_interval(&sched->set, st);
	*next_ms = st->next_due_ms;
	return 0;
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

const char *np_sched_reason_name(enum np_sched_reason reason)
{
	static const char *const names[NP_SCHED_NR_REASONS] = {
	    [NP_SCHED_SCAN_FIRST] = "scan-first",      [NP_SCHED_SCAN_DUE] = "scan-due",
	    [NP_SCHED_SKIP_KTHREAD] = "kernel-thread", [NP_SCHED_SKIP_EXCLUDED] = "excluded",
	    [NP_SCHED_SKIP_TOO_YOUNG] = "too-young",   [NP_SCHED_SKIP_TOO_SMALL] = "too-small",
	    [NP_SCHED_SKIP_PERIOD] = "waiting-period", [NP_SCHED_SKIP_IDLE] = "idle",
	    [NP_SCHED_SKIP_BUDGET] = "over-budget",
	};

	return (unsigned)reason < NP_SCHED_NR_REASONS ? names[reason] : "unknown";
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
