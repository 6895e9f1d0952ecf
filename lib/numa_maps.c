/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "numa_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/*
 * One pass over each line, in place: complete lines are parsed straight from
 * the caller's buffer and only a line cut by a chunk boundary is copied, into
 * the carry buffer. Nothing is allocated per line or per token; the carry and
 * path buffers grow to the longest line seen and are reused.
 */
struct np_nm_parser {
	np_nm_vma_fn fn;
	void *fn_data;

	struct np_nm_totals totals;
	uint64_t anon_bytes[NP_MAX_NODES];
	uint64_t file_bytes[NP_MAX_NODES];
	uint64_t all_bytes; /* the sum of both over every node: kept in 64 bits too */

	unsigned line; /* lines completed so far */
	char *carry;   /* the start of a line cut by a chunk boundary */
	size_t carry_len, carry_cap;

	char *path; /* the decoded file= of the current line */
	size_t path_cap;
	struct np_nm_node_pages nodes[NP_MAX_NODES];
	struct np_nodeset policy_nodes;
	bool policy_nodes_dirty;
	bool check_nul; /* the line's chunk holds a NUL: look for one in paths */

	int err;
	unsigned err_line;
	char err_msg[160];

	char *read_buf; /* np_nm_read_task's chunk, allocated on first use */
};

/* Keys whose value is a page count, in struct np_nm_vma order. */
enum count_key { K_ANON, K_DIRTY, K_MAPPED, K_MAPMAX, K_SWAPCACHE, K_ACTIVE, K_WRITEBACK, K_NR };

/* mpol_to_str()'s policy_modes[], longest first where one is a prefix of
 * another ("prefer (many)" before "prefer"). */
static const struct {
	const char *name;
	size_t len;
	enum np_mpol mode;
} policy_modes[] = {
    {"default", 7, NP_MPOL_DEFAULT},
    {"prefer (many)", 13, NP_MPOL_PREFER_MANY},
    {"prefer", 6, NP_MPOL_PREFER},
    {"bind", 4, NP_MPOL_BIND},
    {"interleave", 10, NP_MPOL_INTERLEAVE},
    {"weighted interleave", 19, NP_MPOL_WEIGHTED_INTERLEAVE},
    {"local", 5, NP_MPOL_LOCAL},
    {"unknown", 7, NP_MPOL_UNKNOWN},
};

