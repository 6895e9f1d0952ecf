/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "check.h"
#include "runsample.h"
#include "writers.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#define MIB (UINT64_C(1) << 20)

/* ---- attribution ---- */

static void test_attribute(void)
{
	/* Out of order: thread 7 alone in the block at 2 MiB, 8 alone in the
	 * one at 6 MiB, both in the one at 4 MiB. */
	struct np_write_sample s[] = {
	    {8, 6 * MIB + 4096}, {7, 2 * MIB}, {7, 4 * MIB + 8192}, {8, 4 * MIB},
	    {7, 2 * MIB + 2 * MIB - 1}, {8, 7 * MIB}, {7, 3 * MIB},
	};
	struct np_writer_block *b;
	unsigned nr;

	CHECK_INT(np_writers_attribute(s, sizeof(s) / sizeof(s[0]), &b, &nr), 0);
	CHECK_INT(nr, 3);
	if (nr == 3) {
		CHECK_U64(b[0].start, 2 * MIB);
		CHECK_INT(b[0].tid, 7);
		CHECK_INT(b[0].faults, 3);
		CHECK_U64(b[1].start, 4 * MIB);
		CHECK_INT(b[1].tid, -1);
		CHECK_INT(b[1].faults, 2);
		CHECK_U64(b[2].start, 6 * MIB);
		CHECK_INT(b[2].tid, 8);
		CHECK_INT(b[2].faults, 2);
	}
	free(b);
	CHECK_INT(np_writers_attribute(s, 0, &b, &nr), 0);
	CHECK(b == NULL);
	CHECK_INT(nr, 0);
}

/* One fault in a block (a huge page's, on its first writer) is
 * confirmed by the sample before, as the kernel's two faults in a row. */
static void test_confirm(void)
{
	struct np_writer_block now[] = {
	    {0 * MIB, 7, 1}, /* one fault, 7 before too: 7's */
	    {2 * MIB, 7, 1}, /* one fault, 8 before: shared */
	    {4 * MIB, 8, 1}, /* one fault, shared before: shared */
	    {6 * MIB, 8, 1}, /* one fault, not in the sample before */
	    {8 * MIB, 8, 3}, /* three faults, all 8's: 8's */
	    {10 * MIB, -1, 2}, /* shared already */
	};
	const struct np_writer_block before[] = {
	    {0 * MIB, 7, 1}, {2 * MIB, 8, 1}, {4 * MIB, -1, 2}, {12 * MIB, 7, 1},
	};
	struct np_writer_block first[] = {{0, 7, 1}, {2 * MIB, 7, 4}};

	CHECK_INT(np_writers_confirm(now, 6, before, 4), 1);
	CHECK_INT(now[0].tid, 7);
	CHECK_INT(now[1].tid, -1);
	CHECK_INT(now[2].tid, -1);
	CHECK_INT(now[3].tid, NP_WRITERS_UNCONFIRMED);
	CHECK_INT(now[4].tid, 8);
	CHECK_INT(now[5].tid, -1);
	/* No sample before: every one-fault block waits for the next. */
	CHECK_INT(np_writers_confirm(first, 2, NULL, 0), 1);
	CHECK_INT(first[0].tid, NP_WRITERS_UNCONFIRMED);
	CHECK_INT(first[1].tid, 7);
}

/* ---- rings of TID and ADDR samples ---- */

#define RING 256

struct ring {
	unsigned char buf[RING];
	uint64_t head;
};

static void put(struct ring *r, const void *rec, size_t len)
{
	for (size_t i = 0; i < len; i++)
		r->buf[(r->head + i) % RING] = ((const unsigned char *)rec)[i];
	r->head += len;
}

static void put_write(struct ring *r, uint32_t tid, uint64_t addr, uint16_t size)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr;
	} rec = {{PERF_RECORD_SAMPLE, 0, size}, 1, tid, addr};

	put(r, &rec, size);
}

struct got {
	uint64_t addr[64];
	uint32_t tid[64];
	unsigned nr;
};

