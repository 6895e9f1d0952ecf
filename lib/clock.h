/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Where the daemon's sense of time comes from. The running daemon reads
 * CLOCK_MONOTONIC; tests and trace replay use a virtual clock that only moves
 * when told to, so every run over the same input makes the same decisions.
 * Times are milliseconds.
 */
struct np_clock;

/* A clock reading CLOCK_MONOTONIC. Returns 0 or -ENOMEM. */
int np_clock_new_monotonic(struct np_clock **out);

/* A virtual clock standing at @start_ms. Returns 0 or -ENOMEM. */
int np_clock_new_virtual(uint64_t start_ms, struct np_clock **out);

/* Free a clock; NULL is accepted. */
void np_clock_free(struct np_clock *clock);

/* The current time in milliseconds. */
uint64_t np_clock_now_ms(const struct np_clock *clock);

/* True for a virtual clock (tests, replay). */
bool np_clock_is_virtual(const struct np_clock *clock);

/* Move a virtual clock forward by @ms. Returns 0, or -EINVAL on a real
 * clock (which nobody can move). */
int np_clock_advance(struct np_clock *clock, uint64_t ms);

/* Set a virtual clock to @ms. Time never goes back: -EINVAL when @ms is
 * before the current time or the clock is real. */
int np_clock_set(struct np_clock *clock, uint64_t ms);

/*
 * The lead by which a tick may take a wait as over: half a tick, at most
 * half of @shortest_wait_ms (so a wait still spans a tick). Ticks come
 * @tick_ms apart, give or take a few ms: a wait that ends between two
 * is best taken as over at the tick nearest its end; the first tick after
 * the end is, as often as not (a tick fired a ms early), a whole tick late.
 * A @tick_ms of 0 (looks at any time) leads by nothing.
 */
static inline uint64_t np_tick_lead_ms(uint64_t tick_ms, uint64_t shortest_wait_ms)
{
	return (tick_ms < shortest_wait_ms ? tick_ms : shortest_wait_ms) / 2;
}
