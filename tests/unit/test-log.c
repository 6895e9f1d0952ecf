/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "context.h"
#include "log.h"

#include <event2/event.h>
#include <numa.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

/* A clock the test moves by hand. */
struct fake_clock {
	uint64_t mono_ms;
	struct timespec wall;
};

static uint64_t fake_monotonic(void *data)
{
	return ((struct fake_clock *)data)->mono_ms;
}

static struct timespec fake_realtime(void *data)
{
	return ((struct fake_clock *)data)->wall;
}

/* A logger writing into a temporary file, on a fake clock. */
static struct np_logger *new_logger(FILE **stream, enum np_log_format format,
				    struct fake_clock *clock)
{
	struct np_log_clock c = {fake_monotonic, fake_realtime, clock};
	struct np_logger *log = NULL;

	*stream = tmpfile();
	CHECK(*stream != NULL);
	CHECK_INT(np_logger_new(*stream, format, &log), 0);
	np_logger_set_clock(log, &c);
	return log;
}

/* Everything written so far; the stream is left at its end. */
static char *contents(FILE *stream)
{
	static char buf[1 << 20];
	size_t n;

	fflush(stream);
	rewind(stream);
	n = fread(buf, 1, sizeof(buf) - 1, stream);
	buf[n] = '\0';
	fseek(stream, 0, SEEK_END);
	return buf;
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The last line, without its newline. */
static const char *last_line(const char *s)
{
	static char line[2048];
	size_t len = strlen(s);
	const char *start;

	if (len && s[len - 1] == '\n')
		len--;
	start = s + len;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(line, sizeof(line), "%.*s", (int)(s + len - start), start);
	return line;
}

static void test_format_count(void)
{
	char buf[32];

	CHECK_STR(np_log_format_count(0, buf, sizeof(buf)), "0");
	CHECK_STR(np_log_format_count(999, buf, sizeof(buf)), "999");
	CHECK_STR(np_log_format_count(1000, buf, sizeof(buf)), "1,000");
	CHECK_STR(np_log_format_count(9990, buf, sizeof(buf)), "9,990");
	CHECK_STR(np_log_format_count(123456, buf, sizeof(buf)), "123,456");
	CHECK_STR(np_log_format_count(1234567, buf, sizeof(buf)), "1,234,567");
	CHECK_STR(np_log_format_count(18446744073709551615ull, buf, sizeof(buf)),
		  "18,446,744,073,709,551,615");
	CHECK_STR(np_log_format_count(1234567, buf, 4), "1,2");
}

static void test_plain_and_journal_lines(void)
{
	struct fake_clock clock = {.wall = {1796228866, 123456789}}; /* 2026-12-02 16:27:46 UTC */
	struct np_logger *log;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_PLAIN, &clock);
	CHECK_INT(np_logger_format(log), NP_LOG_FORMAT_PLAIN);
	np_logger_log(log, LOG_WARNING, "pid %d: %s", 42, "gone");
	np_logger_log(log, LOG_INFO, "two\nlines\n");
	np_logger_log(log, LOG_DEBUG, "not shown at the default priority");
	CHECK_STR(contents(f), "2026-12-02 16:27:46.123 warning: pid 42: gone\n"
			       "2026-12-02 16:27:46.123 info: two lines\n");
	np_logger_set_priority(log, LOG_DEBUG);
	np_logger_log(log, LOG_DEBUG, "now shown");
	CHECK_STR(last_line(contents(f)), "2026-12-02 16:27:46.123 debug: now shown");
	/* A comm with ESC and CR neither moves the terminal nor starts a
	 * line of its own; a tab stays a tab. */
	np_logger_log(log, LOG_DEBUG, "pid 7 (%s): %s", "a\x1b[2J\rb\x7f", "x\ty");
	CHECK_STR(last_line(contents(f)),
		  "2026-12-02 16:27:46.123 debug: pid 7 (a\\x1b[2J\\x0db\\x7f): x\ty");
	np_logger_free(log);
	fclose(f);

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	np_logger_log(log, LOG_ERR, "cannot read %s", "/etc/numaplaced/numaplaced.conf");
	np_logger_log(log, LOG_NOTICE, "reloaded");
	np_logger_set_priority(log, LOG_WARNING);
	np_logger_log(log, LOG_NOTICE, "dropped");
	CHECK_STR(contents(f), "<3>cannot read /etc/numaplaced/numaplaced.conf\n<5>reloaded\n");
	np_logger_free(log);
	fclose(f);
}

