/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "filter.h"
#include "scheduler.h"
#include "state.h"

#include <errno.h>

#define MIB (1024ull * 1024)
#define HZ 100

/* The defaults: the tests are about what the daemon does out of the box. */
static struct np_config test_config(void)
{
	struct np_config cfg;

	np_config_init(&cfg);
	cfg.tick_ms = 0; /* plans at any time: due times exact (see due_after) */
	return cfg;
}

/* A task born at @born_ms (clock time), busy on one CPU, of @rss_mb. */
struct fake {
	int pid;
	uint64_t born_ms;
	uint64_t rss_mb;
	unsigned cpu_percent;
	const char *comm;
	bool kthread;
};

/* The task list as a scan at @now would see it. */
static void make_list(struct np_task_list *list, const struct fake *fakes, unsigned nr,
		      uint64_t now)
{
	list->nr = 0;
	list->ticks_per_s = HZ;
	list->uptime_ms = now;
	for (unsigned i = 0; i < nr; i++) {
		struct np_task *t = &list->tasks[list->nr++];
		uint64_t age = now - fakes[i].born_ms;

		np_task_clear(t); /* a cgroup a details double attached */
		*t = (struct np_task){
		    .pid = fakes[i].pid,
		    .start_ticks = fakes[i].born_ms * HZ / 1000,
		    .age_ms = age,
		    .cpu_ticks = age * fakes[i].cpu_percent * HZ / 100000,
		    .rss_bytes = fakes[i].rss_mb * MIB,
		    .kthread = fakes[i].kthread,
		};
		snprintf(t->comm, sizeof(t->comm), "%s", fakes[i].comm ? fakes[i].comm : "app");
	}
}

static struct np_task tasks_storage[64];

static struct np_task_list new_list(void)
{
	return (struct np_task_list){.tasks = tasks_storage, .cap = 64, .ticks_per_s = HZ};
}

/* What a new scan gives: the tasks as listed, without details. */
static void clear_details(struct np_task_list *list)
{
	for (unsigned i = 0; i < list->nr; i++)
		np_task_clear(&list->tasks[i]);
}

/* One tick as the daemon runs it: sort the list, make the table match it,
 * plan over the states it then holds. */
static int compare_ids(const void *a, const void *b)
{
	const struct np_task *x = a, *y = b;

	return np_task_id_compare(x->pid, x->start_ticks, y->pid, y->start_ticks);
}

static int plan_tick(struct np_sched *sched, struct np_state_table *table,
		     struct np_task_list *list, struct np_sched_plan *plan)
{
	int err;

	qsort(list->tasks, list->nr, sizeof(*list->tasks), compare_ids);
	err = np_state_table_sync(table, list, sched, 0);
	if (err)
		return err;
	return np_sched_plan(sched, list, table->sched, false, plan);
}

/* The scheduler's state of (pid, start_ticks) in the table, or NULL. */
static struct np_sched_task *state_of(const struct np_state_table *table, int pid,
				      uint64_t start_ticks)
{
	struct np_task_state *st = np_state_table_find(table, pid, start_ticks);

	return st ? &st->sched : NULL;
}

/* A reload as the daemon does it: the config, then every task's state. */
static int reload(struct np_sched *sched, struct np_state_table *table, const struct np_config *cfg)
{
	int err = np_sched_set_config(sched, cfg);

	if (err)
		return err;
	for (unsigned i = 0; i < table->nr; i++)
		np_sched_task_reload(sched, &table->v[i].sched);
	return 0;
}

static bool picked(const struct np_sched_plan *plan, unsigned index)
{
	for (unsigned i = 0; i < plan->nr_picks; i++)
		if (plan->picks[i] == index)
			return true;
	return false;
}

/* Over a day of ticks, no task is read before scan_delay_ms of age, and
 * the first read comes at the first tick after it. */
static void test_scan_delay(void)
{
	struct np_config cfg = test_config();
	struct fake fakes[] = {
	    {.pid = 10, .born_ms = 0, .rss_mb = 200, .cpu_percent = 100},
	    {.pid = 11, .born_ms = 130, .rss_mb = 200, .cpu_percent = 100},
	    {.pid = 12, .born_ms = 990, .rss_mb = 200, .cpu_percent = 100},
	};
	uint64_t first_read[3] = {0};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	unsigned early = 0;

	CHECK_INT(np_clock_new_virtual(1000, &clock), 0);
	for (unsigned i = 0; i < 3; i++)
		fakes[i].born_ms += 1000;
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	for (uint64_t now = 1000; now <= 4000; now += 250) {
		CHECK_INT(np_clock_set(clock, now), 0);
		make_list(&list, fakes, 3, now);
		CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
		for (unsigned i = 0; i < 3; i++) {
			if (picked(&plan, i) && list.tasks[i].age_ms < cfg.scan_delay_ms)
				early++;
			if (picked(&plan, i) && !first_read[i])
				first_read[i] = now;
			if (plan.verdicts[i].reason == NP_REASON_TOO_YOUNG)
				CHECK_U64(plan.verdicts[i].wait_ms,
					  cfg.scan_delay_ms - list.tasks[i].age_ms);
		}
		if (now == 1000)
			CHECK_INT(plan.verdicts[0].reason, NP_REASON_TOO_YOUNG);
		if (now == 2000)
			CHECK_INT(plan.verdicts[0].reason, NP_REASON_SCAN_FIRST);
	}
	CHECK_INT(early, 0);
	CHECK_U64(first_read[0], 2000);
	CHECK_U64(first_read[1], 2250);	       /* born 1130: of age at 2130 */
	CHECK_U64(first_read[2], 2000 + 1000); /* born 1990: of age at 2990 */
	CHECK_U64(np_sched_counters(sched)->verdicts[NP_REASON_SCAN_FIRST], 3);

	/* With no delay, a task is read at the first tick that lists it. */
	cfg.scan_delay_ms = 0;
	CHECK_INT(reload(sched, &table, &cfg), 0);
	fakes[0] = (struct fake){.pid = 20, .born_ms = 4250, .rss_mb = 200, .cpu_percent = 100};
	CHECK_INT(np_clock_set(clock, 4250), 0);
	make_list(&list, fakes, 1, 4250);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_SCAN_FIRST);
	CHECK_U64(table.seen, 4);
	CHECK_U64(table.forgotten, 3);

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* Tick every 100 ms; report @outcome after each read; return the gaps
 * between reads. The task's state is kept in @table. */
