/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "actuate.h"
#include "filter.h"
#include "memory.h"
#include "pageplan.h"
#include "policy.h"
#include "procevents.h"
#include "runsample.h"
#include "state.h"
#include "task.h"

/* A locality fall of this many points between two looks counts as a drop:
 * the scan period goes back to its minimum. */
#define LOCALITY_DROP_POINTS 10

/* A move that changed nothing is not tried again toward the same node for
 * this many looks, doubling each time it changes nothing again, up to the
 * cap. */
#define NO_EFFECT_LOOKS_MIN 2
#define NO_EFFECT_LOOKS_MAX 64

/*
 * A sampled look (lib/sample.h) stands in for the numa_maps read of a task
 * this big whose last look kept it where it is, found local (its pages
 * where its threads run) or too big for a node (its pages within the
 * fewest nodes near its threads that hold it), and whose threads are still
 * on the node they ran on then: 4,096 pages looked up cost 1-4 ms on the
 * host whatever the task's size, where numa_maps walks every page table
 * (~3-5 ms a GiB, so from about 256 MiB on a sample is cheaper). A task
 * that stayed local is told apart from one that did not by the first 1,024
 * pages (all of them on its node put the bound's low end at 99.6%); 3,072
 * more are drawn only when those cannot say. numa_maps is read when the
 * sample cannot tell, or finds the task less local than
 * locality_target_percent (within those nodes), when a node could now
 * hold a task kept as too big (might_fit_a_node), and at least every
 * SAMPLED_LOOKS_IN_A_ROW + 1 looks, so that the plan's figures of the task
 * (its movable bytes, its shared objects) are not older than that.
 */
#define SAMPLED_LOOK_MIN_BYTES (1ull << 30)
#define SAMPLED_LOOK_FIRST 1024
#define SAMPLED_LOOK_MORE 3072
#define SAMPLED_LOOK_CHUNK 1024
#define SAMPLED_LOOKS_IN_A_ROW 3

struct np_engine {
	struct np_ctx *ctx;
	struct np_clock *clock;
	struct np_config cfg;
	bool dry_run;

	struct np_task_source *src;
	struct np_filter *filter;
	struct np_sched *sched;
	struct np_memory_reader *reader;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_state_table states;
	/* The tasks of the tick in progress. Kept from tick to tick: at
	 * 10,000 tasks it spans 24 MiB, which a fresh allocation would fault
	 * in again at every tick. */
	struct np_task_list list;
	struct np_task_list *planned; /* this tick's, while it is planned */
	bool read_all;		      /* this tick's scan reads every task */
	/* Which processes ran (lib/runsample.h), where it can be had: a
	 * task due to be read that no sample saw running since its last read
	 * keeps its record as unchanged. Not before runs_since_ms (the open,
	 * or the last drain that lost samples): a read before is vouched for
	 * by nothing. A test's runs_drain stands in for the sampler. */
	bool want_runs; /* np_engine_params.run_samples */
	struct np_run_sampler *run_sampler;
	unsigned runs_hz;      /* the rate it samples at */
	uint64_t runs_tick_ms; /* the tick it was sized for */
	uint64_t runs_since_ms;
	bool runs_logged; /* why there are none was said */
	np_runs_drain_fn runs_drain;
	void *runs_data;
	unsigned keep_cursor; /* keep_record's place in the state table */
	uint64_t keep_now_ms; /* this tick's time, for keep_record */
	/* Quiet ticks (tick_is_quiet): what the last tick that scanned left.
	 * No task a scan would read is due before quiet_until_ms (clock ms;
	 * set_quiet_until, lowered by note_run); scanned_ms and
	 * scanned_uptime_ms are that tick's time and uptime, last_skips its
	 * tasks' verdicts, which stand while nothing changes. */
	bool scanned;
	uint64_t quiet_until_ms;
	int quiet_until_pid; /* the task whose read ends the quiet */
	/* At debug: the CPU each part of the last tick took. */
	struct np_engine_tick_cpu tick_cpu;
	uint64_t scanned_ms, scanned_uptime_ms;
	uint64_t last_skips[NP_REASON_COUNT];
	unsigned last_narrowed;
	bool ever_narrowed; /* some tick ended with a task or a thread narrowed */
	/* The machine as last read (read_machine): its nodes, their CPUs,
	 * free memory and distances, and the kernel's balancing sysctl. */
	struct np_topology *topo;
	int kernel_numa_balancing;
	/* The daemon's CPU time and the time at the last tick's look at the
	 * CPUs' use (load_to_actuator), ns. */
	uint64_t load_cpu_ns, load_wall_ns;
	/* The machine as the last tick that decided anything saw it (or the
	 * first tick, before any did): the figures a status shows. */
	struct {
		struct np_topology *topo;
		double *load;
		struct np_planner_load *plan; /* NULL: no plan was made */
		int kernel_numa_balancing;
		uint64_t uptime_ms, at_ms;
	} decided;
	bool denied_logged; /* the first permission failure was explained */

	/* Moves off the loop (np_engine_params.moves_off_loop): what the
	 * engine keeps of each whose calls run now, beside what the actuator
	 * knows of it (task, target: np_actuator_moving). */
	bool moves_off_loop;
	/* Thread homes may be set: the configuration asks for them, and
	 * the kernel keeps soft-dirty bits (probed once, live only). */
	bool thread_homes;
	bool thread_homes_logged; /* a sample refused was explained */
	struct engine_move {
		int pid; /* 0: a free slot */
		uint64_t start_ticks;
		char comm[NP_COMM_MAX];
		bool narrowed;	/* its threads got the home's mask with it */
		bool threads;	/* its threads' own memory, each to its node */
		uint64_t at_ms; /* the tick that started it */
		/* The policy's next history, committed when the move has
		 * moved pages: as a tick commits a move made in it. */
		struct np_policy_history next;
	} moving[NP_MOVES_MAX];

	bool (*should_stop)(void *data);
	void *stop_data;
	np_engine_observer_fn observer;
	void *observer_data;
	np_sample_lookup_fn sample_lookup;
	void *sample_data;
	struct np_sample_rng rng;
};

/* How a tick runs: the daemon's, or the report's one look. */
struct tick_opts {
	bool look_once;		/* every shown task read, no budget, looks assumed */
	uint64_t min_rss_bytes; /* look_once: the tasks shown */
};

/* Whether a details read takes the threads' waits for a CPU: only where
 * the daemon places tasks, the one place they count (a task let run on
 * more nodes, poke_repinned). */
static bool reads_waits(const struct np_engine *engine)
{
	return engine->cfg.affinity == NP_AFFINITY_UNPINNED;
}

/* The list the scheduler plans with this tick. */
static int read_details(void *data, unsigned index)
{
	struct np_engine *engine = data;

	return np_task_read_details_of(engine->ctx, &engine->planned->tasks[index],
				       reads_waits(engine));
}

/* A task whose pages move off the loop now. */
static bool moving_task(void *data, const struct np_task *task)
{
	const struct np_engine *engine = data;

	return np_actuator_task_moving(engine->act, task->pid, task->start_ticks);
}

/* What the engine keeps of the move of @task started off the loop: the
 * slot it has, or a free one for it (the actuator runs no more moves than
 * there are slots). */
static struct engine_move *move_slot(struct np_engine *engine, const struct np_task *task)
{
	struct engine_move *free_slot = NULL;

	for (unsigned i = 0; i < NP_MOVES_MAX; i++) {
		struct engine_move *m = &engine->moving[i];

		if (m->pid == task->pid && m->start_ticks == task->start_ticks)
			return m;
		if (!m->pid && !free_slot)
			free_slot = m;
	}
	if (free_slot) {
		*free_slot = (struct engine_move){.pid = task->pid, .start_ticks = task->start_ticks};
		memcpy(free_slot->comm, task->comm, sizeof(free_slot->comm));
	}
	return free_slot;
}

/* A record stands in as unchanged for at most this many
 * scan_period_max_ms (an hour by default): a task whose runs all fell
 * between samples is read again all the same. */
#define UNCHANGED_MAX_PERIODS 60

/* Whether a task listed at the last tick may keep its record: not when
 * the tick reads all (a one-shot look, a recording); as it was for a task
 * the scheduler wants no figures of now; as unchanged for one it wants
 * figures of that has not run since its last read, which samples would
 * have seen. The source asks in pid order, the state table's. A read is
 * recorded when the scan has made it (np_state_table_sync). */
static enum np_task_keep keep_record(void *data, int pid, uint64_t start_ticks)
{
	struct np_engine *engine = data;
	const struct np_task_state *ts;
	uint64_t now = engine->keep_now_ms;

	if (engine->read_all)
		return NP_TASK_READ;
	ts = np_state_table_find_next(&engine->states, pid, start_ticks, &engine->keep_cursor);
	if (!ts)
		return NP_TASK_READ;
	if (!np_sched_needs_read(&ts->sched, now))
		return NP_TASK_KEEP;
	/* What the children of a narrowed task used shows in its stat when
	 * it reaps them, a moment no sample may catch: it is read. */
	if (ts->hist && ts->hist->narrowed)
		return NP_TASK_READ;
	if ((engine->run_sampler || engine->runs_drain) && !ts->ran &&
	    ts->read_ms >= engine->runs_since_ms &&
	    now - ts->read_ms < UNCHANGED_MAX_PERIODS * engine->cfg.scan_period_max_ms)
		return NP_TASK_KEEP_UNCHANGED;
	return NP_TASK_READ;
}

/* A process a CPU sample found running: the states of its pid (a reused
 * pid marks the old one too, which costs it one read). One that ran needs
 * its stat read when its next read comes, quiet or not. */
static void note_run(void *data, int pid)
{
	struct np_engine *engine = data;
	struct np_state_table *t = &engine->states;

	for (unsigned i = np_state_table_first_of(t, pid); i < t->nr && t->v[i].pid == pid; i++) {
		t->v[i].ran = true;
		if (t->v[i].sched.next_read_ms < engine->quiet_until_ms) {
			engine->quiet_until_ms = t->v[i].sched.next_read_ms;
			engine->quiet_until_pid = pid;
		}
	}
}

/*
 * When the next tick cannot be quiet because of a task: the earliest next
 * read of one the plan could pick (as big as min_rss_mb: whether or not
 * it ran, it may be due a look with CPU used before its last read, or be
 * waiting for budget or for a move to end), of one that ran since its
 * last read, and of one read before samples were last lost (it may have
 * run unseen); and the earliest read a kept record's hour forces (at its
 * next read after the hour). A small task that did not run waits: read,
 * its record would stand in as unchanged, and what the plan would find
 * of it (too small) it finds at the next tick that scans. A pass over the
 * table at a tick that scanned.
 */
static void set_quiet_until(struct np_engine *engine)
{
	uint64_t until = UINT64_MAX, hour = UNCHANGED_MAX_PERIODS * engine->cfg.scan_period_max_ms;
	uint64_t pickable_bytes = engine->cfg.min_rss_mb << 20;
	int pid = 0;

	for (unsigned i = 0; i < engine->states.nr; i++) {
		const struct np_task_state *st = &engine->states.v[i];
		uint64_t next = st->sched.next_read_ms;

		if (!(st->ran || st->read_ms < engine->runs_since_ms ||
		      st->sched.rss_bytes >= pickable_bytes) &&
		    next < st->read_ms + hour)
			next = st->read_ms + hour;
		if (next < until) {
			until = next;
			pid = st->pid;
		}
	}
	engine->quiet_until_ms = until;
	engine->quiet_until_pid = pid;
}

/* Open, or open again, the sampler of which processes run, for the CPUs
 * online (those /proc/stat listed at the last tick; before the first, the
 * nodes' CPUs) at the configured rate, sized for the tick; close it when
 * the rate is 0. Where it cannot be had, tasks are read as without it.
 * Before the tick's reads, which it can vouch for. */
static void sync_run_sampler(struct np_engine *engine, uint64_t now_ms)
{
	unsigned hz = engine->want_runs ? engine->cfg.run_sample_hz : 0;
	struct np_bitmap cpus = *np_task_source_cpus_seen(engine->src);
	int err;

	if (engine->runs_drain)
		return;
	if (np_bitmap_empty(&cpus))
		for (unsigned n = 0; n < engine->topo->nr_nodes; n++)
			np_bitmap_or(&cpus, &cpus, &engine->topo->nodes[n].cpus);
	if (engine->run_sampler && engine->runs_hz == hz &&
	    engine->runs_tick_ms == engine->cfg.tick_ms &&
	    np_bitmap_equal(np_run_sampler_cpus(engine->run_sampler), &cpus))
		return;
	np_run_sampler_close(engine->run_sampler);
	engine->run_sampler = NULL;
	if (!hz)
		return;
	err =
	    np_run_sampler_open(engine->ctx, &cpus, hz, engine->cfg.tick_ms, &engine->run_sampler);
	if (err) {
		if (!engine->runs_logged)
			np_log(engine->ctx, LOG_INFO,
			       "CPU samples: %s%s; small and idle tasks are read again at each "
			       "wait's end",
			       strerror(-err),
			       err == -EPERM || err == -EACCES ? " (CAP_PERFMON is needed)" : "");
		engine->runs_logged = true;
		engine->want_runs = false; /* not tried again at every tick */
		return;
	}
	engine->runs_hz = hz;
	engine->runs_tick_ms = engine->cfg.tick_ms;
	engine->runs_since_ms = now_ms;
}

/* The process connector, or why not (the fallback lists /proc each tick). */
static void follow_task_events(struct np_engine *engine)
{
	struct np_proc_events *events;
	int err = np_proc_events_open(engine->ctx, &events);

	if (err) {
		np_log(engine->ctx, LOG_INFO,
		       "process events: %s%s; /proc is listed at every cycle", strerror(-err),
		       err == -EPERM ? " (CAP_NET_ADMIN is needed)" : "");
		return;
	}
	np_task_source_use_events(engine->src, events, engine->cfg.scan_period_max_ms);
	np_log(engine->ctx, LOG_DEBUG, "process events: following the process connector");
}

int np_engine_task_events_fd(const struct np_engine *engine)
{
	return np_task_source_events_fd(engine->src);
}

int np_engine_take_task_events(struct np_engine *engine)
{
	return np_task_source_take_events(engine->src);
}

void np_engine_stop_task_events(struct np_engine *engine)
{
	engine->scanned = false;
	np_task_source_stop_events(engine->src);
}

int np_engine_new(const struct np_engine_params *params, const struct np_config *cfg,
		  struct np_engine **out)
{
	struct np_engine *engine = calloc(1, sizeof(*engine));
	struct np_actuator_params aparams;
	struct np_topology *topo = NULL;
	int err;

