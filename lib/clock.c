/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct np_clock {
	bool is_virtual;
	uint64_t virtual_ms;
};

static int clock_new(bool is_virtual, uint64_t start_ms, struct np_clock **out)
{
	struct np_clock *clock = calloc(1, sizeof(*clock));

	if (!clock)
		return -ENOMEM;
	clock->is_virtual = is_virtual;
	clock->virtual_ms = start_ms;
	*out = clock;
	return 0;
}

int np_clock_new_monotonic(struct np_clock **out)
{
	return clock_new(false, 0, out);
}

int np_clock_new_virtual(uint64_t start_ms, struct np_clock **out)
{
	return clock_new(true, start_ms, out);
}

void np_clock_free(struct np_clock *clock)
{
	free(clock);
}

uint64_t np_clock_now_ms(const struct np_clock *clock)
{
	struct timespec ts;

	if (clock->is_virtual)
		return clock->virtual_ms;
	/* CLOCK_MONOTONIC cannot fail with a valid pointer and clock id. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool np_clock_is_virtual(const struct np_clock *clock)
{
	return clock->is_virtual;
}

int np_clock_advance(struct np_clock *clock, uint64_t ms)
{
	if (!clock->is_virtual || clock->virtual_ms + ms < clock->virtual_ms)
		return -EINVAL;
	clock->virtual_ms += ms;
	return 0;
}

int np_clock_set(struct np_clock *clock, uint64_t ms)
{
	if (!clock->is_virtual || ms < clock->virtual_ms)
		return -EINVAL;
	clock->virtual_ms = ms;
	return 0;
}
