/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "trace.h"

#include <errno.h>
#include <inttypes.h>

#define HZ 100

/* The defaults, with the size and CPU filters off: the replay tests are
 * about the scan delay. */
static struct np_config test_config(void)
{
	struct np_config cfg;

	np_config_init(&cfg);
	cfg.min_rss_mb = 0;
	cfg.min_cpu_percent = 0;
	/* A tick finer than the default, so that with no delay a tick falls
	 * inside each short life; the counts below are worked out for it. */
	cfg.tick_ms = 250;
	return cfg;
}

static struct np_task task(int pid, uint64_t start_ticks, uint64_t rss_kib, uint64_t cpu,
			   const char *comm)
{
	struct np_task t = {.pid = pid,
			    .start_ticks = start_ticks,
			    .rss_bytes = rss_kib * 1024,
			    .cpu_ticks = cpu,
			    .nr_threads = 1};

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	return t;
}

static void write_scan(struct np_trace_writer *w, struct np_task *tasks, unsigned nr,
		       uint64_t uptime)
{
	struct np_task_list list = {
	    .tasks = tasks, .nr = nr, .cap = nr, .uptime_ms = uptime, .ticks_per_s = HZ};

	CHECK_INT(np_trace_writer_scan(w, &list), 0);
}

static const char expected_trace[] = "numaplaced-trace 1\n"
				     "# test\n"
				     "hz 100\n"
				     "t 10000\n"
				     "n 1 0 0 4096 50 1 init\n"
				     "n 2 0 1 0 3 1 kthreadd\n"
				     "n 40 950 0 2048 0 1 a\\x20b\\x5cc\\x0a\n"
				     "t 10050\n"
				     "u 40 2048 1 1\n"
				     "t 10100\n"
				     "x 40\n"
				     "n 40 1005 0 1024 0 1 cc1\n";

/* Writer and parser agree: what is written reads back to the same lists. */
static void test_round_trip(void)
{
	struct np_task tasks[3] = {
	    task(1, 0, 4096, 50, "init"),
	    task(2, 0, 0, 3, "kthreadd"),
	    task(40, 950, 2048, 0, "a b\\c\n"),
	};
	const struct np_task_list *list;
	struct np_trace_player *player;
	struct np_trace_writer *w;
	struct np_trace *trace;
	char *text = NULL, *err;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	tasks[1].kthread = true;
	CHECK_INT(np_trace_writer_new(out, "test", &w), 0);
	write_scan(w, tasks, 3, 10000);
	tasks[2].cpu_ticks = 1;
	write_scan(w, tasks, 3, 10050);
	/* pid 40 exits and a new process gets the pid before the next scan. */
	tasks[2] = task(40, 1005, 1024, 0, "cc1");
	write_scan(w, tasks, 3, 10100);
	{
		struct np_task_list back = {
		    .tasks = tasks, .nr = 3, .uptime_ms = 10100, .ticks_per_s = HZ};
		/* Same uptime (/proc/uptime's 10 ms resolution): left out. */
		CHECK_INT(np_trace_writer_scan(w, &back), 0);
		back.uptime_ms = 10099; /* time going back */
		CHECK_INT(np_trace_writer_scan(w, &back), -EINVAL);
	}
	CHECK_INT(np_trace_writer_free(w), 0);
	fclose(out);
	CHECK_STR(text, expected_trace);

	CHECK_INT(np_trace_parse("t.trace", text, len, &trace, &err), 0);
	CHECK(err == NULL);
	CHECK_INT(trace->hz, 100);
	CHECK_INT(trace->nr_scans, 3);
	CHECK_INT(trace->nr_events, 6);
	CHECK_INT(np_trace_player_new(trace, &player), 0);
	CHECK_U64(np_trace_player_next_uptime(player), 10000);
	CHECK_INT(np_trace_player_step(player, &list), 1);
	CHECK_INT(list->nr, 3);
	CHECK_STR(list->tasks[2].comm, "a b\\c\n");
	CHECK_U64(list->tasks[2].age_ms, 500);
	CHECK_U64(list->tasks[0].rss_bytes, 4096 * 1024);
	CHECK(list->tasks[1].kthread);
	CHECK_INT(np_trace_player_step(player, &list), 1);
	CHECK_U64(list->tasks[2].cpu_ticks, 1);
	CHECK_U64(list->tasks[0].cpu_ticks, 50);
	CHECK_INT(np_trace_player_step(player, &list), 1);
	CHECK_INT(list->nr, 3);
	CHECK_STR(list->tasks[2].comm, "cc1");
	CHECK_U64(list->tasks[2].start_ticks, 1005);
	CHECK_U64(list->tasks[2].age_ms, 50);
	CHECK_INT(np_trace_player_task_id(player, 2), 3);
	CHECK_U64(list->uptime_ms, 10100);
	CHECK_INT(np_trace_player_step(player, &list), 0);
	CHECK_U64(np_trace_player_next_uptime(player), UINT64_MAX);
	np_trace_player_free(player);
	np_trace_free(trace);
	free(text);
}

