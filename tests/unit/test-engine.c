/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "engine.h"
#include "fake-events.h"
#include "procevents.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

static const struct np_snap_task *find_task(const struct np_snapshot *r, int pid)
{
	for (unsigned i = 0; i < r->nr_tasks; i++)
		if (r->tasks[i].task.pid == pid)
			return &r->tasks[i];
	return NULL;
}

/* A copy of fixture @name in a new directory @root (a mkdtemp template),
 * then @edit (shell, run in its proc/; NULL: none) to make it odd. Returns
 * false, having said why, when it could not be made. */
static bool fixture_copy(char *root, const char *name, const char *edit)
{
	char cmd[8192];

	if (!mkdtemp(root)) {
		CHECK(!"mkdtemp");
		return false;
	}
	snprintf(cmd, sizeof(cmd), "cp -R '%s'/. '%s' && cd '%s/proc' && %s", fixture(name), root,
		 root, edit ? edit : "true");
	CHECK_INT(system(cmd), 0);
	return true;
}

static void tree_remove(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

/* The one-shot report: every user task shown, each with what the daemon
 * would do and why. */
/* An engine on the fixture tree at @root with @cfg, on a virtual clock at
 * 1,000 s (set in @params with the context). */
static void engine_start(const char *root, struct np_engine_params *params,
			 const struct np_config *cfg, struct np_ctx **ctx, struct np_engine **engine)
{
	CHECK_INT(np_ctx_new(root, ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params->clock), 0);
	params->ctx = *ctx;
	CHECK_INT(np_engine_new(params, cfg, engine), 0);
}

/* What engine_start made, the configuration and the tree, freed. */
static void engine_end(const char *root, struct np_engine_params *params, struct np_config *cfg,
		       struct np_ctx *ctx, struct np_engine *engine)
{
	np_engine_free(engine);
	np_clock_free(params->clock);
	np_config_free(cfg);
	np_ctx_free(ctx);
	tree_remove(root);
}

static void test_report_decisions(void)
{
	struct np_config cfg;
	struct np_snapshot *r;
	struct np_ctx *ctx;
	const struct np_snap_task *t;

	np_config_init(&cfg);
	/* Memory only: what these check is where memory goes. */
	cfg.affinity = NP_AFFINITY_NEVER;
	CHECK_INT(np_ctx_new(fixture("engine-2node"), &ctx), 0);
	CHECK_INT(np_engine_look_once(ctx, &cfg, 1 << 20, &r), 0);
	CHECK_INT(r->nr_tasks, 4); /* not the kernel thread */
	CHECK_INT(r->kernel_numa_balancing, 0);

	t = find_task(r, 100);
	CHECK(t && t->has_decision);
	if (t) {
		CHECK_INT(t->run_node, 0);
		CHECK_INT(t->action.kind, NP_ACTION_MOVE);
		CHECK_INT(t->action.reason, NP_REASON_MISPLACED);
		CHECK_INT(t->action.target_node, 0);
		CHECK_U64(t->action.move_bytes, 102390ull * 4096);
		CHECK(t->locality < 0.01);
	}
	t = find_task(r, 200);
	CHECK(t && t->has_decision && t->action.kind == NP_ACTION_KEEP);
	if (t)
		CHECK_INT(t->action.reason, NP_REASON_LOCAL);
	t = find_task(r, 300);
	CHECK(t && t->has_decision && t->action.kind == NP_ACTION_SKIP);
	if (t) {
		CHECK_INT(t->action.reason, NP_REASON_TOO_YOUNG);
		/* Shown with its memory all the same. */
		CHECK_U64(t->mem.total_bytes, 51200ull * 4096);
	}
	t = find_task(r, 400);
	CHECK(t && t->action.kind == NP_ACTION_SKIP && t->action.reason == NP_REASON_TOO_SMALL);
	CHECK(find_task(r, 2) == NULL);
	np_snapshot_free(r);

	/* With the young task's delay gone, it is decided on like the others. */
	cfg.scan_delay_ms = 0;
	CHECK_INT(np_engine_look_once(ctx, &cfg, 1 << 20, &r), 0);
	t = find_task(r, 300);
	CHECK(t && t->action.reason != NP_REASON_TOO_YOUNG);
	np_snapshot_free(r);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* The hog's (pid 100's) allowed CPUs in the fixture copy at @root. */
static void set_hog_cpus(const char *root, const char *cpus)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd),
		 "sed -i 's/^Cpus_allowed_list:.*/Cpus_allowed_list:\t%s/' '%s/proc/100/status'",
		 cpus, root);
	CHECK_INT(system(cmd), 0);
}

/* A tick @ms after the last; numa_maps read so far. */
static uint64_t reads_after(struct np_engine *engine, struct np_clock *clock, uint64_t ms)
{
	np_clock_advance(clock, ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	return np_engine_sched_counters(engine)->numa_maps_reads;
}

/* A task whose CPUs its user changed since its last look is read at the
 * tick nearest a shortest period after the change, not before; one whose
 * CPUs stay, or move within their nodes, is not. */
static void test_repinned_due(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-XXXXXX";
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t quarter;

	if (!fixture_copy(root, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	cfg.affinity = NP_AFFINITY_NEVER;
	quarter = cfg.scan_period_min_ms / 4;
	/* The ticks below come at most a quarter period apart: periods end
	 * an eighth early (half a tick), not later than the tick nearest. */
	cfg.tick_ms = quarter;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_U64(reads_after(engine, params.clock, 0), 2); /* hog and local */
	/* Within the period, nothing changed: nothing read. */
	CHECK_U64(reads_after(engine, params.clock, quarter), 2);
	/* Another CPU of the same nodes: no memory to move, nothing read. */
	set_hog_cpus(root, "0,2");
	CHECK_U64(reads_after(engine, params.clock, quarter), 2);
	/* The hog pinned to node 1's CPUs: read one shortest period after
	 * the tick that saw it (its CPU use measured from there), not before,
	 * though the period it was in had doubled to twice that. */
	set_hog_cpus(root, "2-3");
	CHECK_U64(reads_after(engine, params.clock, quarter / 2), 2); /* sees it */
	CHECK_U64(reads_after(engine, params.clock, 2 * quarter), 2);
	CHECK_U64(reads_after(engine, params.clock, 2 * quarter), 3);
	/* And not again while its CPUs stay: the next read is the local
	 * task's, its period doubled to two shortest ones at its first read
	 * and met by the tick nearest to its end (half a tick early). */
	CHECK_U64(reads_after(engine, params.clock, quarter / 2), 3);
	CHECK_U64(reads_after(engine, params.clock, quarter / 2), 4);
	CHECK_U64(reads_after(engine, params.clock, 2 * quarter), 4);

	engine_end(root, &params, &cfg, ctx, engine);
}

/* The hog's (pid 100's) CPU time in clock ticks, user mode. */
static void set_hog_utime(const char *root, unsigned long long ticks)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd),
		 "sed -i -E 's/^(100 \\(hog\\)( [^ ]+){11}) [0-9]+/\\1 %llu/' '%s/proc/100/stat'",
		 ticks, root);
	CHECK_INT(system(cmd), 0);
}

/* The CPU use of the hog's last look (or, with @demand, the CPUs the plan
 * counted for it then), as a status shows it. */
static double hog_figure(const struct np_engine *engine, bool demand)
{
	struct np_snapshot *status;
	const struct np_snap_task *e;
	double v = -1;

	CHECK_INT(np_engine_status(engine, &status), 0);
	e = find_task(status, 100);
	CHECK(e != NULL);
	if (e)
		v = demand ? e->action.demand : e->live.cpu_percent;
	np_snapshot_free(status);
	return v;
}

/* The hog's last look measured @want percent of a CPU, within 10%. */
static void expect_hog_cpu(const struct np_engine *engine, double want, const char *what)
{
	double cpu = hog_figure(engine, false);

	if (!(cpu > 0.9 * want && cpu < 1.1 * want))
		fprintf(stderr, "%s: %.2f%% CPU, expected %.2f\n", what, cpu, want);
	CHECK(cpu > 0.9 * want && cpu < 1.1 * want);
}

/* How many looks the hog has had, as a status shows them. */
static unsigned hog_looks(const struct np_engine *engine)
{
	struct np_snapshot *status;
	const struct np_snap_task *e;
	unsigned n = 0;

	CHECK_INT(np_engine_status(engine, &status), 0);
	e = find_task(status, 100);
	if (e)
		n = e->live.looks;
	np_snapshot_free(status);
	return n;
}

/* The fixture copy at @root made a machine of four nodes of one CPU each
 * (CPU N on node N), node 2 and 3 like node 1. */
static void four_nodes_of_one(const char *root)
{
	char cmd[8192];

	snprintf(
	    cmd, sizeof(cmd),
	    "cd '%s/sys/devices/system/node' && echo 0-3 >online && "
	    "for n in 2 3; do cp -R node1 node$n && sed -i \"s/Node 1/Node $n/\" node$n/meminfo; "
	    "done && for n in 0 1 2 3; do echo $n >node$n/cpulist; "
	    "awk -v n=$n 'BEGIN { for (i = 0; i < 4; i++) printf \"%%s%%d\", i ? \" \" : \"\", "
	    "i == n ? 10 : 20; print \"\" }' >node$n/distance; done",
	    root);
	CHECK_INT(system(cmd), 0);
}

