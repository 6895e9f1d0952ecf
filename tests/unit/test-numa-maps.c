/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "nm-outcome.h"
#include "numa_maps.h"
#include "task.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long size;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
		exit(1);
	fclose(f);
	*len = (size_t)size;
	return buf;
}

/*
 * The streaming proof: every chunk size from 1 to 512 bytes, every power of
 * two up to the file size, and 16 seeded random splits must all give exactly
 * what parsing the whole buffer at once gives. Returns the whole outcome.
 */
static struct nm_outcome *parse_every_split(const char *name)
{
	struct nm_outcome *whole = malloc(sizeof(*whole)), *cut = malloc(sizeof(*cut));
	size_t len, first_bad = 0;
	char *buf = slurp(fixture(name), &len);

	nm_parse(whole, buf, len, 0, 0);
	for (size_t chunk = 1; chunk <= 512 && !first_bad; chunk++) {
		nm_parse(cut, buf, len, chunk, 0);
		if (!nm_same_outcome(whole, cut))
			first_bad = chunk;
	}
	for (size_t chunk = 1024; chunk < len * 2 && !first_bad; chunk *= 2) {
		nm_parse(cut, buf, len, chunk, 0);
		if (!nm_same_outcome(whole, cut))
			first_bad = chunk;
	}
	/* Without a callback (the daemon's totals-only path), cut or whole. */
	nm_parse_with(cut, buf, len, 0, 0, true);
	if (!nm_same_totals(whole, cut))
		first_bad = len;
	nm_parse_with(cut, buf, len, 7, 0, true);
	if (!first_bad && !nm_same_totals(whole, cut))
		first_bad = 7;
	for (uint64_t seed = 1; seed <= 16 && !first_bad; seed++) {
		nm_parse(cut, buf, len, 1 + seed * 97, seed);
		if (!nm_same_outcome(whole, cut))
			first_bad = 1 + seed * 97;
	}
	if (first_bad)
		fprintf(stderr, "%s: chunks of %zu bytes differ from the whole parse\n", name,
			first_bad);
	CHECK_INT(first_bad, 0);
	/* What the callback saw adds up to the totals. */
	CHECK(!whole->sums_overflowed);
	CHECK(memcmp(whole->anon, whole->sum_anon, sizeof(whole->anon)) == 0);
	CHECK(memcmp(whole->file, whole->sum_file, sizeof(whole->file)) == 0);
	CHECK_U64(whole->callbacks, whole->vmas);
	free(cut);
	free(buf);
	return whole;
}

#define KB 1024ull
#define PAGE (4 * KB)

static void test_policies(void)
{
	struct nm_outcome *o = parse_every_split("nmaps-handmade/policies.numa_maps");

	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 16);
	CHECK_INT(o->slots, 4);
	CHECK_U64(o->anon[0], 9 * PAGE);
	CHECK_U64(o->anon[1], 6 * PAGE);
	CHECK_U64(o->anon[2], 3 * PAGE);
	CHECK_U64(o->anon[3], 4 * PAGE);
	CHECK_U64(o->file[0], 0);
	CHECK_U64(o->file[1], 2 * PAGE);
	CHECK_U64(o->file[2], 1 * PAGE);
	CHECK_U64(o->unknown, 0);
	free(o);
}

/* Field-by-field view of a file's VMAs. */
struct seen {
	unsigned nr;
	struct {
		uint64_t start;
		enum np_mpol policy;
		unsigned flags;
		char nodes[128];
		bool truncated, heap, stack, huge;
		int tid;
		char *file;
		size_t file_len;
		uint64_t anon, dirty, mapped, mapmax, active, page_bytes;
		unsigned nr_nodes, unknown;
	} v[32];
};

static int record_vma(void *data, const struct np_nm_vma *v)
{
	struct seen *s = data;

	if (s->nr < 32) {
		typeof(s->v[0]) *r = &s->v[s->nr];

		r->start = v->start;
		r->policy = v->policy;
		r->flags = v->policy_flags;
		np_nodeset_format_list(v->policy_nodes, r->nodes, sizeof(r->nodes));
		r->truncated = v->policy_truncated;
		r->heap = v->heap;
		r->stack = v->stack;
		r->huge = v->huge;
		r->tid = v->stack_tid;
		r->file = v->file ? malloc(v->file_len + 1) : NULL;
		if (r->file)
			memcpy(r->file, v->file, v->file_len + 1);
		r->file_len = v->file_len;
		r->anon = v->anon;
		r->dirty = v->dirty;
		r->mapped = v->mapped;
		r->mapmax = v->mapmax;
		r->active = v->active;
		r->page_bytes = v->kernel_page_bytes;
		r->nr_nodes = v->nr_nodes;
		r->unknown = v->unknown_tokens;
	}
	s->nr++;
	return 0;
}

