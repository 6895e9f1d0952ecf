/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "trace.h"

#include "bitmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "filter.h"
#include "state.h"

#define MAX_TRACE_BYTES (256u << 20)

uint64_t np_trace_numa_maps_estimate(uint64_t rss_bytes)
{
	return NP_TRACE_NUMA_MAPS_BASE_BYTES +
	       (rss_bytes >> 20) * (uint64_t)NP_TRACE_NUMA_MAPS_BYTES_PER_MIB;
}

/* A set of pids kept sorted: which tasks a trace lists at a point. */
struct pid_set {
	int *pids;
	size_t nr, cap;
};

/* The index of @pid, or where it would go; *found tells which. */
static size_t pid_set_find(const struct pid_set *set, int pid, bool *found)
{
	size_t lo = 0, hi = set->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->pids[mid] == pid) {
			*found = true;
			return mid;
		}
		if (set->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static int pid_set_insert(struct pid_set *set, size_t at, int pid)
{
	if (set->nr == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 256;
		int *pids = realloc(set->pids, cap * sizeof(*pids));

		if (!pids)
			return -ENOMEM;
		set->pids = pids;
		set->cap = cap;
	}
	memmove(&set->pids[at + 1], &set->pids[at], (set->nr - at) * sizeof(*set->pids));
	set->pids[at] = pid;
	set->nr++;
	return 0;
}

static void pid_set_remove(struct pid_set *set, size_t at)
{
	memmove(&set->pids[at], &set->pids[at + 1], (set->nr - at - 1) * sizeof(*set->pids));
	set->nr--;
}

/* ---- parsing ---- */

struct parser {
	const char *name;
	unsigned line;
	char **err;
	const char *p, *end; /* the rest of the current line */
	struct np_trace *trace;
	size_t cap_scans, cap_events;
	struct pid_set live;
};

static int __attribute__((format(printf, 2, 3)))
parse_error(struct parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (asprintf(ps->err, "%s:%u: %s", ps->name, ps->line, msg) < 0) {
		*ps->err = NULL;
		return -ENOMEM;
	}
	return -EINVAL;
}

/* The next space-separated field, for messages and numbers. */
static size_t field_len(const struct parser *ps)
{
	const char *sp = memchr(ps->p, ' ', (size_t)(ps->end - ps->p));

	return (size_t)((sp ? sp : ps->end) - ps->p);
}

/* An unsigned decimal field no larger than @max, followed by a space or the
 * end of the line. */
static int parse_number(struct parser *ps, const char *what, uint64_t max, uint64_t *out)
{
	size_t len = field_len(ps);
	uint64_t v = 0;

	if (ps->p >= ps->end)
		return parse_error(ps, "missing %s", what);
	if (len == 0 || len > 20)
		return parse_error(ps, "bad %s \"%.*s\"", what, (int)len, ps->p);
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)ps->p[i] - '0';

		if (d > 9)
			return parse_error(ps, "bad %s \"%.*s\"", what, (int)len, ps->p);
		if (v > (UINT64_MAX - d) / 10)
			return parse_error(ps, "%s \"%.*s\" out of range", what, (int)len, ps->p);
		v = v * 10 + d;
	}
	if (v > max)
		return parse_error(ps, "%s %" PRIu64 " out of range (at most %" PRIu64 ")", what, v,
				   max);
	ps->p += len;
	if (ps->p < ps->end)
		ps->p++; /* the space */
	*out = v;
	return 0;
}

static int expect_end(struct parser *ps)
{
	if (ps->p < ps->end)
		return parse_error(ps, "unexpected \"%.*s\" at the end of the line",
				   (int)(ps->end - ps->p), ps->p);
	return 0;
}

