/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One config case: parse CASE.in with np_config_parse and compare with
 * CASE.ok byte for byte. A valid file's expected output is its normalised
 * form (what `numaplaced -nv` prints), an invalid file's is its error lines.
 * A valid file must also round-trip: the normalised text parses to the same
 * config and prints the same again. A refused file must leave the config it
 * was parsed over untouched.
 *
 *   conf-case CASE.in CASE.ok   check
 *   conf-case -p CASE.in        print the output, to write a new CASE.ok
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char chunk[4096];
	FILE *mem;
	size_t n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	mem = open_memstream(buf, len);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(f);
	fclose(mem);
	return 0;
}

static char *write_config(const struct np_config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *mem = open_memstream(&text, len);

	np_config_write(cfg, mem);
	fclose(mem);
	return text;
}

/* The output for one input; NULL after printing why the case itself is
 * broken (a round trip that fails, a config changed by a refused file). */
static char *run_case(const char *name, const char *input, size_t input_len, size_t *out_len)
{
	static const char previous[] = "min_rss_mb = 7\ninclude_comm = keep\n";
	struct np_config cfg, before, again;
	struct np_config_errors errs = {0};
	char *out = NULL, *out_again;
	size_t len_again;
	FILE *mem;
	int err;

	np_config_init(&cfg);
	np_config_init(&before);
	np_config_init(&again);
	if (np_config_parse("previous", previous, strlen(previous), &cfg, &errs) < 0 ||
	    np_config_parse("previous", previous, strlen(previous), &before, &errs) < 0)
		abort();

	err = np_config_parse(name, input, input_len, &cfg, &errs);
	if (err == -EINVAL) {
		if (!np_config_equal(&cfg, &before)) {
			fprintf(stderr, "%s: refused, but the config changed\n", name);
			goto out;
		}
		mem = open_memstream(&out, out_len);
		for (size_t i = 0; i < errs.n; i++)
			fprintf(mem, "%s\n", errs.msg[i]);
		fclose(mem);
		goto out;
	}
	if (err < 0) {
		fprintf(stderr, "%s: parse failed: %s\n", name, strerror(-err));
		goto out;
	}
	out = write_config(&cfg, out_len);
	if (np_config_parse("normalised", out, *out_len, &again, &errs) < 0) {
		fprintf(stderr, "%s: the normalised output does not parse:\n", name);
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		goto fail;
	}
	if (!np_config_equal(&cfg, &again)) {
		fprintf(stderr, "%s: the normalised output parses to another config\n", name);
		goto fail;
	}
	out_again = write_config(&again, &len_again);
	if (len_again != *out_len || memcmp(out, out_again, len_again) != 0) {
		fprintf(stderr, "%s: normalising twice gives another text\n", name);
		free(out_again);
		goto fail;
	}
	free(out_again);
	goto out;
fail:
	free(out);
	out = NULL;
out:
	np_config_errors_free(&errs);
	np_config_free(&cfg);
	np_config_free(&before);
	np_config_free(&again);
	return out;
}

int main(int argc, char **argv)
{
	bool print = argc == 3 && strcmp(argv[1], "-p") == 0;
	const char *in_path = argv[print ? 2 : 1];
	char *input, *expected, *actual, *base;
	size_t input_len, expected_len, actual_len;
	int status = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CASE.in CASE.ok | -p CASE.in\n", argv[0]);
		return 2;
	}
	if (read_file(in_path, &input, &input_len) < 0)
		return 2;
	base = strdup(in_path);
	actual = run_case(basename(base), input, input_len, &actual_len);
	if (!actual) {
		status = 1;
	} else if (print) {
		fwrite(actual, 1, actual_len, stdout);
	} else if (read_file(argv[2], &expected, &expected_len) < 0) {
		status = 2;
	} else {
		if (expected_len != actual_len || memcmp(expected, actual, actual_len) != 0) {
			fprintf(stderr,
				"%s: output differs from %s\n--- expected\n%.*s--- actual\n%.*s",
				in_path, argv[2], (int)expected_len, expected, (int)actual_len,
				actual);
			status = 1;
		}
		free(expected);
	}
	free(actual);
	free(base);
	free(input);
	return status;
}
