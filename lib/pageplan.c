/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pageplan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int np_page_plan_build(void *const *pages, const int *status, const int *dst, bool one_dst,
		       unsigned n, unsigned batch_pages, struct np_page_plan *plan)
{
	int *dsts = NULL;
	unsigned *counts = NULL, nr_dsts = 0, *next = NULL;
	int err = -ENOMEM;

	memset(plan, 0, sizeof(*plan));
	if (!batch_pages)
		return -EINVAL;
	plan->pages = malloc((n ? n : 1) * sizeof(*plan->pages));
	plan->src = malloc((n ? n : 1) * sizeof(*plan->src));
	dsts = malloc((n ? n : 1) * sizeof(*dsts));
	counts = calloc(n ? n : 1, sizeof(*counts));
	next = calloc(n ? n : 1, sizeof(*next));
	if (!plan->pages || !plan->src || !dsts || !counts || !next)
		goto out;

	/* Count the pages to move per destination, destinations in order of
	 * first appearance (a handful: a linear search is fine). */
	for (unsigned i = 0; i < n; i++) {
		int d = one_dst ? dst[0] : dst[i];
		unsigned k;

		if (status[i] < 0) {
			plan->not_present++;
			continue;
		}
		if (status[i] == d) {
			plan->in_place++;
			continue;
		}
		for (k = 0; k < nr_dsts && dsts[k] != d; k++)
			;
		if (k == nr_dsts)
			dsts[nr_dsts++] = d;
		counts[k]++;
		plan->nr_pages++;
	}
	for (unsigned k = 0, at = 0; k < nr_dsts; k++) {
		next[k] = at;
		at += counts[k];
		plan->nr_batches += (counts[k] + batch_pages - 1) / batch_pages;
	}
	plan->batches = malloc((plan->nr_batches ? plan->nr_batches : 1) * sizeof(*plan->batches));
	if (!plan->batches)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		int d = one_dst ? dst[0] : dst[i];
		unsigned k;

		if (status[i] < 0 || status[i] == d)
			continue;
		for (k = 0; dsts[k] != d; k++)
			;
		plan->pages[next[k]] = pages[i];
		plan->src[next[k]] = status[i];
		next[k]++;
	}
	for (unsigned k = 0, at = 0, b = 0; k < nr_dsts; k++) {
		for (unsigned done = 0; done < counts[k]; done += batch_pages) {
			unsigned left = counts[k] - done;

			plan->batches[b].dst = dsts[k];
			plan->batches[b].first = at + done;
			plan->batches[b].count = left < batch_pages ? left : batch_pages;
			b++;
		}
		at += counts[k];
	}
	err = 0;
out:
	free(dsts);
	free(counts);
	free(next);
	if (err)
		np_page_plan_clear(plan);
	return err;
}

void np_page_plan_clear(struct np_page_plan *plan)
{
	free(plan->pages);
	free(plan->src);
	free(plan->batches);
	memset(plan, 0, sizeof(*plan));
}

static int compare_ranges(const void *a, const void *b)
{
	const struct np_vma_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Digits of @base from *@q up to @end, at most 16 of them; false when none. */
static bool read_number(const char **q, const char *end, unsigned base, uint64_t *out)
{
	unsigned digits = 0;

	*out = 0;
	for (; *q < end && digits < 17; (*q)++, digits++) {
		char c = **q;
		int d = c >= '0' && c <= '9'		     ? c - '0'
			: base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
							     : -1;

		if (d < 0)
			break;
		*out = *out * base + (uint64_t)d;
	}
	return digits > 0 && digits <= 16;
}

/* " rw-s 00000000 00:05 1234 ..." after the range: perms, offset, dev and
 * inode. Lenient: a line that does not read so is kept without them. */
static void read_object(const char *q, const char *eol, struct np_vma_range *r)
{
	uint64_t offset, major, minor, inode;

	r->shared_writable = false;
	r->dev = r->inode = 0;
	if (eol - q < 6 || q[0] != ' ')
		return;
	q++;
	if (q[1] != 'w' || q[3] != 's' || q[4] != ' ')
		return;
	q += 5;
	if (!read_number(&q, eol, 16, &offset) || q == eol || *q++ != ' ' ||
	    !read_number(&q, eol, 16, &major) || q == eol || *q++ != ':' ||
	    !read_number(&q, eol, 16, &minor) || q == eol || *q++ != ' ' ||
	    !read_number(&q, eol, 10, &inode) || (q != eol && *q != ' '))
		return;
	r->shared_writable = inode != 0;
	r->dev = major << 32 | (minor & 0xffffffffu);
	r->inode = inode;
}

int np_maps_parse(const char *buf, size_t len, struct np_vma_range **ranges, unsigned *nr,
		  unsigned *err_line)
{
	struct np_vma_range *v = NULL;
	unsigned n = 0, cap = 0, line = 0;
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		uint64_t start = 0, stop = 0;
		const char *q = p;

		if (!eol)
			eol = end;
		line++;
		if (!read_number(&q, eol, 16, &start) || q == eol || *q++ != '-' ||
		    !read_number(&q, eol, 16, &stop) || (q != eol && *q != ' ') || stop <= start)
			goto bad;
		if (n == cap) {
			struct np_vma_range *bigger;

			cap = cap ? cap * 2 : 64;
			bigger = realloc(v, cap * sizeof(*v));
			if (!bigger) {
				free(v);
				return -ENOMEM;
			}
			v = bigger;
		}
		v[n].start = start;
		v[n].end = stop;
		read_object(q, eol, &v[n]);
		n++;
		p = eol + 1;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), compare_ranges);
	*ranges = v;
	*nr = n;
	return 0;
bad:
	free(v);
	if (err_line)
		*err_line = line;
	return -EINVAL;
}
