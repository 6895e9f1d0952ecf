/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct np_memory_reader {
	struct np_nm_parser *parser;
	struct np_task_memory *mem; /* being filled */
	unsigned cap_vmas, cap_pages, cap_shared;
};

/* A policy the user set (mbind, set_mempolicy, numactl) on the VMA. */
static bool user_policy(const struct np_nm_vma *vma)
{
	return vma->policy != NP_MPOL_DEFAULT && vma->policy != NP_MPOL_LOCAL;
}

/* File pages other tasks map too: MPOL_MF_MOVE leaves them in place. */
static bool shared_file(const struct np_nm_vma *vma)
{
	return vma->file && vma->mapmax > 1;
}

static int grow(void **v, unsigned *cap, unsigned need, size_t size)
{
	unsigned n = *cap ? *cap : 16;
	void *bigger;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	bigger = realloc(*v, (size_t)n * size);
	if (!bigger)
		return -ENOMEM;
	*v = bigger;
	*cap = n;
	return 0;
}

/* Per VMA: the node arrays only need the node ids seen, which the parser's
 * totals give at the end; VMAs keep their own counts meanwhile. */
static int add_vma(void *data, const struct np_nm_vma *vma)
{
	struct np_memory_reader *r = data;
	struct np_task_memory *mem = r->mem;
	uint64_t present = 0;
	int err;

	for (unsigned i = 0; i < vma->nr_nodes; i++)
		present += vma->nodes[i].pages;
	if (!present)
		return 0;
	if (user_policy(vma)) {
		mem->policy_bytes[vma->policy] += present * vma->kernel_page_bytes;
		return 0;
	}
	if (shared_file(vma)) {
		mem->shared_file_bytes += present * vma->kernel_page_bytes;
		if (!vma->dirty)
			return 0;
		err = grow((void **)&mem->shared_dirty_starts, &r->cap_shared,
			   mem->nr_shared_dirty + 1, sizeof(*mem->shared_dirty_starts));
		if (!err)
			mem->shared_dirty_starts[mem->nr_shared_dirty++] = vma->start;
		return err;
	}
	err = grow((void **)&mem->vmas, &r->cap_vmas, mem->nr_vmas + 1, sizeof(*mem->vmas));
	if (!err)
		err = grow((void **)&mem->pages, &r->cap_pages, mem->nr_pages + vma->nr_nodes,
			   sizeof(*mem->pages));
	if (err)
		return err;
	mem->vmas[mem->nr_vmas++] = (struct np_memory_vma){
	    .start = vma->start,
	    .page_bytes = vma->kernel_page_bytes,
	    .first = mem->nr_pages,
	    .nr_nodes = vma->nr_nodes,
	    .present = present,
	};
	memcpy(&mem->pages[mem->nr_pages], vma->nodes, vma->nr_nodes * sizeof(*vma->nodes));
	mem->nr_pages += vma->nr_nodes;
	return 0;
}

int np_memory_reader_new(struct np_memory_reader **out)
{
	struct np_memory_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	err = np_nm_parser_new(&r->parser, add_vma, r);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void np_memory_reader_free(struct np_memory_reader *reader)
{
	if (!reader)
		return;
	np_nm_parser_free(reader->parser);
	free(reader);
}

void np_task_memory_clear(struct np_task_memory *mem)
{
	free(mem->node_bytes);
	free(mem->anon_bytes);
	free(mem->movable_bytes);
	free(mem->vmas);
	free(mem->pages);
	free(mem->shared_dirty_starts);
	memset(mem, 0, sizeof(*mem));
}

uint64_t np_task_memory_policy_total(const struct np_task_memory *mem)
{
	uint64_t sum = 0;

	for (unsigned m = 0; m <= NP_MPOL_UNKNOWN; m++)
		sum += mem->policy_bytes[m];
	return sum;
}

uint64_t np_task_memory_unmovable_on(const struct np_task_memory *mem, int node)
{
	if (node < 0 || (unsigned)node >= mem->nr_node_slots)
		return 0;
	return mem->node_bytes[node] - mem->movable_bytes[node];
}

int np_memory_read(struct np_memory_reader *reader, struct np_ctx *ctx, int dirfd, const char *dir,
		   struct np_task_memory *out, uint64_t *bytes_read)
{
	const struct np_nm_totals *totals;
	unsigned slots;
	int err;

	memset(out, 0, sizeof(*out));
	reader->mem = out;
	reader->cap_vmas = reader->cap_pages = reader->cap_shared = 0;
	err = np_nm_read_task(ctx, dirfd, dir, reader->parser, bytes_read);
	reader->mem = NULL;
	if (err) {
		np_task_memory_clear(out);
		return err;
	}
	totals = np_nm_parser_totals(reader->parser);
	slots = totals->nr_node_slots;
	out->nr_node_slots = slots;
	out->node_bytes = calloc(slots + 1, sizeof(uint64_t));
	out->anon_bytes = calloc(slots + 1, sizeof(uint64_t));
	out->movable_bytes = calloc(slots + 1, sizeof(uint64_t));
	if (!out->node_bytes || !out->anon_bytes || !out->movable_bytes) {
		np_task_memory_clear(out);
		return -ENOMEM;
	}
	for (unsigned n = 0; n < slots; n++) {
		out->anon_bytes[n] = totals->anon_bytes[n];
		out->node_bytes[n] = totals->anon_bytes[n] + totals->file_bytes[n];
		out->total_bytes += out->node_bytes[n];
	}
	for (unsigned v = 0; v < out->nr_vmas; v++) {
		const struct np_memory_vma *vma = &out->vmas[v];

		for (unsigned i = 0; i < vma->nr_nodes; i++) {
			const struct np_nm_node_pages *np = &out->pages[vma->first + i];
			uint64_t bytes = np->pages * vma->page_bytes;

			/* The parser bounds node ids by its totals' slots. */
			out->movable_bytes[np->node] += bytes;
			out->movable_total += bytes;
		}
	}
	return 0;
}