static struct seen *record(const char *name, int *err)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct np_nm_parser *p;
	size_t len;
	char *buf = slurp(fixture(name), &len);

	np_nm_parser_new(&p, record_vma, s);
	*err = np_nm_parser_feed(p, buf, len);
	if (!*err)
		*err = np_nm_parser_finish(p);
	np_nm_parser_free(p);
	free(buf);
	return s;
}

static void free_seen(struct seen *s)
{
	for (unsigned i = 0; i < s->nr && i < 32; i++)
		free(s->v[i].file);
	free(s);
}

static void test_policy_fields(void)
{
	int err;
	struct seen *s = record("nmaps-handmade/policies.numa_maps", &err);
	static const struct {
		enum np_mpol policy;
		unsigned flags;
		const char *nodes;
	} want[] = {
	    {NP_MPOL_DEFAULT, 0, ""},
	    {NP_MPOL_PREFER, 0, "1"},
	    {NP_MPOL_BIND, 0, "0-1"},
	    {NP_MPOL_INTERLEAVE, 0, "0,2-3"},
	    {NP_MPOL_LOCAL, 0, ""},
	    {NP_MPOL_PREFER_MANY, 0, "1,3"},
	    {NP_MPOL_WEIGHTED_INTERLEAVE, 0, "0-3"},
	    {NP_MPOL_BIND, NP_MPOL_F_STATIC, "2"},
	    {NP_MPOL_INTERLEAVE, NP_MPOL_F_RELATIVE, "0-1"},
	    {NP_MPOL_BIND, NP_MPOL_F_BALANCING, "0-1"},
	    {NP_MPOL_BIND, NP_MPOL_F_STATIC | NP_MPOL_F_BALANCING, "0-1"},
	    {NP_MPOL_PREFER_MANY, NP_MPOL_F_RELATIVE | NP_MPOL_F_BALANCING, "0-3"},
	    {NP_MPOL_WEIGHTED_INTERLEAVE, NP_MPOL_F_STATIC, "1-2"},
	    {NP_MPOL_UNKNOWN, 0, ""},
	    {NP_MPOL_PREFER_MANY, 0, ""},
	    /* Cut at 63 bytes in "...,45,4": the "4" (of 48) is dropped. */
	    {NP_MPOL_INTERLEAVE, NP_MPOL_F_STATIC, "0,3,6,9,12,15,18,21,24,27,30,33,36,39,42,45"},
	};

	CHECK_INT(err, 0);
	CHECK_INT(s->nr, 16);
	for (unsigned i = 0; i < 16 && i < s->nr; i++) {
		CHECK_INT(s->v[i].policy, want[i].policy);
		CHECK_INT(s->v[i].flags, want[i].flags);
		CHECK_STR(s->v[i].nodes, want[i].nodes);
		CHECK_INT(s->v[i].truncated, i == 15);
		CHECK_U64(s->v[i].start, 0x400000 + 0x1000 * i);
	}
	CHECK(s->v[5].heap && !s->v[5].stack);
	CHECK(s->v[14].stack && s->v[14].tid == 0);
	CHECK_STR(s->v[12].file, "/usr/lib/libx.so");
	CHECK_U64(s->v[12].mapped, 3);
	CHECK_U64(s->v[12].mapmax, 2);
	CHECK_U64(s->v[2].active, 0);
	CHECK_U64(s->v[13].page_bytes, 4096); /* no pages, no kernelpagesize_kB */
	CHECK_INT(s->v[13].nr_nodes, 0);
	free_seen(s);
}