/* Each bad trace gives one error naming the line and the value. */
static void test_parse_errors(void)
{
	static const struct {
		const char *text;
		const char *error;
	} cases[] = {
	    {"", "x:1: empty file"},
	    {"numaplaced-trace 2\n", "x:1: trace version 2, this build reads 1"},
	    {"hello\n", "x:1: not a numaplaced trace (no \"numaplaced-trace 1\" line)"},
	    {"numaplaced-trace 1\nt 5\n", "x:2: scan before the hz line"},
	    {"numaplaced-trace 1\nhz 100\nhz 100\n", "x:3: second hz line"},
	    {"numaplaced-trace 1\nhz 0\n", "x:2: hz 0"},
	    {"numaplaced-trace 1\nhz 100\nt 5\nt 5\n",
	     "x:4: uptime 5 not after the previous scan's 5"},
	    {"numaplaced-trace 1\nhz 100\nn 1 0 0 1 1 1 a\n",
	     "x:3: 'n' record before the first scan (t line)"},
	    {"numaplaced-trace 1\nhz 100\nt 5\nu 7 1 1 1\n",
	     "x:4: 'u' record for pid 7, which is not listed"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\nt 6000\nx 7\nx 7\n",
	     "x:7: 'x' record for pid 7, which is not listed"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\nn 7 3 0 1 1 1 b\n",
	     "x:5: new task 7, but pid 7 is listed already"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1x 1 1 a\n", "x:4: bad rss_kib \"1x\""},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 2 1 1 1 a\n",
	     "x:4: kernel thread flag 2 out of range (at most 1)"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1\n", "x:4: missing comm"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\\x4\n",
	     "x:4: bad escape in comm \"a\\x4\""},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\\x00b\n",
	     "x:4: NUL byte (\\x00) in comm \"a\\x00b\""},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\tb\n",
	     "x:4: unescaped byte 0x09 in comm"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\nx 7 9\n",
	     "x:5: unexpected \"9\" at the end of the line"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 0 0 0 1 1 1 a\n", "x:4: pid 0"},
	    {"numaplaced-trace 1\nhz 100\nt 99999999999999999999\n",
	     "x:3: uptime \"99999999999999999999\" out of range"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nq 1\n", "x:4: unknown record \"q\""},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nu 7\n",
	     "x:4: 'u' record for pid 7, which is not listed"},
	    {"numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1\n", "x:4: missing threads"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct np_trace *trace = NULL;
		char *err = NULL;

		CHECK_INT(np_trace_parse("x", cases[i].text, strlen(cases[i].text), &trace, &err),
			  -EINVAL);
		CHECK_STR(err, cases[i].error);
		free(err);
	}
	/* A record whose type is a NUL byte (found by fuzz-trace: strchr
	 * matched the end of its string). */
	{
		static const char nul[] = "numaplaced-trace 1\nhz 100\nt 5000\n\0 2\n";
		struct np_trace *trace = NULL;
		char *err = NULL;

		CHECK_INT(np_trace_parse("x", nul, sizeof(nul) - 1, &trace, &err), -EINVAL);
		CHECK(err && strncmp(err, "x:4: unknown record", 19) == 0);
		free(err);
	}
}

/* Damaged traces (every truncation, and bytes flipped at random with a fixed
 * seed) parse or give an error naming a line; under the sanitizer build
 * this also proves the parser reads nothing outside the buffer. */
