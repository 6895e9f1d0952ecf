/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_uptime_parse(): any bytes as /proc/uptime. The
 * same result twice, nothing written on -EINVAL, and on success the
 * milliseconds agree with the seconds and the first three decimals as
 * written (counted here another way). Any disagreement aborts.
 */
#include "task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	uint64_t a = 12345, b = 12345, secs = 0, frac = 0;
	size_t i = 0;
	int err;

	err = np_uptime_parse(buf, size, &a);
	if (err != 0 && err != -EINVAL)
		abort();
	if (np_uptime_parse(buf, size, &b) != err || a != b)
		abort();
	if (err) {
		if (a != 12345)
			abort();
		return 0;
	}
	for (; i < size && buf[i] >= '0' && buf[i] <= '9'; i++)
		if (__builtin_mul_overflow(secs, 10, &secs) ||
		    __builtin_add_overflow(secs, (uint64_t)(buf[i] - '0'), &secs))
			abort(); /* accepted seconds that do not fit */
	if (i == 0)
		abort();
	if (i < size && buf[i] == '.')
		for (unsigned d = 0; ++i < size && buf[i] >= '0' && buf[i] <= '9'; d++)
			if (d < 3)
				frac += (uint64_t)(buf[i] - '0') * (d == 0 ? 100 : d == 1 ? 10 : 1);
	if (i < size && buf[i] != ' ' && buf[i] != '\n')
		abort();
	if (a / 1000 != secs || a % 1000 != frac)
		abort();
	return 0;
}
