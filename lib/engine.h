/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
#include "context.h"
#include "scheduler.h"
#include "actuate.h"
#include "maskfile.h"
#include "sample.h"
#include "runsample.h"
#include "snapshot.h"
#include "stats.h"

/*
 * One placement cycle, from observation to action (docs/architecture.md):
 * tasks are read (the topology only at a tick that reads a task's memory:
 * the others keep the last one), the per-task state table is synced to the
 * task list, the scan scheduler picks the tasks whose numa_maps to read,
 * each is read once, the policy decides, the actuator acts on that same
 * read (or, dry, records), and what the tick saw and did comes back as a
 * snapshot. The daemon calls np_engine_tick() from its timer; the one-shot
 * report is np_engine_look_once().
 */
struct np_engine;
struct np_proc_events;

/* Pass each process that ran since the last call to @fn; returns 0 or
 * nonzero when some may have gone unreported. */
typedef int (*np_runs_drain_fn)(void *data, np_run_fn fn, void *fn_data);

struct np_engine_params {
	struct np_ctx *ctx;	/* must outlive the engine */
	struct np_clock *clock; /* must outlive the engine */
	bool dry_run;		/* decide and record, change nothing */
	/* Asked between actions and between migration batches: true ends the
	 * cycle early (the daemon's SIGTERM). NULL: never. */
	bool (*should_stop)(void *data);
	void *stop_data;
	/* Pages move on a thread of the actuator's while the caller's loop
	 * goes on (the daemon's): a tick starts a move and returns, one move
	 * at a time; np_engine_move_fd() says when it ends. False: a tick
	 * makes its moves itself (the tests, the one-shot look). */
	bool moves_off_loop;
	/* Learn of new, exec'd and exited processes from the kernel's process
	 * connector (lib/procevents.h) and list /proc only every
	 * scan_period_max_ms; where it cannot be had (no CAP_NET_ADMIN, a
	 * network namespace of its own, a fixture root), say so at info and
	 * list /proc at every tick. False: list at every tick. */
	bool task_events;
	/* Tests: follow this connector (np_proc_events_adopt; taken over)
	 * instead of the kernel's, whatever task_events says. */
	struct np_proc_events *events;
	/* Learn which processes run from CPU samples (lib/runsample.h, at
	 * run_sample_hz): a small or idle task due to be read that was not
	 * seen running keeps its record. Where it cannot be had (no
	 * CAP_PERFMON, a fixture root), say so at info and read them. */
	bool run_samples;
	/* Tests: called at each tick instead of the CPU samples, with each
	 * process that ran since the last call; returns 0, or nonzero when
	 * some may have gone unreported. NULL: the samples, as run_samples
	 * says. */
	np_runs_drain_fn runs_drain;
	void *runs_data;
	/* How a sampled look finds where pages are (lib/sample.h); NULL: the
	 * kernel's move_pages(2). Tests give their own. */
	np_sample_lookup_fn sample_lookup;
	void *sample_data;
};

/* Create an engine with @cfg (copied). Returns 0 or -errno; a live context is
 * needed unless dry_run is set. */
int np_engine_new(const struct np_engine_params *params, const struct np_config *cfg,
		  struct np_engine **out);
void np_engine_free(struct np_engine *engine);

/* Apply a reloaded configuration whole (SIGHUP): the scheduler, the
 * filter, the policy and the actuator's rate. Returns 0, or -EINVAL or
 * -ENOMEM with the old one still in force. */
int np_engine_set_config(struct np_engine *engine, const struct np_config *cfg);

/* With task_events: the connector's socket, readable when events wait
 * (-1: none), and taking them now, so that its buffer does not fill
 * between ticks. Returns 0, 1 when more wait than one call takes, or
 * -errno. */
int np_engine_task_events_fd(const struct np_engine *engine);
int np_engine_take_task_events(struct np_engine *engine);
/* Stop following the connector (its socket failed; the caller has stopped
 * polling its fd, which this closes): every tick lists /proc. */
void np_engine_stop_task_events(struct np_engine *engine);

/* With moves off the loop: an fd readable once the calls of a move in
 * flight are done, when np_engine_finish_moves() is due; -1 otherwise. */
int np_engine_move_fd(const struct np_engine *engine);

