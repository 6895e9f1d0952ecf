/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bitmap.h"
#include "pageplan.h"

/*
 * A sampled look at where a task's memory is: a random sample of the page
 * addresses of its mappings (/proc/PID/maps), each looked up with
 * move_pages(2) given no nodes, instead of numa_maps, which walks every
 * page table of the task under its mmap lock (~10 ms per GiB). The pure
 * parts live here: drawing the sample and bounding the estimate.
 *
 * Each page of the mapped span is equally likely; draws are independent
 * (with replacement), so the share of present pages found on a node is a
 * binomial proportion and its bound is the Wilson score interval. A sparse
 * task (a large reservation with few pages touched) yields few present
 * pages and so a wide bound: the caller then reads numa_maps instead.
 */

/* The state of the generator: any value, 0 included. */
struct np_sample_rng {
	uint64_t state;
};

/* Next 64 random bits (splitmix64: fast, and good enough to pick pages). */
uint64_t np_sample_next(struct np_sample_rng *rng);

/* Pages of @page_bytes the ranges span, in all. */
uint64_t np_sample_span(const struct np_vma_range *ranges, unsigned nr, uint64_t page_bytes);

/* Draw @k page addresses over @ranges (sorted by start, not overlapping, as
 * np_maps_parse gives them), each page of their span equally likely, into
 * @addrs (room for @k), sorted ascending so lookups walk the address space
 * once. When the span is no larger than @k every page is taken once
 * instead, and the look is exact. Returns how many were written. */
unsigned np_sample_draw(const struct np_vma_range *ranges, unsigned nr, uint64_t page_bytes,
			unsigned k, struct np_sample_rng *rng, uint64_t *addrs);

/* A 95% interval of a proportion: @hits of @n draws. With n = 0 it is
 * [0, 1]. */
struct np_sample_interval {
	double estimate, lo, hi;
};
struct np_sample_interval np_sample_wilson(unsigned hits, unsigned n);

/* What a sample says: of @drawn lookups, @present found a page; per node
 * id (below @max_node) the present pages found there. */
struct np_sample_count {
	unsigned drawn, present, other; /* other: present on a node >= max_node */
	unsigned *on_node;		/* caller's array of max_node entries */
	unsigned max_node;
	bool exact; /* every page of the span was looked up */
};

/* Count move_pages' @status of @n lookups (a node id, or -errno for a page
 * not present) into @count, whose on_node array the caller zeroed. */
void np_sample_add(struct np_sample_count *count, const int *status, unsigned n);

/* The present pages found on the nodes of @nodes. */
unsigned np_sample_hits(const struct np_sample_count *count, const struct np_nodeset *nodes);

/* Whether the share @hits of the present pages (those on some nodes) is
 * known well enough to say on which side of @target (a fraction) it lies:
 * the interval does not straddle it, or the look was exact. */
bool np_sample_decides(const struct np_sample_count *count, unsigned hits, double target);

struct np_ctx;

/* Where pages are: move_pages(2) with no nodes, for @n addresses of @pid,
 * into @status. Returns 0 or -errno. */
typedef long (*np_sample_lookup_fn)(void *data, int pid, unsigned long n, void **pages,
				    int *status);

/* The kernel's lookup (libnuma's numa_move_pages). */
long np_sample_lookup_kernel(void *data, int pid, unsigned long n, void **pages, int *status);

/* A sampled look at @pid: read its /proc/PID/maps through @ctx, draw @k
 * pages of @page_bytes over every mapping, look them up with @lookup in
 * chunks of at most @chunk, and count into @count (whose on_node array
 * and max_node the caller set, zeroed). Returns 0, -ESRCH when the task is
 * gone, or -errno. */
int np_sample_look(struct np_ctx *ctx, int pid, unsigned k, uint64_t page_bytes, unsigned chunk,
		   struct np_sample_rng *rng, np_sample_lookup_fn lookup, void *data,
		   struct np_sample_count *count);
