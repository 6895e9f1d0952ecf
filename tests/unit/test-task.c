/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "task.h"
#include "topology.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---- */

/* A stat line as the kernel prints it, fields 3..52, with @comm_len bytes of
 * @comm (which may hold anything). */
static size_t make_stat(char *buf, size_t size, int pid, const char *comm, size_t comm_len)
{
	int n = snprintf(buf, size, "%d (", pid);

	memcpy(buf + n, comm, comm_len);
	n += (int)comm_len;
	n += snprintf(buf + n, size - (size_t)n,
		      ") S 7 7 7 0 -1 4194560 100 0 0 0 11 5 8 2 20 0 3 0 4242 10000000 250 "
		      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 "
		      "0\n");
	return (size_t)n;
}

/* Parse from an exact-size heap copy, so a read past @len is caught by ASan. */
static int parse_exact(const char *line, size_t len, struct np_stat *st)
{
	char *copy = malloc(len ? len : 1);
	int err;

	memcpy(copy, line, len);
	err = np_stat_parse(copy, len, st);
	free(copy);
	return err;
}

static int status_exact(const char *text, struct np_status *st)
{
	size_t len = strlen(text);
	char *copy = malloc(len ? len : 1);
	int err;

	memcpy(copy, text, len);
	err = np_status_parse(copy, len, st);
	free(copy);
	return err;
}

static char last_log[1024];

__attribute__((format(printf, 3, 0)))
static void capture_log(void *data, int priority, const char *fmt, va_list args)
{
	vsnprintf(last_log, sizeof(last_log), fmt, args);
}

static const struct np_task *find_task(const struct np_task_list *list, int pid)
{
	for (unsigned i = 0; i < list->nr; i++)
		if (list->tasks[i].pid == pid)
			return &list->tasks[i];
	return NULL;
}

/* ---- np_stat_parse ---- */

static void check_comm(const char *comm, size_t comm_len, const char *expect)
{
	char line[512];
	struct np_stat st;
	size_t len = make_stat(line, sizeof(line), 4321, comm, comm_len);

	CHECK_INT(parse_exact(line, len, &st), 0);
	CHECK_INT(st.pid, 4321);
	CHECK_STR(st.comm, expect);
	CHECK_INT(st.state, 'S');
	CHECK_INT(st.processor, 1);
	CHECK_U64(st.start_ticks, 4242);
}

static void test_stat_comm(void)
{
	static const char k63[] = "kworker/u16:3-events_unbound_with_a_long_workqueue_name_abcdefg";

	check_comm("bash", 4, "bash");
	check_comm("a) b", 4, "a) b");
	check_comm("x\ny", 3, "x\ny");
	check_comm("((", 2, "((");
	check_comm(")", 1, ")");
	check_comm("", 0, "");
	check_comm("  two  spaces ", 14, "  two  spaces ");
	/* A comm that imitates the fields after it. */
	check_comm(") R 1 2 3 (", 11, ") R 1 2 3 (");
	check_comm("x) S 99 99\n((", 13, "x) S 99 99\n((");
	check_comm("abcdefghijklmno", 15, "abcdefghijklmno"); /* TASK_COMM_LEN - 1 */
	/* Kernel threads show their full name, up to 63 bytes. */
	CHECK_INT(strlen(k63), 63);
	check_comm(k63, 63, k63);
}

/* Longer than the kernel prints: cut, not refused. */
static void test_stat_comm_cut(void)
{
	char line[512], k70[70], expect[NP_COMM_MAX];
	struct np_stat st;
	size_t len;

	memset(k70, 'k', sizeof(k70));
	memset(expect, 'k', NP_COMM_MAX - 1);
	expect[NP_COMM_MAX - 1] = '\0';
	len = make_stat(line, sizeof(line), 2, k70, sizeof(k70));
	CHECK_INT(parse_exact(line, len, &st), 0);
	CHECK_STR(st.comm, expect);
	CHECK_INT(st.processor, 1);
}

static void test_stat_fields(void)
{
	static const char real[] =
	    "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 20 0 0 "
	    "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
	    "0 0\n";
	char line[512];
	struct np_stat st;
	size_t len = make_stat(line, sizeof(line), 77, "t", 1);

	CHECK_INT(parse_exact(line, len, &st), 0);
	CHECK_INT(st.ppid, 7);
	CHECK_U64(st.flags, 4194560);
	CHECK_U64(st.utime, 11);
	CHECK_U64(st.stime, 5);
	CHECK_U64(st.cutime, 8);
	CHECK_U64(st.cstime, 2);
	CHECK_INT(st.nr_threads, 3);
	CHECK_U64(st.rss_pages, 250);
	CHECK_INT(st.bad_field, 0);
	/* The children's times are signed in proc(5): a negative one is 0. */
	{
		char neg[512];
		char *at = strstr(line, " 11 5 8 2 ");
		size_t head = (size_t)(at - line);

		memcpy(neg, line, head);
		snprintf(neg + head, sizeof(neg) - head, " 11 5 -8 2 %s", at + 10);
		CHECK_INT(parse_exact(neg, strlen(neg), &st), 0);
		CHECK_U64(st.cutime, 0);
		CHECK_U64(st.cstime, 2);
		CHECK_U64(st.utime, 11);
	}

	CHECK_INT(parse_exact(real, strlen(real), &st), 0);
	CHECK_STR(st.comm, "kthreadd");
	CHECK(st.flags & NP_PF_KTHREAD);
	CHECK(!(st.flags & NP_PF_NO_SETAFFINITY));
	CHECK_INT(st.ppid, 0);
	CHECK_INT(st.processor, 0);
	/* No trailing newline, nothing after field 39. */
	len = (size_t)(strstr(line, " 17 1 ") + 5 - line);
	CHECK_INT(parse_exact(line, len, &st), 0);
	CHECK_INT(st.processor, 1);
}

/* Every prefix that ends before field 39 is complete must be refused. */
static void test_stat_truncated(void)
{
	char line[512];
	struct np_stat st;
	size_t len = make_stat(line, sizeof(line), 9, "a) b", 4);
	size_t complete = (size_t)(strstr(line, " 17 1 ") + 5 - line);
	unsigned refused = 0;

	for (size_t cut = 0; cut < len; cut++) {
		int err = parse_exact(line, cut, &st);

		if (cut < complete) {
			refused += err == -EINVAL;
		} else {
			CHECK_INT(err, 0);
		}
	}
	CHECK_INT(refused, complete);
	/* Cut right after the comm: field 3 is the one missing. */
	CHECK_INT(parse_exact(line, 9, &st), -EINVAL);
	CHECK_INT(st.bad_field, 3);
	CHECK_INT(parse_exact(line, complete - 2, &st), -EINVAL);
	CHECK_INT(st.bad_field, 39);
}