/* End the moves in flight whose calls are done, or with @wait every move
 * in flight, waiting for its calls (a stop ends them at the next batch):
 * each one's pages counted for its task, the result logged, a move that
 * moved nothing backed off from. A tick ends those whose calls are done
 * itself, and np_engine_give_back_all() ends them all. Returns 0, or the
 * first error of np_actuator_move_finish(). */
int np_engine_finish_moves(struct np_engine *engine, bool wait);

/* A task's first sample of its threads' writes is split halfway
 * (np_thread_homes_split): by the daemon's timer, armed when the split
 * falls before the next tick, or by the first look at or after it. The
 * milliseconds until the next split is due, 0 when one is, or -1 when
 * none is to come; and the splits due, made, which returns how many. */
int64_t np_engine_split_in_ms(const struct np_engine *engine);
unsigned np_engine_split_samples(struct np_engine *engine);

/* Run one cycle. With @snapshot, also hand back the tasks read this tick,
 * with what was decided and done (free with np_snapshot_free). Returns 0 or
 * -errno (the machine could not be observed at all). */
int np_engine_tick(struct np_engine *engine, struct np_snapshot **snapshot);

/*
 * One dry look at the machine under @ctx's root with @cfg, for the report:
 * every user task of at least @min_rss_bytes is read and shown, the scan
 * budget does not apply, and a decision that would wait for
 * hysteresis_periods agreeing looks is made as if this look had lasted
 * that long (snapshot->assumed_looks says so). Returns 0 or -errno.
 */
int np_engine_look_once(struct np_ctx *ctx, const struct np_config *cfg, uint64_t min_rss_bytes,
			struct np_snapshot **out);

/*
 * The running daemon's view, for --status: every task it has looked at and
 * still lists, as its last look saw and decided it, with what the engine
 * remembers over its looks (snapshot .live: CPU since the look before,
 * looks, the last action and when, bytes moved), the mask it keeps narrowed
 * now, and the nodes as the last tick that decided anything saw them.
 * Free with np_snapshot_free. Returns 0, -EAGAIN before the first tick, or
 * -ENOMEM.
 */
int np_engine_status(const struct np_engine *engine, struct np_snapshot **out);

struct np_stats *np_engine_stats(struct np_engine *engine);
const struct np_sched_counters *np_engine_sched_counters(const struct np_engine *engine);

/* Called with every cycle's task list as observed, before anything else
 * happens to it (--record writes it to a trace). A non-zero return fails the
 * cycle. */
typedef int (*np_engine_observer_fn)(void *data, const struct np_task_list *list);
void np_engine_set_observer(struct np_engine *engine, np_engine_observer_fn fn, void *data);

/* Where the last tick's CPU went, when the log takes debug (timed): its
 * observation (a finished move's accounting, the run samples, the machine,
 * the listing, the scan's plan), the tasks' reads and looks, and the
 * decisions and actions. */
struct np_engine_tick_cpu {
	bool timed, quiet;
	uint64_t observe_ns, read_ns, decide_ns;
};
const struct np_engine_tick_cpu *np_engine_tick_cpu(const struct np_engine *engine);

/* Number of tasks the engine keeps state for. */
unsigned np_engine_tracked(const struct np_engine *engine);

/* Give every mask the daemon set back, for the threads that still have
 * it (at the daemon's stop): @restored counts the tasks given back, @left
 * the ones a call failed for (NULL: not wanted). Returns 0. */
int np_engine_give_back_all(struct np_engine *engine, unsigned *restored, unsigned *left);

/* The masks the daemon set and has not given back, one per task, into a
 * new array @out (free()) of @n. Returns 0 or -ENOMEM. */
int np_engine_saved_masks(const struct np_engine *engine, struct np_saved_mask **out, size_t *n);

/* Give back masks set by an earlier run of the daemon (its saved masks
 * file, after a crash): for each task still there, the same process
 * (pid and start time), the threads that still have the mask it set get
 * the one from before. @restored counts the tasks given back. Returns 0. */
int np_engine_give_back_saved(struct np_engine *engine, const struct np_saved_mask *v, size_t n,
			      unsigned *restored);

/* A dry run's records of the last tick (what it would have done, in
 * order); valid until the next tick. */
const struct np_action_record *np_engine_dry_records(const struct np_engine *engine, unsigned *nr);
