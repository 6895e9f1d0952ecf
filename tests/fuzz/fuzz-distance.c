/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_distance_parse(): the first byte picks how many
 * nodes are online (1..64), the rest is a node's distance file. The same
 * result twice; nothing written on -EINVAL; on success @n distances of
 * 1..255 that, printed as the kernel prints them, parse back the same, and
 * no count but @n is accepted for the same text. Any disagreement aborts.
 */
#include "topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_N 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned a[MAX_N + 1], b[MAX_N + 1], c[MAX_N + 1], n;
	const char *buf = (const char *)data + 1;
	char text[MAX_N * 4 + 2];
	size_t len = 0;
	int err;

	if (size < 1)
		return 0;
	n = 1 + data[0] % MAX_N;
	size--;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	err = np_distance_parse(buf, size, n, a);
	if (err != 0 && err != -EINVAL)
		abort();
	if (np_distance_parse(buf, size, n, b) != err || memcmp(a, b, sizeof(a)))
		abort();
	if (err) {
		for (unsigned j = 0; j <= MAX_N; j++)
			if (a[j])
				abort();
		return 0;
	}
	if (a[n] != 0)
		abort(); /* wrote past @n */
	for (unsigned j = 0; j < n; j++) {
		if (a[j] < 1 || a[j] > 255)
			abort();
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%u", j ? " " : "", a[j]);
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len, "\n");
	if (np_distance_parse(text, len, n, c) != 0 || memcmp(a, c, n * sizeof(*a)))
		abort();
	if (np_distance_parse(buf, size, n + 1, c) == 0 ||
	    (n > 1 && np_distance_parse(buf, size, n - 1, c) == 0))
		abort();
	return 0;
}
