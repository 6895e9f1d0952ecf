/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "scheduler.h"

#include <errno.h>

#define MIB (1024ull * 1024)
#define HZ 100

/* The defaults: the tests are about what the daemon does out of the box. */
static struct np_config test_config(void)
{
	struct np_config cfg;

	np_config_init(&cfg);
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
		CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
		for (unsigned i = 0; i < 3; i++) {
			if (picked(&plan, i) && list.tasks[i].age_ms < cfg.scan_delay_ms)
				early++;
			if (picked(&plan, i) && !first_read[i])
				first_read[i] = now;
			if (plan.verdicts[i].reason == NP_SCHED_SKIP_TOO_YOUNG)
				CHECK_U64(plan.verdicts[i].wait_ms,
					  cfg.scan_delay_ms - list.tasks[i].age_ms);
		}
		if (now == 1000)
			CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SKIP_TOO_YOUNG);
		if (now == 2000)
			CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SCAN_FIRST);
	}
	CHECK_INT(early, 0);
	CHECK_U64(first_read[0], 2000);
	CHECK_U64(first_read[1], 2250);	       /* born 1130: of age at 2130 */
	CHECK_U64(first_read[2], 2000 + 1000); /* born 1990: of age at 2990 */
	CHECK_U64(np_sched_counters(sched)->verdicts[NP_SCHED_SCAN_FIRST], 3);

	/* With no delay, a task is read at the first tick that lists it. */
	cfg.scan_delay_ms = 0;
	CHECK_INT(np_sched_set_config(sched, &cfg), 0);
	fakes[0] = (struct fake){.pid = 20, .born_ms = 4250, .rss_mb = 200, .cpu_percent = 100};
	CHECK_INT(np_clock_set(clock, 4250), 0);
	make_list(&list, fakes, 1, 4250);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SCAN_FIRST);

	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* Tick every 100 ms; report @outcome after each read; return the gaps
 * between reads. */
static unsigned read_gaps(struct np_sched *sched, struct np_clock *clock, struct fake *fake,
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
		CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
		if (plan.nr_picks) {
			if (reads)
				gaps[nr_gaps++] = now - last;
			last = now;
			CHECK_INT(np_sched_done(sched, &list.tasks[0], 4096,
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
	struct np_clock *clock;
	struct np_sched *sched;
	unsigned n;

	cfg.scan_period_max_ms = 8000;
	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	n = read_gaps(sched, clock, &fake, outcomes, 10, gaps, 10);
	CHECK_INT(n, 10);
	for (unsigned i = 0; i < n && i < 10; i++)
		CHECK_U64(gaps[i], expect[i]);
	CHECK_U64(np_sched_counters(sched)->numa_maps_reads, 11);
	CHECK_U64(np_sched_counters(sched)->bytes_parsed, 11 * 4096);
	CHECK_U64(np_sched_counters(sched)->read_failures, 1);
	CHECK_U64(np_sched_counters(sched)->outcomes[NP_SCAN_CHANGED], 1);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A planned read that is never reported still holds the task off for a
 * full period: never two reads inside one period. */
static void test_no_double_read(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 8, .born_ms = 0, .rss_mb = 500, .cpu_percent = 50};
	struct np_task_list list = new_list();
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	unsigned reads = 0;

	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	for (int i = 0; i < 100; i++) { /* 5 s in 50 ms ticks */
		make_list(&list, &fake, 1, np_clock_now_ms(clock));
		CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
		reads += plan.nr_picks;
		if (plan.nr_picks == 0)
			CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SKIP_PERIOD);
		CHECK_INT(np_clock_advance(clock, 50), 0);
	}
	CHECK_INT(reads, 5);
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
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	uint64_t period, next;

	cfg.scan_budget_mb = 1024;
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);

	/* Overdue: pid 1 by 9000 ms, 2 by 8900, 3 by 8800, 4 by 8000. 1 fits,
	 * 2 does not, and the line stops there: 3 would fit but waits. */
	make_list(&list, fakes, 4, 10000);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 0);
	CHECK_INT(plan.verdicts[1].reason, NP_SCHED_SKIP_BUDGET);
	CHECK_INT(plan.verdicts[2].reason, NP_SCHED_SKIP_BUDGET);
	CHECK_INT(plan.verdicts[3].reason, NP_SCHED_SKIP_BUDGET);
	CHECK_U64(plan.picked_rss_bytes, 600 * MIB);

	CHECK_INT(np_clock_set(clock, 10250), 0);
	make_list(&list, fakes, 4, 10250);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 2);
	CHECK_INT(plan.picks[0], 1);
	CHECK_INT(plan.picks[1], 2);
	CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SKIP_PERIOD);
	CHECK_INT(plan.verdicts[3].reason, NP_SCHED_SKIP_BUDGET);

	/* The 2500 MiB task heads the line: read alone, over the budget. */
	CHECK_INT(np_clock_set(clock, 10500), 0);
	make_list(&list, fakes, 4, 10500);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	CHECK_INT(plan.picks[0], 3);
	CHECK_U64(plan.picked_rss_bytes, 2500 * MIB);
	/* ceil(2500 / 1024) = 3 budgets: three minimum periods. */
	CHECK_INT(np_sched_task_period(sched, 4, 1000 * HZ / 1000, &period, &next), 0);
	CHECK_U64(period, 3000);
	CHECK_U64(next, 13500);
	CHECK_INT(np_sched_done(sched, &list.tasks[3], 1000, NP_SCAN_STABLE), 0);
	CHECK_INT(np_sched_task_period(sched, 4, 1000 * HZ / 1000, &period, &next), 0);
	CHECK_U64(period, 6000);
	CHECK_U64(next, 16500);
	CHECK_U64(np_sched_counters(sched)->verdicts[NP_SCHED_SKIP_BUDGET], 4);

	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

