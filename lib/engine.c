/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "actuate.h"
#include "numa_maps.h"
#include "policy.h"
#include "task.h"

/* A locality fall of this many points between two looks counts as a drop:
 * the scan period goes back to its minimum. */
#define LOCALITY_DROP_POINTS 10

/* What the engine remembers of a task it has read at least once. */
struct task_state {
	int pid;
	uint64_t start_ticks;
	uint64_t last_look_ms;
	uint64_t last_cpu_ticks;
	unsigned last_locality; /* percent */
	struct np_policy_history hist;
};

struct np_engine {
	struct np_ctx *ctx;
	struct np_clock *clock;
	struct np_config cfg;
	bool dry_run, report;
	uint64_t report_min_rss_bytes;

	struct np_task_source *src;
	struct np_sched *sched;
	struct np_nm_parser *parser;
	struct np_stats *stats;
	struct np_actuator *act;
	unsigned stats_nodes; /* nodes the stats were made for */

	bool (*should_stop)(void *data);
	void *stop_data;
	np_engine_observer_fn observer;
	void *observer_data;

	struct task_state *states; /* sorted by pid */
	unsigned nr_states, cap_states;
};

/* The report reads every task at once: the scan budget exists to spread
 * reads over ticks, and a one-shot report has only one. */
static void sched_config(const struct np_engine *engine, struct np_config *out)
{
	*out = engine->cfg;
	if (engine->report)
		out->scan_budget_mb = UINT64_MAX >> 21;
}

