/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "context.h"
#include "task.h"
#include "topology.h"

/* One task as the report shows it. */
struct np_report_task {
	struct np_task task;
	bool has_memory;          /* numa_maps was read */
	unsigned nr_node_slots;   /* node ids 0..nr_node_slots-1 below */
	uint64_t *node_bytes;     /* anon + file */
	uint64_t *node_anon_bytes;
	uint64_t total_bytes;
	int run_node;             /* node most of its threads last ran on, or -1 */
	double locality;          /* share of its memory on run_node, 0..1 */
};

/* A snapshot of the machine: topology, node load and the tasks worth
 * showing. */
struct np_report {
	struct np_topology *topo;
	double *node_load;         /* per topo->nodes[i], 0..1 */
	int kernel_numa_balancing; /* kernel.numa_balancing, -1 when absent */
	uint64_t uptime_ms;
	struct np_report_task *tasks;
	unsigned nr_tasks;
};

struct np_report_options {
	uint64_t min_rss_bytes; /* tasks below are left out */
};

/* Observe the machine under the context's root once. Tasks that vanish while
 * being read are left out quietly. Returns 0 or -errno. */
int np_report_collect(struct np_ctx *ctx, const struct np_report_options *opts,
		      struct np_report **out);

void np_report_free(struct np_report *report);

/* Aligned columns with human sizes, like numastat -p for the whole machine. */
int np_report_write_text(const struct np_report *report, FILE *out);

/* The same data as JSON. */
int np_report_write_json(const struct np_report *report, FILE *out);

/* Format @bytes as "512.0M", "1.2G", "64K" into @buf. */
const char *np_human_bytes(uint64_t bytes, char *buf, size_t size);
