/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_maskfile_parse(): any bytes, never a crash or an
 * over-read (the input buffer is exactly @size bytes), the same result
 * twice, a bad line that exists, and on success only entries the contract
 * allows, one per line. What was parsed must format, the text must be no
 * longer than the input (the formatter writes each number and list at its
 * shortest) and must parse back to the same entries and format to the same
 * text. Any disagreement aborts.
 */
#include "config.h"
#include "maskfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_entries(const struct np_saved_mask *a, const struct np_saved_mask *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].pid != b[i].pid || a[i].start_ticks != b[i].start_ticks ||
		    !np_bitmap_equal(&a[i].before, &b[i].before) ||
		    !np_bitmap_equal(&a[i].narrowed, &b[i].narrowed))
			return false;
	return true;
}

static void check_entries(const struct np_saved_mask *v, size_t n)
{
	if (n > NP_MASKFILE_ENTRIES_MAX)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (v[i].pid < 1 || v[i].pid > NP_CONFIG_PID_MAX ||
		    np_bitmap_empty(&v[i].narrowed) ||
		    !np_bitmap_subset(&v[i].narrowed, &v[i].before))
			abort();
		/* Quadratic, but fuzz inputs are small. */
		for (size_t j = 0; j < i && n <= 4096; j++)
			if (v[j].pid == v[i].pid && v[j].start_ticks == v[i].start_ticks)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_saved_mask *a, *b, *c;
	size_t na, nb, nc, newlines = 0, len, len2;
	unsigned line_a, line_b, line_c;
	char *text, *text2 = NULL;
	int err;

	for (size_t i = 0; i < size; i++)
		newlines += buf[i] == '\n';
	err = np_maskfile_parse(buf, size, &a, &na, &line_a);
	if (err == -ENOMEM)
		return 0;
	if (np_maskfile_parse(buf, size, &b, &nb, &line_b) != err || line_b != line_a || nb != na ||
	    (err == 0 && !same_entries(a, b, na)))
		abort();
	free(b);
	if (err) {
		if (err != -EINVAL || a || na || line_a < 1 || line_a > newlines + 1)
			abort();
		return 0;
	}
	if (line_a != 0 || na + 1 != newlines || buf[size - 1] != '\n' || (na == 0) != (a == NULL))
		abort();
	check_entries(a, na);

	err = np_maskfile_format(a, na, &text, &len);
	if (err == -ENOMEM) {
		free(a);
		return 0;
	}
	if (err || len > size || strlen(text) != len)
		abort();
	if (np_maskfile_parse(text, len, &c, &nc, &line_c) != 0 || nc != na ||
	    !same_entries(a, c, na))
		abort();
	if (np_maskfile_format(c, nc, &text2, &len2) == 0 &&
	    (len2 != len || memcmp(text, text2, len) != 0))
		abort();
	free(text2);
	free(text);
	free(c);
	free(a);
	return 0;
}
