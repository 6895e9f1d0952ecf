/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "threadhome.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "planner.h"

/* The order threads are placed in: most memory of their own first, then
 * busiest, then the first listed. */
static bool placed_before(const struct np_th_thread *t, unsigned a, unsigned b)
{
	if (t[a].own != t[b].own)
		return t[a].own > t[b].own;
	if (t[a].busy != t[b].busy)
		return t[a].busy > t[b].busy;
	return a < b;
}

static double fill(const struct np_th_node *n, double busy)
{
	return (n->load + busy) / n->cpus;
}

/* With no room anywhere: fewer threads homed for its CPUs, then a lower
 * load. */
static bool less_homed(const struct np_th_node *a, const struct np_th_node *b, double busy)
{
	if (a->homed / a->cpus != b->homed / b->cpus)
		return a->homed / a->cpus < b->homed / b->cpus;
	return fill(a, busy) < fill(b, busy);
}

/* Whether node @a is a better home than @b for @t (both with CPUs). */
static bool better(const struct np_th_node *nodes, const struct np_th_thread *t, int a, int b)
{
	uint64_t ba = t->bytes ? t->bytes[a] : 0, bb = t->bytes ? t->bytes[b] : 0;

	if (ba != bb)
		return ba > bb;
	if ((a == t->run_node) != (b == t->run_node))
		return a == t->run_node;
	if (fill(&nodes[a], t->busy) != fill(&nodes[b], t->busy))
		return fill(&nodes[a], t->busy) < fill(&nodes[b], t->busy);
	return a < b;
}

