/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "actuate.h"
#include "check.h"

#include <errno.h>
#include <math.h>
#include <numa.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024ull * 1024)
#define MS 1000000ull
#define US 1000ull
#define SEC 1000000000ull

/* ---- A virtual clock and a stand-in kernel with more nodes ---- */

static uint64_t virtual_ns;

static uint64_t virtual_clock(void *data)
{
	return __atomic_load_n(&virtual_ns, __ATOMIC_RELAXED); /* movers' calls add to it */
}

/* The fake answers lookups with the real kernel (so the pages must exist) and
 * pretends moves: each page lands on its node, except every busy_every-th,
 * which reports -EBUSY. Each page costs ns_per_page of virtual time. */
struct fake_kernel {
	unsigned busy_every;
	uint64_t busy_answers; /* -EBUSY answers given */
	uint64_t ns_per_page;
	int fail_moves;	  /* a whole-call error for every move, or 0 */
	int kill_on_call; /* kill the target on this move call (1-based), or 0 */
	int kill_errno;	  /* what that call then returns (-EINVAL: memory gone), or 0 */
	unsigned calls, lookups, max_count;
	uint64_t pages_moved;
	uintptr_t watch_lo, watch_hi; /* lookups of pages in [lo, hi) are counted */
	uint64_t watched_lookups;
	unsigned migrate_calls;
	/* Huge pages: every 2 MiB block of [watch_lo, watch_hi) is one, moved
	 * whole for the first of its pages in a call (the others of that
	 * call: -EBUSY); a page of a block an earlier call moved is already
	 * on its node. Pages outside the range move one by one. */
	bool huge;
	uintptr_t moved_blocks[64];
	int moved_block_node[64];
	unsigned nr_moved_blocks;
	uint64_t stale_pages; /* pages of blocks earlier calls moved, passed again */
	uint64_t watched_to[4]; /* pages of [watch_lo, watch_hi) moved, per node */
	/* Pages of [watch_lo, watch_hi) passed to a move at a higher address
	 * than the one passed before them (one mover: calls in order). */
	uintptr_t last_watched;
	unsigned upward;
	/* Lookups of [watch_lo, watch_hi) whose lowest page is neither
	 * watch_lo nor on a 2 MiB boundary: a chunk that ends inside a
	 * huge page's block. */
	unsigned unaligned_chunks;
	struct fake_faults {
		/* Every efault_every-th page the move calls pass fails with
		 * -EFAULT, the first time it is passed only (a page another
		 * call was migrating), or every time with efault_again (one
		 * unmapped for good). */
		unsigned efault_every;
		bool efault_again;
		/* With huge: a page of a block an earlier call moved answers
		 * -EFAULT, as Debian 12's 6.1 kernel answers for a huge page
		 * another call is migrating, not its node. */
		bool stale_efault;
	} faults;
	void *efaulted[1024];
	unsigned nr_efaulted;
	uint64_t efaults; /* -EFAULT answers given */
};

/* Whether the move of @page, the @nth page passed, fails with -EFAULT. */
static bool fake_efault(struct fake_kernel *fk, void *page, uint64_t nth)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	bool fail = false;
	unsigned k;

	pthread_mutex_lock(&lock);
	for (k = 0; k < fk->nr_efaulted && fk->efaulted[k] != page; k++)
		;
	if (k < fk->nr_efaulted)
		fail = fk->faults.efault_again;
	else if (fk->faults.efault_every && nth % fk->faults.efault_every == 0 &&
		 fk->nr_efaulted < 1024) {
		fk->efaulted[fk->nr_efaulted++] = page;
		fail = true;
	}
	fk->efaults += fail;
	pthread_mutex_unlock(&lock);
	return fail;
}

static int fake_block_node(const struct fake_kernel *fk, const void *page)
{
	uintptr_t block = (uintptr_t)page >> 21;

	for (unsigned i = 0; i < fk->nr_moved_blocks; i++)
		if (fk->moved_blocks[i] == block)
			return fk->moved_block_node[i];
	return -1;
}

/* A huge-page move call: see struct fake_kernel. Movers call at once: the
 * block table is the fake kernel's, under one lock. */
