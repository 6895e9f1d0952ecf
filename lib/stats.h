/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"
#include "planner.h"
#include "reason.h"
#include "topology.h"

/*
 * The daemon's counters: what it scanned, skipped, moved and failed at, and
 * the kernel's own per-node allocation counters. One structure, written by
 * the single event loop; the counters bumped once per page batch live in their
 * own cache lines, away from the fields that are only read.
 */

/* Which kind of call failed. */
enum np_stat_call {
	NP_CALL_MOVE_PAGES,    /* a move_pages batch or status query as a whole */
	NP_CALL_MIGRATE_PAGES, /* a whole-task migrate_pages */
	NP_CALL_AFFINITY,      /* sched_getaffinity/sched_setaffinity on a thread */
	NP_CALL_READ,	       /* reading numa_maps, maps or task files */
	NP_CALL_NR
};

/* The name used as a Prometheus label value ("move_pages"). */
const char *np_stat_call_name(enum np_stat_call action);

/* /sys/devices/system/node/nodeN/numastat: pages allocated per node. */
struct np_numastat {
	uint64_t numa_hit, numa_miss, numa_foreign, interleave_hit, local_node, other_node;
};

/* Parse a numastat file of @len bytes (pure). Unknown keys are ignored, as
 * newer kernels may add some. Returns 0, or -EINVAL with the 1-based line in
 * *err_line (when not NULL). */
int np_numastat_parse(const char *buf, size_t len, struct np_numastat *out, unsigned *err_line);

/* Read node @node's numastat under the context's root; a malformed file is
 * logged with its path, line and content. Returns 0 or -errno. */
int np_numastat_read(struct np_ctx *ctx, int node, struct np_numastat *out);

struct np_stats;

/* Counters for the nodes of @topo (the migration matrix is nodes x nodes).
 * Returns 0 or -ENOMEM. */
int np_stats_new(const struct np_topology *topo, struct np_stats **out);
/* Free; NULL is accepted. */
void np_stats_free(struct np_stats *stats);

/* @pages pages of @bytes in total moved from node @src to node @dst. Nodes
 * unknown to the topology are counted as "other". */
void np_stats_add_migrated(struct np_stats *stats, int src, int dst, uint64_t pages,
			   uint64_t bytes);

/* @pages pages whose move_pages status was -@err (a positive errno is
 * accepted too). */
void np_stats_add_page_failures(struct np_stats *stats, int err, uint64_t pages);

/* One failed call of kind @action with error -@err; an -EACCES or -EPERM
 * is also counted as a permission failure (np_is_permission_error). */
void np_stats_add_failure(struct np_stats *stats, enum np_stat_call action, int err);

/* One move_pages/migrate_pages call that completed (whatever the pages'
 * status), and its duration. */
void np_stats_add_migrate_call(struct np_stats *stats, enum np_stat_call action,
			       uint64_t elapsed_ns);

/* Pages whose node was queried (move_pages with no target nodes). */
void np_stats_add_pages_queried(struct np_stats *stats, uint64_t pages);

/* Threads whose CPU affinity was narrowed. */
void np_stats_add_affinity_set(struct np_stats *stats, uint64_t threads);

/* The tick's plan (@load: per topo->nodes[i], NULL when none was made),
 * how many tasks the daemon keeps narrowed now, and how many threads it
 * keeps on a node of their own (thread homes). */
void np_stats_set_plan(struct np_stats *stats, const struct np_topology *topo,
		       const struct np_planner_load *load, unsigned narrowed_tasks,
		       unsigned thread_homes);

/* Tasks given their mask from before back. */
void np_stats_add_given_back(struct np_stats *stats, uint64_t tasks);

/* One cycle's task list, from a listing of /proc (@of_proc) or from
 * events: @read tasks had their stat read, @kept kept the last read's
 * record, @unchanged kept it as current (not seen running since). */
void np_stats_add_listing(struct np_stats *stats, bool of_proc, uint64_t read, uint64_t kept,
			  uint64_t unchanged);

/* One numa_maps read of @bytes. */
void np_stats_add_scan(struct np_stats *stats, uint64_t numa_maps_bytes);

/* A sampled look at a big task: @sufficed when it found the task as its
 * last look left it, so that numa_maps was not read. */
void np_stats_add_sampled_look(struct np_stats *stats, bool sufficed);
/* One placement cycle of @elapsed_ns, wall clock, which took @cpu_ns of its
 * thread's CPU time. */
void np_stats_add_tick(struct np_stats *stats, uint64_t elapsed_ns, uint64_t cpu_ns);

/* A placement cycle that found nothing changed and listed no task (a quiet
 * tick, lib/engine.c); it is counted by the np_stats_add_tick that ends
 * it too, whose CPU time the summary gives apart. */
void np_stats_add_quiet_tick(struct np_stats *stats);
uint64_t np_stats_quiet_ticks(const struct np_stats *stats);
/* Placement cycles counted by np_stats_add_tick, quiet ones included. */
uint64_t np_stats_ticks(const struct np_stats *stats);

/* One task or action passed over for @reason (out of range, or a reason
 * that is no skip, such as a move: ignored). The label is the reason
 * table's metric name. */
void np_stats_add_skip(struct np_stats *stats, enum np_reason reason);

/* @counts[reason] tasks passed over for each reason, under one lock (the
 * reasons that are no skip: ignored). */
void np_stats_add_skips(struct np_stats *stats, const uint64_t counts[NP_REASON_COUNT]);

/* Read every node's numastat through @ctx into the stats. Returns 0 or the
 * first -errno; the nodes read before an error keep their new values. */
int np_stats_update_numastat(struct np_stats *stats, struct np_ctx *ctx);

/* Counter read-back, for tests and the summary. A node the topology does
 * not know reads the "other" row or column. */
uint64_t np_stats_migrated_bytes(const struct np_stats *stats, int src, int dst);
uint64_t np_stats_page_failures(const struct np_stats *stats, int err);
uint64_t np_stats_failures(const struct np_stats *stats, enum np_stat_call action, int err);
uint64_t np_stats_permission_denied(const struct np_stats *stats, enum np_stat_call action);
uint64_t np_stats_skips(const struct np_stats *stats, enum np_reason reason);
uint64_t np_stats_scans(const struct np_stats *stats);
/* Tasks listed with their stat read (@kept false) or kept, so far. */
uint64_t np_stats_listed(const struct np_stats *stats, bool kept);
/* Tasks listed with their record kept as unchanged, so far. */
uint64_t np_stats_listed_unchanged(const struct np_stats *stats);

/* Write every counter in the Prometheus text exposition format (version
 * 0.0.4): metric names start with numaplaced_, each family has # HELP and
 * # TYPE lines. The daemon's own CPU time comes from getrusage(2) at the time
 * of the call. Returns 0 or -EIO. */
int np_stats_write_prometheus(const struct np_stats *stats, FILE *out);

/* The same into a malloc'd NUL-terminated buffer. Returns 0 or -errno. */
int np_stats_format_prometheus(const struct np_stats *stats, char **buf, size_t *len);

/* A few human-readable lines (for SIGUSR1). Returns 0 or -EIO. */
int np_stats_write_summary(const struct np_stats *stats, FILE *out);
