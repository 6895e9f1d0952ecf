/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine-wide planner (see planner.h).
 *
 * Ideas borrowed, not code, from the kernel's NUMA balancing
 * (kernel/sched/fair.c): a task's preferred node is where its memory is used
 * (task_numa_placement); a move is refused when it would leave the
 * destination busier than its CPUs can take, with a small allowance
 * (load_too_imbalanced); and when the destination is full, swapping with a
 * task there is weighed (task_numa_compare). Unlike the kernel, which
 * decides for one task at a time as it faults, the planner sees every task
 * it places at once, so the same CPU is never promised twice.
 */
#include "planner.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Tasks on an overloaded node tried for a swap: each tries every task on
 * every other node, so the count is kept small. */
#define SWAP_TRIES 4

struct plan {
	const struct np_planner_node *nodes;
	unsigned nr_nodes;
	const unsigned *distance;
	const struct np_planner_task *tasks;
	size_t nr;
	struct np_planner_result *res;
	double *load;	/* per node */
	uint64_t *room; /* per node: memory it may still take */
};

/* A task on an overloaded node, ranked for leaving it. */
struct leaver {
	double score; /* bytes to move per CPU freed: lower leaves first */
	uint64_t total;
	size_t task;
	bool acted_on;
};

const char *np_plan_reason_name(enum np_plan_reason reason)
{
	switch (reason) {
	case NP_PLAN_NOT_PLACED:
		return "not_placed";
	case NP_PLAN_MEMORY:
		return "memory";
	case NP_PLAN_KEPT:
		return "kept";
	case NP_PLAN_HELD:
		return "held";
	case NP_PLAN_CAPACITY:
		return "capacity";
	case NP_PLAN_SWAP:
		return "swap";
	case NP_PLAN_SPREAD:
		return "spread";
	case NP_PLAN_NO_ROOM:
		return "no_room";
	case NP_PLAN_GROUP:
		return "group";
	}
	return "unknown";
}

double np_planner_slack(unsigned cpus)
{
	return 0.25 + 0.05 * cpus;
}

static double cap(const struct plan *p, unsigned n)
{
	return p->nodes[n].cpus + np_planner_slack(p->nodes[n].cpus);
}

static bool overloaded(const struct plan *p, unsigned n)
{
	return p->load[n] > cap(p, n);
}

static bool may_home(const struct plan *p, const struct np_planner_task *t, unsigned n)
{
	return p->nodes[n].cpus > 0 && p->nodes[n].mem_node >= 0 && (!t->allowed || t->allowed[n]);
}

/* Bytes of @t that homing it on @n would move. */
static uint64_t to_move(const struct plan *p, const struct np_planner_task *t, unsigned n)
{
	return t->total > t->bytes[n] ? t->total - t->bytes[n] : 0;
}

/* What homing @t on @n costs, in bytes: what must move, with what would
 * not fit counted twice (it stays remote). */
static double home_cost(const struct plan *p, const struct np_planner_task *t, unsigned n)
{
	uint64_t need = to_move(p, t, n), room = p->room[p->nodes[n].mem_node];
	uint64_t unfit = need > room ? need - room : 0;

	return (double)need + 2.0 * (double)unfit;
}

static double busy_ratio(const struct plan *p, unsigned n)
{
	return p->nodes[n].cpus ? p->load[n] / p->nodes[n].cpus : 1e9;
}

static void assign(struct plan *p, size_t i, unsigned n, enum np_plan_reason reason)
{
	const struct np_planner_task *t = &p->tasks[i];
	struct np_planner_result *r = &p->res[i];
	unsigned m = (unsigned)p->nodes[n].mem_node;
	uint64_t need = to_move(p, t, n);

	r->home = (int)n;
	r->reason = reason;
	r->move_bytes = need < p->room[m] ? need : p->room[m];
	r->partial = r->move_bytes < need;
	p->room[m] -= r->move_bytes;
	p->load[n] += t->demand;
}

