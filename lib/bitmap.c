/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bitmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/*
 * CPU sets and node sets differ only in length: each operation is written
 * once over an array of @n 64-bit words, and each type's functions pass
 * their own array.
 */
#define NWORDS(set) ((unsigned)(sizeof((set)->w) / sizeof((set)->w[0])))

static void words_zero(uint64_t *w, unsigned n)
{
	memset(w, 0, n * sizeof(*w));
}

static void words_set(uint64_t *w, unsigned n, unsigned bit)
{
	if (bit < n * 64)
		w[bit / 64] |= UINT64_C(1) << (bit % 64);
}

static void words_clear(uint64_t *w, unsigned n, unsigned bit)
{
	if (bit < n * 64)
		w[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
}

static bool words_test(const uint64_t *w, unsigned n, unsigned bit)
{
	return bit < n * 64 && (w[bit / 64] >> (bit % 64)) & 1;
}

static unsigned words_weight(const uint64_t *w, unsigned n)
{
	unsigned weight = 0;

	for (unsigned i = 0; i < n; i++)
		weight += (unsigned)__builtin_popcountll(w[i]);
	return weight;
}

static bool words_empty(const uint64_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (w[i])
			return false;
	return true;
}

static bool words_equal(const uint64_t *a, const uint64_t *b, unsigned n)
{
	return memcmp(a, b, n * sizeof(*a)) == 0;
}

static int words_next(const uint64_t *w, unsigned n, unsigned from)
{
	for (unsigned i = from / 64; i < n; i++) {
		uint64_t word = w[i];

		if (i == from / 64)
			word &= ~UINT64_C(0) << (from % 64);
		if (word)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(word));
	}
	return -1;
}

static int parse_number(const char **p, const char *end, unsigned limit, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= limit)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

static int words_parse_list(uint64_t *w, unsigned n, const char *s, size_t len)
{
	const char *end = s + len;
	int err;

	words_zero(w, n);
	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	while (s < end) {
		unsigned lo, hi;

		err = parse_number(&s, end, n * 64, &lo);
		if (err)
			return err;
		hi = lo;
		if (s < end && *s == '-') {
			s++;
			err = parse_number(&s, end, n * 64, &hi);
			if (err)
				return err;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned bit = lo; bit <= hi; bit++)
			words_set(w, n, bit);
		if (s < end) {
			if (*s != ',' || s + 1 == end)
				return -EINVAL;
			s++;
		}
	}
	return 0;
}

static size_t words_format_list(const uint64_t *w, unsigned n, char *buf, size_t size)
{
	size_t used = 0;
	int bit = words_next(w, n, 0);

	if (size)
		buf[0] = '\0';
	while (bit >= 0) {
		int last = bit;
		int len;

		while (words_test(w, n, (unsigned)last + 1))
			last++;
		if (last == bit)
			len = snprintf(buf ? buf + (used < size ? used : size) : NULL,
				       used < size ? size - used : 0, "%s%d", used ? "," : "", bit);
		else
			len = snprintf(buf ? buf + (used < size ? used : size) : NULL,
				       used < size ? size - used : 0, "%s%d-%d", used ? "," : "",
				       bit, last);
		used += (size_t)len;
		bit = words_next(w, n, (unsigned)last + 1);
	}
	return used;
}

/* ---- CPU sets ---- */

void np_bitmap_zero(struct np_bitmap *b)
{
	words_zero(b->w, NWORDS(b));
}

void np_bitmap_set(struct np_bitmap *b, unsigned bit)
{
	words_set(b->w, NWORDS(b), bit);
}

void np_bitmap_clear(struct np_bitmap *b, unsigned bit)
{
	words_clear(b->w, NWORDS(b), bit);
}

bool np_bitmap_test(const struct np_bitmap *b, unsigned bit)
{
	return words_test(b->w, NWORDS(b), bit);
}

