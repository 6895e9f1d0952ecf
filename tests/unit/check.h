/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A minimal test harness: each CHECK counts, a failure prints where and
 * what, and main returns the failure count's status. */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                      \
	do {                                                                             \
		check_count++;                                                           \
		if (!(cond)) {                                                           \
			check_failures++;                                                \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
		}                                                                        \
	} while (0)

#define CHECK_INT(a, b)                                                                  \
	do {                                                                             \
		long long va_ = (long long)(a), vb_ = (long long)(b);                    \
		check_count++;                                                           \
		if (va_ != vb_) {                                                        \
			check_failures++;                                                \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n",      \
				__FILE__, __LINE__, #a, va_, #b, vb_);                   \
		}                                                                        \
	} while (0)

#define CHECK_U64(a, b)                                                                  \
	do {                                                                             \
		uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                       \
		check_count++;                                                           \
		if (va_ != vb_) {                                                        \
			check_failures++;                                                \
			fprintf(stderr, "%s:%d: %s == %" PRIu64 ", expected %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, va_, vb_);                       \
		}                                                                        \
	} while (0)

#define CHECK_STR(a, b)                                                                  \
	do {                                                                             \
		const char *sa_ = (a), *sb_ = (b);                                       \
		check_count++;                                                           \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                             \
			check_failures++;                                                \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n",        \
				__FILE__, __LINE__, #a, sa_ ? sa_ : "(null)",            \
				sb_ ? sb_ : "(null)");                                   \
		}                                                                        \
	} while (0)

/* Path of a fixture case: $NP_FIXTURES/<name>. */
static inline const char *fixture(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("NP_FIXTURES");

	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : "tests/fixtures", name);
	return buf;
}

/* Write @text to @dir/@name (a fixture tree's file); 0, or -1. */
static inline int put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static inline int check_done(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