static bool prefix_match(const struct np_strv *prefixes, const char *path)
{
	for (size_t i = 0; i < prefixes->n; i++) {
		size_t n = strlen(prefixes->v[i]);

		/* "/a" matches "/a" and "/a/b", not "/ab". */
		if (strncmp(path, prefixes->v[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/' || (n && prefixes->v[i][n - 1] == '/')))
			return true;
	}
	return false;
}

/* The scheduler asks only about due tasks that passed the cheap tests: the
 * cgroup needs one more read, so it is done here and only when configured. */
static bool exclude_by_cgroup(void *data, const struct np_task *task)
{
	struct np_engine *engine = data;
	const struct np_config *cfg = &engine->cfg;
	struct np_task copy;
	bool excluded;

	if (!cfg->include_cgroup.n && !cfg->exclude_cgroup.n)
		return false;
	memset(&copy, 0, sizeof(copy));
	copy.pid = task->pid;
	copy.start_ticks = task->start_ticks;
	if (np_task_read_details(engine->ctx, &copy) != 0 || !copy.cgroup) {
		np_task_clear(&copy);
		return cfg->include_cgroup.n > 0;
	}
	excluded = (cfg->include_cgroup.n && !prefix_match(&cfg->include_cgroup, copy.cgroup)) ||
		   prefix_match(&cfg->exclude_cgroup, copy.cgroup);
	np_task_clear(&copy);
	return excluded;
}

int np_engine_new(const struct np_engine_params *params, const struct np_config *cfg,
		  struct np_engine **out)
{
	struct np_engine *engine = calloc(1, sizeof(*engine));
	struct np_actuator_params aparams;
	struct np_topology *topo = NULL;
	struct np_config scfg;
	int err;

	if (!engine)
		return -ENOMEM;
	engine->ctx = params->ctx;
	engine->clock = params->clock;
	engine->dry_run = params->dry_run;
	engine->report = params->report;
	engine->report_min_rss_bytes = params->report_min_rss_bytes;
	engine->should_stop = params->should_stop;
	engine->stop_data = params->stop_data;
	err = np_config_copy(&engine->cfg, cfg);
	if (err)
		goto fail;
	sched_config(engine, &scfg);
	err = np_sched_new(&scfg, engine->clock, &engine->sched);
	if (err)
		goto fail;
	np_sched_set_exclude_fn(engine->sched, exclude_by_cgroup, engine);
	err = np_task_source_new(engine->ctx, &engine->src);
	if (err)
		goto fail;
	err = np_nm_parser_new(&engine->parser, NULL, NULL);
	if (err)
		goto fail;
	err = np_topology_read(engine->ctx, &topo);
	if (err)
		goto fail;
	err = np_stats_new(topo, &engine->stats);
	engine->stats_nodes = topo->nr_nodes;
	np_topology_free(topo);
	if (err)
		goto fail;
	np_actuator_params_init(&aparams);
	aparams.migrate_rate_mb_s = engine->cfg.migrate_rate_mb_s;
	aparams.should_stop = params->should_stop;
	aparams.stop_data = params->stop_data;
	err = engine->dry_run
		      ? np_actuator_new_dry(engine->ctx, engine->stats, &aparams, &engine->act)
		      : np_actuator_new_real(engine->ctx, engine->stats, &aparams, &engine->act);
	if (err)
		goto fail;
	*out = engine;
	return 0;
fail:
	np_engine_free(engine);
	return err;
}

void np_engine_free(struct np_engine *engine)
{
	if (!engine)
		return;
	np_actuator_free(engine->act);
	np_stats_free(engine->stats);
	np_nm_parser_free(engine->parser);
	np_task_source_free(engine->src);
	np_sched_free(engine->sched);
	np_config_free(&engine->cfg);
	free(engine->states);
	free(engine);
}

int np_engine_set_config(struct np_engine *engine, const struct np_config *cfg)
{
	struct np_config copy, scfg, old = engine->cfg;
	int err = np_config_copy(&copy, cfg);

	if (err) {
		np_config_free(&copy);
		return err;
	}
	engine->cfg = copy;
	sched_config(engine, &scfg);
	err = np_sched_set_config(engine->sched, &scfg);
	if (err) {
		engine->cfg = old;
		np_config_free(&copy);
		return err;
	}
	np_actuator_set_rate(engine->act, engine->cfg.migrate_rate_mb_s);
	np_config_free(&old);
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

unsigned np_engine_tracked(const struct np_engine *engine)
{
	return engine->nr_states;
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

static struct task_state *find_state(struct np_engine *engine, int pid)
{
	unsigned lo = 0, hi = engine->nr_states;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (engine->states[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < engine->nr_states && engine->states[lo].pid == pid ? &engine->states[lo]
									: NULL;
}

/* The state of @task, made on first sight; a reused pid starts afresh. */
static struct task_state *get_state(struct np_engine *engine, const struct np_task *task)
{
	struct task_state *st = find_state(engine, task->pid);
	unsigned pos;

	if (st && st->start_ticks == task->start_ticks)
		return st;
	if (!st) {
		if (engine->nr_states == engine->cap_states) {
			unsigned cap = engine->cap_states ? engine->cap_states * 2 : 64;
			struct task_state *bigger = realloc(engine->states, cap * sizeof(*bigger));

			if (!bigger)
				return NULL;
			engine->states = bigger;
			engine->cap_states = cap;
		}
		for (pos = engine->nr_states; pos > 0 && engine->states[pos - 1].pid > task->pid;
		     pos--)
			;
		memmove(&engine->states[pos + 1], &engine->states[pos],
			(engine->nr_states - pos) * sizeof(*st));
		engine->nr_states++;
		st = &engine->states[pos];
	}
	memset(st, 0, sizeof(*st));
	st->pid = task->pid;
	st->start_ticks = task->start_ticks;
	np_policy_history_init(&st->hist);
	return st;
}

static int cmp_task_pid(const void *a, const void *b)
{
	const struct np_task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Forget the state of tasks that left the list (sorted by pid). */
static void prune_states(struct np_engine *engine, const struct np_task_list *sorted)
{
	unsigned kept = 0, j = 0;

	for (unsigned i = 0; i < engine->nr_states; i++) {
		const struct task_state *st = &engine->states[i];

		while (j < sorted->nr && sorted->tasks[j].pid < st->pid)
			j++;
		if (j < sorted->nr && sorted->tasks[j].pid == st->pid &&
		    sorted->tasks[j].start_ticks == st->start_ticks)
			engine->states[kept++] = *st;
	}
	engine->nr_states = kept;
}

/* CPU used since the last look (since start at the first), in percent of one
 * CPU. */
static double cpu_percent(const struct task_state *st, const struct np_task *task,
			  const struct np_task_list *list, uint64_t now_ms)
{
	uint64_t ticks, ms;

	if (st->last_look_ms) {
		ticks = task->cpu_ticks - st->last_cpu_ticks;
		ms = now_ms - st->last_look_ms;
	} else {
		ticks = task->cpu_ticks;
		ms = task->age_ms;
	}
	if (!ms || !list->ticks_per_s)
		return 0;
	return (double)ticks * 1000.0 * 100.0 / (double)list->ticks_per_s / (double)ms;
}

/* What a scheduler verdict means as a policy skip, for tasks not read. */
static enum np_reason verdict_reason(enum np_sched_reason r)
{
	switch (r) {
	case NP_SCHED_SKIP_KTHREAD:
		return NP_REASON_KERNEL_THREAD;
	case NP_SCHED_SKIP_EXCLUDED:
		return NP_REASON_EXCLUDED;
	case NP_SCHED_SKIP_TOO_YOUNG:
		return NP_REASON_TOO_YOUNG;
	case NP_SCHED_SKIP_TOO_SMALL:
		return NP_REASON_TOO_SMALL;
	case NP_SCHED_SKIP_IDLE:
		return NP_REASON_IDLE;
	default:
		return NP_REASON_NO_MEMORY_DATA;
	}
}

static enum np_skip_reason stats_skip(enum np_reason r)
{
	switch (r) {
	case NP_REASON_TOO_YOUNG:
		return NP_SKIP_TOO_YOUNG;
	case NP_REASON_TOO_SMALL:
		return NP_SKIP_SMALL_RSS;
	case NP_REASON_IDLE:
		return NP_SKIP_IDLE;
	case NP_REASON_EXCLUDED:
		return NP_SKIP_EXCLUDED;
	case NP_REASON_KERNEL_THREAD:
		return NP_SKIP_KTHREAD;
	case NP_REASON_LOCAL:
		return NP_SKIP_LOCAL_ENOUGH;
	case NP_REASON_NO_ROOM:
		return NP_SKIP_NO_ROOM;
	case NP_REASON_HYSTERESIS:
		return NP_SKIP_HYSTERESIS;
	case NP_REASON_KERNEL_BALANCING:
		return NP_SKIP_KERNEL_BALANCING;
	default:
		return NP_SKIP_NR;
	}
}

static void skip_action(struct np_report_task *rt, enum np_reason reason,
			const struct np_sched_verdict *v, const struct np_config *cfg)
{
	struct np_action *a = &rt->action;
	char size[16];

	memset(a, 0, sizeof(*a));
	a->pid = rt->task.pid;
	a->start_ticks = rt->task.start_ticks;
	a->kind = NP_ACTION_SKIP;
	a->reason = reason;
	a->target_node = -1;
	rt->has_decision = true;
	switch (v->reason) {
	case NP_SCHED_SKIP_TOO_YOUNG:
		snprintf(a->reason_text, sizeof(a->reason_text),
			 "younger than scan_delay_ms (%llu): first look in %llu ms",
			 (unsigned long long)cfg->scan_delay_ms, (unsigned long long)v->wait_ms);
		break;
	case NP_SCHED_SKIP_TOO_SMALL:
		snprintf(a->reason_text, sizeof(a->reason_text), "RSS %s below min_rss_mb (%llu)",
			 np_human_bytes(rt->task.rss_bytes, size, sizeof(size)),
			 (unsigned long long)cfg->min_rss_mb);
		break;
	case NP_SCHED_SKIP_IDLE:
		snprintf(a->reason_text, sizeof(a->reason_text),
			 "CPU use since the last look below min_cpu_percent (%u%%)",
			 cfg->min_cpu_percent);
		break;
	case NP_SCHED_SKIP_EXCLUDED:
		snprintf(a->reason_text, sizeof(a->reason_text),
			 "excluded by pid, comm or cgroup in the configuration");
		break;
	case NP_SCHED_SKIP_KTHREAD:
		snprintf(a->reason_text, sizeof(a->reason_text), "kernel thread");
		break;
	case NP_SCHED_SKIP_PERIOD:
		snprintf(a->reason_text, sizeof(a->reason_text), "read within its period: next in %llu ms",
			 (unsigned long long)v->wait_ms);
		break;
	default:
		snprintf(a->reason_text, sizeof(a->reason_text), "%s",
			 np_sched_reason_name(v->reason));
		break;
	}
}

/* Carry out one decision. Returns the scan outcome for the scheduler. */
static enum np_scan_outcome act(struct np_engine *engine, struct np_report_task *rt,
				const struct np_topology *topo, struct task_state *st,
				int previous_target)
{
	const struct np_action *a = &rt->action;
	unsigned locality = rt->total_bytes ? (unsigned)(rt->locality * 100) : 100;
	bool dropped = st->last_look_ms && locality + LOCALITY_DROP_POINTS < st->last_locality;
	int err = 0;

	st->last_locality = locality;
	if (a->kind != NP_ACTION_MOVE)
		return dropped ? NP_SCAN_LOCALITY_DROPPED : NP_SCAN_STABLE;
	if (a->move_pages) {
		struct np_move_result res;

		err = np_actuator_move_pages(engine->act, &rt->task, a->target_node, a->move_bytes,
					     &res);
		if (!err)
			np_log(engine->ctx, LOG_INFO,
			       "pid %d (%s): %llu pages to node %d in %u calls, %.1f ms; %llu failed",
			       rt->task.pid, rt->task.comm, (unsigned long long)res.pages_moved,
			       a->target_node, res.calls, (double)res.elapsed_ns / 1e6,
			       (unsigned long long)res.pages_failed);
		if (err && err != -EAGAIN)
			np_log(engine->ctx, LOG_INFO, "pid %d (%s): moving pages to node %d: %s",
			       rt->task.pid, rt->task.comm, a->target_node, strerror(-err));
	}
	if (!err && a->set_affinity) {
		const struct np_node *node = np_topology_node(topo, a->target_node);
		struct np_affinity_result res = {0};

		if (node)
			err = np_actuator_set_affinity(engine->act, &rt->task, &node->cpus, &res);
		np_affinity_result_clear(&res);
	}
	/* The actuator counts its own skips (vanished, backoff, rate). */
	if (err)
		return NP_SCAN_FAILED;
	/* A dry run changes nothing: the same proposal again is no news. */
	if (engine->dry_run && previous_target == a->target_node)
		return NP_SCAN_STABLE;
	return NP_SCAN_CHANGED;
}

struct tick {
	struct np_task_list list;
	struct np_sched_plan plan;
	struct np_report *snap;
	struct np_policy_task *samples;
	unsigned *sample_entry; /* snapshot index of each sample */
	uint64_t *sample_bytes; /* numa_maps bytes read for each sample */
	unsigned nr_samples;
};

static void tick_clear(struct tick *t)
{
	np_task_list_clear(&t->list);
	np_sched_plan_free(&t->plan);
	free(t->samples);
	free(t->sample_entry);
	free(t->sample_bytes);
}

/* Whether a task the scheduler does not read now is shown in the report. */
static bool shown_in_report(const struct np_engine *engine, const struct np_task *task)
{
	return engine->report && !task->kthread && task->rss_bytes >= engine->report_min_rss_bytes;
}

static int observe(struct np_engine *engine, struct tick *t)
{
	struct np_report *snap = t->snap;
	int err;

	err = np_topology_read(engine->ctx, &snap->topo);
	if (err)
		return err;
	snap->node_load = calloc(snap->topo->nr_nodes, sizeof(double));
	if (!snap->node_load)
		return -ENOMEM;
	snap->kernel_numa_balancing = read_kernel_balancing(engine->ctx);
	err = np_task_source_node_load(engine->src, snap->topo, snap->node_load);
	if (err)
		return err;
	err = np_task_source_scan(engine->src, &t->list);
	if (err)
		return err;
	snap->uptime_ms = t->list.uptime_ms;
	if (engine->observer) {
		err = engine->observer(engine->observer_data, &t->list);
		if (err)
			return err;
	}
	/* Sorted by pid: state lookups and the report's order. */
	qsort(t->list.tasks, t->list.nr, sizeof(*t->list.tasks), cmp_task_pid);
	prune_states(engine, &t->list);
	np_actuator_prune(engine->act);
	return np_sched_plan(engine->sched, &t->list, &t->plan);
}

static struct np_policy_machine machine_of(const struct np_report *snap)
{
	return (struct np_policy_machine){
		.topo = snap->topo,
		.node_busy = snap->node_load,
		.kernel_numa_balancing = snap->kernel_numa_balancing > 0,
	};
}

/* Where the task runs and how local it is, as the policy sees it. */
static void locate(const struct np_engine *engine, const struct np_report *snap,
		   struct np_report_task *rt, struct np_policy_history *hist)
{
	struct np_policy_machine m = machine_of(snap);
	struct np_policy_task pt = {
		.task = &rt->task,
		.node_bytes = rt->node_bytes,
		.nr_node_slots = rt->nr_node_slots,
		.hist = hist,
	};
	double locality;

	if (np_policy_locate(&m, &engine->cfg, &pt, &rt->run_node, &rt->home_node, &locality))
		rt->locality = locality;
}

/* Read the memory of the picked tasks (and, for the report, of every shown
 * task) into snapshot entries; picked ones become policy samples. */
static int read_tasks(struct np_engine *engine, struct tick *t, uint64_t now_ms)
{
	struct np_report *snap = t->snap;
	bool *picked = calloc(t->list.nr + 1, sizeof(bool));
	int err = 0;

	snap->tasks = calloc(t->list.nr + 1, sizeof(*snap->tasks));
	t->samples = calloc(t->plan.nr_picks + 1, sizeof(*t->samples));
	t->sample_entry = calloc(t->plan.nr_picks + 1, sizeof(unsigned));
	t->sample_bytes = calloc(t->plan.nr_picks + 1, sizeof(uint64_t));
	if (!picked || !snap->tasks || !t->samples || !t->sample_entry || !t->sample_bytes) {
		free(picked);
		return -ENOMEM;
	}
	/* Make every state first: adding one moves the others, and samples
	 * point into them. */
	for (unsigned p = 0; p < t->plan.nr_picks; p++) {
		picked[t->plan.picks[p]] = true;
		if (!get_state(engine, &t->list.tasks[t->plan.picks[p]])) {
			free(picked);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < t->list.nr; i++) {
		struct np_task *task = &t->list.tasks[i];
		struct np_report_task *rt = &snap->tasks[snap->nr_tasks];
		uint64_t bytes_read;
		int r;

		if (!picked[i] && !shown_in_report(engine, task))
			continue;
		rt->task = *task;
		memset(task, 0, sizeof(*task)); /* the entry owns it now */
		rt->picked = picked[i];
		rt->verdict = t->plan.verdicts[i];
		r = np_report_observe_task(engine->ctx, engine->parser, rt, &bytes_read);
		if (rt->picked) {
			np_log(engine->ctx, LOG_DEBUG, "read numa_maps of pid %d (%s), age %llu ms: %d",
			       rt->task.pid, rt->task.comm, (unsigned long long)rt->task.age_ms, r);
			np_stats_add_scan(engine->stats, bytes_read);
			if (r != 0)
				np_sched_done(engine->sched, &rt->task, bytes_read, NP_SCAN_FAILED);
		}
		if (r < 0) {
			err = r;
			np_report_task_clear(rt);
			break;
		}
		if (r > 0) {
			np_report_task_clear(rt);
			memset(rt, 0, sizeof(*rt));
			continue;
		}
		locate(engine, snap, rt, rt->picked ? &find_state(engine, rt->task.pid)->hist : NULL);
		if (rt->picked) {
			struct task_state *st = find_state(engine, rt->task.pid);
			struct np_policy_task *s = &t->samples[t->nr_samples];

			s->task = &rt->task;
			s->node_bytes = rt->node_bytes;
			s->nr_node_slots = rt->nr_node_slots;
			s->cpu_percent = cpu_percent(st, &rt->task, &t->list, now_ms);
			s->hist = &st->hist;
			t->sample_bytes[t->nr_samples] = bytes_read;
			t->sample_entry[t->nr_samples++] = snap->nr_tasks;
		} else {
			enum np_reason reason = verdict_reason(rt->verdict.reason);

			skip_action(rt, reason, &rt->verdict, &engine->cfg);
		}
		snap->nr_tasks++;
	}
	free(picked);
	return err;
}

static int decide_and_act(struct np_engine *engine, struct tick *t, uint64_t now_ms)
{
	struct np_report *snap = t->snap;
	struct np_policy_machine m = machine_of(snap);
	struct np_policy_history *saved;
	struct np_action *actions;
	int *previous;
	unsigned looks;
	int err = 0;

	if (!t->nr_samples)
		return 0;
	actions = calloc(t->nr_samples, sizeof(*actions));
	previous = calloc(t->nr_samples, sizeof(int));
	if (!actions || !previous) {
		free(actions);
		free(previous);
		return -ENOMEM;
	}
	saved = calloc(t->nr_samples, sizeof(*saved));
	if (!saved) {
		free(actions);
		free(previous);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < t->nr_samples; i++) {
		previous[i] = t->samples[i].hist->target_node;
		saved[i] = *t->samples[i].hist;
	}
	/* A report is a single look. It shows what the daemon would do if what
	 * it sees now lasted: the looks a first move of threads that are not
	 * pinned waits for go by on the same sample. */
	looks = engine->report && engine->cfg.hysteresis_periods ? engine->cfg.hysteresis_periods : 1;
	for (unsigned k = 0; !err && k < looks; k++)
		err = np_policy_decide_all(&m, &engine->cfg, t->samples, t->nr_samples, actions);
	for (unsigned i = 0; !err && i < t->nr_samples; i++) {
		struct np_report_task *rt = &snap->tasks[t->sample_entry[i]];
		struct task_state *st = find_state(engine, rt->task.pid);
		enum np_skip_reason skip;
		enum np_scan_outcome outcome;

		if (engine->should_stop && engine->should_stop(engine->stop_data))
			break;

		rt->action = actions[i];
		rt->has_decision = true;
		skip = stats_skip(rt->action.reason);
		if (skip != NP_SKIP_NR)
			np_stats_add_skip(engine->stats, skip);
		outcome = act(engine, rt, snap->topo, st, previous[i]);
		/* The policy counts a move as made: one that failed is not. */
		if (outcome == NP_SCAN_FAILED)
			st->hist = saved[i];
		st->last_look_ms = now_ms;
		st->last_cpu_ticks = rt->task.cpu_ticks;
		np_sched_done(engine->sched, &rt->task, t->sample_bytes[i], outcome);
	}
	free(actions);
	free(previous);
	free(saved);
	return err;
}

int np_engine_tick(struct np_engine *engine, struct np_report **snapshot)
{
	struct tick t = {0};
	uint64_t now_ms = np_clock_now_ms(engine->clock);
	int err;

	t.snap = calloc(1, sizeof(*t.snap));
	if (!t.snap)
		return -ENOMEM;
	err = observe(engine, &t);
	if (!err)
		err = read_tasks(engine, &t, now_ms);
	if (!err)
		err = decide_and_act(engine, &t, now_ms);
	tick_clear(&t);
	if (err || !snapshot) {
		np_report_free(t.snap);
		return err;
	}
	*snapshot = t.snap;
	return 0;
}
