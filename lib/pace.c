/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pace.h"

#include <math.h>

#define NS_PER_S 1000000000ull

void np_token_bucket_init(struct np_token_bucket *b, uint64_t rate, uint64_t burst, uint64_t now_ns)
{
	b->rate = rate;
	b->burst = burst;
	b->tokens = burst;
	b->fraction = 0;
	b->last_ns = now_ns;
}

uint64_t np_token_bucket_take(struct np_token_bucket *b, uint64_t want, uint64_t now_ns)
{
	if (!b->rate)
		return want;
	if (now_ns > b->last_ns) {
		/* Earned in byte-nanoseconds, the remainder kept, so frequent
		 * small calls lose no fractions of a byte. */
		unsigned __int128 earned =
		    (unsigned __int128)b->rate * (now_ns - b->last_ns) + b->fraction;
		unsigned __int128 bytes = earned / NS_PER_S;

		b->last_ns = now_ns;
		if (bytes >= b->burst - b->tokens) {
			b->tokens = b->burst;
			b->fraction = 0;
		} else {
			b->tokens += (uint64_t)bytes;
			b->fraction = (uint64_t)(earned % NS_PER_S);
		}
	}
	if (want > b->tokens)
		want = b->tokens;
	b->tokens -= want;
	return want;
}

void np_token_bucket_refund(struct np_token_bucket *b, uint64_t bytes)
{
	if (!b->rate)
		return;
	b->tokens = bytes > b->burst - b->tokens ? b->burst : b->tokens + bytes;
}

void np_backoff_failed(struct np_backoff *b, uint64_t now_ns, uint64_t min_ns, uint64_t max_ns)
{
	uint64_t wait = min_ns;

	for (unsigned i = 0; i < b->failures && wait < max_ns; i++)
		wait *= 2;
	if (wait > max_ns)
		wait = max_ns;
	b->failures++;
	b->until_ns = now_ns + wait;
}

void np_backoff_succeeded(struct np_backoff *b)
{
	b->failures = 0;
	b->until_ns = 0;
}

bool np_backoff_waiting(const struct np_backoff *b, uint64_t now_ns)
{
	return b->failures && now_ns < b->until_ns;
}

unsigned np_batch_size_next(unsigned batch, uint64_t elapsed_ns, uint64_t target_ns)
{
	uint64_t ideal, next;

	if (!elapsed_ns)
		ideal = (uint64_t)batch * 2;
	else
		ideal = (uint64_t)((unsigned __int128)batch * target_ns / elapsed_ns);
	/* Down at once: a call that ran long held the target up, and the next
	 * should not. Up half way: one quick call (everything cached, nothing
	 * contended) should not swing the size all the way. */
	next = ideal < batch ? ideal : ((uint64_t)batch + ideal) / 2;
	if (next < NP_BATCH_PAGES_MIN)
		next = NP_BATCH_PAGES_MIN;
	if (next > NP_BATCH_PAGES_MAX)
		next = NP_BATCH_PAGES_MAX;
	return (unsigned)next;
}

void np_call_model_add(struct np_call_model *m, unsigned pages, uint64_t elapsed_ns)
{
	/* About the last ten calls count. */
	const double keep = 0.9;
	double n = pages, t = (double)elapsed_ns;

	m->w = m->w * keep + 1;
	m->sn = m->sn * keep + n;
	m->st = m->st * keep + t;
	m->snn = m->snn * keep + n * n;
	m->snt = m->snt * keep + n * t;
}

static unsigned clamp_pages(double n)
{
	if (n < NP_BATCH_PAGES_MIN)
		return NP_BATCH_PAGES_MIN;
	if (n > NP_BATCH_PAGES_MAX)
		return NP_BATCH_PAGES_MAX;
	return (unsigned)n;
}

/* The pages a call of @len ns holds at the mean cost per page of the
 * recent calls, their fixed cost included: calls grow by at most the
 * ratio of @len to what calls of their size took. One quick call (a huge
 * page moved whole, pages found already there) makes a fit or a ratio
 * say pages are cheap; the next call, over small pages, then took three
 * times its target (in the 2-node guest, two movers: 440-page calls of
 * 8.5 ms, then 880 pages in 16 ms, then 1668 in 33 ms). */
static double mean_cap(const struct np_call_model *m, double len)
{
	if (m->st <= 0 || m->sn <= 0)
		return NP_BATCH_PAGES_MAX;
	return len * m->sn / m->st;
}

unsigned np_call_model_batch(const struct np_call_model *m, uint64_t target_ns)
{
	double var = m->w * m->snn - m->sn * m->sn, slope, fixed, len, n, cap;

	/* Fewer than two calls, or sizes too alike to separate the costs. */
	if (m->w < 1.5 || var <= 1e-3 * m->sn * m->sn)
		return 0;
	slope = (m->w * m->snt - m->sn * m->st) / var;
	if (slope <= 0)
		return 0; /* noise larger than the signal */
	fixed = (m->st - slope * m->sn) / m->w;
	if (fixed < 0)
		fixed = 0;
	/* Calls of the target's length. Where the fixed cost is over half of
	 * it, calls of the target move little: they grow until it is half of
	 * each, but only while the recent calls took longer than the target
	 * on average. A fit's fixed cost can be its error: one quick call of
	 * many pages pulls the slope down and the intercept up. */
	len = (double)target_ns;
	if (2 * fixed > len && m->st / m->w > len)
		len = 2 * fixed;
	n = (len - fixed) / slope;
	cap = mean_cap(m, len);
	return clamp_pages(n < cap ? n : cap);
}

unsigned np_call_model_cap(const struct np_call_model *m, uint64_t len_ns)
{
	return clamp_pages(mean_cap(m, (double)len_ns));
}

unsigned np_call_model_next(struct np_call_model *m, unsigned batch, unsigned pages,
			    uint64_t elapsed_ns, uint64_t target_ns)
{
	unsigned fitted, next, cap;

	np_call_model_add(m, pages, elapsed_ns);
	fitted = np_call_model_batch(m, target_ns);
	if (fitted)
		return fitted < 2 * batch ? fitted : 2 * batch;
	if (!pages || pages < batch / 2)
		return batch;
	next = np_batch_size_next(batch, elapsed_ns * batch / pages, target_ns);
	cap = np_call_model_cap(m, target_ns);
	return next < cap ? next : cap;
}

unsigned np_movers_for_load(unsigned movers, double busy, unsigned cpus, unsigned most)
{
	unsigned top = 2 * movers < most ? 2 * movers : most;
	double want;

	if (movers <= 1 || top <= movers || !cpus)
		return movers < most ? movers : most;
	if (!(busy > 0)) /* also NaN */
		busy = 0;
	if (busy > cpus)
		busy = cpus;
	/* No more CPUs than movers: more would only queue up. */
	if (busy + movers <= cpus || cpus <= movers)
		return movers;
	want = round(movers * busy / (cpus - movers));
	if (want < movers)
		return movers;
	return want > top ? top : (unsigned)want;
}
