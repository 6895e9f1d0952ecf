/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placement policy.
 *
 * A task is a set of threads and a set of pages. Its cost is the average
 * distance from where its threads run to where its pages are: the SLIT
 * distance already is relative memory latency (10 = local), so dividing by
 * 10 gives "times local latency". When too little of a task's memory is
 * local (locality_target_percent), the policy looks for a placement, a node
 * for the threads and a node for the pages, that lowers this cost for good,
 * and among those takes the one cheapest to reach.
 *
 * Ideas borrowed, not code:
 * - From the kernel's NUMA balancing (kernel/sched/fair.c): the preferred
 *   node is where the task's memory accesses would be local
 *   (task_numa_placement), a task is only moved to a node whose load can
 *   take it (task_numa_find_cpu and load_too_imbalanced), and a move must
 *   improve things by more than noise before it is taken (the hysteresis in
 *   task_numa_compare).
 * - From numad (pick_numa_nodes): memory already on a node is a bias in
 *   that node's favour, a task too large for one node gets the smallest set
 *   of nodes that holds it, grown outward by distance from its best node,
 *   and a task already placed well enough (target locality) is left alone.
 * Unlike numad we never bind memory with cpusets: pages are moved and the
 * kernel's own allocation policy is left alone, and unlike the kernel we
 * see pages, not faults, so "where the threads ran" stands in for "where the
 * accesses come from".
 */
#include "policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (UINT64_C(1) << 20)

/*
 * Weights of the cost terms, all in units of "one times local latency".
 *
 * MOVE_WEIGHT: migrating all of a task's pages is charged like half a local
 * latency. It ranks the places its memory could go.
 *
 * MARGIN: leaving the current preferred node needs a gain of at least this
 * much, a tenth of local latency: small differences are noise in samples.
 */
#define MOVE_WEIGHT 0.5
#define MARGIN 0.1

/* A task whose threads sit beside their memory on several nodes is left
 * out of the plan only when that is clearly better than any one home: a
 * helper thread that ran a few ticks elsewhere must not tip it (seen with
 * a one-thread task whose main thread had 6 ticks on another node). */
#define SPLIT_MARGIN 0.1
#define EPSILON 1e-9

/* A streak of looks needed to change the target grows with past flips, up to
 * this many times hysteresis_periods. */
#define MAX_FLIP_BACKOFF 4

#define LOOKS_SATURATED (1u << 30)

/* The machine as this decision sees it: the sample plus what earlier tasks
 * of the same batch were planned to use. */
struct view {
	const struct np_policy_machine *m;
	const struct np_topology *topo;
	const uint64_t *planned_bytes; /* per index, or NULL */
};

/*
 * Which of a task's memory its threads find local. Each node's share of the
 * thread time is matched against the pages on that node's home node: a task
 * with half its thread time on each of two nodes and half its pages beside
 * each half is all local, as first touch leaves the data of threads that
 * stay on their nodes. What is left of each side is the remote part: the
 * unmatched thread time reaches the unmatched pages. With all thread time on
 * one node, the local share is that of the pages on its home node.
 */
struct match {
	double local;		   /* share of the pages matched to their threads */
	double local_cost;	   /* their latency, weighted by share */
	double want[NP_MAX_NODES]; /* thread-time share left unmatched, per node */
	double have[NP_MAX_NODES]; /* page share left unmatched, per node */
	double have_offline;	   /* share on nodes that are not online */
};

/* One task seen through the topology, by node index (not id). */
struct sample {
	uint64_t bytes[NP_MAX_NODES]; /* resident bytes per node index */
	double weight[NP_MAX_NODES];  /* thread time per node index */
	uint64_t total;		      /* over all node ids, online or not */
	uint64_t offline_bytes;	      /* on node ids that are not online */
	double total_weight;
	bool mem_ok[NP_MAX_NODES]; /* may hold its pages: has memory, in Mems_allowed */
	bool cpu_ok[NP_MAX_NODES]; /* may run its threads: has allowed CPUs */
	unsigned nr_mem_ok, nr_cpu_ok;
	int thread_idx;	 /* node index where most thread time is */
	int home_idx;	 /* memory node for thread_idx */
	struct match mt; /* its movable memory matched to its threads (match_local) */
	/* All of its memory, movable or not, for the locality people see. */
	uint64_t all_bytes[NP_MAX_NODES];
	uint64_t all_total, all_offline;
	double all_local;
	bool threads_split;	       /* its thread time is on more than one node */
	int biggest_idx;	       /* node index holding the most bytes */
	bool pinned;		       /* its allowed CPUs are all on one node */
	bool placeable;		       /* the plan may give it a home: nobody pinned it */
	bool launcher;		       /* its children used CPU: they would inherit a home */
	/* Nobody pinned it, yet it gets no home: NP_REASON_IDLE (it hardly
	 * runs) or NP_REASON_LAUNCHER (it, or pid 1, starts processes);
	 * NP_REASON_COUNT: not so. */
	enum np_reason no_home;
	struct np_bitmap allowed_cpus; /* effective: before our own narrowing */
	struct np_bitmap usable_cpus;  /* of those, the ones its cgroup's cpuset has */
	double demand;		       /* CPUs it keeps busy */
};

struct placement {
	int cpu_idx;
	int mem_idx;
	uint64_t move_bytes;
	bool fits;
	double steady; /* latency and load once there */
	double cost;   /* steady plus the one-off cost of getting there */
};

const char *np_action_kind_name(enum np_action_kind kind)
{
	switch (kind) {
	case NP_ACTION_KEEP:
		return "keep";
	case NP_ACTION_MOVE:
		return "move";
	case NP_ACTION_SPREAD:
		return "spread";
	case NP_ACTION_SKIP:
		return "skip";
	}
	return "unknown";
}

void np_policy_history_init(struct np_policy_history *hist)
{
	memset(hist, 0, sizeof(*hist));
	hist->target_node = -1;
	hist->proposed_node = -1;
	hist->looks_since_dispute = LOOKS_SATURATED;
	hist->looks_since_change = LOOKS_SATURATED;
	hist->home_node = -1;
}

void np_plan_memo_clear(struct np_plan_memo *memo)
{
	free(memo->bytes);
	free(memo->runs);
	free(memo->allowed);
	free(memo->share_keys);
	memset(memo, 0, sizeof(*memo));
	memo->home = -1;
}

/* ---- text ---- */

static void say(struct np_action *a, enum np_action_kind kind, enum np_reason reason,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void say(struct np_action *a, enum np_action_kind kind, enum np_reason reason,
		const char *fmt, ...)
{
	va_list args;

	a->kind = kind;
	a->reason = reason;
	va_start(args, fmt);
	vsnprintf(a->reason_text, sizeof(a->reason_text), fmt, args);
	va_end(args);
}

struct list_text {
	char s[64];
};

static struct list_text list_text(const struct np_nodeset *set)
{
	struct list_text t;

	if (np_nodeset_format_list(set, t.s, sizeof(t.s)) >= sizeof(t.s))
		strcpy(t.s + sizeof(t.s) - 4, "...");
	return t;
}

/* Rounded down: 89.9% local is not 90% local. */
static unsigned percent(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)((double)part * 100.0 / (double)whole) : 0;
}

static void action_init(struct np_action *a, const struct np_task *task)
{
	memset(a, 0, sizeof(*a));
	a->pid = task->pid;
	a->start_ticks = task->start_ticks;
	a->target_node = a->thread_node = a->home_node = a->plan_home = -1;
	a->kind = NP_ACTION_SKIP;
	a->total_bytes = task->rss_bytes;
}

/* ---- the machine ---- */

static double dist(const struct np_topology *topo, int from_idx, int to_idx)
{
	return topo->distance[(unsigned)from_idx * topo->nr_nodes + (unsigned)to_idx] / 10.0;
}

static double max_dist(const struct np_topology *topo)
{
	unsigned d = 10;

	for (unsigned i = 0; i < topo->nr_nodes * topo->nr_nodes; i++)
		if (topo->distance[i] > d)
			d = topo->distance[i];
	return d / 10.0;
}

static uint64_t view_free(const struct view *v, int idx)
{
	uint64_t free_bytes = v->m->node_free ? v->m->node_free[idx] : v->topo->nodes[idx].mem_free;
	uint64_t planned = v->planned_bytes ? v->planned_bytes[idx] : 0;

	return free_bytes > planned ? free_bytes - planned : 0;
}

uint64_t np_policy_headroom(const struct np_node *node, const struct np_config *cfg)
{
	return node->mem_total / 100 * cfg->node_mem_headroom_percent;
}

static uint64_t headroom(const struct view *v, const struct np_config *cfg, int idx)
{
	return np_policy_headroom(&v->topo->nodes[idx], cfg);
}

/* What a node can hold of this task: what it holds plus what it can take. */
static uint64_t capacity(const struct view *v, const struct np_config *cfg, const struct sample *s,
			 int idx)
{
	uint64_t free_bytes = view_free(v, idx), keep = headroom(v, cfg, idx);

	return s->bytes[idx] + (free_bytes > keep ? free_bytes - keep : 0);
}

