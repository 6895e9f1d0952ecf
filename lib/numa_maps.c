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

	unsigned line; /* lines completed so far */
	char *carry;   /* the start of a line cut by a chunk boundary */
	size_t carry_len, carry_cap;

	char *path; /* the decoded file= of the current line */
	size_t path_cap;
	struct np_nm_node_pages nodes[NP_MAX_NODES];
	struct np_bitmap policy_nodes;
	bool policy_nodes_dirty;

	int err;
	unsigned err_line;
	char err_msg[160];

	char *read_buf; /* np_nm_read_task's chunk, allocated on first use */
};

/* Keys whose value is a page count, in struct np_nm_vma order. */
enum count_key { K_ANON, K_DIRTY, K_MAPPED, K_MAPMAX, K_SWAPCACHE, K_ACTIVE, K_WRITEBACK, K_NR };

static const struct {
	const char *name;
	size_t len;
} count_keys[K_NR] = {
    [K_ANON] = {"anon", 4},	      [K_DIRTY] = {"dirty", 5},		[K_MAPPED] = {"mapped", 6},
    [K_MAPMAX] = {"mapmax", 6},	      [K_SWAPCACHE] = {"swapcache", 9}, [K_ACTIVE] = {"active", 6},
    [K_WRITEBACK] = {"writeback", 9},
};

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

/* A decimal number without sign or spaces, fitting 64 bits. */
static bool parse_u64(const char *s, const char *end, uint64_t *out)
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

static bool parse_hex(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end || end - s > 16)
		return false;
	for (; s < end; s++) {
		unsigned c = (unsigned char)*s, d;

		if (c - '0' <= 9)
			d = c - '0';
		else if ((c | 0x20) - 'a' <= 5)
			d = (c | 0x20) - 'a' + 10;
		else
			return false;
		v = v << 4 | d;
	}
	*out = v;
	return true;
}

