/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bitmap.h"
#include "context.h"

/*
 * Parser for /proc/PID/numa_maps (fs/proc/task_mmu.c, show_numa_map()).
 * Pure: it is fed bytes in chunks cut anywhere and does no I/O.
 *
 * A line is "<start> <policy>[ <token>]...\n". The policy is what
 * mm/mempolicy.c mpol_to_str() prints: "<mode>[=<flags>][:<nodelist>]", where
 * two modes contain a space ("prefer (many)", "weighted interleave"), so the
 * policy is matched against the known modes, not cut at the first space.
 * The tokens are file=PATH, heap, stack, stack:TID (older kernels),
 * huge, anon=, dirty=, mapped=, mapmax=, swapcache=, active=, writeback=,
 * N<nid>= and kernelpagesize_kB=. Unknown tokens are skipped and counted, so
 * a newer kernel adding one does not break us.
 *
 * Errors (-EINVAL, with line and message): an address that is not hex, an
 * unknown mode or flag, a bad node list, a known key given twice or with a
 * value that is not a decimal number fitting 64 bits, N<nid> with
 * nid >= NP_MAX_NODES or not in increasing order (the kernel prints them
 * ascending, so a repeat would be counted twice), page counts without
 * kernelpagesize_kB (their unit is unknown), a kernelpagesize_kB that is not
 * a power of two, byte totals overflowing 64 bits, an empty field (two
 * spaces in a row, trailing space, empty line), a line longer than
 * NP_NM_LINE_MAX, and a last line without its newline. A line in error adds
 * nothing to the totals; the error sticks until np_nm_parser_reset().
 */

/* Far above anything the kernel prints (a 4 KiB path escaped four times over
 * plus 1024 N<nid>= tokens is under 48 KiB), low enough that garbage without
 * newlines cannot make us allocate without bound. */
#define NP_NM_LINE_MAX (1u << 20)

/* show_numa_map() formats the policy into a 64-byte buffer: a policy of
 * NP_NM_POLICY_MAX - 1 bytes may have had its node list cut short. */
#define NP_NM_POLICY_MAX 64

enum np_mpol {
	NP_MPOL_DEFAULT,
	NP_MPOL_PREFER,
	NP_MPOL_BIND,
	NP_MPOL_INTERLEAVE,
	NP_MPOL_LOCAL,
	NP_MPOL_PREFER_MANY,	     /* "prefer (many)" */
	NP_MPOL_WEIGHTED_INTERLEAVE, /* "weighted interleave" */
	NP_MPOL_UNKNOWN,	     /* the kernel's own "unknown" */
};

/* The mode's name as numa_maps prints it ("prefer", "prefer (many)"). */
const char *np_mpol_name(enum np_mpol mode);

/* Mode flags printed after the policy: "=static", "=relative", "=balancing".
 * Static and relative exclude each other; balancing combines with either
 * ("bind=static|balancing:0-1"). */
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
	struct np_nodeset *policy_nodes; /* the ":0-1" part; empty if none */
	/* The kernel cut the policy at NP_NM_POLICY_MAX - 1 bytes: policy_nodes
	 * holds the complete entries before the cut, the rest is lost. */
	bool policy_truncated;
	/*
	 * The file= path, NUL-terminated, or NULL. The kernel escapes only
	 * '\n', '\t', '=' and ' ' (as \012 \011 \075 \040) and these four are
	 * decoded; any other backslash is a literal one. A path that literally
	 * contains one of those four sequences therefore reads back decoded:
	 * the kernel's format cannot tell them apart. Unlinked files end in
	 * " (deleted)", as d_path() prints them.
	 */
	const char *file;
	size_t file_len;
	bool heap, stack, huge;
	int stack_tid; /* "stack:TID" (older kernels), else 0 */
	uint64_t anon, dirty, mapped, mapmax, swapcache, active, writeback;
	uint64_t kernel_page_bytes;	      /* kernelpagesize_kB * 1024; 4096 if absent */
	const struct np_nm_node_pages *nodes; /* N<nid>= in file order */
	unsigned nr_nodes;
	unsigned unknown_tokens;
	unsigned line; /* 1-based line number */
};

/* Totals over all VMAs, in bytes per node id. File-backed VMAs (those with
 * file=) count as file, all others as anon; hugetlb VMAs always carry file=
 * (hugetlbfs, or "/anon_hugepage (deleted)"), so they count as file. Page
 * counts are base pages of kernelpagesize_kB (a transparent huge page counts
 * as 512 base pages of 4 kB), except hugetlb ("huge"), which count one per
 * huge page of kernelpagesize_kB: both reduce to count * kernel_page_bytes. */
struct np_nm_totals {
	unsigned nr_node_slots; /* arrays below cover node ids 0..nr_node_slots-1 */
	uint64_t *anon_bytes;
	uint64_t *file_bytes;
	uint64_t vmas;
	uint64_t unknown_tokens; /* skipped and counted */
	uint64_t bytes_parsed;	 /* bytes of complete lines parsed without error */
};

typedef int (*np_nm_vma_fn)(void *data, const struct np_nm_vma *vma);

struct np_nm_parser;

/* @fn, if not NULL, is called for each VMA; a non-zero return stops parsing
 * and is returned by feed/finish. Returns 0 or -ENOMEM. */
int np_nm_parser_new(struct np_nm_parser **out, np_nm_vma_fn fn, void *data);

/* Free a parser; NULL is accepted. */
void np_nm_parser_free(struct np_nm_parser *p);

/* Forget everything fed so far (totals and error too), to parse another file. */
void np_nm_parser_reset(struct np_nm_parser *p);

/* Feed @len bytes; lines may be split anywhere between calls. Returns 0,
 * -EINVAL for a malformed line (see np_nm_parser_error), -ENOMEM, or the
 * callback's non-zero return. After an error, returns it again. */
int np_nm_parser_feed(struct np_nm_parser *p, const char *buf, size_t len);

/* End of input. A last line without its newline is truncated and is an
 * error: a number cut short would be silently wrong. */
int np_nm_parser_finish(struct np_nm_parser *p);

/* The totals so far (complete lines only). */
const struct np_nm_totals *np_nm_parser_totals(const struct np_nm_parser *p);

/* After an error: its 1-based line and a message (never NULL; "" if none). */
unsigned np_nm_parser_error_line(const struct np_nm_parser *p);
const char *np_nm_parser_error(const struct np_nm_parser *p);

/* Bytes per read() of np_nm_read_task(): a 65k-VMA numa_maps is ~4.5 MB and
 * is never held in memory whole. */
#define NP_NM_READ_CHUNK (64u * 1024)

/*
 * Stream numa_maps under @dirfd, a task's directory (np_task_dir_open(),
 * which checked it is the task's; @dir, "proc/PID", names it in messages),
 * through @p (reset first) in NP_NM_READ_CHUNK reads, then finish; the
 * totals are read from @p after. *@bytes_read (if not NULL) gets the bytes
 * read. Returns 0; -ESRCH, quietly, for a task that is gone (open fails as
 * np_is_vanished_error() says, read gives ESRCH, or the file is empty: an
 * exited task, or a kernel thread, which has no memory map); -EINVAL for
 * malformed content, logged with path, line and message; an odd file
 * (np_is_odd_file_error()) as np_ctx_open_at() refuses it, logged; other
 * -errno.
 */
int np_nm_read_task(struct np_ctx *ctx, int dirfd, const char *dir, struct np_nm_parser *p,
		    uint64_t *bytes_read);
