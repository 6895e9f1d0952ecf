/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Pure pieces of moving a task's pages: grouping looked-up pages into
 * move_pages batches, and the address ranges of /proc/PID/maps.
 */

/* Pages grouped for move_pages: @pages reordered so that each batch is a run
 * of one destination node, in the order destinations first appear. */
struct np_page_batch {
	int dst;
	unsigned first, count; /* into plan->pages */
};

struct np_page_plan {
	void **pages;
	int *src; /* each page's current node */
	unsigned nr_pages;
	struct np_page_batch *batches;
	unsigned nr_batches;
	unsigned not_present; /* status < 0 (not mapped, zero page, error) */
	unsigned in_place;    /* already on their destination */
};

/* Plan the moves of @n pages whose current node (or -errno) is @status[i]
 * and destination @dst[i] (or all @dst[0] when @one_dst), in batches of at
 * most @batch_pages. Returns 0 or -ENOMEM / -EINVAL. */
int np_page_plan_build(void *const *pages, const int *status, const int *dst, bool one_dst,
		       unsigned n, unsigned batch_pages, struct np_page_plan *plan);
/* Free a plan's arrays and zero it. */
void np_page_plan_clear(struct np_page_plan *plan);

/* One mapping from /proc/PID/maps. */
struct np_vma_range {
	uint64_t start, end;
	/* Mapped shared and writable ("rw?s"), with the object's device
	 * (major << 32 | minor) and inode: what two tasks writing to the same
	 * shm, memfd or file have in common. False when the rest of the line
	 * does not read as the kernel writes it. */
	bool shared_writable;
	uint64_t dev, inode;
};

/* Parse maps (pure) into a malloc'd array sorted by start. Returns 0,
 * -ENOMEM, or -EINVAL with the 1-based line in *err_line. */
int np_maps_parse(const char *buf, size_t len, struct np_vma_range **ranges, unsigned *nr,
		  unsigned *err_line);
