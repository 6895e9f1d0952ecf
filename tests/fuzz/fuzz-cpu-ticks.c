/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_cpu_ticks_parse(): any bytes as /proc/stat. The
 * same result twice; -EINVAL names a line the input has; on success at most
 * one entry per "cpuN" line, busy never above total and neither wrapped:
 * the columns are bounded so that their sum fits. Any disagreement aborts.
 */
#include "task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_cpu_ticks *a = NULL, *b = NULL;
	unsigned na = 0, nb = 0, bad_a, bad_b, lines = 1, cpu_lines = 0;
	int err;

	for (size_t i = 0; i < size; i++) {
		lines += buf[i] == '\n';
		if ((i == 0 || buf[i - 1] == '\n') && size - i > 3 && memcmp(buf + i, "cpu", 3) == 0)
			cpu_lines++;
	}
	err = np_cpu_ticks_parse(buf, size, &a, &na, &bad_a);
	if (err == -ENOMEM)
		return 0;
	if (np_cpu_ticks_parse(buf, size, &b, &nb, &bad_b) != err || bad_a != bad_b)
		abort();
	if (err) {
		if (err != -EINVAL || bad_a < 1 || bad_a > lines)
			abort();
		return 0;
	}
	if (bad_a != 0 || na != nb || na > cpu_lines || (na == 0) != (a == NULL))
		abort();
	for (unsigned i = 0; i < na; i++)
		if (a[i].cpu != b[i].cpu || a[i].busy != b[i].busy || a[i].total != b[i].total ||
		    a[i].cpu < 0 || a[i].busy > a[i].total || a[i].total > UINT64_MAX / 2)
			abort();
	free(a);
	free(b);
	return 0;
}