	if (!engine) {
		np_proc_events_close(params->events);
		return -ENOMEM;
	}
	engine->ctx = params->ctx;
	engine->clock = params->clock;
	engine->dry_run = params->dry_run;
	engine->should_stop = params->should_stop;
	engine->moves_off_loop = params->moves_off_loop;
	engine->want_runs = params->run_samples;
	engine->runs_drain = params->runs_drain;
	engine->runs_data = params->runs_data;
	engine->stop_data = params->stop_data;
	engine->sample_lookup =
	    params->sample_lookup ? params->sample_lookup : np_sample_lookup_kernel;
	engine->sample_data = params->sample_data;
	engine->rng.state = np_clock_now_ms(engine->clock) ^ (uint64_t)getpid() << 32;
	np_config_init(&engine->cfg);
	err = np_config_copy(&engine->cfg, cfg);
	if (!err)
		err = np_sched_new(&engine->cfg, engine->clock, &engine->sched);
	if (!err)
		err = np_filter_new(&engine->cfg, &engine->filter);
	if (err)
		goto fail;
	if (np_ctx_is_live(engine->ctx))
		np_filter_set_self(engine->filter, getpid());
	np_sched_set_filter(engine->sched, engine->filter, read_details, engine);
	np_sched_set_busy(engine->sched, moving_task, engine);
	err = np_task_source_new(engine->ctx, &engine->src);
	if (!err) {
		np_task_source_set_keep(engine->src, keep_record, engine);
		if (params->events)
			np_task_source_use_events(engine->src, params->events,
						  engine->cfg.scan_period_max_ms);
		else if (params->task_events)
			follow_task_events(engine);
		err = np_memory_reader_new(&engine->reader);
	}
	if (!err)
		err = np_topology_read(engine->ctx, &topo);
	if (err)
		goto fail;
	err = np_stats_new(topo, &engine->stats);
	np_topology_free(topo);
	if (err)
		goto fail;
	np_actuator_params_init(&aparams);
	aparams.migrate_rate_mb_s = engine->cfg.migrate_rate_mb_s;
	aparams.movers = engine->cfg.migrate_threads;
	aparams.moves = engine->cfg.migrate_tasks;
	aparams.should_stop = params->should_stop;
	aparams.stop_data = params->stop_data;
	err = engine->dry_run
		  ? np_actuator_new_dry(engine->ctx, engine->stats, &aparams, &engine->act)
		  : np_actuator_new_real(engine->ctx, engine->stats, &aparams, &engine->act);
	if (err)
		goto fail;
	if (!engine->dry_run && np_ctx_is_live(engine->ctx)) {
		int probe = np_writers_probe();

		engine->thread_homes = !probe;
		if (probe)
			np_log(engine->ctx, LOG_INFO,
			       "no thread homes: the kernel keeps no soft-dirty bits (%s)",
			       strerror(-probe));
	}
	*out = engine;
	return 0;
fail:
	if (!engine->src)
		np_proc_events_close(params->events); /* taken over all the same */
	np_engine_free(engine);
	return err;
}

void np_engine_free(struct np_engine *engine)
{
	if (!engine)
		return;
	np_run_sampler_close(engine->run_sampler);
	np_state_table_clear(&engine->states);
	np_task_list_clear(&engine->list);
	np_topology_free(engine->topo);
	np_topology_free(engine->decided.topo);
	free(engine->decided.load);
	free(engine->decided.plan);
	np_actuator_free(engine->act);
	np_stats_free(engine->stats);
	np_memory_reader_free(engine->reader);
	np_task_source_free(engine->src);
	np_sched_free(engine->sched);
	np_filter_free(engine->filter);
	np_config_free(&engine->cfg);
	free(engine);
}

static void set_movers(struct np_engine *engine, unsigned movers)
{
	/* Out of memory for a mover's buffers: the movers before stay. */
	if (np_actuator_set_movers(engine->act, movers) < 0)
		np_log(engine->ctx, LOG_WARNING,
		       "migrate_threads %u: no memory for the movers; keeping the ones there are",
		       movers);
}

int np_engine_set_config(struct np_engine *engine, const struct np_config *cfg)
{
	struct np_config copy;
	struct np_filter *filter = NULL;
	int err;

	np_config_init(&copy);
	err = np_config_copy(&copy, cfg);
	if (!err)
		err = np_filter_new(&copy, &filter);
	if (!err && np_ctx_is_live(engine->ctx))
		np_filter_set_self(filter, getpid());
	/* The scheduler checks the settings it needs: the last step that can
	 * refuse, so nothing is half applied. */
	if (!err)
		err = np_sched_set_config(engine->sched, &copy);
	if (err) {
		np_filter_free(filter);
		np_config_free(&copy);
		return err;
	}
	np_sched_set_filter(engine->sched, filter, read_details, engine);
	np_filter_free(engine->filter);
	engine->filter = filter;
	/* A new rate starts with a full second of budget: only a change of
	 * it may refill the bucket, or SIGHUPs would lift the limit. */
	if (copy.migrate_rate_mb_s != engine->cfg.migrate_rate_mb_s)
		np_actuator_set_rate(engine->act, copy.migrate_rate_mb_s);
	/* The moves in flight keep their movers until they end. */
	set_movers(engine, copy.migrate_threads);
	np_actuator_set_moves(engine->act, copy.migrate_tasks);
	np_config_free(&engine->cfg);
	engine->cfg = copy;
	np_task_source_set_resync(engine->src, copy.scan_period_max_ms);
	for (unsigned i = 0; i < engine->states.nr; i++)
		np_sched_task_reload(engine->sched, &engine->states.v[i].sched);
	engine->scanned = false; /* the filter and the periods may differ */
	return 0;
}

struct np_stats *np_engine_stats(struct np_engine *engine)
{
	return engine->stats;
}

const struct np_sched_counters *np_engine_sched_counters(const struct np_engine *engine)
{
	return np_sched_counters(engine->sched);
}

void np_engine_set_observer(struct np_engine *engine, np_engine_observer_fn fn, void *data)
{
	engine->observer = fn;
	engine->observer_data = data;
}

const struct np_engine_tick_cpu *np_engine_tick_cpu(const struct np_engine *engine)
{
	return &engine->tick_cpu;
}

unsigned np_engine_tracked(const struct np_engine *engine)
{
	return engine->states.nr;
}

int np_engine_give_back_all(struct np_engine *engine, unsigned *restored, unsigned *left)
{
	unsigned done = 0, failed = 0;

	/* Their pages first: the stop ends the calls at the next batch. */
	np_engine_finish_moves(engine, true);

	for (unsigned i = 0; i < engine->states.nr; i++) {
		struct np_task_state *st = &engine->states.v[i];
		struct np_affinity_result res;
		struct np_task task = {.pid = st->pid, .start_ticks = st->start_ticks};
		int err;

		if (st->th) {
			unsigned threads = 0;
			struct np_th_env env = {
			    .ctx = engine->ctx, .act = engine->act, .topo = engine->topo};

			np_backoff_succeeded(&st->act.backoff);
			err = np_thread_homes_give_back(&env, st->th, &st->act, st->pid,
							st->start_ticks, &threads);
			if (err) {
				failed++;
				np_log(engine->ctx, LOG_WARNING,
				       "pid %d: giving its threads their CPU mask back: %s", st->pid,
				       strerror(-err));
			} else {
				done += threads > 0;
			}
			/* What could not be given back stays, for the masks
			 * file and the next start. */
			if (!st->th->nr) {
				np_thread_homes_free(st->th);
				st->th = NULL;
			}
		}
		if (!st->hist || !st->hist->narrowed)
			continue;
		/* A stop is no time to wait out a backoff. */
		np_backoff_succeeded(&st->act.backoff);
		err =
		    np_actuator_set_affinity(engine->act, &st->act, &task, &st->hist->narrowed_cpus,
					     &st->hist->cpus_before, &res);
		if (!err || err == -ESRCH) {
			/* Gone: its mask went with it. */
			st->hist->narrowed = false;
			st->hist->home_node = -1;
			done += !err;
		} else {
			failed++;
			np_log(engine->ctx, LOG_WARNING, "pid %d: giving its CPU mask back: %s",
			       st->pid, strerror(-err));
		}
		np_affinity_result_clear(&res);
	}
	np_stats_add_given_back(engine->stats, done);
	if (restored)
		*restored = done;
	if (left)
		*left = failed;
	return 0;
}

int np_engine_saved_masks(const struct np_engine *engine, struct np_saved_mask **out, size_t *n)
{
	struct np_saved_mask *v;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	for (unsigned i = 0; i < engine->states.nr; i++) {
		k += engine->states.v[i].hist && engine->states.v[i].hist->narrowed;
		k += engine->states.v[i].th ? engine->states.v[i].th->nr : 0;
	}
	if (!k)
		return 0;
	v = calloc(k, sizeof(*v));
	if (!v)
		return -ENOMEM;
	k = 0;
	for (unsigned i = 0; i < engine->states.nr; i++) {
		const struct np_task_state *st = &engine->states.v[i];

		/* A thread under its own id and start time: restoring it gives
		 * back every thread of its process still on that mask. */
		for (unsigned j = 0; st->th && j < st->th->nr; j++)
			v[k++] = (struct np_saved_mask){.pid = st->th->v[j].tid,
							.start_ticks = st->th->v[j].start_ticks,
							.before = st->th->before,
							.narrowed = st->th->v[j].cpus};
		if (!st->hist || !st->hist->narrowed)
			continue;
		v[k++] = (struct np_saved_mask){.pid = st->pid,
						.start_ticks = st->start_ticks,
						.before = st->hist->cpus_before,
						.narrowed = st->hist->narrowed_cpus};
	}
	*out = v;
	*n = k;
	return 0;
}

/* The start time in the stat of @path under the root. */
static int read_start(struct np_engine *engine, const char *path, int *pid, uint64_t *start)
{
	struct np_stat st;
	char *buf;
	size_t len;
	int err = np_ctx_read_file(engine->ctx, path, 4096, &buf, &len);

	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_stat_parse(buf, len, &st);
	free(buf);
	if (!err) {
		*pid = st.pid;
		*start = st.start_ticks;
	}
	return err;
}

/*
 * A saved entry names a thread under its own id when thread homes set its
 * mask: the process it is a thread of, as the task to act on, into @owner.
 * Returns 0 for a thread (the same one: its start time checked), 1 for an
 * entry that names a process, -ESRCH when it is gone, or -errno.
 */
static int saved_thread_owner(struct np_engine *engine, const struct np_saved_mask *m,
			      struct np_task *owner)
{
	char path[64], *buf, *line;
	size_t len;
	uint64_t start;
	long tgid = 0;
	int pid, err;

	snprintf(path, sizeof(path), "proc/%d/status", m->pid);
	err = np_ctx_read_file(engine->ctx, path, 1u << 20, &buf, &len);
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	line = strstr(buf, "\nTgid:");
	if (line)
		tgid = strtol(line + 6, NULL, 10);
	free(buf);
	if (tgid <= 0 || tgid > INT_MAX)
		return -EINVAL;
	if (tgid == m->pid)
		return 1;
	snprintf(path, sizeof(path), "proc/%ld/task/%d/stat", tgid, m->pid);
	err = read_start(engine, path, &pid, &start);
	if (!err && start != m->start_ticks)
		err = -ESRCH;
	snprintf(path, sizeof(path), "proc/%ld/stat", tgid);
	if (!err)
		err = read_start(engine, path, &owner->pid, &owner->start_ticks);
	return err;
}

int np_engine_give_back_saved(struct np_engine *engine, const struct np_saved_mask *v, size_t n,
			      unsigned *restored)
{
	unsigned done = 0;

	for (size_t i = 0; i < n; i++) {
		struct np_task task = {.pid = v[i].pid, .start_ticks = v[i].start_ticks};
		struct np_affinity_result res;
		struct np_act_task at;
		int err;

		np_act_task_init(&at);
		/* A thread's entry (thread homes): through its process. */
		err = saved_thread_owner(engine, &v[i], &task);
		if (err == 1)
			err = np_actuator_set_affinity(engine->act, &at, &task, &v[i].narrowed,
						       &v[i].before, &res);
		else if (!err)
			/* Every thread still on that mask: it, and those it
			 * started since, which inherited it. */
			err = np_actuator_set_affinity(engine->act, &at, &task, &v[i].narrowed,
						       &v[i].before, &res);
		else
			memset(&res, 0, sizeof(res));
		if (!err && res.counts[NP_THREAD_NARROWED])
			done++;
		else if (err && err != -ESRCH)
			np_log(engine->ctx, LOG_WARNING,
			       "pid %d: giving back its saved CPU mask: %s", v[i].pid,
			       strerror(-err));
		np_affinity_result_clear(&res);
		np_act_task_release(&at);
	}
	np_stats_add_given_back(engine->stats, done);
	*restored = done;
	return 0;
}

const struct np_action_record *np_engine_dry_records(const struct np_engine *engine, unsigned *nr)
{
	return np_actuator_records(engine->act, nr);
}

static int read_kernel_balancing(struct np_ctx *ctx)
{
	char *buf;
	size_t len;
	int v = -1;

	if (np_ctx_read_file(ctx, "proc/sys/kernel/numa_balancing", 64, &buf, &len) == 0) {
		char *end;
		long n = strtol(buf, &end, 10);

		if (end != buf && n >= 0 && n <= 255)
			v = (int)n;
		free(buf);
	}
	return v;
}

/* A count of clock ticks, @now against @last (the last look's; since start
 * at the first), in percent of one CPU. */
static double ticks_percent(const struct np_task_state *st, const struct np_task *task,
			    uint64_t now, uint64_t last, unsigned ticks_per_s, uint64_t now_ms)
{
	uint64_t ticks, ms;

	if (st->looked) {
		/* A count that went back (it cannot, but /proc is read twice)
		 * counts from zero. */
		ticks = now >= last ? now - last : now;
		ms = now_ms - st->last_look_ms;
	} else {
		ticks = now;
		ms = task->age_ms;
	}
	if (!ms || !ticks_per_s)
		return 0;
	return (double)ticks * 1000.0 * 100.0 / (double)ticks_per_s / (double)ms;
}

/* CPU used since the last look (since start at the first), in percent of one
 * CPU. */
static double cpu_percent(const struct np_task_state *st, const struct np_task *task,
			  unsigned ticks_per_s, uint64_t now_ms)
{
	return ticks_percent(st, task, task->cpu_ticks, st->last_cpu_ticks, ticks_per_s, now_ms);
}

