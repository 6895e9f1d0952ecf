/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "state.h"

#include <errno.h>
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
}

static void state_init(struct np_task_state *st, const struct np_task *task,
		       const struct np_sched *sched)
{
	memset(st, 0, sizeof(*st));
	st->pid = task->pid;
	st->start_ticks = task->start_ticks;
	np_sched_task_init(sched, &st->sched);
	np_act_task_init(&st->act);
	st->memo.home = -1;
	st->no_effect_node = -1;
}

/* Room for @n entries in the spare array and the pointer array, with a
 * quarter more, so that a machine whose task count creeps up does not
 * reallocate at every tick. The spare's content is stale copies, owned by
 * nobody: it is never copied, only overwritten. */
static int reserve(struct np_state_table *t, unsigned n)
{
	unsigned want = n + n / 4;

	if (n > t->spare_cap) {
		struct np_task_state *v = malloc(want * sizeof(*v));

		if (!v)
			return -ENOMEM;
		free(t->spare);
		t->spare = v;
		t->spare_cap = want;
	}
	if (n > t->sched_cap) {
		struct np_sched_task **p = realloc(t->sched, want * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->sched = p;
		t->sched_cap = want;
	}
	return 0;
}

int np_state_table_sync(struct np_state_table *t, const struct np_task_list *list,
			const struct np_sched *sched)
{
	unsigned n = list->nr, old = 0, kept = 0;
	struct np_task_state *next, *prev;
	unsigned prev_cap;
	int err;

	for (unsigned i = 1; i < n; i++)
		if (compare_tasks(&list->tasks[i - 1], &list->tasks[i]) >= 0)
			return -EINVAL;
	/* Two arrays, swapped at each sync: at 10,000 tasks they are 2.4 MiB
	 * each, which fresh allocations would fault in at every tick. */
	err = reserve(t, n ? n : 1);
	if (err)
		return err;
	next = t->spare;
	for (unsigned i = 0; i < n; i++) {
		const struct np_task *task = &list->tasks[i];
		int c = 1;

		/* Both sorted: a merge. States passed over have left. */
		while (old < t->nr && (c = np_task_id_compare(t->v[old].pid, t->v[old].start_ticks,
							      task->pid, task->start_ticks)) < 0)
			state_release(&t->v[old++]);
		if (old < t->nr && c == 0) {
			next[i] = t->v[old++];
			kept++;
		} else {
			state_init(&next[i], task, sched);
			t->seen++;
		}
		t->sched[i] = &next[i].sched;
	}
	while (old < t->nr)
		state_release(&t->v[old++]);
	t->forgotten += t->nr - kept;
	prev = t->v;
	prev_cap = t->v_cap;
	t->v = next;
	t->v_cap = t->spare_cap;
	t->spare = prev;
	t->spare_cap = prev_cap;
	t->nr = n;
	return 0;
}

void np_state_table_clear(struct np_state_table *t)
{
	for (unsigned i = 0; i < t->nr; i++)
		state_release(&t->v[i]);
	free(t->v);
	free(t->spare);
	free(t->sched);
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