/* Printable excerpt of input for an error message. */
static const char *excerpt(char *buf, size_t size, const char *s, size_t len)
{
	size_t max = size - 4, n = 0;

	for (; n < len && n < max; n++)
		buf[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
	if (n < len)
		memcpy(buf + n, "...", 3), n += 3;
	buf[n] = '\0';
	return buf;
}

__attribute__((format(printf, 2, 3))) static int fail(struct np_nm_parser *p, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(p->err_msg, sizeof(p->err_msg), fmt, args);
	va_end(args);
	p->err = -EINVAL;
	p->err_line = p->line;
	return p->err;
}

static int fail_value(struct np_nm_parser *p, const char *what, const char *s, const char *end)
{
	char ex[48];

	return fail(p, "%s \"%s\"", what, excerpt(ex, sizeof(ex), s, (size_t)(end - s)));
}

/* Hex digit value plus one; 0 for anything else. */
static const unsigned char hex_digit[256] = {
    ['0'] = 1,	['1'] = 2,  ['2'] = 3,	['3'] = 4,  ['4'] = 5,	['5'] = 6,  ['6'] = 7,	['7'] = 8,
    ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The start address: 1 to 16 hex digits and a space. Returns the space or
 * NULL. */
static const char *parse_start(const char *s, const char *end, uint64_t *out)
{
	const char *q = s;
	uint64_t v = 0;
	unsigned d;

	while (q < end && (d = hex_digit[(unsigned char)*q]) != 0) {
		v = v << 4 | (d - 1);
		q++;
	}
	if (q == s || q - s > 16 || q == end || *q != ' ')
		return NULL;
	*out = v;
	return q;
}

/* Inlined with a constant @len, so no call per token. */
static inline bool token_is(const char *s, const char *end, const char *lit, size_t len)
{
	return (size_t)(end - s) == len && __builtin_memcmp(s, lit, len) == 0;
}

/* Which count a key names, or K_NR. */
static enum count_key count_key(const char *s, const char *end)
{
	switch (*s) {
	case 'a':
		return token_is(s, end, "anon", 4)     ? K_ANON
		       : token_is(s, end, "active", 6) ? K_ACTIVE
						       : K_NR;
	case 'd':
		return token_is(s, end, "dirty", 5) ? K_DIRTY : K_NR;
	case 'm':
		return token_is(s, end, "mapped", 6)   ? K_MAPPED
		       : token_is(s, end, "mapmax", 6) ? K_MAPMAX
						       : K_NR;
	case 's':
		return token_is(s, end, "swapcache", 9) ? K_SWAPCACHE : K_NR;
	case 'w':
		return token_is(s, end, "writeback", 9) ? K_WRITEBACK : K_NR;
	default:
		return K_NR;
	}
}

static int parse_policy_flags(struct np_nm_parser *p, struct np_nm_vma *v, const char *s,
			      const char *end)
{
	const char *start = s;

	if (s == end)
		return fail_value(p, "empty policy flags in", start - 1, end);
	while (s < end) {
		const char *bar = memchr(s, '|', (size_t)(end - s));
		const char *word_end = bar ? bar : end;
		unsigned flag;

		if (token_is(s, word_end, "static", 6))
			flag = NP_MPOL_F_STATIC;
		else if (token_is(s, word_end, "relative", 8))
			flag = NP_MPOL_F_RELATIVE;
		else if (token_is(s, word_end, "balancing", 9))
			flag = NP_MPOL_F_BALANCING;
		else
			return fail_value(p, "unknown policy flags", start, end);
		if (v->policy_flags & flag)
			return fail_value(p, "repeated policy flag in", start, end);
		v->policy_flags |= flag;
		s = bar ? bar + 1 : end;
		if (bar && s == end)
			return fail_value(p, "unknown policy flags", start, end);
	}
	if ((v->policy_flags & NP_MPOL_F_STATIC) && (v->policy_flags & NP_MPOL_F_RELATIVE))
		return fail_value(p, "static and relative together in", start, end);
	return 0;
}

static int parse_policy_nodes(struct np_nm_parser *p, struct np_nm_vma *v, const char *s,
			      const char *end)
{
	const char *list_end = end;
	int err;

	/* Cut by the kernel's buffer: the last entry may be a number cut
	 * short ("1" of "12"), keep only the entries before the last comma. */
	if (v->policy_truncated) {
		while (list_end > s && list_end[-1] != ',')
			list_end--;
		if (list_end > s)
			list_end--;
	}
	p->policy_nodes_dirty = true;
	if (s == end)
		return fail(p, "empty policy node list");
	err = np_nodeset_parse_list(&p->policy_nodes, s, (size_t)(list_end - s));
	if (err || (list_end < end && *list_end != ','))
		return fail_value(p, "bad policy node list", s, end);
	return 0;
}

/* "<mode>[=<flags>][:<nodelist>]" up to the next space or the end of line. */
static int parse_policy(struct np_nm_parser *p, struct np_nm_vma *v, const char **pos,
			const char *end)
{
	const char *s = *pos, *flags = NULL, *nodes = NULL, *stop;
	size_t i;
	int err;

	/* Nearly every line says just "default". */
	if (end - s >= 7 && __builtin_memcmp(s, "default", 7) == 0 &&
	    (s + 7 == end || s[7] == ' ')) {
		v->policy = NP_MPOL_DEFAULT;
		*pos = s + 7;
		return 0;
	}
	for (i = 0; i < sizeof(policy_modes) / sizeof(policy_modes[0]); i++) {
		size_t len = policy_modes[i].len;

		if ((size_t)(end - s) >= len && memcmp(s, policy_modes[i].name, len) == 0 &&
		    (s + len == end || s[len] == ' ' || s[len] == '=' || s[len] == ':'))
			break;
	}
	if (i == sizeof(policy_modes) / sizeof(policy_modes[0])) {
		stop = memchr(s, ' ', (size_t)(end - s));
		return fail_value(p, "unknown memory policy", s, stop ? stop : end);
	}
	v->policy = policy_modes[i].mode;
	stop = s + policy_modes[i].len;
	if (stop < end && *stop != ' ') {
		const char *space = memchr(stop, ' ', (size_t)(end - stop));
		const char *colon;

		if (!space)
			space = end;
		colon = memchr(stop, ':', (size_t)(space - stop));
		if (*stop == '=')
			flags = stop + 1;
		if (colon)
			nodes = colon + 1;
		v->policy_truncated = space - s >= NP_NM_POLICY_MAX - 1;
		if (flags) {
			err = parse_policy_flags(p, v, flags, colon ? colon : space);
			if (err)
				return err;
		}
		if (nodes) {
			err = parse_policy_nodes(p, v, nodes, space);
			if (err)
				return err;
		}
		stop = space;
	}
	*pos = stop;
	return 0;
}

/* Decode file= into p->path: only the kernel's four escapes (see header). */
static int decode_path(struct np_nm_parser *p, struct np_nm_vma *v, const char *s, const char *end)
{
	size_t len = (size_t)(end - s);
	char *out;

	/* Without a callback nobody sees the path: only that there is one
	 * (it makes the VMA file-backed) and that it is valid. */
	if (!p->fn) {
		if (p->check_nul && memchr(s, '\0', len))
			return fail(p, "NUL byte in file= path");
		v->file = "";
		return 0;
	}
	if (len + 1 > p->path_cap) {
		size_t cap = p->path_cap ? p->path_cap : 256;
		char *bigger;

		while (cap < len + 1)
			cap *= 2;
		bigger = realloc(p->path, cap);
		if (!bigger)
			return -ENOMEM;
		p->path = bigger;
		p->path_cap = cap;
	}
	/* Whole runs between backslashes are copied: most paths have none. */
	out = p->path;
	while (s < end) {
		const char *bs = memchr(s, '\\', (size_t)(end - s));
		const char *run_end = bs ? bs : end;

		memcpy(out, s, (size_t)(run_end - s));
		out += run_end - s;
		s = run_end;
		if (!bs)
			break;
		if (end - s >= 4 && s[1] == '0' &&
		    ((s[2] == '4' && s[3] == '0') || (s[2] == '1' && s[3] == '1') ||
		     (s[2] == '1' && s[3] == '2') || (s[2] == '7' && s[3] == '5'))) {
			*out++ = (char)((s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	if (p->check_nul && memchr(p->path, '\0', (size_t)(out - p->path)))
		return fail(p, "NUL byte in file= path");
	*out = '\0';
	v->file = p->path;
	v->file_len = (size_t)(out - p->path);
	return 0;
}

/* A token without '=': heap, stack, stack:TID, huge, or unknown. */
static int parse_word(struct np_nm_parser *p, struct np_nm_vma *v, const char *s, const char *end)
{
	uint64_t tid;

	if (token_is(s, end, "heap", 4))
		v->heap = true;
	else if (token_is(s, end, "stack", 5))
		v->stack = true;
	else if (token_is(s, end, "huge", 4))
		v->huge = true;
	else if (end - s > 6 && memcmp(s, "stack:", 6) == 0) {
		if (!np_parse_u64(s + 6, end, &tid) || tid == 0 || tid > INT32_MAX)
			return fail_value(p, "bad thread id in", s, end);
		v->stack = true;
		v->stack_tid = (int)tid;
	} else
		v->unknown_tokens++;
	return 0;
}

/* N<nid>=<pages>; the key is known to be 'N' and digits. */
static int parse_node(struct np_nm_parser *p, struct np_nm_vma *v, const char *s, const char *eq,
		      const char *end)
{
	uint64_t nid, pages;

	if (!np_parse_u64(s + 1, eq, &nid) || !np_parse_u64(eq + 1, end, &pages))
		return fail_value(p, "bad node page count", s, end);
	if (nid >= NP_MAX_NODES) {
		char ex[48];

		return fail(p, "node id not below %d in \"%s\"", NP_MAX_NODES,
			    excerpt(ex, sizeof(ex), s, (size_t)(end - s)));
	}
	if (v->nr_nodes && (uint64_t)p->nodes[v->nr_nodes - 1].node >= nid)
		return fail_value(p, "node listed out of order or twice:", s, end);
	p->nodes[v->nr_nodes].node = (int)nid;
	p->nodes[v->nr_nodes].pages = pages;
	v->nr_nodes++;
	return 0;
}

static bool is_node_key(const char *s, const char *eq)
{
	if (*s != 'N' || eq - s < 2)
		return false;
	for (s++; s < eq; s++)
		if ((unsigned)(unsigned char)*s - '0' > 9)
			return false;
	return true;
}

/* Add the line's pages to the totals: all checked first, so a line that
 * would overflow adds nothing. The task's total over all nodes is checked
 * too: every per-node sum a reader makes of these is then at most that. */
static int add_to_totals(struct np_nm_parser *p, const struct np_nm_vma *v)
{
	uint64_t *dst = v->file ? p->file_bytes : p->anon_bytes;
	uint64_t all = p->all_bytes;
	unsigned i;

	for (i = 0; i < v->nr_nodes; i++) {
		uint64_t bytes, sum;

		if (__builtin_mul_overflow(p->nodes[i].pages, v->kernel_page_bytes, &bytes) ||
		    __builtin_add_overflow(dst[p->nodes[i].node], bytes, &sum) ||
		    __builtin_add_overflow(all, bytes, &all))
			return fail(p, "N%d=%" PRIu64 " overflows a 64-bit byte total",
				    p->nodes[i].node, p->nodes[i].pages);
	}
	p->all_bytes = all;
	for (i = 0; i < v->nr_nodes; i++)
		dst[p->nodes[i].node] += p->nodes[i].pages * v->kernel_page_bytes;
	if (v->nr_nodes && (unsigned)p->nodes[v->nr_nodes - 1].node >= p->totals.nr_node_slots)
		p->totals.nr_node_slots = (unsigned)p->nodes[v->nr_nodes - 1].node + 1;
	p->totals.vmas++;
	p->totals.unknown_tokens += v->unknown_tokens;
	return 0;
}

static uint64_t *count_field(struct np_nm_vma *v, enum count_key k)
{
	switch (k) {
	case K_ANON:
		return &v->anon;
	case K_DIRTY:
		return &v->dirty;
	case K_MAPPED:
		return &v->mapped;
	case K_MAPMAX:
		return &v->mapmax;
	case K_SWAPCACHE:
		return &v->swapcache;
	case K_ACTIVE:
		return &v->active;
	default:
		return &v->writeback;
	}
}

/* Bits of a line's "seen" set: one per count key, and the page size. */
#define SEEN_COUNTS ((1u << K_NR) - 1)
#define SEEN_PAGE_SIZE (1u << K_NR)

/* Digits ending at a space or @end, small enough that no check is needed. */
static inline bool fast_u64(const char **pos, const char *end, uint64_t *out)
{
	const char *q = *pos;
	uint64_t v = 0;

	for (; q < end && (unsigned)(*q - '0') <= 9; q++) {
		if (v >= UINT64_MAX / 100)
			return false;
		v = v * 10 + (unsigned)(*q - '0');
	}
	if (q == *pos || (q < end && *q != ' '))
		return false;
	*pos = q;
	*out = v;
	return true;
}

static inline bool has_prefix(const char *s, const char *end, const char *lit, size_t len)
{
	return (size_t)(end - s) >= len && __builtin_memcmp(s, lit, len) == 0;
}

/*
 * The tokens nearly every line is made of, well formed, in a single pass:
 * N<nid>=<n>, the counts, kernelpagesize_kB=<n> and file=. Returns 1 with
 * *@pos at the token's end, a -errno, or 0 to leave the token untouched to
 * the general path in parse_line(), which also words every error.
 */
static int fast_token(struct np_nm_parser *p, struct np_nm_vma *v, unsigned *seen, const char **pos,
		      const char *end)
{
	const char *s = *pos, *q;
	enum count_key k;
	uint64_t n;

	switch (*s) {
	case 'N': {
		unsigned nid = 0;

		for (q = s + 1; q < end && q - s <= 4 && (unsigned)(*q - '0') <= 9; q++)
			nid = nid * 10 + (unsigned)(*q - '0');
		if (q == s + 1 || q == end || *q != '=' || nid >= NP_MAX_NODES ||
		    (v->nr_nodes && (unsigned)p->nodes[v->nr_nodes - 1].node >= nid))
			return 0;
		q++;
		if (!fast_u64(&q, end, &n))
			return 0;
		p->nodes[v->nr_nodes].node = (int)nid;
		p->nodes[v->nr_nodes].pages = n;
		v->nr_nodes++;
		*pos = q;
		return 1;
	}
	case 'k':
		q = s + 18;
		if (!has_prefix(s, end, "kernelpagesize_kB=", 18) || (*seen & SEEN_PAGE_SIZE) ||
		    !fast_u64(&q, end, &n) || n == 0 || (n & (n - 1)) || n > (UINT64_MAX >> 10))
			return 0;
		v->kernel_page_bytes = n << 10;
		*seen |= SEEN_PAGE_SIZE;
		*pos = q;
		return 1;
	case 'f': {
		int err;

		if (!has_prefix(s, end, "file=", 5) || v->file)
			return 0;
		q = memchr(s + 5, ' ', (size_t)(end - s - 5));
		if (!q)
			q = end;
		err = decode_path(p, v, s + 5, q);
		if (err)
			return err;
		*pos = q;
		return 1;
	}
	case 'a':
		if (has_prefix(s, end, "anon=", 5))
			k = K_ANON, q = s + 5;
		else if (has_prefix(s, end, "active=", 7))
			k = K_ACTIVE, q = s + 7;
		else
			return 0;
		break;
	case 'd':
		if (!has_prefix(s, end, "dirty=", 6))
			return 0;
		k = K_DIRTY, q = s + 6;
		break;
	case 'm':
		if (has_prefix(s, end, "mapped=", 7))
			k = K_MAPPED, q = s + 7;
		else if (has_prefix(s, end, "mapmax=", 7))
			k = K_MAPMAX, q = s + 7;
		else
			return 0;
		break;
	default:
		return 0;
	}
	if (*seen & (1u << k))
		return 0;
	if (!fast_u64(&q, end, &n))
		return 0;
	*count_field(v, k) = n;
	*seen |= 1u << k;
	*pos = q;
	return 1;
}

static int parse_line(struct np_nm_parser *p, const char *s, const char *end)
{
	static const struct np_nm_vma blank;
	struct np_nm_vma v = blank;
	unsigned seen = 0;
	const char *tok_end;
	int err;

	v.line = p->line;
	v.policy_nodes = &p->policy_nodes;
	v.nodes = p->nodes;
	if (p->policy_nodes_dirty) {
		np_nodeset_zero(&p->policy_nodes);
		p->policy_nodes_dirty = false;
	}

	tok_end = parse_start(s, end, &v.start);
	if (!tok_end) {
		for (tok_end = s; tok_end < end && *tok_end != ' ';)
			tok_end++;
		return fail_value(p, "expected a hex address and a policy, got", s,
				  tok_end - s <= 16 ? tok_end : end);
	}
	s = tok_end + 1;
	err = parse_policy(p, &v, &s, end);
	if (err)
		return err;

	while (s < end) {
		const char *eq;

		s++; /* the space parse_policy or the last token stopped at */
		if (s < end) {
			err = fast_token(p, &v, &seen, &s, end);
			if (err < 0)
				return err;
			if (err)
				continue;
		}
		eq = NULL;
		for (tok_end = s; tok_end < end && *tok_end != ' '; tok_end++)
			if (*tok_end == '=' && !eq)
				eq = tok_end;
		if (tok_end == s)
			return fail(p, "empty field (two spaces in a row, or a trailing space)");
		err = 0;
		if (!eq) {
			err = parse_word(p, &v, s, tok_end);
		} else if (is_node_key(s, eq)) {
			err = parse_node(p, &v, s, eq, tok_end);
		} else if (token_is(s, eq, "file", 4)) {
			if (v.file)
				return fail(p, "file= given twice");
			err = decode_path(p, &v, eq + 1, tok_end);
		} else if (token_is(s, eq, "kernelpagesize_kB", 17)) {
			uint64_t kb;

			if ((seen & SEEN_PAGE_SIZE) || !np_parse_u64(eq + 1, tok_end, &kb) ||
			    kb == 0 || (kb & (kb - 1)) || kb > (UINT64_MAX >> 10))
				return fail_value(p, "bad or repeated", s, tok_end);
			v.kernel_page_bytes = kb << 10;
			seen |= SEEN_PAGE_SIZE;
		} else {
			enum count_key k = count_key(s, eq);

			if (k == K_NR) {
				v.unknown_tokens++;
			} else {
				if ((seen & (1u << k)) ||
				    !np_parse_u64(eq + 1, tok_end, count_field(&v, k)))
					return fail_value(p, "bad or repeated", s, tok_end);
				seen |= 1u << k;
			}
		}
		if (err)
			return err;
		s = tok_end;
	}
	if ((v.nr_nodes || (seen & SEEN_COUNTS)) && !(seen & SEEN_PAGE_SIZE))
		return fail(p, "page counts without kernelpagesize_kB");
	if (!(seen & SEEN_PAGE_SIZE))
		v.kernel_page_bytes = 4096;
	err = add_to_totals(p, &v);
	if (err)
		return err;
	if (p->fn) {
		err = p->fn(p->fn_data, &v);
		if (err) {
			snprintf(p->err_msg, sizeof(p->err_msg), "stopped by the VMA callback (%d)",
				 err);
			p->err = err;
			p->err_line = p->line;
		}
	}
	return err;
}

static int complete_line(struct np_nm_parser *p, const char *s, const char *end)
{
	int err;

	p->line++;
	if (s == end)
		return fail(p, "empty line");
	if ((size_t)(end - s) > NP_NM_LINE_MAX)
		return fail(p, "line longer than %u bytes", NP_NM_LINE_MAX);
	err = parse_line(p, s, end);
	if (!err)
		p->totals.bytes_parsed += (uint64_t)(end - s) + 1;
	return err;
}

static int carry_append(struct np_nm_parser *p, const char *s, size_t len)
{
	if (p->carry_len + len > NP_NM_LINE_MAX) {
		p->line++;
		return fail(p, "line longer than %u bytes", NP_NM_LINE_MAX);
	}
	if (p->carry_len + len > p->carry_cap) {
		size_t cap = p->carry_cap ? p->carry_cap : 4096;
		char *bigger;

		while (cap < p->carry_len + len)
			cap *= 2;
		bigger = realloc(p->carry, cap);
		if (!bigger)
			return -ENOMEM;
		p->carry = bigger;
		p->carry_cap = cap;
	}
	memcpy(p->carry + p->carry_len, s, len);
	p->carry_len += len;
	return 0;
}

int np_nm_parser_feed(struct np_nm_parser *p, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len, *last_nl;
	int err;

	if (p->err)
		return p->err;
	if (len == 0)
		return 0;
	if (p->carry_len) {
		const char *nl = memchr(s, '\n', len);

		err = carry_append(p, s, nl ? (size_t)(nl - s) : len);
		if (err || !nl)
			return err;
		p->check_nul = true;
		err = complete_line(p, p->carry, p->carry + p->carry_len);
		p->carry_len = 0;
		if (err)
			return err;
		s = nl + 1;
	}
	/* One fast scan per chunk spares a scan of every path. */
	p->check_nul = memchr(s, '\0', (size_t)(end - s)) != NULL;
	/* Up to the chunk's last newline every line is complete, so each
	 * search for the next one needs no bound. */
	last_nl = memrchr(s, '\n', (size_t)(end - s));
	while (last_nl && s <= last_nl) {
		const char *nl = rawmemchr(s, '\n');

		err = complete_line(p, s, nl);
		if (err)
			return err;
		s = nl + 1;
	}
	return s < end ? carry_append(p, s, (size_t)(end - s)) : 0;
}

int np_nm_parser_finish(struct np_nm_parser *p)
{
	if (p->err)
		return p->err;
	if (p->carry_len) {
		p->line++;
		return fail(p, "last line has no newline: the file is truncated");
	}
	return 0;
}

void np_nm_parser_reset(struct np_nm_parser *p)
{
	memset(p->anon_bytes, 0, p->totals.nr_node_slots * sizeof(p->anon_bytes[0]));
	memset(p->file_bytes, 0, p->totals.nr_node_slots * sizeof(p->file_bytes[0]));
	p->all_bytes = 0;
	p->totals.nr_node_slots = 0;
	p->totals.vmas = 0;
	p->totals.unknown_tokens = 0;
	p->totals.bytes_parsed = 0;
	p->line = 0;
	p->carry_len = 0;
	p->err = 0;
	p->err_line = 0;
	p->err_msg[0] = '\0';
}

int np_nm_parser_new(struct np_nm_parser **out, np_nm_vma_fn fn, void *data)
{
	struct np_nm_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->fn = fn;
	p->fn_data = data;
	p->totals.anon_bytes = p->anon_bytes;
	p->totals.file_bytes = p->file_bytes;
	*out = p;
	return 0;
}

void np_nm_parser_free(struct np_nm_parser *p)
{
	if (!p)
		return;
	free(p->carry);
	free(p->path);
	free(p->read_buf);
	free(p);
}

const struct np_nm_totals *np_nm_parser_totals(const struct np_nm_parser *p)
{
	return &p->totals;
}

unsigned np_nm_parser_error_line(const struct np_nm_parser *p)
{
	return p->err_line;
}

const char *np_nm_parser_error(const struct np_nm_parser *p)
{
	return p->err_msg;
}

int np_nm_read_task(struct np_ctx *ctx, int dirfd, const char *dir, struct np_nm_parser *p,
		    uint64_t *bytes_read)
{
	const char *root = np_ctx_is_live(ctx) ? "" : np_ctx_root(ctx);
	uint64_t total = 0;
	int fd, err = 0;

	np_nm_parser_reset(p);
	if (bytes_read)
		*bytes_read = 0;
	fd = np_ctx_open_at(ctx, dirfd, dir, "numa_maps", O_RDONLY);
	if (fd < 0)
		return np_is_vanished_error(fd) ? -ESRCH : fd;
	if (!p->read_buf) {
		p->read_buf = malloc(NP_NM_READ_CHUNK);
		if (!p->read_buf) {
			close(fd);
			return -ENOMEM;
		}
	}
	for (;;) {
		ssize_t n = read(fd, p->read_buf, NP_NM_READ_CHUNK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		err = np_nm_parser_feed(p, p->read_buf, (size_t)n);
		if (err)
			break;
	}
	close(fd);
	if (bytes_read)
		*bytes_read = total;
	if (!err && total == 0)
		return -ESRCH;
	if (!err)
		err = np_nm_parser_finish(p);
	if (err == -EINVAL && p->err == -EINVAL)
		np_log(ctx, LOG_WARNING, "%s%s%s/numa_maps:%u: %s", root,
		       *root && root[strlen(root) - 1] == '/' ? "" : "/", dir, p->err_line,
		       p->err_msg);
	return err;
}

const char *np_mpol_name(enum np_mpol mode)
{
	switch (mode) {
	case NP_MPOL_DEFAULT:
		return "default";
	case NP_MPOL_PREFER:
		return "prefer";
	case NP_MPOL_BIND:
		return "bind";
	case NP_MPOL_INTERLEAVE:
		return "interleave";
	case NP_MPOL_LOCAL:
		return "local";
	case NP_MPOL_PREFER_MANY:
		return "prefer (many)";
	case NP_MPOL_WEIGHTED_INTERLEAVE:
		return "weighted interleave";
	case NP_MPOL_UNKNOWN:
		break;
	}
	return "unknown";
}
