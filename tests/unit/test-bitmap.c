/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bitmap.h"
#include "check.h"

#include <errno.h>
#include <string.h>

static void test_list(void)
{
	struct np_bitmap b;
	char buf[64];

	CHECK_INT(np_bitmap_parse_list(&b, "0-3,8,10-11\n", 12), 0);
	CHECK_INT(np_bitmap_weight(&b), 7);
	CHECK(np_bitmap_test(&b, 8) && !np_bitmap_test(&b, 9));
	np_bitmap_format_list(&b, buf, sizeof(buf));
	CHECK_STR(buf, "0-3,8,10-11");
	CHECK_INT(np_bitmap_parse_list(&b, "\n", 1), 0);
	CHECK(np_bitmap_empty(&b));
	CHECK_INT(np_bitmap_parse_list(&b, "3-1", 3), -EINVAL);
	CHECK_INT(np_bitmap_parse_list(&b, "1,", 2), -EINVAL);
	CHECK_INT(np_bitmap_parse_list(&b, "a", 1), -EINVAL);
	CHECK_INT(np_bitmap_parse_list(&b, "99999", 5), -ERANGE);
	CHECK_INT(np_bitmap_parse_list(&b, "8191", 4), 0);
	CHECK_INT(np_bitmap_next(&b, 0), 8191);
	CHECK_INT(np_bitmap_next(&b, 8192), -1);
	/* Truncation reports the length needed, like snprintf. */
	CHECK_INT(np_bitmap_parse_list(&b, "0,2,4,6", 7), 0);
	CHECK_INT(np_bitmap_format_list(&b, buf, 3), 7);
	CHECK_STR(buf, "0,");
}

static void test_mask(void)
{
	struct np_bitmap b;

	CHECK_INT(np_bitmap_parse_mask(&b, "f0,00000001\n", 12), 0);
	CHECK_INT(np_bitmap_weight(&b), 5);
	CHECK(np_bitmap_test(&b, 0) && np_bitmap_test(&b, 36) && np_bitmap_test(&b, 39));
	CHECK_INT(np_bitmap_parse_mask(&b, "xz", 2), -EINVAL);
	CHECK_INT(np_bitmap_parse_mask(&b, "", 0), -EINVAL);
}

static void test_set_ops(void)
{
	struct np_bitmap a, b, c;

	np_bitmap_parse_list(&a, "0-7", 3);
	np_bitmap_parse_list(&b, "4-11", 4);
	np_bitmap_and(&c, &a, &b);
	CHECK_INT(np_bitmap_weight(&c), 4);
	CHECK(np_bitmap_subset(&c, &a) && np_bitmap_subset(&c, &b));
	CHECK(!np_bitmap_subset(&a, &b));
	np_bitmap_or(&c, &a, &b);
	CHECK_INT(np_bitmap_weight(&c), 12);
	np_bitmap_clear(&c, 0);
	CHECK(!np_bitmap_test(&c, 0));
	CHECK(!np_bitmap_equal(&a, &b));
}

/* Node sets share the CPU sets' code; what differs is their bound. */
static void test_nodeset_list(void)
{
	struct np_nodeset s, t;
	char buf[64];

	CHECK_INT(sizeof(s), NP_MAX_NODES / 8);
	CHECK_INT(np_nodeset_parse_list(&s, "0-3,8,10-11\n", 12), 0);
	CHECK_INT(np_nodeset_weight(&s), 7);
	CHECK(np_nodeset_test(&s, 8) && !np_nodeset_test(&s, 9));
	CHECK_INT(np_nodeset_format_list(&s, buf, sizeof(buf)), 11);
	CHECK_STR(buf, "0-3,8,10-11");
	CHECK_INT(np_nodeset_parse_list(&t, buf, strlen(buf)), 0);
	CHECK(np_nodeset_equal(&s, &t));
	CHECK_INT(np_nodeset_parse_list(&s, "\n", 1), 0);
	CHECK(np_nodeset_empty(&s));
	CHECK(!np_nodeset_equal(&s, &t));
	CHECK_INT(np_nodeset_parse_list(&s, "3-1", 3), -EINVAL);
	CHECK_INT(np_nodeset_parse_list(&s, "1,", 2), -EINVAL);

	/* The last node the kernel can number, and the first it cannot. */
	CHECK_INT(np_nodeset_parse_list(&s, "1023", 4), 0);
	CHECK_INT(np_nodeset_next(&s, 0), 1023);
	CHECK_INT(np_nodeset_next(&s, 1024), -1);
	CHECK_INT(np_nodeset_parse_list(&s, "1024", 4), -ERANGE);
	CHECK_INT(np_nodeset_parse_list(&s, "0,1000-1024", 11), -ERANGE);
	CHECK_INT(np_nodeset_parse_list(&s, "8191", 4), -ERANGE);

	/* Every node: the round trip covers the last word. */
	CHECK_INT(np_nodeset_parse_list(&s, "0-1023", 6), 0);
	CHECK_INT(np_nodeset_weight(&s), NP_MAX_NODES);
	CHECK_INT(np_nodeset_format_list(&s, buf, sizeof(buf)), 6);
	CHECK_STR(buf, "0-1023");
	CHECK_INT(np_nodeset_format_list(&s, buf, 3), 6);
	CHECK_STR(buf, "0-");
}

static void test_nodeset_ops(void)
{
	struct np_nodeset s;
	int seen = 0, sum = 0;

	np_nodeset_zero(&s);
	CHECK(np_nodeset_empty(&s));
	np_nodeset_set(&s, 1);
	np_nodeset_set(&s, 64);
	np_nodeset_set(&s, 1023);
	np_nodeset_set(&s, 1024); /* no such node: nothing to set */
	CHECK_INT(np_nodeset_weight(&s), 3);
	CHECK(!np_nodeset_test(&s, 1024) && !np_nodeset_test(&s, 8191));
	CHECK_INT(np_nodeset_next(&s, 2), 64);
	np_nodeset_for_each(node, &s)
	{
		seen++;
		sum += node;
	}
	CHECK_INT(seen, 3);
	CHECK_INT(sum, 1 + 64 + 1023);
}

int main(void)
{
	test_list();
	test_mask();
	test_set_ops();
	test_nodeset_list();
	test_nodeset_ops();
	return check_done();
}
