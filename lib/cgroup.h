/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "context.h"
#include "snapshot.h"

/*
 * Memory per node per cgroup, for --report --by-cgroup: so that a pod's or
 * a service's placement reads at a glance. Where the cgroup has a
 * memory.numa_stat (cgroup v2 with the memory controller) its anon and file
 * lines are what the kernel charged to it; elsewhere, and for the root
 * cgroup (whose figures would be the whole machine's), the sum of the
 * numa_maps of its tasks the report read. Each row says which.
 */

/* memory.numa_stat's "anon" and "file" lines, "anon N0=bytes N1=bytes ...". */
struct np_numa_stat {
	unsigned nr_node_slots; /* the arrays cover node ids 0..nr_node_slots-1 */
	uint64_t *anon_bytes;
	uint64_t *file_bytes;
	unsigned bad_line; /* on -EINVAL: 1-based number of the bad line */
};

/* Parse @len bytes of memory.numa_stat into @out, which must own nothing
 * (free with np_numa_stat_clear). Lines other than anon and file are
 * skipped; an anon or file line must be N<node>=<bytes> tokens, each node
 * at most once, and appear once. Pure. Returns 0, -ENOMEM, or -EINVAL with
 * out->bad_line set. */
int np_numa_stat_parse(const char *buf, size_t len, struct np_numa_stat *out);

/* Free what @st holds; it reads as empty after. */
void np_numa_stat_clear(struct np_numa_stat *st);

enum np_cgroup_source {
	NP_CGROUP_NUMA_STAT, /* the cgroup's memory.numa_stat */
	NP_CGROUP_NUMA_MAPS, /* the sum of its tasks' numa_maps */
};

/* Stable name of a source ("memory.numa_stat", "numa_maps"). */
const char *np_cgroup_source_name(enum np_cgroup_source source);

struct np_cgroup_usage {
	char *path;	    /* NULL: tasks in no cgroup v2 */
	int *pids;	    /* its tasks in the snapshot, ascending */
	unsigned nr_tasks;
	uint64_t rss_bytes; /* over those tasks */
	enum np_cgroup_source source;
	unsigned nr_node_slots; /* the arrays cover node ids 0..nr_node_slots-1 */
	uint64_t *anon_bytes, *file_bytes;
	/* Its tasks' cpuset (they share one): empty when unknown. */
	struct np_bitmap cpuset_cpus;
	struct np_nodeset cpuset_mems;
};

/*
 * One row per cgroup of the tasks in @snap (as read by the look that made
 * it), sorted by path, into a malloc'd array. memory.numa_stat is read
 * under the context's root; a file that is absent or unreadable means the
 * tasks' numa_maps, a malformed one is logged with its path and line and
 * means the same. Returns 0 or -ENOMEM.
 */
int np_cgroup_usage_read(struct np_ctx *ctx, const struct np_snapshot *snap,
			 struct np_cgroup_usage **out, size_t *nr);

/* Free @nr rows and the array; NULL is accepted. */
void np_cgroup_usage_free(struct np_cgroup_usage *rows, size_t nr);