static void unassign(struct plan *p, size_t i)
{
	struct np_planner_result *r = &p->res[i];
	unsigned n = (unsigned)r->home;

	p->room[p->nodes[n].mem_node] += r->move_bytes;
	p->load[n] -= p->tasks[i].demand;
	r->home = -1;
	r->move_bytes = 0;
	r->partial = false;
}

/* Count a task with no home where its threads run: by its run shares, or
 * else on the node holding most of its memory that has CPUs. */
static void count_where_it_runs(struct plan *p, const struct np_planner_task *t)
{
	int best = -1;

	if (t->runs) {
		double sum = 0;

		for (unsigned n = 0; n < p->nr_nodes; n++)
			sum += t->runs[n];
		if (sum > 0) {
			for (unsigned n = 0; n < p->nr_nodes; n++)
				p->load[n] += t->demand * t->runs[n] / sum;
			return;
		}
	}
	for (unsigned n = 0; n < p->nr_nodes; n++)
		if (p->nodes[n].cpus && (best < 0 || t->bytes[n] > t->bytes[best]))
			best = (int)n;
	if (best >= 0)
		p->load[best] += t->demand;
}

/* Where most of its memory is, among the nodes it may be homed on; ties go
 * to where its threads run, then to the less busy node. */
static int natural_home(const struct plan *p, const struct np_planner_task *t)
{
	int best = -1;

	for (unsigned n = 0; n < p->nr_nodes; n++) {
		uint64_t here, there;
		double rh, rt;

		if (!may_home(p, t, n))
			continue;
		if (best < 0) {
			best = (int)n;
			continue;
		}
		here = t->bytes[n];
		there = t->bytes[best];
		if (here != there) {
			if (here > there)
				best = (int)n;
			continue;
		}
		rh = t->runs ? t->runs[n] : 0;
		rt = t->runs ? t->runs[best] : 0;
		if (rh != rt) {
			if (rh > rt)
				best = (int)n;
			continue;
		}
		if (busy_ratio(p, n) < busy_ratio(p, (unsigned)best))
			best = (int)n;
	}
	return best;
}

static unsigned max_home_cpus(const struct plan *p, const struct np_planner_task *t)
{
	unsigned most = 0;

	for (unsigned n = 0; n < p->nr_nodes; n++)
		if (may_home(p, t, n) && p->nodes[n].cpus > most)
			most = p->nodes[n].cpus;
	return most;
}

static unsigned distance(const struct plan *p, unsigned from, unsigned to)
{
	return p->distance ? p->distance[from * p->nr_nodes + to] : (from == to ? 10 : 20);
}

/* The cheapest node other than @from with CPU room for @t; -1: none.
 * Between equal costs the nearer node wins (what it cannot take stays
 * behind, nearer), then the less busy one. */
static int best_destination(const struct plan *p, const struct np_planner_task *t, unsigned from)
{
	int best = -1;
	double best_cost = 0;

	for (unsigned n = 0; n < p->nr_nodes; n++) {
		double c;

		if (n == from || !may_home(p, t, n) || p->load[n] + t->demand > cap(p, n))
			continue;
		c = home_cost(p, t, n);
		if (best < 0 || c < best_cost) {
			best = (int)n;
			best_cost = c;
		} else if (c == best_cost) {
			unsigned d = distance(p, from, n), bd = distance(p, from, (unsigned)best);

			if (d < bd || (d == bd && busy_ratio(p, n) < busy_ratio(p, (unsigned)best)))
				best = (int)n;
		}
	}
	return best;
}

static int compare_leavers(const void *a, const void *b)
{
	const struct leaver *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	if (x->acted_on != y->acted_on)
		return x->acted_on ? -1 : 1;
	if (x->total != y->total)
		return x->total < y->total ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* The tasks homed on @n that may leave it, in a heap: cheapest to move on
 * top (compare_leavers, a total order). */
static size_t leavers_of(const struct plan *p, unsigned n, struct leaver *out)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nr; i++) {
		const struct np_planner_task *t = &p->tasks[i];
		int d;

		if (p->res[i].home != (int)n || p->res[i].reason == NP_PLAN_HELD)
			continue;
		d = best_destination(p, t, n);
		out[k].score =
		    d < 0 ? 1e300
			  : home_cost(p, t, (unsigned)d) / (t->demand > 0.01 ? t->demand : 0.01);
		out[k].total = t->total;
		out[k].task = i;
		out[k].acted_on = t->acted_on;
		k++;
	}
	return k;
}