static unsigned read_gaps(struct np_sched *sched, struct np_state_table *table,
			  struct np_clock *clock, struct fake *fake,
			  const enum np_scan_outcome *outcomes, unsigned nr_outcomes,
			  uint64_t *gaps, unsigned max_gaps)
{
	struct np_task_list list = new_list();
	struct np_sched_plan plan = {0};
	uint64_t last = 0;
	unsigned reads = 0, nr_gaps = 0;

	while (nr_gaps < max_gaps && reads < nr_outcomes + 1) {
		uint64_t now = np_clock_now_ms(clock);

		make_list(&list, fake, 1, now);
		CHECK_INT(plan_tick(sched, table, &list, &plan), 0);
		if (plan.nr_picks) {
			if (reads)
				gaps[nr_gaps++] = now - last;
			last = now;
			CHECK_INT(np_sched_done(sched, table->sched[plan.picks[0]],
						&list.tasks[plan.picks[0]], 4096,
						outcomes[reads < nr_outcomes ? reads : 0]),
				  0);
			reads++;
		}
		CHECK_INT(np_clock_advance(clock, 100), 0);
	}
	np_sched_plan_free(&plan);
	return nr_gaps;
}

/* The period doubles while stable, stops at the maximum, and falls back to
 * the minimum after a change or a locality drop. */
static void test_period_adapts(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 7, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50};
	enum np_scan_outcome outcomes[] = {
	    NP_SCAN_STABLE, NP_SCAN_STABLE,	      NP_SCAN_STABLE, NP_SCAN_CHANGED,
	    NP_SCAN_STABLE, NP_SCAN_LOCALITY_DROPPED, NP_SCAN_FAILED, NP_SCAN_STABLE,
	    NP_SCAN_STABLE, NP_SCAN_STABLE,
	};
	/* After each outcome above, the next gap. */
	uint64_t expect[] = {2000, 4000, 8000, 1000, 2000, 1000, 2000, 4000, 8000, 8000};
	uint64_t gaps[16];
	struct np_state_table table = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	unsigned n;

	cfg.scan_period_max_ms = 8000;
	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	n = read_gaps(sched, &table, clock, &fake, outcomes, 10, gaps, 10);
	CHECK_INT(n, 10);
	for (unsigned i = 0; i < n && i < 10; i++)
		CHECK_U64(gaps[i], expect[i]);
	CHECK_U64(np_sched_counters(sched)->numa_maps_reads, 11);
	CHECK_U64(np_sched_counters(sched)->bytes_parsed, 11 * 4096);
	CHECK_U64(np_sched_counters(sched)->read_failures, 1);
	CHECK_U64(np_sched_counters(sched)->outcomes[NP_SCAN_CHANGED], 1);
	np_state_table_clear(&table);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* Reads of a stable task (stable outcomes) on ticks as the daemon makes
 * them: @tick_ms apart give or take a few ms; whether the task's stat is
 * read is decided at the tick's start (a kept record is not looked at),
 * the plan comes after the scan, 8 ms on. Then a poke (its user gave it
 * CPUs on other nodes) after the plan of the tick after a read. The gap of
 * each read after the one before, and *@poked_gap, the poke to the read
 * after it. */
