/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sample.h"

#include <errno.h>
#include <math.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "context.h"

uint64_t np_sample_next(struct np_sample_rng *rng)
{
	uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0, without the modulo's bias (Lemire's method). */
static uint64_t below(struct np_sample_rng *rng, uint64_t n)
{
	for (;;) {
		unsigned __int128 m = (unsigned __int128)np_sample_next(rng) * n;
		uint64_t low = (uint64_t)m;

		if (low >= n || low >= (0 - n) % n)
			return (uint64_t)(m >> 64);
	}
}

static uint64_t range_pages(const struct np_vma_range *r, uint64_t page_bytes)
{
	return r->end > r->start ? (r->end - r->start) / page_bytes : 0;
}

uint64_t np_sample_span(const struct np_vma_range *ranges, unsigned nr, uint64_t page_bytes)
{
	uint64_t span = 0;

	for (unsigned i = 0; i < nr; i++)
		span += range_pages(&ranges[i], page_bytes);
	return span;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

unsigned np_sample_draw(const struct np_vma_range *ranges, unsigned nr, uint64_t page_bytes,
			unsigned k, struct np_sample_rng *rng, uint64_t *addrs)
{
	uint64_t span = np_sample_span(ranges, nr, page_bytes), base = 0;
	unsigned n = 0;

	if (!span || !k || !page_bytes)
		return 0;
	if (span <= k) {
		for (unsigned i = 0; i < nr; i++)
			for (uint64_t p = 0; p < range_pages(&ranges[i], page_bytes); p++)
				addrs[n++] = ranges[i].start + p * page_bytes;
		return n;
	}
	/* Page indices into the span, sorted, then mapped to addresses in one
	 * pass over the ranges. */
	for (unsigned j = 0; j < k; j++)
		addrs[j] = below(rng, span);
	qsort(addrs, k, sizeof(*addrs), compare_u64);
	for (unsigned i = 0, j = 0; j < k; j++) {
		uint64_t base_next;

		while (addrs[j] >= (base_next = base + range_pages(&ranges[i], page_bytes))) {
			base = base_next;
			i++;
		}
		addrs[j] = ranges[i].start + (addrs[j] - base) * page_bytes;
	}
	return k;
}

struct np_sample_interval np_sample_wilson(unsigned hits, unsigned n)
{
	const double z = 1.959964;
	struct np_sample_interval iv = {0, 0, 1};
	double p, denom, centre, half;

	if (!n)
		return iv;
	p = (double)hits / n;
	denom = 1 + z * z / n;
	centre = (p + z * z / (2.0 * n)) / denom;
	half = z * sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denom;
	iv.estimate = p;
	iv.lo = centre - half < 0 ? 0 : centre - half;
	iv.hi = centre + half > 1 ? 1 : centre + half;
	return iv;
}

void np_sample_add(struct np_sample_count *count, const int *status, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		count->drawn++;
		if (status[i] < 0)
			continue;
		count->present++;
		if ((unsigned)status[i] < count->max_node)
			count->on_node[status[i]]++;
		else
			count->other++;
	}
}

unsigned np_sample_hits(const struct np_sample_count *count, const struct np_nodeset *nodes)
{
	unsigned hits = 0;

	for (unsigned n = 0; n < count->max_node; n++)
		if (np_nodeset_test(nodes, n))
			hits += count->on_node[n];
	return hits;
}

bool np_sample_decides(const struct np_sample_count *count, unsigned hits, double target)
{
	struct np_sample_interval iv;

	if (count->exact)
		return true;
	iv = np_sample_wilson(hits, count->present);
	return iv.hi < target || iv.lo >= target;
}

long np_sample_lookup_kernel(void *data, int pid, unsigned long n, void **pages, int *status)
{
	(void)data;
	return numa_move_pages(pid, n, pages, NULL, status, 0) < 0 ? -errno : 0;
}

/* Bound on a maps file read: 65,530 mappings of ~150 bytes are ~10 MiB. */
#define MAPS_MAX (256u << 20)

int np_sample_look(struct np_ctx *ctx, int pid, unsigned k, uint64_t page_bytes, unsigned chunk,
		   struct np_sample_rng *rng, np_sample_lookup_fn lookup, void *data,
		   struct np_sample_count *count)
{
	struct np_vma_range *ranges = NULL;
	uint64_t *addrs = NULL;
	void **pages = NULL;
	int *status = NULL;
	char path[64], *buf;
	unsigned nr = 0, line = 0, n;
	size_t len;
	int err;

	if (!k || !chunk || !page_bytes)
		return -EINVAL;
	snprintf(path, sizeof(path), "proc/%d/maps", pid);
	err = np_ctx_read_file(ctx, path, MAPS_MAX, &buf, &len);
	if (err)
		return np_is_vanished_error(err) ? -ESRCH : err;
	err = np_maps_parse(buf, len, &ranges, &nr, &line);
	free(buf);
	if (err == -EINVAL)
		np_log(ctx, LOG_ERR, "%s/%s:%u: expected \"start-end ...\"", np_ctx_root(ctx), path,
		       line);
	if (err)
		return err;
	addrs = malloc((size_t)k * sizeof(*addrs));
	if (chunk > k)
		chunk = k;
	status = malloc((size_t)chunk * sizeof(*status));
	pages = malloc((size_t)chunk * sizeof(*pages));
	if (!addrs || !status || !pages) {
		err = -ENOMEM;
		goto out;
	}
	count->exact = np_sample_span(ranges, nr, page_bytes) <= k;
	n = np_sample_draw(ranges, nr, page_bytes, k, rng, addrs);
	for (unsigned done = 0; done < n && !err; done += chunk) {
		unsigned m = n - done < chunk ? n - done : chunk;

		for (unsigned i = 0; i < m; i++)
			pages[i] = (void *)(uintptr_t)addrs[done + i];
		err = (int)lookup(data, pid, m, pages, status);
		if (!err)
			np_sample_add(count, status, m);
	}
	if (np_is_vanished_error(err))
		err = -ESRCH;
out:
	free(pages);
	free(status);
	free(addrs);
	free(ranges);
	return err;
}