/* Replace field @field (>= 3) of a generated line with @value. */
static int parse_with_field(unsigned field, const char *value, struct np_stat *st)
{
	char line[512], out[600];
	size_t len = make_stat(line, sizeof(line), 55, "f", 1);
	char *p = strrchr(line, ')') + 1;
	size_t head, n;

	for (unsigned f = 3; f < field; f++)
		p = strchr(p + 1, ' ');
	head = (size_t)(p + 1 - line);
	memcpy(out, line, head);
	n = head + (size_t)sprintf(out + head, "%s", value);
	p = strchr(p + 1, ' ');
	memcpy(out + n, p, len - (size_t)(p - line));
	n += len - (size_t)(p - line);
	return parse_exact(out, n, st);
}

static void test_stat_bad_fields(void)
{
	struct np_stat st;

	CHECK_INT(parse_with_field(14, "1x", &st), -EINVAL);
	CHECK_INT(st.bad_field, 14);
	CHECK_INT(parse_with_field(25, "abc", &st), -EINVAL);
	CHECK_INT(st.bad_field, 25);
	CHECK_INT(parse_with_field(3, "SS", &st), -EINVAL);
	CHECK_INT(st.bad_field, 3);
	CHECK_INT(parse_with_field(8, "-", &st), -EINVAL);
	CHECK_INT(st.bad_field, 8);
	CHECK_INT(parse_with_field(8, "-1", &st), 0); /* tpgid: -1 is normal */
	CHECK_INT(parse_with_field(19, "-20", &st), 0);
	/* Huge numbers: the largest u64 fits, one more does not. */
	CHECK_INT(parse_with_field(14, "18446744073709551615", &st), 0);
	CHECK_U64(st.utime, UINT64_MAX);
	CHECK_INT(parse_with_field(14, "18446744073709551616", &st), -EINVAL);
	CHECK_INT(st.bad_field, 14);
	CHECK_INT(parse_with_field(22, "99999999999999999999999", &st), -EINVAL);
	CHECK_INT(st.bad_field, 22);
	CHECK_INT(parse_with_field(14, "-1", &st), -EINVAL);
	CHECK_INT(parse_with_field(20, "-3", &st), -EINVAL);
	/* A thread count is at most the number of pids, never LONG_MAX
	 * (which an unsigned count would show as 4294967295). */
	CHECK_INT(parse_with_field(20, "4194304", &st), 0);
	CHECK_INT(st.nr_threads, 4194304);
	CHECK_INT(parse_with_field(20, "4194305", &st), -EINVAL);
	CHECK_INT(st.bad_field, 20);
	CHECK_INT(parse_with_field(20, "9223372036854775807", &st), -EINVAL);
	CHECK_INT(st.bad_field, 20);
	CHECK_INT(parse_with_field(39, "2147483647", &st), 0);
	CHECK_INT(st.processor, INT_MAX);
	CHECK_INT(parse_with_field(39, "2147483648", &st), -EINVAL);
	CHECK_INT(st.bad_field, 39);
	CHECK_INT(parse_with_field(4, "2147483648", &st), -EINVAL);
	CHECK_INT(parse_with_field(16, "-9223372036854775808", &st), 0);
	CHECK_INT(parse_with_field(16, "-9223372036854775809", &st), -EINVAL);
	/* Two spaces make an empty field. */
	CHECK_INT(parse_with_field(10, " 1", &st), -EINVAL);
	CHECK_INT(st.bad_field, 10);
}

static void test_stat_bad_lines(void)
{
	static const char *const bad[] = {
	    "",
	    "1",
	    "(init) S",
	    "1 init) S",
	    "1 (init S 0",
	    "0 (init) S 0",
	    "x (init) S 0",
	    "1(init) S 0",
	    "-1 (init) S 0",
	    "99999999999 (a) S",
	};
	struct np_stat st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse_exact(bad[i], strlen(bad[i]), &st), -EINVAL);
		CHECK(st.bad_field == 1 || st.bad_field == 2 || st.bad_field == 3);
	}
	CHECK_INT(parse_exact("1 (a", 4, &st), -EINVAL);
	CHECK_INT(st.bad_field, 2);
}

/* Random bytes and random damage to a real line: never a crash or a read
 * past the end (ASan), and a success is self-consistent. */
static void test_stat_arbitrary_bytes(void)
{
	char line[512], buf[600];
	size_t len = make_stat(line, sizeof(line), 3, "a) (b", 5);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned ok = 0;

	for (unsigned round = 0; round < 20000; round++) {
		size_t n;
		struct np_stat st;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		if (round % 2) {
			n = seed % sizeof(buf);
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)(seed >> (i % 56));
		} else {
			n = len;
			memcpy(buf, line, len);
			buf[(seed >> 8) % len] = (char)(seed >> 24);
			n -= (seed >> 32) % 3 == 0 ? (seed >> 40) % len : 0;
		}
		if (parse_exact(buf, n, &st) == 0) {
			ok++;
			CHECK(st.pid > 0 && st.processor >= 0 && strlen(st.comm) < NP_COMM_MAX);
		}
	}
	CHECK(ok > 0);
	CHECK_INT(np_stat_parse(NULL, 0, &(struct np_stat){0}), -EINVAL);
}

/* The other two parsers on random bytes and damaged real text. */
static void test_parsers_arbitrary_bytes(void)
{
	static const char status[] = "Name:\tsh\nVmRSS:\t    1716 kB\nThreads:\t1\n"
				     "Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n";
	static const char stat[] = "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
				   "cpu1 1 2 3 4\nintr 5\n";
	struct np_status *st = malloc(sizeof(*st));
	uint64_t seed = 0x2545f4914f6cdd1dull;
	char buf[256];

	for (unsigned round = 0; round < 20000; round++) {
		const char *text = round % 4 < 2 ? status : stat;
		size_t n, text_len = round % 4 < 2 ? sizeof(status) - 1 : sizeof(stat) - 1;
		struct np_cpu_ticks *cpus;
		unsigned nr, bad_line;
		char *copy;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		if (round % 2) {
			n = seed % sizeof(buf);
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)(seed >> (i % 56));
		} else {
			n = text_len - (seed >> 40) % 8;
			memcpy(buf, text, n);
			buf[(seed >> 8) % n] = (char)(seed >> 24);
		}
		copy = malloc(n ? n : 1);
		memcpy(copy, buf, n);
		if (np_status_parse(copy, n, st))
			CHECK(st->bad_line >= 1);
		if (np_cpu_ticks_parse(copy, n, &cpus, &nr, &bad_line) == 0)
			free(cpus);
		else
			CHECK(bad_line >= 1);
		{
			uint64_t run = 12345, wait = 12345;
			int err = np_schedstat_parse(copy, n, &run, &wait);

			CHECK(err == 0 || (err == -EINVAL && run == 12345 && wait == 12345));
		}
		free(copy);
	}
	free(st);
}