/* The memory node threads on @cpu_idx should use: their own node when it may
 * hold the pages, else the nearest one that may (distances are asymmetric:
 * measured from the CPU). Ties go to the node with more free memory. */
static int home_node(const struct view *v, const struct sample *s, int cpu_idx)
{
	int best = -1;

	if (cpu_idx >= 0 && s->mem_ok[cpu_idx])
		return cpu_idx;
	for (int i = 0; i < (int)v->topo->nr_nodes; i++) {
		if (!s->mem_ok[i])
			continue;
		if (best < 0) {
			best = i;
		} else if (cpu_idx < 0) {
			/* No CPU known: the node holding most of it. */
			if (s->bytes[i] > s->bytes[best])
				best = i;
		} else {
			double d = dist(v->topo, cpu_idx, i), bd = dist(v->topo, cpu_idx, best);

			if (d < bd || (d == bd && view_free(v, i) > view_free(v, best)))
				best = i;
		}
	}
	return best;
}

/* Match @bytes (by node index; @total of them, @offline on nodes not
 * online) to the task's thread time. */
static void match_local(const struct view *v, const struct sample *s, const uint64_t *bytes,
			uint64_t total, uint64_t offline, struct match *mt)
{
	const struct np_topology *topo = v->topo;

	memset(mt, 0, sizeof(*mt));
	if (!total)
		return;
	for (int j = 0; j < (int)topo->nr_nodes; j++)
		mt->have[j] = (double)bytes[j] / (double)total;
	mt->have_offline = (double)offline / (double)total;
	if (s->total_weight == 0) {
		/* No thread seen: what is on its home node counts as local. */
		if (s->home_idx >= 0)
			mt->local = mt->have[s->home_idx];
		return;
	}
	for (int i = 0; i < (int)topo->nr_nodes; i++) {
		int home = s->weight[i] > 0 ? home_node(v, s, i) : -1;
		double w = s->weight[i] / s->total_weight, m;

		if (home < 0) {
			mt->want[i] = w;
			continue;
		}
		m = w < mt->have[home] ? w : mt->have[home];
		mt->have[home] -= m;
		mt->want[i] = w - m;
		mt->local += m;
		mt->local_cost += m * dist(topo, i, home);
	}
}

/* Threads that did a fair share of the task's work: at least half of an
 * equal share of its CPU time. A thread that only waits counts for none. */
static unsigned busy_threads(const struct np_task *task)
{
	uint64_t total = 0;
	unsigned n = task->nr_thread_samples, busy = 0;

	for (unsigned i = 0; i < n; i++)
		total += task->threads[i].cpu_ticks;
	if (!total)
		return task->nr_threads ? task->nr_threads : 1;
	for (unsigned i = 0; i < n; i++)
		busy += task->threads[i].cpu_ticks * 2 * n >= total;
	return busy ? busy : 1;
}

/* Whether every node @task's threads last ran on had its CPUs busy: a
 * thread there may have waited for a CPU rather than had nothing to do. */
static bool runs_where_saturated(const struct view *v, const struct np_task *task)
{
	if (!v->m->node_busy || !task->nr_thread_samples)
		return false;
	for (unsigned i = 0; i < task->nr_thread_samples; i++) {
		int idx = np_topology_index(v->topo,
					    np_topology_cpu_node(v->topo, task->threads[i].last_cpu));

		if (idx < 0 || v->m->node_busy[idx] < 0.9)
			return false;
	}
	return true;
}

/* The CPUs a task keeps busy: its use since the last look (and its
 * threads' wait for a CPU, when the caller gives it), at most one per
 * thread. A task that had fewer CPUs than it has busy threads (our own
 * mask, or a node's worth while something else pinned it) cannot show more
 * than it got of them: when it used them all, or when every node its
 * threads last ran on was at least 90% busy (with another task squeezed
 * beside it, each shows a share), it counts a CPU per busy thread, so that
 * a task that outgrew its home, or would outgrow one, is seen to. A task
 * with no more busy threads than that is judged by its use: a busy node
 * alone is no evidence that its threads waited (a light task beside a hog
 * would count a whole CPU a thread). @node_cpus: the most CPUs a node it
 * may use has. */
static double task_demand(const struct view *v, const struct np_policy_task *t,
			  const struct np_policy_history *h, const struct np_bitmap *allowed,
			  unsigned node_cpus)
{
	const struct np_task *task = t->task;
	unsigned threads = task->nr_threads ? task->nr_threads : 1;
	unsigned busy = busy_threads(task), could = np_bitmap_weight(allowed);
	unsigned cpus = h->narrowed ? np_bitmap_weight(&h->narrowed_cpus) : node_cpus;
	double d = (t->cpu_percent + t->wait_percent) / 100.0;

	if (d > threads)
		d = threads;
	if (t->wait_percent > 0 && could && d > could)
		d = could;
	if (cpus && busy > cpus && (d >= 0.9 * cpus || runs_where_saturated(v, task)))
		d = busy < could ? busy : could;
	return d;
}

/*
 * Whether a home may narrow the task's threads now. Every process it starts
 * later inherits the narrowed mask (fork(2) copies it), so narrowing a task
 * that hardly runs gains nothing for it and confines what it launches: an
 * idle shell or supervisor homed to a node of one CPU runs its whole
 * pipeline there. Such a task gets no home, and its memory stays where it
 * is (reason idle), until it uses NP_HOME_MIN_CPU_PERCENT of a CPU between
 * two looks; a home it has already holds (once a minute at most, like any
 * home). Neither is a task whose children, waited for, used that much
 * between two reads (a launcher: a build, a shell loop, a server that
 * forks a worker per request and waits for it): children that run and end
 * between two ticks would all run on its home's CPUs, a load no plan
 * counted, and a home it has is given back. That holds for
 * NP_POLICY_HOME_HOLD_MS after the last read that saw it launch: one that
 * starts a process now and then is not homed and given back in turn. pid 1
 * is never narrowed: it starts every service of the machine.
 */
static enum np_reason may_narrow(const struct np_policy_task *t, const struct np_policy_history *h,
				 const struct sample *s)
{
	if (t->task->pid == 1 || s->launcher)
		return NP_REASON_LAUNCHER;
	if (h->narrowed || t->cpu_percent >= NP_HOME_MIN_CPU_PERCENT)
		return NP_REASON_COUNT;
	return NP_REASON_IDLE;
}

/* Build the per-index view of one task: s->bytes and s->total are what the
 * daemon may move (possibly none), s->all_* all of it. Returns false when it
 * has no bytes at all. */
static bool sample_task(const struct view *v, const struct np_config *cfg,
			const struct np_policy_task *t, struct np_policy_history *h,
			struct sample *s)
{
	const struct np_topology *topo = v->topo;
	const struct np_task *task = t->task;
	const struct np_bitmap *runs_on;
	struct np_bitmap online;
	unsigned most_node_cpus = 0;
	bool ticks = false, runs_ok[NP_MAX_NODES];
	struct match *all;
	int pinned_idx = -1;

	memset(s, 0, sizeof(*s));
	for (unsigned id = 0; id < t->nr_node_slots; id++) {
		int idx = np_topology_index(topo, (int)id);
		uint64_t bytes_all = t->all_node_bytes ? t->all_node_bytes[id] : t->node_bytes[id];

		s->total += t->node_bytes[id];
		s->all_total += bytes_all;
		if (idx < 0) {
			s->offline_bytes += t->node_bytes[id];
			s->all_offline += bytes_all;
		} else {
			s->bytes[idx] = t->node_bytes[id];
			s->all_bytes[idx] = bytes_all;
		}
	}
	if (s->all_total == 0)
		return false;

	/* Our own narrowing is not the user's pinning: behind a mask we set,
	 * the mask the task had before still rules. A mask someone else set
	 * since replaces ours. */
	s->allowed_cpus = task->cpus_allowed;
	if (np_bitmap_empty(&s->allowed_cpus)) /* no Cpus_allowed line: no limit */
		memset(&s->allowed_cpus, 0xff, sizeof(s->allowed_cpus));
	if (h->narrowed) {
		if (np_bitmap_equal(&task->cpus_allowed, &h->narrowed_cpus)) {
			s->allowed_cpus = h->cpus_before;
		} else {
			/* Its user chose its CPUs since: what we did and meant
			 * for it is forgotten. */
			unsigned looks = h->looks;

			np_policy_history_init(h);
			h->looks = looks;
		}
	}

	/* The cgroup's cpuset is a hard bound: a mask we set stays inside it,
	 * whatever the mask before ours said. */
	s->usable_cpus = s->allowed_cpus;
	if (!np_bitmap_empty(&task->cpuset_cpus))
		np_bitmap_and(&s->usable_cpus, &s->usable_cpus, &task->cpuset_cpus);

	/* Where its threads can run now: its actual mask, ours included. */
	runs_on = np_bitmap_empty(&task->cpus_allowed) ? &s->allowed_cpus : &task->cpus_allowed;

