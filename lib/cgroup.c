/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

void np_numa_stat_clear(struct np_numa_stat *st)
{
	free(st->anon_bytes);
	free(st->file_bytes);
	st->anon_bytes = st->file_bytes = NULL;
	st->nr_node_slots = 0;
}

/* Make room for node ids up to @node in both arrays (zeroed). */
static int grow_slots(uint64_t **anon, uint64_t **file, unsigned *nr, unsigned node)
{
	unsigned want = node + 1;
	uint64_t *a, *f;

	if (want <= *nr)
		return 0;
	a = realloc(*anon, want * sizeof(*a));
	if (!a)
		return -ENOMEM;
	*anon = a;
	f = realloc(*file, want * sizeof(*f));
	if (!f)
		return -ENOMEM;
	*file = f;
	memset(a + *nr, 0, (want - *nr) * sizeof(*a));
	memset(f + *nr, 0, (want - *nr) * sizeof(*f));
	*nr = want;
	return 0;
}

/* The tokens of one anon or file line after its key: " N0=123 N1=0". */
static int parse_nodes(const char *p, const char *end, struct np_numa_stat *out, bool anon)
{
	struct np_nodeset seen;

	np_nodeset_zero(&seen);
	for (const char *tok; (tok = np_next_field(&p, end));) {
		const char *eq;
		uint64_t node, bytes;
		int err;

		eq = memchr(tok, '=', (size_t)(p - tok));
		if (tok[0] != 'N' || !eq || !np_parse_u64(tok + 1, eq, &node) ||
		    node >= NP_MAX_NODES || !np_parse_u64(eq + 1, p, &bytes) ||
		    np_nodeset_test(&seen, (unsigned)node))
			return -EINVAL;
		np_nodeset_set(&seen, (unsigned)node);
		err = grow_slots(&out->anon_bytes, &out->file_bytes, &out->nr_node_slots,
				 (unsigned)node);
		if (err)
			return err;
		(anon ? out->anon_bytes : out->file_bytes)[node] = bytes;
	}
	return 0;
}

int np_numa_stat_parse(const char *buf, size_t len, struct np_numa_stat *out)
{
	const char *p = buf, *end = buf + len;
	bool have_anon = false, have_file = false;
	unsigned line = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end;
		bool anon = (size_t)(stop - p) >= 5 && memcmp(p, "anon ", 5) == 0;
		bool file = (size_t)(stop - p) >= 5 && memcmp(p, "file ", 5) == 0;
		int err = 0;

		line++;
		if ((anon && have_anon) || (file && have_file))
			err = -EINVAL;
		else if (anon || file)
			err = parse_nodes(p + 5, stop, out, anon);
		if (err) {
			np_numa_stat_clear(out);
			out->bad_line = err == -EINVAL ? line : 0;
			return err;
		}
		have_anon |= anon;
		have_file |= file;
		p = eol ? eol + 1 : end;
	}
	return 0;
}

const char *np_cgroup_source_name(enum np_cgroup_source source)
{
	return source == NP_CGROUP_NUMA_STAT ? "memory.numa_stat" : "numa_maps";
}

void np_cgroup_usage_free(struct np_cgroup_usage *rows, size_t nr)
{
	for (size_t i = 0; rows && i < nr; i++) {
		free(rows[i].path);
		free(rows[i].pids);
		free(rows[i].anon_bytes);
		free(rows[i].file_bytes);
	}
	free(rows);
}