static long fake_move_huge(struct fake_kernel *fk, unsigned long count, void **pages,
			   const int *nodes, int *status)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned before;

	pthread_mutex_lock(&lock);
	before = fk->nr_moved_blocks;

	for (unsigned long i = 0; i < count; i++) {
		uintptr_t block = (uintptr_t)pages[i] >> 21;
		unsigned j;

		if ((uintptr_t)pages[i] < fk->watch_lo || (uintptr_t)pages[i] >= fk->watch_hi) {
			status[i] = nodes[i];
			virtual_ns += fk->ns_per_page;
			continue;
		}
		for (j = 0; j < fk->nr_moved_blocks && fk->moved_blocks[j] != block; j++)
			;
		if (j < before) {
			fk->stale_pages++;
			status[i] = fk->faults.stale_efault ? -EFAULT : fk->moved_block_node[j];
		} else if (j < fk->nr_moved_blocks) {
			status[i] = -EBUSY;
		} else if (fk->nr_moved_blocks < 64) {
			fk->moved_blocks[fk->nr_moved_blocks] = block;
			fk->moved_block_node[fk->nr_moved_blocks++] = nodes[i];
			status[i] = nodes[i];
			virtual_ns += 512 * fk->ns_per_page;
		} else {
			status[i] = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

static long fake_move_pages(void *data, int pid, unsigned long count, void **pages,
			    const int *nodes, int *status)
{
	struct fake_kernel *fk = data;

	if (!nodes) {
		long r;

		uintptr_t low = UINTPTR_MAX;

		fk->lookups++;
		for (unsigned long i = 0; i < count; i++) {
			bool watched = (uintptr_t)pages[i] >= fk->watch_lo &&
				       (uintptr_t)pages[i] < fk->watch_hi;

			fk->watched_lookups += watched;
			if (watched && (uintptr_t)pages[i] < low)
				low = (uintptr_t)pages[i];
		}
		fk->unaligned_chunks += low != UINTPTR_MAX && low != fk->watch_lo && low % (2ul << 20);
		r = np_actuator_sys_kernel()->move_pages(NULL, pid, count, pages, NULL, status);
		for (unsigned long i = 0; fk->huge && r >= 0 && i < count; i++)
			if (fake_block_node(fk, pages[i]) >= 0)
				status[i] = fake_block_node(fk, pages[i]);
		return r;
	}
	fk->calls++;
	if (count > fk->max_count)
		fk->max_count = (unsigned)count;
	if (fk->huge)
		return fake_move_huge(fk, count, pages, nodes, status);
	if (fk->kill_on_call && fk->calls == (unsigned)fk->kill_on_call) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (fk->kill_errno)
			return fk->kill_errno;
	}
	if (fk->fail_moves)
		return fk->fail_moves;
	virtual_ns += count * fk->ns_per_page;
	for (unsigned long i = 0; i < count; i++) {
		if (fk->busy_every && (fk->pages_moved + i + 1) % fk->busy_every == 0) {
			status[i] = -EBUSY;
			fk->busy_answers++;
		} else if (fake_efault(fk, pages[i], fk->pages_moved + i + 1))
			status[i] = -EFAULT;
		else
			status[i] = nodes[i];
		if ((uintptr_t)pages[i] >= fk->watch_lo && (uintptr_t)pages[i] < fk->watch_hi &&
		    nodes[i] >= 0 && nodes[i] < 4 && status[i] == nodes[i])
			__atomic_fetch_add(&fk->watched_to[nodes[i]], 1, __ATOMIC_RELAXED);
		if ((uintptr_t)pages[i] >= fk->watch_lo && (uintptr_t)pages[i] < fk->watch_hi) {
			fk->upward += fk->last_watched && (uintptr_t)pages[i] > fk->last_watched;
			fk->last_watched = (uintptr_t)pages[i];
		}
	}
	fk->pages_moved += count;
	return 0;
}

static long fake_migrate_pages(void *data, int pid, const struct np_nodeset *from,
			       const struct np_nodeset *to)
{
	struct fake_kernel *fk = data;

	fk->migrate_calls++;
	return 0;
}

static int fake_get_affinity(void *data, int tid, struct np_bitmap *cpus)
{
	return np_actuator_sys_kernel()->get_affinity(NULL, tid, cpus);
}

static int fake_set_affinity(void *data, int tid, const struct np_bitmap *cpus)
{
	return -EPERM;
}

static struct fake_kernel fake;
static const struct np_actuator_sys fake_sys = {
    .move_pages = fake_move_pages,
    .migrate_pages = fake_migrate_pages,
    .get_affinity = fake_get_affinity,
    .set_affinity = fake_set_affinity,
    .data = &fake,
};

/* ---- Pure pieces ---- */

static void test_token_bucket(void)
{
	struct np_token_bucket b;

	np_token_bucket_init(&b, MIB, MIB, 0);
	CHECK_U64(np_token_bucket_take(&b, 2 * MIB, 0), MIB); /* the burst */
	CHECK_U64(np_token_bucket_take(&b, 4096, 0), 0);
	CHECK_U64(np_token_bucket_take(&b, MIB, SEC / 2), MIB / 2);
	/* Many tiny steps add up to the same as one big one. */
	for (uint64_t t = SEC / 2; t < SEC; t += 1000)
		np_token_bucket_take(&b, 0, t);
	CHECK_U64(np_token_bucket_take(&b, MIB, SEC), MIB / 2);
	np_token_bucket_refund(&b, 4096);
	CHECK_U64(np_token_bucket_take(&b, MIB, SEC), 4096);
	/* Idle time fills it to the burst, no further. */
	CHECK_U64(np_token_bucket_take(&b, 10 * MIB, 100 * SEC), MIB);
	np_token_bucket_refund(&b, 5 * MIB);
	CHECK_U64(np_token_bucket_take(&b, 10 * MIB, 100 * SEC), MIB);
	/* A clock that does not move gives nothing. */
	CHECK_U64(np_token_bucket_take(&b, 1, 100 * SEC), 0);
	/* Unlimited. */
	np_token_bucket_init(&b, 0, 0, 0);
	CHECK_U64(np_token_bucket_take(&b, 1ull << 40, 0), 1ull << 40);
	/* A fast rate over a long idle time does not overflow. */
	np_token_bucket_init(&b, 1ull << 40, 1ull << 41, 0);
	np_token_bucket_take(&b, 1ull << 41, 0);
	CHECK_U64(np_token_bucket_take(&b, 1ull << 41, 1000000 * SEC), 1ull << 41);
}

static void test_backoff(void)
{
	struct np_backoff b = {0};

	CHECK(!np_backoff_waiting(&b, 0));
	np_backoff_failed(&b, 10 * SEC, SEC, 8 * SEC);
	CHECK(np_backoff_waiting(&b, 10 * SEC + SEC / 2));
	CHECK(!np_backoff_waiting(&b, 11 * SEC));
	np_backoff_failed(&b, 11 * SEC, SEC, 8 * SEC);
	CHECK_U64(b.until_ns, 13 * SEC);
	np_backoff_failed(&b, 13 * SEC, SEC, 8 * SEC);
	CHECK_U64(b.until_ns, 17 * SEC);
	np_backoff_failed(&b, 17 * SEC, SEC, 8 * SEC);
	CHECK_U64(b.until_ns, 25 * SEC);
	np_backoff_failed(&b, 25 * SEC, SEC, 8 * SEC); /* capped */
	CHECK_U64(b.until_ns, 33 * SEC);
	for (int i = 0; i < 100; i++) /* no shift overflow however many */
		np_backoff_failed(&b, 33 * SEC, SEC, 8 * SEC);
	CHECK_U64(b.until_ns, 41 * SEC);
	np_backoff_succeeded(&b);
	CHECK(!np_backoff_waiting(&b, 33 * SEC));
	np_backoff_failed(&b, 50 * SEC, SEC, 8 * SEC);
	CHECK_U64(b.until_ns, 51 * SEC);
}

static void test_page_plan(void)
{
	void *pages[10];
	/* Current node or -errno per page. */
	const int status[10] = {0, 1, 1, -ENOENT, 0, 1, 2, -EFAULT, 0, 1};
	const int dst[10] = {1, 1, 0, 1, 1, 0, 0, 1, 1, 1};
	const int to2 = 2;
	struct np_page_plan plan;

	for (int i = 0; i < 10; i++)
		pages[i] = (void *)(uintptr_t)(0x10000 + i * 4096);
	CHECK_INT(np_page_plan_build(pages, status, dst, false, 10, 2, &plan), 0);
	/* To 1: pages 0, 4, 8 (from 0); to 0: pages 2, 5, 6. In place: 1, 9.
	 * Absent: 3, 7. */
	CHECK_INT(plan.nr_pages, 6);
	CHECK_INT(plan.in_place, 2);
	CHECK_INT(plan.not_present, 2);
	CHECK_INT(plan.nr_batches, 4);
	CHECK_INT(plan.batches[0].dst, 1);
	CHECK_INT(plan.batches[0].first, 0);
	CHECK_INT(plan.batches[0].count, 2);
	CHECK_INT(plan.batches[1].dst, 1);
	CHECK_INT(plan.batches[1].count, 1);
	CHECK_INT(plan.batches[2].dst, 0);
	CHECK_INT(plan.batches[2].first, 3);
	CHECK_INT(plan.batches[2].count, 2);
	CHECK_INT(plan.batches[3].count, 1);
	CHECK(plan.pages[0] == pages[0]);
	CHECK(plan.pages[1] == pages[4]);
	CHECK(plan.pages[2] == pages[8]);
	CHECK(plan.pages[3] == pages[2]);
	CHECK(plan.pages[5] == pages[6]);
	CHECK_INT(plan.src[5], 2);
	CHECK_INT(plan.src[3], 1);
	np_page_plan_clear(&plan);

	/* One destination for all; batch larger than the list. */
	CHECK_INT(np_page_plan_build(pages, status, &to2, true, 10, 512, &plan), 0);
	CHECK_INT(plan.nr_pages, 7);
	CHECK_INT(plan.in_place, 1);
	CHECK_INT(plan.nr_batches, 1);
	CHECK_INT(plan.batches[0].count, 7);
	np_page_plan_clear(&plan);

	CHECK_INT(np_page_plan_build(pages, status, dst, false, 0, 4, &plan), 0);
	CHECK_INT(plan.nr_batches, 0);
	np_page_plan_clear(&plan);
	CHECK_INT(np_page_plan_build(pages, status, dst, false, 10, 0, &plan), -EINVAL);
}

static void test_batch_size(void)
{
	CHECK_INT(np_batch_size_next(512, 40 * MS, 20 * MS), 256); /* down at once */
	CHECK_INT(np_batch_size_next(512, 20 * MS, 20 * MS), 512);
	CHECK_INT(np_batch_size_next(512, 1 * MS, 20 * MS), 5376);
	CHECK_INT(np_batch_size_next(16384, 1 * MS, 20 * MS), 16384);
	CHECK_INT(np_batch_size_next(16, 10 * SEC, 20 * MS), 16);
	CHECK_INT(np_batch_size_next(256, 10 * MS, 20 * MS), 384); /* up half way */
	CHECK_INT(np_batch_size_next(100, 0, 20 * MS), 150);
	/* Repeated at a steady 50 us a page it settles at 400 pages. */
	unsigned b = 512;
	for (int i = 0; i < 30; i++)
		b = np_batch_size_next(b, b * 50000ull, 20 * MS);
	CHECK(b >= 399 && b <= 401);
}

/* The batch for 20 ms fitted from two calls of @a and @b pages, each
 * costing @fixed_ns plus @per_page_ns a page, then calls of each size it
 * gives, as the actuator makes them, for 100 calls. None is planned
 * longer than @len_ns. */
static unsigned fit_two_calls(unsigned a, unsigned b, uint64_t fixed_ns, uint64_t per_page_ns,
			      uint64_t len_ns)
{
	struct np_call_model m = {0};
	unsigned n = 0;

	np_call_model_add(&m, a, fixed_ns + a * per_page_ns);
	np_call_model_add(&m, b, fixed_ns + b * per_page_ns);
	for (int i = 0; i < 100; i++) {
		unsigned next = np_call_model_batch(&m, 20 * MS);

		/* Sizes all alike now: no fit. The actuator then sizes
		 * by the last call's time, which meets the target. */
		if (!next)
			break;
		n = next;
		if (n > NP_BATCH_PAGES_MIN && n < NP_BATCH_PAGES_MAX)
			CHECK(fixed_ns + n * per_page_ns <= len_ns + per_page_ns);
		np_call_model_add(&m, n, fixed_ns + n * per_page_ns);
	}
	return n;
}

static void test_call_model(void)
{
	struct np_call_model m = {0};
	unsigned n;

	/* No fixed cost, 50 us a page: 400 pages fill 20 ms. */
	np_call_model_add(&m, 512, 512 * 50000ull);
	CHECK_INT(np_call_model_batch(&m, 20 * MS), 0); /* one size: no fit */
	np_call_model_add(&m, 512, 512 * 50000ull);
	CHECK_INT(np_call_model_batch(&m, 20 * MS), 0);
	np_call_model_add(&m, 300, 300 * 50000ull);
	n = np_call_model_batch(&m, 20 * MS);
	CHECK(n >= 399 && n <= 400);

	/* A fixed cost besides: what fits beside it. 0.5 ms: 390 pages; 2 ms
	 * (the test guest's): 360; 5 ms: 300. */
	n = fit_two_calls(512, 100, MS / 2, 50000, 20 * MS);
	CHECK(n >= 389 && n <= 390);
	n = fit_two_calls(512, 100, 2 * MS, 50000, 20 * MS);
	CHECK(n >= 359 && n <= 360);
	n = fit_two_calls(512, 100, 5 * MS, 50000, 20 * MS);
	CHECK(n >= 299 && n <= 300);

	/* A loaded machine: 100 ms per call before any page moves, every
	 * call over the target. Calls grow until the fixed cost is half of
	 * each, toward it by the ratio of 200 ms to what the last ones took. */
	n = fit_two_calls(512, 256, 100 * MS, 100000, 200 * MS);
	CHECK(n >= 970 && n <= 1000);

	/* Noise that makes bigger calls quicker tells nothing. */
	memset(&m, 0, sizeof(m));
	np_call_model_add(&m, 512, 10 * MS);
	np_call_model_add(&m, 256, 30 * MS);
	CHECK_INT(np_call_model_batch(&m, 20 * MS), 0);

	/* With a fit: 440-page calls of 2 ms + 14 us a page, one of 300,
	 * one of 512 in 6 ms (a huge page moved whole). The fit's slope
	 * falls to ~2.8 us and its fixed cost rises to ~6.4 ms, over half
	 * the target: by the fit 1,300 pages fill 10 ms, or 2,300 at twice
	 * that fixed cost. The recent calls met the target, so it stands, at
	 * their mean cost per page: 568. */
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 10; i++)
		np_call_model_add(&m, 440, 2 * MS + 440 * 14000ull);
	np_call_model_add(&m, 300, 2 * MS + 300 * 14000ull);
	np_call_model_add(&m, 512, 6 * MS);
	n = np_call_model_batch(&m, 10 * MS);
	CHECK_INT(n, np_call_model_cap(&m, 10 * MS));
	CHECK(n >= 560 && n <= 575);
	/* No calls yet: no cap. */
	memset(&m, 0, sizeof(m));
	CHECK_INT(np_call_model_cap(&m, 10 * MS), NP_BATCH_PAGES_MAX);

	/* Clamped at both ends. */
	CHECK_INT(fit_two_calls(100, 200, 0, 10, 20 * MS), NP_BATCH_PAGES_MAX);
	CHECK_INT(fit_two_calls(100, 200, 0, 10 * MS, 20 * MS), NP_BATCH_PAGES_MIN);
}

/* The next size after each call, as the actuator asks for it. */
static void test_call_model_next(void)
{
	struct np_call_model m = {0};
	unsigned batch = 512;

	/* From the start, calls of one size: no fit, the proportional rule.
	 * A steady 50 us a page settles at 400 pages for 20 ms. */
	for (int i = 0; i < 30; i++)
		batch = np_call_model_next(&m, batch, batch, batch * 50000ull, 20 * MS);
	CHECK(batch >= 399 && batch <= 401);

	/* Without a fit, a range's tail (under half the size) tells nothing
	 * of a full call. */
	memset(&m, 0, sizeof(m));
	CHECK_INT(np_call_model_next(&m, 400, 20, 10 * MS, 20 * MS), 400);

	/* Calls of 440 pages at 8.5 ms, then one of 512 in 4 ms (a huge page
	 * moved whole): no fit (bigger was quicker). By that call's time
	 * alone 1,280 pages fill 10 ms (np_batch_size_next goes half way:
	 * 860, 17 ms over small pages); at the recent calls' mean cost per
	 * page, ~570. */
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 10; i++)
		np_call_model_add(&m, 440, 8500 * US);
	CHECK_INT(np_batch_size_next(440, 4 * MS * 440 / 512, 10 * MS), 860);
	batch = np_call_model_next(&m, 440, 512, 4 * MS, 10 * MS);
	CHECK_INT(batch, np_call_model_cap(&m, 10 * MS));
	CHECK(batch >= 560 && batch <= 590);

	/* With a fit, at most twice the size per call. */
	memset(&m, 0, sizeof(m));
	np_call_model_add(&m, 100, 100 * 1000ull);
	CHECK_INT(np_call_model_next(&m, 100, 200, 200 * 1000ull, 20 * MS), 200);
}

/* A move's movers against the machine's load, by hand: m movers beside
 * B busy threads on C CPUs get m * C / (B + m) CPUs. */