/* The same for what the children it waited for used meanwhile. */
static double child_cpu_percent(const struct np_task_state *st, const struct np_task *task,
				unsigned ticks_per_s, uint64_t now_ms)
{
	return ticks_percent(st, task, task->child_cpu_ticks, st->last_child_cpu_ticks,
			     ticks_per_s, now_ms);
}

/* Whether the children it waited for used NP_HOME_MIN_CPU_PERCENT since
 * its last look: remembered with the time, for the policy's hold, before
 * the window moves on (np_policy_task.launched). */
static void note_launch(struct np_task_state *st, const struct np_task *task,
			unsigned ticks_per_s, uint64_t now_ms)
{
	if (child_cpu_percent(st, task, ticks_per_s, now_ms) >= NP_HOME_MIN_CPU_PERCENT) {
		st->launched = true;
		st->launched_ms = now_ms;
	}
}

/* Its threads' waits for a CPU as @task's read gave them, for the next
 * look (wait_percent); none kept from a read without them (a scan's stat
 * alone, a kernel without schedstat) or of one thread (its demand is a
 * CPU at most, whatever it waited). */
static void keep_waits(struct np_task_state *st, const struct np_task *task)
{
	unsigned n = task->has_details && task->has_wait ? task->nr_thread_samples : 0;
	struct np_thread_wait *w = NULL;

	st->wait_known = false;
	if (n > 1 && n != st->nr_waits) {
		w = realloc(st->waits, n * sizeof(*w));
		if (!w)
			return; /* not known: a re-pin waits for a window */
		st->waits = w;
	}
	if (n < 2)
		return;
	for (unsigned i = 0; i < n; i++)
		st->waits[i] = (struct np_thread_wait){task->threads[i].tid, task->threads[i].wait_ns};
	st->nr_waits = n;
	st->wait_known = true;
}

/* Its threads' wait for a CPU since its last look, in percent of one CPU:
 * each thread's since then (one started since: all of its), threads
 * gone since not counted; 0 when either read lacks them. Both lists are
 * in tid order. */
static double wait_percent(const struct np_task_state *st, const struct np_task *task,
			   uint64_t now_ms)
{
	uint64_t ms = now_ms - st->last_look_ms, waited = 0;
	unsigned k = 0;

	if (!st->looked || !st->wait_known || !task->has_details || !task->has_wait || !ms)
		return 0;
	for (unsigned i = 0; i < task->nr_thread_samples; i++) {
		const struct np_thread *t = &task->threads[i];

		while (k < st->nr_waits && st->waits[k].tid < t->tid)
			k++;
		if (k < st->nr_waits && st->waits[k].tid == t->tid)
			waited += t->wait_ns > st->waits[k].wait_ns ? t->wait_ns - st->waits[k].wait_ns : 0;
		else
			waited += t->wait_ns;
	}
	return (double)waited / 1e6 * 100.0 / (double)ms;
}

/* Where the next look's CPU windows start: called before last_look_ms and
 * looked are set for this look. */
static void note_cpu_read(struct np_task_state *st, const struct np_task *task,
			  unsigned ticks_per_s, uint64_t now_ms)
{
	note_launch(st, task, ticks_per_s, now_ms);
	st->last_cpu_ticks = task->cpu_ticks;
	st->last_child_cpu_ticks = task->child_cpu_ticks;
	keep_waits(st, task);
}

struct tick {
	const struct tick_opts *opts;
	uint64_t now_ms;
	struct np_task_list *list; /* the engine's */
	struct np_sched_plan plan;
	struct np_snapshot *snap;
	/* The snapshot entries read for a decision, and their states. */
	unsigned *picked_entry;
	struct np_task_state **picked_state;
	uint64_t *picked_bytes; /* numa_maps bytes read for each */
	unsigned nr_picked;
	bool quiet; /* nothing listed: tick_is_quiet */
};

static void tick_clear(struct tick *t)
{
	np_task_list_reset(t->list);
	np_sched_plan_free(&t->plan);
	free(t->picked_entry);
	free(t->picked_state);
	free(t->picked_bytes);
}

static struct np_policy_machine machine_of(const struct np_engine *engine, const struct tick *t)
{
	return (struct np_policy_machine){
	    .topo = t->snap->topo,
	    .node_busy = t->snap->node_load,
	    .kernel_numa_balancing = t->snap->kernel_numa_balancing > 0,
	    .filter = engine->filter,
	    .one_look = t->opts->look_once,
	    .now_ms = t->now_ms,
	};
}

/* The plan's memos of the tasks not decided at this tick (shallow copies:
 * the states own them). Returns NULL on -ENOMEM (and none: an empty array). */
static struct np_plan_memo *known_memos(const struct np_engine *engine, const struct tick *t,
					size_t *nr)
{
	struct np_plan_memo *known = calloc(engine->states.nr + 1, sizeof(*known));
	bool *picked = calloc(engine->states.nr + 1, sizeof(*picked));

	*nr = 0;
	if (!known || !picked) {
		free(known);
		free(picked);
		return NULL;
	}
	/* The picked states are entries of the table: marked by index, once. */
	for (unsigned p = 0; p < t->nr_picked; p++)
		picked[t->picked_state[p] - engine->states.v] = true;
	for (unsigned i = 0; i < engine->states.nr; i++)
		if (engine->states.v[i].memo.nr_nodes && !picked[i])
			known[(*nr)++] = engine->states.v[i].memo;
	free(picked);
	return known;
}

static struct np_policy_task policy_task(const struct np_snap_task *e, double cpu, double wait,
					 const struct np_task_state *st)
{
	return (struct np_policy_task){
	    .task = &e->task,
	    .node_bytes = e->mem.movable_bytes,
	    .all_node_bytes = e->mem.node_bytes,
	    .nr_node_slots = e->mem.nr_node_slots,
	    .policy_bytes = e->mem.policy_bytes,
	    .shared_file_bytes = e->mem.shared_file_bytes,
	    .cpu_percent = cpu,
	    .wait_percent = wait,
	    .launched = st && st->launched,
	    .launched_ms = st ? st->launched_ms : 0,
	    .hist = st ? st->hist : NULL,
	    .share_keys = e->share_keys,
	    .nr_share_keys = e->nr_share_keys,
	};
}

/* A hash of the nodes whose CPUs @pid's main thread may run on now, never
 * 0; 0 when they cannot be had. Nodes, not CPUs: a re-pin within a node
 * (or a CPU going offline) moves no memory. @nr_nodes (may be NULL): how
 * many nodes those are. */
static uint64_t nodes_hash_now(struct np_engine *engine, const struct np_topology *topo, int pid,
			       unsigned *nr_nodes)
{
	struct np_bitmap mask;
	struct np_nodeset nodes;
	uint64_t h = 0xcbf29ce484222325ull;

	if (np_task_cpus_now(engine->ctx, pid, &mask))
		return 0;
	np_nodeset_zero(&nodes);
	np_bitmap_for_each(cpu, &mask)
	{
		int node = np_topology_cpu_node(topo, cpu);

		if (node >= 0)
			np_nodeset_set(&nodes, (unsigned)node);
	}
	for (size_t i = 0; i < sizeof(nodes.w) / sizeof(nodes.w[0]); i++)
		h = (h ^ nodes.w[i]) * 0x100000001b3ull;
	if (nr_nodes)
		*nr_nodes = np_nodeset_weight(&nodes);
	return h | 1;
}

/*
 * A task already looked at whose CPUs are not on the nodes its last look
 * left them on (its user pinned it elsewhere, or unpinned it; a program
 * that pins itself to allocate and then lets go does the same) is due a
 * shortest period from now, its CPU use measured from the first such
 * change since its last look (np_sched_task_poke): its memory follows
 * within seconds, not when a period of up to a minute ends. One its user
 * gave CPUs on more than one node (when the daemon places tasks, affinity
 * = unpinned) needs its demand judged by what it would use, not by what
 * the old mask let it: with its threads' wait for a CPU known at its last
 * look, it is due now, its demand its use and that wait since (a task
 * squeezed onto one node's CPUs beside another shows half a CPU a thread
 * used and half waited: a CPU a thread); without (a kernel with no
 * schedstat), or within scan_period_max_ms of the last change so looked
 * at, it waits a shortest period, whatever its period said, to be judged
 * by how it runs on its new CPUs. One pinned to a node needs no
 * such window (its memory follows its threads, whatever it uses), and is
 * looked at when its period ends, if sooner. One sched_getaffinity a
 * looked-at task; a reused pid only makes its old state due before the
 * sync lets it go.
 */
static unsigned poke_repinned(struct np_engine *engine, const struct np_topology *topo,
			      uint64_t now_ms)
{
	unsigned poked = 0;

	for (unsigned i = 0; i < engine->states.nr; i++) {
		struct np_task_state *st = &engine->states.v[i];
		unsigned nodes = 0;
		uint64_t now;
		bool hold;

		if (!st->cpus_hash)
			continue;
		now = nodes_hash_now(engine, topo, st->pid, &nodes);
		if (!now || now == st->cpus_hash)
			continue;
		hold = nodes > 1 && engine->cfg.affinity == NP_AFFINITY_UNPINNED;
		/* At once, once a longest period at most: a task re-pinned
		 * at every tick is not walked at every tick (the window's
		 * pokes put its look off instead). */
		if (hold && st->wait_known &&
		    (!st->repinned_now_ms ||
		     now_ms - st->repinned_now_ms >= engine->cfg.scan_period_max_ms)) {
			st->repinned_now_ms = now_ms;
			np_log(engine->ctx, LOG_DEBUG,
			       "pid %d: its CPUs changed since its last look: due now", st->pid);
			np_sched_task_poke_now(engine->sched, &st->sched);
			st->repinned_now = true;
		} else {
			st->repinned_now = false;
			np_log(engine->ctx, LOG_DEBUG,
			       "pid %d: its CPUs changed since its last look: due soon", st->pid);
			if (np_sched_task_poke(engine->sched, &st->sched, hold))
				st->repinned = true;
		}
		st->cpus_hash = now;
		st->must_read = true;
		poked++;
	}
	return poked;
}

/*
 * Read the machine again: every node's CPUs, free memory and distances, and
 * the kernel's balancing sysctl. A tick does it only when it reads a task
 * (its numa_maps, or a sampled look, which needs each CPU's node); one that
 * reads a few tasks' stat or none, as most do, works with the last figures.
 * On the host such a tick opened some 22 files and now opens one (uptime);
 * in the 2-node guest's no-work scenarios the cycles' CPU fell by 10-25%
 * (docs/benchmarks-repeated.md).
 */
static int read_machine(struct np_engine *engine)
{
	struct np_topology *topo = NULL;
	int err = np_topology_read(engine->ctx, &topo);

	if (err)
		return err;
	np_topology_free(engine->topo);
	engine->topo = topo;
	engine->kernel_numa_balancing = read_kernel_balancing(engine->ctx);
	return 0;
}

/* The plan counted its picks as read. A tick that fails before reading
 * them reports them failed, so that each is tried again after a back-off,
 * as after a failed read, and not only when its next period ends. */
