/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_maps_parse(): any bytes as /proc/PID/maps. The
 * same result twice; -EINVAL names a line the input has; on success one
 * range per line, each non-empty, sorted by start, and a range marked
 * shared and writable has an inode. Any disagreement aborts.
 */
#include "pageplan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Field by field: the struct has padding, which nothing sets. */
static bool same_range(const struct np_vma_range *a, const struct np_vma_range *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->shared_writable == b->shared_writable && a->dev == b->dev &&
	       a->inode == b->inode;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_vma_range *a = NULL, *b = NULL;
	unsigned na = 0, nb = 0, line_a = 0, line_b = 0, lines = 0;
	int err;

	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	if (size && buf[size - 1] != '\n')
		lines++; /* a last line without its newline */
	err = np_maps_parse(buf, size, &a, &na, &line_a);
	if (err == -ENOMEM)
		return 0;
	if (np_maps_parse(buf, size, &b, &nb, &line_b) != err)
		abort();
	if (err) {
		if (err != -EINVAL || line_a != line_b || line_a < 1 || line_a > lines)
			abort();
		return 0;
	}
	if (na != nb || na != lines)
		abort();
	for (unsigned i = 0; i < na; i++) {
		if (!same_range(&a[i], &b[i]))
			abort();
		if (a[i].start >= a[i].end || (i && a[i - 1].start > a[i].start))
			abort();
		if (a[i].shared_writable && a[i].inode == 0)
			abort();
	}
	free(a);
	free(b);
	return 0;
}