/* ---- np_schedstat_parse ---- */

/* A thread's schedstat, "run wait slices": the run time and the wait, or
 * -EINVAL for anything else, the values untouched. */
static void test_schedstat(void)
{
	static const char *const bad[] = {
	    "", "\n", "1 2\n", "1 2 3 4\n", "1 -2 3\n", "1 x 3\n", "a 2 3\n",
	    "1 2 3\n\n", "1 2 3x\n", "1 99999999999999999999 3\n", "1\t2\t3\n",
	};
	uint64_t run = 7, wait = 7;

	CHECK_INT(np_schedstat_parse("51234567 1200000 40\n", 20, &run, &wait), 0);
	CHECK_U64(run, 51234567);
	CHECK_U64(wait, 1200000);
	CHECK_INT(np_schedstat_parse("0 0 0", 5, &run, &wait), 0); /* no newline */
	CHECK_U64(wait, 0);
	/* The counts are the kernel's u64s. */
	CHECK_INT(np_schedstat_parse("1 18446744073709551615 2\n", 25, &run, &wait), 0);
	CHECK_U64(wait, UINT64_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err;

		run = wait = 7;
		err = np_schedstat_parse(bad[i], strlen(bad[i]), &run, &wait);
		if (err != -EINVAL || run != 7 || wait != 7)
			fprintf(stderr, "schedstat \"%s\" taken\n", bad[i]);
		CHECK_INT(err, -EINVAL);
		CHECK(run == 7 && wait == 7);
	}
	/* Only @len bytes are read: the same line cut short is refused. */
	CHECK_INT(np_schedstat_parse("1 2 3\n", 3, &run, &wait), -EINVAL);
}

/* ---- np_status_parse ---- */

static void test_status(void)
{
	static const char user[] = "Name:\tx) R 9 9\\n((\nUmask:\t0022\nState:\tS (sleeping)\n"
				   "Tgid:\t4321\nPid:\t4322\n"
				   "VmPeak:\t   13532 kB\nVmRSS:\t    1716 kB\nThreads:\t4\n"
				   "Cpus_allowed:\tf\nCpus_allowed_list:\t0-1,3\n"
				   "Mems_allowed:\t00000000,00000003\nMems_allowed_list:\t0-1\n";
	static const char kthread[] = "Name:\tkthreadd\nKthread:\t1\nThreads:\t1\n"
				      "Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0";
	struct np_status *st = malloc(sizeof(*st));

	CHECK_INT(status_exact(user, st), 0);
	CHECK_U64(st->vm_rss_bytes, 1716 * 1024);
	CHECK_INT(st->threads, 4);
	CHECK(st->has_cpus_allowed && st->has_mems_allowed);
	CHECK_INT(np_bitmap_weight(&st->cpus_allowed), 3);
	CHECK(np_bitmap_test(&st->cpus_allowed, 3) && !np_bitmap_test(&st->cpus_allowed, 2));
	CHECK_INT(np_nodeset_weight(&st->mems_allowed), 2);

	/* No VmRSS line (kernel thread), no final newline. */
	CHECK_INT(status_exact(kthread, st), 0);
	CHECK_U64(st->vm_rss_bytes, 0);
	CHECK(np_nodeset_test(&st->mems_allowed, 0));
	CHECK_INT(status_exact("", st), 0);
	CHECK(!st->has_cpus_allowed);

	CHECK_INT(status_exact("Name:\ta\nCpus_allowed_list:\t0-x\n", st), -EINVAL);
	CHECK_INT(st->bad_line, 2);
	CHECK_INT(status_exact("VmRSS:\t12 MB\n", st), -EINVAL);
	CHECK_INT(st->bad_line, 1);
	CHECK_INT(status_exact("A:\t1\nB:\t2\nVmRSS:\t99999999999999999999 kB\n", st), -EINVAL);
	CHECK_INT(st->bad_line, 3);
	CHECK_INT(status_exact("Threads:\t-1\n", st), -EINVAL);
	CHECK_INT(status_exact("Mems_allowed_list:\t99999\n", st), -EINVAL);
	/* Unknown lines are not judged, even odd ones. */
	CHECK_INT(status_exact("Name:\t\xff\x01\nno colon here\nVmRSS:\t 8 kB\n", st), 0);
	CHECK_U64(st->vm_rss_bytes, 8192);
	free(st);

	/* Its Tgid alone: a thread's status names its leader. */
#define TGID(text) np_status_tgid(text, sizeof(text) - 1)
	CHECK_INT(TGID(user), 4321);
	CHECK_INT(TGID("Tgid:\t7"), 7);
	CHECK_INT(TGID("Name:\ta\nVmRSS:\t12 MB\nTgid: 12\n"), 12);
	CHECK_INT(TGID(kthread), -EINVAL); /* no line */
	CHECK_INT(TGID(""), -EINVAL);
	CHECK_INT(TGID("Tgid:\t12x\n"), -EINVAL);
	CHECK_INT(TGID("Tgid:\t0\n"), -EINVAL);
	CHECK_INT(TGID("Tgid:\t4294967296\n"), -EINVAL);
	CHECK_INT(TGID("NoTgid:\t5\nTgidX:\t6\n"), -EINVAL);
#undef TGID
}

/* ---- np_cpu_ticks_parse ---- */

