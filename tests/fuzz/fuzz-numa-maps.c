/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the numa_maps parser. The input is numa_maps text;
 * it is parsed whole, in random chunks (sizes drawn from a seed hashed from
 * the input, so a crash replays) and, when short, one byte at a time. All
 * three must agree on everything, and what the callback saw must add up to
 * the totals; a parse without a callback must give the same totals. Any
 * disagreement aborts.
 */
#include "nm-outcome.h"
#include "numa_maps.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nm_outcome whole, cut;

static void check_outcome(const struct nm_outcome *o, const char *buf, size_t size)
{
	uint64_t newlines = 0;

	if (o->err != 0 && o->err != -EINVAL)
		abort();
	if (o->err && (o->err_line == 0 || o->msg[0] == '\0'))
		abort();
	if (!o->err && o->bytes_parsed != size)
		abort();
	if (o->callbacks != o->vmas || o->sums_overflowed || o->slots > NP_MAX_NODES)
		abort();
	if (memcmp(o->anon, o->sum_anon, sizeof(o->anon)) ||
	    memcmp(o->file, o->sum_file, sizeof(o->file)))
		abort();
	/* Every VMA is one complete line. */
	for (size_t i = 0; i < size; i++)
		newlines += buf[i] == '\n';
	if (o->vmas > newlines || (!o->err && o->vmas != newlines))
		abort();
}

static int check_vma(void *data, const struct np_nm_vma *v)
{
	if (v->nr_nodes > NP_MAX_NODES || v->policy > NP_MPOL_UNKNOWN ||
	    (v->kernel_page_bytes & (v->kernel_page_bytes - 1)) || v->kernel_page_bytes < 1024)
		abort();
	for (unsigned i = 0; i < v->nr_nodes; i++)
		if (v->nodes[i].node < 0 || v->nodes[i].node >= NP_MAX_NODES ||
		    (i && v->nodes[i].node <= v->nodes[i - 1].node))
			abort();
	if (v->file && strlen(v->file) != v->file_len)
		abort();
	return nm_outcome_vma(data, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	uint64_t seed = 0xcbf29ce484222325ull;
	struct np_nm_parser *p;

	nm_mix(&seed, data, size);
	nm_parse(&whole, buf, size, 0, 0);
	check_outcome(&whole, buf, size);
	nm_parse(&cut, buf, size, 1 + seed % 64, seed | 1);
	if (!nm_same_outcome(&whole, &cut))
		abort();
	nm_parse_with(&cut, buf, size, 1 + seed % 512, 0, true);
	if (!nm_same_totals(&whole, &cut))
		abort();
	if (size <= 4096) {
		nm_parse(&cut, buf, size, 1, 0);
		if (!nm_same_outcome(&whole, &cut))
			abort();
	}

	/* The per-VMA invariants, checked on a parse of its own. */
	if (np_nm_parser_new(&p, check_vma, &cut) == 0) {
		memset(&cut, 0, sizeof(cut));
		if (np_nm_parser_feed(p, buf, size) == 0)
			np_nm_parser_finish(p);
		np_nm_parser_free(p);
	}
	return 0;
}
