/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_meminfo_parse(): any bytes as a node's meminfo or
 * /proc/meminfo. The same result twice; -EINVAL leaves the node as it was
 * and names a line the input has (or 0: no MemTotal); on success the
 * figures are whole KiB, other fields are untouched, and lines the parser
 * does not know added at the end change nothing. Any disagreement aborts.
 */
#include "topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Field by field: struct copies need not keep the padding. */
static bool same_node(const struct np_node *a, const struct np_node *b)
{
	return a->id == b->id && np_bitmap_equal(&a->cpus, &b->cpus) && a->nr_cpus == b->nr_cpus &&
	       a->mem_total == b->mem_total && a->mem_free == b->mem_free &&
	       a->file_pages == b->file_pages;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tail[] = "\nNode 0 Shmem:   4 kB\nHugePages_Total:  0\n";
	const char *buf = (const char *)data;
	struct np_node *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct np_node *before = malloc(sizeof(*before));
	char *longer = malloc(size + sizeof(tail));
	unsigned bad_a = 99, bad_b = 99, lines = 1;
	int err;

	if (!a || !b || !before || !longer)
		goto out;
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	a->id = b->id = 3;
	a->mem_total = b->mem_total = 1;
	np_bitmap_set(&a->cpus, 5);
	np_bitmap_set(&b->cpus, 5);
	*before = *a;
	err = np_meminfo_parse(buf, size, a, &bad_a);
	if (err != 0 && err != -EINVAL)
		abort();
	if (np_meminfo_parse(buf, size, b, &bad_b) != err || bad_a != bad_b || !same_node(a, b))
		abort();
	if (err) {
		if (bad_a > lines || !same_node(a, before))
			abort();
		goto out;
	}
	if (bad_a != 0 || a->id != 3 || a->nr_cpus != 0 || !np_bitmap_equal(&a->cpus, &before->cpus) ||
	    a->mem_total % 1024 || a->mem_free % 1024 || a->file_pages % 1024)
		abort();
	memcpy(longer, buf, size);
	memcpy(longer + size, tail, sizeof(tail) - 1);
	*b = *before;
	if (np_meminfo_parse(longer, size + sizeof(tail) - 1, b, &bad_b) != 0 || !same_node(a, b))
		abort();
out:
	free(a);
	free(b);
	free(before);
	free(longer);
	return 0;
}
