/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "context.h"
#include "policy.h"
#include "scheduler.h"
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
	int run_node;             /* node with most of its threads' CPU time, or -1 */
	int home_node;            /* node its memory should be on (run_node, or the
				     nearest node with memory), or -1 */
	double locality;          /* share of its memory local to its threads, 0..1 */
	bool has_decision;        /* action holds what the daemon would do */
	struct np_action action;
	bool picked;              /* the scheduler would read it now */
	struct np_sched_verdict verdict;
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

/* The report of a one-shot, dry-run cycle over the machine under the
 * context's root with @cfg: topology, and every user task at or above
 * @min_rss_bytes with its memory and what the daemon would do. Returns 0 or
 * -errno. */
int np_report_collect(struct np_ctx *ctx, const struct np_config *cfg, uint64_t min_rss_bytes,
		      struct np_report **out);

/* Read one task's details and memory into @rt (rt->task set; run_node,
 * home_node and locality are left for the caller, who knows the policy's
 * view). Returns 0, 1 when the task vanished or its numa_maps is unreadable
 * (leave it out), or -errno. @bytes_read: numa_maps bytes parsed. */
struct np_nm_parser;
int np_report_observe_task(struct np_ctx *ctx, struct np_nm_parser *parser,
			   struct np_report_task *rt, uint64_t *bytes_read);

void np_report_task_clear(struct np_report_task *rt);

void np_report_free(struct np_report *report);

/* Aligned columns with human sizes, like numastat -p for the whole machine. */
int np_report_write_text(const struct np_report *report, FILE *out);

/* The same data as JSON. */
int np_report_write_json(const struct np_report *report, FILE *out);

/* Format @bytes as "512.0M", "1.2G", "64K" into @buf. */
const char *np_human_bytes(uint64_t bytes, char *buf, size_t size);