static void tick_gaps(const struct np_config *cfg, uint64_t tick_ms, uint64_t *gaps,
		      unsigned nr_gaps, uint64_t *poked_gap)
{
	static const int jitter[] = {3, -2, 4, -1, 2, 5, -3, 1};
	struct fake fake = {.pid = 7, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	uint64_t last = 0, poked_at = 0, period, next;
	uint64_t lead =
	    (cfg->tick_ms < cfg->scan_period_min_ms ? cfg->tick_ms : cfg->scan_period_min_ms) / 2;
	unsigned n = 0, reads = 0;

	*poked_gap = 0;
	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(cfg, clock, &sched), 0);
	for (unsigned tick = 0; tick < 200 && !*poked_gap; tick++) {
		bool kept =
		    table.nr && !np_sched_needs_read(table.sched[0], np_clock_now_ms(clock));
		uint64_t now;

		CHECK_INT(np_clock_advance(clock, 8), 0);
		now = np_clock_now_ms(clock);
		make_list(&list, &fake, 1, now);
		list.tasks[0].stat_kept = kept;
		CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
		if (plan.nr_picks) {
			if (poked_at)
				*poked_gap = now - poked_at;
			else if (reads++ && n < nr_gaps)
				gaps[n++] = now - last;
			last = now;
			CHECK_INT(np_sched_done(sched, table.sched[0], &list.tasks[0], 4096,
						NP_SCAN_STABLE),
				  0);
			/* Due half a tick before its period ends. */
			np_sched_task_period(sched, table.sched[0], &period, &next);
			CHECK_U64(next, now + period - lead);
		} else if (n == nr_gaps && !poked_at && last) {
			poked_at = now;
			np_sched_task_poke(sched, table.sched[0], true);
		}
		CHECK_INT(np_clock_advance(clock, (uint64_t)((int)tick_ms - 8 + jitter[tick % 8])),
			  0);
	}
	CHECK_INT(n, nr_gaps);
	np_sched_plan_free(&plan);
	np_state_table_clear(&table);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A due time comes half a tick early (due_after), so that a read is made
 * at the tick nearest to it: a period of one tick is read a tick on, not a
 * tick late whenever the tick that should read it starts a few ms before
 * the time the last one's plan set, as it does when the scan before a plan
 * takes longer than the ticks' jitter; so is a task poked to wait one
 * shortest period. Without the lead (ticks taken as coming at any time),
 * the same ticks read some of them a whole tick late (3 of the 5). */
static void test_due_at_nearest_tick(void)
{
	struct np_config cfg;
	uint64_t expect[] = {2000, 4000, 8000, 8000}, gaps[4], poked;
	unsigned late = 0;

	np_config_init(&cfg);
	cfg.scan_period_max_ms = 8000;
	tick_gaps(&cfg, cfg.tick_ms, gaps, 4, &poked);
	for (unsigned i = 0; i < 4; i++)
		CHECK(gaps[i] + cfg.tick_ms / 2 > expect[i] &&
		      gaps[i] < expect[i] + cfg.tick_ms / 2);
	CHECK(poked + cfg.tick_ms / 2 > cfg.scan_period_min_ms &&
	      poked < cfg.scan_period_min_ms + cfg.tick_ms / 2);

	/* A period that is no multiple of the tick: 2000 ms at a 300 ms
	 * tick is read 7 ticks on, the tick nearest its end (6 ticks, 1800,
	 * is farther; a whole tick's lead would read there). */
	cfg.scan_period_min_ms = cfg.scan_period_max_ms = 2000;
	cfg.tick_ms = 300;
	tick_gaps(&cfg, cfg.tick_ms, gaps, 4, &poked);
	for (unsigned i = 0; i < 4; i++)
		CHECK(gaps[i] > 2100 - 30 && gaps[i] < 2100 + 30);
	CHECK(poked > 2100 - 30 && poked < 2100 + 30);

	cfg.scan_period_min_ms = 1000;
	cfg.scan_period_max_ms = 8000;
	cfg.tick_ms = 0;
	tick_gaps(&cfg, 1000, gaps, 4, &poked);
	for (unsigned i = 0; i < 4; i++)
		late += gaps[i] >= expect[i] + 1000 / 2;
	late += poked >= cfg.scan_period_min_ms + 1000 / 2;
	CHECK(late > 0);
}

/* A planned read that is never reported still holds the task off for a
 * full period: never two reads inside one period. */
static void test_no_double_read(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 8, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	unsigned reads = 0;

	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	for (int i = 0; i < 100; i++) { /* 5 s in 50 ms ticks */
		make_list(&list, &fake, 1, np_clock_now_ms(clock));
		CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
		reads += plan.nr_picks;
		if (plan.nr_picks == 0)
			CHECK_INT(plan.verdicts[0].reason, NP_REASON_WAITING_PERIOD);
		CHECK_INT(np_clock_advance(clock, 50), 0);
	}
	CHECK_INT(reads, 5);
	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A tick as the engine runs it with records kept: a task listed last tick
 * whose state says no read is needed gets its last record (stat_kept, the
 * age brought up to date); any other is read from @fakes, the record kept
 * in @last and counted in @reads. The keep decisions are taken at @scan_ms,
 * the plan at the clock's time after (a scan takes time). */
static int kept_tick(struct np_sched *sched, struct np_clock *clock, struct np_state_table *table,
		     struct np_task_list *list, const struct fake *fakes, unsigned nr,
		     struct np_task *last, unsigned *reads, uint64_t scan_ms, uint64_t plan_ms,
		     struct np_sched_plan *plan)
{
	bool keep[8];

	CHECK_INT(np_clock_set(clock, scan_ms), 0);
	for (unsigned i = 0; i < nr; i++) {
		const struct np_sched_task *st =
		    state_of(table, fakes[i].pid, fakes[i].born_ms * HZ / 1000);

		keep[i] = st && !np_sched_needs_read(st, scan_ms);
	}
	CHECK_INT(np_clock_set(clock, plan_ms), 0);
	make_list(list, fakes, nr, scan_ms);
	for (unsigned i = 0; i < nr; i++) {
		struct np_task *t = &list->tasks[i];

		if (keep[i]) {
			t->cpu_ticks = last[i].cpu_ticks;
			t->rss_bytes = last[i].rss_bytes;
			t->stat_kept = true;
		} else {
			last[i] = *t;
			reads[i]++;
		}
	}
	return plan_tick(sched, table, list, plan);
}

/* With records kept, a task is read only when the scheduler needs its
 * figures: a kernel thread once a minute, a small task at a wait that doubles (and
 * at once readable when it grows), a busy one at its due times, and a due
 * task on a kept record waits for its read instead of being judged on old
 * figures. */
static void test_reads_when_needed(void)
{
	struct np_config cfg = test_config();
	struct fake fakes[] = {
	    {.pid = 2, .born_ms = 0, .kthread = true},
	    {.pid = 10, .born_ms = 0, .rss_mb = 10, .cpu_percent = 100},
	    {.pid = 11, .born_ms = 0, .rss_mb = 500, .cpu_percent = 100},
	    {.pid = 12, .born_ms = 0, .rss_mb = 500, .cpu_percent = 0},
	};
	struct np_task last[4];
	unsigned reads[4] = {0}, picks[4] = {0}, small_reads = 0;
	uint64_t small_gaps[32], last_small = 0, grown_at = 0, grown_read = 0;
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;

	CHECK_INT(np_clock_new_virtual(0, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	/* Ten minutes of 250 ms ticks. */
	for (uint64_t now = 2000; now < 602000; now += 250) {
		CHECK_INT(
		    kept_tick(sched, clock, &table, &list, fakes, 4, last, reads, now, now, &plan),
		    0);
		for (unsigned i = 0; i < 4; i++) {
			picks[i] += picked(&plan, i);
			/* A kept record is never read numa_maps on, nor
			 * judged idle by. */
			if (list.tasks[i].stat_kept)
				CHECK(!picked(&plan, i) &&
				      plan.verdicts[i].reason != NP_REASON_IDLE);
		}
		if (!list.tasks[1].stat_kept && !grown_at && small_reads < 32) {
			if (small_reads)
				small_gaps[small_reads - 1] = now - last_small;
			last_small = now;
			small_reads++;
		}
		for (unsigned i = 0; i < plan.nr_picks; i++)
			CHECK_INT(np_sched_done(sched, table.sched[plan.picks[i]],
						&list.tasks[plan.picks[i]], 4096, NP_SCAN_STABLE),
				  0);
		/* The small one grows at 300 s. */
		if (now == 300000) {
			fakes[1].rss_mb = 500;
			grown_at = now;
		}
		if (grown_at && !grown_read && picked(&plan, 1))
			grown_read = now;
	}
	/* The kernel thread: again every scan_period_max_ms. */
	CHECK(reads[0] >= 10 && reads[0] <= 11);
	CHECK_INT(picks[0], 0);
	/* Waits of 1, 2, 4 ... 60 s, each between half of it and all of it
	 * (by pid), rounded up to a tick. */
	CHECK(small_reads >= 8);
	for (unsigned i = 0; i + 1 < small_reads; i++) {
		uint64_t w = 1000ull << (i < 6 ? i : 6);

		if (w > cfg.scan_period_max_ms)
			w = cfg.scan_period_max_ms;
		CHECK(small_gaps[i] >= w / 2 && small_gaps[i] <= w + 250);
	}
	/* Grown, it is read within the wait it was in, and picked. */
	CHECK(grown_read > grown_at && grown_read <= grown_at + cfg.scan_period_max_ms + 250);
	/* The busy one: read when due, every time; its period doubles up to
	 * 60 s (1+2+...+32 s, then nine more), so some 15 reads in ten
	 * minutes. */
	CHECK_INT(reads[2], picks[2]);
	CHECK(picks[2] >= 12 && picks[2] <= 18);
	/* The idle one: read at each due time (its period does not grow:
	 * a look without a read), never picked. */
	CHECK_INT(picks[3], 0);
	CHECK(reads[3] > 500 && reads[3] < 620);

	/* Due between the scan and the plan: the kept record does not count;
	 * it waits, and is read and picked at the next tick. */
	{
		uint64_t period, next, t0 = 700000;

		CHECK_INT(
		    kept_tick(sched, clock, &table, &list, fakes, 4, last, reads, t0, t0, &plan),
		    0);
		np_sched_task_period(sched, table.sched[2], &period, &next);
		CHECK(next > t0);
		CHECK_INT(kept_tick(sched, clock, &table, &list, fakes, 4, last, reads, next - 1,
				    next, &plan),
			  0);
		CHECK(list.tasks[2].stat_kept && !picked(&plan, 2));
		CHECK_INT(plan.verdicts[2].reason, NP_REASON_WAITING_PERIOD);
		CHECK_U64(plan.verdicts[2].wait_ms, 0);
		CHECK_INT(kept_tick(sched, clock, &table, &list, fakes, 4, last, reads, next + 250,
				    next + 250, &plan),
			  0);
		CHECK(!list.tasks[2].stat_kept && picked(&plan, 2));
	}

	/* A reload reads every task again. */
	memset(reads, 0, sizeof(reads));
	CHECK_INT(reload(sched, &table, &cfg), 0);
	CHECK_INT(
	    kept_tick(sched, clock, &table, &list, fakes, 4, last, reads, 800000, 800000, &plan),
	    0);
	for (unsigned i = 0; i < 4; i++)
		CHECK_INT(reads[i], 1);

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A task whose pages are being moved is not read while they move, and is
 * read at the first tick after: it stays due meanwhile. */
static bool pid_moving(void *data, const struct np_task *task)
{
	return task->pid == *(const int *)data;
}

static void test_busy_waits(void)
{
	struct np_config cfg = test_config();
	struct fake fakes[] = {
	    {.pid = 8, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50},
	    {.pid = 9, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50},
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	int moving = 8;

	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	np_sched_set_busy(sched, pid_moving, &moving);
	for (int i = 0; i < 3; i++) {
		make_list(&list, fakes, 2, np_clock_now_ms(clock));
		CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
		CHECK_INT(plan.verdicts[0].reason, NP_REASON_MIGRATING);
		CHECK(!picked(&plan, 0));
		/* The other one is read once, then waits its period. */
		CHECK_INT(plan.verdicts[1].reason,
			  i ? NP_REASON_WAITING_PERIOD : NP_REASON_SCAN_FIRST);
		CHECK_INT(np_clock_advance(clock, 100), 0);
	}
	moving = 0;
	make_list(&list, fakes, 2, np_clock_now_ms(clock));
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_SCAN_FIRST);
	CHECK(picked(&plan, 0));
	CHECK_U64(np_sched_counters(sched)->verdicts[NP_REASON_MIGRATING], 3);
	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* One tick reads at most scan_budget_mb of RSS, most overdue first; a task
 * bigger than the budget is read alone when it heads the line, and its
 * period is stretched by how many budgets it spans. */
static void test_budget(void)
{
	struct np_config cfg = test_config();
	struct fake fakes[] = {
	    {.pid = 1, .born_ms = 0, .rss_mb = 600, .cpu_percent = 100},
	    {.pid = 2, .born_ms = 100, .rss_mb = 600, .cpu_percent = 100},
	    {.pid = 3, .born_ms = 200, .rss_mb = 300, .cpu_percent = 100},
	    {.pid = 4, .born_ms = 1000, .rss_mb = 2500, .cpu_percent = 100},
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_sched_task *st;
	struct np_clock *clock;
	struct np_sched *sched;
	uint64_t period, next;

	cfg.scan_budget_mb = 1024;
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);

	/* Overdue: pid 1 by 9000 ms, 2 by 8900, 3 by 8800, 4 by 8000. 1 fits,
	 * 2 does not, and the line stops there: 3 would fit but waits. */
	make_list(&list, fakes, 4, 10000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 0);
	CHECK_INT(plan.verdicts[1].reason, NP_REASON_OVER_BUDGET);
	CHECK_INT(plan.verdicts[2].reason, NP_REASON_OVER_BUDGET);
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_OVER_BUDGET);
	CHECK_U64(plan.picked_rss_bytes, 600 * MIB);

	CHECK_INT(np_clock_set(clock, 10250), 0);
	make_list(&list, fakes, 4, 10250);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 2);
	CHECK_INT(plan.picks[0], 1);
	CHECK_INT(plan.picks[1], 2);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_WAITING_PERIOD);
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_OVER_BUDGET);

	/* The 2500 MiB task heads the line: read alone, over the budget. */
	CHECK_INT(np_clock_set(clock, 10500), 0);
	make_list(&list, fakes, 4, 10500);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 3);
	CHECK_U64(plan.picked_rss_bytes, 2500 * MIB);
	/* ceil(2500 / 1024) = 3 budgets: three minimum periods. */
	st = state_of(&table, 4, 1000 * HZ / 1000);
	CHECK(st != NULL);
	CHECK(st == table.sched[3]);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 3000);
	CHECK_U64(next, 13500);
	CHECK_INT(np_sched_done(sched, st, &list.tasks[3], 1000, NP_SCAN_STABLE), 0);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 6000);
	CHECK_U64(next, 16500);
	CHECK_U64(np_sched_counters(sched)->verdicts[NP_REASON_OVER_BUDGET], 4);

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* Under the budget, a task just come of age and one whose period ended
 * are ordered by how long each has truly been due: a period's due time
 * leads by half a tick (due_after), so the age's does too. */