static void test_movers_for_load(void)
{
	/* Free CPUs for them: the setting. */
	CHECK_INT(np_movers_for_load(2, 0, 4, 8), 2);
	CHECK_INT(np_movers_for_load(2, 1, 4, 8), 2);
	CHECK_INT(np_movers_for_load(2, 2, 4, 8), 2);
	/* Four busy threads on four CPUs (the 4-node guest's compete): two
	 * movers would get 2 * 4 / 6 = 1.33 CPUs, four get 4 * 4 / 8 = 2. */
	CHECK_INT(np_movers_for_load(2, 4, 4, 8), 4);
	/* Three: 2 * 3 / 2 = 3 (3 * 4 / 6 = 2 CPUs). */
	CHECK_INT(np_movers_for_load(2, 3, 4, 8), 3);
	CHECK_INT(np_movers_for_load(2, 2.6, 4, 8), 3);
	/* More busy than CPUs counts as all of them. */
	CHECK_INT(np_movers_for_load(2, 9, 4, 8), 4);
	/* A big busy machine: two get nearly two CPUs' worth already
	 * (2 * 64 / 62 = 2.06); on 8 CPUs 2 * 8 / 6 = 2.67, three. */
	CHECK_INT(np_movers_for_load(2, 64, 64, 8), 2);
	CHECK_INT(np_movers_for_load(2, 8, 8, 8), 3);
	/* Three movers on 8 busy CPUs: 3 * 8 / 5 = 4.8, five. */
	CHECK_INT(np_movers_for_load(3, 8, 8, 8), 5);
	/* At most twice the setting, and the most there may be. */
	CHECK_INT(np_movers_for_load(4, 8, 6, 8), 8);
	CHECK_INT(np_movers_for_load(6, 8, 8, 8), 8);
	CHECK_INT(np_movers_for_load(8, 8, 8, 8), 8);
	/* No more CPUs than movers: more would only queue up. */
	CHECK_INT(np_movers_for_load(2, 2, 2, 8), 2);
	CHECK_INT(np_movers_for_load(2, 0, 1, 8), 2);
	CHECK_INT(np_movers_for_load(4, 0.01, 4, 8), 4);
	/* Just past the CPUs' room, and a half rounded up: 2 * 2.5 / 2. */
	CHECK_INT(np_movers_for_load(2, 2.01, 4, 8), 2);
	CHECK_INT(np_movers_for_load(2, 2.5, 4, 8), 3);
	/* One mover stays one; unknown CPUs or load: the setting. */
	CHECK_INT(np_movers_for_load(1, 4, 4, 8), 1);
	CHECK_INT(np_movers_for_load(2, 4, 0, 8), 2);
	CHECK_INT(np_movers_for_load(2, -1, 4, 8), 2);
	CHECK_INT(np_movers_for_load(2, NAN, 4, 8), 2);
}

static void test_affinity_narrow(void)
{
	struct np_bitmap cur, node, out;

	np_bitmap_zero(&cur);
	np_bitmap_zero(&node);
	for (unsigned c = 0; c < 4; c++)
		np_bitmap_set(&cur, c);
	for (unsigned c = 2; c < 6; c++)
		np_bitmap_set(&node, c);
	CHECK_INT(np_affinity_narrow(&cur, &node, &out), NP_NARROW_CHANGED);
	CHECK_INT(np_bitmap_weight(&out), 2);
	CHECK(np_bitmap_test(&out, 2) && np_bitmap_test(&out, 3));
	/* Never widened: a thread pinned to CPU 3 stays on CPU 3. */
	np_bitmap_zero(&cur);
	np_bitmap_set(&cur, 3);
	CHECK_INT(np_affinity_narrow(&cur, &node, &out), NP_NARROW_UNCHANGED);
	CHECK(np_bitmap_equal(&out, &cur));
	np_bitmap_zero(&cur);
	np_bitmap_set(&cur, 0);
	np_bitmap_set(&cur, 7000);
	CHECK_INT(np_affinity_narrow(&cur, &node, &out), NP_NARROW_EMPTY);
}

static void test_maps_parse(void)
{
	const char ok[] = "7f0000400000-7f0000800000 rw-p 00000000 00:00 0\n"
			  "00400000-00401000 r-xp 00000000 08:01 1234  /usr/bin/x\n"
			  "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n";
	const char bad[] = "00400000-00401000 r-xp 0 0 0\n00500000-00400000 r-xp 0 0 0\n";
	const char bad2[] = "00400000 r-xp 0 0 0\n";
	struct np_vma_range *r;
	unsigned nr, line = 0;
	char *buf;
	size_t len;
	struct np_ctx *ctx;

	CHECK_INT(np_maps_parse(ok, sizeof(ok) - 1, &r, &nr, &line), 0);
	CHECK_INT(nr, 3);
	CHECK_U64(r[0].start, 0x400000); /* sorted */
	CHECK_U64(r[0].end, 0x401000);
	CHECK_U64(r[2].end, 0xffffffffff601000ull);
	CHECK(!r[0].shared_writable && !r[1].shared_writable);
	free(r);
	/* Shared and writable, with the object's identity; read-only shared,
	 * private, or an odd rest of the line: not. */
	{
		const char shm[] =
		    "7f0000400000-7f0000800000 rw-s 00000000 00:19 4096  /dev/shm/x\n"
		    "7f0000800000-7f0000900000 r--s 00000000 00:19 4096  /dev/shm/x\n"
		    "7f0000900000-7f0000a00000 rw-s 0 0 0\n"
		    "7f0000a00000-7f0000b00000 rw-s 00001000 fd:01 123456789 /memfd:a (deleted)\n";

		CHECK_INT(np_maps_parse(shm, sizeof(shm) - 1, &r, &nr, &line), 0);
		CHECK_INT(nr, 4);
		CHECK(r[0].shared_writable);
		CHECK_U64(r[0].dev, 0x19);
		CHECK_U64(r[0].inode, 4096);
		CHECK(!r[1].shared_writable && !r[2].shared_writable);
		CHECK(r[3].shared_writable);
		CHECK_U64(r[3].dev, (0xfdull << 32) | 1);
		CHECK_U64(r[3].inode, 123456789);
		free(r);
	}
	CHECK_INT(np_maps_parse(bad, sizeof(bad) - 1, &r, &nr, &line), -EINVAL);
	CHECK_INT(line, 2); /* end before start */
	CHECK_INT(np_maps_parse(bad2, sizeof(bad2) - 1, &r, &nr, &line), -EINVAL);
	CHECK_INT(line, 1);
	/* Our own maps parse. */
	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK_INT(np_ctx_read_file(ctx, "proc/self/maps", 1 << 24, &buf, &len), 0);
	CHECK_INT(np_maps_parse(buf, len, &r, &nr, &line), 0);
	CHECK(nr > 5);
	for (unsigned i = 1; i < nr; i++)
		CHECK(r[i - 1].end <= r[i].start);
	free(r);
	free(buf);
	np_ctx_free(ctx);
}

/* ---- Dry run over a fixture ---- */

static char logged[512];

__attribute__((format(printf, 3, 0)))
static void capture_log(void *data, int priority, const char *fmt, va_list args)
{
	vsnprintf(logged, sizeof(logged), fmt, args);
}

static void fixture_task(struct np_task *task)
{
	memset(task, 0, sizeof(*task));
	task->pid = 4242;
	task->start_ticks = 123456;
	snprintf(task->comm, sizeof(task->comm), "db (worker)");
}

/* What move() reads numa_maps through: the context of the last setup(),
 * and one reader for the whole program, as the daemon keeps one. */
static struct np_ctx *mem_ctx;
static struct np_memory_reader *mem_reader;

/* The engine's read: numa_maps through the task's checked directory. */
static int read_memory(struct np_ctx *ctx, const struct np_task *task, struct np_task_memory *mem,
		       uint64_t *bytes_read)
{
	char dir[NP_TASK_DIR_MAX];
	int dirfd = np_task_dir_open(ctx, task, dir), err;

	memset(mem, 0, sizeof(*mem));
	*bytes_read = 0;
	if (dirfd < 0)
		return dirfd;
	err = np_memory_read(mem_reader, ctx, dirfd, dir, mem, bytes_read);
	close(dirfd);
	return err;
}

static void setup(const char *root, const char *topo_case, struct np_ctx **ctx,
		  struct np_topology **topo, struct np_stats **stats)
{
	struct np_ctx *tctx;

	CHECK_INT(np_ctx_new(root, ctx), 0);
	mem_ctx = *ctx;
	CHECK_INT(np_ctx_new(fixture(topo_case), &tctx), 0);
	CHECK_INT(np_topology_read(tctx, topo), 0);
	CHECK_INT(np_stats_new(*topo, stats), 0);
	np_ctx_free(tctx);
}

static void teardown(struct np_ctx *ctx, struct np_topology *topo, struct np_stats *stats)
{
	np_stats_free(stats);
	np_topology_free(topo);
	np_ctx_free(ctx);
	mem_ctx = NULL;
}

/* One read of @task's numa_maps, as the daemon makes once per tick, and a
 * move acting on that read. A task whose read finds it gone is still handed
 * to the actuator, with nothing read, so that the actuator's own identity
 * checks give the answer. */
static int move(struct np_actuator *act, struct np_act_task *at, const struct np_task *task,
		int target, uint64_t max, struct np_move_result *res)
{
	struct np_task_memory mem;
	uint64_t bytes_read = 0;
	int err = read_memory(mem_ctx, task, &mem, &bytes_read);

	if (err && err != -ESRCH) {
		CHECK_INT(err, 0);
		return err;
	}
	/* On -ESRCH the read left @mem empty. */
	err = np_actuator_move_pages(act, at, task, &mem, target, max, res);
	np_task_memory_clear(&mem);
	return err;
}