/* The hog's threads' (100 and 101) waits for a CPU so far, in ms, each
 * in a schedstat of its own. */
static void set_hog_waits(const char *root, uint64_t ms)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd),
		 "for t in 100 101; do echo \"1000 %llu 5\" >'%s/proc/100/task/'$t/schedstat; done",
		 (unsigned long long)ms * 1000000, root);
	CHECK_INT(system(cmd), 0);
}

/* An engine on a copy of engine-2node made four nodes of one CPU
 * (four_nodes_of_one), placing tasks (affinity = unpinned) with
 * @min_cpu_percent, the hog on CPUs 0-1 with @ticks of CPU time (and,
 * with @waits, schedstat files that show no wait yet). False, having said
 * why, when the copy could not be made. */
static bool repin_engine_start(char *root, unsigned min_cpu_percent, unsigned long long ticks,
			       bool waits, struct np_engine_params *params, struct np_config *cfg,
			       struct np_ctx **ctx, struct np_engine **engine)
{
	if (!fixture_copy(root, "engine-2node", NULL))
		return false;
	four_nodes_of_one(root);
	np_config_init(cfg);
	cfg->min_cpu_percent = min_cpu_percent;
	cfg->affinity = NP_AFFINITY_UNPINNED;
	CHECK_INT(np_ctx_new(root, ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params->clock), 0);
	params->ctx = *ctx;
	set_hog_cpus(root, "0-1");
	set_hog_utime(root, ticks);
	if (waits)
		set_hog_waits(root, 0);
	CHECK_INT(np_engine_new(params, cfg, engine), 0);
	return true;
}

/* A task whose user gave it CPUs on other nodes, more than one, when it
 * was due anyway waits, too, for a shortest period of use on its new CPUs:
 * a look at once would judge it by a window of nothing (read as no use: a
 * task that lets go of the node it allocated on was homed beside another
 * as if it needed no CPU) or by its use under the old mask (one CPU's
 * worth: homed on a node of one CPU, then spread). So does one whose
 * period has grown to the longest. One re-pinned at every tick is looked
 * at once it has waited a longest period since the first change, by its
 * use since then. One pinned to a single node needs no window (its memory
 * follows its threads): looked at when due, by its use since its last
 * look. Nodes of one CPU: CPUs 0-1 and 2-3 are two nodes each. */
static void test_repinned_when_due(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-XXXXXX";
	unsigned long long hz = (unsigned long long)sysconf(_SC_CLK_TCK), ticks = 200000;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t min, max, waited;
	unsigned looks, n = 0;

	/* Placing tasks: the hold is for the tasks it places. */
	if (!repin_engine_start(root, 0, ticks, false, &params, &cfg, &ctx, &engine))
		return;
	min = cfg.scan_period_min_ms;
	max = cfg.scan_period_max_ms;
	/* Nothing changes for a while: its period grows to the longest. */
	for (unsigned i = 0; i < 10; i++)
		reads_after(engine, params.clock, max);
	looks = hog_looks(engine);
	CHECK(looks >= 8);
	/* A fifth of a CPU over that period, and given nodes 2 and 3 as it
	 * ends, when it is due: not looked at now. */
	ticks += max * hz / 5000;
	set_hog_utime(root, ticks);
	set_hog_cpus(root, "2-3");
	reads_after(engine, params.clock, max);
	CHECK_INT(hog_looks(engine), looks);
	/* A whole CPU from the change on: the look a shortest period later
	 * sees that. */
	ticks += min * hz / 1000;
	set_hog_utime(root, ticks);
	reads_after(engine, params.clock, min);
	CHECK_INT(hog_looks(engine), looks + 1);
	expect_hog_cpu(engine, 100, "re-pinned when due");

	/* Pinned to node 0 when due: looked at at once, by its use since its
	 * last look (half a CPU), not by a window of nothing. */
	reads_after(engine, params.clock, 4 * max); /* due again, and read */
	looks = hog_looks(engine);
	ticks += 4 * max * hz / 2000;
	set_hog_utime(root, ticks);
	set_hog_cpus(root, "0");
	reads_after(engine, params.clock, 4 * max);
	CHECK_INT(hog_looks(engine), looks + 1);
	expect_hog_cpu(engine, 50, "pinned to a node when due");

	/* Re-pinned at every tick, between nodes 0-1 and 2-3, with a CPU's
	 * worth of use in the tick after the first change and none after:
	 * looked at only after a longest period, by its use since the first
	 * change (not since the tick before: that would read 0%). */
	reads_after(engine, params.clock, 4 * max); /* due again */
	looks = hog_looks(engine);
	for (waited = 0; hog_looks(engine) == looks && waited <= 2 * max; waited += min) {
		if (n == 1) {
			ticks += min * hz / 1000;
			set_hog_utime(root, ticks);
		}
		set_hog_cpus(root, n++ % 2 ? "2-3" : "0-1");
		reads_after(engine, params.clock, min);
	}
	/* The first change's tick, a longest period of pokes, and the tick
	 * that finds it due. */
	CHECK_INT(hog_looks(engine), looks + 1);
	CHECK_U64(waited, max + min);
	expect_hog_cpu(engine, 100.0 * (double)min / (double)waited, "re-pinned at every tick");

	engine_end(root, &params, &cfg, ctx, engine);
}

/* A hold that ended in an idle look (no read) is over: the task's next
 * change of CPUs, much later, starts a hold and a window of its own, and
 * it is not looked at at that tick by its use since the old change. */
static void test_repinned_after_idle(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-XXXXXX";
	unsigned long long hz = (unsigned long long)sysconf(_SC_CLK_TCK), ticks = 200000;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t min, max;
	unsigned looks;

	if (!repin_engine_start(root, 10, ticks, false, &params, &cfg, &ctx, &engine))
		return;
	min = cfg.scan_period_min_ms;
	max = cfg.scan_period_max_ms;
	reads_after(engine, params.clock, 0);
	looks = hog_looks(engine);
	CHECK_INT(looks, 1);
	/* Given nodes 2-3 when due, and idle from then on: held, then passed
	 * over as idle. */
	ticks += 4 * max * hz / 1000;
	set_hog_utime(root, ticks);
	set_hog_cpus(root, "2-3");
	reads_after(engine, params.clock, 4 * max);
	CHECK_INT(hog_looks(engine), looks);
	for (unsigned i = 0; i < 10; i++)
		reads_after(engine, params.clock, max);
	CHECK_INT(hog_looks(engine), looks);
	/* Busy again for a while, then given nodes 0-1, due: held. */
	ticks += max * hz / 1000;
	set_hog_utime(root, ticks);
	set_hog_cpus(root, "0-1");
	reads_after(engine, params.clock, max);
	if (hog_looks(engine) != looks)
		fprintf(stderr, "re-pinned after an idle look: looked at at once\n");
	CHECK_INT(hog_looks(engine), looks);
	ticks += min * hz / 2000;
	set_hog_utime(root, ticks);
	reads_after(engine, params.clock, min);
	CHECK_INT(hog_looks(engine), looks + 1);
	expect_hog_cpu(engine, 50, "re-pinned after an idle look");

	engine_end(root, &params, &cfg, ctx, engine);
}

/* A 2-thread task squeezed onto two CPUs (a CPU's worth used, as much
 * waited for; nodes of one CPU) whose user lets it run anywhere: with its threads'
 * waits known (schedstat) it is looked at the tick that sees the change,
 * its demand two CPUs (the use and each thread's wait since its last
 * look, while it was squeezed, one thread having ended meanwhile);
 * without them (a kernel with no schedstat), it waits a shortest period
 * to be judged on its new CPUs, as before. */
