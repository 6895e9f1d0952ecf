/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "sample.h"

#include <math.h>

#define PAGE 4096u

static bool near(double a, double b, double eps)
{
	return fabs(a - b) <= eps;
}

/* Every drawn address is page-aligned, inside a range, and sorted; each
 * range gets draws in proportion to its size. */
static void test_draw_uniform(void)
{
	/* 100 pages, 900 pages, a gap, 99,000 pages: 100,000 in all. */
	struct np_vma_range r[3] = {
	    {.start = 0x100000, .end = 0x100000 + 100 * PAGE},
	    {.start = 0x1000000, .end = 0x1000000 + 900 * PAGE},
	    {.start = 0x7f0000000000, .end = 0x7f0000000000 + 99000ull * PAGE},
	};
	enum { K = 20000 };
	static uint64_t addrs[K];
	struct np_sample_rng rng = {42};
	unsigned in[3] = {0}, n;

	CHECK_U64(np_sample_span(r, 3, PAGE), 100000);
	n = np_sample_draw(r, 3, PAGE, K, &rng, addrs);
	CHECK_INT(n, K);
	for (unsigned j = 0; j < n; j++) {
		int which = -1;

		CHECK(addrs[j] % PAGE == 0);
		CHECK(j == 0 || addrs[j - 1] <= addrs[j]);
		for (int i = 0; i < 3; i++)
			if (addrs[j] >= r[i].start && addrs[j] < r[i].end)
				which = i;
		CHECK(which >= 0);
		if (which >= 0)
			in[which]++;
	}
	/* Expected 20, 180, 19800; within 5 binomial standard deviations. */
	CHECK(in[0] <= 20 + 23);
	CHECK(in[1] >= 180 - 67 && in[1] <= 180 + 67);
	CHECK(in[2] >= 19800 - 70 && in[2] <= 19800 + 70);
	/* The same seed draws the same sample. */
	{
		static uint64_t again[K];
		struct np_sample_rng rng2 = {42};

		np_sample_draw(r, 3, PAGE, K, &rng2, again);
		CHECK(memcmp(addrs, again, sizeof(addrs)) == 0);
	}
}

/* A span no larger than k: every page once, and the look is exact. */
static void test_draw_small_span(void)
{
	struct np_vma_range r[2] = {
	    {.start = 0x1000, .end = 0x1000 + 2 * PAGE},
	    {.start = 0x9000, .end = 0x9000 + 3 * PAGE},
	};
	uint64_t addrs[8];
	struct np_sample_rng rng = {0};

	CHECK_INT(np_sample_draw(r, 2, PAGE, 8, &rng, addrs), 5);
	CHECK_U64(addrs[0], 0x1000);
	CHECK_U64(addrs[1], 0x2000);
	CHECK_U64(addrs[2], 0x9000);
	CHECK_U64(addrs[4], 0xb000);
	CHECK_INT(np_sample_draw(r, 0, PAGE, 8, &rng, addrs), 0);
	CHECK_INT(np_sample_draw(r, 2, PAGE, 0, &rng, addrs), 0);
	/* An empty or inverted range spans nothing. */
	r[1].end = r[1].start;
	CHECK_U64(np_sample_span(r, 2, PAGE), 2);
}

/* Wilson's interval, against values worked out by hand from its formula. */
static void test_wilson(void)
{
	struct np_sample_interval iv = np_sample_wilson(0, 0);

	CHECK(iv.lo == 0 && iv.hi == 1);
	/* 50 of 100: 0.5, [0.4038, 0.5962]. */
	iv = np_sample_wilson(50, 100);
	CHECK(near(iv.estimate, 0.5, 1e-12));
	CHECK(near(iv.lo, 0.4038, 1e-4));
	CHECK(near(iv.hi, 0.5962, 1e-4));
	/* 0 of 10: [0, 0.2775]; never below 0. */
	iv = np_sample_wilson(0, 10);
	CHECK(iv.lo == 0);
	CHECK(near(iv.hi, 0.2775, 1e-4));
	/* 10 of 10: [0.7225, 1]. */
	iv = np_sample_wilson(10, 10);
	CHECK(near(iv.lo, 0.7225, 1e-4));
	CHECK(near(iv.hi, 1, 1e-9));
	/* 2,401 draws bound any proportion within 2 points. */
	iv = np_sample_wilson(1200, 2401);
	CHECK(iv.hi - iv.lo <= 0.04);
}

/* Counting lookups, and deciding against a target. */
static void test_count_decide(void)
{
	unsigned on[2] = {0};
	struct np_sample_count c = {.on_node = on, .max_node = 2};
	int status[10] = {0, 0, 0, 0, 0, 0, 0, 1, -14, -2};
	int far[1] = {5};
	struct np_nodeset both = {{0}};

	np_sample_add(&c, status, 10);
	np_sample_add(&c, far, 1);
	CHECK_INT(c.drawn, 11);
	CHECK_INT(c.present, 9);
	CHECK_INT(on[0], 7);
	CHECK_INT(on[1], 1);
	CHECK_INT(c.other, 1);
	/* 7 of 9 on node 0 is [0.453, 0.937]: it cannot say against 90%,
	 * nor against 50%; it can against 40% (lo 0.453 >= 0.4). */
	CHECK(!np_sample_decides(&c, c.on_node[0], 0.9));
	CHECK(!np_sample_decides(&c, c.on_node[0], 0.5));
	CHECK(np_sample_decides(&c, c.on_node[0], 0.4));
	/* Node 1: 1 of 9 is [0.020, 0.435]: below 90% for sure. */
	CHECK(np_sample_decides(&c, c.on_node[1], 0.9));
	/* Over a set: nodes 0 and 1 hold 8 of 9 ([0.565, 0.980]); a node
	 * past the count's (5) holds none of them. */
	np_nodeset_set(&both, 0);
	np_nodeset_set(&both, 1);
	np_nodeset_set(&both, 5);
	CHECK_INT(np_sample_hits(&c, &both), 8);
	CHECK(np_sample_decides(&c, np_sample_hits(&c, &both), 0.5));
	/* An exact look always decides. */
	c.exact = true;
	CHECK(np_sample_decides(&c, c.on_node[0], 0.9));
}

/* The error bound holds: over many samples of a known 70/30 layout, the
 * truth lies inside the 95% interval about 95% of the time. */
static void test_coverage(void)
{
	struct np_vma_range r = {.start = 0, .end = 10000ull * PAGE};
	static uint64_t addrs[1000];
	struct np_sample_rng rng = {7};
	unsigned covered = 0, trials = 400;

	for (unsigned t = 0; t < trials; t++) {
		unsigned on[2] = {0};
		struct np_sample_count c = {.on_node = on, .max_node = 2};
		unsigned n = np_sample_draw(&r, 1, PAGE, 1000, &rng, addrs);
		static int status[1000];
		struct np_sample_interval iv;

		/* Pages 0-6999 on node 0, the rest on node 1. */
		for (unsigned j = 0; j < n; j++)
			status[j] = addrs[j] / PAGE < 7000 ? 0 : 1;
		np_sample_add(&c, status, n);
		iv = np_sample_wilson(on[0], c.present);
		covered += iv.lo <= 0.7 && 0.7 <= iv.hi;
	}
	/* 95% nominal; 400 trials put 5 standard deviations at +-5.5%. */
	CHECK(covered >= trials * 89 / 100);
	CHECK(covered <= trials);
}

int main(void)
{
	test_draw_uniform();
	test_draw_small_span();
	test_wilson();
	test_count_decide();
	test_coverage();
	return check_done();
}