static void test_cpu_ticks(void)
{
	static const char text[] = "cpu  11357 0 9877 78338 456 0 210 0 0 0\n"
				   "cpu0 4889 0 4549 40556 29 0 75 0 0 0\n"
				   "cpu3 6468 1 5328 37782 427 2 134 5 100 1\n"
				   "intr 1 2 3\nctxt 311628\n";
	struct np_cpu_ticks *cpus;
	unsigned nr, bad_line;

	CHECK_INT(np_cpu_ticks_parse(text, strlen(text), &cpus, &nr, &bad_line), 0);
	CHECK_INT(nr, 2);
	CHECK_INT(cpus[0].cpu, 0);
	CHECK_U64(cpus[0].busy, 4889 + 4549 + 75);
	CHECK_U64(cpus[0].total, 4889 + 4549 + 75 + 40556 + 29);
	CHECK_INT(cpus[1].cpu, 3);
	/* steal is busy; guest is already in user */
	CHECK_U64(cpus[1].busy, 6468 + 1 + 5328 + 2 + 134 + 5);
	CHECK_U64(cpus[1].total, cpus[1].busy + 37782 + 427);
	free(cpus);

	/* Linux 2.4 printed four columns. */
	CHECK_INT(np_cpu_ticks_parse("cpu1 1 2 3 4\n", 13, &cpus, &nr, &bad_line), 0);
	CHECK_INT(nr, 1);
	CHECK_U64(cpus[0].busy, 6);
	CHECK_U64(cpus[0].total, 10);
	free(cpus);

	CHECK_INT(np_cpu_ticks_parse("cpu 1 2 3 4\ncpu0 1 2 3\n", 24, &cpus, &nr, &bad_line),
		  -EINVAL);
	CHECK_INT(bad_line, 2);
	CHECK_INT(np_cpu_ticks_parse("cpuX 1 2 3 4\n", 13, &cpus, &nr, &bad_line), -EINVAL);
	CHECK_INT(np_cpu_ticks_parse("cpu0 1 2 3 4x\n", 14, &cpus, &nr, &bad_line), -EINVAL);

	/* The CPU number sizes the load table: past what a CPU mask holds it
	 * is refused, not allocated for (cpu99999999 cost 2.3 GB). */
	CHECK_INT(np_cpu_ticks_parse("cpu8191 1 2 3 4\n", 16, &cpus, &nr, &bad_line), 0);
	CHECK_INT(cpus[0].cpu, NP_MAX_CPUS - 1);
	free(cpus);
	CHECK_INT(np_cpu_ticks_parse("cpu0 1 2 3 4\ncpu8192 1 2 3 4\n", 29, &cpus, &nr, &bad_line),
		  -EINVAL);
	CHECK_INT(bad_line, 2);
	CHECK_INT(np_cpu_ticks_parse("cpu99999999 1 2 3 4\n", 20, &cpus, &nr, &bad_line), -EINVAL);
	CHECK_INT(bad_line, 1);
}

/* ---- np_uptime_parse ---- */