static void test_paths(void)
{
	struct nm_outcome *o = parse_every_split("nmaps-handmade/paths.numa_maps");
	int err;
	struct seen *s = record("nmaps-handmade/paths.numa_maps", &err);

	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 9);
	CHECK_U64(o->file[0], 8 * PAGE);
	CHECK_U64(o->file[1], 5 * PAGE);
	CHECK_U64(o->anon[0], 0);
	CHECK_U64(o->unknown, 0);
	CHECK_INT(err, 0);
	CHECK_INT(s->nr, 9);
	CHECK_STR(s->v[0].file, "/tmp/with space");
	CHECK_STR(s->v[1].file, "/tmp/new\nline");
	CHECK_STR(s->v[2].file, "/tmp/tab\there");
	CHECK_STR(s->v[3].file, "/tmp/a=b=c");
	CHECK_STR(s->v[4].file, "/tmp/back\\slash\\\\"); /* not escaped by the kernel */
	CHECK_STR(s->v[5].file, "/tmp/oct\\101kept");	 /* not one of the four */
	CHECK_STR(s->v[6].file, "/tmp/cut\\04");
	CHECK_STR(s->v[7].file, "/memfd:cache (deleted)");
	/* The path looks like tokens once decoded but is one path. */
	CHECK_STR(s->v[8].file, "/tmp/N0=5 anon=9");
	CHECK_U64(s->v[8].anon, 0);
	CHECK_U64(s->v[0].file_len, strlen("/tmp/with space"));
	free_seen(s);
	free(o);
}

static void test_long_lines(void)
{
	struct nm_outcome *o = parse_every_split("nmaps-handmade/longline.numa_maps");
	int err;
	struct seen *s = record("nmaps-handmade/longline.numa_maps", &err);
	unsigned ones = 0;

	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 2);
	CHECK_INT(o->slots, NP_MAX_NODES);
	CHECK_U64(o->file[0], 4 * PAGE);
	CHECK_U64(o->file[1], 3 * PAGE);
	for (unsigned n = 0; n < NP_MAX_NODES; n++)
		ones += o->anon[n] == PAGE;
	CHECK_INT(ones, NP_MAX_NODES);
	CHECK_INT(err, 0);
	CHECK_U64(s->v[0].file_len, 4001);
	CHECK(s->v[0].file && s->v[0].file[0] == '/' && s->v[0].file[1] == ' ' &&
	      s->v[0].file[4000] == ' ' && s->v[0].file[4001] == '\0');
	CHECK_INT(s->v[1].nr_nodes, NP_MAX_NODES);
	CHECK_STR(s->v[1].nodes, "0-1023");
	free_seen(s);
	free(o);
}

static void test_thp_and_hugetlb(void)
{
	struct nm_outcome *o = parse_every_split("nmaps-handmade/thp.numa_maps");
	int err;
	struct seen *s;

	/* A THP region still says kernelpagesize_kB=4: counts are base pages. */
	CHECK_INT(o->err, 0);
	CHECK_U64(o->anon[0], 1536 * PAGE);
	CHECK_U64(o->anon[1], (512 + 700) * PAGE);
	free(o);

	/* hugetlb counts one per huge page. */
	o = parse_every_split("nmaps-handmade/hugetlb.numa_maps");
	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 3);
	CHECK_U64(o->file[0], 3 * 2048 * KB);
	CHECK_U64(o->file[1], 1 * 2048 * KB + 2 * 1048576 * KB);
	CHECK_U64(o->anon[1], 0);
	free(o);
	s = record("nmaps-handmade/hugetlb.numa_maps", &err);
	CHECK_INT(err, 0);
	CHECK(s->v[0].huge && s->v[1].huge && s->v[2].huge);
	CHECK_U64(s->v[0].page_bytes, 2048 * KB);
	CHECK_U64(s->v[1].page_bytes, 1048576 * KB);
	CHECK_STR(s->v[1].file, "/anon_hugepage (deleted)");
	CHECK_STR(s->v[1].nodes, "1");
	free_seen(s);
}

static void test_empty_unknown_garbage_truncated(void)
{
	struct nm_outcome *o = parse_every_split("nmaps-handmade/empty.numa_maps");

	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 0);
	CHECK_INT(o->slots, 0);
	free(o);

	o = parse_every_split("nmaps-handmade/unknown.numa_maps");
	CHECK_INT(o->err, 0);
	CHECK_U64(o->vmas, 3);
	CHECK_U64(o->unknown, 8);
	CHECK_U64(o->file[0], 3 * PAGE);
	CHECK_U64(o->anon[0], 3 * PAGE);
	free(o);

	/* The garbage line is an error naming its line; lines before it count,
	 * the one after it is never reached. */
	o = parse_every_split("nmaps-handmade/garbage.numa_maps");
	CHECK_INT(o->err, -EINVAL);
	CHECK_INT(o->err_line, 3);
	CHECK(strstr(o->msg, "Segmentation") != NULL);
	CHECK_U64(o->vmas, 2);
	CHECK_U64(o->anon[0], PAGE);
	CHECK_U64(o->anon[1], PAGE);
	free(o);

	o = parse_every_split("nmaps-handmade/truncated.numa_maps");
	CHECK_INT(o->err, -EINVAL);
	CHECK_INT(o->err_line, 2);
	CHECK(strstr(o->msg, "newline") != NULL);
	CHECK_U64(o->vmas, 1);
	CHECK_U64(o->anon[0], PAGE);
	free(o);
}