static void repinned_with_wait(bool wait_known)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-XXXXXX";
	unsigned long long hz = (unsigned long long)sysconf(_SC_CLK_TCK), ticks = 200000;
	const char *what = wait_known ? "re-pinned, waits known" : "re-pinned, no waits";
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t min, max, wait_ms = 0;
	unsigned looks = 0;

	if (!repin_engine_start(root, 0, ticks, wait_known, &params, &cfg, &ctx, &engine))
		return;
	min = cfg.scan_period_min_ms;
	max = cfg.scan_period_max_ms;
	/* Squeezed for a while, a CPU used and a CPU waited for: its period
	 * grows to the longest, and it is looked at at the end of each. */
	for (unsigned i = 0; i < 11; i++) {
		if (i == 10) {
			looks = hog_looks(engine);
			CHECK(looks >= 8);
		}
		ticks += max * hz / 1000;
		set_hog_utime(root, ticks);
		wait_ms += max / 2;
		if (wait_known)
			set_hog_waits(root, wait_ms);
		reads_after(engine, params.clock, max);
	}
	CHECK_INT(hog_looks(engine), looks + 1);
	looks++;
	/* A shortest period later, not due, it is let run anywhere. */
	ticks += min * hz / 1000;
	set_hog_utime(root, ticks);
	if (wait_known) {
		/* Thread 101 ends, and 100 waits the whole period: each
		 * thread's wait since the last look counts, not their sum
		 * (which fell). */
		char cmd[4200];

		snprintf(cmd, sizeof(cmd),
			 "rm -r '%s/proc/100/task/101' && echo \"1000 %llu 5\" "
			 ">'%s/proc/100/task/100/schedstat'",
			 root, (unsigned long long)(wait_ms + min) * 1000000, root);
		CHECK_INT(system(cmd), 0);
	}
	set_hog_cpus(root, "0-3");
	reads_after(engine, params.clock, min);
	if (hog_looks(engine) != looks + wait_known)
		fprintf(stderr, "%s: %u looks after the change, expected %u\n", what,
			hog_looks(engine) - looks, (unsigned)wait_known);
	CHECK_INT(hog_looks(engine), looks + wait_known);
	if (wait_known) {
		double d = hog_figure(engine, true);

		if (!(d > 1.99 && d < 2.01))
			fprintf(stderr, "%s: demand %.2f, expected 2\n", what, d);
		CHECK(d > 1.99 && d < 2.01);
		/* Re-pinned again a shortest period later, to other nodes,
		 * and at every tick after, its two threads' waits known: not
		 * looked at at once again within a longest period, nor at
		 * every tick. */
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "cp -R '%s/proc/100/task/101' '%s/proc/100/task/'",
			 fixture("engine-2node"), root);
		CHECK_INT(system(cmd), 0);
		set_hog_waits(root, wait_ms + min);
		/* Its next look, when due, reads both. */
		looks = hog_looks(engine);
		for (unsigned i = 0; i < 64 && hog_looks(engine) == looks; i++)
			reads_after(engine, params.clock, min);
		CHECK_INT(hog_looks(engine), looks + 1);
		looks++;
		for (unsigned i = 0; i < 4; i++) {
			set_hog_cpus(root, i % 2 ? "0-1" : "2-3");
			reads_after(engine, params.clock, min);
		}
		CHECK_INT(hog_looks(engine), looks);
	} else {
		/* Two CPUs' use on its new CPUs: the look a shortest period
		 * later sees that. */
		ticks += 2 * min * hz / 1000;
		set_hog_utime(root, ticks);
		reads_after(engine, params.clock, min);
		CHECK_INT(hog_looks(engine), looks + 1);
		expect_hog_cpu(engine, 200, what);
	}
	engine_end(root, &params, &cfg, ctx, engine);
}

static void test_repinned_with_wait(void)
{
	repinned_with_wait(true);
	repinned_with_wait(false);
}

static int count_listed(void *data, const struct np_task_list *list)
{
	*(unsigned *)data += list->nr;
	return 0;
}

/* A tick reads the stat of the tasks the scheduler needs figures of and
 * keeps the others' last records; with an observer (--record) every task is
 * read, so that the trace holds what the machine said. */