static void test_uptime(void)
{
	uint64_t ms = 0;

	CHECK_INT(np_uptime_parse("384.05 643.69\n", 14, &ms), 0);
	CHECK_U64(ms, 384050);
	CHECK_INT(np_uptime_parse("12.3456 4\n", 10, &ms), 0);
	CHECK_U64(ms, 12345); /* decimals past milliseconds dropped */
	CHECK_INT(np_uptime_parse("7", 1, &ms), 0);
	CHECK_U64(ms, 7000);
	CHECK_INT(np_uptime_parse("7.\n", 3, &ms), 0);
	CHECK_U64(ms, 7000);
	/* Only @len bytes are read. */
	CHECK_INT(np_uptime_parse("9.5x", 3, &ms), 0);
	CHECK_U64(ms, 9500);
	/* The largest number of seconds whose milliseconds fit. */
	CHECK_INT(np_uptime_parse("18446744073709550.999", 21, &ms), 0);
	CHECK_U64(ms, 18446744073709550999ull);

	ms = 42;
	static const char *const bad[] = {
	    "", ".5 1\n", "-1.00 2\n", "+1.00 2\n", " 1.00 2\n", "12.3x 4\n", "1e3 0\n",
	    "18446744073709551.000 0\n", "99999999999999999999999.5 0\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(np_uptime_parse(bad[i], strlen(bad[i]), &ms), -EINVAL);
	CHECK_U64(ms, 42); /* untouched on error */
}

/* ---- fixture trees ---- */

static void test_fixture_basic(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_task_source *src;
	struct np_task_list list = {0};
	const struct np_task *t;
	struct np_task copy;
	double busy[1];
	long page = sysconf(_SC_PAGESIZE);

	CHECK_INT(np_ctx_new(fixture("tasks-basic"), &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr, 4);
	CHECK_INT(list.nr_vanished, 0);
	CHECK_U64(list.uptime_ms, 502310);
	CHECK_INT(list.tasks[0].pid, 2); /* sorted by pid */

	t = find_task(&list, 2);
	CHECK(t && t->kthread && strcmp(t->comm, "kthreadd") == 0);
	CHECK(t && !(t->flags & NP_PF_NO_SETAFFINITY));
	CHECK(t && t->rss_bytes == 0 && np_topology_cpu_node(topo, t->last_cpu) == 0);

	t = find_task(&list, 11364);
	CHECK(t && !t->kthread && strcmp(t->comm, "sh") == 0 && t->state == 'S');
	CHECK(t && t->start_ticks == 50083 && t->nr_threads == 1);
	CHECK(t && t->rss_bytes == 360 * (uint64_t)page);
	/* 502.31 s up, started at tick 50083 */
	CHECK(t && t->age_ms == 502310 - 50083 * 1000 / list.ticks_per_s);

	t = find_task(&list, 11368);
	CHECK(t && strcmp(t->comm, "python3") == 0);
	CHECK(t && t->nr_threads == 4 && t->cpu_ticks == 17 && t->last_cpu == 1);
	CHECK(t && np_topology_cpu_node(topo, t->last_cpu) == 0 && !t->has_details);

	/* Details: status, cgroup and every thread. */
	copy = *t;
	CHECK_INT(np_task_read_details(ctx, &copy), 0);
	CHECK(copy.has_details);
	CHECK_U64(copy.rss_bytes, 13532 * 1024);
	CHECK_INT(np_bitmap_weight(&copy.cpus_allowed), 2);
	CHECK(np_nodeset_test(&copy.mems_allowed, 0));
	CHECK_STR(copy.cgroup, "/");
	CHECK_INT(copy.nr_thread_samples, 4);
	CHECK_INT(copy.threads[0].tid, 11368);
	CHECK_U64(copy.threads[0].cpu_ticks, 17);
	CHECK_INT(copy.threads[3].tid, 11529);
	CHECK_INT(copy.threads[3].last_cpu, 1);
	/* Each thread's wait for a CPU, from its schedstat, and their sum. */
	CHECK(copy.has_wait);
	CHECK_U64(copy.threads[3].wait_ns, 2500000);
	{
		uint64_t sum = 0;

		for (unsigned i = 0; i < copy.nr_thread_samples; i++)
			sum += copy.threads[i].wait_ns;
		CHECK_U64(sum, 1200000 + 300000 + 0 + 2500000);
	}
	CHECK_INT(np_task_verify(ctx, &copy), 0);
	np_task_clear(&copy);
	CHECK(!copy.has_details && !copy.cgroup && !copy.threads);

	/* Not asked for (the daemon not placing tasks): not read. */
	copy = *t;
	CHECK_INT(np_task_read_details_of(ctx, &copy, false), 0);
	CHECK(copy.has_details && !copy.has_wait);
	for (unsigned i = 0; i < copy.nr_thread_samples; i++)
		CHECK_U64(copy.threads[i].wait_ns, 0);
	np_task_clear(&copy);

	/* A kernel without schedstat (11364's thread has none): no wait. */
	t = find_task(&list, 11364);
	copy = *t;
	CHECK_INT(np_task_read_details(ctx, &copy), 0);
	CHECK(copy.has_details && !copy.has_wait && copy.threads[0].wait_ns == 0);
	np_task_clear(&copy);
	t = find_task(&list, 11368);

	/* Same pid, other start time: a reused pid is not the task. */
	copy = *t;
	copy.start_ticks++;
	CHECK_INT(np_task_verify(ctx, &copy), -ESRCH);
	CHECK_INT(np_task_read_details(ctx, &copy), -ESRCH);
	CHECK(!copy.has_details);
	copy.pid = 999999;
	CHECK_INT(np_task_verify(ctx, &copy), -ESRCH);

	/* Since boot, from proc/stat: cpu0 9513 of 50098 busy, cpu1 11930 of 50139. */
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(fabs(busy[0] - (9513.0 + 11930.0) / (50098.0 + 50139.0)) < 1e-9);
	/* Nothing moved since: no load. */
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(busy[0] == 0.0);

	/* A second scan replaces the list. */
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr, 4);
	np_task_list_clear(&list);
	CHECK(list.nr == 0 && list.tasks == NULL);
	np_task_source_free(src);
	np_topology_free(topo);
	np_ctx_free(ctx);
}

/* A cgroup's cpuset, CPUs and nodes, from the nearest cgroup up its path
 * that has the file: kubelet's tree in tests/fixtures/cgroup-2node. */
static void test_fixture_cpuset(void)
{
	static const struct {
		int pid;
		const char *cpus, *mems;
	} want[] = {
	    {100, "0-3", "0-1"}, /* both from kubepods.slice */
	    {200, "0-3", "0"},	 /* the pod's own cpuset.mems.effective */
	    {300, "0-3", "0-1"}, /* the root cgroup's */
	    {400, "2-3", "0-1"}, /* exclusive CPUs: the pod's cpuset.cpus.effective */
	};
	struct np_ctx *ctx;
	struct np_task_source *src;
	struct np_task_list list = {0};

	CHECK_INT(np_ctx_new(fixture("cgroup-2node"), &ctx), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct np_task *t = (struct np_task *)find_task(&list, want[i].pid);
		struct np_bitmap cpus;
		struct np_nodeset mems;

		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK_INT(np_task_read_details(ctx, t), 0);
		np_bitmap_parse_list(&cpus, want[i].cpus, strlen(want[i].cpus));
		np_nodeset_parse_list(&mems, want[i].mems, strlen(want[i].mems));
		CHECK(np_bitmap_equal(&t->cpuset_cpus, &cpus));
		CHECK(np_nodeset_equal(&t->cpuset_mems, &mems));
		/* Mems_allowed says 0-1 for all; the cgroup bounds pid 200. */
		CHECK(np_task_may_use_node(t, 0));
		CHECK_INT(np_task_may_use_node(t, 1), want[i].pid != 200);
		CHECK(!np_task_may_use_node(t, -1) && !np_task_may_use_node(t, NP_MAX_NODES));
	}
	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
}

static void test_fixture_hostile(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_task_source *src;
	struct np_task_list list = {0};
	struct np_task *t;
	double busy[2];

	CHECK_INT(np_ctx_new(fixture("tasks-hostile"), &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(topo->nr_nodes, 2);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	last_log[0] = '\0';
	CHECK_INT(np_task_source_scan(src, &list), 0);
	/* 101 (no stat) and 102 (empty stat) vanished; 103 is malformed. */
	CHECK_INT(list.nr, 4);
	CHECK_INT(list.nr_vanished, 2);
	CHECK(strstr(last_log, "tasks-hostile/proc/103/stat: field 14 is bad") != NULL);
	CHECK(strstr(last_log, "1O") != NULL);
	CHECK(!find_task(&list, 101) && !find_task(&list, 102) && !find_task(&list, 103));
	CHECK_U64(list.uptime_ms, 1000500);
	if (list.nr == 4) {
		CHECK_INT(list.tasks[0].pid, 40);
		CHECK_INT(list.tasks[1].pid, 100);
		CHECK_INT(list.tasks[2].pid, 104);
		CHECK_INT(list.tasks[3].pid, 200);
	}

	t = (struct np_task *)find_task(&list, 100);
	CHECK(t && strcmp(t->comm, "x) R 9 9\n((") == 0);
	CHECK(t && t->state == 'S' && t->cpu_ticks == 42 && t->last_cpu == 2 && np_topology_cpu_node(topo, t->last_cpu) == 1);
	CHECK(t && t->age_ms == 1000500 - 50050 * 1000 / list.ticks_per_s);
	if (t) {
		CHECK_INT(np_task_read_details(ctx, t), 0);
		CHECK_STR(t->cgroup, "/system.slice/odd name.service");
		CHECK(np_nodeset_test(&t->mems_allowed, 1) &&
		      !np_nodeset_test(&t->mems_allowed, 0));
		CHECK_U64(t->rss_bytes, 2048 * 1024);
		/* Its thread ran, and its schedstat shows no run time: a
		 * kernel that keeps the file, not the counts. No wait. */
		CHECK(!t->has_wait);
	}

	t = (struct np_task *)find_task(&list, 40);
	CHECK(t && t->kthread && (t->flags & NP_PF_NO_SETAFFINITY));
	CHECK(t && strcmp(t->comm, "kworker/3:1-events_power_efficient") == 0);
	if (t) {
		CHECK_INT(np_task_read_details(ctx, t), 0);
		CHECK_U64(t->rss_bytes, 0);
		CHECK_INT(np_bitmap_weight(&t->cpus_allowed), 1);
	}

	/* Threads on CPUs 0, 3 and 2; 203 exited mid-read. */
	t = (struct np_task *)find_task(&list, 200);
	CHECK(t && strcmp(t->comm, "worker pool") == 0 && t->nr_threads == 3);
	CHECK(t && t->cpu_ticks == 750 && np_topology_cpu_node(topo, t->last_cpu) == 0);
	CHECK(t && t->age_ms == 100500);
	if (t) {
		CHECK_INT(np_task_read_details(ctx, t), 0);
		CHECK_INT(t->nr_thread_samples, 3);
		CHECK_INT(t->threads[0].tid, 200);
		CHECK_INT(t->threads[0].last_cpu, 0);
		CHECK_U64(t->threads[0].cpu_ticks, 150);
		CHECK_INT(t->threads[1].tid, 201);
		CHECK_INT(t->threads[1].last_cpu, 3);
		CHECK_INT(np_topology_cpu_node(topo, t->threads[1].last_cpu), 1);
		CHECK_INT(t->threads[2].tid, 205);
		CHECK_INT(t->threads[2].last_cpu, 2);
		/* 201's schedstat is not the kernel's: said, naming it, and
		 * the task's wait is not counted; the rest of the read stands. */
		CHECK(!t->has_wait);
		CHECK(strstr(last_log, "tasks-hostile/proc/200/task/201/schedstat: line 1 is not "
				       "three counts: \"1 -2 3\"") != NULL);
		CHECK_STR(t->cgroup, "/user.slice/user-1000.slice/session-2.scope");
		CHECK_U64(t->rss_bytes, 102400 * 1024);
	}

	/* Scanned fine, but its status has a bad CPU list. */
	t = (struct np_task *)find_task(&list, 104);
	if (t) {
		CHECK_INT(np_task_read_details(ctx, t), -EINVAL);
		CHECK(!t->has_details);
		CHECK(strstr(last_log, "tasks-hostile/proc/104/status:9: bad value: "
				       "\"Cpus_allowed_list:\t0-x\"") != NULL);
	}
	CHECK(t != NULL);

	/* node0: cpu0 1000/4000, cpu1 1000/2000; node1: cpu2 4000/4000, cpu3 100/4500. */
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(fabs(busy[0] - 2000.0 / 6000.0) < 1e-9);
	CHECK(fabs(busy[1] - 4100.0 / 8500.0) < 1e-9);

	np_task_list_clear(&list);
	np_task_source_free(src);
	np_topology_free(topo);
	np_ctx_free(ctx);
}

/* Load between two calls, and the errors a bad proc/stat gives. */
static void test_node_load_delta(void)
{
	char root[] = "/tmp/np-task-XXXXXX", proc[64];
	struct np_ctx *fix, *ctx;
	struct np_topology *topo;
	struct np_task_source *src;
	struct np_task_list list = {0};
	double busy[2];

	CHECK(mkdtemp(root) != NULL);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	CHECK_INT(mkdir(proc, 0755), 0);
	CHECK_INT(np_ctx_new(fixture("tasks-hostile"), &fix), 0);
	CHECK_INT(np_topology_read(fix, &topo), 0);
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	np_ctx_set_log_fn(ctx, capture_log, NULL);
	CHECK_INT(np_task_source_new(ctx, &src), 0);

	CHECK_INT(put_file(proc, "stat",
			     "cpu0 100 0 0 100\ncpu1 0 0 0 200\n"
			     "cpu2 0 0 0 0\ncpu3 0 0 0 0\n"),
		  0);
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(fabs(busy[0] - 0.25) < 1e-9 && busy[1] == 0.0);
	/* cpu0 fully busy, cpu1 idle for 100 ticks each; cpu2 went offline;
	 * cpu3's counters went back (skipped for one round). */
	CHECK_INT(put_file(proc, "stat", "cpu0 200 0 0 100\ncpu1 0 0 0 300\ncpu3 0 0 0 0\n"), 0);
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(fabs(busy[0] - 0.5) < 1e-9 && busy[1] == 0.0);
	CHECK_INT(put_file(proc, "stat",
			     "cpu0 200 0 0 100\ncpu1 0 0 0 300\n"
			     "cpu2 50 0 0 50\ncpu3 10 0 0 30\n"),
		  0);
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	CHECK(busy[0] == 0.0 && fabs(busy[1] - 60.0 / 140.0) < 1e-9);

	CHECK_INT(put_file(proc, "stat", "cpu \ncpu0 1 2 x 4\n"), 0);
	CHECK_INT(np_task_source_node_load(src, topo, busy), -EINVAL);
	CHECK(strstr(last_log, "/proc/stat:2: bad CPU line: \"cpu0 1 2 x 4\"") != NULL);

	/* No uptime: the scan fails and says which file. */
	CHECK_INT(np_task_source_scan(src, &list), -ENOENT);
	CHECK(strstr(last_log, "/proc/uptime") != NULL);
	CHECK_INT(put_file(proc, "uptime", "12.3x 4\n"), 0);
	CHECK_INT(np_task_source_scan(src, &list), -EINVAL);
	CHECK(strstr(last_log, "not an uptime: \"12.3x 4\"") != NULL);
	CHECK_INT(put_file(proc, "uptime", "12.3456 4\n"), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_U64(list.uptime_ms, 12345);
	CHECK_INT(list.nr, 0);

	np_task_list_clear(&list);
	np_task_source_free(src);
	np_topology_free(topo);
	np_ctx_free(ctx);
	np_ctx_free(fix);
	snprintf(proc, sizeof(proc), "rm -rf %s", root);
	CHECK_INT(system(proc), 0);
}

/* Which pids the keep callback lets keep their record, and what it was
 * asked. */
struct keep_rule {
	int keep_pid[4];
	int unchanged_pid; /* kept as unchanged */
	unsigned asked;
	uint64_t last_start; /* the start time it was given for pid 10 */
};

static enum np_task_keep keep_some(void *data, int pid, uint64_t start_ticks)
{
	struct keep_rule *rule = data;

	rule->asked++;
	if (pid == 10)
		rule->last_start = start_ticks;
	if (pid == rule->unchanged_pid)
		return NP_TASK_KEEP_UNCHANGED;
	for (int i = 0; i < 4; i++)
		if (rule->keep_pid[i] == pid)
			return NP_TASK_KEEP;
	return NP_TASK_READ;
}

static int write_stat(const char *proc, int pid, uint64_t utime, uint64_t start)
{
	char dir[512], line[256];

	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	/* utime (14), the start time (22) and RSS (24) set, the rest 0. */
	snprintf(line, sizeof(line),
		 "%d (w) S 1 1 1 0 -1 4194560 0 0 0 0 %" PRIu64 " 0 0 0 20 0 1 0 %" PRIu64
		 " 1000 10 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, utime, start);
	return put_file(dir, "stat", line);
}

/* With a keep callback, a task listed under the same /proc entry keeps its
 * last record when the callback says so; a new entry is read. */
static void test_keep_records(void)
{
	char root[] = "/tmp/np-task-XXXXXX", proc[64], from[128], to[128];
	struct keep_rule rule = {{10, 20}, 0, 0, 0};
	struct np_ctx *ctx;
	struct np_task_source *src;
	struct np_task_list list = {0};
	const struct np_task *t;

	CHECK(mkdtemp(root) != NULL);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	CHECK_INT(mkdir(proc, 0755), 0);
	CHECK_INT(put_file(proc, "uptime", "100.00 4\n"), 0);
	CHECK_INT(write_stat(proc, 10, 5, 100), 0);
	CHECK_INT(write_stat(proc, 20, 7, 200), 0);
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	np_task_source_set_keep(src, keep_some, &rule);

	/* Nothing to keep at the first scan. */
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr, 2);
	CHECK_INT(list.nr_kept, 0);
	CHECK_INT(rule.asked, 0);
	CHECK(list.nr == 2 && !list.tasks[0].stat_kept && list.tasks[0].cpu_ticks == 5);

	/* Both kept: the old figures, the age brought up to date. */
	CHECK_INT(write_stat(proc, 10, 50, 100), 0);
	CHECK_INT(put_file(proc, "uptime", "103.00 4\n"), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr_kept, 2);
	CHECK_INT(rule.asked, 2);
	CHECK_U64(rule.last_start, 100);
	t = find_task(&list, 10);
	CHECK(t && t->stat_kept && t->cpu_ticks == 5 && t->start_ticks == 100);
	CHECK(t && t->age_ms == 103000 - 100 * 1000 / list.ticks_per_s);

	/* The callback wants 10 read: its new figures. */
	rule.keep_pid[0] = 0;
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr_kept, 1);
	t = find_task(&list, 10);
	CHECK(t && !t->stat_kept && t->cpu_ticks == 50);
	t = find_task(&list, 20);
	CHECK(t && t->stat_kept && t->cpu_ticks == 7);

	/* Kept as unchanged: the old figures, not marked stale, and counted
	 * apart. */
	CHECK_INT(write_stat(proc, 20, 70, 200), 0);
	rule.unchanged_pid = 20;
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr_kept, 0);
	CHECK_INT(list.nr_unchanged, 1);
	t = find_task(&list, 20);
	CHECK(t && !t->stat_kept && t->cpu_ticks == 7);
	t = find_task(&list, 10);
	CHECK(t && !t->stat_kept && t->cpu_ticks == 50);
	rule.unchanged_pid = 0;

	/* Another directory under pid 20 (the old one still exists, so the
	 * inode differs): read, whatever the callback says; a new pid is
	 * read; a pid gone is gone. */
	snprintf(from, sizeof(from), "%s/20", proc);
	snprintf(to, sizeof(to), "%s/old20", proc);
	CHECK_INT(rename(from, to), 0);
	CHECK_INT(write_stat(proc, 20, 1, 900), 0);
	CHECK_INT(write_stat(proc, 30, 3, 300), 0);
	snprintf(from, sizeof(from), "rm -rf %s/10", proc);
	CHECK_INT(system(from), 0);
	rule.asked = 0;
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr, 2);
	CHECK_INT(list.nr_kept, 0);
	CHECK_INT(rule.asked, 0);
	CHECK(!find_task(&list, 10));
	t = find_task(&list, 20);
	CHECK(t && !t->stat_kept && t->start_ticks == 900);
	t = find_task(&list, 30);
	CHECK(t && !t->stat_kept && t->cpu_ticks == 3);

	/* A scan that fails (here before its listing: no uptime) leaves the
	 * last good one's records to keep. And a directory whose stat names
	 * another pid is not that process (the old pid 20's, moved to 10). */
	snprintf(from, sizeof(from), "%s/10", proc);
	CHECK_INT(rename(to, from), 0);
	snprintf(from, sizeof(from), "%s/uptime", proc);
	CHECK_INT(unlink(from), 0);
	CHECK_INT(np_task_source_scan(src, &list), -ENOENT);
	CHECK_INT(list.nr, 0);
	CHECK_INT(put_file(proc, "uptime", "104.00 4\n"), 0);
	rule.keep_pid[0] = 20;
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK_INT(list.nr, 2);
	t = find_task(&list, 20);
	CHECK(t && t->stat_kept && t->start_ticks == 900);
	CHECK(!find_task(&list, 10));
	CHECK_INT(list.nr_vanished, 1);

	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
	snprintf(proc, sizeof(proc), "rm -rf %s", root);
	CHECK_INT(system(proc), 0);
}

/* ---- the running machine ---- */

/* A second thread, alive until the other end of its pipe is closed. C11
 * threads, as <pthread.h> would pull in <sched.h>, which lib/ shadows. */
static int idle_thread(void *arg)
{
	char c;

	return (int)read(*(int *)arg, &c, 1);
}

static double elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/* Scan @rounds times; report µs per process. */
static void measure(struct np_task_source *src, struct np_task_list *list, const char *what)
{
	struct timespec a, b;
	unsigned pids = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 5; i++) {
		CHECK_INT(np_task_source_scan(src, list), 0);
		pids += list->nr;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%s: %u processes, %.1f us per process\n", what, list->nr,
	       pids ? elapsed_us(&a, &b) / pids : 0.0);
}