/* The rest of the line, unescaped. */
static int parse_comm(struct parser *ps, char *comm)
{
	size_t n = 0;

	if (ps->p >= ps->end)
		return parse_error(ps, "missing comm");
	for (const char *c = ps->p; c < ps->end; c++) {
		int ch = (unsigned char)*c;

		if (ch == '\\') {
			int hi = ps->end - c >= 4 && c[1] == 'x' ? np_hex_value(c[2]) : -1;
			int lo = hi >= 0 ? np_hex_value(c[3]) : -1;

			if (lo < 0)
				return parse_error(ps, "bad escape in comm \"%.*s\"",
						   (int)(ps->end - ps->p), ps->p);
			ch = hi * 16 + lo;
			/* A comm holds no NUL (the kernel's ends at the first):
			 * one here would cut it short without a word. */
			if (ch == 0)
				return parse_error(ps, "NUL byte (\\x00) in comm \"%.*s\"",
						   (int)(ps->end - ps->p), ps->p);
			c += 3;
		} else if (ch < '!' || ch > '~') {
			return parse_error(ps, "unescaped byte 0x%02x in comm", ch);
		}
		if (n + 1 >= NP_COMM_MAX)
			return parse_error(ps, "comm longer than %d bytes", NP_COMM_MAX - 1);
		comm[n++] = (char)ch;
	}
	comm[n] = '\0';
	ps->p = ps->end;
	return 0;
}

static struct np_trace_event *new_event(struct parser *ps)
{
	struct np_trace *t = ps->trace;

	if (t->nr_events == ps->cap_events) {
		size_t cap = ps->cap_events ? ps->cap_events * 2 : 1024;
		struct np_trace_event *ev = realloc(t->events, cap * sizeof(*ev));

		if (!ev)
			return NULL;
		t->events = ev;
		ps->cap_events = cap;
	}
	t->scans[t->nr_scans - 1].nr_events++;
	return memset(&t->events[t->nr_events++], 0, sizeof(*t->events));
}

static int parse_scan(struct parser *ps)
{
	struct np_trace *t = ps->trace;
	uint64_t uptime;
	int err = parse_number(ps, "uptime", UINT64_MAX, &uptime);

	if (err || (err = expect_end(ps)))
		return err;
	if (!t->hz)
		return parse_error(ps, "scan before the hz line");
	if (t->nr_scans && uptime <= t->scans[t->nr_scans - 1].uptime_ms)
		return parse_error(ps, "uptime %" PRIu64 " not after the previous scan's %" PRIu64,
				   uptime, t->scans[t->nr_scans - 1].uptime_ms);
	if (t->nr_scans == ps->cap_scans) {
		size_t cap = ps->cap_scans ? ps->cap_scans * 2 : 1024;
		struct np_trace_scan *scans = realloc(t->scans, cap * sizeof(*scans));

		if (!scans)
			return -ENOMEM;
		t->scans = scans;
		ps->cap_scans = cap;
	}
	t->scans[t->nr_scans++] = (struct np_trace_scan){uptime, t->nr_events, 0};
	return 0;
}

static int parse_numbers(struct parser *ps, struct np_trace_event *ev)
{
	uint64_t kib, cpu, threads;
	int err;

	if ((err = parse_number(ps, "rss_kib", UINT64_MAX / 1024, &kib)) ||
	    (err = parse_number(ps, "cpu_ticks", UINT64_MAX, &cpu)) ||
	    (err = parse_number(ps, "threads", UINT_MAX, &threads)))
		return err;
	ev->rss_bytes = kib * 1024;
	ev->cpu_ticks = cpu;
	ev->nr_threads = (unsigned)threads;
	return 0;
}

static int parse_task(struct parser *ps, char type)
{
	struct np_trace *t = ps->trace;
	struct np_trace_event ev = {.type = (enum np_trace_record)type}, *slot;
	uint64_t pid, kthread;
	size_t at;
	bool found;
	int err;

	if (!t->nr_scans)
		return parse_error(ps, "'%c' record before the first scan (t line)", type);
	if ((err = parse_number(ps, "pid", INT_MAX, &pid)))
		return err;
	if (pid == 0)
		return parse_error(ps, "pid 0");
	ev.pid = (int)pid;
	at = pid_set_find(&ps->live, ev.pid, &found);
	if (type == NP_TRACE_NEW) {
		if (found)
			return parse_error(ps, "new task %d, but pid %d is listed already", ev.pid,
					   ev.pid);
		if ((err = parse_number(ps, "start_ticks", UINT64_MAX / 1000, &ev.start_ticks)) ||
		    (err = parse_number(ps, "kernel thread flag", 1, &kthread)) ||
		    (err = parse_numbers(ps, &ev)) || (err = parse_comm(ps, ev.comm)))
			return err;
		ev.kthread = kthread;
		err = pid_set_insert(&ps->live, at, ev.pid);
	} else {
		if (!found)
			return parse_error(ps, "'%c' record for pid %d, which is not listed", type,
					   ev.pid);
		if (type == NP_TRACE_UPDATE)
			err = parse_numbers(ps, &ev);
		if (err || (err = expect_end(ps)))
			return err;
		if (type == NP_TRACE_EXIT)
			pid_set_remove(&ps->live, at);
	}
	if (err)
		return err;
	slot = new_event(ps);
	if (!slot)
		return -ENOMEM;
	*slot = ev;
	return 0;
}

