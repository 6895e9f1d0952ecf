/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * Pacing for page migration, pure and clocked by the caller (nanoseconds of
 * any monotonic clock), so tests run on virtual time: a global byte rate, a
 * per-task backoff after failures, and a call size that follows the measured
 * call time.
 */

/* A token bucket of bytes refilled at @rate bytes/s up to @burst. */
struct np_token_bucket {
	uint64_t rate;	/* bytes per second; 0 = unlimited */
	uint64_t burst; /* bytes */
	uint64_t tokens;
	uint64_t fraction; /* byte-nanoseconds earned short of a whole byte */
	uint64_t last_ns;
};

void np_token_bucket_init(struct np_token_bucket *b, uint64_t rate, uint64_t burst,
			  uint64_t now_ns);

/* Refill for the time up to @now_ns, then take up to @want bytes; returns
 * what was granted (@want when unlimited). */
uint64_t np_token_bucket_take(struct np_token_bucket *b, uint64_t want, uint64_t now_ns);

/* Return granted bytes that were not used. */
void np_token_bucket_refund(struct np_token_bucket *b, uint64_t bytes);

/* Exponential backoff after failures: min, 2 min, 4 min ... capped. */
struct np_backoff {
	unsigned failures;
	uint64_t until_ns;
};

void np_backoff_failed(struct np_backoff *b, uint64_t now_ns, uint64_t min_ns, uint64_t max_ns);
void np_backoff_succeeded(struct np_backoff *b);
bool np_backoff_waiting(const struct np_backoff *b, uint64_t now_ns);

#define NP_BATCH_PAGES_MIN 16
#define NP_BATCH_PAGES_MAX 16384

/* The next batch size: scaled so a call of @batch pages that took
 * @elapsed_ns would take @target_ns; down at once, up half way, within
 * NP_BATCH_PAGES_MIN..NP_BATCH_PAGES_MAX pages. */
unsigned np_batch_size_next(unsigned batch, uint64_t elapsed_ns, uint64_t target_ns);
