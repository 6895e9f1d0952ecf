/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What reading a process's figures costs, for the two readers of the task
 * source (lib/task.c): libproc2's select by pid, with the source's items,
 * and one read of /proc/PID/stat parsed by np_stat_parse. Over every
 * process /proc lists now, ROUNDS rounds, each reader in turn: the CPU of
 * one select of them all, of one select per process, and of our reads;
 * per process, median of the rounds. A select does fixed work per call
 * (mappings, /proc/uptime) and reads each pid's status for its thread
 * group: the daemon's cycles read one or two processes at a time.
 *
 *   bench-procread [ROUNDS]   (default 7)
 */
#include "task.h"

#include <dirent.h>
#include <fcntl.h>
#include <libproc2/pids.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 100000

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned list_pids(unsigned *pids)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	unsigned n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < MAX_PIDS)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			pids[n++] = (unsigned)strtoul(de->d_name, NULL, 10);
	closedir(dir);
	return n;
}

/* One read of /proc/PID/stat, parsed: how many parsed. */
static unsigned own_reads(const unsigned *pids, unsigned n)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	unsigned ok = 0;
	char path[32], buf[4096];

	for (unsigned i = 0; i < n; i++) {
		struct np_stat st;
		ssize_t len;
		int fd;

		snprintf(path, sizeof(path), "%u/stat", pids[i]);
		fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		close(fd);
		ok += len > 0 && np_stat_parse(buf, (size_t)len, &st) == 0;
	}
	close(procfd);
	return ok;
}

int main(int argc, char **argv)
{
	/* The items the task source asks for (lib/task.c). */
	static enum pids_item items[] = {
	    PIDS_ID_PID,     PIDS_CMD,	PIDS_STATE,	PIDS_FLAGS, PIDS_TICS_ALL,
	    PIDS_TICS_BEGAN, PIDS_NLWP, PIDS_PROCESSOR, PIDS_RSS,   PIDS_ID_TGID,
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	unsigned *pids = calloc(MAX_PIDS, sizeof(*pids));
	struct pids_info *info = NULL;
	double *all, *each, *own, t;
	unsigned n, found_all = 0, found_each = 0, parsed = 0;

	all = calloc((size_t)rounds + 1, sizeof(*all));
	each = calloc((size_t)rounds + 1, sizeof(*each));
	own = calloc((size_t)rounds + 1, sizeof(*own));
	if (!pids || !all || !each || !own || rounds < 1) {
		fprintf(stderr, "usage: bench-procread [ROUNDS]\n");
		return 2;
	}
	t = cpu_us();
	if (procps_pids_new(&info, items, (int)(sizeof(items) / sizeof(items[0])))) {
		fprintf(stderr, "bench-procread: libproc2 cannot read /proc\n");
		return 1;
	}
	printf("procps_pids_new: %.0f us of CPU (once)\n", cpu_us() - t);
	n = list_pids(pids);
	for (int r = 0; r < rounds; r++) {
		struct pids_fetch *f;

		t = cpu_us();
		f = procps_pids_select(info, pids, (int)n, PIDS_SELECT_PID);
		all[r] = (cpu_us() - t) / n;
		found_all = f ? (unsigned)f->counts->total : 0;

		found_each = 0;
		t = cpu_us();
		for (unsigned i = 0; i < n; i++) {
			f = procps_pids_select(info, &pids[i], 1, PIDS_SELECT_PID);
			found_each += f ? (unsigned)f->counts->total : 0;
		}
		each[r] = (cpu_us() - t) / n;

		t = cpu_us();
		parsed = own_reads(pids, n);
		own[r] = (cpu_us() - t) / n;
	}
	printf("%u processes, %d rounds, CPU per process, median:\n", n, rounds);
	printf("  libproc2, one select of all:    %8.1f us (%u found)\n", median(all, rounds),
	       found_all);
	printf("  libproc2, one select each:      %8.1f us (%u found)\n", median(each, rounds),
	       found_each);
	printf("  stat read and np_stat_parse:    %8.1f us (%u parsed)\n", median(own, rounds),
	       parsed);
	procps_pids_unref(&info);
	free(pids);
	free(all);
	free(each);
	free(own);
	return 0;
}