static void test_budget_order_with_lead(void)
{
	struct np_config cfg = test_config();
	struct fake fakes[] = {
	    {.pid = 1, .born_ms = 0, .rss_mb = 600, .cpu_percent = 100},
	    /* Of age at 10900, before pid 1's period ends at 11000. */
	    {.pid = 2, .born_ms = 9900, .rss_mb = 600, .cpu_percent = 100},
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;

	cfg.tick_ms = 500; /* a lead of 250 ms */
	cfg.scan_budget_mb = 1024;
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);

	make_list(&list, fakes, 2, 10000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 0);
	CHECK_INT(plan.verdicts[1].reason, NP_REASON_TOO_YOUNG);

	/* Both due, one fits: pid 2, due 100 ms longer. Without the age's
	 * lead pid 1 (due at 10750 by its lead) would have gone first. */
	CHECK_INT(np_clock_set(clock, 11000), 0);
	make_list(&list, fakes, 2, 11000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 1);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_OVER_BUDGET);

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A pid reused by a new process is a new task: too young again, its own
 * period; the old one is forgotten. The caller's table holds the states:
 * the sync drops the state of a task gone from the list, and counts it. */
static void test_pid_reuse_and_exit(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 300, .born_ms = 0, .rss_mb = 500, .cpu_percent = 100};
	struct fake other = {.pid = 301, .born_ms = 0, .rss_mb = 500, .cpu_percent = 100};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_sched_task *st;
	struct np_task old_task;
	struct np_clock *clock;
	struct np_sched *sched;
	uint64_t period, next;

	CHECK_INT(np_clock_new_virtual(2000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	make_list(&list, &fake, 1, 2000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	old_task = list.tasks[0];
	CHECK(state_of(&table, 300, 0) == table.sched[0]);
	CHECK_INT(np_sched_done(sched, table.sched[0], &old_task, 100, NP_SCAN_STABLE), 0);

	fake.born_ms = 2100; /* pid 300 again, a new process */
	CHECK_INT(np_clock_set(clock, 2500), 0);
	make_list(&list, &fake, 1, 2500);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 0);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_TOO_YOUNG);
	CHECK_U64(plan.verdicts[0].wait_ms, 600);
	CHECK_U64(table.seen, 2);
	CHECK_U64(table.forgotten, 1);
	CHECK_INT(table.nr, 1);
	/* The old process's state is gone; the new one starts fresh. */
	CHECK(state_of(&table, 300, old_task.start_ticks) == NULL);
	st = state_of(&table, 300, 2100 * HZ / 1000);
	CHECK(st != NULL);
	CHECK(st != NULL && !st->scanned && !st->has_period);

	/* It exits; another task stays. The exited one is forgotten. */
	CHECK_INT(np_clock_set(clock, 3100), 0);
	make_list(&list, &other, 1, 3100);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_U64(table.forgotten, 2);
	CHECK_U64(table.seen, 3);
	CHECK_U64(np_sched_counters(sched)->tasks_tracked, 1);
	CHECK(state_of(&table, 300, 2100 * HZ / 1000) == NULL);
	st = state_of(&table, 301, 0);
	CHECK(st != NULL);
	if (st) {
		np_sched_task_period(sched, st, &period, &next);
		CHECK_U64(period, 1000);
	}

	/* An empty list forgets everything. */
	list.nr = 0;
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_U64(np_sched_counters(sched)->tasks_tracked, 0);
	CHECK_U64(table.forgotten, 3);
	CHECK_INT(table.nr, 0);
	CHECK(state_of(&table, 301, 0) == NULL);

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A reload keeps per-task state and clamps periods into the new range. */
static void test_reload_clamps(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 9, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50};
	enum np_scan_outcome stable[] = {NP_SCAN_STABLE, NP_SCAN_STABLE, NP_SCAN_STABLE,
					 NP_SCAN_STABLE};
	uint64_t gaps[8], period, next, last_read;
	struct np_state_table table = {0};
	struct np_sched_task *st;
	struct np_clock *clock;
	struct np_sched *sched;

	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	/* Four stable reads: the period is 16 s. */
	CHECK_INT(read_gaps(sched, &table, clock, &fake, stable, 4, gaps, 3), 3);
	st = state_of(&table, 9, 0);
	CHECK(st != NULL);
	if (!st)
		goto out;
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 16000);
	last_read = next - 16000;

	cfg.scan_period_max_ms = 4000;
	CHECK_INT(reload(sched, &table, &cfg), 0);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 4000);
	CHECK_U64(next, last_read + 4000);

	cfg.scan_period_min_ms = 6000;
	cfg.scan_period_max_ms = 30000;
	CHECK_INT(reload(sched, &table, &cfg), 0);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 6000);
	CHECK_U64(next, last_read + 6000);

	/* A bad config is refused and the old one stays (the caller then
	 * reloads no state: reload() stops at the refusal). */
	cfg.scan_period_min_ms = 40000;
	CHECK_INT(reload(sched, &table, &cfg), -EINVAL);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 6000);
	/* The old settings are the ones applied: a reload of the state under
	 * them changes nothing. */
	np_sched_task_reload(sched, st);
	np_sched_task_period(sched, st, &period, &next);
	CHECK_U64(period, 6000);
	CHECK_U64(next, last_read + 6000);
	CHECK_U64(table.forgotten, 0);