/* Real captures: totals must match what awk computed at capture time. */
static void check_capture(const char *line)
{
	char name[128], *tok, *save, *copy = strdup(line);
	struct nm_outcome *o;
	uint64_t *dst = NULL;
	int pid;

	pid = atoi(copy);
	snprintf(name, sizeof(name), "nmaps-host/proc/%d/numa_maps", pid);
	o = parse_every_split(name);
	CHECK_INT(o->err, 0);
	tok = strtok_r(copy, " \n", &save); /* pid */
	tok = strtok_r(NULL, " \n", &save);
	CHECK_U64(o->vmas, strtoull(tok, NULL, 10));
	while ((tok = strtok_r(NULL, " \n", &save))) {
		unsigned node;
		unsigned long long bytes;

		if (strcmp(tok, "anon") == 0)
			dst = o->anon;
		else if (strcmp(tok, "file") == 0)
			dst = o->file;
		else if (dst && sscanf(tok, "%u:%llu", &node, &bytes) == 2 && node < NP_MAX_NODES)
			CHECK_U64(dst[node], bytes);
		else
			CHECK(!"bad expected line");
	}
	{
		struct stat st;

		CHECK_INT(stat(fixture(name), &st), 0);
		CHECK_U64(o->bytes_parsed, st.st_size);
	}
	free(o);
	free(copy);
}

static void test_real_captures(void)
{
	char path[4096], line[512];
	FILE *f;
	unsigned n = 0;

	snprintf(path, sizeof(path), "%s", fixture("nmaps-host/expected"));
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		check_capture(line);
		n++;
	}
	fclose(f);
	CHECK(n >= 2);
}

/*
 * Every numa_maps in any fixture tree (other engineers' hand-made ones, and
 * captures from multi-node guests as they are added) must parse, identically
 * at every split, and only name nodes its tree's sys/ says are online. Trees
 * named *hostile* hold bad input on purpose and are left out.
 */
static void test_every_fixture_tree(void)
{
	const char *base = getenv("NP_FIXTURES");
	char pattern[4096];
	glob_t g;

	if (!base)
		base = "tests/fixtures";
	snprintf(pattern, sizeof(pattern), "%s/*/proc/*/numa_maps", base);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *name = g.gl_pathv[i] + strlen(base) + 1;
		struct nm_outcome *o;
		struct np_nodeset online;
		char online_path[4096], *text;
		size_t len;
		FILE *f;

		/* Trees of deliberately bad input are exempt. */
		if (strncmp(name, "nmaps-handmade/", 15) == 0 ||
		    memmem(name, (size_t)(strchr(name, '/') - name), "hostile", 7))
			continue;
		o = parse_every_split(name);
		if (o->err)
			fprintf(stderr, "%s:%u: %s\n", name, o->err_line, o->msg);
		CHECK_INT(o->err, 0);
		snprintf(online_path, sizeof(online_path), "%s/%.*s/sys/devices/system/node/online",
			 base, (int)(strchr(name, '/') - name), name);
		f = fopen(online_path, "r");
		if (f) {
			fclose(f);
			text = slurp(online_path, &len);
			CHECK_INT(np_nodeset_parse_list(&online, text, len), 0);
			for (unsigned n = 0; n < o->slots; n++)
				if (o->anon[n] || o->file[n])
					CHECK(np_nodeset_test(&online, n));
			free(text);
		}
		free(o);
	}
	globfree(&g);
}

/* What a guest capture's bind VMAs say, to hold against capture.txt. */
struct binds {
	unsigned nr;
	int node[8];
	uint64_t bytes[8]; /* on the bound node */
	bool only_there[8];
};

