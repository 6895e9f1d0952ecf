/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "topology.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#define NODE_DIR "sys/devices/system/node"
#define SMALL_FILE (1u << 20)

/* A CPU list into @cpus or a node list into @nodes: the other is NULL. */
static int read_list(struct np_ctx *ctx, const char *path, struct np_bitmap *cpus,
		     struct np_nodeset *nodes)
{
	char *buf;
	size_t len;
	int err = np_ctx_read_file(ctx, path, SMALL_FILE, &buf, &len);

	if (err)
		return err;
	err = cpus ? np_bitmap_parse_list(cpus, buf, len) : np_nodeset_parse_list(nodes, buf, len);
	if (err)
		np_log(ctx, LOG_ERR, "%s/%s: not a %s list: \"%.*s\"", np_ctx_root(ctx), path,
		       cpus ? "CPU" : "node", (int)strcspn(buf, "\n"), buf);
	free(buf);
	return err;
}

/* Lines like "Node 0 MemTotal:       24571264 kB" (per node) or
 * "MemTotal:       24571264 kB" (/proc/meminfo). */
int np_meminfo_parse(const char *buf, size_t len, struct np_node *out, unsigned *bad_line)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{"MemTotal:", offsetof(struct np_node, mem_total)},
		{"MemFree:", offsetof(struct np_node, mem_free)},
		{"FilePages:", offsetof(struct np_node, file_pages)},
	};
	/* Into a copy, so that a bad file leaves @out as it was. */
	struct np_node node = *out;
	const char *line = buf, *end = buf + len;
	unsigned found = 0, lineno = 0;

	*bad_line = 0;
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *p = line;

		if (!eol)
			eol = end;
		lineno++;
		if ((size_t)(eol - p) > 5 && memcmp(p, "Node ", 5) == 0) {
			p += 5;
			while (p < eol && *p >= '0' && *p <= '9')
				p++;
			while (p < eol && *p == ' ')
				p++;
		}
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t klen = strlen(keys[i].key);
			const char *digits;
			uint64_t kb;

			if ((size_t)(eol - p) < klen || memcmp(p, keys[i].key, klen) != 0)
				continue;
			for (digits = p + klen; digits < eol && *digits == ' '; digits++)
				;
			/* The kernel writes "%8lu kB": digits, then the unit. */
			if (eol - digits < 4 || memcmp(eol - 3, " kB", 3) != 0 ||
			    !np_parse_u64(digits, eol - 3, &kb) || kb > UINT64_MAX / 1024) {
				*bad_line = lineno;
				return -EINVAL;
			}
			*(uint64_t *)((char *)&node + keys[i].offset) = kb * 1024;
			found |= 1u << i;
		}
		line = eol + 1;
	}
	if (!(found & 1))
		return -EINVAL; /* no MemTotal line; *bad_line stays 0 */
	*out = node;
	return 0;
}

static int read_meminfo(struct np_ctx *ctx, const char *path, struct np_node *node)
{
	char *buf;
	size_t len;
	unsigned bad_line;
	int err = np_ctx_read_file(ctx, path, SMALL_FILE, &buf, &len);

	if (err)
		return err;
	err = np_meminfo_parse(buf, len, node, &bad_line);
	if (err && bad_line) {
		int line_len;
		const char *line = np_nth_line(buf, len, bad_line, &line_len);

		np_log(ctx, LOG_ERR, "%s/%s:%u: bad value: \"%.*s\"", np_ctx_root(ctx), path,
		       bad_line, line_len, line);
	} else if (err) {
		np_log(ctx, LOG_ERR, "%s/%s: no MemTotal line", np_ctx_root(ctx), path);
	}
	free(buf);
	return err;
}

