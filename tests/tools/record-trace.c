/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Record a trace of the live machine while a command runs, at a finer tick
 * than the daemon's, for tests/traces/. The product path is
 * `numaplaced --record FILE`; this tool differs only in running a workload
 * and stopping when it ends.
 *
 *   record-trace [-i MS] [-c COMMENT] FILE -- COMMAND [ARG...]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "task.h"
#include "trace.h"

static void usage(void)
{
	fprintf(stderr, "usage: record-trace [-i MS] [-c COMMENT] FILE -- COMMAND [ARG...]\n");
	exit(2);
}

__attribute__((format(printf, 3, 0)))
static void log_stderr(void *data, int priority, const char *fmt, va_list args)
{
	fputs("record-trace: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

static void add_ms(struct timespec *ts, long ms)
{
	ts->tv_nsec += (ms % 1000) * 1000000;
	ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

int main(int argc, char **argv)
{
	struct np_task_list list = {0};
	struct np_task_source *src;
	struct np_trace_writer *w;
	struct np_ctx *ctx;
	struct timespec next, now;
	const char *comment = NULL;
	long interval_ms = 50;
	unsigned scans = 0;
	int opt, err, status = 0;
	bool running = true;
	pid_t child;
	FILE *out;

	while ((opt = getopt(argc, argv, "+i:c:")) != -1) {
		switch (opt) {
		case 'i':
			interval_ms = strtol(optarg, NULL, 10);
			if (interval_ms <= 0)
				usage();
			break;
		case 'c':
			comment = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 2)
		usage();
	out = fopen(argv[optind], "w");
	if (!out) {
		fprintf(stderr, "record-trace: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if ((err = np_ctx_new("/", &ctx)))
		return 1;
	np_ctx_set_log_fn(ctx, log_stderr, NULL);
	if ((err = np_task_source_new(ctx, &src)) ||
	    (err = np_trace_writer_new(out, comment, &w))) {
		fprintf(stderr, "record-trace: %s\n", strerror(-err));
		return 1;
	}

	child = fork();
	if (child < 0) {
		perror("record-trace: fork");
		return 1;
	}
	if (child == 0) {
		execvp(argv[optind + 1], &argv[optind + 1]);
		fprintf(stderr, "record-trace: %s: %s\n", argv[optind + 1], strerror(errno));
		_exit(127);
	}

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (running) {
		/* One more scan after the command ends, to record its exit. */
		if (waitpid(child, &status, WNOHANG) == child)
			running = false;
		err = np_task_source_scan(src, &list);
		if (err) {
			fprintf(stderr, "record-trace: task scan: %s\n", strerror(-err));
			kill(child, SIGTERM);
			return 1;
		}
		err = np_trace_writer_scan(w, &list);
		if (err) {
			fprintf(stderr, "record-trace: %s: %s (at uptime %" PRIu64 " ms)\n",
				argv[optind], strerror(-err), list.uptime_ms);

			kill(child, SIGTERM);
			return 1;
		}
		scans++;
		add_ms(&next, interval_ms);
		/* A scan that overran its interval (a loaded machine): start
		 * the next interval now rather than scanning back to back. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec ||
		    (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec)) {
			next = now;
			add_ms(&next, interval_ms);
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	np_task_list_clear(&list);
	err = np_trace_writer_free(w);
	if (fclose(out) || err) {
		fprintf(stderr, "record-trace: %s: write failed\n", argv[optind]);
		return 1;
	}
	np_task_source_free(src);
	np_ctx_free(ctx);
	fprintf(stderr, "record-trace: %u scans\n", scans);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