out:
	np_state_table_clear(&table);
	np_sched_free(sched);
	np_clock_free(clock);
}

/*
 * A test double for reading a task's details: it gives each task the
 * cgroup cgroup_of() says, and counts who it was asked about. A pid equal
 * to fail_pid cannot be read (it vanished mid-tick).
 */
struct details_double {
	struct np_task_list *list;
	unsigned calls;
	unsigned calls_by_pid[128];
	int fail_pid;
};

static const char *cgroup_of(int pid)
{
	switch (pid) {
	case 42:
		return "/system.slice/backup.service";
	case 51:
		return "/system.slice/cron.service";
	case 52:
		return "/user.slice/user-1000.slice/session-2.scope/x";
	case 53:
		return "/user.slice2/app";
	case 55:
		return NULL; /* no cgroup line: cgroup v1 only */
	default:
		return "/user.slice/user-1000.slice/app.scope";
	}
}

static int fake_details(void *data, unsigned index)
{
	struct details_double *d = data;
	struct np_task *task;
	const char *cgroup;

	CHECK(index < d->list->nr);
	if (index >= d->list->nr)
		return -EINVAL;
	task = &d->list->tasks[index];
	CHECK(!task->has_details); /* asked only about tasks without them */
	d->calls++;
	if (task->pid >= 0 && task->pid < 128)
		d->calls_by_pid[task->pid]++;
	if (task->pid == d->fail_pid)
		return -ESRCH;
	cgroup = cgroup_of(task->pid);
	task->cgroup = cgroup ? strdup(cgroup) : NULL;
	if (cgroup && !task->cgroup)
		return -ENOMEM;
	task->has_details = true;
	return 0;
}

/* Apply @cfg as the daemon does on SIGHUP: the scheduler's settings, a
 * filter compiled from it (replacing *@filter), then every task's state. */
static int reload_with_filter(struct np_sched *sched, struct np_state_table *table,
			      const struct np_config *cfg, struct np_filter **filter,
			      struct details_double *d)
{
	struct np_filter *next;
	int err = np_sched_set_config(sched, cfg);

	if (err)
		return err;
	err = np_filter_new(cfg, &next);
	if (err)
		return err;
	np_sched_set_filter(sched, next, fake_details, d);
	np_filter_free(*filter);
	*filter = next;
	for (unsigned i = 0; i < table->nr; i++)
		np_sched_task_reload(sched, &table->v[i].sched);
	return 0;
}