static void picks_failed(struct np_engine *engine, const struct tick *t)
{
	for (unsigned p = 0; p < t->plan.nr_picks; p++) {
		unsigned i = t->plan.picks[p];

		np_sched_done(engine->sched, &engine->states.v[i].sched, &t->list->tasks[i], 0,
			      NP_SCAN_FAILED);
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPUs that threads other than the daemon's kept busy since the last
 * tick (the nodes' busy share, less the daemon's own CPU time over the
 * same time: its loop's and its movers'), for the movers of the moves it
 * starts (np_actuator_set_load). */
static void load_to_actuator(struct np_engine *engine, const struct np_snapshot *snap)
{
	uint64_t cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall_ns = clock_ns(CLOCK_MONOTONIC);
	double busy = 0, own = 0;
	unsigned cpus = 0;

	for (unsigned i = 0; i < snap->topo->nr_nodes; i++) {
		busy += snap->node_load[i] * snap->topo->nodes[i].nr_cpus;
		cpus += snap->topo->nodes[i].nr_cpus;
	}
	if (engine->load_wall_ns && wall_ns > engine->load_wall_ns && cpu_ns >= engine->load_cpu_ns)
		own = (double)(cpu_ns - engine->load_cpu_ns) / (double)(wall_ns - engine->load_wall_ns);
	engine->load_cpu_ns = cpu_ns;
	engine->load_wall_ns = wall_ns;
	np_actuator_set_load(engine->act, busy > own ? busy - own : 0, cpus);
}

/* The nodes as last read, and their CPUs' use since the last tick, into
 * the snapshot: at every tick, so that a tick that decides plans with the
 * load of the last second, not of the time since the last decision. */
static int snap_machine(struct np_engine *engine, struct np_snapshot *snap)
{
	int err = np_topology_copy(engine->topo, &snap->topo);

	snap->kernel_numa_balancing = engine->kernel_numa_balancing;
	if (!err && !(snap->node_load = calloc(snap->topo->nr_nodes + 1, sizeof(double))))
		err = -ENOMEM;
	if (!err)
		err = np_task_source_node_load(engine->src, snap->topo, snap->node_load);
	if (!err)
		load_to_actuator(engine, snap);
	return err;
}

/*
 * A quiet tick: no task a scan would read is due (set_quiet_until: one
 * that ran, one big enough to be picked, one read before samples were
 * lost, a record past its hour), the connector says no process came,
 * went or changed that a scan would read (np_task_source_owes_scan), no
 * task was re-pinned, no move is in flight, and samples were lost
 * nowhere: a scan would keep every record, and the plan find what the
 * last one found.
 * Such a tick takes the CPUs' use of the last second and counts the tasks
 * passed over under the last verdicts; its snapshot holds no task. On an
 * idle machine a tick then costs what the machine does, not how many
 * tasks it holds, as the kernel's balancing spends nothing on a task that
 * does not run. Without the connector or the samples, every tick scans.
 */
static bool tick_is_quiet(struct np_engine *engine, const struct tick *t, unsigned repinned)
{
	struct np_scan_owed owed = {0};

	if (!engine->scanned || engine->read_all || t->opts->look_once)
		return false;
	if (repinned)
		owed.why = "a task re-pinned";
	else if (!(engine->run_sampler || engine->runs_drain))
		owed.why = "no run samples";
	else if (engine->runs_since_ms == t->now_ms)
		owed.why = "run samples lost, or the sampler (re)opened";
	else if (t->now_ms >= engine->quiet_until_ms)
		owed = (struct np_scan_owed){"a task's read", engine->quiet_until_pid};
	else if (np_actuator_moving(engine->act, NULL, NULL, NULL))
		owed.why = "a move in flight";
	else if (!np_task_source_owes_scan(engine->src, t->now_ms - engine->scanned_ms, &owed))
		return true;
	/* Why quiet ticks end, for whoever wonders where the daemon's CPU
	 * goes. */
	if (owed.pid)
		np_log(engine->ctx, LOG_DEBUG, "tick scans: %s (pid %d)", owed.why, owed.pid);
	else
		np_log(engine->ctx, LOG_DEBUG, "tick scans: %s", owed.why);
	return false;
}

static int quiet_tick(struct np_engine *engine, struct tick *t)
{
	int err = snap_machine(engine, t->snap);

	t->quiet = true;
	t->snap->uptime_ms = engine->scanned_uptime_ms + (t->now_ms - engine->scanned_ms);
	if (err)
		return err;
	np_stats_add_skips(engine->stats, engine->last_skips);
	np_stats_add_quiet_tick(engine->stats);
	return 0;
}

/* Whether processes @st started may carry a mask the daemon set on it,
 * by a home of its own or of a thread: one stands, or was given back
 * lately (a child is first listed up to scan_delay_ms after its birth;
 * the period's margin covers the ticks). */
static bool task_home_handed(const struct np_engine *engine, const struct np_task_state *st,
			     uint64_t now_ms)
{
	const struct np_policy_history *h = st->hist;

	return h && (h->narrowed ||
		     (h->given_back_ms &&
		      now_ms - h->given_back_ms <=
			  engine->cfg.scan_delay_ms + engine->cfg.scan_period_min_ms));
}

static bool thread_homes_handed(const struct np_engine *engine, const struct np_task_state *st,
				uint64_t now_ms)
{
	const struct np_th_handed *h = st->th_handed;

	return h && (st->th || (h->given_back_ms &&
				now_ms - h->given_back_ms <=
				    engine->cfg.scan_delay_ms + engine->cfg.scan_period_min_ms));
}

static bool handed_down(const struct np_engine *engine, const struct np_task_state *st,
			uint64_t now_ms)
{
	return task_home_handed(engine, st, now_ms) || thread_homes_handed(engine, st, now_ms);
}

/* The nearest ancestor of list->tasks[@i] that may have handed it a mask
 * the daemon set, and that was there when it was born; NULL: none. The
 * walk goes up through processes that are new too, or that were given
 * such a mask back themselves (a shell's pipeline), a few generations at
 * most: a process listed before with a mask of its own stops it. */
static const struct np_task_state *narrowed_ancestor(const struct np_engine *engine,
						     const struct np_task_list *list, unsigned i,
						     uint64_t now_ms)
{
	const struct np_task *task = &list->tasks[i];
	int pid = task->ppid;

	for (unsigned depth = 0; depth < 8 && pid > 1 && pid != task->pid; depth++) {
		unsigned k = np_state_table_first_of(&engine->states, pid);
		const struct np_task_state *st = NULL;

		for (; k < engine->states.nr && engine->states.v[k].pid == pid; k++)
			if (engine->states.v[k].start_ticks <= task->start_ticks)
				st = &engine->states.v[k];
		if (!st)
			return NULL;
		if (handed_down(engine, st, now_ms))
			return st;
		k = (unsigned)(st - engine->states.v);
		if (!np_state_table_is_new(&engine->states, k) && !st->handed_back)
			return NULL;
		pid = list->tasks[k].ppid;
	}
	return NULL;
}

/* The mask @task has that a home of @from set, and into *@before the
 * one to give back; NULL: none. A thread's home set the mask of the
 * thread that started it, which the child's main thread still has: the
 * one of the masks its homes set that it has. */
static const struct np_bitmap *inherited_mask(struct np_engine *engine, const struct np_task *task,
					      const struct np_task_state *from, uint64_t now_ms,
					      const struct np_bitmap **before)
{
	bool task_home = task_home_handed(engine, from, now_ms);
	const struct np_bitmap *mask;
	struct np_bitmap cpus;

	if (!thread_homes_handed(engine, from, now_ms)) {
		*before = &from->hist->cpus_before;
		return &from->hist->narrowed_cpus;
	}
	if (np_actuator_thread_cpus(engine->act, task->pid, task->pid, &cpus))
		return NULL;
	if (task_home && np_bitmap_equal(&cpus, &from->hist->narrowed_cpus)) {
		*before = &from->hist->cpus_before;
		return &from->hist->narrowed_cpus;
	}
	mask = np_th_handed_find(from->th_handed, &cpus);
	*before = &from->th_handed->before;
	return mask;
}

/*
 * A process started by a task whose threads the daemon narrowed inherits
 * that mask (fork(2) copies it), and one started by a thread the daemon
 * gave a home of its own, that thread's. It is the daemon's doing, not
 * its user's, and the home behind it was planned for the parent alone: at
 * the tick that first lists it, the threads that still have the mask get
 * the one the parent had before. Its own looks place it from there, as any task
 * nobody pinned. Left alone: a child whose mask is another (someone set
 * it, or it was born before the parent was narrowed). Not so one the user
 * started pinned to exactly the home's CPUs (numactl --cpunodebind): that
 * cannot be told from an inherited mask, and it is widened too. Also
 * widened: a child the configuration excludes (the mask is still the
 * daemon's doing). Not found: a child whose parent exited before it was
 * listed (it is then the child of pid 1 or of a subreaper).
 */
static void give_back_inherited(struct np_engine *engine, const struct np_task_list *list,
				uint64_t now_ms)
{
	unsigned done = 0;

	if (!engine->ever_narrowed)
		return;
	for (unsigned i = 0; i < list->nr; i++) {
		const struct np_task *task = &list->tasks[i];
		const struct np_task_state *from;
		const struct np_bitmap *mask, *before;
		struct np_affinity_result res;
		int err;

		if (task->kthread || !np_state_table_is_new(&engine->states, i) ||
		    !(from = narrowed_ancestor(engine, list, i, now_ms)) ||
		    !(mask = inherited_mask(engine, task, from, now_ms, &before)))
			continue;
		err = np_actuator_set_affinity(engine->act, &engine->states.v[i].act, task, mask,
					       before, &res);
		if (!err && res.counts[NP_THREAD_NARROWED]) {
			char cpus[256];

			np_bitmap_format_list(before, cpus, sizeof(cpus));
			np_log(engine->ctx, LOG_INFO,
			       "pid %d (%s): inherited the CPUs the home of pid %d gave it: "
			       "back to CPUs %s",
			       task->pid, task->comm, from->pid, cpus);
			engine->states.v[i].handed_back = true;
			done++;
		} else if (err && err != -ESRCH) {
			np_log(engine->ctx, LOG_WARNING,
			       "pid %d (%s): giving back the CPU mask it inherited from pid %d: %s",
			       task->pid, task->comm, from->pid, strerror(-err));
		}
		np_affinity_result_clear(&res);
	}
	np_stats_add_given_back(engine->stats, done);
}

static int observe(struct np_engine *engine, struct tick *t)
{
	uint64_t skips[NP_REASON_COUNT] = {0};
	struct np_snapshot *snap = t->snap;
	bool machine_read = false;
	unsigned repinned = 0;
	int err;

	engine->read_all = t->opts->look_once || engine->observer;
	if (!engine->topo) {
		err = read_machine(engine);
		if (err)
			return err;
		machine_read = true;
	}
	/* Against the last figures: which nodes a task's CPUs are on changes
	 * only with a CPU's hot-plug, which this check sees once a tick that
	 * read a task has read the machine again. */
	if (!t->opts->look_once)
		repinned = poke_repinned(engine, engine->topo, t->now_ms);
	/* Who ran since the last tick, before the reads it spares. Samples
	 * lost: a task read before now may have run unseen. */
	if (engine->runs_drain ? engine->runs_drain(engine->runs_data, note_run, engine)
			       : engine->run_sampler &&
				     np_run_sampler_drain(engine->run_sampler, note_run, engine))
		engine->runs_since_ms = t->now_ms;
	if (!t->opts->look_once)
		sync_run_sampler(engine, t->now_ms);
	if (tick_is_quiet(engine, t, repinned))
		return quiet_tick(engine, t);
	engine->keep_cursor = 0;
	engine->keep_now_ms = t->now_ms;
	/* A process younger than scan_delay_ms is passed over: one the
	 * connector names is not even read until it is that old (a
	 * build's compilers come and go unread). A recording and a one-shot
	 * look see every task. */
	np_task_source_set_first_read_delay(engine->src,
					    engine->read_all ? 0 : engine->cfg.scan_delay_ms);
	err = np_task_source_scan(engine->src, t->list);
	if (err)
		return err;
	snap->uptime_ms = t->list->uptime_ms;
	np_stats_add_listing(engine->stats, t->list->listed_proc,
			     t->list->nr - t->list->nr_kept - t->list->nr_unchanged,
			     t->list->nr_kept, t->list->nr_unchanged);
	if (engine->observer) {
		err = engine->observer(engine->observer_data, t->list);
		if (err)
			return err;
	}
	/* The source lists tasks by pid, the order the state table keeps. */
	err = np_state_table_sync(&engine->states, t->list, engine->sched, t->now_ms);
	if (!err && !t->opts->look_once)
		give_back_inherited(engine, t->list, t->now_ms);
	if (!err) {
		engine->planned = t->list;
		err = np_sched_plan(engine->sched, t->list, engine->states.sched,
				    t->opts->look_once, &t->plan);
		engine->planned = NULL;
	}
	if (err)
		return err;
	/* A node that went away mid-read (a hot-plug) fails the read: the
	 * tick reads its tasks with the last figures, and the next look
	 * reads the machine again. */
	if (!machine_read && t->plan.nr_picks && (err = read_machine(engine)))
		np_log(engine->ctx, LOG_WARNING,
		       "cannot read the nodes again (%s): this cycle uses the last figures",
		       strerror(-err));
	err = snap_machine(engine, snap);
	if (err) {
		picks_failed(engine, t);
		return err;
	}
	/* On one node nothing moves, and there is nothing to assume; with
	 * homes, a task nobody pinned is homed at its first look, and a pinned
	 * one's first move waits for nothing either. */
	if (t->opts->look_once && snap->topo->nr_nodes > 1 &&
	    engine->cfg.affinity == NP_AFFINITY_NEVER)
		snap->assumed_looks = engine->cfg.hysteresis_periods;
	/* A re-pinned task's CPU use is measured from its read at this tick
	 * (a pass over the table only at a tick that saw one). One looked at
	 * now (pinned to one node, and due: no hold) is judged by its use
	 * since its last look: from here the window would be one of
	 * nothing. */
	for (unsigned i = 0; repinned && i < t->list->nr; i++) {
		struct np_task_state *st = &engine->states.v[i];
		enum np_reason why = t->plan.verdicts[i].reason;

		if (st->repinned && !t->list->tasks[i].stat_kept) {
			if (why != NP_REASON_SCAN_FIRST && why != NP_REASON_SCAN_DUE) {
				note_cpu_read(st, &t->list->tasks[i], t->list->ticks_per_s,
					      t->now_ms);
				st->last_look_ms = t->now_ms;
			}
			st->repinned = false;
		}
	}
	/* Every task passed over is counted under its reason. An idle
	 * verdict (on a fresh read: a kept record is never judged idle)
	 * starts the scheduler's window again: the engine's too, so that the
	 * next look measures the same span, and a launch over the idle
	 * spell is noted now, not averaged over all of it. */
	for (unsigned i = 0; i < t->plan.nr_verdicts; i++) {
		struct np_task_state *st = &engine->states.v[i];

		if (t->plan.verdicts[i].reason < NP_REASON_COUNT)
			skips[t->plan.verdicts[i].reason]++;
		if (t->plan.verdicts[i].reason == NP_REASON_IDLE && st->looked) {
			note_cpu_read(st, &t->list->tasks[i], t->list->ticks_per_s, t->now_ms);
			st->last_look_ms = t->now_ms;
		}
	}
	np_stats_add_skips(engine->stats, skips);
	memcpy(engine->last_skips, skips, sizeof(skips));
	engine->scanned_ms = t->now_ms;
	engine->scanned_uptime_ms = t->list->uptime_ms;
	return 0;
}

/* One key per (device, inode): tasks with the same key write the same
 * object. */
static uint64_t object_key(uint64_t dev, uint64_t inode)
{
	uint64_t k = dev * 0x9e3779b97f4a7c15ull ^ inode;

	k ^= k >> 31;
	k *= 0xbf58476d1ce4e5b9ull;
	return k ^ (k >> 29);
}

/* The objects behind the task's shared VMAs with dirty pages, from maps
 * under its checked directory (maps walks no page tables): only those it
 * maps writable count. A read that fails leaves it with none. */
static int read_share_keys(struct np_engine *engine, int dirfd, const char *dir,
			   struct np_snap_task *e)
{
	struct np_vma_range *ranges = NULL;
	unsigned nr = 0, line = 0;
	char *buf;
	size_t len;
	int err;

	err = np_ctx_read_file_at(engine->ctx, dirfd, dir, "maps", 64u << 20, &buf, &len);
	if (err)
		return err == -ENOMEM ? err : 0;
	err = np_maps_parse(buf, len, &ranges, &nr, &line);
	free(buf);
	if (err)
		return err == -ENOMEM ? err : 0;
	e->share_keys = calloc(e->mem.nr_shared_dirty, sizeof(*e->share_keys));
	for (unsigned i = 0; e->share_keys && i < e->mem.nr_shared_dirty; i++) {
		uint64_t start = e->mem.shared_dirty_starts[i];
		unsigned lo = 0, hi = nr;

		while (lo < hi) { /* ranges are sorted by start */
			unsigned mid = (lo + hi) / 2;

			if (ranges[mid].start < start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nr && ranges[lo].start == start && ranges[lo].shared_writable) {
			uint64_t key = object_key(ranges[lo].dev, ranges[lo].inode);
			bool seen = false;

			for (unsigned j = 0; j < e->nr_share_keys && !seen; j++)
				seen = e->share_keys[j] == key;
			if (!seen)
				e->share_keys[e->nr_share_keys++] = key;
		}
	}
	free(ranges);
	return e->share_keys ? 0 : -ENOMEM;
}

/* A call the kernel refused for want of privilege (counted by whoever made
 * it). The first is explained at warning; the rest, one per task and call
 * (a report of a machine's tasks would list all), are info under one
 * format, which the daemon's logger rate-limits. */
static void log_denied(struct np_engine *engine, const struct np_task *task, const char *what,
		       int err)
{
	if (!engine->denied_logged) {
		engine->denied_logged = true;
		np_log(engine->ctx, LOG_WARNING,
		       "pid %d (%s): %s: %s: not allowed for this task, which is left alone "
		       "(the daemon needs CAP_SYS_PTRACE and CAP_SYS_NICE for other users' "
		       "tasks); every refusal is counted in numaplaced_permission_denied_total",
		       task->pid, task->comm, what, strerror(-err));
		return;
	}
	np_log(engine->ctx, LOG_INFO, "pid %d (%s): %s: %s", task->pid, task->comm, what,
	       strerror(-err));
}

/* Permission failures counted so far, of every kind: a call that adds to
 * them was refused by the kernel, which an -EPERM the actuator returns for a
 * kernel thread, say, was not. */
static uint64_t denied_total(const struct np_engine *engine)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < NP_CALL_NR; c++)
		n += np_stats_permission_denied(engine->stats, (enum np_stat_call)c);
	return n;
}

/* Read one entry's details (unless the scheduler's filter already did) and
 * memory, through its directory checked once more: the pid may have
 * changed hands since the details were read. Returns 0, 1 when the task is
 * to be left out (it vanished, or one of its files is odd or malformed: the
 * reader logged it with its path, and an odd file is counted as a failed
 * read), or -errno. */
static int read_entry(struct np_engine *engine, struct np_snap_task *e, uint64_t *bytes_read)
{
	char dir[NP_TASK_DIR_MAX];
	int dirfd = -1, err = 0;

	*bytes_read = 0;
	if (!e->task.has_details)
		err = np_task_read_details_of(engine->ctx, &e->task, reads_waits(engine));
	if (!err) {
		dirfd = np_task_dir_open(engine->ctx, &e->task, dir);
		err = dirfd < 0 ? dirfd : 0;
	}
	if (!err) {
		err = np_memory_read(engine->reader, engine->ctx, dirfd, dir, &e->mem, bytes_read);
		if (!err && e->mem.nr_shared_dirty)
			err = read_share_keys(engine, dirfd, dir, e);
		close(dirfd);
	}
	if (np_is_odd_file_error(err))
		np_stats_add_failure(engine->stats, NP_CALL_READ, err);
	if (err == -ESRCH || err == -EINVAL || np_is_vanished_error(err) ||
	    np_is_odd_file_error(err))
		return 1;
	if (np_is_permission_error(err)) {
		np_stats_add_failure(engine->stats, NP_CALL_READ, err);
		log_denied(engine, &e->task, "reading its memory", err);
		return 1;
	}
	if (err)
		return err;
	return 0;
}

/* The report shows a task not read now with the scheduler's reason. */
static void skip_entry(const struct np_engine *engine, const struct tick *t, struct np_snap_task *e)
{
	struct np_policy_machine m = machine_of(engine, t);
	struct np_policy_task pt = policy_task(e, 0, 0, NULL);
	struct np_action *a = &e->action;

	np_policy_locate(&m, &engine->cfg, &pt, &e->run_node, &e->home_node, &e->locality);
	memset(a, 0, sizeof(*a));
	a->pid = e->task.pid;
	a->start_ticks = e->task.start_ticks;
	a->kind = NP_ACTION_SKIP;
	a->reason = e->verdict.reason;
	a->target_node = a->thread_node = a->home_node = -1;
	np_sched_verdict_text(engine->sched, &e->task, &e->verdict, a->reason_text,
			      sizeof(a->reason_text));
	e->has_decision = true;
}

static bool shown(const struct tick *t, const struct np_task *task)
{
	return t->opts->look_once && !task->kthread && task->rss_bytes >= t->opts->min_rss_bytes;
}

/* Whether a picked task gets a sampled look before (or instead of) its
 * numa_maps read: see SAMPLED_LOOK_MIN_BYTES. */
static bool sample_first(const struct tick *t, const struct np_task_state *st,
			 const struct np_snap_task *e)
{
	const struct np_snap_task *last = st->last;

	return !t->opts->look_once && !st->must_read &&
	       st->sampled_in_a_row < SAMPLED_LOOKS_IN_A_ROW && last && last->has_decision &&
	       last->action.kind == NP_ACTION_KEEP &&
	       (last->action.reason == NP_REASON_LOCAL ||
		last->action.reason == NP_REASON_TOO_BIG) &&
	       last->run_node >= 0 && e->task.rss_bytes >= SAMPLED_LOOK_MIN_BYTES;
}

/*
 * Whether a task kept as too big for any node might now fit one: a node it
 * may use would hold its share there (the sample's upper bound) and its
 * free memory above the headroom, as the policy counts a node's capacity,
 * at least the task's size. Another task's exit, or its own shrinking, can
 * make it fit, which its pages' nodes alone do not show.
 */
static bool might_fit_a_node(const struct np_engine *engine, const struct np_topology *topo,
			     const struct np_task *task, const struct np_sample_count *count)
{
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		const struct np_node *n = &topo->nodes[i];
		uint64_t keep = np_policy_headroom(n, &engine->cfg);
		uint64_t room = n->mem_free > keep ? n->mem_free - keep : 0;
		unsigned there = (unsigned)n->id < count->max_node ? count->on_node[n->id] : 0;
		double share = np_sample_wilson(there, count->present).hi;

		if (np_task_may_use_node(task, n->id) &&
		    (double)task->rss_bytes * share + (double)room >= (double)task->rss_bytes)
			return true;
	}
	return false;
}

