/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "actuate.h"
#include "bitmap.h"
#include "clock.h"
#include "writers.h"

/*
 * Thread homes: a task nobody pinned whose busy threads do not fit on one
 * node (the plan spreads it) gets a node for each busy thread, and the
 * memory each thread alone writes goes to its thread's node, as the
 * kernel's NUMA balancing places each thread by its own hinting faults.
 * Which thread writes which memory comes from np_writers; where the
 * threads go, from np_thread_homes_assign() below; the engine narrows
 * each thread to its node's CPUs, then moves its memory, and gives every
 * mask back as it does a task's home.
 */

/* A node as the assignment sees it (indexed like the topology). */
struct np_th_node {
	unsigned cpus; /* CPUs the task may use there; 0: not a home */
	double load;   /* CPUs kept busy there by everything but the task */
	/* Of that load, the threads homed there (other tasks' and those
	 * placed before): known exactly, where the rest is measured over
	 * the last second and lags behind threads the kernel moves. */
	double homed;
};

/* A thread of the task as the assignment sees it. */
struct np_th_thread {
	double busy;	       /* CPUs it kept busy or waited for, 0..1 */
	int run_node;	       /* node index it last ran on; -1: not known */
	const uint64_t *bytes; /* per node index: bytes of its own memory there */
	uint64_t own;	       /* their sum */
};

/* Below this share of a CPU a thread gets no home: it goes where the
 * kernel runs it. */
#define NP_THREAD_HOME_MIN_BUSY 0.05

/*
 * Give each busy thread of a task with its own memory a node (pure):
 * threads with the most memory of their own first, each to the node with
 * CPU room for it (its load and the threads placed before it, within the
 * planner's slack) where most of that memory already is, then the node
 * it runs on, then the least loaded; when no node has room, the one with
 * the fewest threads homed for its CPUs, then the least loaded. *@home
 * per thread: a node index, or -1 (idle, or nothing of its
 * own). @nodes' loads are updated with the threads placed. Returns the
 * number of threads given a node.
 */
unsigned np_thread_homes_assign(struct np_th_node *nodes, unsigned nr_nodes,
				const struct np_th_thread *threads, unsigned nr, int *home);

/* One thread the daemon narrowed. */
struct np_thread_home {
	int tid;
	uint64_t start_ticks; /* the thread's own (its /proc/TID/stat) */
	int node;	      /* node id */
	struct np_bitmap cpus; /* the mask set on it */
	double busy;	       /* CPUs it kept busy at its sample */
};

/* What the engine keeps of a task's thread homes (np_task_state.th). */
struct np_thread_homes {
	struct np_bitmap before; /* the mask its threads had */
	struct np_thread_home *v;
	unsigned nr;
	uint64_t set_ms;  /* when they were set, or a sample refused (engine clock) */
	uint64_t hold_ms; /* until the next sample, from set_ms */
	int refused;	  /* the last sample's error, or 0 */
	/* A sample of its threads' writes under way (NULL: none), started
	 * at sample_ms, with each sampled thread's CPU time then. */
	struct np_writers *sampling;
	uint64_t sample_ms;
	uint64_t started_ms; /* when it started: in its tick, sample_ms or later */
	uint64_t read_ms;    /* when a look is due to read it */
	int *sample_tids;
	uint64_t *sample_ticks;
	/* And each one's wait for a CPU then (with waits_known: the task's
	 * details had them), which with its CPU time makes its demand. */
	uint64_t *sample_waits;
	bool waits_known;
	unsigned nr_sampled;
	/* What a first sample's events recorded by its halfway point
	 * (np_thread_homes_split), read with the rest at the end;
	 * split_ok: the bits were cleared again then. split_tried: once a
	 * sample. */
	struct np_write_sample *half;
	size_t nr_half;
	bool split_tried, split_ok;
	/* The blocks of the last sample read, each with its first writer:
	 * what a block's one fault in the next is confirmed against. */
	struct np_writer_block *prev;
	unsigned nr_prev;
	/* The memory each home's threads alone wrote, still to move. */
	struct np_move_area *areas;
	unsigned nr_areas;
	uint64_t own_bytes; /* of the last sample: written by one thread alone */
	uint64_t shared_bytes; /* by several */
	uint64_t moved_bytes;
};