	s->biggest_idx = 0;
	np_bitmap_zero(&online);
	for (int i = 0; i < (int)topo->nr_nodes; i++) {
		const struct np_node *node = &topo->nodes[i];
		struct np_bitmap cpus;

		np_bitmap_or(&online, &online, &node->cpus);
		if (s->bytes[i] > s->bytes[s->biggest_idx])
			s->biggest_idx = i;
		s->mem_ok[i] = node->mem_total > 0 && np_task_may_use_node(task, node->id);
		np_bitmap_and(&cpus, &node->cpus, runs_on);
		runs_ok[i] = !np_bitmap_empty(&cpus);
		np_bitmap_and(&cpus, &node->cpus, &s->usable_cpus);
		s->cpu_ok[i] = !np_bitmap_empty(&cpus);
		if (np_bitmap_weight(&cpus) > most_node_cpus)
			most_node_cpus = np_bitmap_weight(&cpus);
		s->nr_mem_ok += s->mem_ok[i];
		if (s->cpu_ok[i]) {
			s->nr_cpu_ok++;
			pinned_idx = i;
		}
	}
	s->pinned = s->nr_cpu_ok == 1;
	/* Nobody pinned it when the mask it had before ours allows every CPU
	 * its cpuset does (every online one without a cpuset) and no thread
	 * has a mask of its own: then where it runs within the cpuset is the
	 * daemon's to choose. Threads pinned one by one (a worker per CPU)
	 * were placed by their user; a home could move only the others. */
	if (!np_bitmap_empty(&task->cpuset_cpus))
		np_bitmap_and(&online, &online, &task->cpuset_cpus);
	s->launcher = t->launched && v->m->now_ms - t->launched_ms < NP_POLICY_HOME_HOLD_MS;
	s->no_home = NP_REASON_COUNT;
	s->placeable = cfg->affinity == NP_AFFINITY_UNPINNED && s->nr_cpu_ok > 1 &&
		       !(task->flags & NP_PF_NO_SETAFFINITY) && !task->thread_masks_differ &&
		       np_bitmap_subset(&online, &s->allowed_cpus);
	if (s->placeable) {
		s->no_home = may_narrow(t, h, s);
		s->placeable = s->no_home == NP_REASON_COUNT;
	}
	s->demand = task_demand(v, t, h, &s->allowed_cpus, most_node_cpus);

	/* Where the threads run: each thread's last CPU, weighted by the CPU
	 * time it has used, so a busy worker counts for more than an idle
	 * helper; a task whose threads have not run yet counts them equally. */
	for (unsigned i = 0; i < task->nr_thread_samples; i++)
		ticks |= task->threads[i].cpu_ticks > 0;
	for (unsigned i = 0; i < task->nr_thread_samples; i++) {
		int idx =
		    np_topology_index(topo, np_topology_cpu_node(topo, task->threads[i].last_cpu));
		double w = ticks ? (double)task->threads[i].cpu_ticks : 1.0;

		/* A CPU it may no longer use (its mask changed) says nothing. */
		if (idx >= 0 && runs_ok[idx]) {
			s->weight[idx] += w;
			s->total_weight += w;
		}
	}
	if (s->total_weight == 0) {
		int idx = np_topology_index(topo, np_topology_cpu_node(topo, task->last_cpu));

		if (idx >= 0 && runs_ok[idx]) {
			s->weight[idx] = 1;
			s->total_weight = 1;
		}
	}
	if (s->pinned) {
		/* Its threads can run nowhere else, whatever a stale last CPU says. */
		memset(s->weight, 0, sizeof(s->weight));
		s->weight[pinned_idx] = 1;
		s->total_weight = 1;
	}
	s->thread_idx = -1;
	for (int i = 0; i < (int)topo->nr_nodes; i++)
		if (s->weight[i] > 0 &&
		    (s->thread_idx < 0 || s->weight[i] > s->weight[s->thread_idx]))
			s->thread_idx = i;
	if (s->thread_idx < 0) {
		/* No CPU known: assume the threads follow the memory. */
		for (int i = 0; i < (int)topo->nr_nodes; i++)
			if (topo->nodes[i].nr_cpus &&
			    (s->thread_idx < 0 || s->bytes[i] > s->bytes[s->thread_idx]))
				s->thread_idx = i;
		if (s->thread_idx >= 0) {
			s->weight[s->thread_idx] = 1;
			s->total_weight = 1;
		}
	}
	s->home_idx = home_node(v, s, s->thread_idx);
	s->threads_split = s->thread_idx >= 0 && s->weight[s->thread_idx] < s->total_weight;
	match_local(v, s, s->bytes, s->total, s->offline_bytes, &s->mt);
	all = malloc(sizeof(*all));
	if (all) {
		match_local(v, s, s->all_bytes, s->all_total, s->all_offline, all);
		s->all_local = all->local;
		free(all);
	} else {
		s->all_local = s->mt.local; /* out of memory: the movable part's */
	}
	return true;
}

/* Rounded down like percent(); the epsilon keeps a sum of shares that is
 * exactly 0.9 from reading as 89. */
static unsigned locality_percent(const struct sample *s)
{
	return (unsigned)(s->mt.local * 100.0 + EPSILON);
}

/* ---- costs ---- */

/* The steady state of the task as it is now: average latency, in times
 * local. The matched part (match_local) is local; the rest of each node's thread time
 * reaches the unmatched pages in proportion. Pages on nodes that are not
 * online are charged the largest distance. */
static double current_cost(const struct view *v, const struct sample *s)
{
	const struct np_topology *topo = v->topo;
	const struct match *mt = &s->mt;
	double cost = mt->local_cost, far = max_dist(topo), rest;

	if (s->total_weight == 0)
		return far;
	rest = mt->have_offline;
	for (int j = 0; j < (int)topo->nr_nodes; j++)
		rest += mt->have[j];
	for (int i = 0; i < (int)topo->nr_nodes; i++) {
		double share = s->weight[i] / s->total_weight, access = mt->have_offline * far;

		if (share == 0)
			continue;
		if (mt->want[i] > EPSILON && rest > EPSILON) {
			for (int j = 0; j < (int)topo->nr_nodes; j++)
				access += mt->have[j] * dist(topo, i, j);
			cost += mt->want[i] * access / rest;
		}
	}
	return cost;
}

/*
 * Cost of a placement: the steady state once there, the threads' average
 * distance to the memory node (they stay where they run), plus the one-off
 * cost of the pages to migrate.
 */
static void score(const struct view *v, const struct np_config *cfg, const struct sample *s,
		  struct placement *p)
{
	const struct np_topology *topo = v->topo;
	double one_off;

	p->move_bytes = s->total - s->bytes[p->mem_idx];
	p->fits = view_free(v, p->mem_idx) >= p->move_bytes &&
		  view_free(v, p->mem_idx) - p->move_bytes >= headroom(v, cfg, p->mem_idx);
	one_off = MOVE_WEIGHT * (double)p->move_bytes / (double)s->total;
	p->steady = 0;
	for (int i = 0; i < (int)topo->nr_nodes; i++)
		if (s->weight[i] > 0)
			p->steady += s->weight[i] / s->total_weight * dist(topo, i, p->mem_idx);
	p->cost = p->steady + one_off;
}

/* The candidates: threads stay, pages may go to any node allowed to hold
 * them. Returns the count. */
static unsigned candidates(const struct view *v, const struct np_config *cfg,
			   const struct sample *s, struct placement *out)
{
	unsigned n = 0;

	for (int i = 0; i < (int)v->topo->nr_nodes; i++) {
		struct placement p = {.cpu_idx = s->thread_idx, .mem_idx = i};

		if (!s->mem_ok[i])
			continue;
		score(v, cfg, s, &p);
		out[n++] = p;
	}
	return n;
}

static bool better(const struct placement *a, const struct placement *b)
{
	if (!b)
		return true;
	if (a->cost != b->cost)
		return a->cost < b->cost;
	return a->move_bytes < b->move_bytes;
}

/* Among placements with the preferred memory node, one that leaves the
 * threads where they run comes first. */
static bool preferable(const struct sample *s, const struct placement *a, const struct placement *b)
{
	bool a_stays, b_stays;

	if (!b)
		return true;
	a_stays = a->cpu_idx == s->thread_idx;
	b_stays = b->cpu_idx == s->thread_idx;
	if (a_stays != b_stays)
		return a_stays;
	return better(a, b);
}

/* ---- hysteresis ---- */

static unsigned saturating_inc(unsigned n)
{
	return n < LOOKS_SATURATED ? n + 1 : n;
}

/* Record one look that found @proposal (a node id, or -1 for none) the best
 * place for the task. A proposal other than the current target is a
 * dispute. */
static void record_look(struct np_policy_history *h, int proposal)
{
	h->looks = saturating_inc(h->looks);
	h->looks_since_change = saturating_inc(h->looks_since_change);
	if (proposal < 0) {
		h->proposed_node = -1;
		h->proposed_streak = 0;
		h->looks_since_dispute = saturating_inc(h->looks_since_dispute);
		return;
	}
	if (proposal == h->proposed_node) {
		h->proposed_streak = saturating_inc(h->proposed_streak);
	} else {
		h->proposed_node = proposal;
		h->proposed_streak = 1;
	}
	if (h->target_node >= 0 && proposal != h->target_node)
		h->looks_since_dispute = 0;
	else
		h->looks_since_dispute = saturating_inc(h->looks_since_dispute);
}