/*
 * A sampled look at picked entry @e: true when it finds the task as its last
 * look left it (every thread last ran on that look's node, and at least
 * locality_target_percent of its pages are on the nodes that keep counted,
 * within the sample's 95% bound: that node, or for a task too big for one,
 * the nodes it was kept within, when no node could now hold it), and then
 * @e holds that keep, without its memory, and the task's state records the
 * look. False: numa_maps is to be read.
 */
static bool sampled_look(struct np_engine *engine, const struct tick *t, struct np_task_state *st,
			 struct np_snap_task *e)
{
	const struct np_topology *topo = t->snap->topo;
	struct np_snap_task *last = st->last;
	const int node = last->run_node;
	const bool too_big = last->action.reason == NP_REASON_TOO_BIG;
	struct np_sample_count count = {0};
	struct np_sample_interval iv, local;
	struct np_action *a = &e->action;
	double target = engine->cfg.locality_target_percent / 100.0;
	uint64_t page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned on_node[NP_MAX_NODES] = {0};
	struct np_nodeset kept = {{0}};
	char nodes[64];
	unsigned hits;
	bool sufficed, fits;
	int err;

	if (!e->task.has_details &&
	    np_task_read_details_of(engine->ctx, &e->task, reads_waits(engine)))
		return false; /* the read that follows says why */
	if (!e->task.nr_thread_samples)
		return false;
	for (unsigned i = 0; i < e->task.nr_thread_samples; i++)
		if (np_topology_cpu_node(topo, e->task.threads[i].last_cpu) != node)
			return false;
	if (too_big)
		kept = last->action.target_nodes;
	else
		np_nodeset_set(&kept, (unsigned)node);
	np_nodeset_format_list(&kept, nodes, sizeof(nodes)); /* cut short: a log line's */
	count.on_node = on_node;
	count.max_node = NP_MAX_NODES;
	/* Draws are independent: the second round's add to the first's. */
	err = np_sample_look(engine->ctx, e->task.pid, SAMPLED_LOOK_FIRST, page_bytes,
			     SAMPLED_LOOK_CHUNK, &engine->rng, engine->sample_lookup,
			     engine->sample_data, &count);
	if (!err && !np_sample_decides(&count, np_sample_hits(&count, &kept), target))
		err = np_sample_look(engine->ctx, e->task.pid, SAMPLED_LOOK_MORE, page_bytes,
				     SAMPLED_LOOK_CHUNK, &engine->rng, engine->sample_lookup,
				     engine->sample_data, &count);
	hits = np_sample_hits(&count, &kept);
	iv = np_sample_wilson(hits, count.present);
	local = np_sample_wilson(node < NP_MAX_NODES ? on_node[node] : 0, count.present);
	sufficed = !err && np_sample_decides(&count, hits, target) && iv.estimate >= target;
	fits = sufficed && too_big && might_fit_a_node(engine, topo, &e->task, &count);
	np_log(engine->ctx, LOG_DEBUG,
	       "pid %d (%s): sampled look: %u of %u pages present, %.1f%% on node%s %s "
	       "(95%%: %.1f-%.1f): %s",
	       e->task.pid, e->task.comm, count.present, count.drawn, iv.estimate * 100,
	       too_big ? "s" : "", nodes, iv.lo * 100, iv.hi * 100,
	       err	  ? strerror(-err)
	       : fits	  ? "it might fit a node now: read it"
	       : sufficed ? "as before"
			  : "read it");
	sufficed = sufficed && !fits;
	np_stats_add_sampled_look(engine->stats, sufficed);
	if (!sufficed)
		return false;

	if (too_big) {
		*a = last->action; /* the same keep: the nodes, the anchor, what is outside */
	} else {
		memset(a, 0, sizeof(*a));
		a->pid = e->task.pid;
		a->start_ticks = e->task.start_ticks;
		a->kind = NP_ACTION_KEEP;
		a->reason = NP_REASON_LOCAL;
		a->target_node = a->home_node = -1;
	}
	a->thread_node = node;
	a->locality = local.estimate; /* for a local one, the same as iv's */
	snprintf(a->reason_text, sizeof(a->reason_text),
		 "sampled look: %s%.0f%% (95%%: %.0f-%.0f%%) of %u present pages on node%s %s%s",
		 too_big ? "as at its last read, fits no single node; " : "", iv.estimate * 100,
		 iv.lo * 100, iv.hi * 100, count.present, too_big ? "s" : "", nodes,
		 too_big ? "" : ", where its threads run");
	e->has_decision = true;
	e->run_node = node;
	e->home_node = last->home_node;
	e->locality = local.estimate;

	np_sched_sampled(engine->sched, &st->sched, &e->task);
	last->action = *a;
	last->task.age_ms = e->task.age_ms;
	last->task.rss_bytes = e->task.rss_bytes;
	last->locality = local.estimate;
	last->live.looks++;
	last->live.sampled_looks++;
	last->live.last_sampled = true;
	last->live.look_ms = t->now_ms;
	last->live.cpu_percent = cpu_percent(st, &e->task, t->list->ticks_per_s, t->now_ms);
	st->sampled_in_a_row++;
	note_cpu_read(st, &e->task, t->list->ticks_per_s, t->now_ms);
	st->last_look_ms = t->now_ms;
	st->repinned = false; /* a tick that failed after its poke left it */
	st->repinned_now = false;
	return true;
}

/* Read the memory of the picked tasks (and, in a look, of every shown
 * task) into snapshot entries, once: the decision and the action both
 * work from it. Entries are in pid order; the picked ones are handed to
 * the policy in the scheduler's order, most overdue first. */
static int read_tasks(struct np_engine *engine, struct tick *t)
{
	struct np_snapshot *snap = t->snap;
	unsigned n = t->list->nr, nr_entries = 0;
	unsigned *entry_of = malloc((n + 1) * sizeof(*entry_of)); /* UINT_MAX: none */
	uint64_t *bytes_of = calloc(n + 1, sizeof(*bytes_of));
	int err = 0;

	if (!entry_of || !bytes_of)
		goto nomem;
	for (unsigned i = 0; i < n; i++)
		entry_of[i] = UINT_MAX;
	for (unsigned p = 0; p < t->plan.nr_picks; p++)
		entry_of[t->plan.picks[p]] = 0;
	for (unsigned i = 0; i < n; i++)
		nr_entries += entry_of[i] == 0 || shown(t, &t->list->tasks[i]);
	snap->tasks = calloc(nr_entries + 1, sizeof(*snap->tasks));
	t->picked_entry = calloc(t->plan.nr_picks + 1, sizeof(*t->picked_entry));
	t->picked_state = calloc(t->plan.nr_picks + 1, sizeof(*t->picked_state));
	t->picked_bytes = calloc(t->plan.nr_picks + 1, sizeof(*t->picked_bytes));
	if (!snap->tasks || !t->picked_entry || !t->picked_state || !t->picked_bytes)
		goto nomem;
	for (unsigned i = 0; i < n && !err; i++) {
		struct np_task_state *st = &engine->states.v[i];
		struct np_snap_task *e = &snap->tasks[snap->nr_tasks];
		bool picked = entry_of[i] == 0;
		int r;

		entry_of[i] = UINT_MAX;
		if (!picked && !shown(t, &t->list->tasks[i]))
			continue;
		np_task_move(&e->task, &t->list->tasks[i]);
		e->picked = picked;
		e->verdict = t->plan.verdicts[i];
		e->run_node = e->home_node = -1;
		if (picked && sample_first(t, st, e) && sampled_look(engine, t, st, e)) {
			e->picked = false; /* shown as the sample found it, not decided on */
			snap->nr_tasks++;
			continue;
		}
		r = read_entry(engine, e, &bytes_of[i]);
		if (picked) {
			np_log(engine->ctx, LOG_DEBUG,
			       "read numa_maps of pid %d (%s), age %llu ms: %d", e->task.pid,
			       e->task.comm, (unsigned long long)e->task.age_ms, r);
			np_stats_add_scan(engine->stats, bytes_of[i]);
			if (r != 0)
				np_sched_done(engine->sched, &st->sched, &e->task, bytes_of[i],
					      NP_SCAN_FAILED);
		}
		if (r != 0) {
			np_snap_task_clear(e);
			memset(e, 0, sizeof(*e));
			err = r < 0 ? r : 0;
			continue;
		}
		if (picked)
			entry_of[i] = snap->nr_tasks;
		else
			skip_entry(engine, t, e);
		snap->nr_tasks++;
	}
	for (unsigned p = 0; p < t->plan.nr_picks && !err; p++) {
		unsigned i = t->plan.picks[p];

		if (entry_of[i] == UINT_MAX)
			continue; /* its read failed, or a sampled look stood in */
		t->picked_entry[t->nr_picked] = entry_of[i];
		t->picked_state[t->nr_picked] = &engine->states.v[i];
		t->picked_bytes[t->nr_picked++] = bytes_of[i];
	}
	free(entry_of);
	free(bytes_of);
	return err;
nomem:
	free(entry_of);
	free(bytes_of);
	return -ENOMEM;
}

