/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest CPU and node counts the kernel can be built with (NR_CPUS=8192,
 * NODES_SHIFT=10); a fixed size keeps sets plain values. */
#define NP_MAX_CPUS 8192
#define NP_MAX_NODES 1024

/* A set of CPU numbers. */
struct np_bitmap {
	uint64_t w[NP_MAX_CPUS / 64];
};

/* A set of node numbers: an eighth of a CPU set, which matters in the
 * structs that hold several and are copied every tick. */
struct np_nodeset {
	uint64_t w[NP_MAX_NODES / 64];
};

void np_bitmap_zero(struct np_bitmap *b);
void np_bitmap_set(struct np_bitmap *b, unsigned bit);
void np_bitmap_clear(struct np_bitmap *b, unsigned bit);
bool np_bitmap_test(const struct np_bitmap *b, unsigned bit);
unsigned np_bitmap_weight(const struct np_bitmap *b);
bool np_bitmap_empty(const struct np_bitmap *b);
bool np_bitmap_equal(const struct np_bitmap *a, const struct np_bitmap *b);
/* True when every bit of @sub is in @super. */
bool np_bitmap_subset(const struct np_bitmap *sub, const struct np_bitmap *super);
void np_bitmap_and(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b);
void np_bitmap_or(struct np_bitmap *dst, const struct np_bitmap *a, const struct np_bitmap *b);
/* The lowest set bit at or above @from, or -1. */
int np_bitmap_next(const struct np_bitmap *b, unsigned from);

#define np_bitmap_for_each(bit, b)                                                       \
	for (int bit = np_bitmap_next((b), 0); bit >= 0; bit = np_bitmap_next((b), bit + 1))

/* The same operations on node sets; a node at or above NP_MAX_NODES is in
 * no set (setting it does nothing). */
void np_nodeset_zero(struct np_nodeset *set);
void np_nodeset_set(struct np_nodeset *set, unsigned node);
bool np_nodeset_test(const struct np_nodeset *set, unsigned node);
unsigned np_nodeset_weight(const struct np_nodeset *set);
bool np_nodeset_empty(const struct np_nodeset *set);
bool np_nodeset_equal(const struct np_nodeset *a, const struct np_nodeset *b);
int np_nodeset_next(const struct np_nodeset *set, unsigned from);

#define np_nodeset_for_each(node, set)                                                   \
	for (int node = np_nodeset_next((set), 0); node >= 0;                            \
	     node = np_nodeset_next((set), node + 1))

/* Parse the kernel's list format ("0-3,8,10-11", possibly empty) of @len
 * bytes; trailing newline allowed. Returns 0 or -EINVAL (-ERANGE for a number
 * at or above NP_MAX_CPUS). */
int np_bitmap_parse_list(struct np_bitmap *b, const char *s, size_t len);
/* The same, with -ERANGE for a number at or above NP_MAX_NODES. */
int np_nodeset_parse_list(struct np_nodeset *set, const char *s, size_t len);

/* The value of one hex digit, or -1 (shared by the mask and trace parsers). */
int np_hex_value(char c);

/* [@s, @end) as a decimal number without sign or spaces that fits 64 bits;
 * false for anything else (empty included). The parsers' one reader of
 * such numbers. */
bool np_parse_u64(const char *s, const char *end, uint64_t *out);

/* The next space-separated field of [*@p, @end): spaces before it are
 * skipped, *@p is left just past it; NULL, with *@p at @end, when only
 * spaces are left. */
const char *np_next_field(const char **p, const char *end);

/* Parse the kernel's hex mask format ("ff,ffffffff"). Returns 0 or -EINVAL /
 * -ERANGE. */
int np_bitmap_parse_mask(struct np_bitmap *b, const char *s, size_t len);

/* Format as a list ("0-3,8") into @buf; returns the length it needs (as
 * snprintf does). */
size_t np_bitmap_format_list(const struct np_bitmap *b, char *buf, size_t size);
size_t np_nodeset_format_list(const struct np_nodeset *set, char *buf, size_t size);
