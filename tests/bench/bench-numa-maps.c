/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long parsing numa_maps takes next to the kernel producing it. This
 * process gives itself ~65k VMAs the way a large real process has them (a
 * quarter touched private anonymous pages, the rest read-touched private
 * mappings of one file), reads its own /proc/self/numa_maps several times
 * timing read(2) in 64 KiB chunks as np_nm_read_task does, then parses the
 * captured bytes in the same chunks. Prints medians, MB/s and the ratio;
 * then reads and parses chunk by chunk as the daemon does, timing each side.
 * Goal: parsing costs under 5% of the kernel's read. Times are this
 * thread's CPU time (user + system), not wall time, so a busy machine
 * slows both sides alike instead of adding its own noise.
 *
 *   bench-numa-maps [VMAS]   (default 65000; vm.max_map_count is 65530)
 */
#include "numa_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define READS 7
#define PARSES 21

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* One page per VMA, neighbours differing in protection or backing so the
 * kernel cannot merge them. */
static int make_vmas(unsigned nr)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/np-bench-XXXXXX";
	int fd = mkstemp(path);
	char *base;

	if (fd < 0 || ftruncate(fd, page) < 0)
		return -errno;
	unlink(path);
	base = mmap(NULL, (size_t)page * nr, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	for (unsigned i = 0; i < nr; i++) {
		char *at = base + (size_t)page * i;
		void *m;

		if (i % 4 == 0) {
			m = mmap(at, (size_t)page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (m != MAP_FAILED)
				*(volatile char *)m = 1;
		} else {
			m = mmap(at, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
			if (m != MAP_FAILED)
				(void)*(volatile char *)m;
		}
		if (m == MAP_FAILED)
			return -errno;
	}
	close(fd);
	return 0;
}

/* Read /proc/self/numa_maps into @buf (grown as needed); returns seconds. */
static double read_numa_maps(char **buf, size_t *cap, size_t *len)
{
	int fd = open("/proc/self/numa_maps", O_RDONLY | O_CLOEXEC);
	double t0 = now_s();
	ssize_t n;

	if (fd < 0) {
		perror("/proc/self/numa_maps");
		exit(1);
	}
	*len = 0;
	for (;;) {
		if (*cap - *len < NP_NM_READ_CHUNK) {
			*cap = *cap * 2 + NP_NM_READ_CHUNK;
			*buf = realloc(*buf, *cap);
			if (!*buf)
				exit(1);
		}
		n = read(fd, *buf + *len, NP_NM_READ_CHUNK);
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	t0 = now_s() - t0;
	close(fd);
	return t0;
}

/*
 * The daemon's own pattern (np_nm_read_task): read a 64 KiB chunk, parse it
 * while it is still in cache, read the next. The read and parse sides are
 * timed apart and summed over the file.
 */
static void read_and_parse(struct np_nm_parser *p, char *chunk, double *read_s, double *parse_s)
{
	int fd = open("/proc/self/numa_maps", O_RDONLY | O_CLOEXEC);
	int err = 0;

	*read_s = *parse_s = 0;
	np_nm_parser_reset(p);
	for (;;) {
		double t0 = now_s(), t1;
		ssize_t n = read(fd, chunk, NP_NM_READ_CHUNK);

		t1 = now_s();
		*read_s += t1 - t0;
		if (n <= 0)
			break;
		err = np_nm_parser_feed(p, chunk, (size_t)n);
		*parse_s += now_s() - t1;
		if (err)
			break;
	}
	close(fd);
	if (err || np_nm_parser_finish(p)) {
		fprintf(stderr, "parse error at line %u: %s\n", np_nm_parser_error_line(p),
			np_nm_parser_error(p));
		exit(1);
	}
}

static double parse(struct np_nm_parser *p, const char *buf, size_t len, size_t chunk)
{
	double t0 = now_s();
	int err = 0;

	np_nm_parser_reset(p);
	for (size_t off = 0; !err && off < len; off += chunk)
		err = np_nm_parser_feed(p, buf + off, len - off < chunk ? len - off : chunk);
	if (!err)
		err = np_nm_parser_finish(p);
	t0 = now_s() - t0;
	if (err) {
		fprintf(stderr, "parse error %d at line %u: %s\n", err, np_nm_parser_error_line(p),
			np_nm_parser_error(p));
		exit(1);
	}
	return t0;
}

int main(int argc, char **argv)
{
	unsigned nr = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 65000;
	double reads[READS], parses[PARSES], whole[PARSES], read_s, parse_s, whole_s, mb;
	double streamed_read[READS], streamed_parse[READS];
	struct np_nm_parser *p;
	size_t cap = 0, len = 0, lines = 0;
	char *buf = NULL, *chunk;
	int err;

	err = make_vmas(nr);
	if (err) {
		fprintf(stderr, "cannot make %u VMAs: %s (see vm.max_map_count)\n", nr,
			strerror(-err));
		return 1;
	}
	for (int i = 0; i < READS; i++)
		reads[i] = read_numa_maps(&buf, &cap, &len);
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';

	if (np_nm_parser_new(&p, NULL, NULL) < 0)
		return 1;
	for (int i = 0; i < PARSES; i++) {
		parses[i] = parse(p, buf, len, NP_NM_READ_CHUNK);
		whole[i] = parse(p, buf, len, len);
	}
	if (np_nm_parser_totals(p)->vmas != lines) {
		fprintf(stderr, "parsed %llu VMAs of %zu lines\n",
			(unsigned long long)np_nm_parser_totals(p)->vmas, lines);
		return 1;
	}
	chunk = malloc(NP_NM_READ_CHUNK);
	if (!chunk)
		return 1;
	for (int i = 0; i < READS; i++)
		read_and_parse(p, chunk, &streamed_read[i], &streamed_parse[i]);
	read_s = median(reads, READS);
	parse_s = median(parses, PARSES);
	whole_s = median(whole, PARSES);
	mb = (double)len / 1e6;
	printf("numa_maps: %zu VMAs, %.2f MB; anon %.1f MB, file %.1f MB on node 0\n", lines, mb,
	       (double)np_nm_parser_totals(p)->anon_bytes[0] / 1e6,
	       (double)np_nm_parser_totals(p)->file_bytes[0] / 1e6);
	printf("kernel read (median of %d): %8.2f ms %8.1f MB/s\n", READS, read_s * 1e3,
	       mb / read_s);
	printf("parse, 64 KiB chunks (median of %d): %8.2f ms %8.1f MB/s\n", PARSES, parse_s * 1e3,
	       mb / parse_s);
	printf("parse, whole buffer (median of %d): %8.2f ms %8.1f MB/s\n", PARSES, whole_s * 1e3,
	       mb / whole_s);
	printf("parse / kernel read: %.1f%% (goal: under 5%%)\n", 100 * parse_s / read_s);
	read_s = median(streamed_read, READS);
	parse_s = median(streamed_parse, READS);
	printf("streamed as np_nm_read_task does (median of %d): read %.2f ms, parse %.2f ms: "
	       "%.1f%%\n",
	       READS, read_s * 1e3, parse_s * 1e3, 100 * parse_s / read_s);
	np_nm_parser_free(p);
	free(chunk);
	free(buf);
	return 0;
}