/* Log what an action did; the daemon logs the decision itself. */
static void log_move(struct np_engine *engine, const struct np_task *task, int target_node,
		     const struct np_move_result *res, int err, bool denied)
{
	char to[32], by[32] = "";

	/* Calls in parallel: by how many threads (none said for one, or for
	 * a dry run's records). */
	if (res->movers > 1)
		snprintf(by, sizeof(by), " by %u movers", res->movers);
	/* -1: a move of areas, each thread's memory to its thread's node. */
	if (target_node >= 0)
		snprintf(to, sizeof(to), "node %d", target_node);
	else
		snprintf(to, sizeof(to), "its threads' nodes");
	if (denied)
		log_denied(engine, task, "moving its pages", err);
	else if (!err)
		np_log(engine->ctx, LOG_INFO,
		       "pid %d (%s): %llu pages to %s in %u calls%s, %.1f ms; %llu failed", task->pid,
		       task->comm, (unsigned long long)res->pages_moved, to, res->calls, by,
		       (double)res->elapsed_ns / 1e6, (unsigned long long)res->pages_failed);
	else if (err != -EAGAIN && err != -EBUSY)
		np_log(engine->ctx, LOG_INFO, "pid %d (%s): moving pages to %s: %s", task->pid,
		       task->comm, to, strerror(-err));
}

static void log_affinity(struct np_engine *engine, const struct np_snap_task *e,
			 const struct np_affinity_result *res, int err, bool denied)
{
	const struct np_action *a = &e->action;
	char cpus[128];

	/* Once per task, not per thread: one refused thread means all are. */
	for (unsigned i = 0; denied && i < res->nr; i++) {
		if (res->threads[i].outcome == NP_THREAD_FAILED &&
		    np_is_permission_error(res->threads[i].err)) {
			log_denied(engine, &e->task, "setting its threads' CPU affinity",
				   res->threads[i].err);
			break;
		}
	}
	np_bitmap_format_list(&a->target_cpus, cpus, sizeof(cpus));
	if (err && err != -EAGAIN)
		np_log(engine->ctx, LOG_INFO, "pid %d (%s): setting CPUs %s: %s", e->task.pid,
		       e->task.comm, cpus, strerror(-err));
	else if (!err)
		np_log(engine->ctx, LOG_INFO,
		       "pid %d (%s): %s CPUs %s: %u threads set, %u left with a mask of their own",
		       e->task.pid, e->task.comm, a->widen ? "back to" : "threads to", cpus,
		       res->counts[NP_THREAD_NARROWED], res->counts[NP_THREAD_OTHER_MASK]);
}

/* One move being carried out: threads first, for every task of the tick,
 * then pages. */
struct acting {
	bool started;	   /* not held back by a no-effect backoff */
	int err;	   /* of the affinity step */
	unsigned narrowed; /* threads given a new mask */
	bool busy;	   /* the pages wait for another task's move to end */
	bool off_loop;	   /* its pages move off the loop now */
};

/* The threads' part: kept on the home's CPUs, they stop wandering off while
 * any task's pages move. */
static void act_threads(struct np_engine *engine, struct np_snap_task *e, struct np_task_state *st,
			struct acting *ac)
{
	const struct np_action *a = &e->action;
	struct np_affinity_result ares = {0};

	memset(ac, 0, sizeof(*ac));
	if (st->no_effect_node == a->target_node && st->no_effect_looks) {
		st->no_effect_looks--;
		np_stats_add_skip(engine->stats, NP_REASON_NO_EFFECT);
		e->outcome = NP_SNAP_DEFERRED;
		return;
	}
	ac->started = true;
	if (a->set_affinity) {
		uint64_t denied = denied_total(engine);

		ac->err = np_actuator_set_affinity(engine->act, &st->act, &e->task, &a->from_cpus,
						   &a->target_cpus, &ares);
		log_affinity(engine, e, &ares, ac->err, denied_total(engine) > denied);
		ac->narrowed = ares.counts[NP_THREAD_NARROWED];
	}
	np_affinity_result_clear(&ares);
}

/* What came of a move that ran to its end, in the task's state: one that
 * moved no page and narrowed no thread would change nothing next look
 * either, so that node is not tried again for a while. Returns the
 * outcome; @first: the first such outcome toward that node. */
static enum np_snap_outcome move_ended(struct np_task_state *st, int target_node,
				       uint64_t bytes_moved, unsigned narrowed, bool *first)
{
	*first = false;
	if (bytes_moved || narrowed) {
		st->no_effect_node = -1;
		st->no_effect_wait = 0;
		return NP_SNAP_DONE;
	}
	*first = st->no_effect_node != target_node;
	st->no_effect_wait = *first ? NO_EFFECT_LOOKS_MIN
			     : st->no_effect_wait * 2 > NO_EFFECT_LOOKS_MAX
				 ? NO_EFFECT_LOOKS_MAX
				 : st->no_effect_wait * 2;
	st->no_effect_node = target_node;
	st->no_effect_looks = st->no_effect_wait;
	return NP_SNAP_NO_EFFECT;
}

/* The pages' part, and what came of both. Fills e->outcome and
 * e->moved_bytes. Off the loop, a move whose calls run on is "started":
 * np_engine_finish_moves() says what came of it. */
static void act_pages(struct np_engine *engine, struct np_snap_task *e, struct np_task_state *st,
		      struct acting *ac)
{
	const struct np_action *a = &e->action;
	struct np_move_result res = {0};
	int err = ac->err;

	if (!ac->started)
		return;
	if (!err && a->move_pages) {
		uint64_t denied = denied_total(engine);

		err = engine->moves_off_loop
			  ? np_actuator_move_start(engine->act, &st->act, &e->task, &e->mem,
						   a->target_node, a->move_bytes, &res)
			  : np_actuator_move_pages(engine->act, &st->act, &e->task, &e->mem,
						   a->target_node, a->move_bytes, &res);
		/* 1: the calls run on the actuator's thread. */
		if (err == 1) {
			struct engine_move *m = move_slot(engine, &e->task);

			ac->off_loop = true;
			if (m) {
				m->narrowed = ac->narrowed > 0;
				m->threads = false;
			}
		} else {
			log_move(engine, &e->task, a->target_node, &res, err,
				 denied_total(engine) > denied);
			e->moved_bytes = res.bytes_moved;
		}
	}
	/* The actuator counts its own skips (vanished, backoff, rate, another
	 * move in flight). */
	ac->busy = err == -EBUSY;
	if (err == 1)
		e->outcome = NP_SNAP_STARTED;
	else if (err)
		e->outcome = err == -EAGAIN || err == -EBUSY ? NP_SNAP_DEFERRED : NP_SNAP_FAILED;
	else
		e->outcome = move_ended(st, a->target_node, res.bytes_moved, ac->narrowed,
					&e->first_no_effect);
	if ((e->outcome == NP_SNAP_DONE || e->outcome == NP_SNAP_STARTED) && a->widen)
		np_stats_add_given_back(engine->stats, 1);
}

/* A move of a task's thread areas ended: they are done with, unless it
 * should go on at the next look (another move ran, the rate or the
 * budget stopped it, or a backoff). */
static void th_move_ended(struct np_thread_homes *th, int err, const struct np_move_result *res)
{
	if (err == -EBUSY || err == -EAGAIN || (!err && res->budget_exhausted))
		return;
	free(th->areas);
	th->areas = NULL;
	th->nr_areas = 0;
}

int64_t np_engine_split_in_ms(const struct np_engine *engine)
{
	uint64_t now_ms = np_clock_now_ms(engine->clock), next = 0;

	for (unsigned k = 0; k < engine->states.nr; k++) {
		uint64_t at = np_th_split_ms(engine->states.v[k].th);

		if (at && (!next || at < next))
			next = at;
	}
	if (!next)
		return -1;
	return next > now_ms ? (int64_t)(next - now_ms) : 0;
}

unsigned np_engine_split_samples(struct np_engine *engine)
{
	uint64_t now_ms = np_clock_now_ms(engine->clock);
	unsigned split = 0;

	for (unsigned k = 0; k < engine->states.nr; k++) {
		struct np_task_state *st = &engine->states.v[k];
		int err = np_thread_homes_split(st->th, now_ms);

		if (err > 0) {
			split++;
			np_log(engine->ctx, LOG_DEBUG,
			       "pid %d: its threads' sample split: %zu faults in its first half",
			       st->pid, st->th->nr_half);
		} else if (err < 0) {
			np_log(engine->ctx, LOG_DEBUG, "pid %d: its threads' sample not split: %s",
			       st->pid, strerror(-err));
		}
	}
	return split;
}

int np_engine_move_fd(const struct np_engine *engine)
{
	return engine->moves_off_loop ? np_actuator_move_fd(engine->act) : -1;
}

/* End the move np_actuator_moving() names, waiting for its calls. */
static int finish_move(struct np_engine *engine)
{
	enum np_snap_outcome outcome;
	struct np_task_state *st;
	struct engine_move *m, none = {0};
	struct np_move_result res;
	struct np_task task = {0};
	uint64_t denied;
	bool first;
	int err, target;

	if (!np_actuator_moving(engine->act, &task.pid, &task.start_ticks, &target))
		return 0;
	m = move_slot(engine, &task);
	if (!m)
		m = &none; /* not reached: a slot for every move */
	memcpy(task.comm, m->comm, sizeof(task.comm));
	/* NULL when the task left the list meanwhile: the actuator checks
	 * it through a pidfd of its own. */
	st = np_state_table_find(&engine->states, task.pid, task.start_ticks);
	denied = denied_total(engine);
	err = np_actuator_move_finish(engine->act, task.pid, task.start_ticks, st ? &st->act : NULL,
				      &res);
	log_move(engine, &task, target, &res, err, denied_total(engine) > denied);
	outcome = err == -EAGAIN ? NP_SNAP_DEFERRED : err ? NP_SNAP_FAILED : NP_SNAP_DONE;
	if (m->threads) {
		/* Thread homes keep their own account; no policy history. */
		if (st && st->th) {
			st->th->moved_bytes += res.bytes_moved;
			th_move_ended(st->th, err, &res);
		}
	} else if (st && !err) {
		outcome = move_ended(st, target, res.bytes_moved, m->narrowed, &first);
		if (outcome == NP_SNAP_NO_EFFECT)
			np_log(
			    engine->ctx, first ? LOG_NOTICE : LOG_DEBUG,
			    "pid %d (%s): moving its pages to node %d moved nothing: backing off",
			    task.pid, task.comm, target);
	}
	/* Pages moved: the move is made, and recorded as a tick records
	 * one made in it (threads narrowed with it were recorded at its
	 * start). Without memory for it the history before stays. */
	if (st && !err && res.bytes_moved && !m->threads) {
		if (!st->hist)
			st->hist = malloc(sizeof(*st->hist));
		if (st->hist)
			*st->hist = m->next;
	}
	/* The task is not looked at while its pages move (the scheduler's
	 * "migrating"), so its last look is the one that started the move. */
	if (st && st->last) {
		struct np_snap_live *live = &st->last->live;
		struct np_snap_acted *la = &live->last_action;

		live->moved_bytes += res.bytes_moved;
		if (live->acted && la->outcome == NP_SNAP_STARTED && la->at_ms == m->at_ms) {
			la->moved_bytes += res.bytes_moved;
			la->outcome = outcome;
		}
	}
	m->pid = 0;
	return err;
}

int np_engine_finish_moves(struct np_engine *engine, bool wait)
{
	int first = 0;

	while (wait ? np_actuator_moving(engine->act, NULL, NULL, NULL)
		    : np_actuator_move_ended(engine->act)) {
		int err = finish_move(engine);

		if (!first)
			first = err;
	}
	return first;
}

/* What the look means for the task's scan period. */
static enum np_scan_outcome scan_outcome(const struct np_engine *engine,
					 const struct np_snap_task *e,
					 const struct np_task_state *st, const struct acting *ac,
					 int previous_target)
{
	unsigned locality = e->home_node >= 0 ? (unsigned)(e->locality * 100) : 100;

	/* Waiting for another task's move is no sign of a stable place: it
	 * is looked at again soon. */
	if (ac->busy)
		return NP_SCAN_CHANGED;
	if (e->action.kind != NP_ACTION_MOVE ||
	    (e->outcome != NP_SNAP_DONE && e->outcome != NP_SNAP_STARTED)) {
		if (e->outcome == NP_SNAP_FAILED)
			return NP_SCAN_FAILED;
		return st->looked && locality + LOCALITY_DROP_POINTS < st->last_locality
			   ? NP_SCAN_LOCALITY_DROPPED
			   : NP_SCAN_STABLE;
	}
	/* A dry run changes nothing: the same proposal again is no news. */
	if (engine->dry_run && previous_target == e->action.target_node)
		return NP_SCAN_STABLE;
	return NP_SCAN_CHANGED;
}

static uint64_t *u64_dup(const uint64_t *v, unsigned n, bool *failed)
{
	uint64_t *copy;

	if (!v)
		return NULL;
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		*failed = true;
	else
		memcpy(copy, v, n * sizeof(*copy));
	return copy;
}

/* Copy what a report shows of @src into @dst, which must own nothing: the
 * task without its details' arrays (cgroup, threads), the memory per node
 * without its VMAs. Returns 0 or -ENOMEM (then @dst owns nothing). */