/* The cheap filters, each with its reason, and the cgroup rules, for which
 * the details are read only of due tasks that passed the cheap tests. A
 * task the cgroup rules excluded is not asked about again until the config
 * is reloaded. */
static void test_filters(void)
{
	struct np_config cfg = test_config();
	char *exclude_comm[] = {"ssh*"};
	char *include_comm[] = {"post*"};
	char *exclude_cgroup[] = {"/system.slice/backup.service"};
	int exclude_pid[] = {66};
	struct fake fakes[] = {
	    {.pid = 2, .rss_mb = 0, .cpu_percent = 100, .comm = "kworker/0:1", .kthread = true},
	    {.pid = 40, .rss_mb = 500, .cpu_percent = 100, .comm = "sshd"},
	    {.pid = 41, .rss_mb = 50, .cpu_percent = 100},
	    {.pid = 42, .rss_mb = 500, .cpu_percent = 100},
	    {.pid = 43, .rss_mb = 500, .cpu_percent = 1},
	    {.pid = 44, .rss_mb = 500, .cpu_percent = 6},
	    {.pid = 66, .rss_mb = 500, .cpu_percent = 100},
	};
	enum np_reason expect[] = {
	    NP_REASON_KERNEL_THREAD, NP_REASON_EXCLUDED,   NP_REASON_TOO_SMALL, NP_REASON_EXCLUDED,
	    NP_REASON_IDLE,	     NP_REASON_SCAN_FIRST, NP_REASON_EXCLUDED,
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct details_double d = {.list = &list, .fail_pid = -1};
	struct np_filter *filter = NULL;
	struct np_clock *clock;
	struct np_sched *sched;
	char why[160];

	cfg.exclude_comm = (struct np_strv){exclude_comm, 1};
	cfg.exclude_pid = exclude_pid;
	cfg.nr_exclude_pid = 1;
	cfg.exclude_cgroup = (struct np_strv){exclude_cgroup, 1};
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	CHECK_INT(np_filter_new(&cfg, &filter), 0);
	CHECK(np_filter_needs_cgroup(filter));
	np_sched_set_filter(sched, filter, fake_details, &d);
	make_list(&list, fakes, 7, 10000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	for (unsigned i = 0; i < 7; i++)
		CHECK_INT(plan.verdicts[i].reason, expect[i]);
	CHECK_INT(d.calls, 2); /* pids 42 and 44 */
	CHECK_INT(d.calls_by_pid[42], 1);
	CHECK_INT(d.calls_by_pid[44], 1);
	/* The details stay with the task for the rest of the tick. */
	CHECK(list.tasks[3].has_details);
	CHECK_STR(list.tasks[3].cgroup, "/system.slice/backup.service");
	np_sched_verdict_text(sched, &list.tasks[3], &plan.verdicts[3], why, sizeof(why));
	CHECK_STR(why, "cgroup /system.slice/backup.service is under exclude_cgroup "
		       "/system.slice/backup.service");
	np_sched_verdict_text(sched, &list.tasks[6], &plan.verdicts[6], why, sizeof(why));
	CHECK_STR(why, "pid 66 is in exclude_pid");

	/* The idle task wakes up: 50% of a CPU over its next period. The next
	 * scan lists the tasks without details. */
	clear_details(&list);
	list.tasks[4].cpu_ticks += 50; /* 500 ms of CPU */
	list.tasks[5].cpu_ticks += 50;
	CHECK_INT(np_clock_set(clock, 11000), 0);
	list.tasks[5].age_ms += 1000;
	list.tasks[4].age_ms += 1000;
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[4].reason, NP_REASON_SCAN_FIRST);
	CHECK_INT(plan.verdicts[5].reason, NP_REASON_SCAN_DUE);
	/* The cgroup rules' answer is remembered until the config changes. */
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_EXCLUDED);
	CHECK_INT(d.calls, 4); /* pids 43 and 44 */
	CHECK_INT(d.calls_by_pid[42], 1);
	CHECK_INT(d.calls_by_pid[43], 1);
	CHECK_INT(d.calls_by_pid[44], 2);

	/* include_comm: only matching tasks are looked at. */
	clear_details(&list);
	cfg.include_comm = (struct np_strv){include_comm, 1};
	CHECK_INT(reload_with_filter(sched, &table, &cfg, &filter, &d), 0);
	snprintf(list.tasks[4].comm, sizeof(list.tasks[4].comm), "postgres");
	CHECK_INT(np_clock_set(clock, 13000), 0);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[5].reason, NP_REASON_EXCLUDED);
	CHECK(plan.verdicts[4].reason != NP_REASON_EXCLUDED);
	np_sched_verdict_text(sched, &list.tasks[5], &plan.verdicts[5], why, sizeof(why));
	CHECK_STR(why, "comm \"app\" matches no include_comm pattern");
	/* Pid 42 is now excluded by its comm: its details are not read. */
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_EXCLUDED);
	CHECK_INT(d.calls_by_pid[42], 1);

	/* After a reload the cgroup rules are asked again. */
	clear_details(&list);
	cfg.include_comm = (struct np_strv){0};
	CHECK_INT(reload_with_filter(sched, &table, &cfg, &filter, &d), 0);
	CHECK_INT(np_clock_set(clock, 14000), 0);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_EXCLUDED);
	CHECK_INT(d.calls_by_pid[42], 2);
	CHECK_INT(d.calls, 5); /* only 42: 43 and 44 are idle since their reads */

	clear_details(&list);
	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_filter_free(filter);
	np_clock_free(clock);
}

/* include_cgroup and exclude_cgroup together, prefixes matching whole path
 * components; a task whose details cannot be read is left out of this tick
 * only. */
