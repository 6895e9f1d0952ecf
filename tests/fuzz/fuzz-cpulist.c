/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the kernel's set formats in lib/bitmap.c: the input
 * is parsed as a CPU list (cpulist, Cpus_allowed_list), a node list (node
 * online, Mems_allowed_list) and a CPU mask (Cpus_allowed). Only -EINVAL
 * and -ERANGE are errors. A parsed set formats as a list no longer than
 * the input (the formatter writes each run at its shortest), which parses
 * back to the same set and formats to the same text; a list with a number
 * of NP_MAX_NODES or more is never a node set. Any disagreement aborts.
 */
#include "bitmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Large enough for every CPU listed singly: "0,2,4,...,8190". */
#define LIST_MAX (NP_MAX_CPUS * 3)

static char text[LIST_MAX], text2[LIST_MAX];

/* The length of the input the list parser reads: without trailing
 * newlines and spaces. */
static size_t trimmed_len(const char *buf, size_t size)
{
	while (size && (buf[size - 1] == '\n' || buf[size - 1] == ' '))
		size--;
	return size;
}

static void check_bitmap_list(const struct np_bitmap *b, size_t max_len)
{
	struct np_bitmap again;
	size_t len = np_bitmap_format_list(b, text, sizeof(text));

	if (len >= sizeof(text) || strlen(text) != len || len > max_len)
		abort();
	if (np_bitmap_format_list(b, NULL, 0) != len)
		abort();
	if (np_bitmap_parse_list(&again, text, len) != 0 || !np_bitmap_equal(b, &again))
		abort();
	if (np_bitmap_format_list(&again, text2, sizeof(text2)) != len || memcmp(text, text2, len))
		abort();
	if (np_bitmap_empty(b) != (len == 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_bitmap *b = malloc(sizeof(*b)), *mask = malloc(sizeof(*mask));
	struct np_nodeset set, set2;
	int err, err_nodes;

	if (!b || !mask)
		goto out;
	err = np_bitmap_parse_list(b, buf, size);
	if (err != 0 && err != -EINVAL && err != -ERANGE)
		abort();
	if (err == 0)
		check_bitmap_list(b, trimmed_len(buf, size));

	/* Node sets: the same grammar, a smaller bound. */
	err_nodes = np_nodeset_parse_list(&set, buf, size);
	if (err_nodes != 0 && err_nodes != -EINVAL && err_nodes != -ERANGE)
		abort();
	if (err == -EINVAL && err_nodes == 0)
		abort(); /* bad syntax is bad whatever the bound */
	if (err_nodes == 0) {
		size_t len = np_nodeset_format_list(&set, text, sizeof(text));

		if (err != 0 || len > trimmed_len(buf, size) || strlen(text) != len)
			abort();
		if (np_nodeset_parse_list(&set2, text, len) != 0 || !np_nodeset_equal(&set, &set2))
			abort();
		/* The same numbers as the CPU list. */
		for (int bit = np_bitmap_next(b, 0); bit >= 0; bit = np_bitmap_next(b, bit + 1))
			if (bit >= NP_MAX_NODES || !np_nodeset_test(&set, (unsigned)bit))
				abort();
		if (np_bitmap_weight(b) != np_nodeset_weight(&set))
			abort();
	}

	err = np_bitmap_parse_mask(mask, buf, size);
	if (err != 0 && err != -EINVAL && err != -ERANGE)
		abort();
	if (err == 0)
		check_bitmap_list(mask, LIST_MAX);
out:
	free(b);
	free(mask);
	return 0;
}