static int copy_shown(struct np_snap_task *dst, const struct np_snap_task *src)
{
	const struct np_task_memory *m = &src->mem;
	bool failed = false;

	*dst = (struct np_snap_task){
	    .task = src->task,
	    .verdict = src->verdict,
	    .picked = src->picked,
	    .run_node = src->run_node,
	    .home_node = src->home_node,
	    .locality = src->locality,
	    .has_decision = src->has_decision,
	    .action = src->action,
	    .outcome = src->outcome,
	    .moved_bytes = src->moved_bytes,
	    .live = src->live,
	    .threads = src->threads,
	};
	dst->task.cgroup = NULL;
	dst->task.threads = NULL;
	dst->task.nr_thread_samples = 0;
	dst->mem = (struct np_task_memory){
	    .nr_node_slots = m->nr_node_slots,
	    .total_bytes = m->total_bytes,
	    .movable_total = m->movable_total,
	    .shared_file_bytes = m->shared_file_bytes,
	};
	memcpy(dst->mem.policy_bytes, m->policy_bytes, sizeof(m->policy_bytes));
	dst->mem.node_bytes = u64_dup(m->node_bytes, m->nr_node_slots, &failed);
	dst->mem.anon_bytes = u64_dup(m->anon_bytes, m->nr_node_slots, &failed);
	dst->mem.movable_bytes = u64_dup(m->movable_bytes, m->nr_node_slots, &failed);
	if (failed) {
		np_snap_task_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

/* Keep this look of a task for a status: the entry as shown, how much CPU
 * it used since the look before, and what was done. */
static int remember_look(struct np_task_state *st, const struct np_snap_task *e, double cpu,
			 uint64_t now_ms)
{
	struct np_snap_live live = st->last ? st->last->live : (struct np_snap_live){0};
	const struct np_action *a = &e->action;
	struct np_snap_task next;
	int err;

	live.looks++;
	live.last_sampled = false;
	live.look_ms = now_ms;
	live.cpu_percent = cpu;
	live.moved_bytes += e->moved_bytes;
	/* An action waiting (rate, backoff) was not carried out: the one
	 * before stays the last. */
	if (a->kind == NP_ACTION_MOVE && e->outcome != NP_SNAP_NOT_ACTED &&
	    e->outcome != NP_SNAP_DEFERRED) {
		struct np_snap_acted *last = &live.last_action;

		live.acted = true;
		*last = (struct np_snap_acted){
		    .kind = a->kind,
		    .reason = a->reason,
		    .outcome = e->outcome,
		    .set_affinity = a->set_affinity,
		    .widen = a->widen,
		    .move_pages = a->move_pages,
		    .target_node = a->target_node,
		    .moved_bytes = e->moved_bytes,
		    .at_ms = now_ms,
		};
		snprintf(last->reason_text, sizeof(last->reason_text), "%s", a->reason_text);
	}
	err = copy_shown(&next, e);
	if (err)
		return err;
	next.live = live;
	if (!st->last) {
		st->last = malloc(sizeof(*st->last));
		if (!st->last) {
			np_snap_task_clear(&next);
			return -ENOMEM;
		}
	} else {
		np_snap_task_clear(st->last);
	}
	*st->last = next;
	return 0;
}

/* What the plan was given and made of it, for a debug log: each node's
 * busy share and planned demand, each task's use and demand. */
static void log_plan(struct np_engine *engine, const struct tick *t,
		     const struct np_policy_task *tasks, const struct np_action *actions)
{
	const struct np_snapshot *snap = t->snap;
	bool planned = false;

	for (unsigned i = 0; i < t->nr_picked; i++)
		planned |= actions[i].planned;
	/* The nodes' figures where the plan placed a task of this tick. */
	for (unsigned i = 0; planned && i < snap->topo->nr_nodes; i++)
		if (snap->node_plan[i].cpus)
			np_log(engine->ctx, LOG_DEBUG,
			       "plan: node %d: %.0f%% busy, demand %.2f of %u CPUs",
			       snap->topo->nodes[i].id, snap->node_load[i] * 100,
			       snap->node_plan[i].demand, snap->node_plan[i].cpus);
	for (unsigned i = 0; i < t->nr_picked; i++) {
		const struct np_action *a = &actions[i];

		if (a->planned)
			np_log(engine->ctx, LOG_DEBUG,
			       "plan: pid %d: %.0f%% CPU, demand %.2f, home %d (%s), threads on "
			       "node %d",
			       a->pid, tasks[i].cpu_percent, a->demand, a->plan_home,
			       np_plan_reason_name(a->plan_reason), a->thread_node);
		else
			np_log(
			    engine->ctx, LOG_DEBUG,
			    "plan: pid %d: %.0f%% CPU, not placed by the plan, threads on node %d",
			    a->pid, tasks[i].cpu_percent, a->thread_node);
	}
}

/* ---- Thread homes (lib/threadhome.h) ---- */

static bool thread_homes_on(const struct np_engine *engine)
{
	return engine->thread_homes && engine->cfg.thread_homes == NP_THREAD_HOMES_YES &&
	       engine->cfg.affinity == NP_AFFINITY_UNPINNED;
}

static struct np_th_env th_env(const struct np_engine *engine, const struct tick *t)
{
	return (struct np_th_env){.ctx = engine->ctx,
				  .act = engine->act,
				  .topo = t->snap->topo,
				  .now_ms = t->now_ms,
				  .ticks_per_s = t->list->ticks_per_s,
				  .tick_ms = engine->cfg.tick_ms,
				  .clock = engine->clock};
}

/* The plan spreads it: more busy threads than a node it may use has CPUs. */
static bool spread_by_plan(const struct np_action *a)
{
	return a->kind == NP_ACTION_KEEP && a->planned && a->plan_reason == NP_PLAN_SPREAD;
}

/* Of what the plan counts for @st (its demand where its threads ran at
 * its last look), the share th_look places itself: all of it while a
 * sample of its threads runs (they are about to be homed), else what its
 * homed threads kept busy, at most its demand. A task refused its
 * samples, or with no thread homed, stays where it was measured. */
static double homed_demand(const struct np_task_state *st)
{
	double homed = 0;

	if (!st->th)
		return 0;
	if (st->th->sampling)
		return st->memo.demand;
	for (unsigned j = 0; j < st->th->nr; j++)
		homed += st->th->v[j].busy;
	return homed < st->memo.demand ? homed : st->memo.demand;
}

/* Each node's CPUs and the load the plan counts there, but for the
 * threads with homes, which the plan counts where they ran at their
 * task's last look (a moment before some were narrowed, or as the kernel
 * moved them about): th_look adds those where they are homed, exactly.
 * What else runs stays as measured, a task refused its samples too. NULL
 * without memory. */
static struct np_th_node *th_nodes(const struct np_engine *engine, const struct tick *t)
{
	const struct np_topology *topo = t->snap->topo;
	struct np_th_node *nodes = calloc(topo->nr_nodes + 1, sizeof(*nodes));

	for (unsigned i = 0; nodes && i < topo->nr_nodes; i++) {
		nodes[i].cpus = topo->nodes[i].nr_cpus;
		nodes[i].load = t->snap->node_plan ? t->snap->node_plan[i].demand
				: t->snap->node_load ? t->snap->node_load[i] * topo->nodes[i].nr_cpus
						     : 0;
	}
	for (unsigned k = 0; nodes && k < engine->states.nr; k++) {
		const struct np_task_state *st = &engine->states.v[k];
		double homed;

		if (!st->th || !st->memo.runs || st->memo.nr_nodes != topo->nr_nodes)
			continue;
		homed = homed_demand(st);
		for (unsigned i = 0; i < topo->nr_nodes; i++) {
			nodes[i].load -= homed * st->memo.runs[i];
			if (nodes[i].load < 0)
				nodes[i].load = 0;
		}
	}
	return nodes;
}

static void th_give_back(struct np_engine *engine, const struct np_th_env *env,
			 struct np_task_state *st, const char *why)
{
	unsigned restored = 0;
	int err = np_thread_homes_give_back(env, st->th, &st->act, st->pid, st->start_ticks,
					    &restored);

	if (err)
		np_log(engine->ctx, LOG_WARNING,
		       "pid %d: giving its threads their CPU mask back: %s; tried again at its next "
		       "look",
		       st->pid, strerror(-err));
	if (restored)
		np_log(engine->ctx, LOG_INFO, "pid %d: %u thread%s given their CPU mask back (%s)",
		       st->pid, restored, restored == 1 ? "" : "s", why);
	if (restored)
		np_stats_add_given_back(engine->stats, 1);
	if (!st->th->nr) {
		np_thread_homes_free(st->th);
		st->th = NULL;
		if (st->th_handed)
			st->th_handed->given_back_ms = env->now_ms;
	}
}

/* A task with thread homes that the plan no longer spreads, kept as it
 * is (idle, say): the homes stand, but no sample runs and nothing more
 * moves. */
static void th_pause(struct np_task_state *st)
{
	np_writers_free(st->th->sampling);
	st->th->sampling = NULL;
	free(st->th->areas);
	st->th->areas = NULL;
	st->th->nr_areas = 0;
}

/* Whether @a says the task is to be kept as it is: its thread homes
 * stand. A skip for want of a read is no verdict. */
static bool th_kept(const struct np_action *a)
{
	return a->kind == NP_ACTION_KEEP ||
	       (a->kind == NP_ACTION_SKIP &&
		(a->reason == NP_REASON_NO_DETAILS || a->reason == NP_REASON_NO_MEMORY_DATA));
}

/* Start moving what its threads alone write to their nodes. */
static void th_move(struct np_engine *engine, struct tick *t, struct np_snap_task *e,
		    struct np_task_state *st)
{
	struct np_thread_homes *th = st->th;
	struct np_move_result res;
	uint64_t denied = denied_total(engine);
	int err;

	err = np_actuator_move_areas_start(engine->act, &st->act, &e->task, &e->mem, th->areas,
					   th->nr_areas, engine->cfg.max_migrate_mb_per_scan << 20,
					   &res);
	if (err == 1) {
		/* The areas stay until it ends (np_engine_finish_moves). */
		struct engine_move *m = move_slot(engine, &e->task);

		if (m) {
			m->narrowed = false;
			m->threads = true;
			m->at_ms = t->now_ms;
		}
		e->outcome = NP_SNAP_STARTED;
		return;
	}
	if (err != -EBUSY) {
		log_move(engine, &e->task, -1, &res, err, denied_total(engine) > denied);
		e->moved_bytes = res.bytes_moved;
		th->moved_bytes += res.bytes_moved;
	}
	th_move_ended(th, err, &res);
}

/* A look at a task the plan spreads: its threads' writes sampled, their
 * homes set, their memory moved. Returns whether it is to be looked at
 * again soon (a sample runs, homes changed). */
static bool th_look(struct np_engine *engine, struct tick *t, struct np_snap_task *e,
		    struct np_task_state *st, struct np_th_node *nodes)
{
	struct np_th_env env = th_env(engine, t);
	const struct np_topology *topo = t->snap->topo;
	struct np_th_node *mine = calloc(topo->nr_nodes + 1, sizeof(*mine));
	double *reserved = calloc(topo->nr_nodes + 1, sizeof(*reserved));
	enum np_th_step step;
	int err;

	if (!mine || !reserved) {
		free(mine);
		free(reserved);
		return false;
	}
	/* The threads other tasks keep homed, where they are homed (th_nodes
	 * left them out); only when a sample is to be read, the others'
	 * homes mattering only then: one pass over the table. */
	for (unsigned k = 0; st->th && st->th->sampling && k < engine->states.nr; k++) {
		const struct np_thread_homes *other = engine->states.v[k].th;

		for (unsigned j = 0; other && &engine->states.v[k] != st && j < other->nr; j++) {
			int idx = np_topology_index(topo, other->v[j].node);

			if (idx >= 0)
				reserved[idx] += other->v[j].busy;
		}
	}
	/* Its own view: the CPUs of each node its mask from before allows,
	 * none on a node without memory or outside its memory's bounds. */
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		const struct np_node *node = &topo->nodes[i];
		const struct np_bitmap *before = st->th ? &st->th->before : &e->task.cpus_allowed;
		struct np_bitmap cpus;

		np_bitmap_and(&cpus, &node->cpus, before);
		mine[i] = nodes[i];
		/* Everything but the task: its threads without a home too. */
		if (st->memo.runs && st->memo.nr_nodes == topo->nr_nodes) {
			mine[i].load -= (st->memo.demand - homed_demand(st)) * st->memo.runs[i];
			if (mine[i].load < 0)
				mine[i].load = 0;
		}
		mine[i].load += reserved[i];
		mine[i].homed = reserved[i];
		mine[i].cpus = node->mem_total && np_task_may_use_node(&e->task, node->id)
				   ? np_bitmap_weight(&cpus)
				   : 0;
	}
	err = np_thread_homes_look(&env, &st->th, &st->act, &e->task, mine, &step);
	/* The masks its homes set, for what its threads start: also those of
	 * a look that failed part way (some threads narrowed). */
	if ((step == NP_TH_SET || err) && st->th && st->th->nr &&
	    np_th_handed_note(&st->th_handed, st->th))
		np_log(engine->ctx, LOG_WARNING,
		       "pid %d (%s): out of memory noting its threads' masks: what they start "
		       "may keep them",
		       e->task.pid, e->task.comm);
	/* The homes it set count for the tasks after it in this tick as
	 * others' homes (reserved): @nodes stays as it was. */
	free(mine);
	free(reserved);

	if (err) {
		/* Said once: a refusal (another user's task), or no perf
		 * events; the rest (it exited) at debug. */
		bool refusal = err == -EPERM || err == -EACCES || err == -EOPNOTSUPP;
		int priority = refusal && !engine->thread_homes_logged ? LOG_NOTICE : LOG_DEBUG;

		engine->thread_homes_logged |= refusal;
		if (refusal)
			np_log(engine->ctx, priority,
			       "pid %d (%s): its threads' writes cannot be sampled: %s; its "
			       "threads go where the kernel runs them",
			       e->task.pid, e->task.comm, strerror(-err));
		else
			np_log(engine->ctx, LOG_DEBUG, "pid %d (%s): thread homes: %s", e->task.pid,
			       e->task.comm, strerror(-err));
		if (err == -EOPNOTSUPP)
			engine->thread_homes = false;
		return false;
	}
	if (step == NP_TH_SAMPLING)
		np_log(engine->ctx, LOG_DEBUG, "pid %d (%s): a sample of its threads' writes runs",
		       e->task.pid, e->task.comm);
	else if (step == NP_TH_WAITING && st->th && st->th->sampling)
		np_log(engine->ctx, LOG_DEBUG, "pid %d (%s): its threads' sample not yet read",
		       e->task.pid, e->task.comm);
	if (step == NP_TH_SET)
		np_log(engine->ctx, LOG_INFO,
		       "pid %d (%s): %u thread%s homed; %llu MiB written by one thread alone, "
		       "%llu MiB by several; %u area%s to move",
		       e->task.pid, e->task.comm, st->th->nr, st->th->nr == 1 ? "" : "s",
		       (unsigned long long)(st->th->own_bytes >> 20),
		       (unsigned long long)(st->th->shared_bytes >> 20), st->th->nr_areas,
		       st->th->nr_areas == 1 ? "" : "s");
	/* A move of areas needs the VMAs of a numa_maps read: after a
	 * sampled look, at the next (must_read). */
	if (st->th && st->th->nr_areas && engine->moves_off_loop && e->mem.nr_vmas &&
	    np_actuator_move_room(engine->act))
		th_move(engine, t, e, st);
	return step != NP_TH_WAITING || (st->th && (st->th->nr_areas || st->th->sampling));
}

/* What a status shows of @th. */
static void show_threads(struct np_snap_threads *out, const struct np_thread_homes *th)
{
	memset(out, 0, sizeof(*out));
	if (!th)
		return;
	out->nr = th->nr;
	for (unsigned i = 0; i < th->nr && i < NP_SNAP_THREAD_HOMES; i++) {
		out->tid[i] = th->v[i].tid;
		out->node[i] = th->v[i].node;
	}
	out->own_bytes = th->own_bytes;
	out->shared_bytes = th->shared_bytes;
	out->moved_bytes = th->moved_bytes;
	out->sampling = th->sampling != NULL;
}

static int decide_and_act(struct np_engine *engine, struct tick *t)
{
	struct np_snapshot *snap = t->snap;
	struct np_policy_machine m = machine_of(engine, t);
	struct np_policy_task *tasks;
	struct np_policy_history *next;
	struct np_action *actions;
	struct np_plan_memo *memos, *known;
	struct acting *acting;
	struct np_th_env env = th_env(engine, t);
	struct np_th_node *nodes = NULL;
	bool acts;
	int err;

	if (!t->nr_picked)
		return 0;
	tasks = calloc(t->nr_picked, sizeof(*tasks));
	actions = calloc(t->nr_picked, sizeof(*actions));
	next = calloc(t->nr_picked, sizeof(*next));
	memos = calloc(t->nr_picked, sizeof(*memos));
	acting = calloc(t->nr_picked, sizeof(*acting));
	known = known_memos(engine, t, &m.nr_known);
	m.known = known;
	snap->node_plan = calloc(snap->topo->nr_nodes, sizeof(*snap->node_plan));
	if (!tasks || !actions || !next || !memos || !acting || !known || !snap->node_plan) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < t->nr_picked; i++) {
		struct np_snap_task *e = &snap->tasks[t->picked_entry[i]];
		struct np_task_state *st = t->picked_state[i];

		note_launch(st, &e->task, t->list->ticks_per_s, t->now_ms);
		/* Its threads' homes are the daemon's, not its user's pins. */
		if (st->th)
			np_thread_homes_check(&env, st->th, &st->act, &e->task);
		tasks[i] = policy_task(e, cpu_percent(st, &e->task, t->list->ticks_per_s, t->now_ms),
				       st->repinned_now ? wait_percent(st, &e->task, t->now_ms) : 0,
				       st);
	}
	err = np_policy_decide_all(&m, &engine->cfg, tasks, t->nr_picked, actions, next, memos,
				   snap->node_plan);
	if (!err)
		log_plan(engine, t, tasks, actions);
	/* A one-shot look acts on nothing, and neither does a tick asked to
	 * stop. */
	acts = !err && !t->opts->look_once &&
	       !(engine->should_stop && engine->should_stop(engine->stop_data));
	/* Thread homes stand while the policy keeps the task as it is (the
	 * plan spreads it, or finds its threads beside their memory, which
	 * they are because of them; an idle task keeps them as it keeps a
	 * home). Any other action goes first: the task's own mask is then
	 * the one a home of its own replaces. */
	for (unsigned i = 0; acts && i < t->nr_picked; i++) {
		struct np_task_state *st = t->picked_state[i];

		if (st->th && (!thread_homes_on(engine) || !th_kept(&actions[i])))
			th_give_back(engine, &env, st,
				     thread_homes_on(engine) ? np_action_kind_name(actions[i].kind)
							     : "thread_homes = no");
		else if (st->th && !spread_by_plan(&actions[i]))
			th_pause(st);
	}
	/* Without memory for it no thread is placed this tick (nothing else
	 * waits on it). */
	if (acts && thread_homes_on(engine))
		nodes = th_nodes(engine, t);
	for (unsigned i = 0; acts && i < t->nr_picked; i++) {
		struct np_snap_task *e = &snap->tasks[t->picked_entry[i]];

		e->action = actions[i];
		if (actions[i].kind != NP_ACTION_MOVE)
			continue;
		/* Thread homes it could not give back above: a home of its own
		 * waits for them (looked at again soon), or its main thread
		 * would have two masks of the daemon's to give back. */
		if (t->picked_state[i]->th) {
			e->outcome = NP_SNAP_DEFERRED;
			acting[i].busy = true;
			continue;
		}
		act_threads(engine, e, t->picked_state[i], &acting[i]);
	}
	for (unsigned i = 0; !err && i < t->nr_picked; i++) {
		struct np_snap_task *e = &snap->tasks[t->picked_entry[i]];
		struct np_task_state *st = t->picked_state[i];
		const struct np_action *a = &actions[i];
		int previous_target = st->hist ? st->hist->target_node : -1;
		bool made, th_busy = false;

		e->action = *a;
		e->has_decision = true;
		e->run_node = a->thread_node;
		e->home_node = a->home_node;
		e->locality = a->locality;
		/* A spread is shown, not carried out (the actuator moves to one
		 * node): like a keep, it is a task passed over. */
		if (a->kind != NP_ACTION_MOVE)
			np_stats_add_skip(engine->stats, a->reason);
		if (acts && a->kind == NP_ACTION_MOVE)
			act_pages(engine, e, st, &acting[i]);
		if (acts && nodes && spread_by_plan(a))
			th_busy = th_look(engine, t, e, st, nodes);
		/* Looked at again soon while its threads' homes change. */
		acting[i].busy |= th_busy;
		show_threads(&e->threads, st->th);
		/* The history records a move as made: only one that was made
		 * is committed. Threads given their new mask are a move made
		 * even when the pages must wait (rate, another move): a mask
		 * set and not recorded would read as its user's next time,
		 * and never be given back. */
		made = e->outcome == NP_SNAP_DONE ||
		       (acting[i].started && !acting[i].err && acting[i].narrowed);
		if (acting[i].off_loop) {
			struct engine_move *slot = move_slot(engine, &e->task);

			if (slot) {
				slot->next = next[i];
				slot->at_ms = t->now_ms;
			}
		}
		if ((a->kind != NP_ACTION_MOVE && a->kind != NP_ACTION_SPREAD) || made) {
			if (!st->hist && !(st->hist = malloc(sizeof(*st->hist)))) {
				err = -ENOMEM;
				break;
			}
			*st->hist = next[i];
		}
		np_plan_memo_clear(&st->memo);
		st->memo = memos[i];
		memset(&memos[i], 0, sizeof(memos[i]));
		/* The plan counts a home as set once it is: a move that failed
		 * or waits leaves the one before. */
		if (a->set_affinity && !made)
			st->memo.home = st->hist && st->hist->home_node >= 0
					    ? np_topology_index(snap->topo, st->hist->home_node)
					    : -1;
		np_sched_done(engine->sched, &st->sched, &e->task, t->picked_bytes[i],
			      scan_outcome(engine, e, st, &acting[i], previous_target));
		if (!t->opts->look_once) {
			err = remember_look(st, e, tasks[i].cpu_percent, t->now_ms);
			if (err)
				break;
		}
		/* Launches were noted with the policy's input. */
		st->last_cpu_ticks = e->task.cpu_ticks;
		st->last_child_cpu_ticks = e->task.child_cpu_ticks;
		keep_waits(st, &e->task);
		st->repinned_now = false;
		st->looked = true;
		/* Areas to move need the VMAs of a full read. */
		st->must_read = st->th && st->th->nr_areas;
		st->sampled_in_a_row = 0;
		st->last_look_ms = t->now_ms;
		st->repinned = false; /* a tick that failed after its poke left it */
		/* After the tick's own affinity changes. */
		if (!t->opts->look_once)
			st->cpus_hash = nodes_hash_now(engine, snap->topo, e->task.pid, NULL);
		st->last_locality = e->home_node >= 0 ? (unsigned)(e->locality * 100) : 100;
	}
out:
	free(nodes);
	for (unsigned i = 0; memos && i < t->nr_picked; i++)
		np_plan_memo_clear(&memos[i]);
	free(memos);
	free(acting);
	free(known);
	free(tasks);
	free(actions);
	free(next);
	return err;
}