static int record_binds(void *data, const struct np_nm_vma *v)
{
	struct binds *b = data;

	if (v->policy != NP_MPOL_BIND || b->nr == 8)
		return 0;
	b->node[b->nr] = np_nodeset_next(v->policy_nodes, 0);
	b->only_there[b->nr] = np_nodeset_weight(v->policy_nodes) == 1;
	for (unsigned i = 0; i < v->nr_nodes; i++) {
		if (v->nodes[i].node == b->node[b->nr])
			b->bytes[b->nr] += v->nodes[i].pages * v->kernel_page_bytes;
		else
			b->only_there[b->nr] = false;
	}
	b->nr++;
	return 0;
}

/*
 * Captures from QEMU guests (tests/fixtures/qemu-*, capture.txt): np-hog
 * binds its memory with mbind, one VMA per worker, so each bind VMA must
 * hold exactly the MiB capture.txt gives, all on the bound node.
 */
/* numa_maps of @pid, through its directory as the daemon reads it. */
static int read_pid(struct np_ctx *ctx, int pid, struct np_nm_parser *p, uint64_t *bytes)
{
	char dir[32];
	int dirfd, err;

	snprintf(dir, sizeof(dir), "proc/%d", pid);
	dirfd = np_ctx_open(ctx, dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return np_is_vanished_error(dirfd) ? -ESRCH : dirfd;
	err = np_nm_read_task(ctx, dirfd, dir, p, bytes);
	close(dirfd);
	return err;
}

static void check_guest(const char *tree, int pid, unsigned nr, const int *nodes, unsigned mib)
{
	struct np_ctx *ctx;
	struct np_nm_parser *p;
	struct binds b = {0};
	uint64_t bytes;

	if (np_ctx_new(fixture(tree), &ctx) < 0) {
		CHECK(!"fixture tree missing");
		return;
	}
	CHECK_INT(np_nm_parser_new(&p, record_binds, &b), 0);
	CHECK_INT(read_pid(ctx, pid, p, &bytes), 0);
	CHECK_INT(b.nr, nr);
	for (unsigned i = 0; i < nr && i < b.nr; i++) {
		bool listed = false;

		for (unsigned j = 0; j < nr; j++)
			listed |= b.node[i] == nodes[j];
		CHECK(listed);
		CHECK(b.only_there[i]);
		CHECK_U64(b.bytes[i], (uint64_t)mib << 20);
		CHECK(np_nm_parser_totals(p)->anon_bytes[b.node[i]] >= (uint64_t)mib << 20);
	}
	np_nm_parser_free(p);
	np_ctx_free(ctx);
}

static void test_guest_captures(void)
{
	static const int one[] = {1}, two[] = {0, 1}, four[] = {0, 1, 2, 3};

	check_guest("qemu-2node", 139, 1, one, 64);
	check_guest("qemu-2node", 147, 2, two, 32);
	check_guest("qemu-4node", 156, 1, one, 64);
	check_guest("qemu-4node", 163, 4, four, 32);
}

struct logged {
	char text[512];
};

__attribute__((format(printf, 3, 0)))
static void log_to_buffer(void *data, int priority, const char *fmt, va_list args)
{
	struct logged *l = data;

	vsnprintf(l->text, sizeof(l->text), fmt, args);
}

static void test_read_task(void)
{
	struct np_ctx *ctx;
	struct np_nm_parser *p;
	struct logged log = {""};
	struct stat st;
	uint64_t bytes;
	char path[4096];
	pid_t child;

	CHECK_INT(np_nm_parser_new(&p, NULL, NULL), 0);

	/* A captured 118-VMA task read through the fixture root. */
	CHECK_INT(np_ctx_new(fixture("nmaps-host"), &ctx), 0);
	CHECK_INT(read_pid(ctx, 12521, p, &bytes), 0);
	snprintf(path, sizeof(path), "%s", fixture("nmaps-host/proc/12521/numa_maps"));
	CHECK_INT(stat(path, &st), 0);
	CHECK_U64(bytes, st.st_size);
	CHECK_U64(np_nm_parser_totals(p)->bytes_parsed, st.st_size);
	CHECK_U64(np_nm_parser_totals(p)->vmas, 118);
	CHECK_INT(read_pid(ctx, 999999, p, &bytes), -ESRCH);
	np_ctx_free(ctx);

	/* Empty file: gone quietly. Garbage: -EINVAL, logged with place. */
	CHECK_INT(np_ctx_new(fixture("nmaps-handmade"), &ctx), 0);
	np_ctx_set_log_fn(ctx, log_to_buffer, &log);
	CHECK_INT(read_pid(ctx, 1, p, &bytes), -ESRCH);
	CHECK_STR(log.text, "");
	CHECK_INT(read_pid(ctx, 2, p, NULL), -EINVAL);
	CHECK(strstr(log.text, "/proc/2/numa_maps:3: ") != NULL);
	CHECK(strstr(log.text, "Segmentation") != NULL);
	np_ctx_free(ctx);

	/* The live machine: ourselves, a zombie (no mm: empty file) and a
	 * reaped child (no /proc entry). */
	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK_INT(read_pid(ctx, getpid(), p, &bytes), 0);
	CHECK(np_nm_parser_totals(p)->vmas > 5);
	CHECK_U64(np_nm_parser_totals(p)->bytes_parsed, bytes);
	CHECK(np_nm_parser_totals(p)->anon_bytes[0] + np_nm_parser_totals(p)->file_bytes[0] > 0);
	child = fork();
	if (child == 0)
		_exit(0);
	CHECK_INT(waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT), 0);
	CHECK_INT(read_pid(ctx, child, p, &bytes), -ESRCH);
	CHECK_INT(waitpid(child, NULL, 0), child);
	CHECK_INT(read_pid(ctx, child, p, &bytes), -ESRCH);
	np_ctx_free(ctx);
	np_nm_parser_free(p);
}