static void test_live(void)
{
	/* 15 bytes, the most a comm holds; libproc2 would show it as "t) x.y ((?" */
	static const char name[] = "t) x\ny ((\xc3\xa9";
	char old_name[17] = "";
	struct np_ctx *ctx, *walk;
	struct np_topology *topo;
	struct np_task_source *src, *walk_src;
	struct np_task_list list = {0};
	struct np_task *self;
	thrd_t thread;
	int stop[2];
	double *busy;
	bool pinned = false;

	prctl(PR_GET_NAME, old_name);
	CHECK_INT(prctl(PR_SET_NAME, name), 0);
	CHECK_INT(pipe(stop), 0);
	/* The thread exists in /proc once thrd_create returns. */
	CHECK_INT(thrd_create(&thread, idle_thread, &stop[0]), thrd_success);

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK_INT(np_topology_read(ctx, &topo), 0);
	CHECK_INT(np_task_source_new(ctx, &src), 0);
	CHECK_INT(np_task_source_scan(src, &list), 0);
	CHECK(list.nr >= 1 && list.uptime_ms > 0);
	self = (struct np_task *)find_task(&list, getpid());
	CHECK(self != NULL);
	if (self) {
		CHECK_STR(self->comm, name);
		CHECK_INT(self->nr_threads, 2);
		CHECK_INT(self->state, 'R');
		CHECK(!self->kthread);
		CHECK(self->age_ms <= list.uptime_ms);
		CHECK(self->last_cpu >= 0 && np_topology_cpu_node(topo, self->last_cpu) >= 0);
		CHECK(self->rss_bytes > 0);
		CHECK_INT(np_task_verify(ctx, self), 0);
		CHECK_INT(np_task_read_details(ctx, self), 0);
		CHECK_INT(self->nr_thread_samples, 2);
		CHECK(!np_bitmap_empty(&self->cpus_allowed) &&
		      !np_nodeset_empty(&self->mems_allowed));
		CHECK(!self->thread_masks_differ);
	}
	/* The second thread pinned to one CPU on its own: a mask of its own,
	 * seen by sched_getaffinity here and through its status file below. */
	if (self && self->nr_thread_samples == 2 && np_bitmap_weight(&self->cpus_allowed) > 1) {
		int tid = self->threads[0].tid == getpid() ? self->threads[1].tid
							   : self->threads[0].tid;
		cpu_set_t one;

		pinned = true;
		CPU_ZERO(&one);
		CPU_SET(np_bitmap_next(&self->cpus_allowed, 0), &one);
		CHECK_INT(sched_setaffinity(tid, sizeof(one), &one), 0);
		CHECK_INT(np_task_read_details(ctx, self), 0);
		CHECK(self->thread_masks_differ);
	} else {
		printf("one CPU allowed: a thread's own mask is not checked\n");
	}
	for (unsigned i = 1; i < list.nr; i++)
		CHECK(list.tasks[i - 1].pid < list.tasks[i].pid);

	busy = calloc(topo->nr_nodes, sizeof(*busy));
	CHECK_INT(np_task_source_node_load(src, topo, busy), 0);
	for (unsigned n = 0; n < topo->nr_nodes; n++)
		CHECK(busy[n] >= 0.0 && busy[n] <= 1.0);
	free(busy);

	/* "/." is the same /proc through the fixture source: both must agree on
	 * this process, and the times compare the two. */
	measure(src, &list, "live scan, listed");
	CHECK_INT(np_ctx_new("/.", &walk), 0);
	CHECK(!np_ctx_is_live(walk));
	CHECK_INT(np_task_source_new(walk, &walk_src), 0);
	measure(walk_src, &list, "live scan, own walk");
	self = (struct np_task *)find_task(&list, getpid());
	CHECK(self && strcmp(self->comm, name) == 0 && self->nr_threads == 2);
	if (self && pinned) {
		CHECK_INT(np_task_read_details(walk, self), 0);
		CHECK(self->thread_masks_differ);
	}

	close(stop[1]);
	thrd_join(thread, NULL);
	close(stop[0]);
	prctl(PR_SET_NAME, old_name);
	np_task_list_clear(&list);
	np_task_source_free(walk_src);
	np_task_source_free(src);
	np_topology_free(topo);
	np_ctx_free(walk);
	np_ctx_free(ctx);
}