static void test_parse_damaged(void)
{
	size_t len = strlen(expected_trace);
	char *copy = malloc(len);
	unsigned seed = 12345, errors = 0, ok = 0;

	for (size_t cut = 0; cut <= len; cut++) {
		struct np_trace *trace;
		char *err = NULL;
		int r;

		memcpy(copy, expected_trace, cut);
		r = np_trace_parse("x", copy, cut, &trace, &err);
		CHECK(r == 0 || (r == -EINVAL && err && strncmp(err, "x:", 2) == 0));
		if (r == 0)
			np_trace_free(trace);
		free(err);
	}
	for (int round = 0; round < 3000; round++) {
		struct np_trace *trace;
		char *err = NULL;
		int r;

		memcpy(copy, expected_trace, len);
		for (int k = 0; k < 1 + round % 3; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % len] = (char)(seed >> 20);
		}
		r = np_trace_parse("x", copy, len, &trace, &err);
		if (r == 0) {
			ok++;
			np_trace_free(trace);
		} else if (r == -EINVAL && err && strncmp(err, "x:", 2) == 0) {
			errors++;
		}
		free(err);
	}
	CHECK_INT(ok + errors, 3000);
	CHECK(errors > 1000);
	free(copy);
}

static void test_load_missing(void)
{
	struct np_trace *trace;
	char *err;

	CHECK_INT(np_trace_load("/nonexistent/x.trace", &trace, &err), -ENOENT);
	CHECK_STR(err, "/nonexistent/x.trace: No such file or directory");
	free(err);
}

/*
 * A handmade trace: every 100 ms a 300 ms compiler process starts, beside
 * one long-lived server. *@text holds the trace's text (the caller frees it).
 */
static struct np_trace *handmade_trace(char **text)
{
	struct np_trace *trace = NULL;
	char *err = NULL;
	size_t len = 0;
	FILE *out;
	struct np_trace_writer *w;
	struct np_task tasks[8];

	*text = NULL;
	out = open_memstream(text, &len);

	CHECK_INT(np_trace_writer_new(out, NULL, &w), 0);
	/* 10 s, a scan every 50 ms; compilers are pids 1000.., born every
	 * 100 ms from uptime 100 s. */
	for (uint64_t t = 100000; t <= 110000; t += 50) {
		unsigned nr = 0;

		tasks[nr++] = task(500, 0, 200 * 1024, t / 10, "server");
		for (uint64_t born = 100000; born <= t && born < 109000; born += 100)
			if (t - born < 300)
				tasks[nr++] = task((int)(1000 + (born - 100000) / 100), born / 10,
						   30 * 1024, (t - born) / 10, "cc1");
		write_scan(w, tasks, nr, t);
	}
	CHECK_INT(np_trace_writer_free(w), 0);
	fclose(out);
	CHECK_INT(np_trace_parse("handmade", *text, len, &trace, &err), 0);
	free(err);
	return trace;
}

/* Task-ticks of the handmade trace: the server is listed at each of the 41
 * ticks; the ticks 250 ms apart from 100 s see 1 compiler at 100 s, 3 at
 * each of the 35 ticks from 100.25 s to 108.75 s, 2 at 109 s and none
 * after: 108. */
#define HANDMADE_TICKS 41
#define HANDMADE_COMPILER_TICKS 108

/* Every task-tick has one verdict. */
static uint64_t verdict_sum(const struct np_replay_result *r)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < NP_REASON_SCHED_COUNT; i++)
		sum += r->verdicts[i];
	return sum;
}

/* With scan_delay_ms 1000 no compiler is ever read; with 0 each is read at
 * the first tick that lists it. */