/* Free @th and all it holds (a sample under way is stopped); NULL is
 * accepted. The masks are not given back: the engine does that first. */
void np_thread_homes_free(struct np_thread_homes *th);

/* The home of thread @tid, or NULL. */
const struct np_thread_home *np_thread_homes_find(const struct np_thread_homes *th, int tid);

/*
 * The masks a task's thread homes set, for the processes its threads
 * start: fork(2) copies the mask of the thread that calls it, and the
 * child, planned for nobody, would keep one node's CPUs. Kept while the
 * homes stand and after they are given back (a child is first listed up
 * to scan_delay_ms after its birth).
 */
struct np_th_handed {
	struct np_bitmap before; /* the mask the threads had */
	struct np_bitmap *masks; /* each mask a home set, once */
	unsigned nr;
	uint64_t given_back_ms; /* when the last home was given back; 0: they stand */
};

/* Add the masks of @th's homes to *@hp (created on the first call; one of
 * another mask from before starts over) and mark them standing. Returns
 * 0 or -ENOMEM (the masks noted before stay). */
int np_th_handed_note(struct np_th_handed **hp, const struct np_thread_homes *th);

/* Of @h's masks, the one equal to @cpus, or NULL. */
const struct np_bitmap *np_th_handed_find(const struct np_th_handed *h,
					  const struct np_bitmap *cpus);

void np_th_handed_free(struct np_th_handed *h);

/* What the thread-home steps work with. */
struct np_th_env {
	struct np_ctx *ctx;
	struct np_actuator *act;
	const struct np_topology *topo;
	uint64_t now_ms;
	unsigned ticks_per_s;
	uint64_t tick_ms; /* the ticks' interval; 0: a sample is read only
			   * once it has run its full length */
	/* When the steps are taken (later than now_ms, the tick's time, in
	 * a tick that runs long); NULL: at now_ms. */
	const struct np_clock *clock;
};

/*
 * Before the policy looks at @task (its details read): forget the homes
 * of threads gone, or whose mask is no longer the one set (someone else
 * chose it: it is theirs). The threads a gone one started, which still
 * have its home's mask and no home of their own, get the mask from before
 * (once: a failure leaves them). When homes are left, @task reads as its
 * threads did before them (cpus_allowed the mask they had, no thread mask
 * of its own), which is how the policy sees a task nobody pinned. Returns
 * the homes left.
 */
unsigned np_thread_homes_check(const struct np_th_env *env, struct np_thread_homes *th,
			       struct np_act_task *at, struct np_task *task);

/* What a look did. */
enum np_th_step {
	NP_TH_WAITING,	/* a sample runs, or the homes stand: nothing now */
	NP_TH_SAMPLING, /* a sample of its threads' writes started */
	NP_TH_SET,	/* homes set from a sample; th->areas hold what to move */
};

/* How long a sample of the threads' writes runs before it is read (at
 * the look nearest its end: np_th_sample_ended), and how long homes
 * stand before another sample may change them: a minute, doubled after
 * each sample that changed nothing, up to 16 (a sample costs the task a
 * fault per page it writes). */
#define NP_TH_SAMPLE_MS 1000
#define NP_TH_HOLD_MS 60000
#define NP_TH_HOLD_MAX_MS (16 * 60000)

/* Whether a sample started at @sample_ms is read by a look at @now_ms,
 * looks coming @tick_ms apart: at the look nearest the sample's end
 * (np_tick_lead_ms). A look a tick late could put the read off by a
 * whole period of the task's. */
static inline bool np_th_sample_ended(uint64_t now_ms, uint64_t sample_ms, uint64_t tick_ms)
{
	uint64_t lead = np_tick_lead_ms(tick_ms, NP_TH_SAMPLE_MS);

	return now_ms >= sample_ms && now_ms - sample_ms + lead >= NP_TH_SAMPLE_MS;
}

