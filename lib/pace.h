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

/* Start full (@burst bytes) at @now_ns; @rate 0 means no limit. */
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

/* Record a failure at @now_ns: the wait doubles from @min_ns up to @max_ns. */
void np_backoff_failed(struct np_backoff *b, uint64_t now_ns, uint64_t min_ns, uint64_t max_ns);
/* A success resets the wait. */
void np_backoff_succeeded(struct np_backoff *b);
/* True while a wait started by a failure lasts. */
bool np_backoff_waiting(const struct np_backoff *b, uint64_t now_ns);

#define NP_BATCH_PAGES_MIN 16
#define NP_BATCH_PAGES_MAX 16384

/*
 * Call time as fixed + per_page * n, fitted by least squares over recent
 * calls (older ones weigh less). move_pages has a fixed cost per call that
 * grows with the machine's load (it drains every CPU's LRU caches first):
 * in a busy 2-node guest calls of ~140 pages averaged 166 ms while the
 * kernel moved the same memory in one migrate_pages at 0.2 ms a page.
 * Shrinking calls toward a time target the fixed cost alone exceeds only
 * multiplies it.
 */
struct np_call_model {
	double w, sn, st, snn, snt;
};

/* Add a call of @pages that took @elapsed_ns. */
void np_call_model_add(struct np_call_model *m, unsigned pages, uint64_t elapsed_ns);

/* The call size for @target_ns: what fits beside the fixed cost. Where
 * the fixed cost is over half the target and the recent calls took
 * longer than it, to where the fixed cost is half a call; never past
 * np_call_model_cap of the call's length. 0 until calls of different
 * sizes give a fit. */
unsigned np_call_model_batch(const struct np_call_model *m, uint64_t target_ns);

/* The largest call of @len_ns at the mean cost per page of the recent
 * calls (fixed cost included), within NP_BATCH_PAGES_MIN..MAX; MAX with
 * no calls yet: a size grows by at most the ratio of its length to what
 * recent calls took. One slow call holds sizes down for the ten or so
 * calls it weighs in the mean. */
unsigned np_call_model_cap(const struct np_call_model *m, uint64_t len_ns);

/* The size after a call of @pages that took @elapsed_ns, the size being
 * @batch: the call is added to @m; by its fit once there is one, at most
 * doubling per call; until then in proportion (np_batch_size_next), where
 * a range's tail (under half the size: its fixed cost says little about
 * a full call) leaves the size as it is. Either way no longer than
 * @target_ns at the recent calls' mean cost per page (np_call_model_cap). */
unsigned np_call_model_next(struct np_call_model *m, unsigned batch, unsigned pages,
			    uint64_t elapsed_ns, uint64_t target_ns);

/*
 * The movers of one move (calls in flight at once on its pages), @movers
 * being what it gets on CPUs nobody else uses (migrate_threads), when
 * other threads keep @busy of the machine's @cpus CPUs busy. Where they
 * leave @movers CPUs free, @movers. Otherwise the movers share the CPUs
 * with those threads, each runnable thread getting about an equal part:
 * m movers get m * cpus / (busy + m) CPUs, which is @movers CPUs' worth at
 * m = movers * busy / (cpus - movers), rounded; at least @movers, at most
 * twice @movers and @most. A machine with no more CPUs than @movers, or
 * @cpus 0 (not known): @movers (more would only queue up). One mover stays
 * one: no calls in parallel at all.
 */
unsigned np_movers_for_load(unsigned movers, double busy, unsigned cpus, unsigned most);

/* The next batch size: scaled so a call of @batch pages that took
 * @elapsed_ns would take @target_ns; down at once, up half way, within
 * NP_BATCH_PAGES_MIN..NP_BATCH_PAGES_MAX pages. */
unsigned np_batch_size_next(unsigned batch, uint64_t elapsed_ns, uint64_t target_ns);