unsigned np_bitmap_weight(const struct np_bitmap *b)
{
	return words_weight(b->w, NWORDS(b));
}

bool np_bitmap_empty(const struct np_bitmap *b)
{
	return words_empty(b->w, NWORDS(b));
}

bool np_bitmap_equal(const struct np_bitmap *a, const struct np_bitmap *b)
{
	return words_equal(a->w, b->w, NWORDS(a));
}

bool np_bitmap_subset(const struct np_bitmap *sub, const struct np_bitmap *super)
{
	for (unsigned i = 0; i < NWORDS(sub); i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

void np_bitmap_and(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b)
{
	for (unsigned i = 0; i < NWORDS(dst); i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void np_bitmap_or(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b)
{
	for (unsigned i = 0; i < NWORDS(dst); i++)
		dst->w[i] = a->w[i] | b->w[i];
}

int np_bitmap_next(const struct np_bitmap *b, unsigned from)
{
	return words_next(b->w, NWORDS(b), from);
}

int np_bitmap_parse_list(struct np_bitmap *b, const char *s, size_t len)
{
	return words_parse_list(b->w, NWORDS(b), s, len);
}

size_t np_bitmap_format_list(const struct np_bitmap *b, char *buf, size_t size)
{
	return words_format_list(b->w, NWORDS(b), buf, size);
}

const char *np_next_field(const char **p, const char *end)
{
	const char *s = *p, *start;

	while (s < end && *s == ' ')
		s++;
	start = s;
	while (s < end && *s != ' ')
		s++;
	*p = s;
	return start < s ? start : NULL;
}

bool np_parse_u64(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end)
		return false;
	for (; s < end; s++) {
		unsigned d = (unsigned char)*s - '0';

		if (d > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
			return false;
	}
	*out = v;
	return true;
}

int np_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int np_bitmap_parse_mask(struct np_bitmap *b, const char *s, size_t len)
{
	const char *end = s + len;
	unsigned bit = 0;
	bool digits = false;

	np_bitmap_zero(b);
	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	/* The lowest nibble is the last character: walk backwards. */
	for (const char *p = end; p > s; p--) {
		char c = p[-1];
		int v;

		if (c == ',')
			continue;
		v = np_hex_value(c);
		if (v < 0)
			return -EINVAL;
		digits = true;
		for (int i = 0; i < 4; i++, bit++) {
			if (!(v >> i & 1))
				continue;
			if (bit >= NP_MAX_CPUS)
				return -ERANGE;
			np_bitmap_set(b, bit);
		}
	}
	return digits ? 0 : -EINVAL;
}

/* ---- node sets ---- */

void np_nodeset_zero(struct np_nodeset *set)
{
	words_zero(set->w, NWORDS(set));
}

void np_nodeset_set(struct np_nodeset *set, unsigned node)
{
	words_set(set->w, NWORDS(set), node);
}

bool np_nodeset_test(const struct np_nodeset *set, unsigned node)
{
	return words_test(set->w, NWORDS(set), node);
}

unsigned np_nodeset_weight(const struct np_nodeset *set)
{
	return words_weight(set->w, NWORDS(set));
}

bool np_nodeset_empty(const struct np_nodeset *set)
{
	return words_empty(set->w, NWORDS(set));
}

bool np_nodeset_equal(const struct np_nodeset *a, const struct np_nodeset *b)
{
	return words_equal(a->w, b->w, NWORDS(a));
}

int np_nodeset_next(const struct np_nodeset *set, unsigned from)
{
	return words_next(set->w, NWORDS(set), from);
}

int np_nodeset_parse_list(struct np_nodeset *set, const char *s, size_t len)
{
	return words_parse_list(set->w, NWORDS(set), s, len);
}

size_t np_nodeset_format_list(const struct np_nodeset *set, char *buf, size_t size)
{
	return words_format_list(set->w, NWORDS(set), buf, size);
}