static void on_body(void *data, const void *body)
{
	struct got *g = data;
	struct {
		uint32_t pid, tid;
		uint64_t addr;
	} rec;

	memcpy(&rec, body, sizeof(rec));
	if (g->nr < 64) {
		g->tid[g->nr] = rec.tid;
		g->addr[g->nr++] = rec.addr;
	}
}

static void test_ring(void)
{
	struct ring r = {{0}, 0};
	struct got g = {{0}, {0}, 0};
	uint64_t tail;

	/* Eight records of 24 bytes from 200 on: they wrap the ring. */
	r.head = 200;
	tail = r.head;
	for (unsigned i = 0; i < 8; i++)
		put_write(&r, 100 + i, 0x7f0000000000ull + i * 4096, 24);
	CHECK_INT(np_perf_records_parse(r.buf, RING, tail, r.head, 16, on_body, &g), 0);
	CHECK_INT(g.nr, 8);
	CHECK_INT(g.tid[7], 107);
	CHECK_U64(g.addr[5], 0x7f0000000000ull + 5 * 4096);
	/* A sample too short for the fields asked: the ring does not add up. */
	r.head = tail = 0;
	put_write(&r, 1, 2, 16);
	g.nr = 0;
	CHECK_INT(np_perf_records_parse(r.buf, RING, tail, r.head, 16, on_body, &g), -EINVAL);
	CHECK_INT(g.nr, 0);
	/* More than a body can hold. */
	CHECK_INT(np_perf_records_parse(r.buf, RING, 0, 0, NP_PERF_BODY_MAX + 1, on_body, &g),
		  -EINVAL);
}

/* ---- the live machine ---- */

/* A child whose two threads each write a region of their own each time
 * they are told (first writes to fresh pages fault as the writes after a
 * clear do). */
struct toucher {
	char *mem;
	size_t len;
	int go, tid_out, done;
};

static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	int tid = (int)syscall(SYS_gettid);
	char c;

	if (write(t->tid_out, &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(t->go, &c, 1) == 1) {
		for (size_t off = 0; off < t->len; off += 4096)
			t->mem[off] = c;
		if (write(t->done, &c, 1) != 1)
			return NULL;
	}
	return NULL;
}

#define TOUCHER_LEN (8 * MIB)

/* The child, its two threads' ids and regions, and the pipes to them. */
struct touchers {
	pid_t pid;
	int tid[2];
	char *mem[2];
	int go[2][2], done[2];
};