int np_distance_parse(const char *buf, size_t len, unsigned n, unsigned *out)
{
	const char *p = buf, *end = buf + len;
	unsigned tmp[NP_MAX_NODES];

	if (n == 0 || n > NP_MAX_NODES)
		return -EINVAL;
	while (end > p && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (unsigned j = 0; j < n; j++) {
		const char *digits;
		uint64_t v;

		while (p < end && *p == ' ')
			p++;
		for (digits = p; p < end && *p != ' '; p++)
			;
		if (!np_parse_u64(digits, p, &v) || v == 0 || v > 255)
			return -EINVAL;
		tmp[j] = (unsigned)v;
	}
	if (p != end)
		return -EINVAL; /* more numbers than nodes */
	memcpy(out, tmp, n * sizeof(*out));
	return 0;
}

static int read_distances(struct np_ctx *ctx, struct np_topology *topo, unsigned idx)
{
	char path[64], *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", topo->nodes[idx].id);
	err = np_ctx_read_file(ctx, path, SMALL_FILE, &buf, &len);
	if (err == -ENOENT) {
		/* Very old kernels: assume the SLIT defaults. */
		for (unsigned j = 0; j < topo->nr_nodes; j++)
			topo->distance[idx * topo->nr_nodes + j] = j == idx ? 10 : 20;
		return 0;
	}
	if (err)
		return err;
	/* One number per online node, in ascending node order. */
	err = np_distance_parse(buf, len, topo->nr_nodes, &topo->distance[idx * topo->nr_nodes]);
	if (err)
		np_log(ctx, LOG_ERR, "%s/%s: expected %u distances: \"%.*s\"", np_ctx_root(ctx),
		       path, topo->nr_nodes, (int)strcspn(buf, "\n"), buf);
	free(buf);
	return err;
}

static int read_single_node(struct np_ctx *ctx, struct np_topology *topo)
{
	struct np_bitmap cpus;
	int err = read_list(ctx, "sys/devices/system/cpu/online", &cpus, NULL);

	if (err)
		return err;
	topo->nodes = calloc(1, sizeof(*topo->nodes));
	topo->distance = calloc(1, sizeof(*topo->distance));
	if (!topo->nodes || !topo->distance)
		return -ENOMEM;
	topo->nr_nodes = 1;
	topo->nodes[0].cpus = cpus;
	topo->distance[0] = 10;
	return read_meminfo(ctx, "proc/meminfo", &topo->nodes[0]);
}

static int read_nodes(struct np_ctx *ctx, struct np_topology *topo)
{
	struct np_nodeset online;
	unsigned n = 0;
	int err = read_list(ctx, NODE_DIR "/online", NULL, &online);

	if (err == -ENOENT)
		return read_single_node(ctx, topo);
	if (err)
		return err;
	topo->nr_nodes = np_nodeset_weight(&online);
	if (topo->nr_nodes == 0) {
		np_log(ctx, LOG_ERR, "%s/" NODE_DIR "/online: no node is online",
		       np_ctx_root(ctx));
		return -EINVAL;
	}
	topo->nodes = calloc(topo->nr_nodes, sizeof(*topo->nodes));
	topo->distance = calloc((size_t)topo->nr_nodes * topo->nr_nodes,
				sizeof(*topo->distance));
	if (!topo->nodes || !topo->distance)
		return -ENOMEM;
	np_nodeset_for_each(id, &online)
	{
		struct np_node *node = &topo->nodes[n++];
		char path[64];

		node->id = id;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", id);
		err = read_list(ctx, path, &node->cpus, NULL);
		if (err)
			return err;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", id);
		err = read_meminfo(ctx, path, node);
		if (err)
			return err;
	}
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		err = read_distances(ctx, topo, i);
		if (err)
			return err;
	}
	return 0;
}

int np_topology_read(struct np_ctx *ctx, struct np_topology **out)
{
	struct np_topology *topo = calloc(1, sizeof(*topo));
	int err;

	if (!topo)
		return -ENOMEM;
	err = read_nodes(ctx, topo);
	if (err)
		goto fail;
	topo->max_cpu = -1;
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		struct np_node *node = &topo->nodes[i];

		node->nr_cpus = np_bitmap_weight(&node->cpus);
		np_bitmap_for_each(cpu, &node->cpus)
		{
			if (cpu > topo->max_cpu)
				topo->max_cpu = cpu;
		}
	}
	topo->cpu_node = malloc(sizeof(int) * (size_t)(topo->max_cpu + 2));
	if (!topo->cpu_node) {
		err = -ENOMEM;
		goto fail;
	}
	for (int cpu = 0; cpu <= topo->max_cpu; cpu++)
		topo->cpu_node[cpu] = -1;
	for (unsigned i = 0; i < topo->nr_nodes; i++) {
		np_bitmap_for_each(cpu, &topo->nodes[i].cpus)
		{
			topo->cpu_node[cpu] = topo->nodes[i].id;
		}
	}
	*out = topo;
	return 0;
fail:
	np_topology_free(topo);
	return err;
}

void np_topology_free(struct np_topology *topo)
{
	if (!topo)
		return;
	free(topo->nodes);
	free(topo->distance);
	free(topo->cpu_node);
	free(topo);
}

static void *memdup_or_null(const void *src, size_t size, bool *failed)
{
	void *p;

	if (!src)
		return NULL;
	p = malloc(size ? size : 1);
	if (!p)
		*failed = true;
	else
		memcpy(p, src, size);
	return p;
}

int np_topology_copy(const struct np_topology *topo, struct np_topology **out)
{
	struct np_topology *copy = calloc(1, sizeof(*copy));
	size_t n = topo->nr_nodes;
	bool failed = false;

	if (!copy)
		return -ENOMEM;
	*copy = (struct np_topology){.nr_nodes = topo->nr_nodes, .max_cpu = topo->max_cpu};
	copy->nodes = memdup_or_null(topo->nodes, n * sizeof(*topo->nodes), &failed);
	copy->distance = memdup_or_null(topo->distance, n * n * sizeof(*topo->distance), &failed);
	copy->cpu_node = memdup_or_null(topo->cpu_node,
					(size_t)(topo->max_cpu + 1) * sizeof(*topo->cpu_node), &failed);
	if (failed) {
		np_topology_free(copy);
		return -ENOMEM;
	}
	*out = copy;
	return 0;
}

int np_topology_index(const struct np_topology *topo, int id)
{
	for (unsigned i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].id == id)
			return (int)i;
	return -1;
}

const struct np_node *np_topology_node(const struct np_topology *topo, int id)
{
	int i = np_topology_index(topo, id);

	return i < 0 ? NULL : &topo->nodes[i];
}

unsigned np_topology_distance(const struct np_topology *topo, int from, int to)
{
	int i = np_topology_index(topo, from), j = np_topology_index(topo, to);

	if (i < 0 || j < 0)
		return 0;
	return topo->distance[(unsigned)i * topo->nr_nodes + (unsigned)j];
}

int np_topology_cpu_node(const struct np_topology *topo, int cpu)
{
	if (cpu < 0 || cpu > topo->max_cpu)
		return -1;
	return topo->cpu_node[cpu];
}