/*
 * A task's first sample is split halfway: a huge page faults once after a
 * clear, on its first writer, so a block of one fault is confirmed by the
 * sample before (np_writers_confirm), which a first sample has not. At
 * its halfway point the rings are read, and when a block of one fault is
 * among what they hold, the bits are cleared again: read at the end with
 * what the first half recorded, a block of a huge page written by one
 * thread in both halves has two faults of that thread, as after a second
 * sample (and as many clears), a sample's length sooner. Without such a
 * block nothing is cleared: the sample goes on as one. The later samples
 * are confirmed by the one before them, and not split.
 *
 * The halfway point lies between its start (which a tick that runs long
 * puts late) and the look due to read it, at least NP_TH_SAMPLE_MS / 4
 * after its start. When the split is due (engine clock), or 0: no first
 * sample runs, or its split was tried.
 */
static inline uint64_t np_th_split_ms(const struct np_thread_homes *th)
{
	uint64_t from, len;

	if (!th || !th->sampling || th->prev || th->split_tried)
		return 0;
	from = th->started_ms > th->sample_ms ? th->started_ms : th->sample_ms;
	len = th->read_ms > from ? th->read_ms - from : 0;
	if (len < NP_TH_SAMPLE_MS / 2)
		len = NP_TH_SAMPLE_MS / 2;
	return from + len / 2;
}

/*
 * Split @th's sample when its time (np_th_split_ms) has come by @now_ms.
 * Returns 1 when it was split (the bits cleared again), 0 when nothing
 * was due or nothing is to confirm (the sample goes on as one), or -errno:
 * -ENOMEM with what was recorded so far lost, or the clear's error, with
 * the sample going on as one.
 */
int np_thread_homes_split(struct np_thread_homes *th, uint64_t now_ms);

/*
 * A look at @task (details read, checked by np_thread_homes_check) that
 * the plan spreads: the first starts a sample of its threads' writes; the
 * first that np_th_sample_ended lets read it (a first sample not split
 * is checked by a second, started at once; a look at or after its
 * halfway point splits it, where no timer did) gives each busy thread with
 * memory of its own a node (np_thread_homes_assign over @nodes, the
 * others' load, which is updated), narrows the threads whose node
 * changed (from the mask they had to their node's CPUs), and leaves in
 * th->areas each thread's own memory off its node. After th->hold_ms
 * (NP_TH_HOLD_MS, doubled up to NP_TH_HOLD_MAX_MS while samples change
 * nothing) another sample may change them. *@thp is created on the
 * first look. Returns 0, or -errno (a sample that could not start or be
 * read: -EOPNOTSUPP, -EPERM, -EACCES; -ESRCH; -ENOMEM; a thread that
 * could not be narrowed: -EAGAIN), *@step saying what was done. After a
 * refusal (-EOPNOTSUPP, -EPERM, -EACCES) the next sample waits
 * NP_TH_HOLD_MAX_MS; after a thread that could not be narrowed, the homes
 * set stand (th->v) and the next sample waits th->hold_ms, with nothing
 * to move; after the others the next look samples again.
 */
int np_thread_homes_look(const struct np_th_env *env, struct np_thread_homes **thp,
			 struct np_act_task *at, const struct np_task *task,
			 struct np_th_node *nodes, enum np_th_step *step);

/* Give every thread of the task still on a home's mask (a thread a homed
 * one started since has it too) the mask from before. The homes given
 * back, or gone, leave @th; those that could not be (a call failed) stay
 * in it, to be tried again, and the result is -EAGAIN (-ENOMEM: all
 * stay). A sample under way is stopped and the areas dropped.
 * *@restored: threads given back. */
int np_thread_homes_give_back(const struct np_th_env *env, struct np_thread_homes *th,
			      struct np_act_task *at, int pid, uint64_t start_ticks,
			      unsigned *restored);