static unsigned narrowed_tasks(const struct np_engine *engine)
{
	unsigned n = 0;

	for (unsigned i = 0; i < engine->states.nr; i++)
		n += engine->states.v[i].hist && engine->states.v[i].hist->narrowed;
	return n;
}

static unsigned homed_threads(const struct np_engine *engine)
{
	unsigned n = 0;

	for (unsigned i = 0; i < engine->states.nr; i++)
		n += engine->states.v[i].th ? engine->states.v[i].th->nr : 0;
	return n;
}

/* Keep the machine as this tick saw it and decided on it, for a status. */
static int remember_decided(struct np_engine *engine, const struct np_snapshot *snap,
			    uint64_t now_ms)
{
	unsigned n = snap->topo->nr_nodes;
	struct np_topology *topo = NULL;
	double *load = malloc((n ? n : 1) * sizeof(*load));
	struct np_planner_load *plan = NULL;

	if (snap->node_plan)
		plan = malloc((n ? n : 1) * sizeof(*plan));
	if (!load || (snap->node_plan && !plan) || np_topology_copy(snap->topo, &topo)) {
		free(load);
		free(plan);
		return -ENOMEM;
	}
	memcpy(load, snap->node_load, n * sizeof(*load));
	if (plan)
		memcpy(plan, snap->node_plan, n * sizeof(*plan));
	np_topology_free(engine->decided.topo);
	free(engine->decided.load);
	free(engine->decided.plan);
	engine->decided.topo = topo;
	engine->decided.load = load;
	engine->decided.plan = plan;
	engine->decided.kernel_numa_balancing = snap->kernel_numa_balancing;
	engine->decided.uptime_ms = snap->uptime_ms;
	engine->decided.at_ms = now_ms;
	return 0;
}

/* The thread's CPU time, ns; 0 when not timed (below debug). */
static uint64_t cpu_now_ns(bool timed)
{
	return timed ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
}

static int run_tick(struct np_engine *engine, const struct tick_opts *opts,
		    struct np_snapshot **snapshot)
{
	struct tick t = {
	    .opts = opts, .now_ms = np_clock_now_ms(engine->clock), .list = &engine->list};
	bool timed = np_ctx_get_log_priority(engine->ctx) >= LOG_DEBUG;
	uint64_t c0 = cpu_now_ns(timed), c1 = 0, c2 = 0;
	unsigned homed;
	int err;

	t.snap = calloc(1, sizeof(*t.snap));
	if (!t.snap)
		return -ENOMEM;
	/* A dry run's records were logged as they were made; keeping them
	 * past the tick would only fill the actuator's cap. */
	np_actuator_clear_records(engine->act);
	/* A move whose calls ended is counted before this tick decides: its
	 * pages are where the tick will see them. */
	np_engine_finish_moves(engine, false);
	err = observe(engine, &t);
	c1 = cpu_now_ns(timed);
	if (!err)
		err = read_tasks(engine, &t);
	c2 = cpu_now_ns(timed);
	if (!err)
		err = decide_and_act(engine, &t);
	if (!err && !t.quiet)
		engine->last_narrowed = narrowed_tasks(engine);
	homed = homed_threads(engine);
	engine->ever_narrowed |= engine->last_narrowed > 0 || homed > 0;
	if (!err)
		np_stats_set_plan(engine->stats, t.snap->topo, t.snap->node_plan,
				  engine->last_narrowed, homed);
	if (!err && !opts->look_once && (t.nr_picked || !engine->decided.topo))
		err = remember_decided(engine, t.snap, t.now_ms);
	engine->tick_cpu = (struct np_engine_tick_cpu){.timed = timed,
						       .quiet = t.quiet,
						       .observe_ns = c1 - c0,
						       .read_ns = c2 - c1,
						       .decide_ns = cpu_now_ns(timed) - c2};
	/* What the next tick may take as known; after a failed one, it scans. */
	if (err || opts->look_once) {
		engine->scanned = false;
	} else if (!t.quiet) {
		engine->scanned = true;
		set_quiet_until(engine);
	}
	tick_clear(&t);
	if (err || !snapshot) {
		np_snapshot_free(t.snap);
		return err;
	}
	*snapshot = t.snap;
	return 0;
}

int np_engine_tick(struct np_engine *engine, struct np_snapshot **snapshot)
{
	static const struct tick_opts daemon_tick = {0};

	return run_tick(engine, &daemon_tick, snapshot);
}

int np_engine_look_once(struct np_ctx *ctx, const struct np_config *cfg, uint64_t min_rss_bytes,
			struct np_snapshot **out)
{
	struct tick_opts opts = {.look_once = true, .min_rss_bytes = min_rss_bytes};
	struct np_engine_params params = {.ctx = ctx, .dry_run = true};
	struct np_engine *engine = NULL;
	int err;

	err = np_clock_new_monotonic(&params.clock);
	if (err)
		return err;
	err = np_engine_new(&params, cfg, &engine);
	if (!err)
		err = run_tick(engine, &opts, out);
	np_engine_free(engine);
	np_clock_free(params.clock);
	return err;
}

int np_engine_status(const struct np_engine *engine, struct np_snapshot **out)
{
	uint64_t now_ms = np_clock_now_ms(engine->clock);
	struct np_snapshot *snap;
	unsigned n, nr = 0;
	int err = -ENOMEM;

	if (!engine->decided.topo)
		return -EAGAIN;
	n = engine->decided.topo->nr_nodes;
	snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	snap->live = true;
	snap->dry_run = engine->dry_run;
	snap->now_ms = now_ms;
	snap->decided_ms = engine->decided.at_ms;
	snap->kernel_numa_balancing = engine->decided.kernel_numa_balancing;
	snap->uptime_ms = engine->decided.uptime_ms + (now_ms - engine->decided.at_ms);
	for (unsigned i = 0; i < engine->states.nr; i++)
		nr += engine->states.v[i].last != NULL;
	snap->tasks = calloc(nr + 1, sizeof(*snap->tasks));
	snap->node_load = malloc((n ? n : 1) * sizeof(*snap->node_load));
	if (engine->decided.plan)
		snap->node_plan = malloc((n ? n : 1) * sizeof(*snap->node_plan));
	if (!snap->tasks || !snap->node_load || (engine->decided.plan && !snap->node_plan) ||
	    np_topology_copy(engine->decided.topo, &snap->topo))
		goto fail;
	memcpy(snap->node_load, engine->decided.load, n * sizeof(*snap->node_load));
	if (snap->node_plan)
		memcpy(snap->node_plan, engine->decided.plan, n * sizeof(*snap->node_plan));
	for (unsigned i = 0; i < engine->states.nr; i++) {
		const struct np_task_state *st = &engine->states.v[i];
		struct np_snap_task *e = &snap->tasks[snap->nr_tasks];
		struct np_action *a = &e->action;

		if (!st->last)
			continue;
		if (copy_shown(e, st->last))
			goto fail;
		snap->nr_tasks++;
		e->task.age_ms += now_ms - st->last->live.look_ms;
		/* The mask kept now, which a failed give-back may have left. */
		a->narrowed = st->hist && st->hist->narrowed;
		if (a->narrowed) {
			a->narrowed_from = st->hist->cpus_before;
			a->narrowed_to = st->hist->narrowed_cpus;
		}
	}
	*out = snap;
	return 0;
fail:
	np_snapshot_free(snap);
	return err;
}
