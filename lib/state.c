/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "state.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int compare_tasks(const struct np_task *x, const struct np_task *y)
{
	return np_task_id_compare(x->pid, x->start_ticks, y->pid, y->start_ticks);
}

static void state_release(struct np_task_state *st)
{
	np_act_task_release(&st->act);
	free(st->hist);
	st->hist = NULL;
	np_plan_memo_clear(&st->memo);
	if (st->last)
		np_snap_task_clear(st->last);
	free(st->last);
	st->last = NULL;
	np_thread_homes_free(st->th);
	st->th = NULL;
	np_th_handed_free(st->th_handed);
	st->th_handed = NULL;
	free(st->waits);
	st->waits = NULL;
	st->nr_waits = 0;
}

static void state_init(struct np_task_state *st, const struct np_task *task,
		       const struct np_sched *sched, uint64_t now_ms)
{
	memset(st, 0, sizeof(*st));
	st->pid = task->pid;
	st->start_ticks = task->start_ticks;
	/* A task new to the table is new to the scan's keep callback: it
	 * was read now. */
	st->read_ms = now_ms;
	np_sched_task_init(sched, &st->sched);
	np_act_task_init(&st->act);
	st->memo.home = -1;
	st->no_effect_node = -1;
}

/* Room for @n entries in the table and its scratch arrays, with a quarter
 * more, so that a machine whose task count creeps up does not reallocate
 * at every tick. On failure the table is as it was. */
static int reserve(struct np_state_table *t, unsigned n)
{
	unsigned want = n + n / 4;

	if (n > t->v_cap) {
		struct np_task_state *v = realloc(t->v, want * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->v_cap = want;
	}
	if (n > t->sched_cap) {
		struct np_sched_task **p = realloc(t->sched, want * sizeof(*p));
		unsigned *from;

		if (!p)
			return -ENOMEM;
		t->sched = p;
		from = realloc(t->from, want * sizeof(*from));
		if (!from)
			return -ENOMEM; /* sched_cap unchanged: from is retried */
		t->from = from;
		t->sched_cap = want;
	}
	return 0;
}

/*
 * In place, so that a sync costs what changed: a state keeps its slot
 * unless tasks before it came or left. Kept states stay in order, so one
 * moving to a lower slot finds it freed by a state that also moved lower
 * (or left), and one moving higher by one that also moved higher: the
 * first kind is moved in ascending order, the second in descending, and
 * the new states are made last, in slots every old occupant has left.
 */
int np_state_table_sync(struct np_state_table *t, const struct np_task_list *list,
			const struct np_sched *sched, uint64_t now_ms)
{
	unsigned n = list->nr, old = 0, kept = 0, first_change = n;
	bool moved_table;
	int err;

	for (unsigned i = 1; i < n; i++)
		if (compare_tasks(&list->tasks[i - 1], &list->tasks[i]) >= 0)
			return -EINVAL;
	{
		const struct np_task_state *before = t->v;

		err = reserve(t, n ? n : 1);
		if (err)
			return err;
		/* Moved now, or by a reserve whose later allocation failed
		 * (the pointers then still name the old array). */
		moved_table = t->v != before || (t->nr && t->sched[0] != &t->v[0].sched);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct np_task *task = &list->tasks[i];
		int c = 1;

		/* Both sorted: a merge. States passed over have left. */
		while (old < t->nr && (c = np_task_id_compare(t->v[old].pid, t->v[old].start_ticks,
							      task->pid, task->start_ticks)) < 0)
			state_release(&t->v[old++]);
		if (old < t->nr && c == 0) {
			/* Read by this scan: samples from here on say whether
			 * it ran since. */
			if (!task->stat_kept && !task->stat_unchanged) {
				t->v[old].ran = false;
				t->v[old].read_ms = now_ms;
			}
			t->from[i] = old++;
			kept++;
		} else {
			t->from[i] = UINT_MAX;
		}
		if (t->from[i] != i && first_change == n)
			first_change = i;
	}
	while (old < t->nr)
		state_release(&t->v[old++]);
	for (unsigned i = first_change; i < n; i++)
		if (t->from[i] != UINT_MAX && t->from[i] > i)
			t->v[i] = t->v[t->from[i]];
	for (unsigned i = n; i-- > first_change;)
		if (t->from[i] != UINT_MAX && t->from[i] < i)
			t->v[i] = t->v[t->from[i]];
	for (unsigned i = first_change; i < n; i++) {
		if (t->from[i] == UINT_MAX) {
			state_init(&t->v[i], &list->tasks[i], sched, now_ms);
			t->seen++;
		}
	}
	for (unsigned i = moved_table ? 0 : first_change; i < n; i++)
		t->sched[i] = &t->v[i].sched;
	t->forgotten += t->nr - kept;
	t->nr = n;
	return 0;
}

bool np_state_table_is_new(const struct np_state_table *t, unsigned i)
{
	return i < t->nr && t->from[i] == UINT_MAX;
}

void np_state_table_clear(struct np_state_table *t)
{
	for (unsigned i = 0; i < t->nr; i++)
		state_release(&t->v[i]);
	free(t->v);
	free(t->sched);
	free(t->from);
	*t = (struct np_state_table){0};
}

struct np_task_state *np_state_table_find(const struct np_state_table *t, int pid,
					  uint64_t start_ticks)
{
	unsigned lo = 0, hi = t->nr;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = np_task_id_compare(pid, start_ticks, t->v[mid].pid, t->v[mid].start_ticks);

		if (c == 0)
			return &t->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

unsigned np_state_table_first_of(const struct np_state_table *t, int pid)
{
	unsigned lo = 0, hi = t->nr;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct np_task_state *np_state_table_find_next(const struct np_state_table *t, int pid,
					       uint64_t start_ticks, unsigned *cursor)
{
	unsigned i = *cursor;
	int c = 1;

	while (i < t->nr &&
	       (c = np_task_id_compare(t->v[i].pid, t->v[i].start_ticks, pid, start_ticks)) < 0)
		i++;
	*cursor = i;
	return i < t->nr && c == 0 ? &t->v[i] : NULL;
}
