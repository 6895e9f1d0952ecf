/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bitmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NWORDS (NP_MAX_CPUS / 64)

void np_bitmap_zero(struct np_bitmap *b)
{
	memset(b, 0, sizeof(*b));
}

void np_bitmap_set(struct np_bitmap *b, unsigned bit)
{
	if (bit < NP_MAX_CPUS)
		b->w[bit / 64] |= UINT64_C(1) << (bit % 64);
}

void np_bitmap_clear(struct np_bitmap *b, unsigned bit)
{
	if (bit < NP_MAX_CPUS)
		b->w[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
}

bool np_bitmap_test(const struct np_bitmap *b, unsigned bit)
{
	return bit < NP_MAX_CPUS && (b->w[bit / 64] >> (bit % 64)) & 1;
}

unsigned np_bitmap_weight(const struct np_bitmap *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NWORDS; i++)
		n += (unsigned)__builtin_popcountll(b->w[i]);
	return n;
}

bool np_bitmap_empty(const struct np_bitmap *b)
{
	for (unsigned i = 0; i < NWORDS; i++)
		if (b->w[i])
			return false;
	return true;
}

bool np_bitmap_equal(const struct np_bitmap *a, const struct np_bitmap *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

bool np_bitmap_subset(const struct np_bitmap *sub, const struct np_bitmap *super)
{
	for (unsigned i = 0; i < NWORDS; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

void np_bitmap_and(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b)
{
	for (unsigned i = 0; i < NWORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void np_bitmap_or(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b)
{
	for (unsigned i = 0; i < NWORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

int np_bitmap_next(const struct np_bitmap *b, unsigned from)
{
	for (unsigned i = from / 64; i < NWORDS; i++) {
		uint64_t word = b->w[i];

		if (i == from / 64)
			word &= ~UINT64_C(0) << (from % 64);
		if (word)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(word));
	}
	return -1;
}

static int parse_number(const char **p, const char *end, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	while (s < end && *s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= NP_MAX_CPUS)
			return -ERANGE;
		s++;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

int np_bitmap_parse_list(struct np_bitmap *b, const char *s, size_t len)
{
	const char *end = s + len;
	int err;

	np_bitmap_zero(b);
	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	while (s < end) {
		unsigned lo, hi;

		err = parse_number(&s, end, &lo);
		if (err)
			return err;
		hi = lo;
		if (s < end && *s == '-') {
			s++;
			err = parse_number(&s, end, &hi);
			if (err)
				return err;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned bit = lo; bit <= hi; bit++)
			np_bitmap_set(b, bit);
		if (s < end) {
			if (*s != ',' || s + 1 == end)
				return -EINVAL;
			s++;
		}
	}
	return 0;
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

size_t np_bitmap_format_list(const struct np_bitmap *b, char *buf, size_t size)
{
	size_t used = 0;
	int bit = np_bitmap_next(b, 0);

	if (size)
		buf[0] = '\0';
	while (bit >= 0) {
		int last = bit;
		int n;

		while (np_bitmap_test(b, (unsigned)last + 1))
			last++;
		if (last == bit)
			n = snprintf(buf ? buf + (used < size ? used : size) : NULL,
				     used < size ? size - used : 0, "%s%d", used ? "," : "", bit);
		else
			n = snprintf(buf ? buf + (used < size ? used : size) : NULL,
				     used < size ? size - used : 0, "%s%d-%d", used ? "," : "", bit,
				     last);
		used += (size_t)n;
		bit = np_bitmap_next(b, (unsigned)last + 1);
	}
	return used;
}