static void sift_down(struct leaver *heap, size_t k, size_t at)
{
	for (;;) {
		size_t least = at, l = 2 * at + 1, r = l + 1;
		struct leaver tmp;

		if (l < k && compare_leavers(&heap[l], &heap[least]) < 0)
			least = l;
		if (r < k && compare_leavers(&heap[r], &heap[least]) < 0)
			least = r;
		if (least == at)
			return;
		tmp = heap[at];
		heap[at] = heap[least];
		heap[least] = tmp;
		at = least;
	}
}

/*
 * The leavers of one node in order, sorted only as far as they are read:
 * relieving a node takes the cheapest few, and sorting all of them made
 * the plan grow as tasks x log(tasks) (with 40,000 tasks on 8 nodes the
 * sort was two fifths of the plan's time). A heap is built in one pass
 * and each leaver read costs a pop.
 */
struct leaver_order {
	struct leaver *heap; /* not yet read, a heap of @left */
	struct leaver *read; /* read, in order: @nr_read of them */
	size_t left, nr_read;
};

static void order_start(struct leaver_order *o, struct leaver *heap, size_t k, struct leaver *read)
{
	*o = (struct leaver_order){.heap = heap, .read = read, .left = k};
	for (size_t at = k / 2; at-- > 0;)
		sift_down(heap, k, at);
}

/* The @j-th cheapest leaver (from 0); NULL past the last. */
static const struct leaver *order_at(struct leaver_order *o, size_t j)
{
	while (o->nr_read <= j && o->left) {
		o->read[o->nr_read++] = o->heap[0];
		o->heap[0] = o->heap[--o->left];
		sift_down(o->heap, o->left, 0);
	}
	return j < o->nr_read ? &o->read[j] : NULL;
}

/* Trade @i (on @n) for a task of smaller demand on another node, when
 * that leaves both within their CPUs. Returns true when it did. */
static bool try_swap(struct plan *p, size_t i, unsigned n)
{
	const struct np_planner_task *t = &p->tasks[i];
	size_t best_u = 0;
	double best_cost = -1;

	for (size_t u = 0; u < p->nr; u++) {
		const struct np_planner_task *o = &p->tasks[u];
		int d = p->res[u].home;
		double after_d, after_n, c;

		if (u == i || d < 0 || d == (int)n || p->res[u].reason == NP_PLAN_HELD ||
		    o->demand >= t->demand || !may_home(p, t, (unsigned)d) || !may_home(p, o, n))
			continue;
		after_d = p->load[d] - o->demand + t->demand;
		after_n = p->load[n] - t->demand + o->demand;
		if (after_d > cap(p, (unsigned)d) || after_n >= p->load[n])
			continue;
		c = home_cost(p, t, (unsigned)d) + home_cost(p, o, n);
		if (best_cost < 0 || c < best_cost) {
			best_cost = c;
			best_u = u;
		}
	}
	if (best_cost < 0)
		return false;
	{
		unsigned d = (unsigned)p->res[best_u].home;

		unassign(p, i);
		unassign(p, best_u);
		assign(p, i, d, NP_PLAN_SWAP);
		assign(p, best_u, n, NP_PLAN_SWAP);
	}
	return true;
}

/* Bring @n within its CPUs: the cheapest tasks leave for nodes with room,
 * then swaps; what is still too much loses its home, new homes first.
 * @scratch has room for twice the tasks. */
