/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Everything one numa_maps parse produces, so a whole parse can be compared
 * with chunked ones; shared by test-numa-maps.c and the fuzz target. */
#pragma once

#include "numa_maps.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nm_outcome {
	int err;
	unsigned err_line;
	char msg[160];
	unsigned slots;
	uint64_t anon[NP_MAX_NODES], file[NP_MAX_NODES];
	uint64_t vmas, unknown, bytes_parsed;
	uint64_t digest; /* over every field of every VMA the callback saw */
	uint64_t callbacks;
	/* The callback's own sums, to hold the totals against. */
	uint64_t sum_anon[NP_MAX_NODES], sum_file[NP_MAX_NODES];
	bool sums_overflowed;
};

static inline void nm_mix(uint64_t *h, const void *data, size_t len)
{
	const unsigned char *s = data;

	for (size_t i = 0; i < len; i++)
		*h = (*h ^ s[i]) * 0x100000001b3ull;
}

static inline int nm_outcome_vma(void *data, const struct np_nm_vma *v)
{
	struct nm_outcome *o = data;
	uint64_t fields[] = {
	    v->start,	  v->policy,	     v->policy_flags, v->policy_truncated,
	    v->heap,	  v->stack,	     v->huge,	      (uint64_t)v->stack_tid,
	    v->anon,	  v->dirty,	     v->mapped,	      v->mapmax,
	    v->swapcache, v->active,	     v->writeback,    v->kernel_page_bytes,
	    v->nr_nodes,  v->unknown_tokens, v->line,	      v->file_len};
	uint64_t *sum = v->file ? o->sum_file : o->sum_anon;
	char nodes[256];

	nm_mix(&o->digest, fields, sizeof(fields));
	if (v->file)
		nm_mix(&o->digest, v->file, v->file_len + 1);
	for (unsigned i = 0; i < v->nr_nodes; i++) {
		uint64_t bytes;

		nm_mix(&o->digest, &v->nodes[i].node, sizeof(v->nodes[i].node));
		nm_mix(&o->digest, &v->nodes[i].pages, sizeof(v->nodes[i].pages));
		if (__builtin_mul_overflow(v->nodes[i].pages, v->kernel_page_bytes, &bytes) ||
		    __builtin_add_overflow(sum[v->nodes[i].node], bytes, &sum[v->nodes[i].node]))
			o->sums_overflowed = true;
	}
	np_nodeset_format_list(v->policy_nodes, nodes, sizeof(nodes));
	nm_mix(&o->digest, nodes, strlen(nodes));
	o->callbacks++;
	return 0;
}

/* Parse @len bytes of @buf in pieces of @chunk bytes (0: whole); with a
 * non-zero @seed, piece sizes are drawn at random from 1..@chunk. With
 * @no_callback the parser gets none (its totals-only path) and the VMA
 * digest and sums stay empty. */
static inline void nm_parse_with(struct nm_outcome *o, const char *buf, size_t len, size_t chunk,
				 uint64_t seed, bool no_callback)
{
	struct np_nm_parser *p;
	const struct np_nm_totals *t;
	size_t off = 0;
	int err = 0;

	memset(o, 0, sizeof(*o));
	o->digest = 0xcbf29ce484222325ull;
	if (np_nm_parser_new(&p, no_callback ? NULL : nm_outcome_vma, o) < 0)
		abort();
	if (chunk == 0)
		chunk = len ? len : 1;
	while (!err && off < len) {
		size_t n = chunk;

		if (seed) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			n = 1 + seed % chunk;
		}
		if (n > len - off)
			n = len - off;
		err = np_nm_parser_feed(p, buf + off, n);
		off += n;
	}
	if (!err)
		err = np_nm_parser_finish(p);
	o->err = err;
	o->err_line = np_nm_parser_error_line(p);
	snprintf(o->msg, sizeof(o->msg), "%s", np_nm_parser_error(p));
	t = np_nm_parser_totals(p);
	o->slots = t->nr_node_slots;
	memcpy(o->anon, t->anon_bytes, t->nr_node_slots * sizeof(uint64_t));
	memcpy(o->file, t->file_bytes, t->nr_node_slots * sizeof(uint64_t));
	o->vmas = t->vmas;
	o->unknown = t->unknown_tokens;
	o->bytes_parsed = t->bytes_parsed;
	np_nm_parser_free(p);
}

static inline void nm_parse(struct nm_outcome *o, const char *buf, size_t len, size_t chunk,
			    uint64_t seed)
{
	nm_parse_with(o, buf, len, chunk, seed, false);
}

/* Everything but what only the callback sees. */
static inline bool nm_same_totals(const struct nm_outcome *a, const struct nm_outcome *b)
{
	return a->err == b->err && a->err_line == b->err_line && strcmp(a->msg, b->msg) == 0 &&
	       a->slots == b->slots && memcmp(a->anon, b->anon, sizeof(a->anon)) == 0 &&
	       memcmp(a->file, b->file, sizeof(a->file)) == 0 && a->vmas == b->vmas &&
	       a->unknown == b->unknown && a->bytes_parsed == b->bytes_parsed;
}

static inline bool nm_same_outcome(const struct nm_outcome *a, const struct nm_outcome *b)
{
	return nm_same_totals(a, b) && a->digest == b->digest && a->callbacks == b->callbacks;
}