/*
 * Where /proc refuses a process's files (a procfs mounted hidepid=1, seen
 * by a user other than root), the source leaves that process out and the
 * scan goes on. Run in a child: a mount namespace of its own with such a
 * procfs on /proc, then user nobody; it exits 0 when the scan succeeded
 * with its own process in and pid 1 out, 2 when the set-up cannot be made
 * here (skipped), 1 otherwise.
 */
static int refused_child(void)
{
	struct np_ctx *ctx = NULL;
	struct np_task_source *src = NULL;
	struct np_task_list list = {0};
	bool ok;
	int err;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=1"))
		return 2;
	if (setgid(65534) || setuid(65534))
		return 2;
	if (np_ctx_new("/", &ctx) || np_task_source_new(ctx, &src))
		return 1;
	err = np_task_source_scan(src, &list);
	ok = err == 0 && find_task(&list, getpid()) && !find_task(&list, 1);
	ok = ok && list.nr_vanished >= 1;
	if (!ok)
		fprintf(stderr, "refused: scan %d, %u tasks, self %s, pid 1 %s, %u left out\n", err,
			list.nr, find_task(&list, getpid()) ? "in" : "out",
			find_task(&list, 1) ? "in" : "out", list.nr_vanished);
	np_task_list_clear(&list);
	np_task_source_free(src);
	np_ctx_free(ctx);
	return ok ? 0 : 1;
}

static void test_live_refused(void)
{
	int status = 0;
	pid_t child;

	if (geteuid() != 0) {
		printf("refused reads: skipped (needs root to mount a procfs)\n");
		return;
	}
	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(refused_child());
	CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		printf("refused reads: skipped (no mount namespace or procfs with hidepid here)\n");
		return;
	}
	CHECK_INT(WEXITSTATUS(status), 0);
}

int main(void)
{
	test_stat_comm();
	test_stat_comm_cut();
	test_stat_fields();
	test_stat_truncated();
	test_stat_bad_fields();
	test_stat_bad_lines();
	test_stat_arbitrary_bytes();
	test_parsers_arbitrary_bytes();
	test_schedstat();
	test_status();
	test_cpu_ticks();
	test_uptime();
	test_fixture_basic();
	test_fixture_cpuset();
	test_fixture_hostile();
	test_node_load_delta();
	test_keep_records();
	test_live();
	test_live_refused();
	return check_done();
}