/*
 * May the task act toward node @target now? A first move may when its
 * threads are pinned to one node (@settled): they will be where they are
 * now. Threads free to run anywhere are seen where they last ran, and the
 * scheduler moves them about: moving their memory after one such sight
 * chases them, so a first move needs hysteresis_periods looks in a row
 * that agree on the node. Carrying on
 * toward the current target needs the last hysteresis_periods looks to have
 * agreed with it: inputs that alternate never get past this, so a task whose
 * samples flip every period moves once, not every period. Turning to another
 * node needs the current target to be hysteresis_periods old and the new one
 * to have been the best for that many looks in a row, and that streak
 * doubles, triples... with each past flip, so a task cannot ping-pong.
 */
static bool admit(const struct view *v, const struct np_policy_history *h,
		  const struct np_config *cfg, int target, bool settled, char *why, size_t len)
{
	unsigned periods = cfg->hysteresis_periods, backoff;

	if (periods == 0)
		return true;
	if (h->target_node < 0) {
		/* One look stands for hysteresis_periods of them. */
		if (settled || v->m->one_look || h->proposed_streak >= periods)
			return true;
		snprintf(why, len, "threads not pinned: node %d best for %u of %u looks needed",
			 target, h->proposed_streak, periods);
		return false;
	}
	if (target == h->target_node) {
		if (h->looks_since_dispute >= periods)
			return true;
		snprintf(why, len, "samples disagreed %u look%s ago", h->looks_since_dispute,
			 h->looks_since_dispute == 1 ? "" : "s");
		return false;
	}
	if (h->looks_since_change < periods) {
		snprintf(why, len, "node %d chosen %u look%s ago", h->target_node,
			 h->looks_since_change, h->looks_since_change == 1 ? "" : "s");
		return false;
	}
	backoff = h->flips + 1 < MAX_FLIP_BACKOFF ? h->flips + 1 : MAX_FLIP_BACKOFF;
	if (h->proposed_streak >= periods * backoff)
		return true;
	snprintf(why, len, "node %d best for %u of %u looks needed", target, h->proposed_streak,
		 periods * backoff);
	return false;
}

static void commit_target(struct np_policy_history *h, int target)
{
	if (h->target_node >= 0 && h->target_node != target)
		h->flips++;
	if (h->target_node != target)
		h->looks_since_change = 0;
	h->target_node = target;
	h->looks_since_dispute = LOOKS_SATURATED;
}

/* ---- the decision ---- */

/* The nodes where its threads have run. */
static struct list_text thread_nodes(const struct view *v, const struct sample *s)
{
	struct np_nodeset nodes;

	np_nodeset_zero(&nodes);
	for (int i = 0; i < (int)v->topo->nr_nodes; i++)
		if (s->weight[i] > 0)
			np_nodeset_set(&nodes, (unsigned)v->topo->nodes[i].id);
	return list_text(&nodes);
}

static void describe_place(char *buf, size_t len, const struct view *v, const struct sample *s)
{
	const struct np_topology *topo = v->topo;
	const char *threads;

	if (s->threads_split) {
		/* Pages beside each group of threads count: one node's share
		 * would say little. */
		snprintf(buf, len, "%u%% of %s beside its threads on nodes %s", locality_percent(s),
			 np_size_text(s->total).s, thread_nodes(v, s).s);
		return;
	}
	threads = s->pinned ? "threads pinned to" : "threads on";
	/* "only" when the biggest share is already at home, just not enough. */
	snprintf(buf, len, "%s%u%% of %s on node %d, %s node %d",
		 s->biggest_idx == s->home_idx && s->bytes[s->home_idx] < s->total ? "only " : "",
		 percent(s->bytes[s->biggest_idx], s->total), np_size_text(s->total).s,
		 topo->nodes[s->biggest_idx].id, threads,
		 s->thread_idx >= 0 ? topo->nodes[s->thread_idx].id : -1);
}

/* Cap what one scan migrates; the rest follows in later scans. */
static void cap_move(struct np_action *a, const struct np_config *cfg)
{
	uint64_t cap = cfg->max_migrate_mb_per_scan * MIB;

	a->move_bytes = a->misplaced_bytes;
	if (cap && a->move_bytes > cap) {
		a->move_bytes = cap;
		a->partial = true;
	}
	a->move_pages = a->move_bytes > 0;
}

/* Pages on nodes outside @targets are the ones to move. */
static void set_sources(struct np_action *a, const struct np_policy_task *t)
{
	for (unsigned id = 0; id < t->nr_node_slots; id++)
		if (t->node_bytes[id] && !np_nodeset_test(&a->target_nodes, id))
			np_nodeset_set(&a->source_nodes, id);
}

static void narrow_to(struct np_action *a, const struct sample *s, const struct np_task *task,
		      const struct np_bitmap *cpus)
{
	const struct np_bitmap *now =
	    np_bitmap_empty(&task->cpus_allowed) ? &s->allowed_cpus : &task->cpus_allowed;

	np_bitmap_and(&a->target_cpus, cpus, &s->usable_cpus);
	a->from_cpus = *now;
	a->set_affinity =
	    !np_bitmap_empty(&a->target_cpus) && !np_bitmap_subset(now, &a->target_cpus);
}

/* " (100 MiB of 300 MiB this scan)" when the move is capped, else "". */
static void partial_text(char *buf, size_t len, const struct np_action *a)
{
	buf[0] = '\0';
	if (a->partial)
		snprintf(buf, len, " (%s of %s this scan)", np_size_text(a->move_bytes).s,
			 np_size_text(a->misplaced_bytes).s);
}

static void verb_text(char *buf, size_t len, const struct np_action *a)
{
	char partial[64];

	partial_text(partial, sizeof(partial), a);
	snprintf(buf, len, "move pages to node %d%s", a->target_node, partial);
}

/* The task fits no single node: keep it within the fewest nodes nearest to
 * its threads that can hold it (numad's approach). */
static void decide_spread(const struct view *v, const struct np_config *cfg,
			  const struct np_policy_task *t, const struct sample *s,
			  struct np_policy_history *h, struct np_action *a, const char *place)
{
	const struct np_topology *topo = v->topo;
	bool in_set[NP_MAX_NODES] = {false};
	uint64_t held = 0, inside = 0;
	int anchor = -1, from = s->thread_idx >= 0 ? s->thread_idx : s->biggest_idx;
	char why[96] = "";

	while (held < s->total) {
		int next = -1;

		for (int i = 0; i < (int)topo->nr_nodes; i++) {
			if (!s->mem_ok[i] || in_set[i])
				continue;
			if (next < 0 || dist(topo, from, i) < dist(topo, from, next) ||
			    (dist(topo, from, i) == dist(topo, from, next) &&
			     capacity(v, cfg, s, i) > capacity(v, cfg, s, next)))
				next = i;
		}
		if (next < 0)
			break;
		if (anchor < 0)
			anchor = next;
		in_set[next] = true;
		held += capacity(v, cfg, s, next);
		inside += s->bytes[next];
		np_nodeset_set(&a->target_nodes, (unsigned)topo->nodes[next].id);
	}
	if (held < s->total) {
		record_look(h, -1);
		say(a, NP_ACTION_KEEP, NP_REASON_NO_ROOM,
		    "%s: %s needs more than the allowed nodes can hold with %u%% headroom", place,
		    np_size_text(s->total).s, cfg->node_mem_headroom_percent);
		np_nodeset_zero(&a->target_nodes);
		return;
	}
	a->target_node = topo->nodes[anchor].id;
	a->misplaced_bytes = s->total - inside;
	record_look(h, a->target_node);
	if (percent(inside, s->total) >= cfg->locality_target_percent) {
		say(a, NP_ACTION_KEEP, NP_REASON_TOO_BIG,
		    "%s: fits no single node, %u%% already on nodes %s", place,
		    percent(inside, s->total), list_text(&a->target_nodes).s);
		return;
	}
	if (!admit(v, h, cfg, a->target_node, s->pinned, why, sizeof(why))) {
		say(a, NP_ACTION_KEEP, NP_REASON_HYSTERESIS,
		    "%s: would spread over nodes %s; holding: %s", place,
		    list_text(&a->target_nodes).s, why);
		return;
	}
	commit_target(h, a->target_node);
	cap_move(a, cfg);
	set_sources(a, t);
	say(a, NP_ACTION_SPREAD, NP_REASON_TOO_BIG,
	    "%s fits no single node: spread over nodes %s, move %s%s%s", np_size_text(s->total).s,
	    list_text(&a->target_nodes).s, np_size_text(a->move_bytes).s,
	    a->partial ? " this scan of " : "",
	    a->partial ? np_size_text(a->misplaced_bytes).s : "");
}