static int parse_line(struct parser *ps)
{
	size_t len = (size_t)(ps->end - ps->p);
	char type;

	if (ps->line == 1) {
		size_t magic = strlen(NP_TRACE_MAGIC);
		uint64_t version;
		int err;

		if (len < magic + 1 || memcmp(ps->p, NP_TRACE_MAGIC " ", magic + 1) != 0)
			return parse_error(ps, "not a numaplaced trace (no \"%s %d\" line)",
					   NP_TRACE_MAGIC, NP_TRACE_VERSION);
		ps->p += magic + 1;
		err = parse_number(ps, "version", UINT32_MAX, &version);
		if (err || (err = expect_end(ps)))
			return err;
		if (version != NP_TRACE_VERSION)
			return parse_error(ps, "trace version %" PRIu64 ", this build reads %d",
					   version, NP_TRACE_VERSION);
		return 0;
	}
	if (len == 0 || ps->p[0] == '#')
		return 0;
	if (len >= 3 && memcmp(ps->p, "hz ", 3) == 0) {
		uint64_t hz;
		int err;

		ps->p += 3;
		err = parse_number(ps, "hz", 1000000, &hz);
		if (err || (err = expect_end(ps)))
			return err;
		if (hz == 0)
			return parse_error(ps, "hz 0");
		if (ps->trace->hz)
			return parse_error(ps, "second hz line");
		ps->trace->hz = (unsigned)hz;
		return 0;
	}
	type = ps->p[0];
	/* memchr: strchr would find a NUL byte in the string's own end. */
	if (len < 2 || ps->p[1] != ' ' || !memchr("tnux", type, 4))
		return parse_error(ps, "unknown record \"%.*s\"", (int)field_len(ps), ps->p);
	ps->p += 2;
	return type == 't' ? parse_scan(ps) : parse_task(ps, type);
}

int np_trace_parse(const char *name, const char *buf, size_t len, struct np_trace **out, char **err)
{
	struct parser ps = {.name = name, .err = err};
	const char *p = buf, *end = buf + len;
	int ret = 0;

	*err = NULL;
	ps.trace = calloc(1, sizeof(*ps.trace));
	if (!ps.trace)
		return -ENOMEM;
	while (p < end && !ret) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		ps.line++;
		ps.p = p;
		ps.end = nl ? nl : end;
		ret = parse_line(&ps);
		p = nl ? nl + 1 : end;
	}
	if (!ret && ps.line == 0) {
		ps.line = 1;
		ret = parse_error(&ps, "empty file");
	}
	free(ps.live.pids);
	if (ret) {
		np_trace_free(ps.trace);
		return ret;
	}
	*out = ps.trace;
	return 0;
}

int np_trace_load(const char *path, struct np_trace **out, char **err)
{
	char *buf;
	size_t len;
	int fd, ret;

	*err = NULL;
	/* A file the user named, relative to the working directory: not a
	 * /proc or /sys path, so not under the context's root. */
	fd = np_open_regular(path);
	ret = fd < 0 ? fd : np_read_fd(fd, MAX_TRACE_BYTES, &buf, &len);
	if (fd >= 0)
		close(fd);
	if (ret) {
		if (asprintf(err, "%s: %s", path, np_file_strerror(ret)) < 0)
			*err = NULL;
		return ret;
	}
	ret = np_trace_parse(path, buf, len, out, err);
	free(buf);
	return ret;
}

