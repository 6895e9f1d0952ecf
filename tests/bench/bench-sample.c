/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A sampled look against a numa_maps read: cost and accuracy. This process
 * holds GIB GiB of touched anonymous memory (with two nodes or more, the
 * first 30% bound to node 1 and the rest to node 0, so the answer is not
 * trivially 100%), then, interleaved, reads and parses its own numa_maps
 * as the daemon does and takes a sampled look at itself (maps, K random
 * pages looked up with move_pages). Prints per look the median CPU time
 * (this thread's, user + system: the kernel's walk and lookups are done on
 * its behalf) and wall time, per GiB, their ratio, and the share of
 * present pages on node 0 each look found, with the sample's 95% bound.
 *
 *   bench-sample [GIB [K [ROUNDS]]]   (default 1 GiB, 4096 pages, 7 rounds)
 */
#include "context.h"
#include "memory.h"
#include "sample.h"

#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void bind_range(char *p, size_t len, int node)
{
	unsigned long mask = 1UL << node;

	if (mbind(p, len, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0) {
		perror("mbind");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double gib = argc > 1 ? atof(argv[1]) : 1;
	unsigned k = argc > 2 ? (unsigned)atoi(argv[2]) : 4096;
	unsigned rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 7;
	size_t len = (size_t)(gib * (1 << 30)), page = (size_t)sysconf(_SC_PAGESIZE);
	bool two = numa_available() >= 0 && numa_max_node() >= 1;
	double nm_cpu[64], nm_wall[64], s_cpu[64], s_wall[64], nm_share = 0, s_lo = 1, s_hi = 0;
	double s_worst = 0;
	struct np_memory_reader *reader;
	struct np_ctx *ctx;
	char *buf;
	int self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (gib <= 0 || !k || !rounds || rounds > 64) {
		fprintf(stderr, "usage: bench-sample [GIB [K [ROUNDS<=64]]]\n");
		return 2;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || self < 0 || np_ctx_new("/", &ctx) || np_memory_reader_new(&reader)) {
		perror("setup");
		return 1;
	}
	if (two) {
		size_t cut = len * 3 / 10 / page * page;

		bind_range(buf, cut, 1);
		bind_range(buf + cut, len - cut, 0);
	}
	for (size_t off = 0; off < len; off += page)
		buf[off] = 1;

	for (unsigned r = 0; r < rounds; r++) {
		struct np_task_memory mem;
		unsigned on[2] = {0};
		struct np_sample_count count = {.on_node = on, .max_node = 2};
		struct np_sample_rng rng = {r * 7919 + 1};
		struct np_sample_interval iv;
		uint64_t bytes, total;
		double c0, w0;

		c0 = cpu_s();
		w0 = wall_s();
		if (np_memory_read(reader, ctx, self, "proc/self", &mem, &bytes)) {
			fprintf(stderr, "numa_maps read failed\n");
			return 1;
		}
		nm_cpu[r] = cpu_s() - c0;
		nm_wall[r] = wall_s() - w0;
		total = 0;
		for (unsigned n = 0; n < mem.nr_node_slots; n++)
			total += mem.node_bytes[n];
		nm_share = total ? (double)mem.node_bytes[0] / (double)total : 0;
		np_task_memory_clear(&mem);

		c0 = cpu_s();
		w0 = wall_s();
		if (np_sample_look(ctx, getpid(), k, page, 1024, &rng, np_sample_lookup_kernel, NULL,
				   &count)) {
			fprintf(stderr, "sampled look failed\n");
			return 1;
		}
		s_cpu[r] = cpu_s() - c0;
		s_wall[r] = wall_s() - w0;
		iv = np_sample_wilson(on[0], count.present);
		if (iv.lo < s_lo)
			s_lo = iv.lo;
		if (iv.hi > s_hi)
			s_hi = iv.hi;
		if (iv.estimate - nm_share > s_worst || nm_share - iv.estimate > s_worst)
			s_worst = iv.estimate > nm_share ? iv.estimate - nm_share : nm_share - iv.estimate;
		if (r == rounds - 1)
			printf("last round: numa_maps %.2f%% on node 0; sample %.2f%% [%.2f, %.2f] "
			       "of %u present in %u drawn\n",
			       100 * nm_share, 100 * iv.estimate, 100 * iv.lo, 100 * iv.hi,
			       count.present, count.drawn);
	}
	{
		double nc = median(nm_cpu, rounds), nw = median(nm_wall, rounds);
		double sc = median(s_cpu, rounds), sw = median(s_wall, rounds);

		printf("%.2f GiB, %s, %u rounds, k %u\n", gib, two ? "30% on node 1" : "one node",
		       rounds, k);
		printf("numa_maps look: cpu %.3f ms (%.3f ms/GiB), wall %.3f ms\n", nc * 1e3,
		       nc * 1e3 / gib, nw * 1e3);
		printf("sampled look:   cpu %.3f ms (%.3f ms/GiB), wall %.3f ms\n", sc * 1e3,
		       sc * 1e3 / gib, sw * 1e3);
		printf("ratio numa_maps/sample: cpu %.1f, wall %.1f\n", nc / sc, nw / sw);
		printf("share on node 0: worst difference from numa_maps %.2f points; bounds "
		       "seen [%.2f, %.2f]%%\n",
		       100 * s_worst, 100 * s_lo, 100 * s_hi);
	}
	np_memory_reader_free(reader);
	np_ctx_free(ctx);
	close(self);
	return 0;
}
