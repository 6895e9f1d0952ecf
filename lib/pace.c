/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pace.h"

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

/* A call's fixed cost is kept under 1/FIXED_SHARE_INV of it, by calls up to
 * STRETCH_MAX times the target: in the 2-node guest the fixed cost was 2 ms
 * (batches of 512 pages moved 100,000 in 2327 ms, of 4096 in 1973 ms), a
 * tenth of a 20 ms call, so 20 ms calls lost 10% to it; 40 ms calls lose
 * 5%. On real hardware, where it is tens of microseconds, the target rules. */
#define FIXED_SHARE_INV 20.0
#define STRETCH_MAX 4.0

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

unsigned np_call_model_batch(const struct np_call_model *m, uint64_t target_ns,
			     unsigned in_flight)
{
	double var = m->w * m->snn - m->sn * m->sn, slope, fixed, len, n;

	/* Fewer than two calls, or sizes too alike to separate the costs. */
	if (m->w < 1.5 || var <= 1e-3 * m->sn * m->sn)
		return 0;
	slope = (m->w * m->snt - m->sn * m->st) / var;
	if (slope <= 0)
		return 0; /* noise larger than the signal */
	fixed = (m->st - slope * m->sn) / m->w;
	if (fixed < 0)
		fixed = 0;
	/* A call long enough for the fixed cost to be a small share, within
	 * the stretch allowed; when even that leaves it over half, half. A
	 * call waiting out its fixed cost (an expedited RCU grace period, the
	 * other CPUs' LRU drains) leaves the CPU to the calls beside it: in
	 * the 2-node guest two threads' calls of 512 pages, each ~15 ms,
	 * moved 100,000 pages faster than any single thread's calls of any
	 * size. */
	len = in_flight > 1 ? 0 : FIXED_SHARE_INV * fixed;
	if (len < (double)target_ns)
		len = (double)target_ns;
	if (len > STRETCH_MAX * (double)target_ns)
		len = STRETCH_MAX * (double)target_ns;
	if (2 * fixed > len)
		len = 2 * fixed;
	n = (len - fixed) / slope;
	/* Calls beside others keep to the target while the recent ones met
	 * it on average: a fixed cost over half of it is then the fit's
	 * error (a quick call of many pages pulls the slope down and the
	 * intercept up), not the machine's. */
	if (in_flight > 1 && m->st / m->w <= (double)target_ns)
		len = (double)target_ns;
	return clamp_pages(n < mean_cap(m, len) ? n : mean_cap(m, len));
}

unsigned np_call_model_cap(const struct np_call_model *m, uint64_t len_ns)
{
	return clamp_pages(mean_cap(m, (double)len_ns));
}
