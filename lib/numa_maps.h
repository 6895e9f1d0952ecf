/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"

/*
 * Parser for /proc/PID/numa_maps (fs/proc/task_mmu.c, show_numa_map()).
 * Pure: it is fed bytes in chunks cut anywhere and does no I/O.
 */

enum np_mpol {
	NP_MPOL_DEFAULT,
	NP_MPOL_PREFER,
	NP_MPOL_BIND,
	NP_MPOL_INTERLEAVE,
	NP_MPOL_LOCAL,
	NP_MPOL_PREFER_MANY,         /* "prefer (many)" */
	NP_MPOL_WEIGHTED_INTERLEAVE, /* "weighted interleave" */
};

/* Mode flags printed after the policy: "=static", "=relative", "=balancing". */
#define NP_MPOL_F_STATIC (1u << 0)
#define NP_MPOL_F_RELATIVE (1u << 1)
#define NP_MPOL_F_BALANCING (1u << 2)

struct np_nm_node_pages {
	int node;
	uint64_t pages;
};

/* One line of numa_maps: one VMA. Valid only during the callback. */
struct np_nm_vma {
	uint64_t start;
	enum np_mpol policy;
	unsigned policy_flags;
	struct np_bitmap *policy_nodes; /* the ":0-1" part; empty if none */
	const char *file;               /* decoded file= path, NUL-terminated, or NULL */
	size_t file_len;                /* may contain NUL-free bytes like '\n' */
	bool heap, stack, huge;
	int stack_tid; /* "stack:TID" (older kernels), else 0 */
	uint64_t anon, dirty, mapped, mapmax, swapcache, active, writeback;
	uint64_t kernel_page_bytes; /* kernelpagesize_kB * 1024; 4096 if absent */
	const struct np_nm_node_pages *nodes; /* N<nid>= in file order */
	unsigned nr_nodes;
	unsigned line; /* 1-based line number */
};

/* Totals over all VMAs, in bytes per node id. File-backed VMAs (those with
 * file=) count as file, all others as anon. Page counts are base pages of
 * kernelpagesize_kB, except hugetlb ("huge"), which count one per huge page
 * of kernelpagesize_kB: both reduce to count * kernel_page_bytes. */
struct np_nm_totals {
	unsigned nr_node_slots; /* arrays below cover node ids 0..nr_node_slots-1 */
	uint64_t *anon_bytes;
	uint64_t *file_bytes;
	uint64_t vmas;
	uint64_t unknown_tokens; /* skipped and counted */
	uint64_t bytes_parsed;
};

typedef int (*np_nm_vma_fn)(void *data, const struct np_nm_vma *vma);

struct np_nm_parser;

/* @fn, if not NULL, is called for each VMA; a non-zero return stops parsing
 * and is returned by feed/finish. */
int np_nm_parser_new(struct np_nm_parser **out, np_nm_vma_fn fn, void *data);
void np_nm_parser_free(struct np_nm_parser *p);

/* Forget everything fed so far (totals too), to parse another file. */
void np_nm_parser_reset(struct np_nm_parser *p);

/* Feed @len bytes; lines may be split anywhere between calls. Returns 0,
 * -EINVAL for a malformed line (see np_nm_parser_error), -ENOMEM. */
int np_nm_parser_feed(struct np_nm_parser *p, const char *buf, size_t len);

/* End of input. A last line without its newline is truncated and is an
 * error: a number cut short would be silently wrong. */
int np_nm_parser_finish(struct np_nm_parser *p);

const struct np_nm_totals *np_nm_parser_totals(const struct np_nm_parser *p);

/* After an error: its 1-based line and a message (never NULL). */
unsigned np_nm_parser_error_line(const struct np_nm_parser *p);
const char *np_nm_parser_error(const struct np_nm_parser *p);