/* One line, fed whole: the error code, line and a word of the message. */
static void check_bad(const char *input, unsigned line, const char *word)
{
	struct nm_outcome *whole = malloc(sizeof(*whole)), *bytewise = malloc(sizeof(*bytewise));

	nm_parse(whole, input, strlen(input), 0, 0);
	nm_parse(bytewise, input, strlen(input), 1, 0);
	if (whole->err != -EINVAL || whole->err_line != line || !strstr(whole->msg, word))
		fprintf(stderr, "input \"%s\": err %d line %u \"%s\"\n", input, whole->err,
			whole->err_line, whole->msg);
	CHECK_INT(whole->err, -EINVAL);
	CHECK_INT(whole->err_line, line);
	CHECK(strstr(whole->msg, word) != NULL);
	CHECK(nm_same_outcome(whole, bytewise));
	/* The line in error adds nothing. */
	CHECK_U64(whole->vmas, line - 1);
	free(whole);
	free(bytewise);
}

#define GOOD "00400000 default anon=1 dirty=1 N0=1 kernelpagesize_kB=4\n"

static void test_malformed(void)
{
	check_bad("zzzz default\n", 1, "hex address");
	check_bad("00400000\n", 1, "hex address");
	check_bad("00400000000000000 default\n", 1, "hex address");
	check_bad(GOOD "00400000 \n", 2, "unknown memory policy");
	check_bad("00400000 defaults\n", 1, "unknown memory policy");
	check_bad("00400000 bind=sticky:0\n", 1, "policy flags");
	check_bad("00400000 bind=static|relative:0\n", 1, "static and relative");
	check_bad("00400000 bind=static|static:0\n", 1, "repeated policy flag");
	check_bad("00400000 bind=:0\n", 1, "empty policy flags");
	check_bad("00400000 bind=static|:0\n", 1, "policy flags");
	check_bad("00400000 bind:\n", 1, "empty policy node list");
	check_bad("00400000 bind:0-\n", 1, "node list");
	check_bad("00400000 bind:3-1\n", 1, "node list");
	check_bad("00400000 bind:1024\n", 1, "node list");
	check_bad(GOOD GOOD "00400000 default anon= N0=1 kernelpagesize_kB=4\n", 3, "anon=");
	check_bad("00400000 default anon=x N0=1 kernelpagesize_kB=4\n", 1, "anon=x");
	check_bad("00400000 default anon=-1 N0=1 kernelpagesize_kB=4\n", 1, "anon=-1");
	check_bad("00400000 default anon=18446744073709551616 N0=1 kernelpagesize_kB=4\n", 1,
		  "anon=1844");
	check_bad("00400000 default anon=1 anon=1 N0=1 kernelpagesize_kB=4\n", 1, "repeated");
	check_bad("00400000 default N1024=1 kernelpagesize_kB=4\n", 1, "not below 1024");
	check_bad("00400000 default N99999999999999999999=1 kernelpagesize_kB=4\n", 1, "N9999");
	check_bad("00400000 default N1=1 N0=1 kernelpagesize_kB=4\n", 1, "out of order");
	check_bad("00400000 default N0=1 N0=1 kernelpagesize_kB=4\n", 1, "twice");
	check_bad("00400000 default N0=1x kernelpagesize_kB=4\n", 1, "N0=1x");
	check_bad("00400000 default anon=1 N0=1\n", 1, "without kernelpagesize_kB");
	check_bad("00400000 default N0=1 kernelpagesize_kB=0\n", 1, "kernelpagesize_kB=0");
	check_bad("00400000 default N0=1 kernelpagesize_kB=3\n", 1, "kernelpagesize_kB=3");
	check_bad("00400000 default N0=1 kernelpagesize_kB=4 kernelpagesize_kB=4\n", 1, "repeated");
	check_bad("00400000 default  anon=1 N0=1 kernelpagesize_kB=4\n", 1, "empty field");
	check_bad("00400000 default anon=1 N0=1 kernelpagesize_kB=4 \n", 1, "empty field");
	check_bad(GOOD "\n", 2, "empty line");
	check_bad("00400000 default stack:0\n", 1, "thread id");
	check_bad("00400000 default stack:abc\n", 1, "thread id");
	check_bad("00400000 default file=/a file=/b\n", 1, "file= given twice");
	check_bad("00400000 default N0=18446744073709551615 kernelpagesize_kB=4\n", 1, "overflows");
	/* Two lines that fit alone but not together: the second adds nothing. */
	check_bad("00400000 default N0=4503599627370495 kernelpagesize_kB=4\n"
		  "00401000 default N0=1 kernelpagesize_kB=4\n",
		  2, "overflows");
	/* Two nodes that fit alone but whose sum, the task's total, does not:
	 * 2^51 pages of 4 KiB on each would read as no memory at all. */
	check_bad("00400000 default N0=2251799813685248 N1=2251799813685248 kernelpagesize_kB=4\n",
		  1, "N1=2251799813685248 overflows");
	check_bad("00400000 default N0=2251799813685248 kernelpagesize_kB=4\n"
		  "00401000 default file=/a N1=2251799813685248 kernelpagesize_kB=4\n",
		  2, "overflows");
}