/* Order of cgroup paths, tasks in none last. */
static int compare_paths(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

static int compare_tasks(const void *x, const void *y)
{
	const struct np_snap_task *a = *(const struct np_snap_task *const *)x;
	const struct np_snap_task *b = *(const struct np_snap_task *const *)y;
	int c = compare_paths(a->task.cgroup, b->task.cgroup);

	return c ? c : (a->task.pid > b->task.pid) - (a->task.pid < b->task.pid);
}

/* The cgroup's own memory.numa_stat, when it has one; the root's would be
 * the machine's. Returns 0 when @row took it, 1 when there is none, or
 * -ENOMEM. */
static int numa_stat_read(struct np_ctx *ctx, struct np_cgroup_usage *row)
{
	struct np_numa_stat st;
	char *path, *buf;
	size_t len;
	int err;

	if (!row->path || strcmp(row->path, "/") == 0)
		return 1;
	path = malloc(strlen(row->path) + 64);
	if (!path)
		return -ENOMEM;
	sprintf(path, "sys/fs/cgroup%s/memory.numa_stat", row->path);
	err = np_ctx_read_file(ctx, path, 1u << 20, &buf, &len);
	if (err) {
		free(path);
		return err == -ENOMEM ? err : 1;
	}
	err = np_numa_stat_parse(buf, len, &st);
	free(buf);
	if (err == -EINVAL)
		np_log(ctx, LOG_WARNING, "%s/%s:%u: not memory.numa_stat's format: using numa_maps",
		       np_ctx_root(ctx), path, st.bad_line);
	free(path);
	if (err)
		return err == -ENOMEM ? err : 1;
	row->source = NP_CGROUP_NUMA_STAT;
	row->nr_node_slots = st.nr_node_slots;
	row->anon_bytes = st.anon_bytes;
	row->file_bytes = st.file_bytes;
	return 0;
}

/* Add one task's numa_maps to @row. */
static int add_numa_maps(struct np_cgroup_usage *row, const struct np_snap_task *st)
{
	const struct np_task_memory *mem = &st->mem;

	if (mem->nr_node_slots &&
	    grow_slots(&row->anon_bytes, &row->file_bytes, &row->nr_node_slots,
		       mem->nr_node_slots - 1))
		return -ENOMEM;
	for (unsigned n = 0; n < mem->nr_node_slots; n++) {
		uint64_t anon = mem->anon_bytes ? mem->anon_bytes[n] : 0;

		row->anon_bytes[n] += anon;
		row->file_bytes[n] += mem->node_bytes[n] - anon;
	}
	return 0;
}

int np_cgroup_usage_read(struct np_ctx *ctx, const struct np_snapshot *snap,
			 struct np_cgroup_usage **out, size_t *nr)
{
	const struct np_snap_task **order = malloc((snap->nr_tasks + 1) * sizeof(*order));
	struct np_cgroup_usage *rows = calloc(snap->nr_tasks + 1, sizeof(*rows));
	size_t n = 0;
	int err = 0;

	*out = NULL;
	*nr = 0;
	if (!order || !rows) {
		free(order);
		free(rows);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < snap->nr_tasks; i++)
		order[i] = &snap->tasks[i];
	qsort(order, snap->nr_tasks, sizeof(*order), compare_tasks);
	/* Sorted, each cgroup's tasks are one run. */
	for (unsigned i = 0, end; i < snap->nr_tasks && !err; i = end) {
		struct np_cgroup_usage *row = &rows[n++];
		const struct np_task *first = &order[i]->task;

		for (end = i + 1; end < snap->nr_tasks &&
				  compare_paths(first->cgroup, order[end]->task.cgroup) == 0;
		     end++)
			;
		row->source = NP_CGROUP_NUMA_MAPS;
		row->pids = malloc((end - i) * sizeof(*row->pids));
		row->path = first->cgroup ? strdup(first->cgroup) : NULL;
		if (!row->pids || (first->cgroup && !row->path)) {
			err = -ENOMEM;
			break;
		}
		row->cpuset_cpus = first->cpuset_cpus;
		row->cpuset_mems = first->cpuset_mems;
		err = numa_stat_read(ctx, row);
		if (err > 0)
			err = 0;
		for (unsigned j = i; j < end && !err; j++) {
			row->pids[row->nr_tasks++] = order[j]->task.pid;
			row->rss_bytes += order[j]->task.rss_bytes;
			if (row->source == NP_CGROUP_NUMA_MAPS)
				err = add_numa_maps(row, order[j]);
		}
	}
	free(order);
	if (err) {
		np_cgroup_usage_free(rows, n);
		return err;
	}
	*out = rows;
	*nr = n;
	return 0;
}
