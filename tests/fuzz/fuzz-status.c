/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_status_parse(): any bytes as /proc/PID/status.
 * The same result twice; -EINVAL names a line the input has; on success
 * the values are in range, and a trailing empty line or an unknown line
 * added at the end changes nothing (unknown lines are ignored). And for
 * np_status_tgid() on the same bytes: a pid (1..INT_MAX) or -EINVAL, the
 * same again, and the same with an unknown line added. Any disagreement
 * aborts.
 */
#include "task.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_status(const struct np_status *a, const struct np_status *b)
{
	return a->vm_rss_bytes == b->vm_rss_bytes && a->threads == b->threads &&
	       a->has_cpus_allowed == b->has_cpus_allowed &&
	       a->has_mems_allowed == b->has_mems_allowed && a->bad_line == b->bad_line &&
	       np_bitmap_equal(&a->cpus_allowed, &b->cpus_allowed) &&
	       np_nodeset_equal(&a->mems_allowed, &b->mems_allowed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tail[] = "\nSomething_new:\t1 2 3\n";
	const char *buf = (const char *)data;
	struct np_status *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char *longer = malloc(size + sizeof(tail));
	unsigned lines = 1;
	int err, tgid;

	if (!a || !b || !longer)
		goto out;
	tgid = np_status_tgid(buf, size);
	if ((tgid != -EINVAL && tgid < 1) || np_status_tgid(buf, size) != tgid)
		abort();
	memcpy(longer, buf, size);
	memcpy(longer + size, tail, sizeof(tail) - 1);
	if (np_status_tgid(longer, size + sizeof(tail) - 1) != tgid)
		abort();
	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	err = np_status_parse(buf, size, a);
	if (err != 0 && err != -EINVAL)
		abort();
	if (np_status_parse(buf, size, b) != err || !same_status(a, b))
		abort();
	if (err) {
		if (a->bad_line < 1 || a->bad_line > lines)
			abort();
		goto out;
	}
	if (a->bad_line != 0 || a->threads < 0 || a->vm_rss_bytes % 1024 ||
	    (!a->has_cpus_allowed && !np_bitmap_empty(&a->cpus_allowed)) ||
	    (!a->has_mems_allowed && !np_nodeset_empty(&a->mems_allowed)))
		abort();
	/* An unknown line after the last: ignored. If the input ends without a
	 * newline, the first byte of the tail ends its last line. */
	memcpy(longer, buf, size);
	memcpy(longer + size, tail, sizeof(tail) - 1);
	if (np_status_parse(longer, size + sizeof(tail) - 1, b) != 0 || !same_status(a, b))
		abort();
out:
	free(a);
	free(b);
	free(longer);
	return 0;
}