static void decide_sampled(const struct view *v, const struct np_config *cfg,
			   const struct np_policy_task *t, const struct sample *s,
			   struct np_policy_history *h, struct np_action *a)
{
	const struct np_topology *topo = v->topo;
	struct placement cand[NP_MAX_NODES];
	const struct placement *best = NULL, *best_any = NULL, *pref = NULL, *chosen;
	unsigned n, locality;
	int pref_idx;
	double now;
	char place[NP_REASON_TEXT_MAX], verb[96], why[96] = "";

	describe_place(place, sizeof(place), v, s);
	if (s->nr_mem_ok == 0) {
		say(a, NP_ACTION_SKIP, NP_REASON_BOUND, "%s: no node it may use has memory", place);
		return;
	}
	locality = locality_percent(s);
	a->locality_percent = locality;

	/* Exactly one possible place, and everything is there: nothing to
	 * choose. Pages elsewhere (say, Mems_allowed changed) still move. */
	if (s->nr_mem_ok == 1 && s->bytes[s->home_idx] == s->total) {
		record_look(h, topo->nodes[s->home_idx].id);
		say(a, NP_ACTION_SKIP, NP_REASON_BOUND,
		    "all %s on node %d, the only node allowed to hold it", np_size_text(s->total).s,
		    topo->nodes[s->home_idx].id);
		return;
	}
	if (locality >= cfg->locality_target_percent) {
		record_look(h, topo->nodes[s->home_idx].id);
		if (s->threads_split)
			say(a, NP_ACTION_KEEP, NP_REASON_LOCAL, "%s", place);
		else
			say(a, NP_ACTION_KEEP, NP_REASON_LOCAL,
			    "%u%% of %s on node %d, where its threads run", locality,
			    np_size_text(s->total).s, topo->nodes[s->home_idx].id);
		return;
	}

	n = candidates(v, cfg, s, cand);
	/* The node the task leans to now: the last target while it may still
	 * hold the pages, else the threads' home. Others must beat it by the
	 * margin. */
	pref_idx = h->target_node >= 0 ? np_topology_index(topo, h->target_node) : -1;
	if (pref_idx < 0 || !s->mem_ok[pref_idx])
		pref_idx = s->home_idx;
	for (unsigned i = 0; i < n; i++) {
		const struct placement *p = &cand[i];

		if (better(p, best_any))
			best_any = p;
		if (p->fits && better(p, best))
			best = p;
		if (p->fits && p->mem_idx == pref_idx && preferable(s, p, pref))
			pref = p;
	}
	if (!best) {
		decide_spread(v, cfg, t, s, h, a, place);
		return;
	}
	chosen = best;
	if (pref && best != pref && best->cost > pref->cost - MARGIN)
		chosen = pref;

	/* Moving pays when the task ends up better off for good: the one-off
	 * costs choose among the places, they do not veto going. Whether the
	 * task is misplaced enough to bother is locality_target_percent's call,
	 * made above. */
	now = current_cost(v, s);
	if (chosen->steady >= now - EPSILON) {
		record_look(h, -1);
		if (best_any && !best_any->fits && best_any->steady < now - EPSILON)
			say(a, NP_ACTION_KEEP, NP_REASON_NO_ROOM,
			    "%s: node %d would keep less than %u%% free", place,
			    topo->nodes[best_any->mem_idx].id, cfg->node_mem_headroom_percent);
		else
			say(a, NP_ACTION_KEEP, NP_REASON_NO_BETTER_NODE,
			    "%s: no placement clearly better", place);
		return;
	}

	a->target_node = topo->nodes[chosen->mem_idx].id;
	np_nodeset_set(&a->target_nodes, (unsigned)a->target_node);
	a->misplaced_bytes = chosen->move_bytes;
	record_look(h, a->target_node);
	cap_move(a, cfg);
	if (!a->move_pages) {
		say(a, NP_ACTION_KEEP, NP_REASON_LOCAL, "%s: its memory is on node %d already",
		    place, a->target_node);
		return;
	}
	verb_text(verb, sizeof(verb), a);
	if (!admit(v, h, cfg, a->target_node, s->pinned, why, sizeof(why))) {
		say(a, NP_ACTION_KEEP, NP_REASON_HYSTERESIS, "%s: would %s; holding: %s", place,
		    verb, why);
		a->move_pages = a->partial = false;
		a->move_bytes = 0;
		return;
	}
	commit_target(h, a->target_node);
	set_sources(a, t);
	say(a, NP_ACTION_MOVE, NP_REASON_MISPLACED, "%s: %s", place, verb);
}

/* ---- homes: threads and memory placed together ---- */

static struct list_text cpus_text(const struct np_bitmap *cpus)
{
	struct list_text t;

	if (np_bitmap_format_list(cpus, t.s, sizeof(t.s)) >= sizeof(t.s))
		strcpy(t.s + sizeof(t.s) - 4, "...");
	return t;
}

/* Why the plan put it where it did, for the reason text. */
static const char *plan_why(enum np_plan_reason reason)
{
	switch (reason) {
	case NP_PLAN_MEMORY:
		return "where its memory is";
	case NP_PLAN_KEPT:
		return "kept";
	case NP_PLAN_HELD:
		return "held: homes change at most once a minute";
	case NP_PLAN_CAPACITY:
		return "its memory's node has no CPU room for it";
	case NP_PLAN_SWAP:
		return "traded places with a task of other demand";
	case NP_PLAN_SPREAD:
		return "more CPU demand than a node has CPUs";
	case NP_PLAN_NO_ROOM:
		return "no node has CPU room for it";
	case NP_PLAN_GROUP:
		return "with the tasks it shares written memory with";
	case NP_PLAN_NOT_PLACED:
		break;
	}
	return "not placed";
}

/* The plan gave the task a home: its threads are kept on the home's CPUs
 * (within the mask it had) and its memory goes to the home's memory node,
 * as much as fits. The plan holds homes, so there is no hysteresis here:
 * with the threads kept there, nothing is chased. */
static void decide_home(const struct view *v, const struct np_config *cfg,
			const struct np_policy_task *t, const struct sample *s,
			struct np_policy_history *h, struct np_action *a,
			const struct np_planner_result *r)
{
	const struct np_topology *topo = v->topo;
	int home = r->home, mem = home_node(v, s, home);
	char place[NP_REASON_TEXT_MAX], partial[64], narrow[96] = "";

	describe_place(place, sizeof(place), v, s);
	a->locality_percent = locality_percent(s);
	if (mem < 0) {
		record_look(h, -1);
		say(a, NP_ACTION_SKIP, NP_REASON_BOUND, "%s: no node it may use has memory", place);
		return;
	}
	a->target_node = topo->nodes[mem].id;
	np_nodeset_set(&a->target_nodes, (unsigned)a->target_node);
	record_look(h, a->target_node);
	commit_target(h, a->target_node);
	if (h->home_node != a->plan_home) {
		h->home_node = a->plan_home;
		h->home_since_ms = v->m->now_ms;
	}
	narrow_to(a, s, t->task, &topo->nodes[home].cpus);
	if (percent(s->bytes[mem], s->total) < cfg->locality_target_percent) {
		uint64_t room = capacity(v, cfg, s, mem) - s->bytes[mem];

		/* What the node cannot take above its headroom stays where
		 * it is. */
		a->misplaced_bytes = s->total - s->bytes[mem];
		if (r->partial && r->move_bytes < a->misplaced_bytes)
			a->misplaced_bytes = r->move_bytes;
		if (room < a->misplaced_bytes)
			a->misplaced_bytes = room;
		cap_move(a, cfg);
		if (a->move_pages)
			set_sources(a, t);
	}
	if (!a->set_affinity) {
		np_bitmap_zero(&a->target_cpus);
		np_bitmap_zero(&a->from_cpus);
	}
	if (!a->move_pages && !a->set_affinity) {
		char kept[160] = "";

		if (h->narrowed)
			snprintf(kept, sizeof(kept), "; threads kept on CPUs %s (were %s)",
				 cpus_text(&h->narrowed_cpus).s, cpus_text(&h->cpus_before).s);
		say(a, NP_ACTION_KEEP, NP_REASON_LOCAL, "home node %d (%s): %u%% of %s there%s",
		    a->plan_home, plan_why(r->reason), percent(s->bytes[mem], s->total),
		    np_size_text(s->total).s, kept);
		return;
	}
	if (a->set_affinity)
		snprintf(narrow, sizeof(narrow), "threads to CPUs %s",
			 cpus_text(&a->target_cpus).s);
	partial_text(partial, sizeof(partial), a);
	say(a, NP_ACTION_MOVE, NP_REASON_HOME, "%s: home node %d (%s): %s%s%s%s%s", place,
	    a->plan_home, plan_why(r->reason), narrow, a->set_affinity && a->move_pages ? ", " : "",
	    a->move_pages ? "pages to node " : "",
	    a->move_pages ? list_text(&a->target_nodes).s : "", partial);
}

/* The task keeps a mask the daemon set, which is no longer wanted: the
 * threads that still have it get the mask from before back. */