/* The case: 10,000 failing targets in one scan. */
static void test_flood_is_summarised(void)
{
	struct fake_clock clock = {.mono_ms = 5000};
	struct np_logger *log;
	const char *out;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	for (int i = 0; i < 10000; i++) {
		np_logger_log(log, LOG_WARNING, "pid %d: move_pages: %s", 1000 + i,
			      "Operation not permitted");
		clock.mono_ms += i % 2; /* 5 s in all: one window */
	}
	out = contents(f);
	CHECK_INT(count_lines(out), NP_LOG_DEFAULT_BURST);
	CHECK_STR(last_line(out), "<4>pid 1009: move_pages: Operation not permitted");
	/* The window has not ended: nothing to summarise yet. */
	CHECK_INT(np_logger_flush(log, false), 0);
	clock.mono_ms = 15000;
	CHECK_INT(np_logger_flush(log, false), 1);
	out = contents(f);
	CHECK_INT(count_lines(out), NP_LOG_DEFAULT_BURST + 1);
	CHECK_STR(last_line(out), "<4>... 9,990 similar messages suppressed in the last 10 s, "
				  "the last: pid 10999: move_pages: Operation not permitted");
	/* Counted once: a second flush has nothing to say. */
	CHECK_INT(np_logger_flush(log, true), 0);

	/* A new window shows the next burst in full again. */
	np_logger_log(log, LOG_WARNING, "pid %d: move_pages: %s", 7, "No such process");
	CHECK_STR(last_line(contents(f)), "<4>pid 7: move_pages: No such process");
	np_logger_free(log);
	fclose(f);
}

/* A key's next message after its window ends writes the summary first,
 * with the most severe suppressed priority. */
static void test_summary_on_next_window(void)
{
	struct fake_clock clock = {.mono_ms = 100};
	struct np_logger *log;
	const char *out;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	np_logger_set_ratelimit(log, 2, 1000);
	for (int i = 0; i < 5; i++)
		np_logger_log_key(log, "scan", i == 3 ? LOG_ERR : LOG_INFO, "scan %d", i);
	CHECK_INT(count_lines(contents(f)), 2);
	clock.mono_ms = 1600;
	np_logger_log_key(log, "scan", LOG_INFO, "scan %d", 5);
	out = contents(f);
	CHECK_STR(out, "<6>scan 0\n<6>scan 1\n"
		       "<3>... 3 similar messages suppressed in the last 2 s, the last: scan 4\n"
		       "<6>scan 5\n");
	/* One suppressed message reads in the singular; free writes it. */
	np_logger_log_key(log, "scan", LOG_INFO, "scan %d", 6);
	np_logger_log_key(log, "scan", LOG_INFO, "scan %d", 7);
	np_logger_free(log);
	CHECK_STR(last_line(contents(f)),
		  "<6>... 1 similar message suppressed in the last 1 s, the last: scan 7");
	fclose(f);
}

/* However many keys arrive, output per window stays bounded. */
static void test_many_keys_bounded(void)
{
	struct fake_clock clock = {.mono_ms = 0};
	struct np_logger *log;
	unsigned lines;
	FILE *f;
	char key[32];

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	for (int round = 0; round < 20; round++) {
		for (int k = 0; k < 1000; k++) {
			snprintf(key, sizeof(key), "key-%d", k);
			np_logger_log_key(log, key, LOG_WARNING, "message %d of %s", round, key);
		}
	}
	lines = count_lines(contents(f));
	/* 64 keys own slots, the other 936 share one: 65 bursts. */
	CHECK_INT(lines, 65 * NP_LOG_DEFAULT_BURST);
	CHECK_INT(np_logger_flush(log, true), 65);
	CHECK_INT(count_lines(contents(f)), lines + 65);
	np_logger_free(log);
	fclose(f);
}

/* Attached to a loop, the logger writes a summary when the window ends
 * even if the key never comes back. */
static void test_flush_timer(void)
{
	struct fake_clock clock = {.mono_ms = 1000};
	struct event_base *base = event_base_new();
	struct np_logger *log;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	np_logger_set_ratelimit(log, 1, 20);
	CHECK_INT(np_logger_attach(log, base), 0);
	for (int i = 0; i < 5; i++)
		np_logger_log(log, LOG_WARNING, "node %d: no memory", i);
	CHECK_INT(count_lines(contents(f)), 1);
	clock.mono_ms += 20;
	event_base_loop(base, EVLOOP_ONCE);
	CHECK_STR(last_line(contents(f)), "<4>... 4 similar messages suppressed in the last 1 s, "
					  "the last: node 4: no memory");
	/* Rate limiting off: no timer left to fire, the loop has nothing. */
	np_logger_set_ratelimit(log, 0, 0);
	CHECK_INT(event_base_loop(base, EVLOOP_NONBLOCK), 1);
	np_logger_free(log);
	event_base_free(base);
	fclose(f);
}