static void test_dry_run_pages(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_act_task at, reused_at;
	struct np_task_memory mem;
	uint64_t bytes_read;
	const struct np_action_record *rec;
	unsigned nr;
	char line[256];

	setup(fixture("act-dry"), "handmade-4node", &ctx, &topo, &stats);
	np_actuator_params_init(&params);
	params.migrate_rate_mb_s = 0;
	params.clock = virtual_clock;
	virtual_ns = 1000 * SEC;
	fixture_task(&task);
	np_act_task_init(&at);

	/* The real actuator refuses a fixture root. */
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), -EOPNOTSUPP);
	CHECK_INT(np_actuator_new_dry(ctx, stats, &params, &act), 0);
	CHECK(np_actuator_is_dry(act));
	np_ctx_set_log_fn(ctx, capture_log, NULL);

	/* The user's policy and libc, mapped by 40, are no candidates: the
	 * read leaves them out of the VMAs and counts them. */
	CHECK_INT(read_memory(ctx, &task, &mem, &bytes_read), 0);
	CHECK_U64(np_task_memory_policy_total(&mem), 500 * 4096);
	CHECK_U64(mem.policy_bytes[NP_MPOL_BIND], 500 * 4096);
	CHECK_U64(mem.shared_file_bytes, 300 * 4096); /* libc, mapped by 40 */
	CHECK_INT(np_actuator_move_pages(act, &at, &task, &mem, 1, 0, &res), 0);
	np_task_memory_clear(&mem);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 2);
	CHECK_INT(rec[0].kind, NP_RECORD_PAGES);
	CHECK_INT(rec[0].pid, 4242);
	CHECK_INT(rec[0].from, 0);
	CHECK_INT(rec[0].to, 1);
	CHECK_U64(rec[0].pages, 605); /* 600 anon + 5 stack; the bound VMA stays */
	CHECK_U64(rec[0].bytes, 605 * 4096);
	CHECK_INT(rec[1].from, 2);
	CHECK_U64(rec[1].pages, 100);
	CHECK_U64(res.pages_misplaced, 705);
	CHECK_U64(res.pages_moved, 705);
	CHECK(!res.budget_exhausted);
	/* The memory under the user's policy is the policy's to report now:
	 * the actuator never sees it, and counts no skip for it. */
	CHECK_U64(np_stats_skips(stats, NP_REASON_USER_POLICY), 0);
	/* One read of numa_maps per move, and it is the caller's. */
	CHECK_U64(np_stats_scans(stats), 0);
	/* Nothing moved for real. */
	CHECK_U64(np_stats_migrated_bytes(stats, 0, 1), 0);
	np_action_record_format(&rec[0], line, sizeof(line));
	CHECK_STR(line, "pid 4242: move 605 pages (2.4 MiB) node 0 -> 1");
	CHECK_STR(logged, "dry run: pid 4242: move 100 pages (0.4 MiB) node 2 -> 1");
	np_actuator_clear_records(act);

	/* A caller that never reads the records: they stop at the cap. */
	for (int i = 0; i < NP_ACTUATOR_RECORDS_MAX / 2 + 10; i++)
		move(act, &at, &task, 1, 0, &res);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, NP_ACTUATOR_RECORDS_MAX);
	CHECK_U64(np_actuator_records_dropped(act), 20);
	np_actuator_clear_records(act);
	CHECK_U64(np_actuator_records_dropped(act), 0);

	/* max_bytes cuts it: 1 MiB of the 2.4 from node 0, none from node 2. */
	CHECK_INT(move(act, &at, &task, 1, MIB, &res), 0);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 1);
	CHECK_U64(rec[0].pages, 256);
	CHECK_U64(rec[0].bytes, MIB);
	CHECK(res.budget_exhausted);
	np_actuator_clear_records(act);

	/* Everything already on node 1 except what the policy holds. */
	CHECK_INT(move(act, &at, &task, 0, 0, &res), 0);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 2);
	CHECK_INT(rec[0].from, 1);
	CHECK_U64(rec[0].pages, 300 + 512 + 1); /* the file page counts too */
	CHECK_INT(rec[1].from, 2);
	CHECK_U64(rec[1].pages, 100);
	np_actuator_clear_records(act);

	/* A reused pid: same pid, other start time. Another task to the
	 * daemon, so a state of its own. */
	task.start_ticks++;
	np_act_task_init(&reused_at);
	CHECK_INT(move(act, &reused_at, &task, 1, 0, &res), -ESRCH);
	CHECK_U64(np_stats_skips(stats, NP_REASON_VANISHED), 1);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 0);
	np_act_task_release(&reused_at);
	/* Kernel threads are never touched. */
	fixture_task(&task);
	task.kthread = true;
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EPERM);
	/* A node outside the task's cpuset. */
	fixture_task(&task);
	task.has_details = true;
	np_nodeset_set(&task.mems_allowed, 0);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EACCES);
	CHECK_INT(move(act, &at, &task, -1, 0, &res), -EINVAL);
	/* A node its Mems_allowed has but its cgroup's cpuset.mems.effective
	 * does not: the cgroup's owner bounds it. */
	np_nodeset_zero(&task.mems_allowed);
	np_nodeset_set(&task.mems_allowed, 0);
	np_nodeset_set(&task.mems_allowed, 1);
	np_nodeset_set(&task.cpuset_mems, 0);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EACCES);
	np_nodeset_zero(&task.cpuset_mems);
	/* No Mems_allowed line (a kernel without cpusets): no limit, as the
	 * policy reads it. */
	np_nodeset_zero(&task.mems_allowed);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK(res.pages_moved > 0);
	np_actuator_free(act);

	/* The global rate: 1 MiB/s on a clock that only moves when told. */
	params.migrate_rate_mb_s = 1;
	CHECK_INT(np_actuator_new_dry(ctx, stats, &params, &act), 0);
	fixture_task(&task);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 1);
	CHECK_U64(rec[0].bytes, MIB);
	CHECK(res.budget_exhausted);
	np_actuator_clear_records(act);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EAGAIN);
	CHECK_U64(np_stats_skips(stats, NP_REASON_RATE_LIMIT), 1);
	virtual_ns += SEC / 2;
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 1);
	CHECK_U64(rec[0].bytes, MIB / 2);
	np_actuator_free(act);
	np_act_task_release(&at);
	CHECK_U64(np_stats_scans(stats), 0);
	teardown(ctx, topo, stats);
}

/* The actuator reads no numa_maps: it acts on the caller's read, once per
 * tick, and what it would move is what that read says. */
static void test_reads_no_numa_maps(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_act_task at;
	struct np_task_memory mem;
	uint64_t bytes_read = 0, want_pages[NP_MAX_NODES] = {0}, want_total = 0, got_total = 0;
	const struct np_action_record *rec;
	unsigned nr, nr_vmas;
	const int target = 1;

	setup(fixture("act-dry"), "handmade-4node", &ctx, &topo, &stats);
	np_actuator_params_init(&params);
	params.migrate_rate_mb_s = 0;
	params.clock = virtual_clock;
	virtual_ns = 2000 * SEC;
	fixture_task(&task);
	np_act_task_init(&at);
	CHECK_INT(np_actuator_new_dry(ctx, stats, &params, &act), 0);

	/* The tick's read, counted as the engine counts it. */
	CHECK_INT(read_memory(ctx, &task, &mem, &bytes_read), 0);
	CHECK(bytes_read > 0);
	np_stats_add_scan(stats, bytes_read);
	CHECK_U64(np_stats_scans(stats), 1);
	for (unsigned v = 0; v < mem.nr_vmas; v++) {
		const struct np_memory_vma *vma = &mem.vmas[v];

		for (unsigned i = 0; i < vma->nr_nodes; i++) {
			const struct np_nm_node_pages *np = &mem.pages[vma->first + i];

			if (np->node != target && np->node >= 0 && np->node < NP_MAX_NODES) {
				want_pages[np->node] += np->pages;
				want_total += np->pages;
			}
		}
	}
	CHECK_U64(want_total, 705); /* as test_dry_run_pages found */

	CHECK_INT(np_actuator_move_pages(act, &at, &task, &mem, target, 0, &res), 0);
	CHECK_U64(np_stats_scans(stats), 1); /* the move read none */
	rec = np_actuator_records(act, &nr);
	for (unsigned i = 0; i < nr; i++) {
		CHECK_INT(rec[i].kind, NP_RECORD_PAGES);
		CHECK_INT(rec[i].to, target);
		CHECK(rec[i].from >= 0 && rec[i].from < NP_MAX_NODES);
		if (rec[i].from < 0 || rec[i].from >= NP_MAX_NODES)
			continue;
		CHECK_U64(rec[i].pages, want_pages[rec[i].from]);
		CHECK_U64(rec[i].bytes, want_pages[rec[i].from] * 4096);
		want_pages[rec[i].from] = 0; /* one record per source node */
		got_total += rec[i].pages;
	}
	for (unsigned node = 0; node < NP_MAX_NODES; node++)
		CHECK_U64(want_pages[node], 0);
	CHECK_U64(got_total, want_total);
	CHECK_U64(res.pages_moved, want_total);
	np_actuator_clear_records(act);

	/* A read showing no movable VMAs moves nothing, whatever the task's
	 * numa_maps file still says. */
	nr_vmas = mem.nr_vmas;
	mem.nr_vmas = 0;
	CHECK_INT(np_actuator_move_pages(act, &at, &task, &mem, target, 0, &res), 0);
	mem.nr_vmas = nr_vmas;
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 0);
	CHECK_U64(res.pages_misplaced, 0);
	CHECK_U64(res.pages_moved, 0);
	CHECK_U64(np_stats_scans(stats), 1);

	np_task_memory_clear(&mem);
	np_actuator_free(act);
	np_act_task_release(&at);
	teardown(ctx, topo, stats);
}

/* A reload's new rate is the one in force from then on, with a fresh
 * second's worth of budget. */
static void test_set_rate(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_act_task at;

	np_act_task_init(&at);
	setup(fixture("act-dry"), "handmade-4node", &ctx, &topo, &stats);
	np_actuator_params_init(&params);
	params.migrate_rate_mb_s = 1;
	params.clock = virtual_clock;
	virtual_ns = 2000 * SEC;
	fixture_task(&task);
	CHECK_INT(np_actuator_new_dry(ctx, stats, &params, &act), 0);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK_U64(res.bytes_moved, MIB);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EAGAIN);

	/* 2 MiB/s: a burst of 2 MiB at once, then 1 MiB each half second. */
	np_actuator_set_rate(act, 2);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK_U64(res.bytes_moved, 2 * MIB);
	CHECK(res.budget_exhausted);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), -EAGAIN);
	virtual_ns += SEC / 2;
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK_U64(res.bytes_moved, MIB);

	/* Down to 1 MiB/s: no more than the new burst, even after a long
	 * wait. */
	np_actuator_set_rate(act, 1);
	virtual_ns += 10 * SEC;
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK_U64(res.bytes_moved, MIB);

	/* 0: unlimited, the whole 705 pages in one go. */
	np_actuator_set_rate(act, 0);
	CHECK_INT(move(act, &at, &task, 1, 0, &res), 0);
	CHECK(!res.budget_exhausted);
	CHECK_U64(res.pages_moved, 705);
	np_actuator_free(act);
	np_act_task_release(&at);
	teardown(ctx, topo, stats);
}

static void test_dry_run_affinity(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_affinity_result res;
	struct np_task task;
	struct np_act_task at;
	struct np_bitmap node_cpus, want;
	const struct np_action_record *rec;
	unsigned nr;
	char line[256];

	setup(fixture("act-dry"), "handmade-4node", &ctx, &topo, &stats);
	CHECK_INT(np_actuator_new_dry(ctx, stats, NULL, &act), 0);
	fixture_task(&task);
	np_act_task_init(&at);
	np_bitmap_zero(&node_cpus);
	for (unsigned c = 4; c < 8; c++)
		np_bitmap_set(&node_cpus, c);

	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &node_cpus, &res), 0);
	CHECK_INT(res.nr, 3);
	CHECK_INT(res.counts[NP_THREAD_NARROWED], 1);
	CHECK_INT(res.counts[NP_THREAD_EMPTY], 1);
	CHECK_INT(res.counts[NP_THREAD_NO_SETAFFINITY], 1);
	for (unsigned i = 0; i < res.nr; i++) {
		const struct np_thread_affinity *th = &res.threads[i];

		if (th->tid == 4242) {
			CHECK_INT(th->outcome, NP_THREAD_NARROWED);
			CHECK_INT(np_bitmap_weight(&th->before), 8);
			CHECK(np_bitmap_equal(&th->effective, &node_cpus));
		} else if (th->tid == 4243) {
			/* Pinned by its user to CPUs 0-1: left there. */
			CHECK_INT(th->outcome, NP_THREAD_EMPTY);
			CHECK_INT(np_bitmap_weight(&th->effective), 2);
		} else {
			CHECK_INT(th->tid, 4244);
			CHECK_INT(th->outcome, NP_THREAD_NO_SETAFFINITY);
		}
	}
	rec = np_actuator_records(act, &nr);
	CHECK_INT(nr, 1);
	CHECK_INT(rec[0].kind, NP_RECORD_AFFINITY);
	CHECK_INT(rec[0].tid, 4242);
	np_bitmap_zero(&want);
	np_bitmap_or(&want, &want, &node_cpus);
	CHECK(np_bitmap_equal(&rec[0].cpus, &want));
	np_action_record_format(&rec[0], line, sizeof(line));
	CHECK_STR(line, "pid 4242: thread 4242 affinity -> 4-7");
	CHECK_U64(np_stats_skips(stats, NP_REASON_AFFINITY_EMPTY), 1);
	CHECK_U64(np_stats_skips(stats, NP_REASON_NO_SETAFFINITY), 1);
	np_affinity_result_clear(&res);

	/* Replacing exactly: only the thread whose mask is @from (0-7, the
	 * one 4242 had) gets the new one; 4243's own 0-1 is left alone, not
	 * even narrowed; giving back replaces the set mask with the old. */
	np_actuator_clear_records(act);
	np_bitmap_zero(&want);
	for (unsigned c = 0; c < 8; c++)
		np_bitmap_set(&want, c);
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, &want, &node_cpus, &res), 0);
	CHECK_INT(res.counts[NP_THREAD_NARROWED], 1);
	CHECK_INT(res.counts[NP_THREAD_OTHER_MASK], 1);
	CHECK_INT(res.counts[NP_THREAD_EMPTY], 0);
	rec = np_actuator_records(act, &nr);
	CHECK(nr == 1 && rec[0].tid == 4242 && np_bitmap_equal(&rec[0].cpus, &node_cpus));
	np_affinity_result_clear(&res);
	/* The fixture still shows 0-7 for 4242: a mask of 4-7 to give back
	 * is nowhere, so nothing changes. */
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, &node_cpus, &want, &res), 0);
	CHECK_INT(res.counts[NP_THREAD_NARROWED], 0);
	CHECK_INT(res.counts[NP_THREAD_OTHER_MASK], 2);
	np_affinity_result_clear(&res);

	task.flags = NP_PF_NO_SETAFFINITY;
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &node_cpus, &res), -EPERM);
	np_affinity_result_clear(&res);
	np_actuator_free(act);
	np_act_task_release(&at);
	teardown(ctx, topo, stats);
}