static void give_back(const struct np_config *cfg, const struct np_task *task,
		      const struct sample *s, struct np_policy_history *h, struct np_action *a,
		      const struct np_planner_result *r)
{
	enum np_reason reason = NP_REASON_GIVEN_BACK;
	/* Without a part in the plan, and with homes on, the plan left it out:
	 * a thread has a mask its user set, or its threads already have their
	 * memory beside them. */
	const char *why = cfg->affinity == NP_AFFINITY_NEVER ? "affinity = never"
			  : s->launcher
			      ? "it starts processes, which would run on its home's CPUs"
			  : task->thread_masks_differ
			      ? "a thread has a CPU mask of its own: its user placed its threads"
			  : !r ? "its threads are beside their memory on several nodes"
			       : np_reason_sentence(reason);

	if (s->placeable && r && r->reason == NP_PLAN_SPREAD)
		reason = NP_REASON_SPREAD;
	else if (s->placeable && r && r->reason == NP_PLAN_NO_ROOM)
		reason = NP_REASON_NO_CPU_ROOM;
	record_look(h, -1);
	a->set_affinity = a->widen = true;
	a->from_cpus = h->narrowed_cpus;
	a->target_cpus = h->cpus_before;
	say(a, NP_ACTION_MOVE, reason, "%s: threads back to CPUs %s",
	    reason == NP_REASON_GIVEN_BACK ? why : np_reason_sentence(reason),
	    cpus_text(&h->cpus_before).s);
}

static void remember_narrowing(struct np_policy_history *h, const struct sample *s,
			       const struct np_action *a, uint64_t now_ms)
{
	if (!a->set_affinity)
		return;
	if (a->widen) {
		/* narrowed_cpus and cpus_before stay: what it started
		 * meanwhile is given them back when first listed. */
		h->narrowed = false;
		h->home_node = -1;
		h->given_back_ms = now_ms ? now_ms : 1;
		return;
	}
	h->cpus_before = s->allowed_cpus;
	h->narrowed_cpus = a->target_cpus;
	h->narrowed = true;
}

/* Bytes under policies the user set, over every mode. */
static uint64_t policy_total(const struct np_policy_task *t)
{
	uint64_t sum = 0;

	for (unsigned m = 0; t->policy_bytes && m <= NP_MPOL_UNKNOWN; m++)
		sum += t->policy_bytes[m];
	return sum;
}

/* Most of what it may not move is under the user's policy, or shared. */
static enum np_reason unmovable_reason(const struct np_policy_task *t)
{
	return policy_total(t) >= t->shared_file_bytes ? NP_REASON_USER_POLICY : NP_REASON_SHARED;
}

/* "400 MiB under its own memory policy (prefer, bind), 50 MiB of files other
 * tasks map": what the actuator leaves alone. Empty when nothing. */