unsigned np_thread_homes_assign(struct np_th_node *nodes, unsigned nr_nodes,
				const struct np_th_thread *threads, unsigned nr, int *home)
{
	unsigned *order = malloc((nr ? nr : 1) * sizeof(*order)), placed = 0;

	for (unsigned i = 0; i < nr; i++)
		home[i] = -1;
	if (!order)
		return 0;
	for (unsigned i = 0; i < nr; i++) {
		unsigned j = i;

		/* Insertion: a task has few threads worth a home. */
		while (j > 0 && placed_before(threads, i, order[j - 1])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (unsigned k = 0; k < nr; k++) {
		const struct np_th_thread *t = &threads[order[k]];
		int best = -1, least = -1;

		if (t->busy < NP_THREAD_HOME_MIN_BUSY || !t->own)
			continue;
		for (unsigned n = 0; n < nr_nodes; n++) {
			const struct np_th_node *node = &nodes[n];

			if (!node->cpus)
				continue;
			if (least < 0 || less_homed(node, &nodes[least], t->busy))
				least = (int)n;
			if (node->load + t->busy > node->cpus + np_planner_slack(node->cpus))
				continue;
			if (best < 0 || better(nodes, t, (int)n, best))
				best = (int)n;
		}
		if (best < 0)
			best = least;
		if (best < 0)
			break; /* no node with CPUs */
		home[order[k]] = best;
		nodes[best].load += t->busy;
		nodes[best].homed += t->busy;
		placed++;
	}
	free(order);
	return placed;
}

void np_thread_homes_free(struct np_thread_homes *th)
{
	if (!th)
		return;
	np_writers_free(th->sampling);
	free(th->sample_tids);
	free(th->sample_ticks);
	free(th->sample_waits);
	free(th->half);
	free(th->prev);
	free(th->areas);
	free(th->v);
	free(th);
}

int np_th_handed_note(struct np_th_handed **hp, const struct np_thread_homes *th)
{
	struct np_th_handed *h = *hp;
	struct np_bitmap *masks;

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->before = th->before;
		*hp = h;
	}
	masks = realloc(h->masks, (h->nr + th->nr + 1) * sizeof(*masks));
	if (!masks)
		return -ENOMEM;
	h->masks = masks;
	if (!np_bitmap_equal(&h->before, &th->before)) {
		h->before = th->before;
		h->nr = 0;
	}
	for (unsigned i = 0; i < th->nr; i++)
		if (!np_th_handed_find(h, &th->v[i].cpus))
			h->masks[h->nr++] = th->v[i].cpus;
	h->given_back_ms = 0;
	return 0;
}

const struct np_bitmap *np_th_handed_find(const struct np_th_handed *h,
					  const struct np_bitmap *cpus)
{
	for (unsigned i = 0; h && i < h->nr; i++)
		if (np_bitmap_equal(&h->masks[i], cpus))
			return &h->masks[i];
	return NULL;
}

void np_th_handed_free(struct np_th_handed *h)
{
	if (!h)
		return;
	free(h->masks);
	free(h);
}

const struct np_thread_home *np_thread_homes_find(const struct np_thread_homes *th, int tid)
{
	for (unsigned i = 0; th && i < th->nr; i++)
		if (th->v[i].tid == tid)
			return &th->v[i];
	return NULL;
}

/* Threads sampled at once, at most, the busiest first; and the ring
 * memory they share (each ring 16 to 256 KiB, 24 bytes a fault): perf
 * rings count against perf_event_mlock_kb, which the run sampler's use
 * too, without CAP_IPC_LOCK. */
#define SAMPLE_THREADS_MAX 64
#define SAMPLE_RING_KIB_ALL 2048

static int by_ticks_desc(const void *a, const void *b)
{
	const struct np_thread *x = a, *y = b;

	return (y->cpu_ticks > x->cpu_ticks) - (y->cpu_ticks < x->cpu_ticks);
}

static int start_sample(const struct np_th_env *env, struct np_thread_homes *th,
			const struct np_task *task)
{
	unsigned nr = task->nr_thread_samples < SAMPLE_THREADS_MAX ? task->nr_thread_samples
								    : SAMPLE_THREADS_MAX;
	struct np_thread *by_use;
	unsigned ring_kib;
	int err;

	free(th->half);
	th->half = NULL;
	th->nr_half = 0;
	th->split_tried = th->split_ok = false;
	if (!nr)
		return -ESRCH;
	/* With no thread homed, the mask to narrow from is the task's now
	 * (its user may have changed it since the last sample). */
	if (!th->nr)
		th->before = task->cpus_allowed;
	by_use = malloc(task->nr_thread_samples * sizeof(*by_use));
	free(th->sample_tids);
	free(th->sample_ticks);
	free(th->sample_waits);
	th->sample_tids = malloc(nr * sizeof(*th->sample_tids));
	th->sample_ticks = malloc(nr * sizeof(*th->sample_ticks));
	th->sample_waits = malloc(nr * sizeof(*th->sample_waits));
	th->nr_sampled = 0;
	if (!by_use || !th->sample_tids || !th->sample_ticks || !th->sample_waits) {
		free(by_use);
		return -ENOMEM;
	}
	memcpy(by_use, task->threads, task->nr_thread_samples * sizeof(*by_use));
	qsort(by_use, task->nr_thread_samples, sizeof(*by_use), by_ticks_desc);
	for (unsigned i = 0; i < nr; i++) {
		th->sample_tids[i] = by_use[i].tid;
		th->sample_ticks[i] = by_use[i].cpu_ticks;
		th->sample_waits[i] = by_use[i].wait_ns;
	}
	th->waits_known = task->has_wait;
	free(by_use);
	ring_kib = SAMPLE_RING_KIB_ALL / nr;
	ring_kib = ring_kib > 256 ? 256 : ring_kib < 16 ? 16 : ring_kib;
	err = np_writers_start(env->ctx, task->pid, th->sample_tids, nr, ring_kib, &th->sampling);
	if (err)
		return err;
	th->nr_sampled = nr;
	th->sample_ms = env->now_ms;
	th->started_ms = env->clock ? np_clock_now_ms(env->clock) : env->now_ms;
	/* Read at the first look np_th_sample_ended lets: a sample's length
	 * on, or the next tick when they come further apart. */
	th->read_ms =
	    env->now_ms + (env->tick_ms > NP_TH_SAMPLE_MS ? env->tick_ms : NP_TH_SAMPLE_MS);
	return 0;
}

static const struct np_thread *thread_of(const struct np_task *task, int tid)
{
	for (unsigned i = 0; i < task->nr_thread_samples; i++)
		if (task->threads[i].tid == tid)
			return &task->threads[i];
	return NULL;
}

/* The index of @tid among the threads sampled; -1: none of them. */
static int sampled_index(const struct np_thread_homes *th, int tid)
{
	for (unsigned i = 0; i < th->nr_sampled; i++)
		if (th->sample_tids[i] == tid)
			return (int)i;
	return -1;
}

/*
 * Give back the mask from before to @home's thread and every thread of
 * @task on its mask that has no home of its own (threads it started since
 * have that mask too). Returns 0
 * when that is done (or the task or thread is gone, or has a mask of
 * someone else's), -EAGAIN when it must be tried again; *@restored, when
 * given, grows by the threads given back.
 */
static int give_back_one(const struct np_th_env *env, struct np_act_task *at,
			 const struct np_task *task, const struct np_thread_homes *th,
			 const struct np_thread_home *home, unsigned *restored)
{
	struct np_affinity_result res;
	int *others = malloc((th->nr ? th->nr : 1) * sizeof(*others));
	unsigned nr = 0;
	int err;

	if (!others)
		return -EAGAIN;
	/* The other homed threads keep their masks: one homed on the same
	 * node has this very mask and stays; one homed elsewhere whose mask
	 * is this home's now was given it by someone else, and it is theirs.
	 * (A whole give-back reaches each home in turn.) */
	for (unsigned i = 0; i < th->nr; i++)
		if (th->v[i].tid != home->tid)
			others[nr++] = th->v[i].tid;
	/* A give-back does not wait out a backoff a move started. */
	np_backoff_succeeded(&at->backoff);
	err = np_actuator_set_threads_affinity(env->act, at, task, others, nr, true, &home->cpus,
					       &th->before, &res);
	free(others);
	if (restored && !err)
		*restored += res.counts[NP_THREAD_NARROWED];
	if (!err && res.counts[NP_THREAD_FAILED])
		err = -EAGAIN;
	np_affinity_result_clear(&res);
	return err && err != -ESRCH ? -EAGAIN : 0;
}

unsigned np_thread_homes_check(const struct np_th_env *env, struct np_thread_homes *th,
			       struct np_act_task *at, struct np_task *task)
{
	struct np_thread_home *gone;
	unsigned kept = 0, nr_gone = 0;

	if (!th)
		return 0;
	gone = malloc((th->nr ? th->nr : 1) * sizeof(*gone));
	for (unsigned i = 0; i < th->nr; i++) {
		struct np_bitmap now;
		int err = np_actuator_thread_cpus(env->act, task->pid, th->v[i].tid, &now);

		/* Gone, or someone else's mask now: forgotten. A read that
		 * failed otherwise keeps it. */
		if (err == -ESRCH || (!err && !np_bitmap_equal(&now, &th->v[i].cpus))) {
			if (err == -ESRCH && gone)
				gone[nr_gone++] = th->v[i];
			continue;
		}
		th->v[kept++] = th->v[i];
	}
	th->nr = kept;
	/* What a gone one started still has its mask; the homes left keep
	 * theirs (one on the same node has that very mask). */
	for (unsigned i = 0; i < nr_gone; i++)
		give_back_one(env, at, task, th, &gone[i], NULL);
	free(gone);
	if (kept && task->has_details) {
		task->cpus_allowed = th->before;
		task->thread_masks_differ = false;
	}
	return kept;
}

/* Narrow thread @t to node @idx's CPUs (within th->before), from the mask
 * it has as the daemon left it; record its home. */
static int narrow_to(const struct np_th_env *env, struct np_thread_homes *th,
		     struct np_act_task *at, const struct np_task *task, int tid, int idx,
		     double busy)
{
	const struct np_thread_home *was = np_thread_homes_find(th, tid);
	struct np_affinity_result res;
	struct np_bitmap cpus;
	const struct np_bitmap *from = was ? &was->cpus : &th->before;
	int err;

	np_bitmap_and(&cpus, &env->topo->nodes[idx].cpus, &th->before);
	if (np_bitmap_empty(&cpus))
		return 0;
	err = np_actuator_set_threads_affinity(env->act, at, task, &tid, 1, false, from, &cpus,
					       &res);
	if (!err && res.nr == 1 && res.threads[0].outcome == NP_THREAD_NARROWED) {
		struct np_thread_home home = {tid, res.threads[0].start_ticks,
					      env->topo->nodes[idx].id, cpus, busy};
		struct np_thread_home *slot = (struct np_thread_home *)was;

		if (!slot) {
			struct np_thread_home *v = realloc(th->v, (th->nr + 1) * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				/* Set and not recorded would never be given back. */
				np_affinity_result_clear(&res);
				np_actuator_set_threads_affinity(env->act, at, task, &tid, 1, false, &cpus,
								 &th->before, &res);
			} else {
				th->v = v;
				slot = &th->v[th->nr++];
			}
		}
		if (slot)
			*slot = home;
	}
	np_affinity_result_clear(&res);
	return err;
}

/* The areas to move: each homed thread's own blocks not on its node,
 * neighbours toward the same node joined. */
static int plan_areas(struct np_thread_homes *th, const struct np_writer_block *b,
		      const int *where, unsigned nr)
{
	const uint64_t block = 1ull << NP_WRITERS_BLOCK_SHIFT;
	struct np_move_area *areas = malloc((nr ? nr : 1) * sizeof(*areas));
	unsigned k = 0;

	if (!areas)
		return -ENOMEM;
	for (unsigned i = 0; i < nr; i++) {
		const struct np_thread_home *home = np_thread_homes_find(th, b[i].tid);

		if (!home || where[i] == home->node)
			continue;
		if (k && areas[k - 1].end == b[i].start && areas[k - 1].node == home->node)
			areas[k - 1].end += block;
		else
			areas[k++] = (struct np_move_area){b[i].start, b[i].start + block, home->node};
	}
	free(th->areas);
	th->areas = k ? areas : NULL;
	th->nr_areas = k;
	if (!k)
		free(areas);
	return 0;
}

int np_thread_homes_split(struct np_thread_homes *th, uint64_t now_ms)
{
	struct np_writer_block *blocks = NULL;
	unsigned overflowed, nr = 0;
	uint64_t at = np_th_split_ms(th);
	int err;

	if (!at || now_ms < at)
		return 0;
	th->split_tried = true;
	err = np_writers_drain(th->sampling, &th->half, &th->nr_half, &overflowed);
	if (err)
		return err;
	/* Attributing sorts the half in place: the read at the end sorts
	 * it with the rest all the same. */
	err = np_writers_attribute(th->half, th->nr_half, &blocks, &nr);
	if (!err && np_writers_single(blocks, nr)) {
		err = np_writers_clear(th->sampling);
		th->split_ok = !err;
	}
	free(blocks);
	return err ? err : th->split_ok;
}

/* Confirm @blocks' owners against the sample before (np_writers_confirm)
 * and keep them, as they were, for the next. Returns the blocks left
 * unconfirmed, or -ENOMEM. */
static int confirm(struct np_thread_homes *th, struct np_writer_block *blocks, unsigned nr)
{
	struct np_writer_block *raw = malloc((nr ? nr : 1) * sizeof(*raw));
	unsigned unconfirmed;

	if (!raw)
		return -ENOMEM;
	memcpy(raw, blocks, nr * sizeof(*raw));
	unconfirmed = np_writers_confirm(blocks, nr, th->prev, th->nr_prev);
	free(th->prev);
	th->prev = raw;
	th->nr_prev = nr;
	return (int)unconfirmed;
}

/* Forget what was left to move. */
static void drop_areas(struct np_thread_homes *th)
{
	free(th->areas);
	th->areas = NULL;
	th->nr_areas = 0;
}

/* Read the sample, place the threads, narrow them, plan the moves.
 * Returns 0, 1 when a second sample started instead (the first left
 * blocks of one fault to confirm), or -errno. */
static int settle(const struct np_th_env *env, struct np_thread_homes *th, struct np_act_task *at,
		  const struct np_task *task, struct np_th_node *nodes)
{
	const unsigned nr_nodes = env->topo->nr_nodes;
	struct np_write_sample *samples = NULL;
	struct np_writer_block *blocks = NULL;
	uint64_t *bytes = calloc((size_t)th->nr_sampled * nr_nodes + 1, sizeof(*bytes));
	struct np_th_thread *in = calloc(th->nr_sampled + 1, sizeof(*in));
	int *home = calloc(th->nr_sampled + 1, sizeof(*home));
	void **pages = NULL;
	int *where = NULL;
	unsigned nr_blocks = 0, overflowed;
	double secs = (double)(env->now_ms - th->sample_ms) / 1000;
	bool changed = false;
	size_t n;
	int err;

	err = np_writers_collect(th->sampling, &samples, &n, &overflowed);
	np_writers_free(th->sampling);
	th->sampling = NULL;
	/* With what its first half recorded, when it was split. */
	if (!err && th->nr_half) {
		struct np_write_sample *all = realloc(samples, (n + th->nr_half) * sizeof(*all));

		if (all) {
			memcpy(all + n, th->half, th->nr_half * sizeof(*all));
			samples = all;
			n += th->nr_half;
		} else {
			err = -ENOMEM;
		}
	}
	free(th->half);
	th->half = NULL;
	th->nr_half = 0;
	if (!err)
		err = np_writers_attribute(samples, n, &blocks, &nr_blocks);
	free(samples);
	if (!err) {
		/* Split and cleared again halfway, it was its own second. */
		bool first = !th->prev && !th->split_ok;

		th->split_ok = false;
		err = confirm(th, blocks, nr_blocks);
		/* A huge page faults once, on its first writer: the first
		 * sample's say is checked by a second, at once. */
		if (err > 0 && first) {
			err = start_sample(env, th, task);
			if (!err)
				err = 1;
			goto out;
		}
		if (err > 0)
			err = 0;
	}
	if (!err && (!bytes || !in || !home))
		err = -ENOMEM;
	if (!err && nr_blocks) {
		pages = malloc(nr_blocks * sizeof(*pages));
		where = malloc(nr_blocks * sizeof(*where));
		if (!pages || !where)
			err = -ENOMEM;
	}
	if (err)
		goto out;
	/* Where each block is: its first page stands for it. */
	for (unsigned i = 0; i < nr_blocks; i++)
		pages[i] = (void *)(uintptr_t)blocks[i].start;
	if (nr_blocks && np_actuator_where(env->act, task->pid, nr_blocks, pages, where))
		for (unsigned i = 0; i < nr_blocks; i++)
			where[i] = -1;
	for (unsigned i = 0; i < th->nr_sampled; i++) {
		const struct np_thread *t = thread_of(task, th->sample_tids[i]);
		double used = t && t->cpu_ticks > th->sample_ticks[i]
				  ? (double)(t->cpu_ticks - th->sample_ticks[i]) : 0;
		/* Its wait for a CPU too: a thread crowded with others onto
		 * few CPUs (as a task just let run anywhere is) used a share
		 * of one, and would use it all on a node of its own. */
		double waited =
		    t && th->waits_known && task->has_wait && t->wait_ns > th->sample_waits[i]
			? (double)(t->wait_ns - th->sample_waits[i]) / 1e9
			: 0;
		double demand =
		    secs > 0 && env->ticks_per_s ? (used / env->ticks_per_s + waited) / secs : 0;
		int run = t ? np_topology_cpu_node(env->topo, t->last_cpu) : -1;

		in[i].busy = demand < 1 ? demand : 1;
		in[i].run_node = run >= 0 ? np_topology_index(env->topo, run) : -1;
		in[i].bytes = &bytes[(size_t)i * nr_nodes];
	}
	th->own_bytes = th->shared_bytes = 0;
	for (unsigned i = 0; i < nr_blocks; i++) {
		int owner = blocks[i].tid >= 0 ? sampled_index(th, blocks[i].tid) : -1;
		int idx = where[i] >= 0 ? np_topology_index(env->topo, where[i]) : -1;

		if (owner < 0) {
			th->shared_bytes += 1ull << NP_WRITERS_BLOCK_SHIFT;
			continue;
		}
		th->own_bytes += 1ull << NP_WRITERS_BLOCK_SHIFT;
		in[owner].own += 1ull << NP_WRITERS_BLOCK_SHIFT;
		if (idx >= 0)
			bytes[(size_t)owner * nr_nodes + idx] += 1ull << NP_WRITERS_BLOCK_SHIFT;
	}
	for (unsigned i = 0; i < nr_nodes; i++)
		np_log(env->ctx, LOG_DEBUG, "pid %d: thread homes: node %d: %u CPUs, %.2f busy",
		       task->pid, env->topo->nodes[i].id, nodes[i].cpus, nodes[i].load);
	np_thread_homes_assign(nodes, nr_nodes, in, th->nr_sampled, home);
	for (unsigned i = 0; i < th->nr_sampled; i++)
		np_log(env->ctx, LOG_DEBUG,
		       "pid %d: thread %d: %.2f CPUs, %llu MiB its own, ran on node %d: node %d",
		       task->pid, th->sample_tids[i], in[i].busy,
		       (unsigned long long)(in[i].own >> 20),
		       in[i].run_node >= 0 ? env->topo->nodes[in[i].run_node].id : -1,
		       home[i] >= 0 ? env->topo->nodes[home[i]].id : -1);
	for (unsigned i = 0; i < th->nr_sampled; i++) {
		int tid = th->sample_tids[i], e = 0;
		struct np_thread_home *was = (struct np_thread_home *)np_thread_homes_find(th, tid);
		bool moved = home[i] >= 0 && (!was || was->node != env->topo->nodes[home[i]].id);
		bool dropped = home[i] < 0 && was;

		changed |= moved || dropped;
		if (moved) {
			e = narrow_to(env, th, at, task, tid, home[i], in[i].busy);
		} else if (dropped) {
			/* No home now: its mask back (kept while that fails). */
			if (give_back_one(env, at, task, th, was, NULL) != -EAGAIN)
				*was = th->v[--th->nr];
		} else if (was) {
			was->busy = in[i].busy;
		}
		if (e && !err)
			err = e;
	}
	if (!err) {
		err = plan_areas(th, blocks, where, nr_blocks);
	} else {
		/* What an earlier sample left to move was planned for homes
		 * that may have changed: nothing moves until the next. */
		drop_areas(th);
	}
	changed |= th->nr_areas > 0;
	th->hold_ms = !changed && th->hold_ms ? th->hold_ms * 2 : NP_TH_HOLD_MS;
	if (th->hold_ms > NP_TH_HOLD_MAX_MS)
		th->hold_ms = NP_TH_HOLD_MAX_MS;
	th->set_ms = env->now_ms;
out:
	free(pages);
	free(where);
	free(blocks);
	free(bytes);
	free(in);
	free(home);
	return err;
}

int np_thread_homes_look(const struct np_th_env *env, struct np_thread_homes **thp,
			 struct np_act_task *at, const struct np_task *task,
			 struct np_th_node *nodes, enum np_th_step *step)
{
	struct np_thread_homes *th = *thp;
	int err;

	*step = NP_TH_WAITING;
	if (!task->has_details)
		return 0;
	if (!th) {
		th = calloc(1, sizeof(*th));
		if (!th)
			return -ENOMEM;
		th->before = task->cpus_allowed;
		*thp = th;
	}
	if (th->sampling) {
		if (!np_th_sample_ended(env->now_ms, th->sample_ms, env->tick_ms)) {
			/* Looks that come often split it themselves. */
			err = np_thread_homes_split(th, env->now_ms);
			if (err < 0)
				np_log(env->ctx, LOG_DEBUG,
				       "pid %d: its threads' sample not split: %s", task->pid,
				       strerror(-err));
			return 0;
		}
		err = settle(env, th, at, task, nodes);
		if (err == 1) {
			*step = NP_TH_SAMPLING;
			err = 0;
		} else if (!err) {
			*step = NP_TH_SET;
		}
	} else if (th->hold_ms && env->now_ms - th->set_ms < th->hold_ms) {
		return 0; /* a sample was read, or refused, not long ago */
	} else {
		err = start_sample(env, th, task);
		if (!err)
			*step = NP_TH_SAMPLING;
	}
	/* A refusal is not tried again at every look: a task of another
	 * user stays refused, and a sample costs it faults. */
	th->refused = err;
	if (err == -EPERM || err == -EACCES || err == -EOPNOTSUPP) {
		th->set_ms = env->now_ms;
		th->hold_ms = NP_TH_HOLD_MAX_MS;
	}
	return err;
}

int np_thread_homes_give_back(const struct np_th_env *env, struct np_thread_homes *th,
			      struct np_act_task *at, int pid, uint64_t start_ticks,
			      unsigned *restored)
{
	struct np_task task = {.pid = pid, .start_ticks = start_ticks};
	bool *failed = th && th->nr ? calloc(th->nr, sizeof(*failed)) : NULL;
	unsigned kept = 0;
	int first = 0;

	*restored = 0;
	if (th && th->nr && !failed)
		return -ENOMEM; /* all kept, to be tried again */
	/* Each home in turn: a pass spares the other homes, those on the
	 * same node (the same mask) included. */
	for (unsigned i = 0; th && i < th->nr; i++)
		failed[i] = give_back_one(env, at, &task, th, &th->v[i], restored) != 0;
	for (unsigned i = 0; th && i < th->nr; i++) {
		/* Kept, to be tried again: a mask set and forgotten would never
		 * be given back. */
		if (failed[i]) {
			th->v[kept++] = th->v[i];
			first = -EAGAIN;
		}
	}
	free(failed);
	if (th) {
		th->nr = kept;
		drop_areas(th);
		np_writers_free(th->sampling);
		th->sampling = NULL;
	}
	return first;
}