/* ---- The real path on this machine ---- */

static uint64_t read_start_ticks(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* Field 22 is the 20th after the comm. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &start);
	return start;
}

static void live_task(struct np_task *task, int pid)
{
	memset(task, 0, sizeof(*task));
	task->pid = pid;
	task->start_ticks = read_start_ticks(pid);
}

static void reap(int pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A node the handmade topology has and no test machine's child pages sit
 * on (the guest has two nodes): every present page is off it. */
#define FAKE_NODE 3

/* A child with a mapping of @pages pages of which every @step-th is touched,
 * in a VMA of its own (MADV_NOHUGEPAGE keeps it from merging with its
 * neighbours, and its pages small). Its address goes to @addr. */
static int spawn_region_child(unsigned pages, unsigned step, uintptr_t *addr)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *mem = mmap(NULL, pages * 4096ul, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uintptr_t at = (uintptr_t)mem;

		if (mem == MAP_FAILED || madvise(mem, pages * 4096ul, MADV_NOHUGEPAGE))
			_exit(1);
		for (unsigned i = 0; i < pages; i += step)
			mem[i * 4096ul] = 1;
		if (write(pipefd[1], &at, sizeof(at)) != sizeof(at))
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (read(pipefd[0], addr, sizeof(*addr)) != sizeof(*addr))
		pid = -1;
	close(pipefd[0]);
	return pid;
}

/* A child holding @pages touched pages, waiting to be killed. */
static int spawn_child(unsigned pages)
{
	uintptr_t at;

	return spawn_region_child(pages, 1, &at);
}

/* A real actuator over the fake kernel, on the virtual clock, with no rate
 * limit and no migrate_pages. */
static void fake_params(struct np_actuator_params *params)
{
	np_actuator_params_init(params);
	params->migrate_rate_mb_s = 0;
	params->allow_migrate_pages = false;
	params->clock = virtual_clock;
	params->sys = &fake_sys;
}

/* The daemon's stop hook (SIGTERM): asked between calls, it ends the move
 * where it is, counted like a spent budget. */
static bool stop_after_two_calls(void *data)
{
	return ((struct fake_kernel *)data)->calls >= 2;
}

static void test_stop_hook(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_act_task at;
	uintptr_t addr = 0;
	int child = spawn_region_child(4000, 1, &addr);

	CHECK(child > 0);
	if (child <= 0)
		return;
	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	params.batch_pages = 64;
	params.should_stop = stop_after_two_calls;
	params.stop_data = &fake;
	memset(&fake, 0, sizeof(fake));
	fake.ns_per_page = 1000;
	live_task(&task, child);
	np_act_task_init(&at);
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK_INT(fake.calls, 2);
	CHECK_INT(res.calls, 2);
	CHECK(res.budget_exhausted);
	CHECK(res.pages_moved > 0 && res.pages_moved <= 128);
	/* Asked before the first call, it moves nothing. */
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -EAGAIN);
	CHECK_INT(fake.calls, 2);
	CHECK_U64(res.pages_moved, 0);
	np_actuator_free(act);
	np_act_task_release(&at);
	teardown(ctx, topo, stats);
	reap(child);
}

/* A fake for movers in parallel: every page lands on its node, each call
 * takes 2 ms of real time, and the calls in flight at once are counted.
 * Each page costs 312.5 us of virtual time, so that a call of 64 pages
 * takes the actuator's 20 ms and batches keep that size; calls at once add
 * theirs to each other's. Of the calls on pages in [lo, hi), the
 * fail_call-th (1-based, 0: none)
 * fails as a whole with -EIO; the pages the others moved there are counted
 * in region_pages. */
struct parallel_kernel {
	atomic_uint calls, in_flight, most_in_flight, region_calls;
	atomic_ulong pages, region_pages;
	uintptr_t lo, hi;
	unsigned fail_call;
	/* The slow_call-th region call (0: none) takes 100 ms; the calls
	 * started while it runs are counted. */
	unsigned slow_call;
	atomic_bool slow_running;
	atomic_uint calls_beside_slow;
	atomic_ulong helper_stack; /* the biggest stack a call ran on, off the main thread */
};

/* The size of the calling thread's stack, or 0 on the main thread. */
static unsigned long helper_stack_size(void)
{
	pthread_attr_t attr;
	size_t size = 0;

	if (gettid() == getpid() || pthread_getattr_np(pthread_self(), &attr))
		return 0;
	pthread_attr_getstacksize(&attr, &size);
	pthread_attr_destroy(&attr);
	return size;
}

static long parallel_move_pages(void *data, int pid, unsigned long count, void **pages,
				const int *nodes, int *status)
{
	struct parallel_kernel *pk = data;
	bool region = count && (uintptr_t)pages[0] >= pk->lo && (uintptr_t)pages[0] < pk->hi;
	unsigned now_in, most, call = 0;

	unsigned long stack = helper_stack_size(), biggest = atomic_load(&pk->helper_stack);

	while (stack > biggest && !atomic_compare_exchange_weak(&pk->helper_stack, &biggest, stack))
		;
	if (!nodes)
		return np_actuator_sys_kernel()->move_pages(NULL, pid, count, pages, NULL, status);
	atomic_fetch_add(&pk->calls, 1);
	if (region)
		call = atomic_fetch_add(&pk->region_calls, 1) + 1;
	now_in = atomic_fetch_add(&pk->in_flight, 1) + 1;
	most = atomic_load(&pk->most_in_flight);
	while (now_in > most && !atomic_compare_exchange_weak(&pk->most_in_flight, &most, now_in))
		;
	if (region && call == pk->slow_call) {
		atomic_store(&pk->slow_running, true);
		usleep(100 * 1000);
		atomic_store(&pk->slow_running, false);
	} else {
		if (atomic_load(&pk->slow_running))
			atomic_fetch_add(&pk->calls_beside_slow, 1);
		usleep(2000);
	}
	__atomic_fetch_add(&virtual_ns, count * 312500, __ATOMIC_RELAXED);
	atomic_fetch_sub(&pk->in_flight, 1);
	if (region && call == pk->fail_call)
		return -EIO;
	for (unsigned long i = 0; i < count; i++)
		status[i] = nodes[i];
	atomic_fetch_add(&pk->pages, count);
	if (region)
		atomic_fetch_add(&pk->region_pages, count);
	return 0;
}

/* @pk counting from nothing, its region the 4,000 pages at @addr. */
static void parallel_kernel_reset(struct parallel_kernel *pk, uintptr_t addr)
{
	memset(pk, 0, sizeof(*pk));
	pk->lo = addr;
	pk->hi = addr + 4000 * 4096ul;
}

/* Parameters of an actuator over the parallel fake @pk, through @sys (both
 * outlive the actuator): first calls of 64 pages, @movers movers. */
static void parallel_params(struct np_actuator_params *params, struct np_actuator_sys *sys,
			    struct parallel_kernel *pk, unsigned movers)
{
	*sys = fake_sys;
	sys->move_pages = parallel_move_pages;
	sys->data = pk;
	fake_params(params);
	params->sys = sys;
	params->batch_pages = 64;
	params->movers = movers;
}

/* Movers: batches moved by several calls at once move every page, with
 * calls at once when there are several movers and never more than them;
 * a call that fails leaves what the others moved counted, and its error
 * is the action's; a slow call holds up no other mover. */
static void test_movers(void)
{
	static struct parallel_kernel pk;
	struct np_actuator_sys sys;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	for (unsigned movers = 1; movers <= 4; movers += 3) {
		struct np_act_task at;
		uintptr_t addr = 0;
		int child = spawn_region_child(4000, 1, &addr);
		uint64_t before = np_stats_migrated_bytes(stats, 0, FAKE_NODE);

		CHECK(child > 0);
		if (child <= 0)
			break;
		parallel_params(&params, &sys, &pk, movers);
		params.batch_target_ms = 20;
		virtual_ns = 7000 * SEC;
		parallel_kernel_reset(&pk, addr);
		CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
		CHECK_U64(atomic_load(&pk.region_pages), 4000);
		CHECK_U64(res.pages_moved, atomic_load(&pk.pages));
		CHECK_INT(res.calls, atomic_load(&pk.calls));
		CHECK_U64(np_stats_migrated_bytes(stats, 0, FAKE_NODE) - before, res.bytes_moved);
		/* The region in several calls either way (batches start at 64
		 * pages; the fitted size may grow on overlapping calls). */
		CHECK(atomic_load(&pk.region_calls) >= 4);
		if (movers == 1) {
			CHECK_INT(atomic_load(&pk.most_in_flight), 1);
		} else {
			CHECK(atomic_load(&pk.most_in_flight) > 1);
			CHECK(atomic_load(&pk.most_in_flight) <= movers);
			/* The helpers' stacks are too small for a 2 MiB page. */
			CHECK(atomic_load(&pk.helper_stack) > 0);
			CHECK(atomic_load(&pk.helper_stack) < 2 * 1024 * 1024);
		}
		np_act_task_release(&at);
		reap(child);

		/* The second call in the region fails: with one mover it is
		 * the last call, with four no call starts once the failure is
		 * taken back; every page a call moved is counted, and the
		 * action fails. */
		child = spawn_region_child(4000, 1, &addr);
		CHECK(child > 0);
		if (child <= 0) {
			np_actuator_free(act);
			break;
		}
		np_actuator_free(act);
		CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
		parallel_kernel_reset(&pk, addr);
		pk.fail_call = 2;
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -EIO);
		/* With four, the calls in flight when it failed are made, and
		 * so is one more for each mover whose call was taken back
		 * before the failed one (any made call is taken first): at
		 * most twice the movers of the region's 63 calls. */
		if (movers == 1)
			CHECK_INT(atomic_load(&pk.region_calls), 2);
		else
			CHECK(atomic_load(&pk.region_calls) > 2 &&
			      atomic_load(&pk.region_calls) <= 2 * movers);
		CHECK(atomic_load(&pk.region_pages) > 0);
		CHECK_U64(res.pages_moved, atomic_load(&pk.pages));
		np_act_task_release(&at);
		reap(child);

		/* Movers do not wait for each other: while the second call
		 * takes 100 ms, the others make call after call (2 ms each),
		 * some 50 each; calls handed out in groups would all have
		 * waited for the slow one. */
		child = movers > 1 ? spawn_region_child(4000, 1, &addr) : 0;
		if (child > 0) {
			parallel_kernel_reset(&pk, addr);
			pk.slow_call = 2;
			live_task(&task, child);
			np_act_task_init(&at);
			CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
			CHECK_U64(atomic_load(&pk.region_pages), 4000);
			CHECK(atomic_load(&pk.calls_beside_slow) >= 10);
			printf("     %u movers: %u calls beside a slow one\n", movers,
			       atomic_load(&pk.calls_beside_slow));
			np_act_task_release(&at);
			reap(child);
		}
		np_actuator_free(act);
	}
	teardown(ctx, topo, stats);
}