static void unmovable_text(char *buf, size_t len, const struct np_policy_task *t)
{
	uint64_t policy = policy_total(t);
	size_t n = 0;

	buf[0] = '\0';
	if (policy) {
		n += (size_t)snprintf(buf, len, "%s under its own memory policy (",
				      np_size_text(policy).s);
		for (unsigned m = 0, first = 1; m <= NP_MPOL_UNKNOWN && n < len; m++) {
			if (!t->policy_bytes[m])
				continue;
			n += (size_t)snprintf(buf + n, len - n, "%s%s", first ? "" : ", ",
					      np_mpol_name(m));
			first = 0;
		}
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
	if (t->shared_file_bytes && n < len)
		snprintf(buf + n, len - n, "%s%s of files other tasks map", n ? ", " : "",
			 np_size_text(t->shared_file_bytes).s);
}

/* Decide for one task; @r is its part of the plan (NULL: none made). */
static void decide_one(const struct view *v, const struct np_config *cfg,
		       const struct np_policy_task *t, const struct np_planner_result *r,
		       struct np_action *a, struct np_policy_history *next)
{
	struct np_policy_history h;
	struct sample sample, *s = &sample;
	/* Twice a reason: say() cuts what does not fit. */
	char text[2 * NP_REASON_TEXT_MAX], unmovable[NP_REASON_TEXT_MAX];

	action_init(a, t->task);
	if (t->hist)
		h = *t->hist;
	else
		np_policy_history_init(&h);
	if (next)
		*next = h;
	/* The scan scheduler screens tasks before they are read; what it
	 * passed is checked again here, so the policy alone never moves a
	 * kernel thread or a task the configuration excludes. */
	if (t->task->kthread || (t->task->flags & NP_PF_KTHREAD)) {
		say(a, NP_ACTION_SKIP, NP_REASON_KERNEL_THREAD, "%s",
		    np_reason_sentence(NP_REASON_KERNEL_THREAD));
		return;
	}
	if (v->m->filter && np_filter_excludes(v->m->filter, t->task, text, sizeof(text))) {
		say(a, NP_ACTION_SKIP, NP_REASON_EXCLUDED, "%s", text);
		return;
	}
	if (!t->task->has_details) {
		say(a, NP_ACTION_SKIP, NP_REASON_NO_DETAILS, "%s",
		    np_reason_sentence(NP_REASON_NO_DETAILS));
		return;
	}
	if (!t->node_bytes) {
		say(a, NP_ACTION_SKIP, NP_REASON_NO_MEMORY_DATA, "numa_maps not read");
		return;
	}
	if (!sample_task(v, cfg, t, &h, s)) {
		say(a, NP_ACTION_SKIP, NP_REASON_NO_MEMORY_DATA,
		    "numa_maps shows no resident pages");
		return;
	}
	unmovable_text(unmovable, sizeof(unmovable), t);
	a->total_bytes = s->total;
	if (s->thread_idx >= 0)
		a->thread_node = v->topo->nodes[s->thread_idx].id;
	if (s->home_idx >= 0)
		a->home_node = v->topo->nodes[s->home_idx].id;
	a->locality = s->all_local;
	if (s->total == 0) {
		/* Nothing it may move: where its memory is, is the user's call. */
		say(a, NP_ACTION_KEEP, unmovable_reason(t), "%s", unmovable);
		return;
	}
	if (v->topo->nr_nodes == 1) {
		a->locality_percent = percent(s->bytes[0], s->total);
		say(a, NP_ACTION_KEEP, NP_REASON_SINGLE_NODE, "%s",
		    np_reason_sentence(NP_REASON_SINGLE_NODE));
		return;
	}
	if (!r)
		s->placeable = false; /* no plan, or the plan would not place it */
	if (s->placeable && r) {
		a->planned = true;
		a->plan_home = r->home >= 0 ? v->topo->nodes[r->home].id : -1;
		a->plan_reason = r->reason;
		a->demand = s->demand;
	}
	if (s->placeable && r && r->home >= 0) {
		decide_home(v, cfg, t, s, &h, a, r);
	} else if (h.narrowed) {
		give_back(cfg, t->task, s, &h, a, r);
	} else if (a->planned) {
		/* No home: its threads go wherever the kernel runs them, and
		 * memory sent after them would chase them. It stays. */
		char place[NP_REASON_TEXT_MAX];

		h.home_node = -1;
		record_look(&h, -1);
		describe_place(place, sizeof(place), v, s);
		a->locality_percent = locality_percent(s);
		say(a, NP_ACTION_KEEP,
		    r->reason == NP_PLAN_SPREAD ? NP_REASON_SPREAD : NP_REASON_NO_CPU_ROOM,
		    "%s; no home (%s): its memory stays", place, plan_why(r->reason));
	} else if (s->no_home != NP_REASON_COUNT &&
		   locality_percent(s) < cfg->locality_target_percent) {
		/* Nobody pinned it, but it gets no home: the same (one
		 * already beside its memory is simply local). */
		char place[NP_REASON_TEXT_MAX], why[64];

		if (s->no_home == NP_REASON_IDLE)
			snprintf(why, sizeof(why), "%.1f%% of a CPU since its last look, under %.0f%%",
				 t->cpu_percent, NP_HOME_MIN_CPU_PERCENT);
		else
			snprintf(why, sizeof(why), "%s",
				 t->task->pid == 1 ? "pid 1 starts every service"
						   : "it starts processes");
		h.home_node = -1;
		record_look(&h, -1);
		describe_place(place, sizeof(place), v, s);
		a->locality_percent = locality_percent(s);
		say(a, NP_ACTION_KEEP, s->no_home, "%s; no home (%s): its memory stays", place, why);
	} else {
		decide_sampled(v, cfg, t, s, &h, a);
	}

	/* With the kernel balancing, the kernel decides; the report still
	 * says what we would have done, but nothing is recorded. */
	if (v->m->kernel_numa_balancing && cfg->kernel_balancing == NP_KBAL_DEFER) {
		snprintf(text, sizeof(text), "%s: %s",
			 np_reason_sentence(NP_REASON_KERNEL_BALANCING), a->reason_text);
		say(a, NP_ACTION_SKIP, NP_REASON_KERNEL_BALANCING, "%s", text);
		a->move_pages = a->set_affinity = a->widen = a->partial = false;
		a->move_bytes = 0;
		return;
	}
	/* What it may move is local, the rest is not: the rest is why. */
	if (unmovable[0] && a->kind == NP_ACTION_KEEP && a->reason == NP_REASON_LOCAL &&
	    (unsigned)(s->all_local * 100.0 + EPSILON) < cfg->locality_target_percent) {
		snprintf(text, sizeof(text), "%s; the %s it may move is local", unmovable,
			 np_size_text(s->total).s);
		say(a, NP_ACTION_KEEP, unmovable_reason(t), "%s", text);
	}
	/* What stays where the user put it is said, so that a move of the rest
	 * does not read as if it covered everything. */
	if (unmovable[0] && (a->kind == NP_ACTION_MOVE || a->kind == NP_ACTION_SPREAD)) {
		snprintf(text, sizeof(text), "%s; %s stays", a->reason_text, unmovable);
		say(a, a->kind, a->reason, "%s", text);
	}
	remember_narrowing(&h, s, a, v->m->now_ms);
	if (h.narrowed) {
		a->narrowed = true;
		a->narrowed_from = h.cpus_before;
		a->narrowed_to = h.narrowed_cpus;
	}
	if (next)
		*next = h;
}

/* Count what an action will use, so later tasks in the batch see it. Pages
 * fill the target nodes in order; the nodes they leave are not credited,
 * since migration is not instant. */
static void plan_bytes(const struct view *v, const struct np_config *cfg, const struct np_action *a,
		       uint64_t *bytes)
{
	const struct np_topology *topo = v->topo;
	uint64_t left = a->move_bytes;

	if (a->kind != NP_ACTION_MOVE && a->kind != NP_ACTION_SPREAD)
		return;
	np_nodeset_for_each(id, &a->target_nodes)
	{
		int idx = np_topology_index(topo, id);
		uint64_t room;

		if (idx < 0 || !left)
			continue;
		room = view_free(v, idx);
		room = room > headroom(v, cfg, idx) ? room - headroom(v, cfg, idx) : 0;
		if (room > left || np_nodeset_next(&a->target_nodes, (unsigned)id + 1) < 0)
			room = left;
		bytes[idx] += room;
		left -= room;
	}
}

bool np_policy_locate(const struct np_policy_machine *m, const struct np_config *cfg,
		      const struct np_policy_task *t, int *thread_node, int *home_node,
		      double *locality)
{
	struct view v = {.m = m, .topo = m->topo};
	struct np_policy_history scratch;
	struct sample *s = malloc(sizeof(*s));
	bool ok;

	*thread_node = *home_node = -1;
	*locality = 0;
	if (!s)
		return false;
	/* sample_task may update the history it is given: a copy. */
	if (t->hist)
		scratch = *t->hist;
	else
		np_policy_history_init(&scratch);
	ok = t->node_bytes && sample_task(&v, cfg, t, &scratch, s);
	if (ok) {
		if (s->thread_idx >= 0)
			*thread_node = m->topo->nodes[s->thread_idx].id;
		if (s->home_idx >= 0)
			*home_node = m->topo->nodes[s->home_idx].id;
		*locality = s->all_local;
	}
	free(s);
	return ok;
}

/* ---- the plan ---- */

/* What the plan needs of a task, from its sample; the memo is emptied for
 * a task the plan does not count (no sample). Returns 0 or -ENOMEM. */
static int memo_fill(const struct view *v, const struct np_config *cfg,
		     const struct np_policy_task *t, struct sample *s, struct np_plan_memo *mm)
{
	const struct np_topology *topo = v->topo;
	unsigned n = topo->nr_nodes;
	struct np_policy_history h;
	bool own_memory = false;
	uint64_t best_share = 0;

	np_plan_memo_clear(mm);
	if (t->hist)
		h = *t->hist;
	else
		np_policy_history_init(&h);
	if (t->task->kthread || !t->task->has_details || !t->node_bytes ||
	    (v->m->filter && np_filter_excludes(v->m->filter, t->task, NULL, 0)) ||
	    !sample_task(v, cfg, t, &h, s) || s->total == 0)
		return 0;
	mm->bytes = calloc(n, sizeof(*mm->bytes));
	mm->runs = calloc(n, sizeof(*mm->runs));
	mm->allowed = calloc(n, sizeof(*mm->allowed));
	mm->share_keys =
	    t->nr_share_keys ? malloc(t->nr_share_keys * sizeof(*mm->share_keys)) : NULL;
	if (!mm->bytes || !mm->runs || !mm->allowed || (t->nr_share_keys && !mm->share_keys)) {
		np_plan_memo_clear(mm);
		return -ENOMEM;
	}
	mm->nr_nodes = n;
	if (t->nr_share_keys)
		memcpy(mm->share_keys, t->share_keys, t->nr_share_keys * sizeof(*mm->share_keys));
	mm->nr_share_keys = t->nr_share_keys;
	mm->placeable = s->placeable;
	mm->demand = s->demand;
	mm->home = h.home_node >= 0 ? np_topology_index(topo, h.home_node) : -1;
	mm->home_since_ms = h.home_since_ms;
	/* All of its memory, movable or not, says where its threads belong:
	 * memory the user bound to a node is best reached from there. */
	mm->total = s->all_total;
	/* A node whose own memory it may use is a better home than one whose
	 * threads would reach for another node's: those come first. */
	for (unsigned i = 0; i < n; i++)
		own_memory |= s->cpu_ok[i] && topo->nodes[i].nr_cpus && s->mem_ok[i];
	for (unsigned i = 0; i < n; i++) {
		int mem = home_node(v, s, (int)i);

		mm->bytes[i] = mem >= 0 ? s->all_bytes[mem] : 0;
		best_share = mm->bytes[i] > best_share ? mm->bytes[i] : best_share;
		mm->runs[i] = s->total_weight > 0 ? s->weight[i] / s->total_weight : 0;
		mm->allowed[i] = s->cpu_ok[i] && topo->nodes[i].nr_cpus && mem >= 0 &&
				 (!own_memory || mem == (int)i);
	}
	/* Threads already beside their memory on several nodes (each thread
	 * by its own slice, as first touch leaves it) are better off than on
	 * any one node: a home would only make part of it remote. */
	if (s->threads_split &&
	    s->all_local > (double)best_share / (double)s->all_total + SPLIT_MARGIN)
		mm->placeable = false;
	return 0;
}

static struct np_planner_task planner_task(const struct view *v, const struct np_plan_memo *mm,
					   bool acted_on)
{
	bool holds = mm->home >= 0 && v->m->now_ms - mm->home_since_ms < NP_POLICY_HOME_HOLD_MS;

	return (struct np_planner_task){
	    .demand = mm->demand,
	    .bytes = mm->bytes,
	    .total = mm->total,
	    .runs = mm->runs,
	    .allowed = mm->allowed,
	    .home = mm->home,
	    /* A home decided at another look stands until that task's own
	     * next look. */
	    .held = holds || (!acted_on && mm->home >= 0),
	    .placeable = mm->placeable,
	    .acted_on = acted_on,
	};
}

/* The nearest node with memory to @idx (itself when it has some). */
static int memory_node_of(const struct np_topology *topo, int idx)
{
	int best = -1;

	for (int j = 0; j < (int)topo->nr_nodes; j++)
		if (topo->nodes[j].mem_total &&
		    (best < 0 || dist(topo, idx, j) < dist(topo, idx, best)))
			best = j;
	return topo->nodes[idx].mem_total ? idx : best;
}

/* ---- groups: tasks that write the same shared object ---- */

struct groups {
	size_t *parent; /* union-find over planner task indexes */
	size_t *unit;	/* per task: the plan index it is planned under */
	struct np_planner_task *units;
	uint64_t *unit_bytes;
	double *unit_runs;
	bool *unit_allowed;
	size_t nr_units;
};

static size_t group_root(size_t *parent, size_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];
		i = parent[i];
	}
	return i;
}

static void groups_free(struct groups *g)
{
	free(g->parent);
	free(g->unit);
	free(g->units);
	free(g->unit_bytes);
	free(g->unit_runs);
	free(g->unit_allowed);
	memset(g, 0, sizeof(*g));
}

/* Join the tasks with a share key in common (an open-addressing table of
 * keys to the first task seen with each). */
