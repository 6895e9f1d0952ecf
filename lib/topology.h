/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "bitmap.h"
#include "context.h"

/* One online NUMA node, from /sys/devices/system/node/nodeN. A node may have
 * memory and no CPUs, or CPUs and no memory: both are kept. */
struct np_node {
	int id;
	struct np_bitmap cpus;
	unsigned nr_cpus;
	uint64_t mem_total;  /* bytes, MemTotal */
	uint64_t mem_free;   /* bytes, MemFree */
	uint64_t file_pages; /* bytes, FilePages */
};

struct np_topology {
	unsigned nr_nodes;     /* online nodes */
	struct np_node *nodes; /* ascending id */
	unsigned *distance;    /* nr_nodes x nr_nodes, by index into nodes */
	int max_cpu;           /* highest CPU of any node, -1 if none */
	int *cpu_node;         /* max_cpu + 1 entries: node id, or -1 */
};

/* Parse a meminfo file of @len bytes (pure; no NUL needed): a node's
 * ("Node 0 MemTotal:  1024 kB") or /proc/meminfo ("MemTotal:  1024 kB").
 * Sets @out's mem_total, mem_free and file_pages (in bytes) from the lines
 * present; other lines are ignored. Returns 0, or -EINVAL with @out
 * unchanged and *@bad_line the 1-based line whose value is not "N kB" (0:
 * there is no MemTotal line). */
int np_meminfo_parse(const char *buf, size_t len, struct np_node *out, unsigned *bad_line);

/* Parse a node's distance file of @len bytes (pure): exactly @n numbers
 * (1..NP_MAX_NODES of them), each 1..255, separated by spaces, a trailing
 * newline allowed, into @out[0..n-1]. Returns 0, or -EINVAL with @out
 * unchanged. */
int np_distance_parse(const char *buf, size_t len, unsigned n, unsigned *out);

/* Read the topology under the context's root. A machine without
 * /sys/devices/system/node (CONFIG_NUMA=n) reads as one node 0 holding every
 * online CPU and /proc/meminfo's memory. Returns 0 or -errno; malformed sysfs
 * content gives -EINVAL with a message naming the file. */
int np_topology_read(struct np_ctx *ctx, struct np_topology **out);

void np_topology_free(struct np_topology *topo);

/* A copy of @topo into *@out, owning its own arrays (a status keeps the
 * topology a decision was made on). Returns 0 or -ENOMEM. */
int np_topology_copy(const struct np_topology *topo, struct np_topology **out);

/* Index of node @id in topo->nodes, or -1 when it is not online. */
int np_topology_index(const struct np_topology *topo, int id);

/* The node, or NULL when it is not online. */
const struct np_node *np_topology_node(const struct np_topology *topo, int id);

/* Distance between two node ids (10 = local); 0 when either is not online. */
unsigned np_topology_distance(const struct np_topology *topo, int from, int to);

/* Node of @cpu, or -1. */
int np_topology_cpu_node(const struct np_topology *topo, int cpu);