static void relieve(struct plan *p, unsigned n, struct leaver *scratch)
{
	struct leaver_order o;
	const struct leaver *l;

	order_start(&o, scratch, leavers_of(p, n, scratch), scratch + p->nr);
	for (size_t j = 0; overloaded(p, n) && (l = order_at(&o, j)); j++) {
		int d = best_destination(p, &p->tasks[l->task], n);

		if (d < 0)
			continue;
		unassign(p, l->task);
		assign(p, l->task, (unsigned)d, NP_PLAN_CAPACITY);
	}
	for (size_t j = 0, tries = 0;
	     tries < SWAP_TRIES && overloaded(p, n) && (l = order_at(&o, j)); j++) {
		if (p->res[l->task].home != (int)n)
			continue;
		tries++;
		try_swap(p, l->task, n);
	}
	/* Their demand does not go away: it is counted where they run, once
	 * the node is relieved of their homes. */
	for (int pass = 0; pass < 2 && overloaded(p, n); pass++) {
		for (size_t j = 0; overloaded(p, n) && (l = order_at(&o, j)); j++) {
			if (p->res[l->task].home != (int)n ||
			    (pass == 0 && p->res[l->task].reason != NP_PLAN_MEMORY))
				continue;
			unassign(p, l->task);
			p->res[l->task].reason = NP_PLAN_NO_ROOM;
		}
	}
	/* Only a leaver read can have lost its home. */
	for (size_t j = 0; j < o.nr_read; j++)
		if (p->res[o.read[j].task].reason == NP_PLAN_NO_ROOM)
			count_where_it_runs(p, &p->tasks[o.read[j].task]);
}

int np_planner_run(const struct np_planner_node *nodes, unsigned nr_nodes, const unsigned *distance,
		   const struct np_planner_task *tasks, size_t nr,
		   struct np_planner_result *results, struct np_planner_load *load)
{
	struct plan p = {.nodes = nodes,
			 .nr_nodes = nr_nodes,
			 .distance = distance,
			 .tasks = tasks,
			 .nr = nr,
			 .res = results};
	struct leaver *scratch;

	p.load = calloc(nr_nodes + 1, sizeof(*p.load));
	p.room = calloc(nr_nodes + 1, sizeof(*p.room));
	scratch = calloc(2 * nr + 1, sizeof(*scratch));
	if (!p.load || !p.room || !scratch) {
		free(p.load);
		free(p.room);
		free(scratch);
		return -ENOMEM;
	}
	for (unsigned n = 0; n < nr_nodes; n++) {
		p.load[n] = nodes[n].background;
		p.room[n] = nodes[n].mem_room;
	}
	/* Held homes first: they are not up for discussion, unless the task
	 * outgrew every node (then no hold keeps it squeezed). */
	for (size_t i = 0; i < nr; i++) {
		const struct np_planner_task *t = &tasks[i];
		unsigned most = max_home_cpus(&p, t);

		results[i] = (struct np_planner_result){.home = -1, .reason = NP_PLAN_NOT_PLACED};
		if (t->placeable && t->held && t->home >= 0 && (unsigned)t->home < nr_nodes &&
		    may_home(&p, t, (unsigned)t->home) &&
		    t->demand <= most + np_planner_slack(most))
			assign(&p, i, (unsigned)t->home, NP_PLAN_HELD);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct np_planner_task *t = &tasks[i];
		unsigned most;
		int home;

		if (results[i].reason == NP_PLAN_HELD)
			continue;
		if (!t->placeable) {
			count_where_it_runs(&p, t);
			continue;
		}
		most = max_home_cpus(&p, t);
		if (!most || t->demand > most + np_planner_slack(most)) {
			results[i].reason = most ? NP_PLAN_SPREAD : NP_PLAN_NOT_PLACED;
			count_where_it_runs(&p, t);
			continue;
		}
		if (t->home >= 0 && (unsigned)t->home < nr_nodes &&
		    may_home(&p, t, (unsigned)t->home)) {
			assign(&p, i, (unsigned)t->home, NP_PLAN_KEPT);
			continue;
		}
		home = natural_home(&p, t);
		assign(&p, i, (unsigned)home, NP_PLAN_MEMORY);
	}
	for (unsigned n = 0; n < nr_nodes; n++)
		if (overloaded(&p, n))
			relieve(&p, n, scratch);
	if (load)
		for (unsigned n = 0; n < nr_nodes; n++)
			load[n] =
			    (struct np_planner_load){.demand = p.load[n], .cpus = nodes[n].cpus};
	free(p.load);
	free(p.room);
	free(scratch);
	return 0;
}