static int join_by_keys(struct groups *g, const struct np_plan_memo *const *mof, size_t k)
{
	size_t nkeys = 0, cap = 16;
	uint64_t *keys;
	size_t *owner;

	for (size_t i = 0; i < k; i++)
		nkeys += mof[i]->nr_share_keys;
	while (cap < 2 * nkeys)
		cap *= 2;
	keys = calloc(cap, sizeof(*keys));
	owner = malloc(cap * sizeof(*owner));
	if (!keys || !owner) {
		free(keys);
		free(owner);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		owner[i] = SIZE_MAX;
	for (size_t i = 0; i < k; i++) {
		for (unsigned j = 0; j < mof[i]->nr_share_keys; j++) {
			uint64_t key = mof[i]->share_keys[j];
			size_t slot = (size_t)(key ^ (key >> 32)) & (cap - 1);

			while (owner[slot] != SIZE_MAX && keys[slot] != key)
				slot = (slot + 1) & (cap - 1);
			if (owner[slot] == SIZE_MAX) {
				keys[slot] = key;
				owner[slot] = i;
			} else {
				g->parent[group_root(g->parent, i)] =
				    group_root(g->parent, owner[slot]);
			}
		}
	}
	free(keys);
	free(owner);
	return 0;
}

/*
 * Tasks that write a shared object in common are planned as one unit when
 * they all may be placed and, together, fit a node's CPUs: the unit asks
 * the sum of their demand, and its memory per node is the sum of theirs
 * (the object's pages count for each, as each uses them). After it,
 * tasks[] holds the units in place of their first member, and g->unit[i]
 * is where task i is planned. As the kernel's numa_group does.
 */
static int make_groups(struct groups *g, const struct np_planner_node *nodes, unsigned n,
		       struct np_planner_task *tasks, const struct np_plan_memo *const *mof,
		       size_t k)
{
	size_t *members = NULL;
	int err = -ENOMEM;

	memset(g, 0, sizeof(*g));
	g->parent = malloc((k + 1) * sizeof(*g->parent));
	g->unit = malloc((k + 1) * sizeof(*g->unit));
	members = calloc(k + 1, sizeof(*members));
	if (!g->parent || !g->unit || !members)
		goto out;
	for (size_t i = 0; i < k; i++)
		g->parent[i] = g->unit[i] = i;
	err = join_by_keys(g, mof, k);
	if (err)
		goto out;
	for (size_t i = 0; i < k; i++)
		members[group_root(g->parent, i)]++;
	for (size_t i = 0; i < k; i++) {
		size_t root = group_root(g->parent, i);
		struct np_planner_task *u = &tasks[root];
		double demand = 0;
		unsigned most = 0;
		bool all_placeable = true, same_home = true;

		if (i != root || members[root] < 2)
			continue;
		for (size_t j = 0; j < k; j++) {
			if (group_root(g->parent, j) != root)
				continue;
			demand += tasks[j].demand;
			all_placeable &= tasks[j].placeable;
			same_home &= tasks[j].home == tasks[root].home;
		}
		for (unsigned x = 0; x < n; x++)
			most = nodes[x].cpus > most ? nodes[x].cpus : most;
		if (!all_placeable || demand > most + np_planner_slack(most))
			continue; /* planned one by one */
		if (!g->unit_bytes) {
			g->unit_bytes = calloc((size_t)k * n, sizeof(*g->unit_bytes));
			g->unit_runs = calloc((size_t)k * n, sizeof(*g->unit_runs));
			g->unit_allowed = malloc((size_t)k * n * sizeof(*g->unit_allowed));
			if (!g->unit_bytes || !g->unit_runs || !g->unit_allowed) {
				err = -ENOMEM;
				goto out;
			}
		}
		{
			uint64_t *bytes = &g->unit_bytes[g->nr_units * n];
			double *runs = &g->unit_runs[g->nr_units * n];
			bool *allowed = &g->unit_allowed[g->nr_units * n];
			struct np_planner_task unit = {.demand = demand,
						       .bytes = bytes,
						       .runs = runs,
						       .allowed = allowed,
						       .home = same_home ? tasks[root].home : -1,
						       .placeable = true};

			for (unsigned x = 0; x < n; x++)
				allowed[x] = true;
			for (size_t j = 0; j < k; j++) {
				const struct np_planner_task *t = &tasks[j];
				double w = demand > 0 ? t->demand / demand : 1.0 / members[root];

				if (group_root(g->parent, j) != root)
					continue;
				unit.total += t->total;
				unit.held |= t->held && same_home;
				unit.acted_on |= t->acted_on;
				for (unsigned x = 0; x < n; x++) {
					bytes[x] += t->bytes[x];
					runs[x] += t->runs ? w * t->runs[x] : 0;
					allowed[x] &= !t->allowed || t->allowed[x];
				}
				g->unit[j] = root;
				if (j != root)
					tasks[j].placeable = false, tasks[j].demand = 0;
			}
			*u = unit;
			g->nr_units++;
		}
	}
	err = 0;
out:
	free(members);
	return err;
}

/* Plan the homes of @nr tasks (their memos) with m->known around them. */
static int make_plan(const struct view *v, const struct np_config *cfg,
		     const struct np_plan_memo *memos, size_t nr, struct np_planner_result *res,
		     struct np_planner_load *load)
{
	const struct np_topology *topo = v->topo;
	const struct np_policy_machine *m = v->m;
	unsigned n = topo->nr_nodes;
	size_t total = nr + m->nr_known, k = 0;
	struct np_planner_node *nodes = calloc(n, sizeof(*nodes));
	struct np_planner_task *tasks = calloc(total + 1, sizeof(*tasks));
	struct np_planner_result *all = calloc(total + 1, sizeof(*all));
	const struct np_plan_memo **mof = calloc(total + 1, sizeof(*mof));
	size_t *of = calloc(nr + 1, sizeof(*of));
	struct groups g = {0};
	int err = -ENOMEM;

	if (!nodes || !tasks || !all || !mof || !of)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		of[i] = SIZE_MAX;
		if (memos[i].nr_nodes == n) {
			of[i] = k;
			mof[k] = &memos[i];
			tasks[k++] = planner_task(v, &memos[i], true);
		}
	}
	for (size_t i = 0; i < m->nr_known; i++)
		if (m->known[i].nr_nodes == n) {
			mof[k] = &m->known[i];
			tasks[k++] = planner_task(v, &m->known[i], false);
		}
	for (unsigned i = 0; i < n; i++) {
		uint64_t free_bytes = view_free(v, (int)i), keep = headroom(v, cfg, (int)i);
		double busy = (m->node_busy ? m->node_busy[i] : 0.0) * topo->nodes[i].nr_cpus;

		/* What the node is busy with, less the tasks the plan places. */
		for (size_t j = 0; j < k; j++)
			busy -= tasks[j].demand * tasks[j].runs[i];
		nodes[i] = (struct np_planner_node){
		    .cpus = topo->nodes[i].nr_cpus,
		    .background = busy > 0 ? busy : 0,
		    .mem_room = free_bytes > keep ? free_bytes - keep : 0,
		    .mem_node = memory_node_of(topo, (int)i),
		};
	}
	err = make_groups(&g, nodes, n, tasks, mof, k);
	if (!err)
		err = np_planner_run(nodes, n, topo->distance, tasks, k, all, load);
	for (size_t i = 0; !err && i < nr; i++) {
		size_t j = of[i];

		if (j == SIZE_MAX) {
			res[i] = (struct np_planner_result){.home = -1};
		} else if (g.unit[j] != j || tasks[j].bytes != mof[j]->bytes) {
			/* A group's member: the unit's home; its own memory is
			 * decided on when it acts, against the node's room. */
			res[i] = all[g.unit[j]];
			res[i].move_bytes = 0;
			res[i].partial = false;
			if (res[i].home >= 0)
				res[i].reason = NP_PLAN_GROUP;
		} else {
			res[i] = all[j];
		}
	}
out:
	groups_free(&g);
	free(nodes);
	free(tasks);
	free(all);
	free(mof);
	free(of);
	return err;
}

void np_policy_decide(const struct np_policy_machine *m, const struct np_config *cfg,
		      const struct np_policy_task *t, struct np_action *out,
		      struct np_policy_history *next)
{
	/* Out of memory the plan is not made, and the task is decided as if
	 * its threads were not the daemon's to place. */
	if (np_policy_decide_all(m, cfg, t, 1, out, next, NULL, NULL) < 0) {
		struct view v = {.m = m, .topo = m->topo};

		decide_one(&v, cfg, t, NULL, out, next);
	}
}

int np_policy_decide_all(const struct np_policy_machine *m, const struct np_config *cfg,
			 const struct np_policy_task *tasks, size_t nr, struct np_action *actions,
			 struct np_policy_history *next, struct np_plan_memo *memos,
			 struct np_planner_load *node_load)
{
	unsigned nodes = m->topo->nr_nodes;
	uint64_t *bytes = calloc(nodes, sizeof(*bytes));
	struct np_plan_memo *own = memos ? NULL : calloc(nr + 1, sizeof(*own));
	struct np_planner_result *res = calloc(nr + 1, sizeof(*res));
	struct sample *s = malloc(sizeof(*s));
	struct view v = {.m = m, .topo = m->topo, .planned_bytes = bytes};
	struct np_plan_memo *mm = memos ? memos : own;
	int err = -ENOMEM;

	if (!bytes || !mm || !res || !s)
		goto out;
	err = 0;
	for (size_t i = 0; i < nr && !err; i++)
		err = memo_fill(&v, cfg, &tasks[i], s, &mm[i]);
	if (!err && nodes > 1)
		err = make_plan(&v, cfg, mm, nr, res, node_load);
	if (err)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		decide_one(&v, cfg, &tasks[i],
			   nodes > 1 && mm[i].nr_nodes && mm[i].placeable ? &res[i] : NULL,
			   &actions[i], next ? &next[i] : NULL);
		plan_bytes(&v, cfg, &actions[i], bytes);
	}
out:
	for (size_t i = 0; own && i < nr; i++)
		np_plan_memo_clear(&own[i]);
	free(own);
	free(bytes);
	free(res);
	free(s);
	return err;
}