static void test_replay_handmade(void)
{
	struct np_config cfg = test_config();
	struct np_replay_result r;
	struct np_trace *trace;
	char *text;

	trace = handmade_trace(&text);
	if (!trace) {
		free(text);
		return;
	}
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.duration_ms, 10000);
	CHECK_U64(r.trace_scans, 201);
	CHECK_U64(r.ticks, 41);
	CHECK_U64(r.tasks, 91);
	CHECK_U64(r.short_lived, 90);
	CHECK_U64(r.short_lived_reads, 0);
	CHECK_U64(r.short_lived_read, 0);
	/* The server, 100 s old: read at 100 s; each stable read doubles its
	 * period, so again at 102 s and 106 s. */
	CHECK_U64(r.numa_maps_reads, 3);
	CHECK_U64(r.tasks_read, 1);
	CHECK_U64(r.bytes_parsed, 3 * np_trace_numa_maps_estimate(200ull << 20));
	CHECK_U64(r.decisions, 0);
	/* Verdicts by np_reason: the compilers are always too young; the
	 * server waits out its period between its reads. */
	CHECK_U64(verdict_sum(&r), HANDMADE_TICKS + HANDMADE_COMPILER_TICKS);
	CHECK_U64(r.verdicts[NP_REASON_TOO_YOUNG], HANDMADE_COMPILER_TICKS);
	CHECK_U64(r.verdicts[NP_REASON_SCAN_FIRST], 1);
	CHECK_U64(r.verdicts[NP_REASON_SCAN_DUE], 2);
	CHECK_U64(r.verdicts[NP_REASON_WAITING_PERIOD], HANDMADE_TICKS - 3);

	cfg.scan_delay_ms = 0;
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	/* Ticks every 250 ms see each 300 ms compiler at least once (as
	 * listed at the latest 50 ms scan), some twice 250 ms apart, which
	 * is inside its period: one read each. */
	CHECK_U64(r.short_lived, 90);
	CHECK_U64(r.short_lived_read, 90);
	CHECK_U64(r.short_lived_reads, 90);
	CHECK_U64(r.numa_maps_reads, 93);
	/* The compilers seen at a second tick wait out their period. */
	CHECK_U64(verdict_sum(&r), HANDMADE_TICKS + HANDMADE_COMPILER_TICKS);
	CHECK_U64(r.verdicts[NP_REASON_TOO_YOUNG], 0);
	CHECK_U64(r.verdicts[NP_REASON_SCAN_FIRST], 91);
	CHECK_U64(r.verdicts[NP_REASON_SCAN_DUE], 2);
	CHECK_U64(r.verdicts[NP_REASON_WAITING_PERIOD],
		  HANDMADE_TICKS - 3 + HANDMADE_COMPILER_TICKS - 90);

	cfg.tick_ms = 0;
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), -EINVAL);
	np_trace_free(trace);
	free(text);
}

/* Uptimes at the end of the range: a scan at UINT64_MAX, the value that
 * also means "no scan left", is played once (it looped forever), and a
 * span of more ticks than a replay plays is refused, not played for ages. */
static void test_replay_huge_uptime(void)
{
	static const char last_only[] =
	    "numaplaced-trace 1\nhz 100\nt 18446744073709551615\nn 7 0 0 1 1 1 a\n";
	static const char huge_span[] =
	    "numaplaced-trace 1\nhz 100\nt 5000\nn 7 0 0 1 1 1 a\nt 18446744073709551615\n";
	struct np_config cfg = test_config();
	struct np_replay_result r;
	struct np_trace *trace;
	char *err = NULL;

	CHECK_INT(np_trace_parse("x", last_only, strlen(last_only), &trace, &err), 0);
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.trace_scans, 1);
	CHECK_U64(r.ticks, 1);
	CHECK_U64(r.tasks, 1);
	np_trace_free(trace);

	CHECK_INT(np_trace_parse("x", huge_span, strlen(huge_span), &trace, &err), 0);
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), -E2BIG);
	np_trace_free(trace);
	CHECK(err == NULL);
}

/* The configuration's filter applies to a replay as in the daemon; cgroup
 * rules, which a trace cannot answer, make the replay refuse. */