static bool token_is(const char *s, const char *end, const char *lit, size_t len)
{
	return (size_t)(end - s) == len && memcmp(s, lit, len) == 0;
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
	err = np_bitmap_parse_list(&p->policy_nodes, s, (size_t)(list_end - s));
	if (err || np_bitmap_next(&p->policy_nodes, NP_MAX_NODES) >= 0 ||
	    (list_end < end && *list_end != ','))
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
	if (memchr(s, '\0', len))
		return fail(p, "NUL byte in file= path");
	out = p->path;
	while (s < end) {
		const char *bs = memchr(s, '\\', (size_t)(end - s));
		const char *upto = bs ? bs : end;

		memcpy(out, s, (size_t)(upto - s));
		out += upto - s;
		s = upto;
		if (!bs)
			break;
		if (end - bs >= 4 && bs[1] == '0' &&
		    ((bs[2] == '4' && bs[3] == '0') || (bs[2] == '1' && bs[3] == '1') ||
		     (bs[2] == '1' && bs[3] == '2') || (bs[2] == '7' && bs[3] == '5'))) {
			*out++ = (char)((bs[2] - '0') * 8 + (bs[3] - '0'));
			s = bs + 4;
		} else {
			*out++ = '\\';
			s = bs + 1;
		}
	}
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
		if (!parse_u64(s + 6, end, &tid) || tid == 0 || tid > INT32_MAX)
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

	if (!parse_u64(s + 1, eq, &nid) || !parse_u64(eq + 1, end, &pages))
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
 * would overflow adds nothing. */
static int add_to_totals(struct np_nm_parser *p, const struct np_nm_vma *v)
{
	uint64_t *dst = v->file ? p->file_bytes : p->anon_bytes;
	unsigned i;

	for (i = 0; i < v->nr_nodes; i++) {
		uint64_t bytes, sum;

		if (__builtin_mul_overflow(p->nodes[i].pages, v->kernel_page_bytes, &bytes) ||
		    __builtin_add_overflow(dst[p->nodes[i].node], bytes, &sum))
			return fail(p, "N%d=%" PRIu64 " overflows a 64-bit byte total",
				    p->nodes[i].node, p->nodes[i].pages);
	}
	for (i = 0; i < v->nr_nodes; i++)
		dst[p->nodes[i].node] += p->nodes[i].pages * v->kernel_page_bytes;
	if (v->nr_nodes && (unsigned)p->nodes[v->nr_nodes - 1].node >= p->totals.nr_node_slots)
		p->totals.nr_node_slots = (unsigned)p->nodes[v->nr_nodes - 1].node + 1;
	p->totals.vmas++;
	p->totals.unknown_tokens += v->unknown_tokens;
	return 0;
}

static int parse_line(struct np_nm_parser *p, const char *s, const char *end)
{
	struct np_nm_vma v = {0};
	uint64_t *counts[K_NR] = {&v.anon,	&v.dirty,  &v.mapped,	&v.mapmax,
				  &v.swapcache, &v.active, &v.writeback};
	unsigned seen = 0;
	bool have_page_size = false, have_counts = false;
	const char *tok_end;
	int err;

	v.line = p->line;
	v.policy_nodes = &p->policy_nodes;
	v.nodes = p->nodes;
	if (p->policy_nodes_dirty) {
		np_bitmap_zero(&p->policy_nodes);
		p->policy_nodes_dirty = false;
	}

	tok_end = memchr(s, ' ', (size_t)(end - s));
	if (!tok_end || !parse_hex(s, tok_end, &v.start))
		return fail_value(p, "expected a hex address and a policy, got", s,
				  tok_end && tok_end - s <= 16 ? tok_end : end);
	s = tok_end + 1;
	err = parse_policy(p, &v, &s, end);
	if (err)
		return err;

	while (s < end) {
		const char *eq;

		s++; /* the space parse_policy or the last token stopped at */
		tok_end = memchr(s, ' ', (size_t)(end - s));
		if (!tok_end)
			tok_end = end;
		if (tok_end == s)
			return fail(p, "empty field (two spaces in a row, or a trailing space)");
		eq = memchr(s, '=', (size_t)(tok_end - s));
		if (!eq) {
			err = parse_word(p, &v, s, tok_end);
		} else if (is_node_key(s, eq)) {
			err = parse_node(p, &v, s, eq, tok_end);
			have_counts = true;
		} else if (token_is(s, eq, "file", 4)) {
			if (v.file)
				return fail(p, "file= given twice");
			err = decode_path(p, &v, eq + 1, tok_end);
		} else if (token_is(s, eq, "kernelpagesize_kB", 17)) {
			uint64_t kb;

			if (have_page_size || !parse_u64(eq + 1, tok_end, &kb) || kb == 0 ||
			    (kb & (kb - 1)) || kb > (UINT64_MAX >> 10))
				return fail_value(p, "bad or repeated", s, tok_end);
			v.kernel_page_bytes = kb << 10;
			have_page_size = true;
		} else {
			unsigned k;

			for (k = 0; k < K_NR; k++)
				if (token_is(s, eq, count_keys[k].name, count_keys[k].len))
					break;
			if (k == K_NR) {
				v.unknown_tokens++;
			} else {
				if ((seen & (1u << k)) || !parse_u64(eq + 1, tok_end, counts[k]))
					return fail_value(p, "bad or repeated", s, tok_end);
				seen |= 1u << k;
				have_counts = true;
			}
		}
		if (err)
			return err;
		s = tok_end;
	}
	if (have_counts && !have_page_size)
		return fail(p, "page counts without kernelpagesize_kB");
	if (!have_page_size)
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
	const char *s = buf, *end = buf + len;
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
		err = complete_line(p, p->carry, p->carry + p->carry_len);
		p->carry_len = 0;
		if (err)
			return err;
		s = nl + 1;
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));

		if (!nl)
			return carry_append(p, s, (size_t)(end - s));
		err = complete_line(p, s, nl);
		if (err)
			return err;
		s = nl + 1;
	}
	return 0;
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

int np_nm_read_task(struct np_ctx *ctx, int pid, struct np_nm_parser *p, uint64_t *bytes_read)
{
	const char *root = np_ctx_root(ctx);
	uint64_t total = 0;
	char path[48];
	int fd, err = 0;

	np_nm_parser_reset(p);
	if (bytes_read)
		*bytes_read = 0;
	snprintf(path, sizeof(path), "proc/%d/numa_maps", pid);
	fd = np_ctx_open(ctx, path, O_RDONLY);
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
		np_log(ctx, LOG_WARNING, "%s%s%s:%u: %s", root,
		       root[strlen(root) - 1] == '/' ? "" : "/", path, p->err_line, p->err_msg);
	return err;
}