static void test_nul_and_huge_line(void)
{
	static const char with_nul[] = "00400000 default file=/a\0b N0=1 kernelpagesize_kB=4\n";
	struct nm_outcome *o = malloc(sizeof(*o));
	size_t big = NP_NM_LINE_MAX + 2;
	char *line = malloc(big);

	nm_parse(o, with_nul, sizeof(with_nul) - 1, 0, 0);
	CHECK_INT(o->err, -EINVAL);
	CHECK(strstr(o->msg, "NUL") != NULL);
	nm_parse_with(o, with_nul, sizeof(with_nul) - 1, 0, 0, true);
	CHECK_INT(o->err, -EINVAL);
	CHECK(strstr(o->msg, "NUL") != NULL);
	nm_parse_with(o, with_nul, sizeof(with_nul) - 1, 3, 0, true);
	CHECK_INT(o->err, -EINVAL);

	/* Longer than any line the kernel prints: refused, whole or cut. */
	memset(line, 'x', big);
	memcpy(line, "00400000 default ", 17);
	line[big - 1] = '\n';
	nm_parse(o, line, big, 0, 0);
	CHECK_INT(o->err, -EINVAL);
	CHECK_INT(o->err_line, 1);
	CHECK(strstr(o->msg, "longer") != NULL);
	nm_parse(o, line, big, 4096, 0);
	CHECK_INT(o->err, -EINVAL);
	CHECK(strstr(o->msg, "longer") != NULL);
	/* Exactly at the limit is fine (one unknown token). */
	line[NP_NM_LINE_MAX] = '\n';
	nm_parse(o, line, NP_NM_LINE_MAX + 1, 65536, 0);
	CHECK_INT(o->err, 0);
	CHECK_U64(o->unknown, 1);
	free(line);
	free(o);
}

static int stop_at_second(void *data, const struct np_nm_vma *v)
{
	(void)data;
	return v->line == 2 ? 42 : 0;
}

