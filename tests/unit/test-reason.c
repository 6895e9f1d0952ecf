/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "reason.h"

#include <string.h>

/* Metric labels that predate the table (numaplaced.8 lists them). */
static const struct {
	enum np_reason reason;
	const char *metric;
} older_labels[] = {
    {NP_REASON_KERNEL_THREAD, "kthread"},
    {NP_REASON_TOO_SMALL, "small_rss"},
    {NP_REASON_LOCAL, "local_enough"},
};

static const char *older_label(enum np_reason r)
{
	for (size_t i = 0; i < sizeof(older_labels) / sizeof(older_labels[0]); i++)
		if (older_labels[i].reason == r)
			return older_labels[i].metric;
	return NULL;
}

/* Every reason has a name, a label and a sentence; names are unique, and a
 * label is its name with '_' for '-', as the man page says. */
static void test_table(void)
{
	for (unsigned r = 0; r < NP_REASON_COUNT; r++) {
		const struct np_reason_info *info = np_reason_info(r);
		char label[64];
		size_t i;

		CHECK(strcmp(info->name, "unknown") != 0);
		CHECK(info->sentence[0] != '\0');
		for (i = 0; info->name[i] && i + 1 < sizeof(label); i++)
			label[i] = info->name[i] == '-' ? '_' : info->name[i];
		label[i] = '\0';
		CHECK_STR(info->metric, older_label(r) ? older_label(r) : label);
		for (unsigned o = 0; o < r; o++) {
			CHECK(strcmp(np_reason_name(o), info->name) != 0);
			CHECK(strcmp(np_reason_metric(o), info->metric) != 0);
		}
	}
	CHECK_STR(np_reason_name(NP_REASON_COUNT), "unknown");
	CHECK_STR(np_reason_name((enum np_reason)-1), "unknown");
	/* The scheduler's reasons come first. */
	CHECK_STR(np_reason_name(NP_REASON_SCHED_COUNT - 1), "over-budget");
	CHECK_STR(np_reason_name(NP_REASON_SCHED_COUNT), "local");
}

static void test_sizes(void)
{
	CHECK_STR(np_size_text(0).s, "0 KiB");
	CHECK_STR(np_size_text(300 * 1024).s, "300 KiB");
	CHECK_STR(np_size_text(512ull << 20).s, "512 MiB");
	CHECK_STR(np_size_text((12ull << 30) + (512ull << 20)).s, "12.5 GiB");
	/* Rounded to the nearest unit, never cut. */
	CHECK_STR(np_size_text((1ull << 20) + (600ull << 10)).s, "2 MiB");
}

int main(void)
{
	test_table();
	test_sizes();
	return check_done();
}
