/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_stat_parse(): any bytes, never a crash or an
 * over-read (the input buffer is exactly @size bytes), the same result
 * twice, and on success a comm that is what lies between the first '(' and
 * the last ')', cut to NP_COMM_MAX - 1 bytes.
 */
#include "task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_stat a, b;
	const char *open, *close;
	size_t comm_len;
	int err;

	err = np_stat_parse(buf, size, &a);
	if (err != 0 && err != -EINVAL)
		abort();
	if (np_stat_parse(buf, size, &b) != err || memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	if (err)
		return 0;
	open = memchr(buf, '(', size);
	close = memrchr(buf, ')', size);
	if (a.pid <= 0 || !open || !close || close < open)
		abort();
	comm_len = (size_t)(close - open - 1);
	if (comm_len >= NP_COMM_MAX)
		comm_len = NP_COMM_MAX - 1;
	if (memcmp(a.comm, open + 1, comm_len) != 0 || a.comm[comm_len] != '\0')
		abort();
	return 0;
}