/* Movers against the machine's load: with two set, a move gets four
 * while other threads keep all four CPUs busy (never more calls in flight
 * than that, and more than two), two while they leave two free; a reading
 * taken while a move of ours ran is passed over, the one before standing. */
static void test_movers_under_load(void)
{
	static struct parallel_kernel pk;
	struct np_actuator_sys sys;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	/* Each step's readings (busy CPUs of four) before its move. */
	const struct {
		double busy[2];
		unsigned readings, want;
	} steps[] = {
	    {{4}, 1, 4},    /* the first reading */
	    {{1}, 1, 4},    /* taken over the move before: passed over */
	    {{1, 1}, 2, 2}, /* the second, with no move since the first */
	};

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	parallel_params(&params, &sys, &pk, 2);
	params.batch_target_ms = 20;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	for (unsigned k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		struct np_move_result res;
		struct np_act_task at;
		struct np_task task;
		uintptr_t addr = 0;
		int child = spawn_region_child(4000, 1, &addr);

		CHECK(child > 0);
		if (child <= 0)
			break;
		virtual_ns = 7000 * SEC;
		parallel_kernel_reset(&pk, addr);
		for (unsigned r = 0; r < steps[k].readings; r++)
			np_actuator_set_load(act, steps[k].busy[r], 4);
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
		CHECK_U64(atomic_load(&pk.region_pages), 4000);
		CHECK_INT(res.movers, steps[k].want);
		CHECK(atomic_load(&pk.most_in_flight) <= steps[k].want);
		if (steps[k].want > 2)
			CHECK(atomic_load(&pk.most_in_flight) > 2);
		printf("     step %u: %u movers, at most %u calls at once\n", k, res.movers,
		       atomic_load(&pk.most_in_flight));
		np_act_task_release(&at);
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* A child with @pages pages, every @step-th present, moved to FAKE_NODE
 * as a task of its own by @act, the fake watching its region at
 * @ns_per_page: its pid (the caller reaps it), or <= 0 (checked failed). */
static int move_region_child(struct np_actuator *act, unsigned pages, unsigned step,
			     uint64_t ns_per_page, const struct fake_faults *faults,
			     struct np_move_result *res)
{
	struct np_act_task at;
	struct np_task task;
	uintptr_t addr = 0;
	int child = spawn_region_child(pages, step, &addr);

	CHECK(child > 0);
	if (child <= 0)
		return child;
	memset(&fake, 0, sizeof(fake));
	fake.ns_per_page = ns_per_page;
	fake.watch_lo = addr;
	fake.watch_hi = addr + pages * 4096ul;
	if (faults)
		fake.faults = *faults;
	live_task(&task, child);
	np_act_task_init(&at);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, res), 0);
	np_act_task_release(&at);
	return child;
}

/* A range numa_maps shows as wholly present on one node is moved without
 * looking its pages up; one with holes is looked up. */
static void test_dense_ranges_skip_lookups(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	virtual_ns = 5000 * SEC;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	for (unsigned step = 1; step <= 2; step++) {
		int child = move_region_child(act, 4000, step, 1000, NULL, &res);

		if (child <= 0)
			break;
		CHECK(res.pages_moved >= 4000 / step);
		if (step == 1)
			CHECK_U64(fake.watched_lookups, 0);
		else
			CHECK_U64(fake.watched_lookups, 4000);
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* A range's pages move from its top address down, call after call, so
 * that a thread sweeping its memory upward meets a mover once per sweep
 * instead of waiting page after page behind it (see move_range). With and
 * without lookups (every page present, or every other one of a range
 * that takes several lookups, each chunk starting on a 2 MiB boundary
 * but the lowest). */
static void test_moves_top_down(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	params.movers = 1;
	virtual_ns = 6000 * SEC;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	for (unsigned step = 1; step <= 2; step++) {
		unsigned pages = step == 1 ? 4000 : 10000;
		/* 20 ms calls of ~400 pages */
		int child = move_region_child(act, pages, step, 50 * 1000, NULL, &res);

		if (child <= 0)
			break;
		CHECK_U64(fake.watched_to[FAKE_NODE], pages / step);
		CHECK(fake.calls > 5);
		CHECK_INT(fake.upward, 0);
		if (step == 2) {
			CHECK(fake.lookups > 1);
			CHECK_INT(fake.unaligned_chunks, 0);
		}
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* A child of @pages pages whose region is in huge pages (the fake's),
 * moved to FAKE_NODE by @movers movers at @ns_per_page: every block of
 * the region moved once, and the child's other mappings too. The fake
 * keeps what the calls did. Returns false when the child did not start. */
static bool move_huge_child(unsigned movers, unsigned pages, uint64_t ns_per_page,
			    const struct fake_faults *faults, struct np_move_result *res)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_act_task at;
	struct np_task task;
	uintptr_t addr = 0;
	int child;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	params.movers = movers;
	virtual_ns = 7000 * SEC;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	child = spawn_region_child(pages, 1, &addr);
	CHECK(child > 0);
	if (child > 0) {
		uintptr_t first = addr >> 21, last = (addr + pages * 4096ul - 1) >> 21;
		unsigned blocks = 0;

		memset(&fake, 0, sizeof(fake));
		fake.huge = true;
		fake.ns_per_page = ns_per_page;
		if (faults)
			fake.faults = *faults;
		fake.watch_lo = addr;
		fake.watch_hi = addr + pages * 4096ul;
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, res), 0);
		CHECK(res->pages_moved >= pages);
		for (unsigned i = 0; i < fake.nr_moved_blocks; i++)
			blocks += fake.moved_blocks[i] >= first && fake.moved_blocks[i] <= last;
		CHECK_U64(blocks, last - first + 1);
		CHECK_U64(fake.nr_moved_blocks, blocks);
		np_act_task_release(&at);
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
	return child > 0;
}

/* Memory in huge pages: once a call showed one (a -EBUSY page found on the
 * destination after it), no later call ends inside a huge page's block, so
 * no block's pages are passed again by the call after the one that moved
 * it. Calls of ~200 pages (100 us a page, 20 ms calls) over 16 MiB: left
 * to end anywhere, three calls in four would pass pages already moved. */
static void test_huge_blocks_whole(void)
{
	struct np_move_result res;

	if (!move_huge_child(2, 4096, 100 * 1000, NULL, &res))
		return;
	/* Only the first group of calls (two movers) may end inside a
	 * block, before any huge page was seen. */
	CHECK(fake.stale_pages <= 2 * 512);
	printf("     huge pages: %u calls, %llu pages passed again\n", fake.calls,
	       (unsigned long long)fake.stale_pages);
}

/* Calls end at the huge page block edge nearer their size: one mover
 * aiming at 20 ms at 33 us a page sizes calls of ~600 pages, which end
 * where their first block does (512 pages), not a block later (1,024).
 * One mover: with two, each call's time on the shared virtual clock would
 * take in some of the other's, and the sizes with it. */
static void test_huge_blocks_nearest_edge(void)
{
	struct np_move_result res;

	if (!move_huge_child(1, 8192, 33 * 1000, NULL, &res))
		return;
	/* A call may take in a block's end and the next block's start (the
	 * region need not begin on a block), never two whole blocks. */
	CHECK(fake.max_count < 1024);
	printf("     huge pages, ~600-page calls: %u calls, largest %u pages\n", fake.calls,
	       fake.max_count);
}

/* A huge page split between two movers' calls, before the move has seen
 * one: the call that did not move it is answered -EFAULT for its pages of
 * the block (Debian 12's 6.1 kernel, for a huge page another call is
 * migrating). Looked up once the chunk's calls are made, they are on the
 * destination: moved, not failed, and no call passes them again. */
static void test_huge_split_between_calls(void)
{
	const struct fake_faults faults = {.stale_efault = true};
	struct np_move_result res;

	if (!move_huge_child(2, 4096, 100 * 1000, &faults, &res))
		return;
	CHECK(fake.stale_pages > 0); /* the case arose */
	CHECK_U64(res.pages_failed, 0);
	CHECK(res.pages_moved >= 4096);
	CHECK_U64(res.pages_moved, res.pages_misplaced); /* each counted once */
	/* And the block rule turned on: only the first group of calls split
	 * blocks (as in test_huge_blocks_whole). */
	CHECK(fake.stale_pages <= 2 * 512);
	printf("     huge pages split between calls: %llu pages answered -EFAULT, %u calls\n",
	       (unsigned long long)fake.stale_pages, fake.calls);
}

/* Pages a call leaves in place with -EFAULT while movers call side by
 * side get one more call once the chunk's calls are made: moved then if
 * the failure was passing (one page in a hundred, each failing once),
 * counted failed after their second failure if not, and not tried a
 * third time. A move by one thread (no call of its own beside) counts
 * them failed at once. */
static void test_failed_pages_tried_again(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	int child;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	params.movers = 2;
	virtual_ns = 8000 * SEC;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	for (unsigned again = 0; again <= 1; again++) {
		const struct fake_faults faults = {.efault_every = 100, .efault_again = again};

		child = move_region_child(act, 4000, 1, 1000, &faults, &res);
		if (child <= 0)
			break;
		/* The region's 4,000 and the child's other pages. */
		CHECK(fake.nr_efaulted >= 40);
		CHECK_U64(res.pages_failed, again ? fake.nr_efaulted : 0);
		CHECK_U64(res.pages_moved + res.pages_failed, res.pages_misplaced);
		CHECK_U64(fake.efaults, (again + 1) * fake.nr_efaulted);
		reap(child);
	}
	np_actuator_free(act);

	params.movers = 1;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	child = move_region_child(act, 4000, 1, 1000,
				  &(const struct fake_faults){.efault_every = 100}, &res);
	if (child > 0) {
		CHECK(fake.nr_efaulted >= 40);
		CHECK_U64(res.pages_failed, fake.nr_efaulted);
		CHECK_U64(fake.efaults, fake.nr_efaulted);
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

static void test_kernel_move_pages_self(void)
{
	const struct np_actuator_sys *sys = np_actuator_sys_kernel();
	char *mem =
	    mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *pages[64];
	int nodes[64], status[64];
	struct np_nodeset zero;
	long r;

	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	for (int i = 0; i < 64; i++) {
		mem[i * 4096] = 1;
		pages[i] = mem + i * 4096;
		nodes[i] = 0;
		status[i] = -1;
	}
	pages[63] = NULL; /* not mapped: a per-page error, not a failed call */
	r = sys->move_pages(NULL, getpid(), 64, pages, nodes, status);
	CHECK_INT(r, 0);
	for (int i = 0; i < 63; i++)
		CHECK_INT(status[i], 0);
	CHECK(status[63] == -EFAULT || status[63] == -ENOENT);
	r = sys->move_pages(NULL, getpid(), 63, pages, NULL, status);
	CHECK_INT(r, 0);
	CHECK_INT(status[10], 0);
	munmap(mem, 64 * 4096);

	/* migrate_pages from node 0 to node 0: nothing to do, nothing left. */
	np_nodeset_zero(&zero);
	np_nodeset_set(&zero, 0);
	CHECK_INT(sys->migrate_pages(NULL, getpid(), &zero, &zero), 0);
}

static void test_real_batches(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	/* The child's state, kept across the actuators below as the daemon's
	 * table keeps it; the second child gets its own. */
	struct np_act_task at, second_at;
	int child = spawn_child(4000);

	CHECK(child > 0);
	if (child <= 0)
		return;
	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	virtual_ns = 5000 * SEC;
	memset(&fake, 0, sizeof(fake));
	fake.busy_every = 10;
	fake.ns_per_page = 50000; /* 20 ms = 400 pages */
	live_task(&task, child);
	np_act_task_init(&at);
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);

	/* "Move" everything of the child to the fake node. */
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK(res.pages_misplaced >= 4000);
	CHECK_U64(res.pages_moved + res.pages_failed, res.pages_misplaced);
	/* Every tenth page is answered -EBUSY, and with one thread making
	 * the calls no call of its own was moving it: failed at once. */
	CHECK_U64(res.pages_failed, res.pages_misplaced / 10);
	CHECK_U64(fake.busy_answers, res.pages_failed);
	CHECK_U64(res.bytes_moved, res.pages_moved * 4096);
	CHECK_U64(np_stats_migrated_bytes(stats, 0, FAKE_NODE) +
		      np_stats_migrated_bytes(stats, 1, FAKE_NODE),
		  res.bytes_moved);
	CHECK_U64(np_stats_page_failures(stats, EBUSY), res.pages_failed);
	CHECK_INT(res.calls, fake.calls);
	CHECK(fake.max_count <= 512);
	CHECK(fake.calls > res.pages_misplaced / 512);
	CHECK(!res.used_migrate_pages);
	CHECK(!res.budget_exhausted);
	/* The size adapted toward 400 pages a call. */
	fake.max_count = 0;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK(fake.max_count < 512 && fake.max_count >= 300);

	/* max_bytes: 1 MiB at most. */
	CHECK_INT(move(act, &at, &task, FAKE_NODE, MIB, &res), 0);
	CHECK(res.bytes_moved <= MIB && res.bytes_moved > MIB / 2);
	CHECK(res.budget_exhausted);
	np_actuator_free(act);

	/* The global rate: 1 MiB/s, then half a second later half a MiB. */
	params.migrate_rate_mb_s = 1;
	fake.ns_per_page = 0; /* only the test moves the clock */
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	/* Pages left in place cost no bandwidth: their bytes go back. */
	CHECK_U64(res.bytes_moved, MIB);
	CHECK(res.budget_exhausted);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -EAGAIN);
	virtual_ns += SEC / 2;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK_U64(res.bytes_moved, MIB / 2);
	np_actuator_free(act);

	/* Whole-call failures back off, doubling. */
	params.migrate_rate_mb_s = 0;
	params.backoff_min_ms = 1000;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	fake.fail_moves = -ENOMEM;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -ENOMEM);
	CHECK_U64(np_stats_failures(stats, NP_CALL_MOVE_PAGES, ENOMEM), 1);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -EAGAIN);
	CHECK_U64(np_stats_skips(stats, NP_REASON_BACKOFF), 1);
	virtual_ns += SEC;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -ENOMEM);
	virtual_ns += SEC; /* the second wait is two seconds */
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -EAGAIN);
	virtual_ns += SEC;
	fake.fail_moves = 0;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK(res.pages_moved > 0);

	/* Small enough for one migrate_pages at the measured speed. */
	np_actuator_free(act);
	params.allow_migrate_pages = true;
	fake.ns_per_page = 1000; /* 20 ms = 20,000 pages: the child fits */
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	CHECK(!res.used_migrate_pages); /* nothing measured yet */
	CHECK_INT(fake.migrate_calls, 0);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), 0);
	/* Unless a sparse range (a sanitizer's shadow) is part of the set, or
	 * the source nodes hold memory it may not move (libc, which other
	 * tasks map): migrate_pages would take that along. */
	{
		struct np_task_memory mem;
		uint64_t bytes;
		bool clean;

		CHECK_INT(read_memory(ctx, &task, &mem, &bytes), 0);
		clean = res.bytes_skipped_sparse == 0;
		for (unsigned n = 0; n < mem.nr_node_slots; n++)
			if (n != FAKE_NODE && mem.movable_bytes[n] &&
			    np_task_memory_unmovable_on(&mem, (int)n))
				clean = false;
		CHECK_INT(res.used_migrate_pages, clean);
		CHECK_INT(fake.migrate_calls, clean);
		np_task_memory_clear(&mem);
	}
	CHECK_U64(np_stats_failures(stats, NP_CALL_MIGRATE_PAGES, 0), 0);

	/* The target dies during the second batch call: counted, not
	 * crashed, and the pid is not acted on again. */
	np_actuator_free(act);
	params.allow_migrate_pages = false;
	params.batch_pages = 64;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	fake.calls = 0;
	fake.kill_on_call = 2;
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -ESRCH);
	CHECK_INT(fake.calls, 2);
	CHECK_U64(np_stats_failures(stats, NP_CALL_MOVE_PAGES, ESRCH), 1);
	/* The actuator let go of the task's state (its pidfd closed). */
	CHECK(!at.tracked);
	CHECK_INT(at.pidfd, -1);
	CHECK_INT(move(act, &at, &task, FAKE_NODE, 0, &res), -ESRCH);
	CHECK_INT(fake.calls, 2);
	np_act_task_release(&at);

	/* It dies inside the call: move_pages(2) fails with EINVAL once an
	 * exiting task has let go of its memory. That is its exit, counted as
	 * such, not an error to back off from. */
	child = spawn_child(4000);
	CHECK(child > 0);
	live_task(&task, child);
	np_act_task_init(&second_at);
	fake.calls = 0;
	fake.kill_errno = -EINVAL;
	CHECK_INT(move(act, &second_at, &task, 1, 0, &res), -ESRCH);
	CHECK_INT(fake.calls, 2);
	CHECK_U64(np_stats_failures(stats, NP_CALL_MOVE_PAGES, ESRCH), 2);
	CHECK_U64(np_stats_failures(stats, NP_CALL_MOVE_PAGES, EINVAL), 0);
	/* Its exit: the state was let go, not kept backing off. */
	CHECK(!second_at.tracked);
	np_act_task_release(&second_at);
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

