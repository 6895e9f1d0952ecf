/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for np_config_parse(): any bytes as a config file. A
 * refused file leaves the config as it was and explains itself: -EINVAL,
 * at least one error, each "fuzz.conf:LINE: message" with a line the file
 * has, in line order. An accepted one has no errors, does not depend on
 * the config it replaced, and survives the round trip of `numaplaced -nv`:
 * what np_config_write prints parses to an equal config and prints the same
 * text again; a deep copy is equal too. Any disagreement aborts.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.conf"

/* The normalised text of @cfg, malloc'd; NULL when memory ran out. */
static char *print_config(const struct np_config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	if (!out)
		return NULL;
	if (np_config_write(cfg, out) != 0)
		abort();
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void check_errors(const struct np_config_errors *errs, const char *buf, size_t size)
{
	unsigned lines = 1, prev = 0;

	for (size_t i = 0; i < size; i++)
		lines += buf[i] == '\n';
	if (errs->n == 0)
		abort();
	for (size_t i = 0; i < errs->n; i++) {
		const char *m = errs->msg[i];
		char *end;
		unsigned long line;

		if (strncmp(m, NAME ":", sizeof(NAME)) != 0)
			abort();
		line = strtoul(m + sizeof(NAME), &end, 10);
		if (end == m + sizeof(NAME) || strncmp(end, ": ", 2) != 0 || end[2] == '\0' ||
		    line < 1 || line > lines || line < prev)
			abort();
		prev = (unsigned)line;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct np_config cfg, defaults, again, copy;
	struct np_config_errors errs = {0};
	char *text, *text2;
	size_t len, len2;
	int err;

	np_config_init(&cfg);
	np_config_init(&defaults);
	err = np_config_parse(NAME, buf, size, &cfg, &errs);
	if (err == -ENOMEM)
		goto out;
	if (err) {
		if (err != -EINVAL || !np_config_equal(&cfg, &defaults))
			abort();
		check_errors(&errs, buf, size);
		goto out;
	}
	if (errs.n)
		abort();

	/* Over a config that holds the file's settings: the same result. */
	if (np_config_copy(&again, &cfg) != 0)
		goto out;
	if (!np_config_equal(&again, &cfg))
		abort();
	if (np_config_parse(NAME, buf, size, &again, &errs) == 0 && !np_config_equal(&again, &cfg))
		abort();
	np_config_free(&again);

	text = print_config(&cfg, &len);
	if (!text)
		goto out;
	np_config_init(&again);
	err = np_config_parse("normalised", text, len, &again, &errs);
	if (err == 0) {
		if (!np_config_equal(&again, &cfg))
			abort();
		text2 = print_config(&again, &len2);
		if (text2 && (len2 != len || memcmp(text, text2, len) != 0))
			abort();
		free(text2);
	} else if (err != -ENOMEM) {
		abort(); /* the printed config does not parse */
	}
	if (np_config_copy(&copy, &cfg) == 0 && !np_config_equal(&copy, &cfg))
		abort();
	np_config_free(&copy);
	np_config_free(&again);
	free(text);
out:
	np_config_errors_free(&errs);
	np_config_free(&cfg);
	return 0;
}
