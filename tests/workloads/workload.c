/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "workload.h"

#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "workload";

void wl_set_prog(const char *name)
{
	const char *slash = strrchr(name, '/');

	prog = slash ? slash + 1 : name;
}

void wl_die(const char *fmt, ...)
{
	va_list args;

	fprintf(stderr, "%s: ", prog);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(1);
}

unsigned long wl_parse_ulong(const char *opt, const char *arg)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-')
		wl_die("--%s: not a non-negative number: '%s'", opt, arg);
	return value;
}

size_t wl_parse_list(const char *opt, const char *arg, int *ids)
{
	const char *p = arg;
	size_t count = 0;

	while (*p) {
		char *end;
		long first, last;

		errno = 0;
		first = strtol(p, &end, 10);
		if (errno || end == p || first < 0 || first >= WL_MAX_IDS)
			wl_die("--%s: bad number in list '%s'", opt, arg);
		last = first;
		if (*end == '-') {
			p = end + 1;
			last = strtol(p, &end, 10);
			if (errno || end == p || last < first || last >= WL_MAX_IDS)
				wl_die("--%s: bad range in list '%s'", opt, arg);
		}
		for (long id = first; id <= last; id++) {
			if (count == WL_MAX_IDS)
				wl_die("--%s: more than %d entries in '%s'", opt, WL_MAX_IDS, arg);
			ids[count++] = (int)id;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			wl_die("--%s: unexpected '%c' in list '%s'", opt, *end, arg);
		p = end;
	}
	if (!count)
		wl_die("--%s: empty list", opt);
	return count;
}

enum wl_policy wl_parse_policy(const char *arg)
{
	if (!strcmp(arg, "bind"))
		return WL_POLICY_BIND;
	if (!strcmp(arg, "preferred"))
		return WL_POLICY_PREFERRED;
	if (!strcmp(arg, "local"))
		return WL_POLICY_LOCAL;
	if (!strcmp(arg, "bind-once"))
		return WL_POLICY_BIND_ONCE;
	wl_die("--policy: expected bind, preferred, local or bind-once, not '%s'", arg);
}

double wl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void *wl_map_on_node(size_t bytes, int node, enum wl_policy policy)
{
	void *mem;

	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		wl_die("mmap of %zu bytes: %s", bytes, strerror(errno));
	wl_place_on_node(mem, bytes, node, policy);
	return mem;
}

void wl_place_on_node(void *mem, size_t bytes, int node, enum wl_policy policy)
{
	unsigned long mask[WL_MAX_IDS / (8 * sizeof(unsigned long))] = {0};
	int mode;

	if (node < 0 || policy == WL_POLICY_LOCAL)
		return;
	mode = policy == WL_POLICY_PREFERRED ? MPOL_PREFERRED : MPOL_BIND;
	mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
	if (mbind(mem, bytes, mode, mask, WL_MAX_IDS, 0))
		wl_die("mbind to node %d: %s", node, strerror(errno));
}

void wl_drop_policy(void *mem, size_t bytes)
{
	if (mbind(mem, bytes, MPOL_DEFAULT, NULL, 0, 0))
		wl_die("mbind(MPOL_DEFAULT): %s", strerror(errno));
}

void wl_touch(void *mem, size_t bytes)
{
	static _Atomic unsigned char stamp;
	unsigned char value = ++stamp;
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned char *p = mem;

	/* A plain store, not p[off]++: a read would fault the shared zero
	 * page in first, and replacing it on the write costs a TLB shootdown
	 * to every CPU running this process, one per page, which under
	 * software emulation stalls a multi-threaded task for minutes. */
	for (size_t off = 0; off < bytes; off += page)
		p[off] = value;
}

void wl_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		wl_die("pinning to CPU %d: %s", cpu, strerror(errno));
}