static void test_callback_stop_and_reset(void)
{
	struct np_nm_parser *p;
	const char input[] = GOOD GOOD GOOD;

	CHECK_INT(np_nm_parser_new(&p, stop_at_second, NULL), 0);
	CHECK_INT(np_nm_parser_feed(p, input, sizeof(input) - 1), 42);
	CHECK_INT(np_nm_parser_error_line(p), 2);
	CHECK_INT(np_nm_parser_feed(p, input, 1), 42); /* sticky */
	CHECK_INT(np_nm_parser_finish(p), 42);
	np_nm_parser_reset(p);
	CHECK_U64(np_nm_parser_totals(p)->vmas, 0);
	CHECK_U64(np_nm_parser_totals(p)->anon_bytes[0], 0);
	CHECK_STR(np_nm_parser_error(p), "");
	CHECK_INT(np_nm_parser_feed(p, input, 10), 0);
	np_nm_parser_reset(p); /* drops the partial line too */
	CHECK_INT(np_nm_parser_finish(p), 0);
	np_nm_parser_free(p);
	np_nm_parser_free(NULL);
}

/* The identity of a task as the scan saw it, from its stat. */
static int task_of(struct np_ctx *ctx, int pid, struct np_task *task)
{
	char path[32], *buf;
	size_t len;
	struct np_stat st;
	int err;

	snprintf(path, sizeof(path), "proc/%d/stat", pid);
	err = np_ctx_read_file(ctx, path, 4096, &buf, &len);
	if (err)
		return err;
	err = np_stat_parse(buf, len, &st);
	free(buf);
	memset(task, 0, sizeof(*task));
	task->pid = st.pid;
	task->start_ticks = st.start_ticks;
	return err;
}

/* numa_maps is read through the directory whose start time was checked, so
 * a process that takes the pid over afterwards is not read in its place.
 * Under a fixture root, moving the directory aside and putting another
 * process's in its place stands in for the reuse; on the live machine, a
 * reaped child's directory stops answering. */
static void test_read_through_checked_dir(void)
{
	char root[] = "/tmp/np-nm-reuse-XXXXXX", cmd[8192], dir[NP_TASK_DIR_MAX];
	struct np_nm_parser *p;
	struct np_ctx *ctx;
	struct np_task task;
	struct stat st;
	uint64_t bytes;
	int dirfd;
	pid_t child;

	CHECK_INT(np_nm_parser_new(&p, NULL, NULL), 0);
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -R '%s'/. '%s'", fixture("engine-2node"), root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(np_ctx_new(root, &ctx), 0);
	CHECK_INT(task_of(ctx, 100, &task), 0);
	dirfd = np_task_dir_open(ctx, &task, dir);
	CHECK(dirfd >= 0);
	CHECK_STR(dir, "proc/100");
	snprintf(cmd, sizeof(cmd), "cd '%s/proc' && mv 100 old-100 && cp -R 200 100", root);
	CHECK_INT(system(cmd), 0);
	/* Checked again, it is not the task any more ... */
	CHECK_INT(np_task_dir_open(ctx, &task, dir), -ESRCH);
	/* ... and the directory checked before still reads the task's own. */
	CHECK_INT(np_nm_read_task(ctx, dirfd, "proc/100", p, &bytes), 0);
	snprintf(cmd, sizeof(cmd), "%s/proc/old-100/numa_maps", root);
	CHECK_INT(stat(cmd, &st), 0);
	CHECK_U64(bytes, st.st_size);
	if (dirfd >= 0)
		close(dirfd);
	np_ctx_free(ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK_INT(task_of(ctx, child, &task), 0);
	dirfd = np_task_dir_open(ctx, &task, dir);
	CHECK(dirfd >= 0);
	CHECK_INT(np_nm_read_task(ctx, dirfd, dir, p, &bytes), 0);
	kill(child, SIGKILL);
	CHECK_INT(waitpid(child, NULL, 0), child);
	CHECK_INT(np_nm_read_task(ctx, dirfd, dir, p, &bytes), -ESRCH);
	if (dirfd >= 0)
		close(dirfd);
	np_ctx_free(ctx);
	np_nm_parser_free(p);
}

int main(void)
{
	test_policies();
	test_policy_fields();
	test_paths();
	test_long_lines();
	test_thp_and_hugetlb();
	test_empty_unknown_garbage_truncated();
	test_real_captures();
	test_every_fixture_tree();
	test_guest_captures();
	test_read_task();
	test_read_through_checked_dir();
	test_malformed();
	test_nul_and_huge_line();
	test_callback_stop_and_reset();
	return check_done();
}