static void touchers_start(struct touchers *k)
{
	int tids[2][2];

	for (int i = 0; i < 2; i++) {
		k->mem[i] = mmap(NULL, TOUCHER_LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(k->mem[i] != MAP_FAILED && pipe(k->go[i]) == 0 && pipe(tids[i]) == 0);
	}
	CHECK(pipe(k->done) == 0);
	k->pid = fork();
	if (k->pid == 0) {
		struct toucher t[2];
		pthread_t th[2];

		for (int i = 0; i < 2; i++) {
			t[i] = (struct toucher){k->mem[i], TOUCHER_LEN, k->go[i][0], tids[i][1],
						k->done[1]};
			pthread_create(&th[i], NULL, toucher_main, &t[i]);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	for (int i = 0; i < 2; i++) {
		CHECK(read(tids[i][0], &k->tid[i], sizeof(k->tid[i])) == sizeof(k->tid[i]));
		close(tids[i][0]);
		close(tids[i][1]);
	}
}

/* Have thread @i write its region once, and wait until it has. */
static void touchers_go(struct touchers *k, int i)
{
	char c = 'g';

	CHECK(write(k->go[i][1], &c, 1) == 1);
	CHECK(read(k->done[0], &c, 1) == 1);
}

static void touchers_end(struct touchers *k)
{
	kill(k->pid, SIGKILL);
	waitpid(k->pid, NULL, 0);
	for (int i = 0; i < 2; i++) {
		munmap(k->mem[i], TOUCHER_LEN);
		close(k->go[i][0]);
		close(k->go[i][1]);
		close(k->done[i]);
	}
}

static bool inside(uint64_t start, const char *mem, size_t len)
{
	return start >= (uintptr_t)mem &&
	       start + (1u << NP_WRITERS_BLOCK_SHIFT) <= (uintptr_t)mem + len;
}

/* Of @nr blocks, those in each thread's region written by it alone
 * (alone[]) and those written by anyone else (returned). */
static unsigned count_blocks(const struct touchers *k, const struct np_writer_block *b, unsigned nr,
			     unsigned alone[2])
{
	unsigned wrong = 0;

	alone[0] = alone[1] = 0;
	for (unsigned j = 0; j < nr; j++) {
		for (int i = 0; i < 2; i++) {
			if (!inside(b[j].start, k->mem[i], TOUCHER_LEN))
				continue;
			if (b[j].tid == k->tid[i])
				alone[i]++;
			else
				wrong++;
		}
	}
	return wrong;
}

/* Of @nr blocks, those in thread @i's region left unconfirmed. */
static unsigned unconfirmed_in(const struct touchers *k, int i, const struct np_writer_block *b,
			       unsigned nr)
{
	unsigned n = 0;

	for (unsigned j = 0; j < nr; j++)
		n += inside(b[j].start, k->mem[i], TOUCHER_LEN) &&
		     b[j].tid == NP_WRITERS_UNCONFIRMED;
	return n;
}

/* Start a sample of both threads; false (said) where this machine has
 * none to give. */
static bool start_or_skip(struct np_ctx *ctx, const struct touchers *k, struct np_writers **w)
{
	int err = np_writers_start(ctx, k->pid, k->tid, 2, 256, w);

	if (err == -EPERM || err == -EACCES || err == -EOPNOTSUPP) {
		printf("skipped: no write samples here (%s)\n", strerror(-err));
		return false;
	}
	CHECK_INT(err, 0);
	return !err;
}

static void test_live(void)
{
	struct np_writers *w = NULL;
	struct np_write_sample *s = NULL;
	struct np_writer_block *b = NULL;
	struct np_ctx *ctx, *fixture;
	struct touchers k;
	char root[] = "/tmp/np-writers-XXXXXX";
	unsigned overflowed, nr, alone[2];
	size_t n;
	int err;

	err = np_writers_probe();
	CHECK(err == 0 || err == -EOPNOTSUPP);
	printf("soft-dirty bits on this kernel: %s\n", err ? "no" : "yes");

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	CHECK(mkdtemp(root) != NULL);
	CHECK_INT(np_ctx_new(root, &fixture), 0);
	CHECK_INT(np_writers_start(fixture, 1, (int[]){1}, 1, 64, &w), -EOPNOTSUPP);
	np_ctx_free(fixture);
	rmdir(root);
	CHECK_INT(np_writers_start(ctx, 0, (int[]){1}, 1, 64, &w), -EINVAL);
	CHECK_INT(np_writers_start(ctx, 1, NULL, 0, 64, &w), -EINVAL);

	touchers_start(&k);
	if (!start_or_skip(ctx, &k, &w))
		goto out;
	touchers_go(&k, 0);
	touchers_go(&k, 1);
	CHECK_INT(np_writers_collect(w, &s, &n, &overflowed), 0);
	CHECK(n > 0);
	CHECK_INT(np_writers_attribute(s, n, &b, &nr), 0);
	/* Each full block of a region was written by its own thread alone
	 * (a region of 8 MiB holds three at least). */
	CHECK_INT(count_blocks(&k, b, nr, alone), 0);
	CHECK(alone[0] >= 3);
	CHECK(alone[1] >= 3);
	if (overflowed)
		printf("note: %u rings overflowed\n", overflowed);
out:
	free(s);
	free(b);
	np_writers_free(w);
	np_writers_free(NULL);
	touchers_end(&k);
	np_ctx_free(ctx);
}

/* A sample split in two: a drain holds what was written before it, the
 * collect at the end what was written after the bits were cleared again,
 * a page written again among it; read together, a block written by one
 * thread in both parts is that thread's, with no sample before (a huge
 * page's one fault in each part: two). */
static void test_live_split(void)
{
	struct np_writers *w = NULL;
	struct np_write_sample *s1 = NULL, *s2 = NULL, *all = NULL;
	struct np_writer_block *b1 = NULL, *b2 = NULL, *b = NULL;
	struct np_ctx *ctx;
	struct touchers k;
	unsigned overflowed, nr1 = 0, nr2 = 0, nr = 0, alone[2];
	bool soft_dirty = np_writers_probe() == 0;
	size_t n1 = 0, n2 = 0;

	CHECK_INT(np_ctx_new("/", &ctx), 0);
	touchers_start(&k);
	if (!soft_dirty) {
		printf("skipped: no soft-dirty bits on this kernel\n");
		goto out;
	}
	if (!start_or_skip(ctx, &k, &w))
		goto out;
	touchers_go(&k, 0);
	CHECK_INT(np_writers_drain(w, &s1, &n1, &overflowed), 0);
	all = malloc((n1 ? n1 : 1) * sizeof(*all));
	CHECK(all != NULL);
	if (!all)
		goto out;
	memcpy(all, s1, n1 * sizeof(*all));
	CHECK_INT(np_writers_attribute(s1, n1, &b1, &nr1), 0);
	CHECK_INT(count_blocks(&k, b1, nr1, alone), 0);
	CHECK(alone[0] >= 3);
	CHECK_INT(alone[1], 0);
	printf("blocks of one fault before the clear: %u of %u (huge pages)\n",
	       np_writers_single(b1, nr1), nr1);
	CHECK_INT(np_writers_clear(w), 0);

	touchers_go(&k, 1);
	touchers_go(&k, 0);
	CHECK_INT(np_writers_collect(w, &s2, &n2, &overflowed), 0);
	{
		struct np_write_sample *grown = realloc(all, (n1 + n2 + 1) * sizeof(*all));

		CHECK(grown != NULL);
		if (!grown)
			goto out;
		all = grown;
		memcpy(all + n1, s2, n2 * sizeof(*all));
	}
	CHECK_INT(np_writers_attribute(s2, n2, &b2, &nr2), 0);
	CHECK_INT(count_blocks(&k, b2, nr2, alone), 0);
	CHECK(alone[1] >= 3);
	/* Present and written before the clear: faults again only because
	 * it cleared the bits. */
	CHECK(alone[0] >= 3);
	/* Read together with no sample before: thread 0's blocks are its own
	 * (two faults at least); thread 1's first writes, under huge pages
	 * one fault each, are left to confirm. */
	CHECK_INT(np_writers_attribute(all, n1 + n2, &b, &nr), 0);
	np_writers_confirm(b, nr, NULL, 0);
	CHECK_INT(count_blocks(&k, b, nr, alone) - unconfirmed_in(&k, 1, b, nr), 0);
	CHECK(alone[0] >= 3);
	CHECK_INT(unconfirmed_in(&k, 0, b, nr), 0);
out:
	free(s1);
	free(s2);
	free(all);
	free(b1);
	free(b2);
	free(b);
	np_writers_free(w);
	touchers_end(&k);
	np_ctx_free(ctx);
}

/* Blocks of one fault, which a sample before is to confirm. */
static void test_single(void)
{
	const struct np_writer_block b[] = {
	    {0 * MIB, 7, 1}, {2 * MIB, 7, 3}, {4 * MIB, -1, 2}, {6 * MIB, 8, 1}};

	CHECK_INT(np_writers_single(b, 4), 2);
	CHECK_INT(np_writers_single(b + 1, 2), 0);
	CHECK_INT(np_writers_single(NULL, 0), 0);
}

int main(void)
{
	test_attribute();
	test_confirm();
	test_ring();
	test_live();
	test_single();
	test_live_split();
	return check_done();
}