static void test_kept_records(void)
{
	struct np_engine_params params = {.dry_run = true};
	struct np_stats *stats;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	unsigned observed = 0;
	uint64_t read, kept;

	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	CHECK_INT(np_ctx_new(fixture("engine-2node"), &ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params.clock), 0);
	params.ctx = ctx;
	CHECK_INT(np_engine_new(&params, &cfg, &engine), 0);
	stats = np_engine_stats(engine);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(np_stats_listed(stats, false), 5); /* all five, the first time */
	CHECK_U64(np_stats_listed(stats, true), 0);
	/* A quarter of a period on, nothing is needed: hog and local wait for
	 * their period, kthreadd and small (below min_rss_mb) for their
	 * waits, young (500 ms old; the fixture's uptime stands still) for
	 * its age, 500 ms from the first tick. */
	np_clock_advance(params.clock, cfg.scan_period_min_ms / 4);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	read = np_stats_listed(stats, false) - 5;
	kept = np_stats_listed(stats, true);
	CHECK_U64(read, 0);
	CHECK_U64(kept, 5);
	/* Recording: every task read. */
	np_engine_set_observer(engine, count_listed, &observed);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_INT(observed, 5);
	CHECK_U64(np_stats_listed(stats, true), kept);
	CHECK_U64(np_stats_listed(stats, false), 5 + read + 5);

	np_engine_free(engine);
	np_clock_free(params.clock);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* The daemon's cycle on a virtual clock: slow start, then one read per
 * period, dry-run moves recorded, nothing changed. */
static void test_ticks(void)
{
	struct np_engine_params params = {.dry_run = true};
	const struct np_sched_counters *sc;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_snapshot *snap;
	struct np_ctx *ctx;

	np_config_init(&cfg);
	/* Memory only: what these check is where memory goes. */
	cfg.affinity = NP_AFFINITY_NEVER;
	/* A fixture's CPU times stand still: without this, every task would be
	 * idle after its first look. */
	cfg.min_cpu_percent = 0;
	CHECK_INT(np_ctx_new(fixture("engine-2node"), &ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params.clock), 0);
	params.ctx = ctx;
	CHECK_INT(np_engine_new(&params, &cfg, &engine), 0);
	sc = np_engine_sched_counters(engine);

	CHECK_INT(np_engine_tick(engine, &snap), 0);
	/* hog and local are old and big enough; young, small and kthreadd not. */
	CHECK_INT(snap->nr_tasks, 2);
	CHECK_U64(sc->numa_maps_reads, 2);
	/* Every listed task has its state, read or not. */
	CHECK_INT(np_engine_tracked(engine), 5);
	/* The hog's threads are not pinned: a first move waits for three
	 * looks that agree. */
	CHECK(snap->nr_tasks == 2 && snap->tasks[0].action.reason == NP_REASON_HYSTERESIS);
	np_snapshot_free(snap);

	/* Inside the period nothing is read again. */
	np_clock_advance(params.clock, cfg.scan_period_min_ms / 2);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(sc->numa_maps_reads, 2);
	/* After it, both are. */
	np_clock_advance(params.clock, cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(sc->numa_maps_reads, 4);
	CHECK_U64(np_stats_scans(np_engine_stats(engine)), 4);
	/* The third look moves it (in the dry run, a record). */
	np_clock_advance(params.clock, cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK_U64(sc->numa_maps_reads, 6);
	CHECK(snap->nr_tasks == 2 && snap->tasks[0].action.kind == NP_ACTION_MOVE);
	CHECK(snap->nr_tasks == 2 && snap->tasks[0].outcome == NP_SNAP_DONE);
	/* The move acted on the tick's own read: one read per look, and the
	 * metrics and the summary count the same. */
	CHECK_U64(np_stats_scans(np_engine_stats(engine)), sc->numa_maps_reads);
	np_snapshot_free(snap);

	/* With the default CPU threshold, tasks whose CPU time stands still are
	 * idle: not read again. */
	cfg.min_cpu_percent = 5;
	CHECK_INT(np_engine_set_config(engine, &cfg), 0);
	np_clock_advance(params.clock, cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(sc->numa_maps_reads, 6);
	CHECK(sc->verdicts[NP_REASON_IDLE] >= 2);
	/* Every skip is counted, under the same reason in both. */
	CHECK_U64(np_stats_skips(np_engine_stats(engine), NP_REASON_IDLE),
		  sc->verdicts[NP_REASON_IDLE]);
	CHECK_U64(np_stats_skips(np_engine_stats(engine), NP_REASON_TOO_YOUNG),
		  sc->verdicts[NP_REASON_TOO_YOUNG]);

	/* A reload that the scheduler refuses keeps the old configuration. */
	cfg.scan_period_min_ms = 0;
	CHECK(np_engine_set_config(engine, &cfg) != 0);
	cfg.scan_period_min_ms = 2000;
	CHECK_INT(np_engine_set_config(engine, &cfg), 0);

	np_engine_free(engine);
	np_clock_free(params.clock);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* A tick reads the machine (each node's memory, the balancing sysctl) only
 * when its plan picks a task: one that picks none keeps the last figures,
 * and the next look has the new ones; so with nodes that came meanwhile. */
static void test_machine_read_when_deciding(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-machine-XXXXXX";
	char cmd[4300];
	struct np_snapshot *snap;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;

	if (!fixture_copy(root, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.affinity = NP_AFFINITY_NEVER;
	cfg.min_cpu_percent = 0;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && sed -i 's/MemFree: .*/MemFree:  524288 kB/' "
		 "sys/devices/system/node/node1/meminfo && echo 1 >proc/sys/kernel/numa_balancing",
		 root);
	CHECK_INT(system(cmd), 0);
	/* Inside the period: nothing read, the figures of the first tick. */
	np_clock_advance(params.clock, cfg.scan_period_min_ms / 2);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap && snap->nr_tasks == 0);
	CHECK(snap && snap->topo->nr_nodes == 2);
	CHECK_U64(snap ? snap->topo->nodes[1].mem_free : 0, 1572864ull << 10);
	CHECK_INT(snap ? snap->kernel_numa_balancing : -2, 0);
	np_snapshot_free(snap);
	/* The next look: the new ones. */
	np_clock_advance(params.clock, cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap && snap->nr_tasks == 2);
	CHECK_U64(snap ? snap->topo->nodes[1].mem_free : 0, 524288ull << 10);
	CHECK_INT(snap ? snap->kernel_numa_balancing : -2, 1);
	np_snapshot_free(snap);
	/* Two nodes more: a tick that picks nothing still has two (and its
	 * load per node two entries), the next look four, and the status
	 * what that look saw. */
	four_nodes_of_one(root);
	np_clock_advance(params.clock, cfg.scan_period_min_ms / 2);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap && snap->nr_tasks == 0 && snap->topo->nr_nodes == 2);
	np_snapshot_free(snap);
	np_clock_advance(params.clock, 2 * cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap && snap->nr_tasks == 2 && snap->topo->nr_nodes == 4);
	CHECK(snap && snap->node_plan != NULL);
	np_snapshot_free(snap);
	CHECK_INT(np_engine_status(engine, &snap), 0);
	CHECK(snap && snap->topo->nr_nodes == 4);
	np_snapshot_free(snap);

	engine_end(root, &params, &cfg, ctx, engine);
}

/* With the defaults a task nobody pinned gets a home: the hog's memory is
 * on node 1, so its threads are narrowed there; the plan's demand per node
 * is in the snapshot. */
static void test_home(void)
{
	struct np_engine_params params = {.dry_run = true};
	const struct np_action_record *rec;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_snapshot *snap;
	struct np_ctx *ctx;
	unsigned nr;

	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	CHECK_INT(np_ctx_new(fixture("engine-2node"), &ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params.clock), 0);
	params.ctx = ctx;
	CHECK_INT(np_engine_new(&params, &cfg, &engine), 0);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap->nr_tasks == 2);
	if (snap->nr_tasks == 2) {
		const struct np_snap_task *hog = &snap->tasks[0];

		CHECK_INT(hog->task.pid, 100);
		CHECK_INT(hog->action.kind, NP_ACTION_MOVE);
		CHECK_INT(hog->action.reason, NP_REASON_HOME);
		CHECK(hog->action.planned);
		CHECK_INT(hog->action.plan_home, 1);
		CHECK_INT(hog->action.plan_reason, NP_PLAN_MEMORY);
		CHECK(hog->action.set_affinity);
		CHECK_INT(hog->outcome, NP_SNAP_DONE);
		CHECK(strstr(hog->action.reason_text, "threads to CPUs 2-3"));
	}
	CHECK(snap->node_plan != NULL);
	if (snap->node_plan)
		CHECK_INT(snap->node_plan[1].cpus, 2);
	/* Both threads narrowed; its 3 stack pages on node 0 leave it above
	 * the locality target, so no page moves. */
	rec = np_engine_dry_records(engine, &nr);
	CHECK_INT(nr, 2);
	if (nr == 2) {
		CHECK_INT(rec[0].kind, NP_RECORD_AFFINITY);
		CHECK_INT(rec[1].kind, NP_RECORD_AFFINITY);
		CHECK_INT(rec[1].tid, 101);
	}
	np_snapshot_free(snap);
	np_engine_free(engine);
	np_clock_free(params.clock);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* Threads narrowed while their pages must wait (here the rate limit,
 * spent by the task moved before) are recorded as narrowed: the mask is
 * the daemon's, given back at its stop, not read as its user's. */
static void test_narrowed_waits(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-wait-XXXXXX";
	struct np_saved_mask *saved = NULL;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_snapshot *snap;
	struct np_ctx *ctx;
	const struct np_snap_task *e;
	size_t n = 0;

	/* Both tasks' memory split between the nodes, most of it on the
	 * home the plan gives each. */
	if (!fixture_copy(root, "engine-2node",
			  "sed -i 's/N1=102390/N0=30000 N1=72390/' 100/numa_maps && "
			  "sed -i 's/N1=51200/N0=10000 N1=41200/' 200/numa_maps && "
			  "sed 's/^Pid:.*/Pid:\\t200/' 100/task/101/status >200/task/200/status && "
			  "printf '7f1000000000-7f100c800000 rw-p 00000000 00:00 0 \\n' >200/maps"))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	cfg.migrate_rate_mb_s = 1;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	/* The hog's move spends the second's budget; local's pages wait. */
	e = find_task(snap, 100);
	CHECK(e && e->action.set_affinity && e->action.move_pages && e->outcome == NP_SNAP_DONE);
	e = find_task(snap, 200);
	CHECK(e && e->action.set_affinity && e->action.move_pages &&
	      e->outcome == NP_SNAP_DEFERRED);
	CHECK_U64(np_stats_skips(np_engine_stats(engine), NP_REASON_RATE_LIMIT), 1);
	CHECK_INT(np_engine_saved_masks(engine, &saved, &n), 0);
	CHECK_INT(n, 2);
	for (size_t k = 0; k < n; k++) {
		char text[64];

		np_bitmap_format_list(&saved[k].narrowed, text, sizeof(text));
		CHECK_STR(text, "2-3");
		np_bitmap_format_list(&saved[k].before, text, sizeof(text));
		CHECK_STR(text, "0-3");
	}
	free(saved);
	np_snapshot_free(snap);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* Count the dry run's mask changes to CPUs 0-3 of the processes from 500
 * on, by pid. */
static void count_widened(struct np_engine *engine, unsigned *widened)
{
	const struct np_action_record *rec;
	unsigned nr;

	rec = np_engine_dry_records(engine, &nr);
	for (unsigned i = 0; i < nr; i++) {
		char text[64];

		if (rec[i].kind != NP_RECORD_AFFINITY || rec[i].pid < 500)
			continue;
		np_bitmap_format_list(&rec[i].cpus, text, sizeof(text));
		CHECK_STR(text, "0-3");
		CHECK_INT(rec[i].tid, rec[i].pid);
		if (rec[i].pid < 1000)
			widened[rec[i].pid]++;
	}
}

/* A shell function for fixture edits: "mk PID PPID MASK CPULIST" makes a
 * one-thread process like the hog, born later. */
static const char mk_process[] =
    "mk() { mkdir -p $1/task/$1 && "
    "sed \"s/^100 (hog) S 1 100 100/$1 (child) S $2 $1 $1/; "
    "s/ 20 0 2 0 100000 0 102400 / 20 0 1 0 400000 0 256 /\" 100/task/100/stat "
    ">$1/task/$1/stat && cp $1/task/$1/stat $1/stat && "
    "sed \"s/^Tgid:.*/Tgid:\\t$1/; s/^Pid:.*/Pid:\\t$1/; s/^Threads:.*/Threads:\\t1/; "
    "s/^Cpus_allowed:.*/Cpus_allowed:\\t$3/; "
    "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\\t$4/\" 100/status >$1/status && "
    "cp $1/status $1/task/$1/status; }";

/* A process started by a task the daemon narrowed inherits the narrowed
 * mask: at the tick that first lists it (and its own children), the
 * threads with that mask get the parent's mask from before back; a child
 * with a mask of its own, or a child of a task nobody narrowed, is left
 * alone, and so is a child of a process listed before with a mask of its
 * own. The hog is narrowed to CPUs 2-3 (from 0-3) at the first tick (the
 * fixture then plays the actuator of this dry run); the children appear
 * before the second tick, more before the third. */
static void test_inherited_mask(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-inherit-XXXXXX", cmd[8192];
	struct np_engine *engine;
	struct np_config cfg;
	struct np_snapshot *snap;
	struct np_ctx *ctx;
	unsigned widened[1000] = {0};

	/* local is pinned to node 1 by its user. */
	if (!fixture_copy(root, "engine-2node",
			  "sed -i 's/^Cpus_allowed:.*/Cpus_allowed:\tc/; "
			  "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\t2-3/' 200/status"))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(find_task(snap, 100) && find_task(snap, 100)->action.set_affinity);
	/* local is not narrowed: its child 800 below has its user's mask,
	 * the same CPUs. */
	CHECK(find_task(snap, 200) && !find_task(snap, 200)->action.set_affinity);
	np_snapshot_free(snap);
	/* pid ppid CPUs: 500 and its child 600 carry the hog's narrowed
	 * mask; 700 has a mask of its own; 800, a child of local, has the
	 * same CPUs from local's user. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/proc' && %s && "
		 "mk 500 100 c 2-3 && mk 600 500 c 2-3 && mk 700 100 3 0-1 && mk 800 200 c 2-3 && "
		 "sed -i 's/^Cpus_allowed:.*/Cpus_allowed:\tc/; "
		 "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\t2-3/' 100/status 100/task/*/status",
		 root, mk_process);
	CHECK_INT(system(cmd), 0);
	np_clock_advance(params.clock, cfg.tick_ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	count_widened(engine, widened);
	/* The third tick: 950's parent was given the mask back, 900's has
	 * its own (listed before). */
	snprintf(cmd, sizeof(cmd), "cd '%s/proc' && %s && mk 900 700 c 2-3 && mk 950 600 c 2-3",
		 root, mk_process);
	CHECK_INT(system(cmd), 0);
	np_clock_advance(params.clock, cfg.tick_ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	count_widened(engine, widened);
	CHECK_INT(widened[500], 1);
	CHECK_INT(widened[600], 1);
	CHECK_INT(widened[700], 0);
	CHECK_INT(widened[800], 0);
	CHECK_INT(widened[900], 0);
	CHECK_INT(widened[950], 1);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* Memory the actuator will not move (under the task's own policy, or file
 * pages other tasks map) is not misplaced: the report and the daemon agree
 * on it. */
static void test_user_policy(void)
{
	struct np_config cfg;
	struct np_snapshot *r;
	struct np_ctx *ctx;
	const struct np_snap_task *t;

	np_config_init(&cfg);
	/* Memory only: what these check is where memory goes. */
	cfg.affinity = NP_AFFINITY_NEVER;
	CHECK_INT(np_ctx_new(fixture("userpolicy-2node"), &ctx), 0);
	CHECK_INT(np_engine_look_once(ctx, &cfg, 1 << 20, &r), 0);
	/* All of it under prefer:1. */
	t = find_task(r, 100);
	CHECK(t && t->action.kind == NP_ACTION_KEEP && t->action.reason == NP_REASON_USER_POLICY);
	if (t) {
		CHECK(
		    strstr(t->action.reason_text, "400 MiB under its own memory policy (prefer)"));
		CHECK_U64(t->action.move_bytes, 0);
	}
	/* Only the anonymous part moves; the shared file stays. */
	t = find_task(r, 200);
	CHECK(t && t->action.kind == NP_ACTION_MOVE);
	if (t) {
		CHECK_U64(t->action.move_bytes, 300ull << 20);
		CHECK(strstr(t->action.reason_text, "50 MiB of files other tasks map stays"));
	}
	t = find_task(r, 300);
	CHECK(t && t->action.kind == NP_ACTION_KEEP && t->action.reason == NP_REASON_USER_POLICY);
	if (t)
		CHECK(strstr(t->action.reason_text, "(bind, interleave)"));
	np_snapshot_free(r);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* A move that moves nothing is not tried again at the next look: the
 * engine backs off and the snapshot says so once. */
static void test_no_effect(void)
{
	struct np_engine_params params = {.dry_run = true};
	struct np_engine *engine;
	struct np_config cfg;
	struct np_snapshot *snap;
	struct np_ctx *ctx;
	unsigned no_effect = 0, first = 0, deferred = 0;

	np_config_init(&cfg);
	/* Memory only: what these check is where memory goes. */
	cfg.affinity = NP_AFFINITY_NEVER;
	cfg.min_cpu_percent = 0;
	cfg.min_rss_mb = 1;
	CHECK_INT(np_ctx_new(fixture("userpolicy-2node"), &ctx), 0);
	CHECK_INT(np_clock_new_virtual(1000000, &params.clock), 0);
	params.ctx = ctx;
	/* pid 200's maps has no range for its anonymous VMA: the actuator
	 * finds nothing it can move where numa_maps said there was. */
	CHECK_INT(np_engine_new(&params, &cfg, &engine), 0);
	for (int i = 0; i < 12; i++) {
		CHECK_INT(np_engine_tick(engine, &snap), 0);
		for (unsigned k = 0; k < snap->nr_tasks; k++) {
			const struct np_snap_task *e = &snap->tasks[k];

			if (e->task.pid != 200 || e->action.kind != NP_ACTION_MOVE)
				continue;
			no_effect += e->outcome == NP_SNAP_NO_EFFECT;
			first += e->first_no_effect;
			deferred += e->outcome == NP_SNAP_DEFERRED;
		}
		np_snapshot_free(snap);
		np_clock_advance(params.clock, cfg.scan_period_max_ms);
	}
	CHECK_INT(first, 1);
	CHECK(no_effect >= 1 && no_effect < 6);
	CHECK(deferred >= 4);
	CHECK(np_stats_skips(np_engine_stats(engine), NP_REASON_NO_EFFECT) >= 4);
	np_engine_free(engine);
	np_clock_free(params.clock);
	np_config_free(&cfg);
	np_ctx_free(ctx);
}

/* Compare @text with tests/golden/@name, or rewrite it with
 * NP_UPDATE_GOLDEN=1. */
static void check_golden(const char *name, const char *text)
{
	const char *root = getenv("NP_SOURCE_ROOT"), *update = getenv("NP_UPDATE_GOLDEN");
	char path[4096], *want = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/golden/%s", root ? root : ".", name);
	if (update && !strcmp(update, "1")) {
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fputs(text, f);
			fclose(f);
		}
		return;
	}
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(getdelim(&want, &len, '\0', f) >= 0);
	fclose(f);
	if (want && strcmp(want, text)) {
		CHECK_STR(text, want);
		fprintf(stderr, "%s differs (NP_UPDATE_GOLDEN=1 rewrites it)\n", path);
	}
	free(want);
}

static char *status_output(const struct np_snapshot *snap, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	CHECK_INT(json ? np_report_write_json(snap, f) : np_report_write_text(snap, f), 0);
	fclose(f);
	return text;
}

/* The running daemon's view: what each task's looks left, the last action
 * and when, the mask it keeps narrowed, and the nodes as last decided on,
 * all on the engine's clock. */
static void test_status(void)
{
	struct np_engine_params params = {.dry_run = true};
	struct np_snapshot *snap = NULL;
	const struct np_snap_task *hog, *local;
	char root[] = "/tmp/np-engine-status-XXXXXX", cmd[4200];
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t age;
	char *text;

	if (!fixture_copy(root, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	engine_start(root, &params, &cfg, &ctx, &engine);
	/* Before the first tick there is nothing to show. */
	CHECK_INT(np_engine_status(engine, &snap), -EAGAIN);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	hog = snap ? find_task(snap, 100) : NULL;
	CHECK(hog != NULL);
	age = hog ? hog->task.age_ms : 0;
	np_snapshot_free(snap);
	snap = NULL;
	np_clock_advance(params.clock, 1500);
	CHECK_INT(np_engine_status(engine, &snap), 0);
	if (!snap)
		goto out;
	CHECK(snap->live && snap->dry_run);
	CHECK_U64(snap->now_ms - snap->decided_ms, 1500);
	CHECK(snap->node_plan != NULL);
	CHECK_INT(snap->nr_tasks, 2);
	hog = find_task(snap, 100);
	local = find_task(snap, 200);
	CHECK(hog && local);
	if (hog && local) {
		CHECK_INT(hog->live.looks, 1);
		CHECK_U64(snap->now_ms - hog->live.look_ms, 1500);
		/* Its age goes on from the look. */
		CHECK_U64(hog->task.age_ms, age + 1500);
		CHECK(hog->live.acted);
		CHECK_INT(hog->live.last_action.kind, NP_ACTION_MOVE);
		CHECK_INT(hog->live.last_action.reason, NP_REASON_HOME);
		CHECK_INT(hog->live.last_action.target_node, 1);
		CHECK_INT(hog->live.last_action.outcome, NP_SNAP_DONE);
		CHECK(hog->live.last_action.set_affinity);
		CHECK(hog->action.narrowed);
		CHECK(np_bitmap_test(&hog->action.narrowed_to, 2) &&
		      !np_bitmap_test(&hog->action.narrowed_to, 0));
	}
	np_snapshot_free(snap);
	snap = NULL;

	/* A second look: counted. A dry run narrows the hog again (its mask
	 * never changed), and the last action is this one; local's did
	 * nothing at the first look, so this one is deferred, and the last
	 * action stays the first. The hog ran 30 s of CPU meanwhile: one
	 * idle since its last look would not be narrowed again. */
	snprintf(cmd, sizeof(cmd), "sed -i 's/ 200000 0 0 0 20 / 203000 0 0 0 20 /' '%s/proc/100/stat'",
		 root);
	CHECK_INT(system(cmd), 0);
	np_clock_advance(params.clock, cfg.scan_period_max_ms);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	np_clock_advance(params.clock, 250);
	CHECK_INT(np_engine_status(engine, &snap), 0);
	if (!snap)
		goto out;
	hog = find_task(snap, 100);
	local = find_task(snap, 200);
	CHECK(hog && local);
	if (hog && local) {
		CHECK_INT(hog->live.looks, 2);
		CHECK_U64(snap->now_ms - hog->live.look_ms, 250);
		CHECK_U64(snap->now_ms - hog->live.last_action.at_ms, 250);
		CHECK_INT(local->live.looks, 2);
		CHECK(local->live.acted);
		CHECK_INT(local->live.last_action.outcome, NP_SNAP_NO_EFFECT);
		CHECK_U64(snap->now_ms - local->live.last_action.at_ms,
			  cfg.scan_period_max_ms + 1500 + 250);
	}
	text = status_output(snap, false);
	if (text)
		check_golden("status-engine-2node.text", text);
	free(text);
	text = status_output(snap, true);
	if (text)
		check_golden("status-engine-2node.json", text);
	free(text);
out:
	np_snapshot_free(snap);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* One odd file leaves its task out of the cycle, counted as a failed
 * read; the cycle and the other tasks go on. The tree is engine-2node with
 * a directory for hog's numa_maps and a cgroup file for local too large to
 * read, made at test time. */
static void test_odd_files(void)
{
	struct np_engine_params params = {.dry_run = true};
	char root[] = "/tmp/np-engine-odd-XXXXXX";
	struct np_snapshot *snap;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	struct np_stats *stats;

	if (!fixture_copy(root, "engine-2node",
			  "rm 100/numa_maps && mkdir 100/numa_maps && "
			  "head -c 300000 /dev/zero | tr '\\0' x >200/cgroup"))
		return;
	np_config_init(&cfg);
	cfg.affinity = NP_AFFINITY_NEVER;
	cfg.scan_delay_ms = 0;
	cfg.min_cpu_percent = 0;
	cfg.min_rss_mb = 0;
	engine_start(root, &params, &cfg, &ctx, &engine);
	stats = np_engine_stats(engine);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	/* young and small are read; hog and local are not, and say why. */
	CHECK(snap && snap->nr_tasks == 2);
	CHECK(snap && !find_task(snap, 100) && !find_task(snap, 200));
	CHECK(snap && find_task(snap, 300) && find_task(snap, 400));
	CHECK_U64(np_stats_failures(stats, NP_CALL_READ, -EISDIR), 1);
	CHECK_U64(np_stats_failures(stats, NP_CALL_READ, -EFBIG), 1);
	np_snapshot_free(snap);
	/* The one-shot report too. */
	CHECK_INT(np_engine_look_once(ctx, &cfg, 0, &snap), 0);
	CHECK(snap && find_task(snap, 300) && !find_task(snap, 100));
	np_snapshot_free(snap);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* Take CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the effective set
 * (@drop) or put them back, so that a file of mode 0 is unreadable to a
 * root test as it is to anyone else. */
static void dac_caps(bool drop)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	const unsigned bits = 1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH;

	if (syscall(SYS_capget, &h, d) < 0)
		return;
	d[0].effective = drop ? d[0].effective & ~bits : d[0].effective | (d[0].permitted & bits);
	if (syscall(SYS_capset, &h, d) < 0)
		perror("capset");
}

static char denied_log[4096];

__attribute__((format(printf, 3, 0)))
static void keep_warnings(void *data, int priority, const char *fmt, va_list args)
{
	size_t n = strlen(denied_log);

	if (priority <= LOG_WARNING && n + 2 < sizeof(denied_log)) {
		vsnprintf(denied_log + n, sizeof(denied_log) - n - 1, fmt, args);
		strcat(denied_log, "\n");
	}
}

/* A numa_maps the daemon may not read is a permission failure: counted
 * apart, said at warning, and the task is left out; it is not a task that
 * vanished, and the others are read as before. */
static void test_permission_denied(void)
{
	struct np_engine_params params = {.dry_run = true};
	char dir[] = "/tmp/np-engine-denied-XXXXXX", path[600];
	struct np_engine *engine;
	struct np_snapshot *snap;
	struct np_config cfg;
	struct np_ctx *ctx;

	if (!fixture_copy(dir, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.affinity = NP_AFFINITY_NEVER;
	cfg.min_cpu_percent = 0;
	snprintf(path, sizeof(path), "%s/proc/100/numa_maps", dir);
	CHECK_INT(chmod(path, 0), 0);
	CHECK_INT(np_ctx_new(dir, &ctx), 0);
	np_ctx_set_log_fn(ctx, keep_warnings, NULL);
	CHECK_INT(np_clock_new_virtual(1000000, &params.clock), 0);
	params.ctx = ctx;
	CHECK_INT(np_engine_new(&params, &cfg, &engine), 0);

	dac_caps(true);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	dac_caps(false);
	CHECK(snap && snap->nr_tasks == 1 && find_task(snap, 200) && !find_task(snap, 100));
	CHECK_U64(np_stats_permission_denied(np_engine_stats(engine), NP_CALL_READ), 1);
	CHECK_U64(np_stats_skips(np_engine_stats(engine), NP_REASON_VANISHED), 0);
	CHECK(strstr(denied_log, "pid 100 (hog): reading its memory: Permission denied: not "
				 "allowed for this task") != NULL);
	CHECK(strstr(denied_log, "numaplaced_permission_denied_total") != NULL);
	np_snapshot_free(snap);

	np_engine_free(engine);
	np_clock_free(params.clock);
	np_ctx_free(ctx);
	tree_remove(dir);
}

/* Where pages are, for sampled looks: on one node, which the test sets,
 * but every @other_every-th page looked up (0: none), on the other. */
struct fake_lookup {
	int node;
	unsigned other_every;
	unsigned calls, pages;
};

static long fake_lookup(void *data, int pid, unsigned long n, void **pages, int *status)
{
	struct fake_lookup *f = data;

	(void)pid;
	(void)pages;
	f->calls++;
	for (unsigned long i = 0; i < n; i++) {
		f->pages++;
		status[i] = f->other_every && f->pages % f->other_every == 0 ? !f->node : f->node;
	}
	return 0;
}

enum look { NOT_LOOKED, READ, SAMPLED };

/* A tick @ms after the last: how pid 200 was looked at. */
static enum look look_after(struct np_engine *engine, struct np_clock *clock, uint64_t ms)
{
	const struct np_snap_task *e;
	struct np_snapshot *snap = NULL;
	enum look look = NOT_LOOKED;

	np_clock_advance(clock, ms);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	e = snap ? find_task(snap, 200) : NULL;
	if (e && e->picked)
		look = READ;
	else if (e && e->has_decision &&
		 ((e->action.reason == NP_REASON_LOCAL &&
		   strncmp(e->action.reason_text, "sampled look: 100% ", 19) == 0) ||
		  (e->action.reason == NP_REASON_TOO_BIG &&
		   strncmp(e->action.reason_text, "sampled look: ", 14) == 0)))
		look = SAMPLED;
	np_snapshot_free(snap);
	return look;
}

/* A big task its last look found local gets a sampled look when it is next
 * due: while the sample finds its pages where its threads run, numa_maps is
 * not read, but at least every fourth look; a sample that finds them
 * elsewhere, or CPUs its user changed, and numa_maps is read. */
static void test_sampled_look(void)
{
	struct fake_lookup fake = {.node = 1};
	struct np_engine_params params = {
	    .dry_run = true, .sample_lookup = fake_lookup, .sample_data = &fake};
	char root[] = "/tmp/np-engine-XXXXXX", cmd[4200];
	const struct np_snap_task *e;
	struct np_snapshot *status;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t max;

	/* "local" (pid 200, its thread on CPU 2 of node 1, its memory there)
	 * grown to 1.2 GiB, with a mapping to draw pages from. */
	if (!fixture_copy(root, "engine-2node",
			  "sed -i 's/ 51200 18446744073709551615/ 300000 18446744073709551615/' "
			  "200/stat 200/task/200/stat && "
			  "sed -i 's/^VmRSS:.*/VmRSS:\t1200000 kB/' 200/status && "
			  "printf '7f1000000000-7f1049400000 rw-p 00000000 00:00 0\\n' >200/maps"))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	cfg.affinity = NP_AFFINITY_NEVER;
	max = cfg.scan_period_max_ms;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_INT(look_after(engine, params.clock, 0), READ); /* the first look */
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	/* 1,024 pages, all on node 1, say so: no more are looked up. */
	CHECK_U64(fake.pages, 1024);
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_INT(look_after(engine, params.clock, max), READ); /* three in a row */
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_U64(np_engine_sched_counters(engine)->sampled_looks, 4);

	/* The status says so. */
	CHECK_INT(np_engine_status(engine, &status), 0);
	e = find_task(status, 200);
	CHECK(e && e->live.last_sampled && e->live.sampled_looks == 4 && e->live.looks == 6);
	/* Its memory as the last read found it: 200 MiB on node 1. */
	CHECK(e && e->mem.node_bytes && e->mem.node_bytes[1] == 51200ull * 4096);
	np_snapshot_free(status);

	/* Its pages elsewhere: numa_maps says how much, and the look after
	 * that samples again. */
	fake.node = 0;
	CHECK_INT(look_after(engine, params.clock, max), READ);
	fake.node = 1;
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	/* 90% there: 1,024 pages cannot say whether that is 90% or more,
	 * 3,072 more are looked up, and they cannot either: read. */
	fake.other_every = 10;
	fake.pages = 0;
	CHECK_INT(look_after(engine, params.clock, max), READ);
	CHECK_U64(fake.pages, 4096);
	fake.other_every = 0;
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	/* Its user pins it to node 1's CPUs: read at the next look, though a
	 * sample would have done. */
	snprintf(cmd, sizeof(cmd),
		 "sed -i 's/^Cpus_allowed_list:.*/Cpus_allowed_list:\t2-3/' '%s/proc/200/status'",
		 root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(look_after(engine, params.clock, 1), NOT_LOOKED); /* poked: due soon */
	CHECK_INT(look_after(engine, params.clock, cfg.scan_period_min_ms), READ);
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_U64(np_engine_sched_counters(engine)->sampled_looks, 7);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* A task too big for a node, kept within both, gets sampled looks too:
 * while the sample finds its pages within those nodes and no node could
 * hold it, the keep stands as numa_maps found it; pages found elsewhere,
 * or room made on a node, and numa_maps is read. */
static void test_sampled_too_big(void)
{
	struct fake_lookup fake = {.node = 1, .other_every = 2}; /* half on each */
	struct np_engine_params params = {
	    .dry_run = true, .sample_lookup = fake_lookup, .sample_data = &fake};
	char root[] = "/tmp/np-engine-XXXXXX", cmd[4200];
	const struct np_snap_task *e;
	struct np_snapshot *snap = NULL;
	struct np_engine *engine;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t max;

	/* pid 200, its thread on node 1, grown to 1.5 GiB, half on each
	 * 2 GiB node, each with 512 MiB free: with 10% headroom neither can
	 * take the other half. */
	if (!fixture_copy(
		root, "engine-2node",
		"sed -i 's/ 51200 18446744073709551615/ 393216 18446744073709551615/' "
		"200/stat 200/task/200/stat && "
		"sed -i 's/^VmRSS:.*/VmRSS:\t1572864 kB/' 200/status && "
		"printf '7f1000000000 default anon=393216 dirty=393216 N0=196608 "
		"N1=196608 kernelpagesize_kB=4\\n' >200/numa_maps && "
		"printf '7f1000000000-7f1060000000 rw-p 00000000 00:00 0\\n' >200/maps && "
		"sed -i 's/MemFree: .*/MemFree: 524288 kB/' ../sys/*/*/*/node[01]/meminfo"))
		return;
	np_config_init(&cfg);
	cfg.min_cpu_percent = 0;
	cfg.affinity = NP_AFFINITY_NEVER;
	max = cfg.scan_period_max_ms;
	engine_start(root, &params, &cfg, &ctx, &engine);
	CHECK_INT(np_engine_tick(engine, &snap), 0); /* the first look: numa_maps */
	e = snap ? find_task(snap, 200) : NULL;
	CHECK(e && e->picked && e->action.kind == NP_ACTION_KEEP &&
	      e->action.reason == NP_REASON_TOO_BIG);
	np_snapshot_free(snap);
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_U64(fake.pages, 1024);
	/* The keep as it was, with what the sample found. */
	np_clock_advance(params.clock, max);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	e = snap ? find_task(snap, 200) : NULL;
	CHECK(e && !e->picked && e->action.kind == NP_ACTION_KEEP &&
	      e->action.reason == NP_REASON_TOO_BIG &&
	      strstr(e->action.reason_text, "100% (95%: ") != NULL &&
	      strstr(e->action.reason_text, "on nodes 0-1") != NULL);
	CHECK(e && e->locality > 0.45 && e->locality < 0.55); /* on its threads' node */
	np_snapshot_free(snap);
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	CHECK_INT(look_after(engine, params.clock, max), READ); /* three in a row */
	/* Its pages on a node it was not kept within: read. */
	fake.node = 5;
	fake.other_every = 0;
	CHECK_INT(look_after(engine, params.clock, max), READ);
	fake.node = 1;
	fake.other_every = 2;
	CHECK_INT(look_after(engine, params.clock, max), SAMPLED);
	/* Node 1 has room now for the half on node 0: read, though the
	 * sample finds its pages where they were. */
	snprintf(cmd, sizeof(cmd),
		 "sed -i 's/MemFree: .*/MemFree: 1572864 kB/' "
		 "'%s/sys/devices/system/node/node1/meminfo'",
		 root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(look_after(engine, params.clock, max), READ);
	CHECK_U64(np_engine_sched_counters(engine)->sampled_looks, 4);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* Which processes "ran", as a test says: reported at the next drain. */
struct fake_runs {
	int pids[4];
	unsigned nr;
	int ret; /* the next drain's answer: nonzero, some were lost */
};

static int fake_drain(void *data, np_run_fn fn, void *fn_data)
{
	struct fake_runs *f = data;
	int ret = f->ret;

	for (unsigned i = 0; i < f->nr; i++)
		fn(fn_data, f->pids[i]);
	f->nr = 0;
	f->ret = 0;
	return ret;
}

/* A narrowed task is read when due even if no sample saw it run (the CPU
 * of children it reaped shows only in a read); and an idle verdict starts
 * the window its next look measures CPU over. The hog is homed at the
 * first tick (the fixture plays the dry run's actuator), local is pinned
 * by its user; nobody runs after. */
static void test_narrowed_reads_and_idle_window(void)
{
	struct fake_runs runs = {{0}, 0, 0};
	struct np_engine_params params = {.dry_run = true, .runs_drain = fake_drain,
					  .runs_data = &runs};
	char root[] = "/tmp/np-engine-window-XXXXXX";
	char cmd[4300];
	const struct np_snap_task *hog;
	struct np_snapshot *snap = NULL;
	struct np_engine *engine;
	struct np_stats *stats;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t reads, idle;

	if (!fixture_copy(root, "engine-2node",
			  "sed -i 's/^Cpus_allowed:.*/Cpus_allowed:\\tc/; "
			  "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\\t2-3/' 200/status"))
		return;
	np_config_init(&cfg);
	engine_start(root, &params, &cfg, &ctx, &engine);
	stats = np_engine_stats(engine);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	hog = snap ? find_task(snap, 100) : NULL;
	CHECK(hog && hog->action.set_affinity);
	np_snapshot_free(snap);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/proc' && sed -i 's/^Cpus_allowed:.*/Cpus_allowed:\tc/; "
		 "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\t2-3/' 100/status 100/task/*/status",
		 root);
	CHECK_INT(system(cmd), 0);
	/* Its CPUs changed since the last look (to this dry run, someone
	 * else's doing): looked at again. */
	np_clock_advance(params.clock, cfg.scan_period_max_ms + 1000);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	/* Nobody ran: the hog alone is read, and found idle. */
	reads = np_stats_listed(stats, false);
	idle = np_stats_skips(stats, NP_REASON_IDLE);
	np_clock_advance(params.clock, cfg.scan_period_max_ms + 1000);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(np_stats_listed(stats, false) - reads, 1);
	CHECK(np_stats_skips(stats, NP_REASON_IDLE) > idle);
	CHECK_INT(np_engine_status(engine, &snap), 0);
	hog = snap ? find_task(snap, 100) : NULL;
	CHECK(hog && hog->live.looks == 2);
	np_snapshot_free(snap);
	snap = NULL;
	/* 30 s of CPU in the next 61 s: its look measures 49%, over the
	 * span since the idle verdict, not 25% since its last look. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/proc' && sed -i 's/ 200000 0 0 0 20 / 203000 0 0 0 20 /' 100/stat", root);
	CHECK_INT(system(cmd), 0);
	np_clock_advance(params.clock, cfg.scan_period_max_ms + 1000);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_INT(np_engine_status(engine, &snap), 0);
	hog = snap ? find_task(snap, 100) : NULL;
	CHECK(hog != NULL);
	if (hog) {
		CHECK_INT(hog->live.looks, 3);
		CHECK(hog->live.cpu_percent > 48 && hog->live.cpu_percent < 50);
	}
	np_snapshot_free(snap);
	engine_end(root, &params, &cfg, ctx, engine);
}

/* With word of which processes ran, a task due to be read that did not
 * run since its last read keeps its record as unchanged; one that ran, a
 * drain that lost some, a scan that failed after a run and a record an
 * hour old are read. Every task of the fixture is due at each of these
 * ticks (a period of scan_period_max_ms apart; all too small, young or
 * kernel threads). */
static void test_unchanged_records(void)
{
	struct fake_runs runs = {{0}, 0, 0};
	struct np_engine_params params = {.dry_run = true, .runs_drain = fake_drain,
					  .runs_data = &runs};
	char root[] = "/tmp/np-engine-runs-XXXXXX";
	char cmd[4300];
	struct np_engine *engine;
	struct np_stats *stats;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t reads, unchanged;

	if (!fixture_copy(root, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.min_rss_mb = 1048576;
	engine_start(root, &params, &cfg, &ctx, &engine);
	stats = np_engine_stats(engine);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(np_stats_listed(stats, false), 5);
	CHECK_U64(np_stats_listed_unchanged(stats), 0);

#define NEXT_TICK(ms)                                                                    \
	do {                                                                             \
		reads = np_stats_listed(stats, false);                                   \
		unchanged = np_stats_listed_unchanged(stats);                            \
		np_clock_advance(params.clock, (ms));                                    \
		CHECK_INT(np_engine_tick(engine, NULL), 0);                              \
		reads = np_stats_listed(stats, false) - reads;                           \
		unchanged = np_stats_listed_unchanged(stats) - unchanged;                \
	} while (0)

	/* Nobody ran: all five due, none read. */
	NEXT_TICK(cfg.scan_period_max_ms + 1000);
	CHECK_U64(reads, 0);
	CHECK_U64(unchanged, 5);
	/* 400 ran: read (its new figures), the others not. */
	snprintf(cmd, sizeof(cmd), "cd '%s/proc/400' && sed -i 's/ 30000 / 30500 /' stat", root);
	CHECK_INT(system(cmd), 0);
	runs.pids[runs.nr++] = 400;
	NEXT_TICK(cfg.scan_period_max_ms + 1000);
	CHECK_U64(reads, 1);
	CHECK_U64(unchanged, 4);
	/* Some lost: every due task is read, and vouched for again after. */
	runs.ret = -ENOBUFS;
	NEXT_TICK(cfg.scan_period_max_ms + 1000);
	CHECK_U64(reads, 5);
	CHECK_U64(unchanged, 0);
	NEXT_TICK(cfg.scan_period_max_ms + 1000);
	CHECK_U64(reads, 0);
	CHECK_U64(unchanged, 5);
	/* 200 ran, and the tick that heard of it failed (before its scan):
	 * the next one reads it all the same. */
	runs.pids[runs.nr++] = 200;
	snprintf(cmd, sizeof(cmd), "cd '%s/proc' && mv uptime uptime.away", root);
	CHECK_INT(system(cmd), 0);
	np_clock_advance(params.clock, cfg.scan_period_max_ms + 1000);
	CHECK(np_engine_tick(engine, NULL) < 0);
	snprintf(cmd, sizeof(cmd), "cd '%s/proc' && mv uptime.away uptime", root);
	CHECK_INT(system(cmd), 0);
	NEXT_TICK(1000);
	CHECK_U64(reads, 1);
	CHECK_U64(unchanged, 4);
	/* An hour on: every record is read again, samples or not. */
	NEXT_TICK(60 * cfg.scan_period_max_ms);
	CHECK_U64(reads, 5);
	CHECK_U64(unchanged, 0);
#undef NEXT_TICK

	engine_end(root, &params, &cfg, ctx, engine);
}

/* With the connector and word of which processes ran, a tick at which
 * nothing changed lists nothing (a quiet tick: its snapshot holds no task,
 * and the tasks are counted passed over as at the last tick); a task that
 * ran once its next read comes, a listed process named by an event, a new
 * one that lives past its first read's wait, lost samples (the tasks read
 * before them, at their next reads), a listing's resync and a reload each
 * make a tick scan. A new process that exits before its first read leaves
 * the tick quiet. The fixture's tasks are all too small to be looked at. */
static void test_quiet_ticks(void)
{
	struct fake_runs runs = {{0}, 0, 0};
	struct np_engine_params params = {.dry_run = true, .runs_drain = fake_drain,
					  .runs_data = &runs};
	char root[] = "/tmp/np-engine-quiet-XXXXXX";
	struct np_snapshot *snap = NULL;
	struct proc_event pe;
	struct np_engine *engine;
	struct np_stats *stats;
	struct np_config cfg;
	struct np_ctx *ctx;
	uint64_t quiet, reads, unchanged, skipped;
	int sv[2];

	if (!fixture_copy(root, "engine-2node", NULL))
		return;
	np_config_init(&cfg);
	cfg.min_rss_mb = 1048576;
	CHECK_INT(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	CHECK_INT(np_proc_events_adopt(sv[0], &params.events), 0);
	engine_start(root, &params, &cfg, &ctx, &engine);
	stats = np_engine_stats(engine);
	CHECK_INT(np_engine_tick(engine, NULL), 0);
	CHECK_U64(np_stats_listed(stats, false), 5);
	CHECK_U64(np_stats_quiet_ticks(stats), 0);

#define NEXT_TICK(ms)                                                                    \
	do {                                                                             \
		quiet = np_stats_quiet_ticks(stats);                                     \
		reads = np_stats_listed(stats, false);                                   \
		unchanged = np_stats_listed_unchanged(stats);                            \
		skipped = np_stats_skips(stats, NP_REASON_TOO_SMALL);                    \
		np_clock_advance(params.clock, (ms));                                    \
		CHECK_INT(np_engine_tick(engine, NULL), 0);                              \
		quiet = np_stats_quiet_ticks(stats) - quiet;                             \
		reads = np_stats_listed(stats, false) - reads;                           \
		unchanged = np_stats_listed_unchanged(stats) - unchanged;                \
		skipped = np_stats_skips(stats, NP_REASON_TOO_SMALL) - skipped;          \
	} while (0)

	/* Nobody ran, nothing came or went: quiet, every task passed over
	 * for what the last tick found (the fixture's user tasks are too
	 * small), and the snapshot has the machine but no task. */
	NEXT_TICK(1000);
	CHECK_U64(quiet, 1);
	CHECK_U64(reads + unchanged, 0);
	CHECK(skipped > 0);
	np_clock_advance(params.clock, 1000);
	CHECK_INT(np_engine_tick(engine, &snap), 0);
	CHECK(snap && snap->nr_tasks == 0 && snap->topo && snap->topo->nr_nodes == 2 &&
	      snap->node_load);
	np_snapshot_free(snap);
	CHECK_U64(np_stats_quiet_ticks(stats), 2);
	/* 400 ran, and its wait (under a second at first) is over: the tick
	 * scans and reads it alone. */
	runs.pids[runs.nr++] = 400;
	NEXT_TICK(1000);
	CHECK_U64(quiet, 0);
	CHECK_U64(reads, 1);
	NEXT_TICK(1000);
	CHECK_U64(quiet, 1);
	/* 400 ran again, its next read a while away: quiet until it comes
	 * (its wait doubled: within 2 s), long before the listing's resync. */
	runs.pids[runs.nr++] = 400;
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	{
		unsigned waited = 0;

		do {
			NEXT_TICK(100);
			waited += 100;
		} while (quiet && waited < 5000);
		CHECK(waited <= 2000 && reads == 1);
	}
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	/* An exec of a listed process: read at once. */
	pe = pid_event(PROC_EVENT_EXEC, 200, 200);
	CHECK(send_event(sv[1], &pe));
	NEXT_TICK(100);
	CHECK_U64(quiet, 0);
	CHECK_U64(reads, 1);
	/* A new process that exits before its first read: quiet. */
	pe = fork_event(1, 999, 999);
	CHECK(send_event(sv[1], &pe));
	pe = pid_event(PROC_EVENT_EXIT, 999, 999);
	CHECK(send_event(sv[1], &pe));
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	/* One that lives: quiet until its wait (scan_delay_ms from the last
	 * scan) is over, then scanned; it waits on (the fixture's uptime
	 * stands still), and its exit ends what it was owed. */
	pe = fork_event(1, 998, 998);
	CHECK(send_event(sv[1], &pe));
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	NEXT_TICK(cfg.scan_delay_ms);
	CHECK_U64(quiet, 0);
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	pe = pid_event(PROC_EVENT_EXIT, 998, 998);
	CHECK(send_event(sv[1], &pe));
	NEXT_TICK(cfg.scan_delay_ms);
	CHECK_U64(quiet, 1);
	/* Samples lost: scanned, and a task read before the loss is read
	 * when its next read comes, ran or not (the small ones' within a few
	 * seconds, long before the listing's resync). */
	runs.ret = -ENOBUFS;
	NEXT_TICK(100);
	CHECK_U64(quiet, 0);
	{
		uint64_t scans = 0, read_after = 0;

		for (unsigned k = 0; k < 20; k++) {
			NEXT_TICK(1000);
			scans += !quiet;
			read_after += reads;
		}
		CHECK(scans >= 1 && read_after >= 1);
	}
	/* The listing's resync (scan_period_max_ms) is owed a scan, after
	 * which nobody is due. */
	NEXT_TICK(cfg.scan_period_max_ms);
	CHECK_U64(quiet, 0);
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	/* A reload scans again. */
	CHECK_INT(np_engine_set_config(engine, &cfg), 0);
	NEXT_TICK(100);
	CHECK_U64(quiet, 0);
	NEXT_TICK(100);
	CHECK_U64(quiet, 1);
	/* Without the connector every tick scans. */
	np_engine_stop_task_events(engine);
	NEXT_TICK(100);
	CHECK_U64(quiet, 0);
	NEXT_TICK(100);
	CHECK_U64(quiet, 0);
#undef NEXT_TICK

	close(sv[1]);
	engine_end(root, &params, &cfg, ctx, engine);
}

int main(void)
{
	test_kept_records();
	test_repinned_due();
	test_repinned_when_due();
	test_repinned_after_idle();
	test_repinned_with_wait();
	test_permission_denied();
	test_report_decisions();
	test_user_policy();
	test_no_effect();
	test_ticks();
	test_machine_read_when_deciding();
	test_home();
	test_narrowed_waits();
	test_inherited_mask();
	test_status();
	test_odd_files();
	test_sampled_look();
	test_sampled_too_big();
	test_unchanged_records();
	test_narrowed_reads_and_idle_window();
	test_quiet_ticks();
	return check_done();
}