static void test_ratelimit_off(void)
{
	struct fake_clock clock = {0};
	struct np_logger *log;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	np_logger_set_ratelimit(log, 0, 0);
	for (int i = 0; i < 100; i++)
		np_logger_log(log, LOG_INFO, "line %d", i);
	CHECK_INT(count_lines(contents(f)), 100);
	np_logger_free(log);
	fclose(f);
}

/* Library messages reach the logger through the context's log function. */
static void test_library_callback(void)
{
	struct fake_clock clock = {0};
	struct np_logger *log;
	struct np_ctx *ctx;
	FILE *f;

	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	CHECK_INT(np_ctx_new(fixture("host"), &ctx), 0);
	np_ctx_set_log_fn(ctx, np_daemon_log_fn, log);
	np_log(ctx, LOG_ERR, "%s:%d: bad value \"%s\"", "numaplaced.conf", 3, "x");
	for (int i = 0; i < 50; i++)
		np_log(ctx, LOG_WARNING, "task %d vanished", i);
	np_logger_flush(log, true);
	CHECK_INT(count_lines(contents(f)), 1 + NP_LOG_DEFAULT_BURST + 1);
	CHECK_STR(last_line(contents(f)), "<4>... 40 similar messages suppressed in the last 1 s, "
					  "the last: task 49 vanished");
	np_ctx_free(ctx);

	/* libnuma's own warnings, routed while a logger is set. */
	np_logger_route_libraries(log);
	numa_warn(0, "cannot parse %s\n", "distance");
	CHECK_STR(last_line(contents(f)), "<4>libnuma: cannot parse distance");
	np_logger_free(log);
	fclose(f);
}

/* libevent's own warnings come through the logger, rate-limited: a loop that
 * repeats one (an accept(2) that keeps failing) writes a few lines and a
 * summary, not one line per turn. */
static void test_libevent_routed(void)
{
	struct fake_clock clock = {0};
	struct event_base *base = event_base_new();
	struct np_logger *log;
	int fds[2];
	FILE *f;

	CHECK(base != NULL);
	CHECK_INT(pipe(fds), 0);
	close(fds[1]);
	close(fds[0]);
	log = new_logger(&f, NP_LOG_FORMAT_JOURNAL, &clock);
	np_logger_route_libraries(log);
	/* epoll_ctl fails on a closed fd, and libevent warns each time. */
	for (int i = 0; i < 100; i++) {
		struct event *ev = event_new(base, fds[0], EV_READ, NULL, NULL);

		CHECK(ev != NULL);
		CHECK(event_add(ev, NULL) < 0);
		event_free(ev);
	}
	np_logger_flush(log, true);
	CHECK_INT(count_lines(contents(f)), NP_LOG_DEFAULT_BURST + 1);
	CHECK(strncmp(contents(f), "<4>libevent: Epoll ADD", 22) == 0);
	CHECK(strstr(last_line(contents(f)), "... 90 similar messages suppressed") != NULL);
	np_logger_route_libraries(NULL);
	np_logger_free(log);
	fclose(f);
	event_base_free(base);
}

static void test_journal_detection(void)
{
	struct stat st;
	char env[64];
	struct np_logger *log;
	FILE *f = tmpfile();

	CHECK(f != NULL);
	CHECK_INT(fstat(fileno(f), &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	CHECK(np_log_fd_is_journal(fileno(f), env));
	CHECK(!np_log_fd_is_journal(fileno(f), NULL));
	CHECK(!np_log_fd_is_journal(fileno(f), ""));
	CHECK(!np_log_fd_is_journal(fileno(f), "1:2"));
	CHECK(!np_log_fd_is_journal(-1, env));
	snprintf(env, sizeof(env), "%llu:%llux", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	CHECK(!np_log_fd_is_journal(fileno(f), env));

	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	CHECK_INT(np_logger_new(f, NP_LOG_FORMAT_AUTO, &log), 0);
	CHECK_INT(np_logger_format(log), NP_LOG_FORMAT_JOURNAL);
	np_logger_free(log);
	/* stdout is another file: the foreground format. */
	CHECK_INT(np_logger_new(stdout, NP_LOG_FORMAT_AUTO, &log), 0);
	CHECK_INT(np_logger_format(log), NP_LOG_FORMAT_PLAIN);
	np_logger_free(log);
	unsetenv("JOURNAL_STREAM");
	fclose(f);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	test_format_count();
	test_plain_and_journal_lines();
	test_flood_is_summarised();
	test_summary_on_next_window();
	test_many_keys_bounded();
	test_flush_timer();
	test_ratelimit_off();
	test_library_callback();
	test_libevent_routed();
	test_journal_detection();
	return check_done();
}