static void test_identity(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_act_task at, other_at;
	int child = spawn_child(16), other;

	CHECK(child > 0);
	if (child <= 0)
		return;
	setup("/", "host", &ctx, &topo, &stats);
	CHECK_INT(np_actuator_new_real(ctx, stats, NULL, &act), 0);
	live_task(&task, child);
	np_act_task_init(&at);
	CHECK(task.start_ticks > 0);
	/* On one node, moving to node 0 finds nothing to do, but every check
	 * runs; on more (the test guest), a second move finds nothing left. */
	CHECK_INT(move(act, &at, &task, 0, 0, &res), 0);
	if (numa_max_node() > 0) {
		/* Pages the child still shared with us (copy on write) were
		 * refused; some may be its own by now. Nothing else is left. */
		uint64_t refused = res.pages_failed;

		CHECK_INT(move(act, &at, &task, 0, 0, &res), 0);
		CHECK(res.pages_moved <= refused);
	} else {
		CHECK_U64(res.pages_moved, 0);
	}
	/* The moves read no numa_maps: move() read it for them. */
	CHECK_U64(np_stats_scans(stats), 0);
	reap(child);
	CHECK_INT(move(act, &at, &task, 0, 0, &res), -ESRCH);
	/* Gone: the actuator let go of its state. */
	CHECK(!at.tracked);
	CHECK_INT(at.pidfd, -1);
	/* A fresh process that might have got the pid: the (pid, start) we
	 * hold is refused whatever now answers to the pid. Start times count
	 * clock ticks; one begun in the same tick as the child would be the
	 * child as far as any reader of /proc can tell, and a pid is not
	 * reused that fast, so the stand-in starts in a later tick. */
	other = spawn_child(1);
	for (int tries = 0; tries < 100 && read_start_ticks(other) == task.start_ticks; tries++) {
		reap(other);
		usleep(2000);
		other = spawn_child(1);
	}
	CHECK(read_start_ticks(other) != task.start_ticks);
	/* (other's pid, the child's start): another identity, so a fresh
	 * state, as the daemon's table would give it. */
	task.pid = other;
	np_act_task_init(&other_at);
	CHECK_INT(move(act, &other_at, &task, 0, 0, &res), -ESRCH);
	CHECK(!other_at.tracked);
	reap(other);
	np_act_task_release(&at);
	np_act_task_release(&other_at);
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

static void test_real_affinity(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_affinity_result res;
	struct np_task task;
	struct np_act_task at;
	struct np_bitmap mine, one;
	int child, first;

	CHECK_INT(np_actuator_sys_kernel()->get_affinity(NULL, 0, &mine), 0);
	if (np_bitmap_weight(&mine) < 2) {
		printf("one CPU: affinity narrowing not exercised\n");
		return;
	}
	child = spawn_child(1);
	CHECK(child > 0);
	if (child <= 0)
		return;
	setup("/", "host", &ctx, &topo, &stats);
	CHECK_INT(np_actuator_new_real(ctx, stats, NULL, &act), 0);
	live_task(&task, child);
	np_act_task_init(&at);
	first = np_bitmap_next(&mine, 0);
	np_bitmap_zero(&one);
	np_bitmap_set(&one, (unsigned)first);
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &one, &res), 0);
	CHECK_INT(res.nr, 1);
	CHECK_INT(res.threads[0].tid, child);
	CHECK_INT(res.threads[0].outcome, NP_THREAD_NARROWED);
	CHECK(np_bitmap_equal(&res.threads[0].effective, &one));
	CHECK(np_bitmap_equal(&res.threads[0].before, &mine));
	np_affinity_result_clear(&res);
	/* Again: already inside. */
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &one, &res), 0);
	CHECK_INT(res.counts[NP_THREAD_UNCHANGED], 1);
	np_affinity_result_clear(&res);
	/* A node whose CPUs the thread may not use: never widened. */
	np_bitmap_zero(&one);
	np_bitmap_set(&one, (unsigned)np_bitmap_next(&mine, (unsigned)first + 1));
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &one, &res), 0);
	CHECK_INT(res.counts[NP_THREAD_EMPTY], 1);
	np_affinity_result_clear(&res);
	reap(child);
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &one, &res), -ESRCH);
	np_affinity_result_clear(&res);
	np_act_task_release(&at);
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* A set_affinity that lets the process die during the call: the kernel
 * would have set whatever thread the id named by then. */
static int dying_set_affinity(void *data, int tid, const struct np_bitmap *cpus)
{
	int *pid = data;

	kill(*pid, SIGKILL);
	/* A zombie now, not reaped: its id, its stat and its mask still
	 * answer; only its pidfd says it exited. */
	waitid(P_PID, (id_t)*pid, NULL, WEXITED | WNOWAIT);
	return 0;
}

/* A process that exits while its thread's mask is set may have passed the
 * thread's id on: the thread is counted as vanished, never as narrowed. */