void np_trace_free(struct np_trace *trace)
{
	if (!trace)
		return;
	free(trace->scans);
	free(trace->events);
	free(trace);
}

/* ---- playing ---- */

struct np_trace_player {
	const struct np_trace *trace;
	size_t next_scan;
	size_t next_id;
	struct pid_set live;   /* pids of tasks[], same order */
	struct np_task *tasks; /* sorted by pid */
	size_t *ids;
	size_t cap;
	struct np_task_list list;
};

int np_trace_player_new(const struct np_trace *trace, struct np_trace_player **out)
{
	struct np_trace_player *player = calloc(1, sizeof(*player));

	if (!player)
		return -ENOMEM;
	player->trace = trace;
	*out = player;
	return 0;
}

void np_trace_player_free(struct np_trace_player *player)
{
	if (!player)
		return;
	free(player->live.pids);
	free(player->tasks);
	free(player->ids);
	free(player);
}

static void set_numbers(struct np_task *task, const struct np_trace_event *ev)
{
	task->rss_bytes = ev->rss_bytes;
	task->cpu_ticks = ev->cpu_ticks;
	task->nr_threads = ev->nr_threads;
}

static int player_apply(struct np_trace_player *pl, const struct np_trace_event *ev)
{
	bool found;
	size_t at = pid_set_find(&pl->live, ev->pid, &found);
	size_t tail = pl->live.nr - at;

	if (found == (ev->type == NP_TRACE_NEW))
		return -EINVAL; /* a trace the parser did not check */
	switch (ev->type) {
	case NP_TRACE_NEW:
		if (pl->live.nr == pl->cap) {
			size_t cap = pl->cap ? pl->cap * 2 : 256;
			struct np_task *tasks = realloc(pl->tasks, cap * sizeof(*tasks));
			size_t *ids;

			if (!tasks)
				return -ENOMEM;
			pl->tasks = tasks;
			ids = realloc(pl->ids, cap * sizeof(*ids));
			if (!ids)
				return -ENOMEM;
			pl->ids = ids;
			pl->cap = cap;
		}
		if (pid_set_insert(&pl->live, at, ev->pid))
			return -ENOMEM;
		memmove(&pl->tasks[at + 1], &pl->tasks[at], tail * sizeof(*pl->tasks));
		memmove(&pl->ids[at + 1], &pl->ids[at], tail * sizeof(*pl->ids));
		pl->tasks[at] = (struct np_task){
		    .pid = ev->pid,
		    .start_ticks = ev->start_ticks,
		    .state = 'R',
		    .kthread = ev->kthread,
		    .flags = ev->kthread ? NP_PF_KTHREAD : 0,
		    .last_cpu = -1,
		};
		memcpy(pl->tasks[at].comm, ev->comm, sizeof(ev->comm));
		set_numbers(&pl->tasks[at], ev);
		pl->ids[at] = pl->next_id++;
		break;
	case NP_TRACE_UPDATE:
		set_numbers(&pl->tasks[at], ev);
		break;
	case NP_TRACE_EXIT:
		pid_set_remove(&pl->live, at);
		memmove(&pl->tasks[at], &pl->tasks[at + 1], (tail - 1) * sizeof(*pl->tasks));
		memmove(&pl->ids[at], &pl->ids[at + 1], (tail - 1) * sizeof(*pl->ids));
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int np_trace_player_step(struct np_trace_player *pl, const struct np_task_list **list)
{
	const struct np_trace *t = pl->trace;
	const struct np_trace_scan *scan;

	if (pl->next_scan >= t->nr_scans)
		return 0;
	scan = &t->scans[pl->next_scan++];
	for (size_t i = 0; i < scan->nr_events; i++) {
		int err = player_apply(pl, &t->events[scan->first_event + i]);

		if (err)
			return err;
	}
	for (size_t i = 0; i < pl->live.nr; i++) {
		uint64_t start_ms = pl->tasks[i].start_ticks * 1000 / t->hz;

		pl->tasks[i].age_ms = scan->uptime_ms > start_ms ? scan->uptime_ms - start_ms : 0;
	}
	pl->list = (struct np_task_list){
	    .tasks = pl->tasks,
	    .nr = (unsigned)pl->live.nr,
	    .cap = (unsigned)pl->cap,
	    .uptime_ms = scan->uptime_ms,
	    .ticks_per_s = t->hz,
	};
	*list = &pl->list;
	return 1;
}

uint64_t np_trace_player_next_uptime(const struct np_trace_player *pl)
{
	if (pl->next_scan >= pl->trace->nr_scans)
		return UINT64_MAX;
	return pl->trace->scans[pl->next_scan].uptime_ms;
}

size_t np_trace_player_task_id(const struct np_trace_player *pl, unsigned index)
{
	return pl->ids[index];
}

/* ---- writing ---- */

struct written_task {
	int pid;
	uint64_t start_ticks;
	uint64_t rss_kib;
	uint64_t cpu_ticks;
	unsigned nr_threads;
};

struct np_trace_writer {
	FILE *out;
	char *comment;
	bool started;
	unsigned hz;
	uint64_t last_uptime_ms;
	struct written_task *prev, *cur;
	size_t nr_prev, cap;
};

int np_trace_writer_new(FILE *out, const char *comment, struct np_trace_writer **writer)
{
	struct np_trace_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->out = out;
	if (comment && !(w->comment = strdup(comment))) {
		free(w);
		return -ENOMEM;
	}
	*writer = w;
	return 0;
}

static int compare_written(const void *a, const void *b)
{
	const struct written_task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void write_comm(FILE *out, const char *comm)
{
	for (const char *c = comm; *c; c++) {
		unsigned char ch = (unsigned char)*c;

		if (ch < '!' || ch > '~' || ch == '\\')
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
}

static const struct np_task *find_listed(const struct np_task_list *list, int pid,
					 uint64_t start_ticks)
{
	/* The lists are short and the writer runs at most every few tens of
	 * ms; a linear search per new task costs less than an index. */
	for (unsigned i = 0; i < list->nr; i++)
		if (list->tasks[i].pid == pid && list->tasks[i].start_ticks == start_ticks)
			return &list->tasks[i];
	return NULL;
}

int np_trace_writer_scan(struct np_trace_writer *w, const struct np_task_list *list)
{
	struct written_task *swap;
	size_t i, j;

	if (!list->ticks_per_s || (w->started && list->ticks_per_s != w->hz) ||
	    (w->started && list->uptime_ms < w->last_uptime_ms))
		return -EINVAL;
	/* /proc/uptime counts hundredths of a second: two scans can share
	 * one. Keep the first; the next one written differs from it. */
	if (w->started && list->uptime_ms == w->last_uptime_ms)
		return 0;
	if (list->nr > w->cap) {
		size_t cap = list->nr * 2;
		struct written_task *prev = realloc(w->prev, cap * sizeof(*prev));
		struct written_task *cur;

		if (!prev)
			return -ENOMEM;
		w->prev = prev;
		cur = realloc(w->cur, cap * sizeof(*cur));
		if (!cur)
			return -ENOMEM;
		w->cur = cur;
		w->cap = cap;
	}
	for (i = 0; i < list->nr; i++) {
		const struct np_task *t = &list->tasks[i];

		w->cur[i] = (struct written_task){t->pid, t->start_ticks, t->rss_bytes / 1024,
						  t->cpu_ticks, t->nr_threads};
	}
	/* A scan of no task leaves w->cur NULL, which qsort may not take even
	 * for no elements. */
	if (list->nr)
		qsort(w->cur, list->nr, sizeof(*w->cur), compare_written);
	for (i = 1; i < list->nr; i++)
		if (w->cur[i].pid == w->cur[i - 1].pid)
			return -EINVAL;

	if (!w->started) {
		fprintf(w->out, "%s %d\n", NP_TRACE_MAGIC, NP_TRACE_VERSION);
		if (w->comment)
			fprintf(w->out, "# %s\n", w->comment);
		fprintf(w->out, "hz %u\n", list->ticks_per_s);
		w->hz = list->ticks_per_s;
		w->started = true;
	}
	w->last_uptime_ms = list->uptime_ms;
	fprintf(w->out, "t %" PRIu64 "\n", list->uptime_ms);
	/* Exits first, so a pid reused within one scan interval is an x then
	 * an n. */
	for (i = 0, j = 0; i < w->nr_prev; i++) {
		while (j < list->nr && w->cur[j].pid < w->prev[i].pid)
			j++;
		if (j == list->nr || w->cur[j].pid != w->prev[i].pid ||
		    w->cur[j].start_ticks != w->prev[i].start_ticks)
			fprintf(w->out, "x %d\n", w->prev[i].pid);
	}
	for (i = 0, j = 0; j < list->nr; j++) {
		const struct written_task *c = &w->cur[j];
		const struct written_task *p;
		const struct np_task *t;

		while (i < w->nr_prev && w->prev[i].pid < c->pid)
			i++;
		p = i < w->nr_prev && w->prev[i].pid == c->pid ? &w->prev[i] : NULL;
		if (p && p->start_ticks == c->start_ticks) {
			if (p->rss_kib != c->rss_kib || p->cpu_ticks != c->cpu_ticks ||
			    p->nr_threads != c->nr_threads)
				fprintf(w->out, "u %d %" PRIu64 " %" PRIu64 " %u\n", c->pid,
					c->rss_kib, c->cpu_ticks, c->nr_threads);
			continue;
		}
		t = find_listed(list, c->pid, c->start_ticks);
		fprintf(w->out, "n %d %" PRIu64 " %d %" PRIu64 " %" PRIu64 " %u ", c->pid,
			c->start_ticks, t->kthread || (t->flags & NP_PF_KTHREAD) ? 1 : 0,
			c->rss_kib, c->cpu_ticks, c->nr_threads);
		write_comm(w->out, t->comm[0] ? t->comm : "?");
		fputc('\n', w->out);
	}
	/* The current scan becomes the previous one. */
	swap = w->prev;
	w->prev = w->cur;
	w->cur = swap;
	w->nr_prev = list->nr;
	return ferror(w->out) ? -EIO : 0;
}

int np_trace_writer_free(struct np_trace_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = fflush(w->out) || ferror(w->out) ? -EIO : 0;
	free(w->comment);
	free(w->prev);
	free(w->cur);
	free(w);
	return err;
}

/* ---- replay ---- */

struct replayed_task {
	uint64_t last_age_ms;
	uint32_t reads;
	bool listed_at_end;
};

int np_replay_run(const struct np_trace *trace, const struct np_config *cfg,
		  uint64_t short_lived_ms, struct np_replay_result *result)
{
	struct np_trace_player *player = NULL;
	struct replayed_task *tasks = NULL;
	const struct np_task_list *list = NULL;
	struct np_sched_plan plan = {0};
	struct np_state_table states = {0};
	struct np_filter *filter = NULL;
	struct np_clock *clock = NULL;
	struct np_sched *sched = NULL;
	const struct np_sched_counters *c;
	size_t nr_tasks = 0;
	uint64_t now, last;
	int err;

	*result = (struct np_replay_result){.short_lived_ms = short_lived_ms};
	if (cfg->tick_ms == 0)
		return -EINVAL;
	/* Traces hold no cgroups: the rules could only be ignored. */
	if (cfg->include_cgroup.n || cfg->exclude_cgroup.n)
		return -EOPNOTSUPP;
	if (trace->nr_scans == 0)
		return 0;
	for (size_t i = 0; i < trace->nr_events; i++)
		nr_tasks += trace->events[i].type == NP_TRACE_NEW;
	now = trace->scans[0].uptime_ms;
	last = trace->scans[trace->nr_scans - 1].uptime_ms;
	if ((last - now) / cfg->tick_ms >= NP_REPLAY_MAX_TICKS)
		return -E2BIG;
	tasks = calloc(nr_tasks ? nr_tasks : 1, sizeof(*tasks));
	if (!tasks)
		return -ENOMEM;
	if ((err = np_trace_player_new(trace, &player)) ||
	    (err = np_clock_new_virtual(now, &clock)) || (err = np_sched_new(cfg, clock, &sched)) ||
	    (err = np_filter_new(cfg, &filter)))
		goto out;
	np_sched_set_filter(sched, filter, NULL, NULL);

	for (;;) {
		while (np_trace_player_next_uptime(player) <= now) {
			err = np_trace_player_step(player, &list);
			if (err < 0)
				goto out;
			/* A scan at uptime UINT64_MAX reads like "none left". */
			if (err == 0)
				break;
			for (unsigned i = 0; i < list->nr; i++)
				tasks[np_trace_player_task_id(player, i)].last_age_ms =
				    list->tasks[i].age_ms;
			result->trace_scans++;
		}
		err = np_state_table_sync(&states, list, sched, now);
		if (!err)
			err = np_sched_plan(sched, list, states.sched, false, &plan);
		if (err)
			goto out;
		result->ticks++;
		for (unsigned i = 0; i < plan.nr_picks; i++) {
			const struct np_task *task = &list->tasks[plan.picks[i]];

			err = np_sched_done(sched, states.sched[plan.picks[i]], task,
					    np_trace_numa_maps_estimate(task->rss_bytes), NP_SCAN_STABLE);
			if (err)
				goto out;
			tasks[np_trace_player_task_id(player, plan.picks[i])].reads++;
		}
		if (now >= last)
			break;
		now = now + cfg->tick_ms > last ? last : now + cfg->tick_ms;
		np_clock_set(clock, now);
	}

	for (unsigned i = 0; i < list->nr; i++)
		tasks[np_trace_player_task_id(player, i)].listed_at_end = true;
	for (size_t id = 0; id < nr_tasks; id++) {
		const struct replayed_task *t = &tasks[id];

		result->tasks_read += t->reads > 0;
		if (t->listed_at_end || t->last_age_ms >= short_lived_ms)
			continue;
		result->short_lived++;
		result->short_lived_read += t->reads > 0;
		result->short_lived_reads += t->reads;
	}
	c = np_sched_counters(sched);
	result->duration_ms = last - trace->scans[0].uptime_ms;
	result->tasks = nr_tasks;
	result->numa_maps_reads = c->numa_maps_reads;
	result->bytes_parsed = c->bytes_parsed;
	memcpy(result->verdicts, c->verdicts, sizeof(result->verdicts));
	err = 0;
out:
	np_sched_plan_free(&plan);
	np_state_table_clear(&states);
	np_sched_free(sched);
	np_filter_free(filter);
	np_clock_free(clock);
	np_trace_player_free(player);
	free(tasks);
	return err;
}

int np_replay_write(const struct np_replay_result *r, FILE *out)
{
	fprintf(out,
		"duration_ms %" PRIu64 "\n"
		"trace_scans %" PRIu64 "\n"
		"ticks %" PRIu64 "\n"
		"tasks %" PRIu64 "\n"
		"tasks_read %" PRIu64 "\n"
		"numa_maps_reads %" PRIu64 "\n"
		"bytes_parsed %" PRIu64 "\n",
		r->duration_ms, r->trace_scans, r->ticks, r->tasks, r->tasks_read,
		r->numa_maps_reads, r->bytes_parsed);
	fprintf(out,
		"short_lived_ms %" PRIu64 "\n"
		"short_lived_tasks %" PRIu64 "\n"
		"short_lived_tasks_read %" PRIu64 "\n"
		"short_lived_reads %" PRIu64 "\n",
		r->short_lived_ms, r->short_lived, r->short_lived_read, r->short_lived_reads);
	for (unsigned i = 0; i < NP_REASON_SCHED_COUNT; i++)
		fprintf(out, "verdict.%s %" PRIu64 "\n", np_reason_name(i), r->verdicts[i]);
	fprintf(out,
		"decisions %" PRIu64 "\n"
		"migrate_mib %" PRIu64 "\n"
		"# bytes_parsed is estimated from RSS; the trace holds no per-node memory, so\n"
		"# replay decides no placements: decisions and migrate_mib are 0.\n",
		r->decisions, r->migrate_bytes >> 20);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
