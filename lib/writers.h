/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"

/*
 * Which thread of a task writes which memory. numa_maps says where a
 * task's pages are, not which of its threads uses them; the kernel's NUMA
 * balancing learns that from hinting faults, taken by the thread that
 * touches a page. From userspace the same comes from write faults: the
 * task's soft-dirty bits are cleared (writing "4" to /proc/PID/clear_refs,
 * which write-protects every page it has mapped writable), so that the
 * first write to each page afterwards faults; a software perf event on
 * each thread (PERF_COUNT_SW_PAGE_FAULTS, every fault a sample with its
 * address) records which thread took it.
 *
 * What it costs the task: one minor fault per page it writes after the
 * clear (one per 2 MiB for a transparent huge page), once; and a TLB flush
 * of its CPUs at the clear. The event counts every fault of the thread in
 * user space, not writes alone: a first read of a page not yet present,
 * a fault on a file mapping or a NUMA hinting fault (with the kernel's
 * balancing on) count as its writes too; a read of a page present takes
 * none. Writes the kernel makes for the task (read(2) into its buffer)
 * fault in kernel mode and are not seen. A program that
 * tracks its own soft-dirty bits (CRIU's incremental dumps) would see
 * every page as clean after a clear: numaplaced.conf(5) has the setting
 * to turn this off. It needs a kernel with CONFIG_MEM_SOFT_DIRTY (probed
 * by np_writers_probe()), perf events, write access to the task's
 * clear_refs (its owner, or CAP_DAC_OVERRIDE) and CAP_PERFMON or
 * CAP_SYS_PTRACE for the events on another user's threads.
 */

/* The unit of attribution: 2 MiB, a huge page, 512 small ones. */
#define NP_WRITERS_BLOCK_SHIFT 21

/* One write fault: the thread that took it and the address. */
struct np_write_sample {
	int tid;
	uint64_t addr;
};

/* A block some thread wrote while sampled. */
struct np_writer_block {
	uint64_t start; /* aligned to 1 << NP_WRITERS_BLOCK_SHIFT */
	int tid;	/* the only thread seen writing it; -1: more than one */
	unsigned faults;
};

/*
 * Group @n samples into blocks (pure; @s is sorted in place). On success
 * *@out is a malloc'd array of *@nr blocks in address order (NULL when
 * @n is 0). Returns 0 or -ENOMEM.
 */
int np_writers_attribute(struct np_write_sample *s, size_t n, struct np_writer_block **out,
			 unsigned *nr);

/* A block whose one fault a second sample has yet to confirm. */
#define NP_WRITERS_UNCONFIRMED (-2)

/*
 * Confirm the owners of @n blocks (sorted, as np_writers_attribute makes
 * them) against @prev, the blocks of an earlier sample (@nr_prev of them,
 * sorted; NULL: none), as the kernel tells a private page from a shared
 * one by two faults in a row from the same task (pure). A block with two
 * faults or more, all from one thread, is that thread's. A block with one
 * fault (a transparent huge page faults once, on its first writer) is its
 * thread's when @prev has it from the same thread, shared (-1) when from
 * another or several, and NP_WRITERS_UNCONFIRMED when @prev lacks it.
 * Returns the number of those.
 */
unsigned np_writers_confirm(struct np_writer_block *b, unsigned n,
			    const struct np_writer_block *prev, unsigned nr_prev);

/* Whether the running kernel keeps soft-dirty bits: a page of the caller
 * is written, its bits cleared through /proc/self/clear_refs, and
 * /proc/self/pagemap read back. Returns 0 when it does, -EOPNOTSUPP when
 * it does not, or another -errno when the probe could not tell. */
int np_writers_probe(void);

/* A sampling of one task's threads under way. */
struct np_writers;

/*
 * Start sampling the writes of @nr threads @tids of task @pid: a perf
 * event on each thread, then the clear of the task's soft-dirty bits.
 * Each thread's ring holds @ring_kib KiB of samples (rounded up to a power
 * of two pages; 24 bytes a sample), beyond which its samples are dropped
 * and counted. A thread that exited meanwhile is left out. Returns 0,
 * -EOPNOTSUPP under a fixture root or without perf events, -ESRCH when
 * the task or all its threads are gone, -EACCES or -EPERM without the
 * privilege, or another -errno; nothing is left open on failure.
 */
int np_writers_start(struct np_ctx *ctx, int pid, const int *tids, unsigned nr, unsigned ring_kib,
		     struct np_writers **out);

/*
 * Stop the events and collect what they recorded into *@s, a malloc'd
 * array of *@n samples (NULL when none), and in *@overflowed the number
 * of threads whose ring filled up (their later faults were dropped) or
 * did not read whole. Returns 0 or -ENOMEM. The sampling is over after
 * it: free it.
 */
int np_writers_collect(struct np_writers *w, struct np_write_sample **s, size_t *n,
		       unsigned *overflowed);

/*
 * Collect what the events recorded so far, as np_writers_collect() does
 * but with the events left running: what they record next is collected
 * at the end. Returns 0 or -ENOMEM (what was recorded so far is lost).
 */
int np_writers_drain(struct np_writers *w, struct np_write_sample **s, size_t *n,
		     unsigned *overflowed);

/*
 * Clear the task's soft-dirty bits again, through its clear_refs as
 * opened at the start: a task that ended, or whose pid another process
 * took, is not touched (-ESRCH). After a drain, what follows is a sample
 * of its own, whose blocks of one fault (huge pages) the drained part
 * confirms. Returns 0 or -errno.
 */
int np_writers_clear(struct np_writers *w);

/* How many of @n blocks have one fault (pure): those a sample before
 * is to confirm. */
unsigned np_writers_single(const struct np_writer_block *b, unsigned n);

/* Stop and free; NULL is accepted. */
void np_writers_free(struct np_writers *w);
