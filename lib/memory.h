/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "numa_maps.h"

/*
 * A task's memory as one read of its numa_maps found it: bytes per node,
 * which of them the daemon may move, and the VMAs holding those, so that
 * the policy decides on what the actuator can carry out and the actuator
 * acts on the same parse (a second read would walk the task's page tables
 * again).
 *
 * Movable memory is what the actuator moves: VMAs under the default or
 * local policy, except file pages other tasks map too (mapmax > 1), which
 * MPOL_MF_MOVE leaves in place. A policy the user set (mbind,
 * set_mempolicy, numactl) is theirs: that memory stays where they asked.
 */
struct np_memory_vma {
	uint64_t start;
	uint64_t page_bytes; /* kernelpagesize_kB * 1024 */
	unsigned first;	     /* its N<nid>= counts: pages[first] .. pages[first + nr_nodes - 1] */
	unsigned nr_nodes;
	uint64_t present; /* pages over all nodes */
};

struct np_task_memory {
	unsigned nr_node_slots; /* the arrays below cover node ids 0..nr_node_slots-1 */
	uint64_t *node_bytes;	/* anon + file */
	uint64_t *anon_bytes;
	uint64_t *movable_bytes; /* what the actuator may move */
	uint64_t total_bytes, movable_total;
	uint64_t policy_bytes[NP_MPOL_UNKNOWN + 1]; /* under each explicit policy */
	uint64_t shared_file_bytes;		    /* file pages other tasks map too */
	struct np_memory_vma *vmas;		    /* with movable pages, in address order */
	unsigned nr_vmas;
	struct np_nm_node_pages *pages; /* the VMAs' per-node counts, one after another */
	unsigned nr_pages;
	/* Starts of the VMAs of files other tasks map too with dirty pages:
	 * memory it may share with them, written (for groups). */
	uint64_t *shared_dirty_starts;
	unsigned nr_shared_dirty;
};

/* Reads numa_maps into np_task_memory, with one parser reused task after
 * task. */
struct np_memory_reader;

/* A reader, with its numa_maps parser. Returns 0 or -ENOMEM. */
int np_memory_reader_new(struct np_memory_reader **out);

/* Free; NULL is accepted. */
void np_memory_reader_free(struct np_memory_reader *reader);

/*
 * Read numa_maps under @dirfd, the task's directory as np_task_dir_open()
 * opened and checked it (@dir, "proc/PID", for messages), into @out, which
 * must own nothing (it is zeroed first; free with np_task_memory_clear).
 * *@bytes_read gets the bytes read, also on error. Returns 0, or as
 * np_nm_read_task: -ESRCH (gone), -EINVAL (malformed, logged with path and
 * line), an odd file's error (logged), other -errno.
 */
int np_memory_read(struct np_memory_reader *reader, struct np_ctx *ctx, int dirfd, const char *dir,
		   struct np_task_memory *out, uint64_t *bytes_read);

/* Bytes of @mem under policies the user set, over every mode. */
uint64_t np_task_memory_policy_total(const struct np_task_memory *mem);

/* Bytes of @mem on node @node that the daemon may not move. */
uint64_t np_task_memory_unmovable_on(const struct np_task_memory *mem, int node);

/* Free what @mem holds; it reads as empty after. */
void np_task_memory_clear(struct np_task_memory *mem);
