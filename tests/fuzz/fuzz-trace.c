/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_trace_parse(): any bytes as a --record trace. A
 * refused trace gives -EINVAL and one message "fuzz.trace:LINE: ..." with a
 * line the input has. An accepted one is played scan by scan, and what the
 * player lists is written again with np_trace_writer (as --record would
 * have written it); that text parses, and playing it lists the same tasks
 * with the same numbers at every scan. Any disagreement aborts.
 */
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.trace"

static void check_error(const char *msg, const char *buf, size_t size)
{
	unsigned long lines = 1, line;
	char *end;

	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	if (!msg || strncmp(msg, NAME ":", sizeof(NAME)) != 0)
		abort();
	line = strtoul(msg + sizeof(NAME), &end, 10);
	if (end == msg + sizeof(NAME) || strncmp(end, ": ", 2) != 0 || end[2] == '\0' ||
	    line < 1 || line > lines)
		abort();
}

/* True when some scan has both an x and an n record for one pid: the task
 * replaced within one scan. The writer, which knows tasks by pid and start
 * time, writes it as one task if the start time is the same, keeping the
 * first comm and kernel thread flag, so those two are compared only for
 * traces without such a pair. */
static bool has_replaced_pid(const struct np_trace *t)
{
	for (size_t s = 0; s < t->nr_scans; s++) {
		size_t n = t->scans[s].nr_events;
		const struct np_trace_event *ev = n ? &t->events[t->scans[s].first_event] : NULL;

		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n && ev[i].type == NP_TRACE_EXIT; j++)
				if (ev[j].type == NP_TRACE_NEW && ev[j].pid == ev[i].pid)
					return true;
	}
	return false;
}

static bool same_list(const struct np_task_list *a, const struct np_task_list *b, bool identity)
{
	if (a->nr != b->nr || a->uptime_ms != b->uptime_ms || a->ticks_per_s != b->ticks_per_s)
		return false;
	for (unsigned i = 0; i < a->nr; i++) {
		const struct np_task *x = &a->tasks[i], *y = &b->tasks[i];

		if (x->pid != y->pid || x->start_ticks != y->start_ticks ||
		    x->rss_bytes != y->rss_bytes || x->cpu_ticks != y->cpu_ticks ||
		    x->nr_threads != y->nr_threads || x->age_ms != y->age_ms ||
		    (identity && (x->kthread != y->kthread || strcmp(x->comm, y->comm) != 0)))
			return false;
	}
	return true;
}

/* Write what playing @t lists into a malloc'd text; NULL on ENOMEM. */
static char *rewrite(const struct np_trace *t, size_t *len)
{
	struct np_trace_player *pl;
	struct np_trace_writer *w;
	const struct np_task_list *list;
	char *text = NULL;
	FILE *out = open_memstream(&text, len);
	int step;

	if (!out)
		return NULL;
	if (np_trace_player_new(t, &pl) != 0) {
		fclose(out);
		free(text);
		return NULL;
	}
	if (np_trace_writer_new(out, "rewritten", &w) != 0) {
		np_trace_player_free(pl);
		fclose(out);
		free(text);
		return NULL;
	}
	while ((step = np_trace_player_step(pl, &list)) == 1)
		if (np_trace_writer_scan(w, list) != 0)
			abort(); /* the writer refuses what a parsed trace lists */
	if (step < 0 && step != -ENOMEM)
		abort();
	if (np_trace_writer_free(w) != 0)
		abort();
	np_trace_player_free(pl);
	if (fclose(out) != 0 || step < 0) {
		free(text);
		return NULL;
	}
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_trace *t = NULL, *t2 = NULL;
	struct np_trace_player *pa = NULL, *pb = NULL;
	const struct np_task_list *la, *lb;
	char *msg = NULL, *text;
	size_t len;
	bool comm;
	int err, sa, sb;

	err = np_trace_parse(NAME, buf, size, &t, &msg);
	if (err == -ENOMEM) {
		free(msg);
		return 0;
	}
	if (err) {
		if (err != -EINVAL)
			abort();
		check_error(msg, buf, size);
		free(msg);
		return 0;
	}
	if (msg || (t->nr_scans && !t->hz))
		abort();
	for (size_t s = 1; s < t->nr_scans; s++)
		if (t->scans[s].uptime_ms <= t->scans[s - 1].uptime_ms ||
		    t->scans[s].first_event != t->scans[s - 1].first_event + t->scans[s - 1].nr_events)
			abort();
	if (t->nr_scans == 0)
		goto out; /* nothing for the writer to write */

	text = rewrite(t, &len);
	if (!text)
		goto out;
	err = np_trace_parse("rewritten", text, len, &t2, &msg);
	if (err == -ENOMEM)
		goto out_text;
	if (err || t2->hz != t->hz || t2->nr_scans != t->nr_scans)
		abort();
	comm = !has_replaced_pid(t);
	if (np_trace_player_new(t, &pa) != 0 || np_trace_player_new(t2, &pb) != 0)
		goto out_text;
	do {
		sa = np_trace_player_step(pa, &la);
		sb = np_trace_player_step(pb, &lb);
		if (sa == -ENOMEM || sb == -ENOMEM)
			break;
		if (sa != sb || sa < 0 || (sa == 1 && !same_list(la, lb, comm)))
			abort();
	} while (sa == 1);
out_text:
	np_trace_player_free(pa);
	np_trace_player_free(pb);
	np_trace_free(t2);
	free(msg);
	free(text);
out:
	np_trace_free(t);
	return 0;
}