static void test_replay_filter(void)
{
	struct np_config cfg = test_config();
	char *exclude_comm[] = {"cc1"};
	char *include_comm[] = {"serv*"};
	char *cgroups[] = {"/system.slice"};
	int exclude_pid[] = {500};
	struct np_replay_result r;
	struct np_trace *trace;
	char *text;

	trace = handmade_trace(&text);
	if (!trace) {
		free(text);
		return;
	}
	cfg.scan_delay_ms = 0;

	/* No compiler is read: only the server's three reads are left. */
	cfg.exclude_comm = (struct np_strv){exclude_comm, 1};
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.short_lived, 90);
	CHECK_U64(r.short_lived_read, 0);
	CHECK_U64(r.numa_maps_reads, 3);
	CHECK_U64(r.tasks_read, 1);
	CHECK_U64(r.verdicts[NP_REASON_EXCLUDED], HANDMADE_COMPILER_TICKS);
	CHECK_U64(verdict_sum(&r), HANDMADE_TICKS + HANDMADE_COMPILER_TICKS);

	/* The same with include_comm. */
	cfg.exclude_comm = (struct np_strv){0};
	cfg.include_comm = (struct np_strv){include_comm, 1};
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.numa_maps_reads, 3);
	CHECK_U64(r.verdicts[NP_REASON_EXCLUDED], HANDMADE_COMPILER_TICKS);

	/* exclude_pid leaves the compilers, each read once. */
	cfg.include_comm = (struct np_strv){0};
	cfg.exclude_pid = exclude_pid;
	cfg.nr_exclude_pid = 1;
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.numa_maps_reads, 90);
	CHECK_U64(r.short_lived_reads, 90);
	CHECK_U64(r.tasks_read, 90);
	CHECK_U64(r.verdicts[NP_REASON_EXCLUDED], HANDMADE_TICKS);
	cfg.exclude_pid = NULL;
	cfg.nr_exclude_pid = 0;

	/* A trace holds no cgroups: either cgroup rule is refused, not
	 * replayed as if it were not there. */
	cfg.include_cgroup = (struct np_strv){cgroups, 1};
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), -EOPNOTSUPP);
	CHECK_U64(r.ticks, 0);
	CHECK_U64(r.numa_maps_reads, 0);
	cfg.include_cgroup = (struct np_strv){0};
	cfg.exclude_cgroup = (struct np_strv){cgroups, 1};
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), -EOPNOTSUPP);
	CHECK_U64(r.ticks, 0);
	/* Without them the same config replays. */
	cfg.exclude_cgroup = (struct np_strv){0};
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	CHECK_U64(r.numa_maps_reads, 93);

	np_trace_free(trace);
	free(text);
}

static void print_result(const char *name, const char *what, const struct np_replay_result *r)
{
	printf("%s, %s: %" PRIu64 " tasks over %" PRIu64 " ms, %" PRIu64 " numa_maps reads "
	       "(%" PRIu64 " KiB), %" PRIu64 " of %" PRIu64 " short-lived tasks read %" PRIu64
	       " times\n",
	       name, what, r->tasks, r->duration_ms, r->numa_maps_reads, r->bytes_parsed >> 10,
	       r->short_lived_read, r->short_lived, r->short_lived_reads);
}

/*
 * Traces recorded on a 2-CPU machine (tests/traces/record.sh). With the
 * default scan delay no task that lived under a second is ever read; with no
 * delay most are. Size and CPU filters are off to show the delay alone;
 * with every default the reads shrink further.
 */
static void test_replay_recorded(const char *name, const char *path)
{
	struct np_config cfg = test_config();
	struct np_replay_result r;
	struct np_trace *trace;
	char *err = NULL;

	CHECK_INT(np_trace_load(path, &trace, &err), 0);
	if (err) {
		fprintf(stderr, "%s\n", err);
		free(err);
		return;
	}
	CHECK(trace->nr_scans > 100);

	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	print_result(name, "scan_delay_ms=1000", &r);
	CHECK(r.short_lived > 100);
	CHECK_U64(r.short_lived_reads, 0);
	CHECK(r.numa_maps_reads > 0);
	uint64_t delayed_reads = r.numa_maps_reads;

	cfg.scan_delay_ms = 0;
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	print_result(name, "scan_delay_ms=0", &r);
	CHECK(r.short_lived_read * 2 > r.short_lived);
	CHECK(r.numa_maps_reads > delayed_reads + r.short_lived_reads / 2);

	np_config_init(&cfg);
	CHECK_INT(np_replay_run(trace, &cfg, 1000, &r), 0);
	print_result(name, "defaults", &r);
	CHECK_U64(r.short_lived_reads, 0);
	CHECK(r.numa_maps_reads <= delayed_reads);
	np_trace_free(trace);
}

/* A trace of this source tree's tests/traces. */
static void test_replay_shipped(const char *name)
{
	char path[4096];
	const char *root = getenv("NP_SOURCE_ROOT");

	snprintf(path, sizeof(path), "%s/tests/traces/%s.trace", root ? root : ".", name);
	test_replay_recorded(name, path);
}

/* Arguments: more traces to replay the same way (the build directory holds
 * the ones shipped compressed). */
int main(int argc, char **argv)
{
	test_round_trip();
	test_parse_errors();
	test_parse_damaged();
	test_load_missing();
	test_replay_handmade();
	test_replay_huge_uptime();
	test_replay_filter();
	test_replay_shipped("kbuild");
	test_replay_shipped("hackbench");
	for (int i = 1; i < argc; i++)
		test_replay_recorded(argv[i], argv[i]);
	return check_done();
}