static void test_cgroup_rules(void)
{
	struct np_config cfg = test_config();
	char *include_cgroup[] = {"/user.slice"};
	char *exclude_cgroup[] = {"/user.slice/user-1000.slice/session-2.scope"};
	struct fake fakes[] = {
	    {.pid = 50, .rss_mb = 500, .cpu_percent = 100}, /* .../app.scope */
	    {.pid = 51, .rss_mb = 500, .cpu_percent = 100}, /* /system.slice/... */
	    {.pid = 52, .rss_mb = 500, .cpu_percent = 100}, /* .../session-2.scope/x */
	    {.pid = 53, .rss_mb = 500, .cpu_percent = 100}, /* /user.slice2/app */
	    {.pid = 54, .rss_mb = 500, .cpu_percent = 100}, /* unreadable: gone */
	    {.pid = 55, .rss_mb = 500, .cpu_percent = 100}, /* no cgroup */
	};
	enum np_reason expect[] = {
	    NP_REASON_SCAN_FIRST, NP_REASON_EXCLUDED, NP_REASON_EXCLUDED,
	    NP_REASON_EXCLUDED,	  NP_REASON_VANISHED, NP_REASON_EXCLUDED,
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct details_double d = {.list = &list, .fail_pid = 54};
	struct np_filter *filter;
	struct np_clock *clock;
	struct np_sched *sched;
	char why[160];

	cfg.include_cgroup = (struct np_strv){include_cgroup, 1};
	cfg.exclude_cgroup = (struct np_strv){exclude_cgroup, 1};
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	CHECK_INT(np_filter_new(&cfg, &filter), 0);
	np_sched_set_filter(sched, filter, fake_details, &d);
	make_list(&list, fakes, 6, 10000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	for (unsigned i = 0; i < 6; i++)
		CHECK_INT(plan.verdicts[i].reason, expect[i]);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(d.calls, 6);
	np_sched_verdict_text(sched, &list.tasks[1], &plan.verdicts[1], why, sizeof(why));
	CHECK_STR(why, "cgroup /system.slice/cron.service is under no include_cgroup");
	np_sched_verdict_text(sched, &list.tasks[2], &plan.verdicts[2], why, sizeof(why));
	CHECK_STR(why, "cgroup /user.slice/user-1000.slice/session-2.scope/x is under "
		       "exclude_cgroup /user.slice/user-1000.slice/session-2.scope");
	np_sched_verdict_text(sched, &list.tasks[3], &plan.verdicts[3], why, sizeof(why));
	CHECK_STR(why, "cgroup /user.slice2/app is under no include_cgroup");
	np_sched_verdict_text(sched, &list.tasks[5], &plan.verdicts[5], why, sizeof(why));
	CHECK_STR(why, "cgroup (unknown) is under no include_cgroup");

	/* Next tick: the excluded ones are remembered; the unreadable one is
	 * asked again, and read once it can be. */
	clear_details(&list);
	d.fail_pid = -1;
	CHECK_INT(np_clock_set(clock, 10100), 0);
	for (unsigned i = 0; i < list.nr; i++)
		list.tasks[i].age_ms += 100;
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[0].reason, NP_REASON_WAITING_PERIOD);
	for (unsigned i = 1; i < 4; i++)
		CHECK_INT(plan.verdicts[i].reason, NP_REASON_EXCLUDED);
	CHECK_INT(plan.verdicts[4].reason, NP_REASON_SCAN_FIRST);
	CHECK_INT(plan.verdicts[5].reason, NP_REASON_EXCLUDED);
	CHECK_INT(d.calls, 7);
	CHECK_INT(d.calls_by_pid[54], 2);

	clear_details(&list);
	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_filter_free(filter);
	np_clock_free(clock);
}

/* The one-line texts of verdicts, with the figures behind them. */
static void test_verdict_text(void)
{
	struct np_config cfg = test_config();
	char *exclude_comm[] = {"ssh*"};
	struct fake fakes[] = {
	    {.pid = 60, .born_ms = 9500, .rss_mb = 200, .cpu_percent = 100},
	    {.pid = 61, .born_ms = 0, .rss_mb = 99, .cpu_percent = 100},
	    {.pid = 62, .born_ms = 0, .rss_mb = 200, .cpu_percent = 100, .comm = "sshd"},
	    {.pid = 63, .born_ms = 0, .rss_mb = 200, .cpu_percent = 100},
	    {.pid = 64, .born_ms = 0, .rss_mb = 200, .cpu_percent = 1},
	    {.pid = 65, .born_ms = 0, .rss_mb = 0, .cpu_percent = 100, .kthread = true},
	};
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_filter *filter;
	struct np_clock *clock;
	struct np_sched *sched;
	char why[160];

	cfg.exclude_comm = (struct np_strv){exclude_comm, 1};
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	CHECK_INT(np_filter_new(&cfg, &filter), 0);
	np_sched_set_filter(sched, filter, NULL, NULL);
	make_list(&list, fakes, 6, 10000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);

	CHECK_INT(plan.verdicts[0].reason, NP_REASON_TOO_YOUNG);
	np_sched_verdict_text(sched, &list.tasks[0], &plan.verdicts[0], why, sizeof(why));
	CHECK_STR(why, "younger than scan_delay_ms (1000): first look in 500 ms");
	CHECK_INT(plan.verdicts[1].reason, NP_REASON_TOO_SMALL);
	np_sched_verdict_text(sched, &list.tasks[1], &plan.verdicts[1], why, sizeof(why));
	CHECK_STR(why, "RSS 99 MiB below min_rss_mb (100)");
	CHECK_INT(plan.verdicts[2].reason, NP_REASON_EXCLUDED);
	np_sched_verdict_text(sched, &list.tasks[2], &plan.verdicts[2], why, sizeof(why));
	CHECK_STR(why, "comm \"sshd\" matches exclude_comm \"ssh*\"");
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_SCAN_FIRST);
	np_sched_verdict_text(sched, &list.tasks[3], &plan.verdicts[3], why, sizeof(why));
	CHECK_STR(why, "first read, the scan delay has passed");
	CHECK_INT(plan.verdicts[4].reason, NP_REASON_IDLE);
	np_sched_verdict_text(sched, &list.tasks[4], &plan.verdicts[4], why, sizeof(why));
	CHECK_STR(why, "CPU use since the last look below min_cpu_percent (5%)");
	CHECK_INT(plan.verdicts[5].reason, NP_REASON_KERNEL_THREAD);
	np_sched_verdict_text(sched, &list.tasks[5], &plan.verdicts[5], why, sizeof(why));
	CHECK_STR(why, "kernel thread");

	/* 400 ms later: pid 63 waits out its 1000 ms period, 60 comes of age
	 * in 100 ms. */
	CHECK_INT(np_clock_set(clock, 10400), 0);
	make_list(&list, fakes, 6, 10400);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), 0);
	CHECK_INT(plan.verdicts[3].reason, NP_REASON_WAITING_PERIOD);
	np_sched_verdict_text(sched, &list.tasks[3], &plan.verdicts[3], why, sizeof(why));
	CHECK_STR(why, "read within its period: next in 600 ms");
	np_sched_verdict_text(sched, &list.tasks[0], &plan.verdicts[0], why, sizeof(why));
	CHECK_STR(why, "younger than scan_delay_ms (1000): first look in 100 ms");

	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_filter_free(filter);
	np_clock_free(clock);
}