/* A pid reused by a new process is a new task: too young again, its own
 * period; the old one is forgotten. */
static void test_pid_reuse_and_exit(void)
{
	struct np_config cfg = test_config();
	struct fake fake = {.pid = 300, .born_ms = 0, .rss_mb = 500, .cpu_percent = 100};
	struct fake other = {.pid = 301, .born_ms = 0, .rss_mb = 500, .cpu_percent = 100};
	struct np_task_list list = new_list();
	struct np_sched_plan plan = {0};
	struct np_task old_task;
	struct np_clock *clock;
	struct np_sched *sched;
	uint64_t period, next;

	CHECK_INT(np_clock_new_virtual(2000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	make_list(&list, &fake, 1, 2000);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 1);
	old_task = list.tasks[0];
	CHECK_INT(np_sched_done(sched, &old_task, 100, NP_SCAN_STABLE), 0);

	fake.born_ms = 2100; /* pid 300 again, a new process */
	CHECK_INT(np_clock_set(clock, 2500), 0);
	make_list(&list, &fake, 1, 2500);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.nr_picks, 0);
	CHECK_INT(plan.verdicts[0].reason, NP_SCHED_SKIP_TOO_YOUNG);
	CHECK_U64(plan.verdicts[0].wait_ms, 600);
	CHECK_U64(np_sched_counters(sched)->tasks_seen, 2);
	CHECK_U64(np_sched_counters(sched)->tasks_forgotten, 1);
	CHECK_INT(np_sched_task_period(sched, 300, 0, &period, &next), -ENOENT);
	CHECK_INT(np_sched_done(sched, &old_task, 100, NP_SCAN_STABLE), -ENOENT);

	/* It exits; another task stays. The exited one is forgotten. */
	CHECK_INT(np_clock_set(clock, 3100), 0);
	make_list(&list, &other, 1, 3100);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_U64(np_sched_counters(sched)->tasks_forgotten, 2);
	CHECK_U64(np_sched_counters(sched)->tasks_tracked, 1);
	CHECK_INT(np_sched_task_period(sched, 300, 2100 * HZ / 1000, &period, &next), -ENOENT);
	CHECK_INT(np_sched_task_period(sched, 301, 0, &period, &next), 0);

	/* An empty list forgets everything. */
	list.nr = 0;
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_U64(np_sched_counters(sched)->tasks_tracked, 0);
	CHECK_U64(np_sched_counters(sched)->tasks_forgotten, 3);

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
	struct np_clock *clock;
	struct np_sched *sched;

	CHECK_INT(np_clock_new_virtual(5000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	/* Four stable reads: the period is 16 s. */
	CHECK_INT(read_gaps(sched, clock, &fake, stable, 4, gaps, 3), 3);
	CHECK_INT(np_sched_task_period(sched, 9, 0, &period, &next), 0);
	CHECK_U64(period, 16000);
	last_read = next - 16000;

	cfg.scan_period_max_ms = 4000;
	CHECK_INT(np_sched_set_config(sched, &cfg), 0);
	CHECK_INT(np_sched_task_period(sched, 9, 0, &period, &next), 0);
	CHECK_U64(period, 4000);
	CHECK_U64(next, last_read + 4000);

	cfg.scan_period_min_ms = 6000;
	cfg.scan_period_max_ms = 30000;
	CHECK_INT(np_sched_set_config(sched, &cfg), 0);
	CHECK_INT(np_sched_task_period(sched, 9, 0, &period, &next), 0);
	CHECK_U64(period, 6000);
	CHECK_U64(next, last_read + 6000);

	/* A bad config is refused and the old one stays. */
	cfg.scan_period_min_ms = 40000;
	CHECK_INT(np_sched_set_config(sched, &cfg), -EINVAL);
	CHECK_INT(np_sched_task_period(sched, 9, 0, &period, &next), 0);
	CHECK_U64(period, 6000);
	CHECK_U64(np_sched_counters(sched)->tasks_forgotten, 0);
	np_sched_free(sched);
	np_clock_free(clock);
}

static unsigned exclude_calls;

static bool exclude_pid_42(void *data, const struct np_task *task)
{
	exclude_calls++;
	return task->pid == *(int *)data;
}

/* The cheap filters, each with its reason, and the callback asked only
 * about tasks that passed them. */
static void test_filters(void)
{
	struct np_config cfg = test_config();
	char *exclude_comm[] = {"ssh*"};
	char *include_comm[] = {"post*"};
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
	enum np_sched_reason expect[] = {
	    NP_SCHED_SKIP_KTHREAD,  NP_SCHED_SKIP_EXCLUDED, NP_SCHED_SKIP_TOO_SMALL,
	    NP_SCHED_SKIP_EXCLUDED, NP_SCHED_SKIP_IDLE,	    NP_SCHED_SCAN_FIRST,
	    NP_SCHED_SKIP_EXCLUDED,
	};
	struct np_task_list list = new_list();
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	int excluded = 42;

	cfg.exclude_comm = (struct np_strv){exclude_comm, 1};
	cfg.exclude_pid = exclude_pid;
	cfg.nr_exclude_pid = 1;
	CHECK_INT(np_clock_new_virtual(10000, &clock), 0);
	CHECK_INT(np_sched_new(&cfg, clock, &sched), 0);
	np_sched_set_exclude_fn(sched, exclude_pid_42, &excluded);
	make_list(&list, fakes, 7, 10000);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	for (unsigned i = 0; i < 7; i++)
		CHECK_INT(plan.verdicts[i].reason, expect[i]);
	CHECK_INT(exclude_calls, 2); /* pids 42 and 44 */

	/* The idle task wakes up: 50% of a CPU over its next period. */
	list.tasks[4].cpu_ticks += 50; /* 500 ms of CPU */
	list.tasks[5].cpu_ticks += 50;
	CHECK_INT(np_clock_set(clock, 11000), 0);
	list.tasks[5].age_ms += 1000;
	list.tasks[4].age_ms += 1000;
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.verdicts[4].reason, NP_SCHED_SCAN_FIRST);
	CHECK_INT(plan.verdicts[5].reason, NP_SCHED_SCAN_DUE);
	/* The callback's answer is remembered until the config changes. */
	CHECK_INT(plan.verdicts[3].reason, NP_SCHED_SKIP_EXCLUDED);
	CHECK_INT(exclude_calls, 4); /* pids 43 and 44 */

	/* include_comm: only matching tasks are looked at. */
	cfg.include_comm = (struct np_strv){include_comm, 1};
	CHECK_INT(np_sched_set_config(sched, &cfg), 0);
	snprintf(list.tasks[4].comm, sizeof(list.tasks[4].comm), "postgres");
	CHECK_INT(np_clock_set(clock, 13000), 0);
	CHECK_INT(np_sched_plan(sched, &list, &plan), 0);
	CHECK_INT(plan.verdicts[5].reason, NP_SCHED_SKIP_EXCLUDED);
	CHECK(plan.verdicts[4].reason != NP_SCHED_SKIP_EXCLUDED);

	np_sched_plan_free(&plan);
	np_sched_free(sched);
	np_clock_free(clock);
}

static void test_bad_input(void)
{
	struct np_config cfg = test_config();
	struct np_task_list list = new_list();
	struct np_sched_plan plan = {0};
	struct np_clock *clock;
	struct np_sched *sched;
	struct fake twice[] = {
	    {.pid = 5, .rss_mb = 500, .cpu_percent = 100},
	    {.pid = 5, .rss_mb = 500, .cpu_percent = 100},
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
	make_list(&list, twice, 2, 5000);
	CHECK_INT(np_sched_plan(sched, &list, &plan), -EINVAL);
	list.nr = 1;
	list.ticks_per_s = 0;
	CHECK_INT(np_sched_plan(sched, &list, &plan), -EINVAL);
	CHECK_INT(np_sched_done(sched, &list.tasks[0], 0, NP_SCAN_NR_OUTCOMES), -ENOENT);
	CHECK_INT(np_clock_set(clock, 4000), -EINVAL); /* time never goes back */
	CHECK_STR(np_sched_reason_name(NP_SCHED_SKIP_TOO_YOUNG), "too-young");
	CHECK_STR(np_scan_outcome_name(NP_SCAN_LOCALITY_DROPPED), "locality-dropped");
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

int main(void)
{
	test_scan_delay();
	test_period_adapts();
	test_no_double_read();
	test_budget();
	test_pid_reuse_and_exit();
	test_reload_clamps();
	test_filters();
	test_bad_input();
	test_monotonic_clock();
	return check_done();
}