static void test_affinity_exit_during_set(void)
{
	struct np_actuator_sys sys = *np_actuator_sys_kernel();
	struct np_actuator_params params;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator *act;
	struct np_affinity_result res;
	struct np_task task;
	struct np_act_task at;
	struct np_bitmap mine, one;
	long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	int child;

	if (pidfd >= 0)
		close((int)pidfd);
	CHECK_INT(np_actuator_sys_kernel()->get_affinity(NULL, 0, &mine), 0);
	if (np_bitmap_weight(&mine) < 2 || pidfd < 0) {
		printf("one CPU or no pidfd: a death during the set is not exercised\n");
		return;
	}
	child = spawn_child(1);
	CHECK(child > 0);
	if (child <= 0)
		return;
	sys.set_affinity = dying_set_affinity;
	sys.data = &child;
	np_actuator_params_init(&params);
	params.sys = &sys;
	setup("/", "host", &ctx, &topo, &stats);
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	live_task(&task, child);
	np_act_task_init(&at);
	np_bitmap_zero(&one);
	np_bitmap_set(&one, (unsigned)np_bitmap_next(&mine, 0));
	CHECK_INT(np_actuator_set_affinity(act, &at, &task, NULL, &one, &res), -ESRCH);
	CHECK_INT(res.nr, 1);
	CHECK_INT(res.counts[NP_THREAD_NARROWED], 0);
	CHECK_INT(res.counts[NP_THREAD_VANISHED], 1);
	np_affinity_result_clear(&res);
	waitpid(child, NULL, 0);
	np_act_task_release(&at);
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* A move off the caller's thread: start returns while the calls run, a
 * second start of the same task waits its turn, the fd says when the calls are done, and
 * finishing accounts every page as a move made in place would; a task
 * whose state the caller let go is finished all the same. */
static void test_move_off_thread(void)
{
	static struct parallel_kernel pk;
	struct np_actuator_sys sys;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task;
	struct np_task_memory mem;
	uint64_t bytes_read = 0;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	parallel_params(&params, &sys, &pk, 2);
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	CHECK_INT(np_actuator_move_fd(act) >= 0, 1);
	CHECK_INT(np_actuator_move_finish(act, 1, 0, NULL, &res), -ENOENT);
	for (int keep_state = 1; keep_state >= 0; keep_state--) {
		struct np_act_task at;
		uintptr_t addr = 0;
		int child = spawn_region_child(4000, 1, &addr), pid = 0, target = -1;
		uint64_t before = np_stats_migrated_bytes(stats, 0, FAKE_NODE);
		uint64_t busy = np_stats_skips(stats, NP_REASON_MOVING_OTHER);
		struct pollfd pfd;

		CHECK(child > 0);
		if (child <= 0)
			break;
		virtual_ns = 9000 * SEC;
		memset(&pk, 0, sizeof(pk));
		pk.lo = addr;
		pk.hi = addr + 4000 * 4096ul;
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(read_memory(mem_ctx, &task, &mem, &bytes_read), 0);
		CHECK_INT(np_actuator_move_start(act, &at, &task, &mem, FAKE_NODE, 0, &res), 1);
		/* The calls need no read of the tick's any more. */
		np_task_memory_clear(&mem);
		CHECK(np_actuator_moving(act, &pid, NULL, &target));
		CHECK_INT(pid, child);
		CHECK_INT(target, FAKE_NODE);
		/* Some 60 calls of 2 ms: still in flight. */
		CHECK(!np_actuator_move_ended(act));
		CHECK_INT(np_actuator_move_start(act, &at, &task, &mem, FAKE_NODE, 0, &res),
			  -EBUSY);
		CHECK_U64(np_stats_skips(stats, NP_REASON_MOVING_OTHER), busy + 1);
		pfd = (struct pollfd){.fd = np_actuator_move_fd(act), .events = POLLIN};
		CHECK_INT(poll(&pfd, 1, 10000), 1);
		CHECK(np_actuator_move_ended(act));
		if (!keep_state)
			np_act_task_release(&at);
		CHECK_INT(np_actuator_move_finish(act, task.pid, task.start_ticks,
						  keep_state ? &at : NULL, &res),
			  0);
		CHECK(!np_actuator_moving(act, NULL, NULL, NULL));
		CHECK_U64(atomic_load(&pk.region_pages), 4000);
		CHECK_U64(res.pages_moved, atomic_load(&pk.pages));
		CHECK_INT(res.calls, atomic_load(&pk.calls));
		CHECK_U64(np_stats_migrated_bytes(stats, 0, FAKE_NODE) - before, res.bytes_moved);
		/* Drained: the fd waits for the next move. */
		CHECK_INT(poll(&pfd, 1, 0), 0);
		np_act_task_release(&at);
		reap(child);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* Moves of different tasks at once, each with its own movers: two in
 * flight together (more calls in flight than one move's movers), a third
 * task waits its turn, and each is finished by its own task; with one
 * move at a time, the second task waits. */
static void test_moves_at_once(void)
{
	static struct parallel_kernel pk;
	struct np_actuator_sys sys;
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act;
	struct np_move_result res;
	struct np_task task[3];
	struct np_act_task at[3];
	int child[3];
	uintptr_t addr[3] = {0};

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	parallel_params(&params, &sys, &pk, 2);
	params.moves = 2;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	memset(&pk, 0, sizeof(pk));
	virtual_ns = 12000 * SEC;
	for (int i = 0; i < 3; i++) {
		child[i] = spawn_region_child(4000, 1, &addr[i]);
		CHECK(child[i] > 0);
		if (child[i] <= 0)
			return;
		live_task(&task[i], child[i]);
		np_act_task_init(&at[i]);
	}
	for (int round = 0; round < 2; round++) {
		uint64_t busy = np_stats_skips(stats, NP_REASON_MOVING_OTHER);
		int started = 0;

		atomic_store(&pk.most_in_flight, 0);
		for (int i = 0; i < 3; i++) {
			struct np_task_memory mem;
			uint64_t bytes_read = 0;
			int err;

			CHECK_INT(read_memory(mem_ctx, &task[i], &mem, &bytes_read), 0);
			err = np_actuator_move_start(act, &at[i], &task[i], &mem, FAKE_NODE, 0,
						     &res);
			np_task_memory_clear(&mem);
			/* Two at once in the first round, one in the second. */
			CHECK_INT(err, i < (round ? 1 : 2) ? 1 : -EBUSY);
			started += err == 1;
		}
		CHECK_U64(np_stats_skips(stats, NP_REASON_MOVING_OTHER), busy + 3 - started);
		CHECK(!np_actuator_move_room(act));
		CHECK(np_actuator_task_moving(act, task[0].pid, task[0].start_ticks));
		CHECK(np_actuator_task_moving(act, task[1].pid, task[1].start_ticks) == !round);
		CHECK(!np_actuator_task_moving(act, task[2].pid, task[2].start_ticks));
		for (int i = 0; i < started; i++) {
			CHECK_INT(np_actuator_move_finish(act, task[i].pid, task[i].start_ticks, &at[i],
							  &res),
				  0);
			/* Its region and the rest of the child's pages. */
			CHECK(res.pages_moved >= 4000);
		}
		CHECK(!np_actuator_moving(act, NULL, NULL, NULL));
		CHECK(np_actuator_move_room(act));
		/* Each move has two movers: more in flight, both ran at once. */
		if (!round)
			CHECK(atomic_load(&pk.most_in_flight) > 2);
		else
			CHECK(atomic_load(&pk.most_in_flight) <= 2);
		np_actuator_set_moves(act, 1);
	}
	for (int i = 0; i < 3; i++) {
		np_act_task_release(&at[i]);
		reap(child[i]);
	}
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

/* Areas of a task, each to its own node: only their pages move, each to
 * its area's node, looked up (nothing says they are dense); areas out of
 * order are refused, and a dry run does not move areas. */
static void test_move_areas(void)
{
	struct np_ctx *ctx;
	struct np_topology *topo;
	struct np_stats *stats;
	struct np_actuator_params params;
	struct np_actuator *act, *dry;
	struct np_move_result res;
	struct np_act_task at;
	struct np_task task;
	struct np_task_memory mem;
	uint64_t bytes_read = 0;
	uintptr_t addr = 0;
	int child, target = 0;

	setup("/", "handmade-4node", &ctx, &topo, &stats);
	fake_params(&params);
	params.movers = 2;
	virtual_ns = 11000 * SEC;
	CHECK_INT(np_actuator_new_real(ctx, stats, &params, &act), 0);
	CHECK_INT(np_actuator_new_dry(ctx, stats, &params, &dry), 0);
	child = spawn_region_child(4000, 1, &addr);
	CHECK(child > 0);
	if (child > 0) {
		/* Pages 0-999 to node 3, 2000-2999 to node 2. */
		struct np_move_area areas[] = {
		    {addr, addr + 1000 * 4096ul, FAKE_NODE},
		    {addr + 2000 * 4096ul, addr + 3000 * 4096ul, 2},
		};
		struct np_move_area backwards[] = {areas[1], areas[0]};
		struct pollfd pfd;

		memset(&fake, 0, sizeof(fake));
		fake.ns_per_page = 1000;
		fake.watch_lo = addr;
		fake.watch_hi = addr + 4000 * 4096ul;
		live_task(&task, child);
		np_act_task_init(&at);
		CHECK_INT(read_memory(mem_ctx, &task, &mem, &bytes_read), 0);
		CHECK_INT(np_actuator_move_areas_start(act, &at, &task, &mem, backwards, 2, 0, &res),
			  -EINVAL);
		CHECK_INT(np_actuator_move_areas_start(dry, &at, &task, &mem, areas, 2, 0, &res),
			  -EOPNOTSUPP);
		CHECK_INT(np_actuator_move_areas_start(act, &at, &task, &mem, areas, 2, 0, &res), 1);
		CHECK(np_actuator_moving(act, NULL, NULL, &target));
		CHECK_INT(target, -1);
		pfd = (struct pollfd){.fd = np_actuator_move_fd(act), .events = POLLIN};
		CHECK_INT(poll(&pfd, 1, 10000), 1);
		CHECK_INT(np_actuator_move_finish(act, task.pid, task.start_ticks, &at, &res), 0);
		CHECK_U64(fake.watched_to[FAKE_NODE], 1000);
		CHECK_U64(fake.watched_to[2], 1000);
		CHECK_U64(fake.watched_to[0] + fake.watched_to[1], 0);
		CHECK_U64(fake.watched_lookups, 2000);
		CHECK_U64(res.pages_moved, 2000);
		np_task_memory_clear(&mem);
		np_act_task_release(&at);
		reap(child);
	}
	np_actuator_free(dry);
	np_actuator_free(act);
	teardown(ctx, topo, stats);
}

int main(void)
{
	CHECK_INT(np_memory_reader_new(&mem_reader), 0);
	test_token_bucket();
	test_backoff();
	test_page_plan();
	test_batch_size();
	test_call_model();
	test_call_model_next();
	test_movers_for_load();
	test_movers_under_load();
	test_affinity_narrow();
	test_maps_parse();
	test_dry_run_pages();
	test_reads_no_numa_maps();
	test_set_rate();
	test_dry_run_affinity();
	test_kernel_move_pages_self();
	test_identity();
	test_real_affinity();
	test_affinity_exit_during_set();
	test_real_batches();
	test_dense_ranges_skip_lookups();
	test_moves_top_down();
	test_huge_blocks_whole();
	test_huge_blocks_nearest_edge();
	test_huge_split_between_calls();
	test_failed_pages_tried_again();
	test_stop_hook();
	test_movers();
	test_move_off_thread();
	test_moves_at_once();
	test_move_areas();
	np_memory_reader_free(mem_reader);
	return check_done();
}