static void test_bad_input(void)
{
	struct np_config cfg = test_config();
	struct np_task_list list = new_list();
	struct np_state_table table = {0};
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	struct fake twice[] = {
	    {.pid = 5, .rss_mb = 500, .cpu_percent = 100},
	    {.pid = 5, .rss_mb = 500, .cpu_percent = 100},
	};
	struct fake unsorted[] = {
	    {.pid = 6, .rss_mb = 500, .cpu_percent = 100},
	    {.pid = 5, .rss_mb = 500, .cpu_percent = 100},
	};
	static const char *const names[NP_REASON_SCHED_COUNT] = {
	    "scan-first", "scan-due",	    "kernel-thread", "excluded",  "too-young",
	    "too-small",  "waiting-period", "idle",	     "migrating", "over-budget",
	};

	CHECK_INT(np_clock_new_virtual(0, &clock), 0);
	cfg.scan_period_min_ms = 0;
	CHECK_INT(np_sched_new(&cfg, clock, &sched), -EINVAL);
	cfg = test_config();
	cfg.scan_budget_mb = 0;
	CHECK_INT(np_sched_new(&cfg, clock, &sched), -EINVAL);
	cfg = test_config();
	cfg.scan_period_max_ms = 999;
	CHECK_INT(np_sched_new(&cfg, clock, &sched), -EINVAL);
	cfg = test_config();
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	CHECK_INT(np_clock_set(clock, 5000), 0);
	/* One task listed twice: the table refuses it, and so does the plan. */
	make_list(&list, twice, 2, 5000);
	CHECK_INT(plan_tick(sched, &table, &list, &plan), -EINVAL);
	CHECK_INT(table.nr, 0);
	CHECK_INT(np_sched_plan(sched, &list, table.sched, false, &plan), -EINVAL);
	/* An unsorted list too. */
	make_list(&list, unsorted, 2, 5000);
	CHECK_INT(np_state_table_sync(&table, &list, sched, 0), -EINVAL);
	CHECK_INT(np_sched_plan(sched, &list, table.sched, false, &plan), -EINVAL);
	CHECK_U64(np_sched_counters(sched)->ticks, 0);
	list.nr = 1;
	list.ticks_per_s = 0;
	CHECK_INT(plan_tick(sched, &table, &list, &plan), -EINVAL);
	/* An unknown outcome is refused and counts nothing. */
	CHECK_INT(table.nr, 1);
	CHECK_INT(np_sched_done(sched, table.sched[0], &list.tasks[0], 0, NP_SCAN_NR_OUTCOMES),
		  -EINVAL);
	CHECK_U64(np_sched_counters(sched)->numa_maps_reads, 0);
	CHECK_INT(np_clock_set(clock, 4000), -EINVAL); /* time never goes back */
	CHECK_STR(np_reason_name(NP_REASON_TOO_YOUNG), "too-young");
	for (unsigned i = 0; i < NP_REASON_SCHED_COUNT; i++)
		CHECK_STR(np_reason_name(i), names[i]);
	CHECK_STR(np_scan_outcome_name(NP_SCAN_LOCALITY_DROPPED), "locality-dropped");
	np_state_table_clear(&table);
	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

static void test_monotonic_clock(void)
{
	struct np_clock *clock;
	uint64_t a, b;

	CHECK_INT(np_clock_new_monotonic(&clock), 0);
	CHECK(!np_clock_is_virtual(clock));
	a = np_clock_now_ms(clock);
	b = np_clock_now_ms(clock);
	CHECK(a > 0 && b >= a);
	CHECK_INT(np_clock_advance(clock, 10), -EINVAL);
	np_clock_free(clock);
}

/* The table kept in place over many ticks of tasks coming and going, at
 * the start, in the middle and at the end of the pid range, several at
 * once: each state stays with its task, new ones start fresh, and the
 * scheduler's pointers are the states'. */
static void test_sync_in_place(void)
{
	enum { RANGE = 160 };
	static struct np_task storage[RANGE];
	struct np_config cfg = test_config();
	struct np_state_table table = {0};
	struct np_task_list list = {.tasks = storage, .cap = RANGE, .ticks_per_s = HZ};
	uint64_t mark[RANGE] = {0}, born[RANGE] = {0}, seen = 0, forgotten = 0, next_mark = 1;
	bool alive[RANGE] = {false};
	unsigned nr_alive = 0, bad = 0;
	uint32_t rnd = 12345;
	struct np_sched *sched;

	CHECK_INT(np_sched_new(&cfg, NULL, &sched), 0);
	for (unsigned round = 0; round < 400; round++) {
		/* Now and then a burst: many come, or many leave. */
		unsigned churn = round % 50 == 7 ? RANGE / 2 : 1 + round % 5;

		for (unsigned k = 0; k < churn; k++) {
			unsigned pid;

			rnd = rnd * 1103515245 + 12345;
			pid = (rnd >> 8) % RANGE;
			/* Gone, or back as another process (under the
			 * same pid, a later start). */
			forgotten += mark[pid] != 0;
			alive[pid] = !alive[pid];
			born[pid] = round + 1;
			mark[pid] = 0;
		}
		list.nr = 0;
		for (unsigned pid = 0; pid < RANGE; pid++)
			if (alive[pid])
				storage[list.nr++] =
				    (struct np_task){.pid = (int)pid + 1, .start_ticks = born[pid]};
		CHECK_INT(np_state_table_sync(&table, &list, sched, 0), 0);
		CHECK_INT(table.nr, list.nr);
		nr_alive = 0;
		for (unsigned i = 0; i < list.nr; i++) {
			struct np_task_state *st = &table.v[i];
			unsigned pid = (unsigned)list.tasks[i].pid - 1;

			bad += st->pid != list.tasks[i].pid || table.sched[i] != &st->sched;
			if (!mark[pid]) {
				bad += st->last_cpu_ticks != 0; /* fresh */
				st->last_cpu_ticks = mark[pid] = next_mark++;
				seen++;
			}
			bad += st->last_cpu_ticks != mark[pid];
			nr_alive++;
		}
	}
	CHECK_INT(bad, 0);
	CHECK_U64(table.seen, seen);
	CHECK_U64(table.forgotten, forgotten);
	CHECK(nr_alive > 0);
	np_state_table_clear(&table);
	np_sched_free(sched);
}

int main(void)
{
	test_scan_delay();
	test_period_adapts();
	test_due_at_nearest_tick();
	test_no_double_read();
	test_reads_when_needed();
	test_busy_waits();
	test_budget();
	test_budget_order_with_lead();
	test_pid_reuse_and_exit();
	test_reload_clamps();
	test_filters();
	test_cgroup_rules();
	test_verdict_text();
	test_bad_input();
	test_monotonic_clock();
	test_sync_in_place();
	return check_done();
}
